/* pipeline_run(): a source drained into sinks in order, stacks looked up
 * once per event, finish() with the end record (or the cut of a truncated
 * input with --partial), and errors from the source and from a sink. A
 * scripted in-memory source and a recording sink stand in for the real
 * ones. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "pipeline/pipeline.h"

/* A scripted source: n events, then `last` (0 clean end, or -errno). */
struct script {
	const struct as_event *evs;
	size_t n, pos;
	int last;
	struct as_trace_meta meta;
	struct as_trace_end end;
	struct as_stack stack;
	unsigned stack_lookups;
};

static int s_next(void *impl, struct as_event *ev)
{
	struct script *s = impl;

	if (s->pos < s->n) {
		*ev = s->evs[s->pos++];
		return 1;
	}
	return s->last;
}

static const struct as_trace_meta *s_meta(void *impl)
{
	return &((struct script *)impl)->meta;
}

static const struct as_stack *s_stack(void *impl, uint32_t id)
{
	struct script *s = impl;

	s->stack_lookups++;
	return id == 1 ? &s->stack : NULL;
}

static const struct as_trace_end *s_end(void *impl)
{
	struct script *s = impl;

	return s->pos == s->n && s->last == 0 ? &s->end : NULL;
}

static const char *s_error(void *impl)
{
	return ((struct script *)impl)->last < 0 ? "scripted error" : "";
}

static const struct as_source_ops script_ops = {
	.next = s_next, .meta = s_meta, .stack = s_stack, .end = s_end, .error = s_error,
};

/* A sink that records what it was given; fails at add number fail_at (1-based). */
struct rec {
	uint64_t adds, with_stack, last_ts, finished_events, finished_end, finished_truncated;
	unsigned finishes;
	uint64_t fail_at;
	int order;            /* set from a shared counter at each add */
	int *clock;
};

static int r_add(void *impl, const struct as_event *ev, const struct as_stack *stack)
{
	struct rec *r = impl;

	r->adds++;
	if (r->fail_at && r->adds == r->fail_at)
		return -ENOMEM;
	if (stack)
		r->with_stack++;
	r->last_ts = ev->ts;
	r->order = ++*r->clock;
	return 0;
}

static int r_finish(void *impl, const struct as_trace_end *end)
{
	struct rec *r = impl;

	r->finishes++;
	r->finished_events = end->events;
	r->finished_end = end->end_ns;
	r->finished_truncated = end->truncated;
	return 0;
}

static const struct as_sink_ops rec_ops = { .name = "rec", .add = r_add, .finish = r_finish };

static const struct as_event evs[] = {
	{ .type = AS_EV_THREAD, .tid = 1, .ts = 10, .str = "w" },
	{ .type = AS_EV_OFFCPU, .tid = 1, .ts = 30, .stack = 1, .other = 5 },
	{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 20, .task = 0xa0 },
};

static void test_clean_end(void)
{
	struct script s = { .evs = evs, .n = 3, .end = { .events = 3, .lost = 2, .end_ns = 99 } };
	struct as_source src = { &script_ops, &s, "script" };
	int clock = 0;
	struct rec a = { .clock = &clock }, b = { .clock = &clock };
	struct as_sink sinks[] = { { &rec_ops, &a }, { &rec_ops, &b } };
	struct pipeline_result res;

	CHECK_EQ_U64(pipeline_run(&src, sinks, 2, NULL, &res), 0);
	CHECK_EQ_U64(res.events, 3);
	CHECK(!res.truncated);
	CHECK_EQ_U64(res.end.lost, 2);
	CHECK_EQ_U64(res.end.end_ns, 99);
	CHECK_EQ_U64(a.adds, 3);
	CHECK_EQ_U64(b.adds, 3);
	/* the one event with a stack: looked up once, given to both */
	CHECK_EQ_U64(s.stack_lookups, 1);
	CHECK_EQ_U64(a.with_stack, 1);
	CHECK_EQ_U64(b.with_stack, 1);
	/* each event reaches a before b */
	CHECK(a.order < b.order);
	CHECK_EQ_U64(a.finishes, 1);
	CHECK_EQ_U64(b.finished_end, 99);
	CHECK_EQ_U64(b.finished_truncated, 0);
}

static void test_truncated(void)
{
	struct script s = { .evs = evs, .n = 3, .last = -ENODATA };
	struct as_source src = { &script_ops, &s, "script" };
	int clock = 0;
	struct rec a = { .clock = &clock };
	struct as_sink sink = { &rec_ops, &a };
	struct pipeline_opts o = { .partial = true };
	struct pipeline_result res;

	/* without partial: the error, no finish */
	CHECK_EQ_U64(pipeline_run(&src, &sink, 1, NULL, &res), (uint64_t)-ENODATA);
	CHECK_EQ_U64(res.err, (uint64_t)-ENODATA);
	CHECK(res.failed == NULL);
	CHECK_EQ_U64(a.finishes, 0);
	/* with partial: finish with the events read and the latest timestamp */
	s.pos = 0;
	a = (struct rec){ .clock = &clock };
	CHECK_EQ_U64(pipeline_run(&src, &sink, 1, &o, &res), 0);
	CHECK(res.truncated);
	CHECK_EQ_U64(a.finishes, 1);
	CHECK_EQ_U64(a.finished_events, 3);
	CHECK_EQ_U64(a.finished_end, 30);
	CHECK_EQ_U64(a.finished_truncated, 1);
}

static void test_sink_error(void)
{
	struct script s = { .evs = evs, .n = 3 };
	struct as_source src = { &script_ops, &s, "script" };
	int clock = 0;
	struct rec a = { .clock = &clock, .fail_at = 2 }, b = { .clock = &clock };
	struct as_sink sinks[] = { { &rec_ops, &a }, { &rec_ops, &b } };
	struct pipeline_result res;

	CHECK_EQ_U64(pipeline_run(&src, sinks, 2, NULL, &res), (uint64_t)-ENOMEM);
	CHECK_STR(res.failed, "rec");
	CHECK_EQ_U64(res.events, 1);
	/* the failing event never reached the next sink; nothing finished */
	CHECK_EQ_U64(b.adds, 1);
	CHECK_EQ_U64(a.finishes + b.finishes, 0);
}

static void test_source_error(void)
{
	struct script s = { .evs = evs, .n = 1, .last = -EBADMSG };
	struct as_source src = { &script_ops, &s, "script" };
	int clock = 0;
	struct rec a = { .clock = &clock };
	struct as_sink sink = { &rec_ops, &a };
	struct pipeline_opts o = { .partial = true };
	struct pipeline_result res;

	/* a corrupt input is an error without partial */
	CHECK_EQ_U64(pipeline_run(&src, &sink, 1, NULL, &res), (uint64_t)-EBADMSG);
	CHECK_STR(as_source__error(&src), "scripted error");
	CHECK_EQ_U64(a.finishes, 0);
	CHECK(!res.truncated && !res.corrupt);
	/* with partial, the events before the bad record, marked as cut there */
	s = (struct script){ .evs = evs, .n = 1, .last = -EBADMSG };
	CHECK_EQ_U64(pipeline_run(&src, &sink, 1, &o, &res), 0);
	CHECK_EQ_U64(a.finishes, 1);
	CHECK(res.truncated && res.corrupt);
	CHECK_EQ_U64(res.end.truncated, 1);
	CHECK_EQ_U64(res.events, 1);
	/* any other error stays one */
	s = (struct script){ .evs = evs, .n = 1, .last = -EIO };
	CHECK_EQ_U64(pipeline_run(&src, &sink, 1, &o, &res), (uint64_t)-EIO);
	CHECK_EQ_U64(a.finishes, 1);
}

int main(void)
{
	RUN(test_clean_end);
	RUN(test_truncated);
	RUN(test_sink_error);
	RUN(test_source_error);
	TEST_MAIN_END();
}
