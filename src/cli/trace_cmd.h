/* What `blocking`, `cpu` and `uring` share: a command that reads one trace
 * (or CAT) file into one task model and the analyses that observe it, then
 * writes one report to -o (text, or folded stacks where it has them) and
 * the lost / missed line. Each command keeps its own option rows for
 * --format (its folded weights differ) and says which sinks and which
 * report; this file has the rest: the -o and --partial rows, the argument
 * handling, the run and the output. */
#ifndef AS_CLI_TRACE_CMD_H
#define AS_CLI_TRACE_CMD_H

#include <stdbool.h>
#include <stdio.h>

#include "cli/opts.h"
#include "pipeline/sink.h"
#include "pipeline/source.h"

/* Option keys of these commands (one key space: their tables go together). */
enum { TC_FORMAT = 1, TC_FOLDED, TC_OUTPUT, TC_PARTIAL };

/* -o FILE and --partial, for a command's table list. */
extern const struct cli_opt trace_cmd_opts[];

struct trace_cmd_args {
	const char *format;       /* "text" (default) or "folded" */
	const char *output;       /* "-" (default): stdout */
	bool partial;
};

/* The handler of TC_* options for cli_parse(). */
int trace_cmd_on_opt(void *ctx, const struct cli_opt *opt, const struct cli_val *v);

/* Parses argv for cmd into *a (defaults set here) and checks that one FILE
 * follows, at argv[*first]. Returns -1 to go on, else the exit code (help,
 * usage error). */
int trace_cmd_parse(const struct cli_command *cmd, int argc, char **argv,
		    struct trace_cmd_args *a, int *first);

/* Writes the report into out; folded: the flame-graph form. Returns 0 or
 * non-zero on a write error. */
typedef int (*trace_cmd_write_fn)(FILE *out, void *ctx, bool folded);

/* Runs src (the trace at path) into sinks[0..n), then writes the report with
 * write(ctx) to a's output, followed by the lost / missed line (on stderr
 * for folded stacks, which feed flame-graph tools). Returns the exit code:
 * 0, or 1 after one line saying what failed. */
int trace_cmd_finish(struct as_source *src, const char *path, const struct trace_cmd_args *a,
		     struct as_sink *sinks, size_t n, trace_cmd_write_fn write, void *ctx);

#endif
