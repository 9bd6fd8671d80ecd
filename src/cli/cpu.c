/* `asyncscope cpu [--folded] [--partial] FILE`: where the CPU went (CPU
 * samples, recorded with record --sample HZ), per task and share, or as
 * flame-graph stacks. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "analysis/cpu_samples.h"
#include "analysis/task_model.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "output/cpu_report.h"
#include "pipeline/source_file.h"

enum { O_FORMAT = 1, O_FOLDED, O_OUTPUT, O_PARTIAL };

static const struct cli_opt cpu_opts[] = {
	{ "format", 'f', CLI_CHOICE, O_FORMAT, "text|folded",
	  "text (default), or flame-graph stacks:\ntask;user frames;kernel frames COUNT" },
	{ "folded", 0, CLI_FLAG, O_FOLDED, NULL, "the same as --format folded" },
	{ "output", 'o', CLI_STRING, O_OUTPUT, "FILE", "write to FILE (default -: stdout)" },
	{ "partial", 0, CLI_FLAG, O_PARTIAL, NULL, "use the events of a truncated trace" },
	{ 0 },
};

static const struct cli_opt *const tables[] = { cpu_opts, NULL };

const struct cli_command cpu_command = {
	.name = "cpu",
	.summary = "CPU samples per task and share (record with --sample HZ).",
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

int cmd_cpu(int argc, char **argv)
{
	struct as_source src = { 0 }, *r = &src;
	struct task_model *m = NULL;
	struct cpu_samples *cs = NULL;
	char err[1024];
	int first, ret;

	struct out_args o = { .format = "text", .output = "-" };
	FILE *f = NULL;

	ret = cli_parse(&cpu_command, argc, argv, on_opt, &o, &first);
	if (ret >= 0)
		return ret;
	if (first + 1 != argc)
		return cli_usage_error(&cpu_command, first < argc ? "cpu reads one trace file"
				       : "cpu needs the trace FILE");
	bool folded = !strcmp(o.format, "folded"), partial = o.partial;
	ret = 1;
	if (source_open_file(r, argv[first], err, sizeof(err))) {
		cli_error("%s", err);
		goto out;
	}
	m = task_model__new(as_source__meta(r));
	cs = m ? cpu_samples__new_on(m, as_source__meta(r)) : NULL;
	if (!cs) {
		cli_error("out of memory");
		goto out;
	}
	/* the model first: the analysis observes it */
	struct as_sink sinks[] = { task_model__sink(m), cpu_samples__sink(cs) };
	struct pipeline_result res;

	if (cli_run(r, &(struct cli_run_opts){ .path = argv[first], .partial = partial }, sinks, 2,
		    &res))
		goto out;
	f = cli_open_output(o.output);
	if (!f)
		goto out;
	if ((folded ? cpu_report_folded(f, cs) : cpu_report_text(f, cs))) {
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
	cpu_samples__free(cs);
	task_model__free(m);
	as_source__free(r);
	return ret;
}
