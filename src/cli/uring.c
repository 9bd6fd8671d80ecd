/* `asyncscope uring [-o FILE] [--partial] FILE`: io_uring requests per task
 * (recorded with record --uring): submissions inside each task's polls,
 * completions, completion latency. */
#include <stdbool.h>
#include <stdio.h>

#include "analysis/task_model.h"
#include "analysis/uring.h"
#include "cli/commands.h"
#include "cli/text_view.h"
#include "cli/trace_cmd.h"
#include "output/uring_report.h"
#include "pipeline/source_file.h"

static const struct cli_opt uring_opts[] = {
	{ "format", 'f', CLI_CHOICE, TC_FORMAT, "text", "text (the one form: a table per task)" },
	{ 0 },
};

static const struct cli_opt *const tables[] = { uring_opts, trace_cmd_opts, cli_color_opts,
						  cli_wide_opts, cli_limit_opts, NULL };

const struct cli_command uring_command = {
	.name = "uring",
	.summary = "io_uring submissions, completions and latency per task (record with\n"
		   "--uring).",
	.operands = "FILE",
	.tables = tables,
};

static int write_uring(FILE *out, void *ctx, bool folded)
{
	struct text_view tv = cli_text_view(out);

	(void)folded;   /* no flame-graph form */
	return uring_report_text(out, ctx, &tv);
}

int cmd_uring(int argc, char **argv)
{
	struct as_source src = { 0 };
	struct trace_cmd_args a;
	struct task_model *m = NULL;
	struct uring *u = NULL;
	char err[1024];
	int first, ret = trace_cmd_parse(&uring_command, argc, argv, &a, &first);

	if (ret >= 0)
		return ret;
	ret = 1;
	if (source_open_file(&src, argv[first], err, sizeof(err))) {
		cli_error("%s", err);
		goto out;
	}
	m = trace_cmd_model(&a, as_source__meta(&src));
	u = m ? uring__new_on(m, as_source__meta(&src)) : NULL;
	if (!u) {
		cli_error("out of memory");
		goto out;
	}
	/* the model first: the analysis observes it */
	struct as_sink sinks[] = { task_model__sink(m), uring__sink(u) };

	ret = trace_cmd_finish(&src, argv[first], &a, sinks, 2, write_uring, u);
out:
	uring__free(u);
	task_model__free(m);
	as_source__free(&src);
	return ret;
}
