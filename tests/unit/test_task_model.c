/* Unit tests for src/analysis/task_model.c: an event stream in, the life
 * cycle the model publishes out, recorded by an observer as one line per
 * callback and compared exactly; counts of each kind exact. Also: several
 * observers of one model (each gets everything, in registration order, with
 * bytes of its own in each task), the sink view, frames; the analyses that
 * observe a shared model name its tasks. No timing, no root. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/blocking.h"
#include "analysis/cpu_samples.h"
#include "analysis/futures.h"
#include "analysis/live.h"
#include "analysis/runq.h"
#include "analysis/uring.h"
#include "analysis/usdt_counts.h"
#include "analysis/task_model.h"
#include "analysis/tasks.h"
#include "harness.h"
#include "output/blocking_report.h"
#include "output/cpu_report.h"
#include "output/folded.h"
#include "output/perfetto.h"
#include "output/uring_report.h"
#include "output/usdt_report.h"
#include "pipeline/pipeline.h"

#define P_USER 0
#define P_WORKER 1
#define P_FUT 2

static struct as_probe probes[] = {
	{ .role = AS_ROLE_POLL, .symbol = "raw::poll", .future = "app::main" },
	{ .role = AS_ROLE_POLL, .symbol = "raw::poll", .future = "rt::worker" },
	{ .role = AS_ROLE_FUTURE, .symbol = "app::step", .future = "app::step" },
};

static struct as_trace_meta meta = {
	.format_version = 7, .runtime = "tokio", .probes = probes, .n_probes = 3,
};

/* The recording observer: lines "what args", and counts per callback. */
struct rec {
	char log[8192];
	size_t len;
	int tag;                  /* written into each task's own bytes */
	size_t off;
	unsigned born, polls, ends, wakes, gones, cuts, workers, parks, unparks, frames;
	unsigned bad_bytes;       /* a task's bytes not what this observer wrote */
};

static void logf_(struct rec *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct rec *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	r->len += (size_t)vsnprintf(r->log + r->len, sizeof(r->log) - r->len, fmt, ap);
	va_end(ap);
}

static const char *state(enum tm_state s)
{
	return s == TM_RUNNING ? "running" : s == TM_RUNNABLE ? "runnable"
	     : s == TM_IDLE ? "idle" : "completed";
}

static void on_born(void *ctx, struct tm_task *t, struct tm_thread *th, const struct as_event *ev)
{
	struct rec *r = ctx;

	*(int *)tm_task__data(t, r->off) = r->tag;
	r->born++;
	logf_(r, "born %llu %s tid %u spawn %s:%u parent %llu\n", (unsigned long long)t->seq,
	      ev->type == AS_EV_WAKE ? "wake" : "poll", th ? th->tid : 0,
	      t->spawn_file ? t->spawn_file : "-", t->spawn_line, (unsigned long long)t->parent);
}

static void on_leave(void *ctx, struct tm_task *t, uint64_t ts, uint64_t d, enum tm_by by)
{
	static const char *const bys[] = { "poll", "wake", "free", "end" };

	logf_(ctx, "leave %llu %s at %llu after %llu by %s\n", (unsigned long long)t->seq,
	      state(t->state), (unsigned long long)ts, (unsigned long long)d, bys[by]);
}

static void on_enter(void *ctx, struct tm_task *t, uint64_t ts)
{
	logf_(ctx, "enter %llu %s at %llu\n", (unsigned long long)t->seq, state(t->state),
	      (unsigned long long)ts);
}

static void on_poll_begin(void *ctx, struct tm_task *t, struct tm_thread *th,
			  const struct as_event *ev)
{
	struct rec *r = ctx;

	if (*(int *)tm_task__data(t, r->off) != r->tag)
		r->bad_bytes++;
	r->polls++;
	logf_(r, "begin %llu %s id %llu tid %u depth %zu at %llu\n", (unsigned long long)t->seq,
	      t->name ? t->name : "-", (unsigned long long)t->tokio_id, th->tid, th->depth,
	      (unsigned long long)ev->ts);
}

static void on_poll_end(void *ctx, struct tm_thread *th, const struct tm_frame *f, uint64_t ts,
			uint64_t d, enum tm_end how)
{
	static const char *const hows[] = { "pending", "ready", "cut", "trace-end" };
	struct rec *r = ctx;

	r->ends++;
	logf_(r, "end %llu %s tid %u at %llu after %llu%s%s\n", (unsigned long long)f->task->seq,
	      hows[how], th->tid, (unsigned long long)ts, (unsigned long long)d,
	      f->nested ? " nested" : "", tm_frame__user(f) ? " user" : "");
}

static void on_worker(void *ctx, struct tm_task *t)
{
	struct rec *r = ctx;

	r->workers++;
	logf_(r, "worker %llu\n", (unsigned long long)t->seq);
}

static void on_wake(void *ctx, struct tm_task *t, const struct as_event *ev,
		    const struct tm_wake *w)
{
	static const char *const kinds[] = { "task", "io", "timer", "runtime", "thread" };
	struct rec *r = ctx;

	r->wakes++;
	logf_(r, "wake %llu by %s %llu%s was %s at %llu\n", (unsigned long long)t->seq,
	      kinds[w->kind], w->waker ? (unsigned long long)w->waker->seq : 0ULL,
	      w->self ? " self" : "", state(w->state), (unsigned long long)ev->ts);
}

static void on_gone(void *ctx, struct tm_task *t, uint64_t ts, bool freed)
{
	struct rec *r = ctx;

	r->gones++;
	logf_(r, "gone %llu at %llu%s\n", (unsigned long long)t->seq, (unsigned long long)ts,
	      freed ? " freed" : "");
}

static void on_park(void *ctx, struct tm_thread *th, uint64_t ts)
{
	struct rec *r = ctx;

	r->parks++;
	logf_(r, "park %u at %llu\n", th->tid, (unsigned long long)ts);
}

static void on_unpark(void *ctx, struct tm_thread *th, uint64_t begin, uint64_t ts, uint64_t d)
{
	struct rec *r = ctx;

	r->unparks++;
	logf_(r, "unpark %u from %llu at %llu after %llu\n", th->tid, (unsigned long long)begin,
	      (unsigned long long)ts, (unsigned long long)d);
}

static void on_cut(void *ctx, struct tm_task *t, uint64_t end_ns)
{
	struct rec *r = ctx;

	r->cuts++;
	logf_(r, "cut %llu %s at %llu\n", (unsigned long long)t->seq, state(t->state),
	      (unsigned long long)end_ns);
}

static void on_frame(void *ctx, struct tm_thread *th, const struct as_event *ev)
{
	struct rec *r = ctx;

	r->frames++;
	logf_(r, "frame %s tid %u depth %u:", ev->type == AS_EV_FUTURE_ENTER ? "enter" : "exit",
	      th->tid, th->fut_depth);
	for (uint32_t i = 0; i < th->fut_depth; i++)
		logf_(r, " %d", th->fut[i] == TM_FUT_UNKNOWN ? -1 : (int)th->fut[i]);
	logf_(r, "\n");
}

static const struct tm_ops rec_ops = {
	.born = on_born, .leave = on_leave, .enter = on_enter, .poll_begin = on_poll_begin,
	.poll_end = on_poll_end, .worker = on_worker, .wake = on_wake, .gone = on_gone,
	.park = on_park, .unpark = on_unpark, .cut = on_cut, .frame = on_frame,
};

static void add(struct task_model *m, uint8_t type, uint32_t tid, uint64_t ts, uint64_t task,
		uint64_t other, uint16_t probe, uint8_t flags, const char *str)
{
	struct as_event ev = {
		.type = type, .flags = flags, .probe = probe, .tid = tid, .ts = ts,
		.task = task, .other = other, .str = str,
	};
	CHECK_EQ_U64(task_model__add(m, &ev), 0);
}

#define A 0x1000
#define B 0x2000
#define W 0x3000

/* A worker loop W polled on thread 1, a task A spawned inside it (spawn
 * site, spawn-time wake), polled nested (W becomes a worker), woken from
 * its own poll (runnable at its end), polled again, Ready, freed; B woken
 * by the I/O driver and by an unknown header (the runtime), freed inside
 * its own poll; a park; the trace ends with W running. */
static void test_life_cycle(void)
{
	struct task_model *m = task_model__new(&meta);
	struct rec r = { .tag = 7 };

	CHECK(m != NULL);
	CHECK_EQ_U64(task_model__observe(m, &rec_ops, &r, sizeof(int), &r.off, 0, NULL), 0);
	add(m, AS_EV_THREAD, 1, 1, 0, 0, 0, 0, "w1");
	add(m, AS_EV_POLL_BEGIN, 1, 10, W, 1, P_WORKER, 0, NULL);
	add(m, AS_EV_SPAWN, 1, 11, 0, (uint64_t)7 << 32 | 3, 0, 0, "src/x.rs");
	add(m, AS_EV_WAKE, 1, 12, A, W, 0, 0, NULL);
	add(m, AS_EV_POLL_BEGIN, 1, 20, A, 2, P_USER, 0, NULL);
	add(m, AS_EV_WAKE, 1, 25, A, A, 0, 0, NULL);
	add(m, AS_EV_POLL_END, 1, 30, A, 0, P_USER, 0, NULL);
	add(m, AS_EV_POLL_BEGIN, 1, 40, A, 2, P_USER, 0, NULL);
	add(m, AS_EV_POLL_END, 1, 45, A, 0, P_USER, AS_POLL_READY, NULL);
	add(m, AS_EV_WAKE, 1, 46, A, 0, 0, 0, NULL);             /* after Ready: ignored */
	add(m, AS_EV_FREE, 1, 47, A, 0, 0, 0, NULL);
	add(m, AS_EV_WAKE, 2, 50, B, 0, 0, 0, NULL);             /* spawn-time, no site */
	add(m, AS_EV_POLL_BEGIN, 2, 60, B, 3, P_USER, 0, NULL);
	add(m, AS_EV_POLL_END, 2, 61, B, 0, P_USER, 0, NULL);
	add(m, AS_EV_WAKE, 2, 62, B, 0, 0, AS_WAKE_IO, NULL);
	add(m, AS_EV_WAKE, 2, 63, B, 0x9999, 0, 0, NULL);        /* already runnable */
	add(m, AS_EV_POLL_BEGIN, 2, 70, B, 3, P_USER, 0, NULL);
	add(m, AS_EV_FREE, 2, 71, B, 0, 0, 0, NULL);             /* inside its own poll */
	add(m, AS_EV_POLL_END, 2, 72, B, 0, P_USER, AS_POLL_READY, NULL);
	add(m, AS_EV_PARK, 2, 80, 0, 0, 0, 0, NULL);
	add(m, AS_EV_UNPARK, 2, 90, 0, 0, 0, 0, NULL);
	CHECK_EQ_U64(task_model__finish(m, 100), 0);
	CHECK_STR(r.log,
		  "born 1 poll tid 1 spawn -:0 parent 0\n"
		  "begin 1 rt::worker id 1 tid 1 depth 1 at 10\n"
		  "born 2 wake tid 1 spawn src/x.rs:7 parent 1\n"
		  "enter 2 runnable at 12\n"
		  "leave 2 runnable at 20 after 8 by poll\n"
		  "worker 1\n"
		  "begin 2 app::main id 2 tid 1 depth 2 at 20\n"
		  "wake 2 by task 2 self was running at 25\n"
		  "end 2 pending tid 1 at 30 after 10 user\n"
		  "enter 2 runnable at 30\n"
		  "leave 2 runnable at 40 after 10 by poll\n"
		  "begin 2 app::main id 2 tid 1 depth 2 at 40\n"
		  "end 2 ready tid 1 at 45 after 5 user\n"
		  "wake 2 by thread 0 was completed at 46\n"
		  "gone 2 at 47 freed\n"
		  "born 3 wake tid 2 spawn -:0 parent 0\n"
		  "enter 3 runnable at 50\n"
		  "leave 3 runnable at 60 after 10 by poll\n"
		  "begin 3 app::main id 3 tid 2 depth 1 at 60\n"
		  "end 3 pending tid 2 at 61 after 1 user\n"
		  "enter 3 idle at 61\n"
		  "wake 3 by io 0 was idle at 62\n"
		  "leave 3 idle at 62 after 1 by wake\n"
		  "enter 3 runnable at 62\n"
		  "wake 3 by runtime 0 was runnable at 63\n"
		  "leave 3 runnable at 70 after 8 by poll\n"
		  "begin 3 app::main id 3 tid 2 depth 1 at 70\n"
		  "end 3 ready tid 2 at 72 after 2 user\n"
		  "gone 3 at 72 freed\n"
		  "park 2 at 80\n"
		  "unpark 2 from 80 at 90 after 10\n"
		  "end 1 trace-end tid 1 at 100 after 90 nested\n"
		  "cut 1 running at 100\n");
	CHECK_EQ_U64(r.born, 3);
	CHECK_EQ_U64(r.polls, 5);
	CHECK_EQ_U64(r.ends, 5);
	CHECK_EQ_U64(r.wakes, 4);
	CHECK_EQ_U64(r.gones, 2);
	CHECK_EQ_U64(r.cuts, 1);
	CHECK_EQ_U64(r.workers, 1);
	CHECK_EQ_U64(r.parks, 1);
	CHECK_EQ_U64(r.unparks, 1);
	CHECK_EQ_U64(r.bad_bytes, 0);
	CHECK_EQ_U64(task_model__anomalies(m), 1); /* the wake after Ready */
	CHECK_EQ_U64(task_model__live(m), 1);
	task_model__free(m);
}

/* Lost ends: a poll whose end is lost is cut by its outer poll's end and by
 * a new poll of the same task; an address polled after Ready without a FREE
 * is a new task; an idle worker of the same root type is a worker too. */
static void test_cuts_reuse_workers(void)
{
	struct task_model *m = task_model__new(&meta);
	struct rec r = { .tag = 1 };

	CHECK_EQ_U64(task_model__observe(m, &rec_ops, &r, sizeof(int), &r.off, 0, NULL), 0);
	add(m, AS_EV_POLL_BEGIN, 2, 5, W + 1, 0, P_WORKER, 0, NULL); /* idle worker */
	add(m, AS_EV_POLL_BEGIN, 1, 10, W, 0, P_WORKER, 0, NULL);
	add(m, AS_EV_POLL_BEGIN, 1, 20, A, 0, P_USER, 0, NULL);
	add(m, AS_EV_POLL_END, 1, 30, W, 0, P_WORKER, 0, NULL);      /* A's end lost */
	add(m, AS_EV_POLL_BEGIN, 1, 40, A, 0, P_USER, 0, NULL);
	add(m, AS_EV_POLL_BEGIN, 3, 41, A, 0, P_USER, 0, NULL);      /* again, elsewhere */
	add(m, AS_EV_POLL_END, 3, 42, A, 0, P_USER, AS_POLL_READY, NULL);
	add(m, AS_EV_POLL_BEGIN, 3, 50, A, 0, P_USER, 0, NULL);      /* reused, no FREE */
	CHECK_EQ_U64(task_model__finish(m, 60), 0);
	CHECK_STR(r.log,
		  "born 1 poll tid 2 spawn -:0 parent 0\n"
		  "begin 1 rt::worker id 0 tid 2 depth 1 at 5\n"
		  "born 2 poll tid 1 spawn -:0 parent 0\n"
		  "begin 2 rt::worker id 0 tid 1 depth 1 at 10\n"
		  "born 3 poll tid 1 spawn -:0 parent 0\n"
		  "worker 2\n"
		  "worker 1\n"
		  "begin 3 app::main id 0 tid 1 depth 2 at 20\n"
		  "end 3 cut tid 1 at 30 after 10 user\n"
		  "enter 3 idle at 30\n"
		  "end 2 pending tid 1 at 30 after 20 nested\n"
		  "enter 2 idle at 30\n"
		  "leave 3 idle at 40 after 10 by poll\n"
		  "begin 3 app::main id 0 tid 1 depth 1 at 40\n"
		  "end 3 cut tid 1 at 41 after 1 user\n"
		  "enter 3 idle at 41\n"
		  "leave 3 idle at 41 after 0 by poll\n"
		  "begin 3 app::main id 0 tid 3 depth 1 at 41\n"
		  "end 3 ready tid 3 at 42 after 1 user\n"
		  "gone 3 at 50\n"
		  "born 4 poll tid 3 spawn -:0 parent 0\n"
		  "begin 4 app::main id 0 tid 3 depth 1 at 50\n"
		  "end 1 trace-end tid 2 at 60 after 55\n"
		  "end 4 trace-end tid 3 at 60 after 10 user\n"
		  "leave 2 idle at 60 after 30 by end\n"
		  "cut 2 idle at 60\n"          /* live tasks in the model's map order */
		  "cut 1 running at 60\n"
		  "cut 4 running at 60\n");
	CHECK_EQ_U64(r.cuts, 3);
	CHECK_EQ_U64(r.workers, 2);
	CHECK_EQ_U64(task_model__anomalies(m), 3); /* two cuts, one reuse */
	task_model__free(m);
}

static void log_cut_free(void *ctx, struct tm_task *t, uint64_t end_ns)
{
	(void)ctx;
	(void)t;
	(void)end_ns;
}

/* Future frames by recorded depth: lost entries leave unknown levels, an
 * EXIT closes its level and what was open inside it; EXITs before the
 * thread's first ENTER are ignored. A frames-only model follows them too. */
static void test_frames(void)
{
	for (int only = 0; only < 2; only++) {
		struct task_model *m = only ? task_model__new_frames(&meta) : task_model__new(&meta);
		struct rec r = { .tag = 1 };
		const struct tm_thread *th;

		CHECK_EQ_U64(task_model__observe(m, &rec_ops, &r, sizeof(int), &r.off, 0, NULL), 0);
		add(m, AS_EV_FUTURE_EXIT, 1, 1, 0, 0, P_FUT, 0, NULL);
		add(m, AS_EV_FUTURE_ENTER, 1, 2, 0, 2, P_FUT, 0, NULL);
		add(m, AS_EV_FUTURE_ENTER, 1, 3, 0, 3, P_FUT, 0, NULL);
		add(m, AS_EV_FUTURE_EXIT, 1, 4, 0, AS_FUT_OTHER(2, 0), P_FUT, 0, NULL);
		add(m, AS_EV_FUTURE_ENTER, 1, 5, 0, 2, 9, 0, NULL); /* no such probe: ignored */
		CHECK_STR(r.log,
			  "frame enter tid 1 depth 3: -1 -1 2\n"
			  "frame enter tid 1 depth 4: -1 -1 2 2\n"
			  "frame exit tid 1 depth 2: -1 -1\n");
		CHECK_EQ_U64(r.frames, 3);
		th = task_model__thread(m, 1);
		CHECK(th && th->fut_depth == 2);
		CHECK(task_model__thread(m, 5) == NULL);
		CHECK_EQ_U64(task_model__finish(m, 10), 0);
		task_model__free(m);
	}
	(void)log_cut_free;
}

/* Two observers of one model: both see everything, in registration order,
 * each with its own bytes in every task; no observer after the first event;
 * a task known from memory (adopt) is born idle and kept by later events. */
static void test_observers_and_adopt(void)
{
	struct task_model *m = task_model__new(&meta);
	struct rec r1 = { .tag = 11 }, r2 = { .tag = 22 };
	struct rec r3 = { .tag = 33 };
	struct tm_task *t = NULL;

	CHECK_EQ_U64(task_model__observe(m, &rec_ops, &r1, sizeof(int), &r1.off, 8, NULL), 0);
	CHECK_EQ_U64(task_model__observe(m, &rec_ops, &r2, sizeof(int), &r2.off, 0, NULL), 0);
	CHECK(r1.off != r2.off);
	CHECK_EQ_U64(task_model__adopt(m, A, 5, &t), 0);
	CHECK(t && t->seq == 1 && t->state == TM_IDLE);
	CHECK_EQ_U64(task_model__observe(m, &rec_ops, &r3, 0, NULL, 0, NULL), -EBUSY);
	add(m, AS_EV_WAKE, 1, 10, A, 0, 0, 0, NULL);
	add(m, AS_EV_POLL_BEGIN, 1, 20, A, 0, P_USER, 0, NULL);
	add(m, AS_EV_POLL_END, 1, 30, A, 0, P_USER, AS_POLL_READY, NULL);
	CHECK_EQ_U64(task_model__finish(m, 40), 0);
	CHECK_EQ_U64(task_model__finish(m, 40), -EINVAL);
	CHECK(!strcmp(r1.log, r2.log));
	CHECK_STR(r1.log,
		  "born 1 poll tid 0 spawn -:0 parent 0\n"
		  "enter 1 idle at 5\n"
		  "wake 1 by thread 0 was idle at 10\n"
		  "leave 1 idle at 10 after 5 by wake\n"
		  "enter 1 runnable at 10\n"
		  "leave 1 runnable at 20 after 10 by poll\n"
		  "begin 1 app::main id 0 tid 1 depth 1 at 20\n"
		  "end 1 ready tid 1 at 30 after 10 user\n"
		  "cut 1 completed at 40\n");
	CHECK_EQ_U64(r1.bad_bytes + r2.bad_bytes, 0);
	task_model__free(m);
}

/* One model shared by the task analysis and a recorder, through sinks and
 * pipeline_run() order: the analysis sees the same tasks as the model. */
static void test_shared_analysis(void)
{
	struct task_model *m = task_model__new(&meta);
	struct analysis *a = analysis__new_on(m, &meta, NULL);
	struct rec r = { .tag = 5 };
	struct as_sink sinks[2];
	struct as_event evs[] = {
		{ .type = AS_EV_WAKE, .tid = 1, .ts = 10, .task = A },
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 20, .task = A, .probe = P_USER },
		{ .type = AS_EV_POLL_END, .tid = 1, .ts = 30, .task = A, .flags = AS_POLL_READY },
		{ .type = AS_EV_FREE, .tid = 1, .ts = 31, .task = A },
	};
	struct as_trace_end end = { .events = 4, .end_ns = 40 };
	const struct summary *s;
	size_t n;

	CHECK(a != NULL);
	CHECK_EQ_U64(task_model__observe(m, &rec_ops, &r, sizeof(int), &r.off, 0, NULL), 0);
	sinks[0] = task_model__sink(m);
	sinks[1] = analysis__sink(a);
	CHECK(sinks[0].ops->free == NULL && sinks[1].ops->free == NULL);
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		for (size_t k = 0; k < 2; k++)
			CHECK_EQ_U64(sinks[k].ops->add(sinks[k].impl, &evs[i], NULL), 0);
	for (size_t k = 0; k < 2; k++)
		CHECK_EQ_U64(sinks[k].ops->finish(sinks[k].impl, &end), 0);
	s = analysis__summary(a);
	CHECK(s != NULL);
	CHECK_EQ_U64(s->tasks, 1);
	CHECK_EQ_U64(s->polls, 1);
	CHECK_EQ_U64(s->events, 4);
	CHECK_EQ_U64(analysis__tasks(a, &n)[0].busy_ns, 10);
	CHECK_EQ_U64(r.born, 1);
	CHECK_EQ_U64(r.gones, 1);
	analysis__free(a);
	task_model__free(m);
}

/* The live view observes a model too: seqs in order of first sight
 * (a task read from memory included), states, wakers, workers. */
static void test_live_view(void)
{
	struct live *l = live__new(&meta);
	struct as_event evs[] = {
		{ .type = AS_EV_THREAD, .tid = 1, .ts = 1, .str = "w1" },
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 10, .task = W, .probe = P_WORKER },
		{ .type = AS_EV_SPAWN, .tid = 1, .ts = 11, .other = (uint64_t)7 << 32, .str = "x.rs" },
		{ .type = AS_EV_WAKE, .tid = 1, .ts = 12, .task = A, .other = W },
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 20, .task = A, .probe = P_USER, .other = 5 },
		{ .type = AS_EV_WAKE, .tid = 1, .ts = 21, .task = A, .other = A },
		{ .type = AS_EV_POLL_END, .tid = 1, .ts = 30, .task = A },
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 40, .task = A, .probe = P_USER },
		{ .type = AS_EV_POLL_END, .tid = 1, .ts = 50, .task = A, .flags = AS_POLL_READY },
	};
	const struct live_task *t;
	const struct live_worker *w;
	size_t n, nw;

	CHECK(l != NULL);
	CHECK_EQ_U64(live__note_stack(l, B, 9, "app::b", "x.rs:3", "app::b", 5), 0);
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		CHECK_EQ_U64(live__add(l, &evs[i]), 0);
	live__tick(l, 100);
	t = live__tasks(l, &n);
	CHECK_EQ_U64(n, 3);
	CHECK_EQ_U64(t[0].seq, 1);            /* B, from memory */
	CHECK_EQ_U64(t[0].state, LIVE_ST_IDLE);
	CHECK_STR(live_task__name(&t[0]), "app::b");
	CHECK_EQ_U64(t[1].seq, 2);            /* W */
	CHECK(t[1].worker);
	CHECK_EQ_U64(t[1].state, LIVE_ST_RUNNING);
	CHECK_EQ_U64(t[2].seq, 3);            /* A */
	CHECK_EQ_U64(t[2].state, LIVE_ST_DONE);
	CHECK_EQ_U64(t[2].polls, 2);
	CHECK_EQ_U64(t[2].busy_ns, 20);
	CHECK_EQ_U64(t[2].tokio_id, 5);
	CHECK_EQ_U64(t[2].wakes, 1);
	CHECK_EQ_U64(t[2].waker_counts[LIVE_WAKER_SELF], 1);
	CHECK_STR(t[2].spawn, "x.rs:7");
	CHECK_EQ_U64(t[2].parent, 2);          /* W: not known as a worker yet then */
	w = live__workers(l, &nw);
	CHECK_EQ_U64(nw, 1);
	CHECK_EQ_U64(w[0].polls, 2);
	CHECK_STR(w[0].name, "w1");
	live__free(l);
}

/* An in-memory source of a fixed event array. */
struct arr_src {
	const struct as_event *evs;
	size_t n, i;
	struct as_trace_end end;
};

static int arr_next(void *impl, struct as_event *ev)
{
	struct arr_src *a = impl;

	if (a->i == a->n)
		return 0;
	*ev = a->evs[a->i++];
	return 1;
}

static const struct as_trace_meta *arr_meta(void *impl)
{
	(void)impl;
	return &meta;
}

static const struct as_trace_end *arr_end(void *impl)
{
	struct arr_src *a = impl;

	return a->i == a->n ? &a->end : NULL;
}

static const char *arr_error(void *impl)
{
	(void)impl;
	return "";
}

static const struct as_source_ops arr_ops = {
	.next = arr_next, .meta = arr_meta, .end = arr_end, .error = arr_error,
};

/* `report` as a choice of sinks on one model, run by pipeline_run(): the
 * task analysis, futures, blocking, USDT counts, the live view and the
 * analyses without tasks; the shared analyses agree exactly with the same
 * analyses each on a model of its own. */
static void test_sinks_share_one_model(void)
{
	static const struct as_event evs[] = {
		{ .type = AS_EV_THREAD, .tid = 1, .ts = 1, .str = "w1" },
		{ .type = AS_EV_SPAWN, .tid = 1, .ts = 2, .other = (uint64_t)3 << 32, .str = "x.rs" },
		{ .type = AS_EV_WAKE, .tid = 1, .ts = 3, .task = A },
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 10, .task = A, .probe = P_USER, .other = 4 },
		{ .type = AS_EV_FUTURE_ENTER, .tid = 1, .ts = 11, .task = A, .probe = P_FUT },
		{ .type = AS_EV_OFFCPU, .tid = 1, .ts = 12, .task = A, .other = 5 },
		{ .type = AS_EV_FUTURE_EXIT, .tid = 1, .ts = 19, .task = A, .probe = P_FUT,
		  .flags = AS_FUTURE_PENDING },
		{ .type = AS_EV_POLL_END, .tid = 1, .ts = 20, .task = A },
		{ .type = AS_EV_WAKE, .tid = 1, .ts = 25, .task = A, .flags = AS_WAKE_TIMER },
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 30, .task = A, .probe = P_USER, .other = 4 },
		{ .type = AS_EV_POLL_END, .tid = 1, .ts = 35, .task = A, .flags = AS_POLL_READY },
		{ .type = AS_EV_FREE, .tid = 1, .ts = 36, .task = A },
	};
	struct arr_src a = { .evs = evs, .n = sizeof(evs) / sizeof(evs[0]),
			     .end = { .events = sizeof(evs) / sizeof(evs[0]), .end_ns = 50 } };
	struct as_source src = { .ops = &arr_ops, .impl = &a, .name = "array" };
	struct task_model *m = task_model__new(&meta);
	struct analysis *an = analysis__new_on(m, &meta, NULL), *an1 = analysis__new(&meta);
	struct futures *fu = futures__new_on(m, &meta, NULL), *fu1 = futures__new(&meta, NULL);
	struct blocking *bl = blocking__new_on(m, &meta);
	struct live *lv = live__new_on(m, &meta);
	struct usdt_counts *uc = usdt_counts__new(&meta);
	struct runq *rq = runq__new();
	struct uring *ur = uring__new(&meta);
	struct cpu_samples *cs = cpu_samples__new(&meta);
	struct as_sink sinks[] = {
		task_model__sink(m), analysis__sink(an), futures__sink(fu), blocking__sink(bl),
		live__sink(lv), usdt_counts__sink(uc), runq__sink(rq), uring__sink(ur),
		cpu_samples__sink(cs),
	};
	struct as_sink alone[] = { analysis__sink(an1), futures__sink(fu1) };
	struct pipeline_result res, res1;
	const struct futures_stack *st, *st1;
	const struct blocking_task *bt;
	size_t n, n1;

	CHECK(m && an && an1 && fu && fu1 && bl && lv && uc && rq && ur && cs);
	CHECK_EQ_U64(pipeline_run(&src, sinks, sizeof(sinks) / sizeof(sinks[0]), NULL, &res), 0);
	a.i = 0;
	CHECK_EQ_U64(pipeline_run(&src, alone, 2, NULL, &res1), 0);
	CHECK_EQ_U64(res.events, 12);
	CHECK(!memcmp(analysis__summary(an), analysis__summary(an1), sizeof(struct summary)));
	CHECK_EQ_U64(analysis__summary(an)->tasks, 1);
	CHECK_EQ_U64(analysis__summary(an)->polls, 2);
	CHECK_EQ_U64(analysis__tasks(an, &n)[0].busy_ns, 15);
	CHECK_EQ_U64(analysis__tasks(an, &n)[0].tokio_id, 4);
	CHECK_STR(analysis__tasks(an, &n)[0].spawn_file, "x.rs");
	CHECK_EQ_U64(analysis__edges(an, &n)[0].from_kind, WAKE_FROM_TIMER);
	st = futures__stacks(fu, FUTURES_ONCPU, &n);
	st1 = futures__stacks(fu1, FUTURES_ONCPU, &n1);
	CHECK_EQ_U64(n, n1);
	for (size_t i = 0; i < n && i < n1; i++) {
		CHECK_EQ_U64(st[i].ns, st1[i].ns);
		CHECK_EQ_U64(st[i].n, st1[i].n);
	}
	CHECK_EQ_U64(futures__summary(fu)->frames, 1);
	CHECK_EQ_U64(futures__summary(fu)->pending, 1);
	bt = blocking__tasks(bl, &n);
	CHECK_EQ_U64(n, 1);
	if (n) {
		CHECK_EQ_U64(bt[0].ns, 5);
		CHECK_STR(bt[0].causes[0].futures, "app::step");
	}
	CHECK_EQ_U64(live__tasks(lv, &n)[0].state, LIVE_ST_DONE);
	for (size_t i = 0; i < sizeof(sinks) / sizeof(sinks[0]); i++)
		CHECK(sinks[i].ops->name && sinks[i].ops->free == NULL);
	analysis__free(an);
	futures__free(fu);
	blocking__free(bl);
	live__free(lv);
	task_model__free(m);
	analysis__free(an1);
	futures__free(fu1);
	usdt_counts__free(uc);
	runq__free(rq);
	uring__free(ur);
	cpu_samples__free(cs);
}

/* The exporters on a shared model write exactly what they write alone. */
static void test_exporters_on_shared_model(void)
{
	static const struct as_event evs[] = {
		{ .type = AS_EV_THREAD, .tid = 1, .ts = 1, .str = "w1" },
		{ .type = AS_EV_THREAD, .tid = 2, .ts = 2, .str = "w2" },
		{ .type = AS_EV_WAKE, .tid = 1, .ts = 3, .task = A },
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 10, .task = A, .probe = P_USER },
		{ .type = AS_EV_FUTURE_ENTER, .tid = 1, .ts = 11, .task = A, .probe = P_FUT },
		{ .type = AS_EV_WAKE, .tid = 1, .ts = 12, .task = B, .other = A },
		{ .type = AS_EV_FUTURE_EXIT, .tid = 1, .ts = 19, .task = A, .probe = P_FUT },
		{ .type = AS_EV_POLL_END, .tid = 1, .ts = 20, .task = A },
		{ .type = AS_EV_PARK, .tid = 2, .ts = 21 },
		{ .type = AS_EV_UNPARK, .tid = 2, .ts = 24 },
		{ .type = AS_EV_POLL_BEGIN, .tid = 2, .ts = 25, .task = B, .probe = P_USER },
		{ .type = AS_EV_POLL_END, .tid = 2, .ts = 35, .task = B, .flags = AS_POLL_READY },
	};
	char *buf[4] = { 0 };
	size_t len[4] = { 0 };

	for (int shared = 0; shared < 2; shared++) {
		struct arr_src a = { .evs = evs, .n = sizeof(evs) / sizeof(evs[0]),
				     .end = { .end_ns = 40 } };
		struct as_source src = { .ops = &arr_ops, .impl = &a, .name = "array" };
		FILE *pf = open_memstream(&buf[shared * 2], &len[shared * 2]);
		FILE *ff = open_memstream(&buf[shared * 2 + 1], &len[shared * 2 + 1]);
		struct task_model *m = shared ? task_model__new(&meta) : NULL;
		struct analysis *an = shared ? analysis__new_on(m, &meta, NULL) : NULL;
		struct perfetto *p = shared ? perfetto__new_on(pf, m, &meta) : perfetto__new(pf, &meta);
		struct folded *f = shared ? folded__new_on(ff, m, &meta, true)
				   : folded__new(ff, &meta, true);
		struct as_sink all[] = {
			task_model__sink(m), analysis__sink(an), perfetto__sink(p), folded__sink(f),
		};
		struct pipeline_result res;

		CHECK(p && f && (!shared || (m && an)));
		CHECK_EQ_U64(pipeline_run(&src, shared ? all : all + 2, shared ? 4 : 2, NULL, &res),
			     0);
		if (shared)
			CHECK_EQ_U64(analysis__summary(an)->tasks, 2);
		perfetto__free(p);
		folded__free(f);
		analysis__free(an);
		task_model__free(m);
		fclose(pf);
		fclose(ff);
	}
	CHECK(len[0] > 100 && len[1] > 10);
	CHECK(len[0] == len[2] && !memcmp(buf[0], buf[2], len[0]));
	CHECK(len[1] == len[3] && !memcmp(buf[1], buf[3], len[1]));
	for (int i = 0; i < 4; i++)
		free(buf[i]);
}

/* The off-CPU, CPU-sample, io_uring and USDT analyses on one model
 * (X__new_on): a row is the model's task polled on the event's thread (its
 * seq, tokio id, name), an address polled again after FREE a new task in
 * all four, a worker task's samples the scheduler's; their reports name a
 * task #ID, else ~SEQ. task_model__polled(): the innermost poll, else the
 * live task at the header, else NULL. */
#define TC 0x3000

/* A worker's loop has no return probe: when the thread that ran it begins
 * another loop of the same type (Tokio's blocking pool starting a worker
 * late, at shutdown), the first returned unseen: it completed, and the
 * second is outermost, a worker too, not nested in it. */
static void test_endless_loops(void)
{
	struct task_model *m = task_model__new(&meta);
	const uint64_t W2 = 0x4000;

	CHECK(m != NULL);
	add(m, AS_EV_POLL_BEGIN, 1, 10, W, 1, P_WORKER, 0, NULL);
	add(m, AS_EV_POLL_BEGIN, 1, 11, A, 3, P_USER, 0, NULL);   /* nested: W is a worker */
	add(m, AS_EV_POLL_END, 1, 12, A, 0, P_USER, AS_POLL_READY, NULL);
	add(m, AS_EV_POLL_BEGIN, 1, 20, W2, 2, P_WORKER, 0, NULL);
	struct tm_task *w = task_model__task(m, W), *w2 = task_model__task(m, W2);
	CHECK(w && w->worker && w->state == TM_COMPLETED);
	CHECK(w2 && w2->worker && w2->state == TM_RUNNING);
	size_t nth = 0;
	struct tm_thread *const *ths = task_model__threads(m, &nth);
	CHECK(nth == 1 && ths[0]->depth == 1 && ths[0]->stack[0].task == w2);
	CHECK_EQ_U64(task_model__finish(m, 30), 0);
	task_model__free(m);
}

/* A name given at spawn (AS_SPAWN_NAME: other = the runtime task id)
 * reaches the task of that id at its first poll, and no other task. */
static void test_spawn_names(void)
{
	struct task_model *m = task_model__new(&meta);

	CHECK(m != NULL);
	add(m, AS_EV_SPAWN, 1, 5, 0, 41, 0, AS_SPAWN_NAME, "job-7");
	add(m, AS_EV_SPAWN, 1, 6, 0, 43, 0, AS_SPAWN_NAME, "");   /* empty: no name */
	add(m, AS_EV_WAKE, 1, 7, A, 0, 0, 0, NULL);
	add(m, AS_EV_WAKE, 1, 8, B, 0, 0, 0, NULL);
	add(m, AS_EV_POLL_BEGIN, 1, 10, B, 42, P_USER, 0, NULL);
	add(m, AS_EV_POLL_END, 1, 11, B, 0, P_USER, 0, NULL);
	add(m, AS_EV_POLL_BEGIN, 1, 12, A, 41, P_USER, 0, NULL);
	add(m, AS_EV_POLL_END, 1, 13, A, 0, P_USER, 0, NULL);
	struct tm_task *a = task_model__task(m, A), *b = task_model__task(m, B);
	CHECK(a && a->label && !strcmp(a->label, "job-7"));
	CHECK(b && !b->label);
	/* the name is not a spawn site */
	CHECK(a && !a->spawn_file);
	CHECK_EQ_U64(task_model__finish(m, 20), 0);
	task_model__free(m);
}

static void test_observers_seq(void)
{
	static struct as_probe uprobes[] = {
		{ .role = AS_ROLE_POLL, .symbol = "raw::poll", .future = "app::io" },
		{ .role = AS_ROLE_USDT, .symbol = "app:hit" },
		{ .role = AS_ROLE_POLL, .symbol = "raw::poll", .future = "rt::worker" },
	};
	static const struct as_trace_meta umeta = {
		.format_version = 7, .runtime = "tokio", .probes = uprobes, .n_probes = 3,
	};
	static const struct as_event evs[] = {
		{ .type = AS_EV_THREAD, .tid = 1, .ts = 1, .str = "w1" },
		/* task 1 at A, no runtime id: one of each */
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 2, .task = A, .probe = 0 },
		{ .type = AS_EV_OFFCPU, .tid = 1, .ts = 3, .task = A, .other = 100 },
		{ .type = AS_EV_SAMPLE, .tid = 1, .ts = 4, .task = A },
		{ .type = AS_EV_URING, .tid = 1, .ts = 5, .task = A, .other = 22 },
		{ .type = AS_EV_URING, .tid = 1, .ts = 6, .task = A, .other = 40,
		  .flags = AS_URING_COMPLETE },
		{ .type = AS_EV_USDT, .tid = 1, .ts = 7, .task = A, .probe = 1, .other = 5 },
		{ .type = AS_EV_POLL_END, .tid = 1, .ts = 8, .task = A, .flags = AS_POLL_READY },
		{ .type = AS_EV_FREE, .tid = 1, .ts = 9, .task = A },
		/* task 2 reuses A, tokio id 9: two of each */
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 10, .task = A, .probe = 0, .other = 9 },
		{ .type = AS_EV_OFFCPU, .tid = 1, .ts = 11, .task = A, .other = 300 },
		{ .type = AS_EV_SAMPLE, .tid = 1, .ts = 12, .task = A },
		{ .type = AS_EV_SAMPLE, .tid = 1, .ts = 13, .task = A },
		{ .type = AS_EV_URING, .tid = 1, .ts = 14, .task = A, .other = 22 },
		{ .type = AS_EV_URING, .tid = 1, .ts = 15, .task = A, .other = 22 },
		{ .type = AS_EV_USDT, .tid = 1, .ts = 16, .task = A, .probe = 1, .other = 6 },
		{ .type = AS_EV_USDT, .tid = 1, .ts = 17, .task = A, .probe = 1, .other = 7 },
		{ .type = AS_EV_POLL_END, .tid = 1, .ts = 18, .task = A },
		/* task 3 at B on thread 2, a worker once task 4 is polled inside
		 * it: its sample is the scheduler's, task 4's its own */
		{ .type = AS_EV_POLL_BEGIN, .tid = 2, .ts = 20, .task = B, .probe = 2 },
		{ .type = AS_EV_SAMPLE, .tid = 2, .ts = 21, .task = B },
		{ .type = AS_EV_POLL_BEGIN, .tid = 2, .ts = 22, .task = TC, .probe = 0 },
		{ .type = AS_EV_SAMPLE, .tid = 2, .ts = 23, .task = TC },
		{ .type = AS_EV_POLL_END, .tid = 2, .ts = 24, .task = TC },
		{ .type = AS_EV_POLL_END, .tid = 2, .ts = 25, .task = B },
	};
	struct arr_src a = { .evs = evs, .n = sizeof(evs) / sizeof(evs[0]),
			     .end = { .events = sizeof(evs) / sizeof(evs[0]), .end_ns = 30 } };
	struct as_source src = { .ops = &arr_ops, .impl = &a, .name = "array" };
	struct task_model *m = task_model__new(&umeta);
	struct blocking *bl = blocking__new_on(m, &umeta);
	struct cpu_samples *cs = cpu_samples__new_on(m, &umeta);
	struct uring *ur = uring__new_on(m, &umeta);
	struct usdt_counts *uc = usdt_counts__new_on(m, &umeta);
	struct as_sink sinks[] = {
		task_model__sink(m), blocking__sink(bl), cpu_samples__sink(cs), uring__sink(ur),
		usdt_counts__sink(uc),
	};
	struct pipeline_result res;
	char *buf = NULL;
	size_t n, len = 0;
	FILE *f;

	CHECK(m && bl && cs && ur && uc);
	if (!m || !bl || !cs || !ur || !uc)
		goto out;
	CHECK(blocking__new_on(NULL, &umeta) == NULL && cpu_samples__new_on(NULL, &umeta) == NULL &&
	      uring__new_on(NULL, &umeta) == NULL && usdt_counts__new_on(NULL, &umeta) == NULL);
	CHECK_EQ_U64(pipeline_run(&src, sinks, sizeof(sinks) / sizeof(sinks[0]), NULL, &res), 0);

	const struct blocking_task *bt = blocking__tasks(bl, &n);
	CHECK_EQ_U64(n, 2);
	if (n == 2) {
		CHECK_EQ_U64(bt[0].seq, 2);
		CHECK_EQ_U64(bt[0].tokio_id, 9);
		CHECK_EQ_U64(bt[0].task, A);
		CHECK_EQ_U64(bt[0].ns, 300);
		CHECK_STR(bt[0].name, "app::io");
		CHECK_EQ_U64(bt[1].seq, 1);
		CHECK_EQ_U64(bt[1].tokio_id, 0);
		CHECK_EQ_U64(bt[1].ns, 100);
	}
	const struct cpu_row *cr = cpu_samples__rows(cs, &n);
	const struct cpu_summary *s = cpu_samples__summary(cs);
	CHECK_EQ_U64(s->samples, 5);
	CHECK_EQ_U64(s->in_tasks, 4);
	CHECK_EQ_U64(s->tasks, 3);
	CHECK_EQ_U64(n, 4);
	if (n == 4) {
		CHECK_EQ_U64(cr[0].seq, 2);
		CHECK_EQ_U64(cr[0].samples, 2);
		CHECK_EQ_U64(cr[0].tokio_id, 9);
		/* ties: tasks by address, the scheduler last */
		CHECK_EQ_U64(cr[1].seq, 1);
		CHECK_EQ_U64(cr[1].task, A);
		CHECK_EQ_U64(cr[2].seq, 4);
		CHECK_EQ_U64(cr[2].task, TC);
		CHECK_EQ_U64(cr[3].kind, CPU_ROW_SCHEDULER);
		CHECK_EQ_U64(cr[3].samples, 1);
	}
	const struct uring_task *ut = uring__tasks(ur, &n);
	CHECK_EQ_U64(n, 2);
	if (n == 2) {
		CHECK_EQ_U64(ut[0].seq, 2);
		CHECK_EQ_U64(ut[0].submitted, 2);
		CHECK_EQ_U64(ut[0].tokio_id, 9);
		CHECK_EQ_U64(ut[1].seq, 1);
		CHECK_EQ_U64(ut[1].submitted, 1);
		CHECK_EQ_U64(ut[1].completed, 1);
		CHECK_STR(ut[1].name, "app::io");
	}
	const struct usdt_task_count *tc = usdt_counts__tasks(uc, &n);
	CHECK_EQ_U64(n, 2);
	if (n == 2) {
		CHECK_EQ_U64(tc[0].seq, 2);
		CHECK_EQ_U64(tc[0].hits, 2);
		CHECK_EQ_U64(tc[0].tokio_id, 9);
		CHECK_EQ_U64(tc[1].seq, 1);
		CHECK_EQ_U64(tc[1].hits, 1);
		CHECK_EQ_U64(tc[1].task, A);
		CHECK_STR(tc[1].name, "app::io");
	}
	/* the reports name them #9 and ~1 */
	f = open_memstream(&buf, &len);
	if (f) {
		CHECK_EQ_U64(blocking_report_text(f, bl, NULL), 0);
		CHECK_EQ_U64(cpu_report_text(f, cs, NULL), 0);
		CHECK_EQ_U64(uring_report_text(f, ur, NULL), 0);
		CHECK_EQ_U64(usdt_report_text(f, uc), 0);
		fclose(f);
		CHECK(buf && strstr(buf, "  #9 app::io  off-CPU"));
		CHECK(buf && strstr(buf, "  ~1 app::io  off-CPU"));
		CHECK(buf && strstr(buf, "%  ~4 app::io\n"));
		CHECK(buf && strstr(buf, "  ~1 app::io\n"));
		CHECK(buf && strstr(buf, "  #9 app::io\n"));
		CHECK(buf && !strstr(buf, "0x"));
		free(buf);
	}

	/* the task polled on a thread: innermost, else by header */
	static const struct as_event nest[] = {
		{ .type = AS_EV_POLL_BEGIN, .tid = 3, .ts = 1, .task = A, .probe = 2 },
		{ .type = AS_EV_POLL_BEGIN, .tid = 3, .ts = 2, .task = B, .probe = 0 },
		{ .type = AS_EV_POLL_END, .tid = 3, .ts = 3, .task = B },
		{ .type = AS_EV_POLL_END, .tid = 3, .ts = 4, .task = A },
	};
	struct task_model *m2 = task_model__new(&umeta);

	CHECK(m2 != NULL);
	if (m2) {
		CHECK(task_model__polled(m2, 3, A) == NULL);
		CHECK_EQ_U64(task_model__add(m2, &nest[0]), 0);
		CHECK_EQ_U64(task_model__polled(m2, 3, 0)->header, A);
		CHECK_EQ_U64(task_model__add(m2, &nest[1]), 0);
		CHECK_EQ_U64(task_model__polled(m2, 3, A)->header, B);
		CHECK_EQ_U64(task_model__add(m2, &nest[2]), 0);
		CHECK_EQ_U64(task_model__add(m2, &nest[3]), 0);
		CHECK(task_model__polled(m2, 3, 0) == NULL);
		CHECK_EQ_U64(task_model__polled(m2, 3, B)->seq, 2);   /* idle, by header */
		CHECK(task_model__polled(m2, 9, TC) == NULL);
		task_model__free(m2);
	}
out:
	blocking__free(bl);
	cpu_samples__free(cs);
	uring__free(ur);
	usdt_counts__free(uc);
	task_model__free(m);
}

/* The runtime profile's names: worker loops (launch's, and the loop
 * block_in_place starts: 1.24.2 and 1.53.1 name its closure differently),
 * blocking-pool tasks, ordinary ones; a runtime without them (smol). */
static void test_name_kinds(void)
{
	struct as_trace_meta tokio = { .runtime = "tokio" }, smol = { .runtime = "smol" };
	struct task_model *m = task_model__new(&tokio), *s = task_model__new(&smol);
	const char *bt = "tokio::runtime::blocking::task::BlockingTask<";
	char name[512];

	CHECK(m && s);
	if (!m || !s)
		goto out;
	snprintf(name, sizeof(name), "%s%s", bt,
		 "tokio::runtime::scheduler::multi_thread::worker::{impl#0}::launch::{closure#0}>");
	CHECK_EQ_U64(task_model__name_kind(m, name), TM_NAME_LOOP);
	CHECK_EQ_U64(task_model__name_kind(s, name), 0);
	snprintf(name, sizeof(name), "%s%s", bt, "tokio::runtime::scheduler::multi_thread::worker::"
		 "block_in_place::{closure#0}::{closure#0}<app::main::{closure#0}, ()>>");
	CHECK_EQ_U64(task_model__name_kind(m, name), TM_NAME_LOOP | TM_NAME_HANDOFF);
	snprintf(name, sizeof(name), "%s%s", bt, "tokio::runtime::scheduler::multi_thread::worker::"
		 "maybe_move_runtime::{closure#0}::{closure#0}>");
	CHECK_EQ_U64(task_model__name_kind(m, name), TM_NAME_LOOP | TM_NAME_HANDOFF);
	snprintf(name, sizeof(name), "%s%s", bt, "app::main::{async_block#0}::{closure#1}>");
	CHECK_EQ_U64(task_model__name_kind(m, name), TM_NAME_POOL);
	CHECK_EQ_U64(task_model__name_kind(s, name), 0);
	CHECK_EQ_U64(task_model__name_kind(m, "app::main::{async_block#0}"), 0);
	CHECK_EQ_U64(task_model__name_kind(m, NULL), 0);
out:
	task_model__free(m);
	task_model__free(s);
}

int main(void)
{
	RUN(test_name_kinds);
	RUN(test_exporters_on_shared_model);
	RUN(test_sinks_share_one_model);
	RUN(test_live_view);
	RUN(test_life_cycle);
	RUN(test_cuts_reuse_workers);
	RUN(test_frames);
	RUN(test_observers_and_adopt);
	RUN(test_shared_analysis);
	RUN(test_observers_seq);
	RUN(test_spawn_names);
	RUN(test_endless_loops);
	TEST_MAIN_END();
}
