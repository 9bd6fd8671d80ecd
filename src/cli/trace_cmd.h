/* What `blocking`, `cpu` and `uring` share: a command that reads one trace
 * (or CAT) file into one task model and the analyses that observe it, then
 * writes one report to -o (text, or folded stacks where it has them) and
 * the lost / missed line. Each command keeps its own option rows for
 * --format (its folded weights differ) and says which sinks and which
 * report; this file has the rest: the -o, --partial and --max-live-tasks
 * rows, the model, the argument handling, the run and the output. Also here,
 * for export: the live-task limit's option and note. */
#ifndef AS_CLI_TRACE_CMD_H
#define AS_CLI_TRACE_CMD_H

#include <stdbool.h>
#include <stdio.h>

#include "analysis/task_model.h"
#include "cli/opts.h"
#include "pipeline/sink.h"
#include "pipeline/source.h"

/* Option keys of these commands (one key space: their tables go together). */
enum { TC_FORMAT = 1, TC_FOLDED, TC_OUTPUT, TC_PARTIAL, TC_MAX_LIVE, TC_ALL_FRAMES, TC_UNIT };

/* The help of --max-live-tasks where live tasks past it are dropped (not
 * summed into groups, as report does). */
#define CLI_MAX_LIVE_HELP \
	"tasks followed at once (default 20000, 0 no limit): past it the least\n" \
	"recently active live tasks are dropped, counted on stderr"

/* -o FILE, --partial and --max-live-tasks N, for a command's table list. */
extern const struct cli_opt trace_cmd_opts[];

struct trace_cmd_args {
	const char *format;       /* "text" (default) or "folded" */
	const char *output;       /* "-" (default): stdout */
	bool partial;
	size_t max_live;          /* the model's live-task limit, 0 none */
	struct task_model *model; /* trace_cmd_model()'s, or NULL */
	bool all_frames;          /* --all-frames: stacks not folded (stack_fold.h) */
	const char *unit;         /* --unit of folded time weights, NULL default */
};

/* Parses the --max-live-tasks value v into *max_live (a model limit: 0
 * none). Returns 0, or 2 after the error. */
int cli_max_live(const struct cli_val *v, size_t *max_live);

/* A new task model for meta with a's live-task limit, kept in a->model
 * (the caller frees it), or NULL (out of memory). */
struct task_model *trace_cmd_model(struct trace_cmd_args *a, const struct as_trace_meta *meta);

/* When m folded live tasks away (its live-task limit): one line on stderr,
 * how many, why and the fix. */
void cli_note_folded(const struct task_model *m);

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
 * for folded stacks, which feed flame-graph tools) and cli_note_folded() of
 * a->model. Returns the exit code:
 * 0, or 1 after one line saying what failed. */
int trace_cmd_finish(struct as_source *src, const char *path, const struct trace_cmd_args *a,
		     struct as_sink *sinks, size_t n, trace_cmd_write_fn write, void *ctx);

#endif
