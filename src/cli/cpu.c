/* `asyncscope cpu [--format text|folded] [-o FILE] [--partial] FILE`: where
 * the CPU went (CPU samples, recorded with record --sample HZ), per task and
 * share, or as flame-graph stacks. */
#include <stdbool.h>
#include <stdio.h>

#include "analysis/cpu_samples.h"
#include "analysis/stack_fold.h"
#include "analysis/task_model.h"
#include "cli/commands.h"
#include "cli/text_view.h"
#include "cli/trace_cmd.h"
#include "output/cpu_report.h"
#include "output/report.h"
#include "pipeline/source_file.h"

static const struct cli_opt cpu_opts[] = {
	{ "format", 'f', CLI_CHOICE, TC_FORMAT, "text|folded",
	  "text (default), or flame-graph stacks:\ntask;user frames;kernel frames COUNT,\n"
	  "starting at the task's code; the program's first frame ends in _[j],\n"
	  "kernel frames in _[k]" },
	{ "folded", 0, CLI_FLAG, TC_FOLDED, NULL, "the same as --format folded" },
	{ "all-frames", 0, CLI_FLAG, TC_ALL_FRAMES, NULL,
	  "keep the runtime's and std's frames between a thread's start and the\n"
	  "task's code (folded away by default)" },
	{ 0 },
};

static const struct cli_opt *const tables[] = { cpu_opts, trace_cmd_opts, cli_color_opts,
						  cli_wide_opts, cli_limit_opts, NULL };

const struct cli_command cpu_command = {
	.name = "cpu",
	.summary = "CPU samples per task and share (record with --sample HZ).",
	.operands = "FILE",
	.tables = tables,
};

static const struct as_trace_meta *cpu_meta;

static int write_cpu(FILE *out, void *ctx, bool folded)
{
	if (!folded)
		report_flight_line(out, cpu_meta);   /* a flight recorder's snapshot: its trigger */
	struct text_view tv = cli_text_view(out);

	return folded ? cpu_report_folded(out, ctx) : cpu_report_text(out, ctx, &tv);
}

int cmd_cpu(int argc, char **argv)
{
	struct as_source src = { 0 };
	struct trace_cmd_args a;
	struct task_model *m = NULL;
	struct cpu_samples *cs = NULL;
	char err[1024];
	int first, ret = trace_cmd_parse(&cpu_command, argc, argv, &a, &first);

	if (ret >= 0)
		return ret;
	ret = 1;
	if (source_open_file(&src, argv[first], err, sizeof(err))) {
		cli_error("%s", err);
		goto out;
	}
	m = trace_cmd_model(&a, as_source__meta(&src));
	cpu_meta = as_source__meta(&src);
	cs = m ? cpu_samples__new_on(m, as_source__meta(&src)) : NULL;
	if (!cs) {
		cli_error("out of memory");
		goto out;
	}
	if (a.all_frames)
		cpu_samples__set_fold(cs, STACK_FOLD_ALL);
	/* the model first: the analysis observes it */
	struct as_sink sinks[] = { task_model__sink(m), cpu_samples__sink(cs) };

	ret = trace_cmd_finish(&src, argv[first], &a, sinks, 2, write_cpu, cs);
out:
	cpu_samples__free(cs);
	task_model__free(m);
	as_source__free(&src);
	return ret;
}
