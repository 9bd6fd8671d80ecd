/* Unit tests of the recorder's pure modules (src/record/decode.c,
 * fixup.c, stats.c): raw BPF records decoded in one switch (each kind,
 * sizes and tags checked, records not asked for refused, a poll that began
 * before attaching dropped), the runtime fix-ups (a nested wake given
 * once, a free held until the poll on another thread ends, held frees
 * released at the end) and the counters (task identities, unwinding
 * medians, everything missed). No root, no BPF. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "harness.h"
#include "probe/plan.h"
#include "record/decode.h"
#include "record/fixup.h"
#include "record/stats.h"

/* A plan of three probes: poll, future, usdt. */
static struct as_probe probes[3] = {
	{ .role = AS_ROLE_POLL }, { .role = AS_ROLE_FUTURE }, { .role = AS_ROLE_USDT },
};
static struct usdt_arg uargs[3];
static struct probe_plan plan = { .probes = probes, .usdt_arg = uargs, .n = 3 };

static struct raw_event raw(uint8_t type, uint8_t flags, uint16_t probe, uint64_t task, uint64_t arg)
{
	return (struct raw_event){ .h = { .type = type, .flags = flags, .probe = probe, .tid = 7,
					  .ts = 1000 }, .task = task, .arg = arg };
}

static void test_decode_runtime_events(void)
{
	struct rec_decoder d = { .plan = &plan };
	struct rec_decoded out;
	struct raw_event e = raw(RAW_POLL_BEGIN, 0, 0, 0x1000, 3);

	CHECK(rec_decode(&d, &e, sizeof(e), &out) == 1);
	CHECK_EQ_U64(out.ev.type, AS_EV_POLL_BEGIN);
	CHECK_EQ_U64(out.ev.task, 0x1000);
	CHECK_EQ_U64(out.ev.other, 3);
	CHECK_EQ_U64(out.ev.tid, 7);
	CHECK_EQ_U64(out.ev.ts, 1000);
	CHECK(out.path == REC_PATH_PROBE);

	e = raw(RAW_POLL_END, RAW_F_READY, 0, 0x1000, 0);
	CHECK(rec_decode(&d, &e, sizeof(e), &out) == 1);
	CHECK_EQ_U64(out.ev.flags, AS_POLL_READY);
	e = raw(RAW_POLL_END, RAW_F_UNMATCHED, 0, 0x1000, 0);
	CHECK(rec_decode(&d, &e, sizeof(e), &out) == 0);   /* began before attaching */
	e = raw(RAW_WAKE, RAW_F_WAKE_IO | RAW_F_WAKE_TIMER, 0, 0x1000, 0x2000);
	CHECK(rec_decode(&d, &e, sizeof(e), &out) == 1);
	CHECK_EQ_U64(out.ev.flags, AS_WAKE_IO | AS_WAKE_TIMER);
	CHECK_EQ_U64(out.ev.other, 0x2000);

	/* untrusted: short records, unknown tags, probes out of the plan */
	CHECK(rec_decode(&d, &e, sizeof(e) - 1, &out) == -EBADMSG);
	CHECK(rec_decode(&d, &e, 4, &out) == -EBADMSG);
	e = raw(RAW_POLL_BEGIN, 0, 3, 0x1000, 0);
	CHECK(rec_decode(&d, &e, sizeof(e), &out) == -EBADMSG);
	e = raw(200, 0, 0, 0, 0);
	CHECK(rec_decode(&d, &e, sizeof(e), &out) == -EBADMSG);
	/* a future record needs a future probe, a usdt record a usdt probe */
	e = raw(RAW_FUT_ENTER, 0, 0, 0x1000, 1);
	CHECK(rec_decode(&d, &e, sizeof(e), &out) == -EBADMSG);
	e = raw(RAW_FUT_EXIT, RAW_F_PENDING, 1, 0x1000, 1);
	CHECK(rec_decode(&d, &e, sizeof(e), &out) == 1);
	CHECK_EQ_U64(out.ev.type, AS_EV_FUTURE_EXIT);
	CHECK_EQ_U64(out.ev.flags, AS_FUTURE_PENDING);
	CHECK_EQ_U64(out.ev.probe, 1);
	e = raw(RAW_USDT, 0, 1, 0, 5);
	CHECK(rec_decode(&d, &e, sizeof(e), &out) == -EBADMSG);
	e = raw(RAW_USDT, 0, 2, 0, 5);
	CHECK(rec_decode(&d, &e, sizeof(e), &out) == 1);
	CHECK_EQ_U64(out.ev.type, AS_EV_USDT);
}

static void test_decode_thread_spawn(void)
{
	struct rec_decoder d = { .plan = &plan };
	struct rec_decoded out;
	struct raw_thread t = { .h = { .type = RAW_THREAD, .probe = 9, .tid = 8 } };
	struct raw_spawn s = { .h = { .type = RAW_SPAWN, .tid = 8 }, .line = 12, .col = 5,
			       .file_len = 9 };

	memcpy(t.comm, "tokio-runtime-worker", AS_COMM_LEN);   /* cut, unterminated */
	CHECK(rec_decode(&d, &t, sizeof(t), &out) == 1);
	CHECK_EQ_U64(out.ev.type, AS_EV_THREAD);
	CHECK_EQ_U64(out.ev.probe, 0);   /* a thread record names no probe */
	CHECK_EQ_U64(strlen(out.ev.str), AS_COMM_LEN);
	memcpy(s.file, "src/a.rs!", 9);
	CHECK(rec_decode(&d, &s, sizeof(s), &out) == 1);
	CHECK_STR(out.ev.str, "src/a.rs!");
	CHECK_EQ_U64(out.ev.other, (uint64_t)12 << 32 | 5);
	s.file_len = AS_LOC_FILE_MAX + 1;
	CHECK(rec_decode(&d, &s, sizeof(s), &out) == -EBADMSG);
}

static void test_decode_kinds_asked_for(void)
{
	struct rec_decoder d = { .plan = &plan };
	struct rec_decoded out;
	static struct raw_offcpu o;
	struct raw_event q = raw(RAW_RUNQ, 0, 0, 0, 500);
	struct raw_event u = raw(RAW_URING, RAW_F_URING_DONE | RAW_F_URING_ERR, 0, 0x10, 22);

	o = (struct raw_offcpu){ .h = { .type = RAW_OFFCPU, .flags = RAW_F_PREEMPTED, .tid = 3,
					.ts = 50 }, .task = 0x1000, .dur_ns = 777, .kbytes = 16 };
	/* not asked for: malformed */
	CHECK(rec_decode(&d, &o, sizeof(o), &out) == -EBADMSG);
	CHECK(rec_decode(&d, &q, sizeof(q), &out) == -EBADMSG);
	CHECK(rec_decode(&d, &u, sizeof(u), &out) == -EBADMSG);
	d.offcpu = d.uring = true;
	CHECK(rec_decode(&d, &o, sizeof(o), &out) == 1);
	CHECK(out.path == REC_PATH_STACKED && out.stack == &o && !out.regs);
	CHECK_EQ_U64(out.ev.type, AS_EV_OFFCPU);
	CHECK_EQ_U64(out.ev.other, 777);
	CHECK_EQ_U64(out.ev.flags, AS_OFFCPU_PREEMPTED);
	CHECK_EQ_U64(out.ev.task, 0x1000);
	o.kbytes = sizeof(o.kstack) + 8;
	CHECK(rec_decode(&d, &o, sizeof(o), &out) == -EBADMSG);
	/* --offcpu implies run-queue waits */
	CHECK(rec_decode(&d, &q, sizeof(q), &out) == 1);
	CHECK(out.path == REC_PATH_DIRECT);
	CHECK_EQ_U64(out.ev.type, AS_EV_RUNQ);
	CHECK_EQ_U64(out.ev.other, 500);
	CHECK(rec_decode(&d, &u, sizeof(u), &out) == 1);
	CHECK_EQ_U64(out.ev.flags, AS_URING_COMPLETE | AS_URING_ERROR);
	/* a sample with registers needs --sample and --dwarf */
	o = (struct raw_offcpu){ .h = { .type = RAW_SAMPLE_DWARF } };
	static struct raw_sample_dwarf sd;
	sd.s = o;
	CHECK(rec_decode(&d, &sd, sizeof(sd), &out) == -EBADMSG);
	d.sample = d.dwarf = true;
	CHECK(rec_decode(&d, &sd, sizeof(sd), &out) == 1);
	CHECK(out.regs == &sd && out.stack == &sd.s);
	CHECK_EQ_U64(out.ev.type, AS_EV_SAMPLE);
	CHECK(rec_decode(&d, &sd, sizeof(sd.s), &out) == -EBADMSG);
}

/* Profile mode: a sample or off-CPU interval carries a runtime task id
 * (RAW_F_TASK_ID), and only then; an unreadable id is said. */
static void test_decode_profile(void)
{
	struct rec_decoder d = { .plan = &plan, .sample = true, .offcpu = true };
	struct rec_decoded out;
	static struct raw_offcpu o;

	o = (struct raw_offcpu){ .h = { .type = RAW_SAMPLE, .flags = RAW_F_TASK_ID, .tid = 3 },
				 .task = 42 };
	/* a task id outside profile mode: malformed */
	CHECK(rec_decode(&d, &o, sizeof(o), &out) == -EBADMSG);
	d.profile = true;
	CHECK(rec_decode(&d, &o, sizeof(o), &out) == 1);
	CHECK_EQ_U64(out.ev.type, AS_EV_SAMPLE);
	CHECK_EQ_U64(out.ev.task, 42);
	CHECK(!out.no_id);
	/* a header (no flag) in profile mode: malformed */
	o.h.flags = 0;
	CHECK(rec_decode(&d, &o, sizeof(o), &out) == -EBADMSG);
	o = (struct raw_offcpu){ .h = { .type = RAW_OFFCPU, .tid = 3,
					.flags = RAW_F_TASK_ID | RAW_F_NO_ID | RAW_F_PREEMPTED },
				 .dur_ns = 900 };
	CHECK(rec_decode(&d, &o, sizeof(o), &out) == 1);
	CHECK_EQ_U64(out.ev.type, AS_EV_OFFCPU);
	CHECK_EQ_U64(out.ev.task, 0);
	CHECK_EQ_U64(out.ev.flags, AS_OFFCPU_PREEMPTED);
	CHECK(out.no_id);
}

/* What the fix-ups emit. */
static struct as_event got[16];
static size_t n_got;

static void collect(void *ctx, const struct as_event *ev)
{
	(void)ctx;
	if (n_got < 16)
		got[n_got++] = *ev;
}

static struct as_event ev(uint8_t type, uint32_t tid, uint64_t ts, uint64_t task, uint16_t probe)
{
	return (struct as_event){ .type = type, .tid = tid, .ts = ts, .task = task, .probe = probe };
}

static void test_fixup_nested_wake(void)
{
	uint64_t missed = 0;
	struct rec_fixup f = { .emit = collect, .missed = &missed };
	struct as_event e;

	n_got = 0;
	e = ev(AS_EV_WAKE, 1, 100, 0xa, 1);
	rec_fixup__push(&f, &e);
	e = ev(AS_EV_WAKE, 1, 105, 0xa, 2);   /* the same wake at the inner probe */
	rec_fixup__push(&f, &e);
	e = ev(AS_EV_WAKE, 1, 110, 0xa, 1);   /* the outer probe again: a wake of its own */
	rec_fixup__push(&f, &e);
	e = ev(AS_EV_WAKE, 2, 111, 0xa, 1);   /* another thread */
	rec_fixup__push(&f, &e);
	e = ev(AS_EV_POLL_BEGIN, 2, 120, 0xb, 0);   /* something else between */
	rec_fixup__push(&f, &e);
	e = ev(AS_EV_WAKE, 2, 130, 0xa, 2);
	rec_fixup__push(&f, &e);
	CHECK_EQ_U64(n_got, 5);
	CHECK_EQ_U64(f.nested_wakes, 1);
	CHECK_EQ_U64(got[1].ts, 110);
	CHECK_EQ_U64(missed, 0);
	rec_fixup__clear(&f);

	/* with the plan's table: only a scheduler point (probe 2) repeats a
	 * waker call (probe 1), however late (a preempted thread) */
	static const uint8_t flags[] = { 0, 0, PLAN_F_NESTED };
	struct rec_fixup g = { .emit = collect, .missed = &missed, .probe_flags = flags, .n_probes = 3 };
	n_got = 0;
	e = ev(AS_EV_WAKE, 1, 100, 0xa, 1);
	rec_fixup__push(&g, &e);
	e = ev(AS_EV_WAKE, 1, 100 + 4000000, 0xa, 2);   /* 4 ms later: still the same wake */
	rec_fixup__push(&g, &e);
	e = ev(AS_EV_WAKE, 1, 5000000, 0xa, 0);   /* another waker point: a wake of its own */
	rec_fixup__push(&g, &e);
	e = ev(AS_EV_WAKE, 1, 5000010, 0xa, 1);   /* waker after waker: both count */
	rec_fixup__push(&g, &e);
	CHECK_EQ_U64(n_got, 3);
	CHECK_EQ_U64(g.nested_wakes, 1);
	rec_fixup__clear(&g);
}

static void test_fixup_held_free(void)
{
	uint64_t missed = 0;
	struct rec_fixup f = { .emit = collect, .missed = &missed };
	struct as_event e;

	n_got = 0;
	e = ev(AS_EV_POLL_BEGIN, 1, 100, 0xa, 0);
	rec_fixup__push(&f, &e);
	e = ev(AS_EV_FREE, 2, 150, 0xa, 0);   /* freed on thread 2 while polled on 1 */
	rec_fixup__push(&f, &e);
	CHECK_EQ_U64(n_got, 1);
	e = ev(AS_EV_POLL_END, 1, 200, 0xa, 0);
	rec_fixup__push(&f, &e);
	CHECK_EQ_U64(n_got, 3);
	CHECK_EQ_U64(got[1].type, AS_EV_POLL_END);
	CHECK_EQ_U64(got[2].type, AS_EV_FREE);
	CHECK_EQ_U64(got[2].ts, 200);   /* at the poll's end */
	CHECK_EQ_U64(got[2].tid, 2);

	/* a free on the polling thread itself goes as it comes */
	n_got = 0;
	e = ev(AS_EV_POLL_BEGIN, 1, 300, 0xb, 0);
	rec_fixup__push(&f, &e);
	e = ev(AS_EV_FREE, 1, 310, 0xb, 0);
	rec_fixup__push(&f, &e);
	CHECK_EQ_U64(n_got, 2);

	/* held, then another event about the task releases it as it came;
	 * a free whose poll never ends comes out at the flush */
	n_got = 0;
	e = ev(AS_EV_POLL_BEGIN, 1, 400, 0xc, 0);
	rec_fixup__push(&f, &e);
	e = ev(AS_EV_FREE, 2, 410, 0xc, 0);
	rec_fixup__push(&f, &e);
	e = ev(AS_EV_WAKE, 3, 420, 0xc, 0);
	rec_fixup__push(&f, &e);
	CHECK_EQ_U64(n_got, 3);
	CHECK_EQ_U64(got[1].type, AS_EV_FREE);
	CHECK_EQ_U64(got[1].ts, 410);
	e = ev(AS_EV_POLL_BEGIN, 1, 500, 0xd, 0);
	rec_fixup__push(&f, &e);
	e = ev(AS_EV_FREE, 2, 510, 0xd, 0);
	rec_fixup__push(&f, &e);
	CHECK_EQ_U64(n_got, 4);
	rec_fixup__flush(&f);
	CHECK_EQ_U64(n_got, 5);
	CHECK_EQ_U64(got[4].type, AS_EV_FREE);
	CHECK_EQ_U64(got[4].task, 0xd);
	CHECK_EQ_U64(f.n_held, 0);
	rec_fixup__clear(&f);
}

static void test_stats(void)
{
	struct rec_stats st = { 0 };
	struct as_event e;
	struct raw_counters c = { .depth_overflow = 1, .no_thread_slot = 2, .offcpu_dropped = 3 };
	struct recorder_result res = { 0 };
	struct as_trace_end end = { .events = 9, .lost = 4 };

	e = ev(AS_EV_POLL_BEGIN, 1, 1, 0xa, 0);
	rec_stats__note_task(&st, &e);
	rec_stats__note_task(&st, &e);
	e = ev(AS_EV_FREE, 1, 2, 0xa, 0);
	rec_stats__note_task(&st, &e);
	e = ev(AS_EV_WAKE, 1, 3, 0xa, 0);    /* the address reused: a new identity */
	rec_stats__note_task(&st, &e);
	CHECK_EQ_U64(st.tasks, 2);
	/* as the report counts: a free, a poll's end or a sample of a task
	 * never polled nor woken is no task */
	e = ev(AS_EV_FREE, 1, 4, 0xb, 0);
	rec_stats__note_task(&st, &e);
	e = ev(AS_EV_POLL_END, 1, 4, 0xc, 0);
	rec_stats__note_task(&st, &e);
	e = ev(AS_EV_SAMPLE, 1, 4, 0xd, 0);
	rec_stats__note_task(&st, &e);
	CHECK_EQ_U64(st.tasks, 2);
	e = ev(AS_EV_POLL_BEGIN, 1, 5, 0xc, 0);
	rec_stats__note_task(&st, &e);
	CHECK_EQ_U64(st.tasks, 3);
	e = ev(AS_EV_URING, 1, 3, 0, 0);
	rec_stats__count(&st, &e);
	e.flags = AS_URING_COMPLETE;
	rec_stats__count(&st, &e);
	rec_stats__count(&st, &e);
	e = ev(AS_EV_FUTURE_ENTER, 1, 3, 0, 0);
	rec_stats__count(&st, &e);
	CHECK_EQ_U64(st.uring_sub, 1);
	CHECK_EQ_U64(st.uring_done, 2);
	CHECK_EQ_U64(st.future_polls, 1);
	/* depths 2, 5, 9 kept (fp 2, 2, 9): medians 5 and 2 */
	unwind_stats__add(&st.uw_samples, 2, 2, false);
	unwind_stats__add(&st.uw_samples, 5, 2, false);
	unwind_stats__add(&st.uw_samples, 9, 9, true);
	struct recorder_unwind u = unwind_stats__result(&st.uw_samples);
	CHECK_EQ_U64(u.stacks, 3);
	CHECK_EQ_U64(u.frames, 16);
	CHECK_EQ_U64(u.fp_frames, 13);
	CHECK_EQ_U64(u.fp_kept, 1);
	CHECK_EQ_U64(u.median, 5);
	CHECK_EQ_U64(u.fp_median, 2);
	st.missed = 10;
	st.write_errors = 1;
	CHECK_EQ_U64(rec_stats__missed(&st, &c), 17);
	end.missed = 17;
	rec_stats__result(&st, &end, &res);
	CHECK_EQ_U64(res.events, 9);
	CHECK_EQ_U64(res.tasks, 3);
	CHECK_EQ_U64(res.lost, 4);
	CHECK_EQ_U64(res.missed, 17);
	CHECK_EQ_U64(res.unwind_samples.median, 5);
	rec_stats__clear(&st);
}

int main(void)
{
	RUN(test_decode_runtime_events);
	RUN(test_decode_thread_spawn);
	RUN(test_decode_kinds_asked_for);
	RUN(test_decode_profile);
	RUN(test_fixup_nested_wake);
	RUN(test_fixup_held_free);
	RUN(test_stats);
	TEST_MAIN_END();
}
