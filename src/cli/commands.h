/* The command table's entries: each cmd_* takes the arguments after its
 * name and returns the process exit code (0 ok, 1 runtime failure, 2
 * usage); each *_command describes the command (its option tables, for
 * parsing and --help: cli/opts.h) and is defined in the command's file. */
#ifndef AS_CLI_COMMANDS_H
#define AS_CLI_COMMANDS_H

#include "cli/opts.h"

int cmd_record(int argc, char **argv);   /* src/cli/record.c */
int cmd_report(int argc, char **argv);   /* src/cli/report.c */
int cmd_probes(int argc, char **argv);   /* src/cli/probes.c */
int cmd_events(int argc, char **argv);   /* src/cli/events.c */
int cmd_export(int argc, char **argv);   /* src/cli/export.c */
int cmd_trace(int argc, char **argv);    /* src/cli/trace.c */
int cmd_dump(int argc, char **argv);     /* src/cli/dump.c */
int cmd_top(int argc, char **argv);      /* src/cli/top.c */
int cmd_blocking(int argc, char **argv); /* src/cli/blocking.c */
int cmd_cpu(int argc, char **argv);      /* src/cli/cpu.c */
int cmd_uring(int argc, char **argv);    /* src/cli/uring.c */
int cmd_profile(int argc, char **argv);  /* src/cli/profile.c */
int cmd_snapshot(int argc, char **argv); /* src/cli/snapshot.c */
int cmd_serve(int argc, char **argv);    /* src/cli/serve.c */

extern const struct cli_command record_command, report_command, probes_command,
	events_command, export_command, trace_command, dump_command, top_command,
	blocking_command, cpu_command, uring_command, profile_command, snapshot_command,
	serve_command;

#endif
