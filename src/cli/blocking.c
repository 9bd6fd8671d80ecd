/* `asyncscope blocking [--folded] [--partial] FILE`: where polls blocked
 * (off CPU inside a poll, recorded with record --offcpu), per task and per
 * cause, or as flame-graph stacks; then how long each worker waited for a
 * CPU once runnable (run-queue delay, record --runq or --offcpu). */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "analysis/blocking.h"
#include "analysis/runq.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "output/blocking_report.h"
#include "output/runq_report.h"
#include "pipeline/source_file.h"

/* Off-CPU intervals and run-queue waits from the same events. */
struct blocking_input {
	struct blocking *b;
	struct runq *q;
};

static int add_blocking(void *ctx, const struct as_event *ev, const struct as_stack *stack)
{
	struct blocking_input *in = ctx;

	return blocking__add(in->b, ev, ev->type == AS_EV_OFFCPU ? stack : NULL) ||
	       runq__add(in->q, ev);
}

int cmd_blocking(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "folded", no_argument, NULL, 'f' },
		{ "partial", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct as_source src = { 0 }, *r = &src;
	struct blocking *b = NULL;
	struct runq *q = NULL;
	bool folded = false, partial = false;
	char err[1024];
	int c, ret = 2;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': folded = true; break;
		case 'P': partial = true; break;
		case 'h':
			printf("usage: asyncscope blocking [--folded] [--partial] FILE\n"
			       "  off-CPU time inside polls per task and cause (record with --offcpu),\n"
			       "  then the run-queue delay per worker (--offcpu or --runq)\n"
			       "  --folded   flame-graph stacks: task;user frames;kernel frames NS\n"
			       "  --partial  use the events of a truncated trace\n");
			return 0;
		default:
			return 2;
		}
	}
	if (optind != argc - 1) {
		cli_error("usage: asyncscope blocking [--folded] [--partial] FILE");
		return 2;
	}
	ret = 1;
	if (source_open_file(r, argv[optind], err, sizeof(err))) {
		cli_error("%s", err);
		goto out;
	}
	b = blocking__new(as_source__meta(r));
	q = runq__new();
	if (!b || !q) {
		cli_error("out of memory");
		goto out;
	}
	struct blocking_input in = { b, q };
	uint64_t events = 0;
	if (cli_read_events(r, argv[optind], partial, add_blocking, &in, &events))
		goto out;
	if ((folded ? blocking_report_folded(stdout, b) :
		      blocking_report_text(stdout, b) || runq_report_text(stdout, q))) {
		cli_error("cannot write the report");
		goto out;
	}
	/* folded stacks feed flame-graph tools: the count goes to stderr */
	cli_print_lost(folded ? stderr : stdout, r, events);
	ret = 0;
out:
	blocking__free(b);
	runq__free(q);
	as_source__free(r);
	return ret;
}
