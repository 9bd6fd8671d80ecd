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
#include "output/blocking_report.h"
#include "output/runq_report.h"
#include "trace/reader.h"

int cmd_blocking(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "folded", no_argument, NULL, 'f' },
		{ "partial", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct trace_reader *r = NULL;
	struct blocking *b = NULL;
	struct runq *q = NULL;
	bool folded = false, partial = false;
	char err[1024];
	struct as_event ev;
	int c, n, ret = 2;

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
	r = trace_reader__open(argv[optind], err, sizeof(err));
	if (!r) {
		cli_error("%s", err);
		goto out;
	}
	b = blocking__new(trace_reader__meta(r));
	q = runq__new();
	if (!b || !q) {
		cli_error("out of memory");
		goto out;
	}
	while ((n = trace_reader__next(r, &ev)) == 1) {
		const struct as_stack *s = ev.type == AS_EV_OFFCPU ? trace_reader__stack(r, ev.stack) : NULL;
		if (blocking__add(b, &ev, s) || runq__add(q, &ev)) {
			cli_error("out of memory");
			goto out;
		}
	}
	if (n < 0 && !(n == -ENODATA && partial)) {
		cli_error("%s", trace_reader__error(r));
		goto out;
	}
	if ((folded ? blocking_report_folded(stdout, b) :
		      blocking_report_text(stdout, b) || runq_report_text(stdout, q))) {
		cli_error("cannot write the report");
		goto out;
	}
	ret = 0;
out:
	blocking__free(b);
	runq__free(q);
	trace_reader__free(r);
	return ret;
}
