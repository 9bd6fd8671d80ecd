/* Unit tests of the flight recorder's ring (src/record/flight.c): eviction
 * order (oldest first, by size and by age, a held start kept), the size
 * accounting, the state kept outside the ring (thread names, task names by
 * task and by task id, stacks) re-emitted in a snapshot whose events refer
 * to it and dropped when none does, and the snapshot read back as a normal
 * trace (exact events). Temporary files under /tmp. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "record/flight.h"
#include "trace/event.h"
#include "trace/reader.h"

static struct as_probe probes[] = {
	{ .role = AS_ROLE_POLL, .addr = 0x1000, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "app::job", .state_off = -1 },
};

static struct as_trace_meta meta = {
	.pid = 77, .target = "/bin/app", .build_id = "", .runtime = "tokio", .cmdline = "app",
	.clock_mono_ns = 1000, .clock_real_ns = 1700000000000000000ull, .probes = probes,
	.n_probes = 1,
};

static char path[64];

/* The events of the trace at path, *n of them (caller frees; strings
 * copied into one arena freed with it: a cheap test fixture). */
struct got {
	struct as_event *ev;
	size_t n;
	char strs[1 << 16];
	size_t used;
	struct as_trace_meta meta;
	uint32_t stack_frames[8];   /* frames of stack id 1..8 */
	char stack_sym[8][64];      /* first frame's symbol */
};

static struct got *read_back(const char *p)
{
	char err[256];
	struct trace_reader *r = trace_reader__open(p, err, sizeof(err));
	struct got *g = calloc(1, sizeof(*g));
	struct as_event ev;
	int ret;

	if (!r) {
		fprintf(stderr, "open %s: %s\n", p, err);
		free(g);
		return NULL;
	}
	g->ev = calloc(1 << 16, sizeof(*g->ev));
	g->meta = *trace_reader__meta(r);
	while ((ret = trace_reader__next(r, &ev)) > 0 && g->n < (1 << 16)) {
		if (ev.str) {
			size_t len = strlen(ev.str) + 1;
			memcpy(g->strs + g->used, ev.str, len);
			ev.str = g->strs + g->used;
			g->used += len;
		}
		if (ev.stack && ev.stack <= 8) {
			const struct as_stack *st = trace_reader__stack(r, ev.stack);
			g->stack_frames[ev.stack - 1] = st ? (uint32_t)st->n_kernel + st->n_user : 0;
			snprintf(g->stack_sym[ev.stack - 1], 64, "%s",
				 st && st->n_kernel + st->n_user ? st->frames[0].sym : "");
		}
		g->ev[g->n++] = ev;
	}
	CHECK_EQ_U64(ret, 0);   /* a complete trace, its trailer read */
	g->meta.target = NULL;  /* owned by the reader: not used after */
	g->meta.flight_trigger = NULL;
	g->meta.flight_detail = NULL;
	trace_reader__free(r);
	return g;
}

static void got_free(struct got *g)
{
	if (g)
		free(g->ev);
	free(g);
}

static struct as_event poll_ev(uint64_t i)
{
	return (struct as_event){ .type = i % 2 ? AS_EV_POLL_END : AS_EV_POLL_BEGIN,
				  .tid = 100 + (uint32_t)(i % 3), .ts = 10000 + i * 1000,
				  .task = 0x7f0000001000ull + (i % 5) * 0x100, .other = i % 2 ? 0 : 42 };
}

/* Many events into the least ring: the last ones kept, in order, exactly;
 * the rest counted as evicted for size; the ring never over its cap. */
static void test_eviction_order_and_size(void)
{
	struct flight *f = flight__new(64 << 10, 0);
	struct flight_stats st;
	struct flight_written wr;
	const uint64_t n = 20000;

	CHECK(f);
	if (!f)
		return;
	for (uint64_t i = 0; i < n; i++) {
		struct as_event ev = poll_ev(i);
		CHECK_EQ_U64(flight__push(f, &ev), 0);
		flight__stats(f, &st);
		if (st.ring_bytes > st.ring_cap)
			CHECK(st.ring_bytes <= st.ring_cap);
	}
	flight__stats(f, &st);
	CHECK_EQ_U64(st.pushed, n);
	CHECK_EQ_U64(st.events + st.evicted_size, n);
	CHECK_EQ_U64(st.evicted_age, 0);
	CHECK(st.evicted_size > 0);
	CHECK_EQ_U64(st.ring_cap, (64 << 10) - (64 << 10) / 8);
	/* the ring is full to within one record (at most 64 bytes) */
	CHECK(st.ring_bytes + 64 > st.ring_cap);
	/* a poll event here: 3 bytes of record header, ts delta 2, tid 2 (it
	 * changes at every event), task 7 (a heap address), other 0 or 1 */
	/* exact: a poll end takes 3 bytes of record header, 2 of ts delta
	 * (1000 ns), 1 of tid (it changes at every event), 7 of task (a heap
	 * address); a begin 1 more, its task id (42) */
	uint64_t want = 0;
	for (uint64_t i = n - st.events; i < n; i++)
		want += i % 2 ? 13 : 14;
	CHECK_EQ_U64(st.ring_bytes, want);
	CHECK_EQ_U64(st.newest_ns, poll_ev(n - 1).ts);
	CHECK_EQ_U64(st.oldest_ns, poll_ev(n - st.events).ts);
	snprintf(path, sizeof(path), "/tmp/test_flight_%d.trace", (int)getpid());
	CHECK_EQ_U64(flight__write(f, &meta, path, 0, UINT64_MAX, 3, 4, &wr), 0);
	CHECK_EQ_U64(wr.events, st.events);
	CHECK_EQ_U64(wr.state, 0);
	CHECK_EQ_U64(wr.first_ns, st.oldest_ns);
	CHECK_EQ_U64(wr.last_ns, st.newest_ns);
	struct got *g = read_back(path);
	CHECK(g);
	if (g) {
		CHECK_EQ_U64(g->n, st.events);
		for (size_t k = 0; k < g->n; k++) {
			struct as_event want = poll_ev(n - st.events + k);
			const struct as_event *e = &g->ev[k];
			if (e->type != want.type || e->ts != want.ts || e->tid != want.tid ||
			    e->task != want.task || e->other != want.other) {
				CHECK_EQ_U64(e->ts, want.ts);
				break;
			}
		}
		CHECK_EQ_U64(g->meta.pid, 77);
		/* the header's clock at the range's first event */
		CHECK_EQ_U64(g->meta.clock_mono_ns, st.oldest_ns);
	}
	got_free(g);
	/* a snapshot's header counts the events of its range evicted for size */
	struct as_trace_meta m = meta;
	m.flight_trigger = "signal";
	CHECK_EQ_U64(flight__write(f, &m, path, 0, UINT64_MAX, 0, 0, &wr), 0);
	CHECK_EQ_U64(wr.evicted_size, st.evicted_size);
	char err[256];
	struct trace_reader *r = trace_reader__open(path, err, sizeof(err));
	CHECK(r);
	if (r) {
		CHECK_EQ_U64(trace_reader__meta(r)->flight_evicted, st.evicted_size);
		trace_reader__free(r);
	}
	unlink(path);
	flight__free(f);
}

/* Age: events older than the window go, oldest first, but not those from
 * a held start on; a state record evicted with them is kept. */
static void test_age_and_hold(void)
{
	struct flight *f = flight__new(1 << 20, 5000);
	struct flight_stats st;

	if (!f) {
		CHECK(f);
		return;
	}
	for (uint64_t t = 0; t <= 20000; t += 100) {
		struct as_event ev = { .type = AS_EV_PARK, .tid = 9, .ts = t };
		flight__push(f, &ev);
	}
	flight__expire(f, 20000, 12000);   /* held from 12000: 15000 would be the cut */
	flight__stats(f, &st);
	CHECK_EQ_U64(st.oldest_ns, 12000);
	CHECK_EQ_U64(st.evicted_age, 120);
	flight__expire(f, 20000, 0);
	flight__stats(f, &st);
	CHECK_EQ_U64(st.oldest_ns, 15000);
	CHECK_EQ_U64(st.evicted_age, 150);
	CHECK_EQ_U64(st.events, 51);
	CHECK_EQ_U64(st.evicted_size, 0);
	flight__expire(f, 100000, 0);      /* all older than the window */
	flight__stats(f, &st);
	CHECK_EQ_U64(st.events, 0);
	CHECK_EQ_U64(st.ring_bytes, 0);
	/* the ring works on after it emptied */
	struct as_event ev = { .type = AS_EV_PARK, .tid = 9, .ts = 100001 };
	CHECK_EQ_U64(flight__push(f, &ev), 0);
	flight__stats(f, &st);
	CHECK_EQ_U64(st.oldest_ns, 100001);
	flight__free(f);
}

/* The state records: a thread's name, a profile task's declaration, a task
 * mode name by task id, a stack: all evicted with their events, all back
 * at the start of a snapshot of events that refer to them. */
static void test_state_kept(void)
{
	struct flight *f = flight__new(64 << 10, 0);
	struct as_frame fr[2] = { { .addr = 0xffffffff81000000ull, .sym = "do_nanosleep" },
				  { .addr = 0x401000, .sym = "app::block", .file = "src/main.rs",
				    .line = 12 } };
	struct as_stack stk = { .n_kernel = 1, .n_user = 1, .frames = fr };
	struct flight_written wr;
	struct flight_stats st;
	uint32_t sid = 0;

	if (!f) {
		CHECK(f);
		return;
	}
	struct as_event th = { .type = AS_EV_THREAD, .tid = 7, .ts = 100, .str = "worker-7" };
	struct as_event decl = { .type = AS_EV_SPAWN, .tid = 7, .ts = 110, .task = 5, .other = 5,
				 .flags = AS_SPAWN_NAME | AS_SPAWN_TASK, .str = "app::job" };
	struct as_event named = { .type = AS_EV_SPAWN, .tid = 8, .ts = 120, .other = 42,
				  .flags = AS_SPAWN_NAME, .str = "named-task" };
	struct as_event gone = { .type = AS_EV_THREAD, .tid = 99, .ts = 130, .str = "gone" };
	CHECK_EQ_U64(flight__push(f, &th), 0);
	CHECK_EQ_U64(flight__push(f, &decl), 0);
	CHECK_EQ_U64(flight__push(f, &named), 0);
	CHECK_EQ_U64(flight__push(f, &gone), 0);
	CHECK_EQ_U64(flight__stack(f, &stk, &sid), 0);
	CHECK_EQ_U64(sid, 1);
	uint32_t again = 0;
	CHECK_EQ_U64(flight__stack(f, &stk, &again), 0);
	CHECK_EQ_U64(again, 1);   /* the same stack, the same id */
	/* enough samples of task 5 on thread 7 and polls of id 42 to evict the
	 * state records (thread 99 has no event left then) */
	uint64_t ts = 1000;
	for (int i = 0; i < 12000; i++, ts += 10) {
		struct as_event s = { .type = AS_EV_SAMPLE, .tid = 7, .ts = ts, .task = 5,
				      .stack = sid };
		struct as_event p = { .type = AS_EV_POLL_BEGIN, .tid = 8, .ts = ts + 5, .task = 0x9000,
				      .other = 42 };
		CHECK_EQ_U64(flight__push(f, i % 2 ? &s : &p), 0);
	}
	flight__stats(f, &st);
	CHECK(st.evicted_size > 4);
	CHECK(st.oldest_ns > 1000);
	/* kept: 2 thread names (7, 99) and 2 task names; the stack */
	CHECK_EQ_U64(st.state_records, 4);
	CHECK_EQ_U64(st.stacks, 1);
	/* a stack id never given is refused, counted */
	struct as_event bad = { .type = AS_EV_SAMPLE, .tid = 7, .ts = ts, .task = 5, .stack = 9 };
	CHECK_EQ_U64(flight__push(f, &bad), -EINVAL);
	flight__stats(f, &st);
	CHECK_EQ_U64(st.refused, 1);
	snprintf(path, sizeof(path), "/tmp/test_flight_%d.trace", (int)getpid());
	uint64_t from = st.oldest_ns + 1000;
	CHECK_EQ_U64(flight__write(f, &meta, path, from, UINT64_MAX, 0, 0, &wr), 0);
	/* thread 7's name (8 never had one) and the two task names; thread
	 * 99's not (nothing of the range refers to it) */
	CHECK_EQ_U64(wr.state, 3);
	struct got *g = read_back(path);
	CHECK(g);
	if (g) {
		CHECK(g->n > 3);
		CHECK_EQ_U64(g->ev[0].type, AS_EV_THREAD);
		CHECK_EQ_U64(g->ev[0].tid, 7);
		CHECK_STR(g->ev[0].str, "worker-7");
		/* state records at the range's first event, the header's clock too */
		CHECK(wr.first_ns >= from && wr.first_ns < from + 20);
		CHECK_EQ_U64(g->ev[0].ts, wr.first_ns);
		size_t decls = 0, names = 0;
		for (size_t k = 0; k < 3; k++) {
			if (g->ev[k].type != AS_EV_SPAWN)
				continue;
			if (g->ev[k].flags & AS_SPAWN_TASK) {
				decls++;
				CHECK_EQ_U64(g->ev[k].task, 5);
				CHECK_STR(g->ev[k].str, "app::job");
			} else {
				names++;
				CHECK_EQ_U64(g->ev[k].other, 42);
				CHECK_STR(g->ev[k].str, "named-task");
			}
		}
		CHECK_EQ_U64(decls, 1);
		CHECK_EQ_U64(names, 1);
		/* every event of the range, none before it */
		CHECK_EQ_U64(g->n, wr.events);
		for (size_t k = 3; k < g->n; k++)
			if (g->ev[k].ts < from)
				CHECK(g->ev[k].ts >= from);
		/* the samples' stack, decoded */
		CHECK_EQ_U64(g->stack_frames[0], 2);
		CHECK_STR(g->stack_sym[0], "do_nanosleep");
		CHECK_EQ_U64(g->meta.clock_mono_ns, wr.first_ns);
		CHECK_EQ_U64(g->meta.clock_real_ns, meta.clock_real_ns + (wr.first_ns - meta.clock_mono_ns));
	}
	got_free(g);
	unlink(path);
	/* a prune drops thread 99's name (no event refers to it) */
	CHECK_EQ_U64(flight__prune(f), 1);
	flight__stats(f, &st);
	CHECK_EQ_U64(st.state_records, 3);
	/* events of other tasks only: task 5's name and the stack go too */
	for (int i = 0; i < 12000; i++, ts += 10) {
		struct as_event p = { .type = AS_EV_POLL_END, .tid = 7, .ts = ts, .task = 0x9100 };
		flight__push(f, &p);
	}
	flight__prune(f);
	flight__stats(f, &st);
	CHECK_EQ_U64(st.state_records, 1);   /* thread 7's name: its events are there */
	CHECK_EQ_U64(st.stacks, 0);
	/* a pruned stack's id is not given again to another */
	fr[0].addr++;
	CHECK_EQ_U64(flight__stack(f, &stk, &sid), 0);
	CHECK_EQ_U64(sid, 2);
	flight__free(f);
}

/* The flight fields of the header round-trip; NULL trigger: none. */
static void test_header_trigger(void)
{
	struct flight *f = flight__new(1 << 20, 0);
	struct flight_written wr;
	struct as_trace_meta m = meta;
	char err[256];

	if (!f) {
		CHECK(f);
		return;
	}
	struct as_event ev = { .type = AS_EV_PARK, .tid = 9, .ts = 5000 };
	flight__push(f, &ev);
	m.flight_trigger = "blocking";
	m.flight_detail = "task 0x10 off CPU 50.0 ms";
	m.flight_trigger_ns = 4000;
	m.flight_window_ns = 30000000000ull;
	m.flight_after_ns = 2000000000ull;
	m.flight_evicted = 12;
	snprintf(path, sizeof(path), "/tmp/test_flight_%d.trace", (int)getpid());
	CHECK_EQ_U64(flight__write(f, &m, path, 0, UINT64_MAX, 0, 0, &wr), 0);
	struct trace_reader *r = trace_reader__open(path, err, sizeof(err));
	CHECK(r);
	if (r) {
		const struct as_trace_meta *rm = trace_reader__meta(r);
		CHECK_STR(rm->flight_trigger, "blocking");
		CHECK_STR(rm->flight_detail, "task 0x10 off CPU 50.0 ms");
		CHECK_EQ_U64(rm->flight_trigger_ns, 4000);
		CHECK_EQ_U64(rm->flight_window_ns, 30000000000ull);
		CHECK_EQ_U64(rm->flight_after_ns, 2000000000ull);
		CHECK_EQ_U64(rm->flight_evicted, 0);   /* the ring's count, not the caller's */
		trace_reader__free(r);
	}
	CHECK_EQ_U64(flight__write(f, &meta, path, 0, UINT64_MAX, 0, 0, &wr), 0);
	r = trace_reader__open(path, err, sizeof(err));
	CHECK(r);
	if (r) {
		CHECK(trace_reader__meta(r)->flight_trigger == NULL);
		trace_reader__free(r);
	}
	/* no .part left beside it */
	char part[80];
	snprintf(part, sizeof(part), "%s.part", path);
	CHECK(access(part, F_OK) != 0);
	unlink(path);
	/* an unwritable place: -errno, nothing left */
	CHECK(flight__write(f, &meta, "/nonexistent-dir/x.trace", 0, UINT64_MAX, 0, 0, &wr) < 0);
	flight__free(f);
}

static void test_limits(void)
{
	errno = 0;
	CHECK(flight__new(1000, 0) == NULL);
	CHECK_EQ_U64(errno, EINVAL);
	flight__free(NULL);
}

int main(void)
{
	RUN(test_eviction_order_and_size);
	RUN(test_age_and_hold);
	RUN(test_state_kept);
	RUN(test_header_trigger);
	RUN(test_limits);
	TEST_MAIN_END();
}
