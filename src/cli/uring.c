/* `asyncscope uring [--partial] FILE`: io_uring requests per task
 * (recorded with record --uring): submissions inside each task's polls,
 * completions, completion latency. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "analysis/task_model.h"
#include "analysis/uring.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "output/uring_report.h"
#include "pipeline/source_file.h"

enum { O_FORMAT = 1, O_FOLDED, O_OUTPUT, O_PARTIAL };

static const struct cli_opt uring_opts[] = {
	{ "output", 'o', CLI_STRING, O_OUTPUT, "FILE", "write to FILE (default -: stdout)" },
	{ "partial", 0, CLI_FLAG, O_PARTIAL, NULL, "use the events of a truncated trace" },
	{ 0 },
};

static const struct cli_opt *const tables[] = { uring_opts, NULL };

const struct cli_command uring_command = {
	.name = "uring",
	.summary = "io_uring submissions, completions and latency per task (record with\n"
		   "--uring).",
	.operands = "FILE",
	.tables = tables,
};

struct out_args {
	const char *format, *output;
	bool partial;
};

static int on_opt(void *ctx, const struct cli_opt *opt, const struct cli_val *v)
{
	struct out_args *a = ctx;

	switch (opt->key) {
	case O_FORMAT: a->format = v->str; break;
	case O_FOLDED: a->format = "folded"; break;
	case O_OUTPUT: a->output = v->str; break;
	case O_PARTIAL: a->partial = true; break;
	}
	return 0;
}

int cmd_uring(int argc, char **argv)
{
	struct as_source src = { 0 }, *r = &src;
	struct task_model *m = NULL;
	struct uring *u = NULL;
	char err[1024];
	int first, ret;

	struct out_args o = { .format = "text", .output = "-" };
	FILE *f = NULL;

	ret = cli_parse(&uring_command, argc, argv, on_opt, &o, &first);
	if (ret >= 0)
		return ret;
	if (first + 1 != argc)
		return cli_usage_error(&uring_command, first < argc ? "uring reads one trace file"
				       : "uring needs the trace FILE");
	bool partial = o.partial;
	ret = 1;
	if (source_open_file(r, argv[first], err, sizeof(err))) {
		cli_error("%s", err);
		goto out;
	}
	m = task_model__new(as_source__meta(r));
	u = m ? uring__new_on(m, as_source__meta(r)) : NULL;
	if (!u) {
		cli_error("out of memory");
		goto out;
	}
	/* the model first: the analysis observes it */
	struct as_sink sinks[] = { task_model__sink(m), uring__sink(u) };
	struct pipeline_result res;

	if (cli_run(r, &(struct cli_run_opts){ .path = argv[first], .partial = partial }, sinks, 2,
		    &res))
		goto out;
	f = cli_open_output(o.output);
	if (!f)
		goto out;
	if (uring_report_text(f, u)) {
		cli_error("cannot write the report");
		goto out;
	}
	cli_print_lost(f, r, res.events);
	ret = cli_close_output(f);
	f = NULL;
	if (ret) {
		cli_error("writing %s: %s", o.output, strerror(-ret));
		ret = 1;
		goto out;
	}
	ret = 0;
out:
	if (f && f != stdout)
		fclose(f);
	uring__free(u);
	task_model__free(m);
	as_source__free(r);
	return ret;
}
