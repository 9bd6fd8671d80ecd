/* `asyncscope events FILE`: the decoded event stream, one line each, for
 * debugging a trace or a runtime profile. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/progress.h"
#include "pipeline/pipeline.h"
#include "pipeline/source_file.h"

static const struct cli_opt events_opts[] = {
	{ "format", 'f', CLI_CHOICE, 'f', "text", "text (the one form: a line per event)" },
	{ "output", 'o', CLI_STRING, 'o', "FILE", "write the events to FILE (default -: stdout)" },
	{ "partial", 0, CLI_FLAG, 'P', NULL, "the events of a truncated trace, marked as such" },
	{ 0 },
};

static const struct cli_opt *const tables[] = { events_opts, NULL };

const struct cli_command events_command = {
	.name = "events",
	.summary = "The decoded event stream of a trace, one line per event, for debugging a trace "
		   "or a\nruntime profile.",
	.operands = "FILE",
	.tables = tables,
};

struct events_args {
	const char *output;
	bool partial;
};

static int on_opt(void *ctx, const struct cli_opt *opt, const struct cli_val *v)
{
	struct events_args *a = ctx;

	if (opt->key == 'o')
		a->output = v->str;
	else if (opt->key == 'P')
		a->partial = true;
	return 0;   /* --format text: the only form, checked by the table */
}

/* The printer, a sink: one line per event on stdout. Sample:
 *   +0.000123456 tid 4243 poll_begin task 0x55d1c3a0f2c0 id 3 probe 1
 *   +0.000130001 tid 4243 usdt       task 0x55d1c3a0f2c0 asyncscope_test:tick arg 41 probe 7
 */
static int print_event(void *impl, const struct as_event *ev, const struct as_stack *stack)
{
	static const char *const names[AS_EV__MAX] = {
		[AS_EV_THREAD] = "thread", [AS_EV_POLL_BEGIN] = "poll_begin",
		[AS_EV_POLL_END] = "poll_end", [AS_EV_WAKE] = "wake", [AS_EV_SPAWN] = "spawn",
		[AS_EV_FREE] = "free", [AS_EV_PARK] = "park", [AS_EV_UNPARK] = "unpark",
		[AS_EV_USDT] = "usdt", [AS_EV_OFFCPU] = "offcpu", [AS_EV_SAMPLE] = "sample",
		[AS_EV_RUNQ] = "runq", [AS_EV_URING] = "uring",
		[AS_EV_FUTURE_ENTER] = "fut_enter", [AS_EV_FUTURE_EXIT] = "fut_exit",
	};
	const struct as_trace_meta *meta = impl;
	uint64_t base = meta->clock_mono_ns;

	(void)stack;
	int64_t rel = (int64_t)(ev->ts - base);
	printf("%+.9f tid %" PRIu32 " %-10s", (double)rel / 1e9, ev->tid,
	       ev->type < AS_EV__MAX && names[ev->type] ? names[ev->type] : "?");
	if (ev->task)
		printf(" task 0x%" PRIx64, ev->task);
	switch (ev->type) {
	case AS_EV_POLL_BEGIN: printf(" id %" PRIu64, ev->other); break;
	case AS_EV_POLL_END: printf(" %s", ev->flags & AS_POLL_READY ? "ready" : "pending"); break;
	case AS_EV_WAKE:
		if (ev->other)
			printf(" from 0x%" PRIx64, ev->other);
		if (ev->flags & AS_WAKE_IO)
			printf(" by io");
		if (ev->flags & AS_WAKE_TIMER)
			printf(" by timer");
		break;
	case AS_EV_SPAWN:
		if (ev->flags & AS_SPAWN_WAKERS)
			printf(" wakers %" PRIu64 " (idle at the end)", ev->other);
		else if (ev->flags & AS_SPAWN_BEFORE)
			printf(" found in memory, %s since before the recording: \"%s\" id %" PRIu64,
			       ev->flags & AS_SPAWN_QUEUED ? "runnable" :
			       ev->flags & AS_SPAWN_RUNNING ? "in one poll" : "idle",
			       ev->str ? ev->str : "", ev->other);
		else if (ev->flags & AS_SPAWN_NAME)
			printf(" name \"%s\" id %" PRIu64, ev->str ? ev->str : "", ev->other);
		else
			printf(" %s:%" PRIu64 ":%" PRIu64, ev->str ? ev->str : "?", ev->other >> 32,
			       ev->other & 0xffffffff);
		break;
	case AS_EV_THREAD: printf(" %s", ev->str ? ev->str : ""); break;
	case AS_EV_USDT:
		/* the argument as a signed number: USDT arguments are mostly ints */
		printf(" %s arg %" PRId64, ev->probe < meta->n_probes &&
		       meta->probes[ev->probe].symbol ? meta->probes[ev->probe].symbol : "?",
		       (int64_t)ev->other);
		break;
	case AS_EV_OFFCPU:
		printf(" for %" PRIu64 " ns%s stack %u", ev->other,
		       ev->flags & AS_OFFCPU_PREEMPTED ? " (preempted)" : "", ev->stack);
		break;
	case AS_EV_SAMPLE:
		printf(" stack %u", ev->stack);
		break;
	case AS_EV_RUNQ:
		printf(" waited %" PRIu64 " ns for a CPU", ev->other);
		break;
	case AS_EV_FUTURE_ENTER:
	case AS_EV_FUTURE_EXIT: {
		const struct as_probe *p = &meta->probes[ev->probe];   /* checked by the reader */
		printf(" %s depth %" PRIu32, p->future && *p->future ? p->future : p->symbol,
		       AS_FUT_DEPTH(ev->other));
		if (ev->type == AS_EV_FUTURE_EXIT) {
			int k = as_fut_await_point(ev->other);
			printf(" %s", ev->flags & AS_FUTURE_READY ? "ready" :
			       ev->flags & AS_FUTURE_PENDING ? "pending" : "?");
			if (k >= 0 && (uint32_t)k < p->n_awaits)
				printf(" at %s:%" PRIu32 "%s%s", p->src_file ? p->src_file : "?",
				       p->await_lines[k],
				       p->await_types && p->await_types[k] ? " awaiting " : "",
				       p->await_types && p->await_types[k] ? p->await_types[k] : "");
		}
		break;
	}
	case AS_EV_URING:
		printf(" other %" PRIu64 " flags 0x%x", ev->other, ev->flags);
		break;
	}
	printf(" probe %u\n", ev->probe);
	return 0;
}

static const struct as_sink_ops printer_ops = { .name = "events", .add = print_event };

int cmd_events(int argc, char **argv)
{
	char err[1024];
	struct events_args a = { .output = "-" };
	int n, first = 0, ret = cli_parse(&events_command, argc, argv, on_opt, &a, &first);

	if (ret >= 0)
		return ret;
	if (first + 1 != argc)
		return cli_usage_error(&events_command, first < argc ? "events reads one trace file"
				       : "events needs the trace FILE");
	struct as_source src, *r = &src;

	if (source_open_file(r, argv[first], err, sizeof(err))) {
		cli_error("%s", err);
		return 1;
	}
	cli_note_input(argv[first]);
	if (cli_redirect_stdout(a.output)) {
		as_source__free(r);
		return 1;
	}
	struct as_sink printer = { &printer_ops, (void *)as_source__meta(r) };
	struct pipeline_result res;

	n = pipeline_run(r, &printer, 1, &(struct pipeline_opts){ .partial = a.partial }, &res);
	if (n < 0) {
		cli_error("%s", as_source__error(r));
		as_source__free(r);
		return 1;   /* an -o file is not put in place */
	}
	cli_warn_corrupt(r, &res);
	if (res.truncated && !res.corrupt)
		cli_error("warning: %s is truncated after %llu events: all of them listed above",
			  argv[first], (unsigned long long)res.events);
	n = cli_close_output(stdout);
	if (n) {
		cli_error("writing the events: %s", cli_write_error(n));
		as_source__free(r);
		return 1;
	}
	/* the stream is the events: what the recording lost goes to stderr */
	cli_print_lost(stderr, r, res.events);
	as_source__free(r);
	return 0;
}
