/* `asyncscope uring [--partial] FILE`: io_uring requests per task
 * (recorded with record --uring): submissions inside each task's polls,
 * completions, completion latency. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "analysis/uring.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "output/uring_report.h"
#include "pipeline/source_file.h"

static int add_uring(void *ctx, const struct as_event *ev, const struct as_stack *stack)
{
	(void)stack;
	return uring__add(ctx, ev);
}

int cmd_uring(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "partial", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct as_source src = { 0 }, *r = &src;
	struct uring *u = NULL;
	bool partial = false;
	char err[1024];
	int c, ret = 2;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'P': partial = true; break;
		case 'h':
			printf("usage: asyncscope uring [--partial] FILE\n"
			       "  io_uring submissions, completions and latency per task (record with --uring)\n"
			       "  --partial  use the events of a truncated trace\n");
			return 0;
		default:
			return 2;
		}
	}
	if (optind != argc - 1) {
		cli_error("usage: asyncscope uring [--partial] FILE");
		return 2;
	}
	ret = 1;
	if (source_open_file(r, argv[optind], err, sizeof(err))) {
		cli_error("%s", err);
		goto out;
	}
	u = uring__new(as_source__meta(r));
	if (!u) {
		cli_error("out of memory");
		goto out;
	}
	uint64_t events = 0;
	if (cli_read_events(r, argv[optind], partial, add_uring, u, &events))
		goto out;
	if (uring_report_text(stdout, u)) {
		cli_error("cannot write the report");
		goto out;
	}
	cli_print_lost(stdout, r, events);
	ret = 0;
out:
	uring__free(u);
	as_source__free(r);
	return ret;
}
