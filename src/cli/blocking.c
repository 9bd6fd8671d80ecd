/* `asyncscope blocking [--format text|folded] [-o FILE] [--partial] FILE`:
 * where polls blocked (off CPU inside a poll, recorded with record
 * --offcpu), per task and per cause, or as flame-graph stacks; then how long
 * each worker waited for a CPU once runnable (run-queue delay, record --runq
 * or --offcpu). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "analysis/blocking.h"
#include "analysis/runq.h"
#include "analysis/stack_fold.h"
#include "analysis/task_model.h"
#include "cli/commands.h"
#include "cli/text_view.h"
#include "cli/trace_cmd.h"
#include "output/blocking_report.h"
#include "output/report.h"
#include "output/runq_report.h"
#include "pipeline/source_file.h"

static const struct cli_opt blocking_opts[] = {
	{ "format", 'f', CLI_CHOICE, TC_FORMAT, "text|folded",
	  "text (default), or flame-graph stacks:\ntask;user frames;kernel frames WEIGHT,\n"
	  "starting at the task's code; the program's first frame ends in _[j],\n"
	  "kernel frames in _[k]" },
	{ "folded", 0, CLI_FLAG, TC_FOLDED, NULL, "the same as --format folded" },
	{ "all-frames", 0, CLI_FLAG, TC_ALL_FRAMES, NULL,
	  "keep the runtime's and std's frames between a thread's start and the\n"
	  "task's code (folded away by default)" },
	{ "unit", 0, CLI_CHOICE, TC_UNIT, "ns|us|ms", "folded: the unit of the weights (default us)" },
	{ 0 },
};

static const struct cli_opt *const tables[] = { blocking_opts, trace_cmd_opts, cli_color_opts,
						  cli_wide_opts, cli_limit_opts, NULL };

const struct cli_command blocking_command = {
	.name = "blocking",
	.summary = "Off-CPU time inside polls per task and cause (recorded by default), then\n"
		   "the run-queue delay per worker (--offcpu or --runq).",
	.operands = "FILE",
	.tables = tables,
};

struct blocking_out {
	struct blocking *b;
	struct runq *q;
	const struct as_trace_meta *meta;
	enum folded_unit unit;
};

static int write_blocking(FILE *out, void *ctx, bool folded)
{
	struct blocking_out *o = ctx;

	if (folded)
		return blocking_report_folded(out, o->b, o->unit);
	struct text_view tv = cli_text_view(out);

	report_flight_line(out, o->meta);   /* a flight recorder's snapshot: its trigger */
	if (blocking_report_text(out, o->b, &tv))
		return -EIO;
	if (blocking__summary(o->b)->profile) {
		/* no run-queue program in profile mode: not 0 waits */
		fprintf(out, "Run-queue delay per worker: not recorded in profile mode\n");
		return ferror(out) ? -EIO : 0;
	}
	return runq_report_text(out, o->q);
}

int cmd_blocking(int argc, char **argv)
{
	struct as_source src = { 0 };
	struct trace_cmd_args a;
	struct task_model *m = NULL;
	struct blocking_out o = { 0 };
	char err[1024];
	int first, ret = trace_cmd_parse(&blocking_command, argc, argv, &a, &first);

	if (ret >= 0)
		return ret;
	o.unit = FOLDED_US;
	if (a.unit && folded_unit_parse(a.unit, &o.unit))
		return cli_usage_error(&blocking_command, "--unit takes ns, us or ms");
	if (a.unit && strcmp(a.format, "folded"))
		return cli_usage_error(&blocking_command, "--unit applies to --format folded only");
	ret = 1;
	if (source_open_file(&src, argv[first], err, sizeof(err))) {
		cli_error("%s", err);
		goto out;
	}
	m = trace_cmd_model(&a, as_source__meta(&src));
	o.b = m ? blocking__new_on(m, as_source__meta(&src)) : NULL;
	if (o.b && a.all_frames)
		blocking__set_fold(o.b, STACK_FOLD_ALL);
	o.q = runq__new();
	o.meta = as_source__meta(&src);
	if (!o.b || !o.q) {
		cli_error("out of memory");
		goto out;
	}
	/* off-CPU intervals and run-queue waits from the same events; the
	 * model first: the off-CPU analysis observes it */
	struct as_sink sinks[] = { task_model__sink(m), blocking__sink(o.b), runq__sink(o.q) };

	ret = trace_cmd_finish(&src, argv[first], &a, sinks, 3, write_blocking, &o);
out:
	blocking__free(o.b);
	task_model__free(m);
	runq__free(o.q);
	as_source__free(&src);
	return ret;
}
