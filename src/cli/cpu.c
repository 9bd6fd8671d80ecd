/* `asyncscope cpu [--folded] [--partial] FILE`: where the CPU went (CPU
 * samples, recorded with record --sample HZ), per task and share, or as
 * flame-graph stacks. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "analysis/cpu_samples.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "output/cpu_report.h"
#include "pipeline/source_file.h"

static int add_sample(void *ctx, const struct as_event *ev, const struct as_stack *stack)
{
	return cpu_samples__add(ctx, ev, ev->type == AS_EV_SAMPLE ? stack : NULL);
}

int cmd_cpu(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "folded", no_argument, NULL, 'f' },
		{ "partial", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct as_source src = { 0 }, *r = &src;
	struct cpu_samples *cs = NULL;
	bool folded = false, partial = false;
	char err[1024];
	int c, ret = 2;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': folded = true; break;
		case 'P': partial = true; break;
		case 'h':
			printf("usage: asyncscope cpu [--folded] [--partial] FILE\n"
			       "  CPU samples per task and share (record with --sample HZ)\n"
			       "  --folded   flame-graph stacks: task;user frames;kernel frames COUNT\n"
			       "  --partial  use the events of a truncated trace\n");
			return 0;
		default:
			return 2;
		}
	}
	if (optind != argc - 1) {
		cli_error("usage: asyncscope cpu [--folded] [--partial] FILE");
		return 2;
	}
	ret = 1;
	if (source_open_file(r, argv[optind], err, sizeof(err))) {
		cli_error("%s", err);
		goto out;
	}
	cs = cpu_samples__new(as_source__meta(r));
	if (!cs) {
		cli_error("out of memory");
		goto out;
	}
	uint64_t events = 0;
	if (cli_read_events(r, argv[optind], partial, add_sample, cs, &events))
		goto out;
	if ((folded ? cpu_report_folded(stdout, cs) : cpu_report_text(stdout, cs))) {
		cli_error("cannot write the report");
		goto out;
	}
	/* folded stacks feed flame-graph tools: the count goes to stderr */
	cli_print_lost(folded ? stderr : stdout, r, events);
	ret = 0;
out:
	cpu_samples__free(cs);
	as_source__free(r);
	return ret;
}
