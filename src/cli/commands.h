/* The command table's entries: each takes the arguments after its name and
 * returns the process exit code (0 ok, 1 runtime failure, 2 usage). */
#ifndef AS_CLI_COMMANDS_H
#define AS_CLI_COMMANDS_H

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_probes(int argc, char **argv);
int cmd_events(int argc, char **argv);
int cmd_export(int argc, char **argv);   /* src/cli/export.c */
int cmd_trace(int argc, char **argv);    /* src/cli/trace.c */
int cmd_dump(int argc, char **argv);     /* src/cli/dump.c */
int cmd_top(int argc, char **argv);      /* src/cli/top.c */
int cmd_blocking(int argc, char **argv); /* src/cli/blocking.c */
int cmd_cpu(int argc, char **argv);      /* src/cli/cpu.c */
int cmd_uring(int argc, char **argv);    /* src/cli/uring.c */

/* Prints "asyncscope: <msg>" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Appends s (borrowed) to the growable array *v of *n strings (a repeatable
 * option's values). Returns 0, or -ENOMEM after saying "out of memory". */
int cli_push_arg(const char ***v, size_t *n, const char *s);

#endif
