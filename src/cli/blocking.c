/* `asyncscope blocking [--folded] [--partial] FILE`: where polls blocked
 * (off CPU inside a poll, recorded with record --offcpu), per task and per
 * cause, or as flame-graph stacks; then how long each worker waited for a
 * CPU once runnable (run-queue delay, record --runq or --offcpu). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "analysis/blocking.h"
#include "analysis/runq.h"
#include "analysis/task_model.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "output/blocking_report.h"
#include "output/runq_report.h"
#include "pipeline/source_file.h"

enum { O_FORMAT = 1, O_FOLDED, O_OUTPUT, O_PARTIAL };

static const struct cli_opt blocking_opts[] = {
	{ "format", 'f', CLI_CHOICE, O_FORMAT, "text|folded",
	  "text (default), or flame-graph stacks:\ntask;user frames;kernel frames NS" },
	{ "folded", 0, CLI_FLAG, O_FOLDED, NULL, "the same as --format folded" },
	{ "output", 'o', CLI_STRING, O_OUTPUT, "FILE", "write to FILE (default -: stdout)" },
	{ "partial", 0, CLI_FLAG, O_PARTIAL, NULL, "use the events of a truncated trace" },
	{ 0 },
};

static const struct cli_opt *const tables[] = { blocking_opts, NULL };

const struct cli_command blocking_command = {
	.name = "blocking",
	.summary = "Off-CPU time inside polls per task and cause (record with --offcpu), then\n"
		   "the run-queue delay per worker (--offcpu or --runq).",
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

int cmd_blocking(int argc, char **argv)
{
	struct as_source src = { 0 }, *r = &src;
	struct task_model *m = NULL;
	struct blocking *b = NULL;
	struct runq *q = NULL;
	char err[1024];
	int first, ret;

	struct out_args o = { .format = "text", .output = "-" };
	FILE *f = NULL;

	ret = cli_parse(&blocking_command, argc, argv, on_opt, &o, &first);
	if (ret >= 0)
		return ret;
	if (first + 1 != argc)
		return cli_usage_error(&blocking_command, first < argc ? "blocking reads one trace file"
				       : "blocking needs the trace FILE");
	bool folded = !strcmp(o.format, "folded"), partial = o.partial;
	ret = 1;
	if (source_open_file(r, argv[first], err, sizeof(err))) {
		cli_error("%s", err);
		goto out;
	}
	m = task_model__new(as_source__meta(r));
	b = m ? blocking__new_on(m, as_source__meta(r)) : NULL;
	q = runq__new();
	if (!b || !q) {
		cli_error("out of memory");
		goto out;
	}
	/* off-CPU intervals and run-queue waits from the same events; the
	 * model first: the off-CPU analysis observes it */
	struct as_sink sinks[] = { task_model__sink(m), blocking__sink(b), runq__sink(q) };
	struct pipeline_result res;

	if (cli_run(r, &(struct cli_run_opts){ .path = argv[first], .partial = partial }, sinks, 3,
		    &res))
		goto out;
	f = cli_open_output(o.output);
	if (!f)
		goto out;
	if ((folded ? blocking_report_folded(f, b) :
		      blocking_report_text(f, b) || runq_report_text(f, q))) {
		cli_error("cannot write the report");
		goto out;
	}
	/* folded stacks feed flame-graph tools: the count goes to stderr */
	cli_print_lost(folded ? stderr : f, r, res.events);
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
	blocking__free(b);
	task_model__free(m);
	runq__free(q);
	as_source__free(r);
	return ret;
}
