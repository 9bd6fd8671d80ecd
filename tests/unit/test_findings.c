/* Findings (src/analysis/findings.c) on synthetic event streams whose truth
 * is known: a task blocked in std::thread::sleep, one never woken, one
 * dropped while never woken, one waking itself, one starved, one running
 * long on the CPU, lost events; their kinds, severities, order, tasks,
 * file:line and wording; the same trace without off-CPU data; tasks of one
 * name merged; top's live view. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/blocking.h"
#include "analysis/findings.h"
#include "analysis/live.h"
#include "analysis/task_model.h"
#include "analysis/tasks.h"
#include "harness.h"

#define MS 1000000ULL
#define US 1000ULL
#define BASE 1000000000ULL

static struct as_probe probes[] = {
	{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "app::blocker::{async_fn_env#0}" },
	{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "app::stuck_forever::{async_fn_env#0}" },
	{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "app::main::{async_block#0}::{async_block_env#2}" },
	{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "app::waiter" },
	{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "app::crunch" },
	{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "app::dropped_idle" },
	/* 6: a spawn_blocking closure; 7: the worker loop block_in_place
	 * starts (tokio's profile: pool_tasks, handoff_loops) */
	{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "tokio::runtime::blocking::task::BlockingTask<app::load::{closure_env#0}>" },
	{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "tokio::runtime::blocking::task::BlockingTask<tokio::runtime::scheduler::"
		    "multi_thread::worker::block_in_place::{closure_env#0}::{closure_env#0}<"
		    "app::blocker::{closure_env#0}, ()>>" },
};

static struct as_trace_meta meta = {
	.format_version = 11, .pid = 42, .target = "/srv/app", .build_id = "",
	.runtime = "tokio", .cmdline = "app", .clock_mono_ns = BASE, .probes = probes,
	.n_probes = 8,
};

/* the blocking call's stack: innermost first, kernel then user frames */
static const struct as_frame sleep_frames[] = {
	{ 0xffffffff81000100ull, "__schedule" },
	{ 0xffffffff81000200ull, "schedule" },
	{ 0xffffffff81a00010ull, "do_nanosleep" },
	{ 0xffffffff81a00200ull, "hrtimer_nanosleep" },
	{ 0x7f0000001000ull, "clock_nanosleep" },
	{ 0x555500001000ull, "std::thread::sleep" },
	{ 0x555500002000ull, "app::blocker::{{closure}}", "src/app.rs", 15 },
	{ 0x555500003000ull, "tokio::runtime::task::raw::poll" },
};
static const struct as_stack sleep_stack = { .id = 1, .n_kernel = 4, .n_user = 4,
					     .frames = sleep_frames };
/* the stack analyse() gives the off-CPU events */
static const struct as_stack *offcpu_stack = &sleep_stack;

#define T_BLOCK 0x1000
#define T_STUCK 0x2000
#define T_SELF 0x3000
#define T_WAIT 0x4000
#define T_CRUNCH 0x5000
#define T_DROP 0x6000

/* One worker thread (tid 11): a current_thread runtime. */
static const struct as_event stream[] = {
	{ .type = AS_EV_THREAD, .tid = 11, .ts = BASE, .str = "tokio-runtime-w" },
	/* spawns */
	{ .type = AS_EV_WAKE, .tid = 11, .ts = BASE + 1 * US, .task = T_BLOCK },
	{ .type = AS_EV_WAKE, .tid = 11, .ts = BASE + 2 * US, .task = T_STUCK },
	{ .type = AS_EV_WAKE, .tid = 11, .ts = BASE + 4 * US, .task = T_DROP },
	/* the stuck task: one Pending poll, never woken */
	{ .type = AS_EV_POLL_BEGIN, .tid = 11, .ts = BASE + 10 * US, .task = T_STUCK, .probe = 1,
	  .other = 2 },
	{ .type = AS_EV_POLL_END, .tid = 11, .ts = BASE + 20 * US, .task = T_STUCK },
	/* dropped while idle: one Pending poll, freed 2 s later, never woken */
	{ .type = AS_EV_POLL_BEGIN, .tid = 11, .ts = BASE + 30 * US, .task = T_DROP, .probe = 5,
	  .other = 6 },
	{ .type = AS_EV_POLL_END, .tid = 11, .ts = BASE + 40 * US, .task = T_DROP },
	/* the blocker: 200 ms in one poll, 199 ms of it asleep */
	{ .type = AS_EV_POLL_BEGIN, .tid = 11, .ts = BASE + 1 * MS, .task = T_BLOCK, .probe = 0,
	  .other = 1 },
	/* the waiter is woken (by the timer) while the blocker holds the thread */
	{ .type = AS_EV_WAKE, .tid = 11, .ts = BASE + 1 * MS + 10 * US, .task = T_WAIT,
	  .flags = AS_WAKE_TIMER },
	{ .type = AS_EV_OFFCPU, .tid = 11, .ts = BASE + 2 * MS, .task = T_BLOCK,
	  .other = 199 * MS, .stack = 1 },
	{ .type = AS_EV_POLL_END, .tid = 11, .ts = BASE + 201 * MS, .task = T_BLOCK,
	  .flags = AS_POLL_READY },
	{ .type = AS_EV_FREE, .tid = 11, .ts = BASE + 201 * MS + 1 * US, .task = T_BLOCK },
	/* the waiter, polled 200 ms after its wake */
	{ .type = AS_EV_POLL_BEGIN, .tid = 11, .ts = BASE + 201 * MS + 10 * US, .task = T_WAIT,
	  .probe = 3, .other = 4 },
	{ .type = AS_EV_POLL_END, .tid = 11, .ts = BASE + 201 * MS + 20 * US, .task = T_WAIT,
	  .flags = AS_POLL_READY },
	/* the cruncher: 50 ms on the CPU in one poll, no off-CPU interval */
	{ .type = AS_EV_WAKE, .tid = 11, .ts = BASE + 202 * MS, .task = T_CRUNCH },
	{ .type = AS_EV_POLL_BEGIN, .tid = 11, .ts = BASE + 202 * MS + 5 * US, .task = T_CRUNCH,
	  .probe = 4, .other = 5 },
	{ .type = AS_EV_POLL_END, .tid = 11, .ts = BASE + 252 * MS, .task = T_CRUNCH,
	  .flags = AS_POLL_READY },
	/* the self-waker: 12 polls, each waking itself (yield_now), then Ready */
	{ .type = AS_EV_WAKE, .tid = 11, .ts = BASE + 300 * MS - 5 * US, .task = T_SELF },
#define SELF_POLL(i) \
	{ .type = AS_EV_POLL_BEGIN, .tid = 11, .ts = BASE + (300 + (i)) * MS, .task = T_SELF, \
	  .probe = 2, .other = 3 }, \
	{ .type = AS_EV_WAKE, .tid = 11, .ts = BASE + (300 + (i)) * MS + 5 * US, .task = T_SELF, \
	  .other = T_SELF }, \
	{ .type = AS_EV_POLL_END, .tid = 11, .ts = BASE + (300 + (i)) * MS + 10 * US, .task = T_SELF }
	SELF_POLL(0), SELF_POLL(1), SELF_POLL(2), SELF_POLL(3), SELF_POLL(4), SELF_POLL(5),
	SELF_POLL(6), SELF_POLL(7), SELF_POLL(8), SELF_POLL(9), SELF_POLL(10), SELF_POLL(11),
	{ .type = AS_EV_POLL_BEGIN, .tid = 11, .ts = BASE + 320 * MS, .task = T_SELF, .probe = 2,
	  .other = 3 },
	{ .type = AS_EV_POLL_END, .tid = 11, .ts = BASE + 320 * MS + 10 * US, .task = T_SELF,
	  .flags = AS_POLL_READY },
	{ .type = AS_EV_PARK, .tid = 11, .ts = BASE + 321 * MS },
	{ .type = AS_EV_FREE, .tid = 11, .ts = BASE + 2000 * MS, .task = T_DROP },
};

struct run {
	struct task_model *m;
	struct analysis *a;
	struct blocking *b;
	struct findings *f;
};

static void run_free(struct run *r)
{
	findings__free(r->f);
	blocking__free(r->b);
	analysis__free(r->a);
	task_model__free(r->m);
}

/* The stream (less the events skipped) through the model, the task and the
 * off-CPU analyses (offcpu false: without the off-CPU analysis). */
static void analyse(struct run *r, const struct as_event *evs, size_t n, bool offcpu,
		    uint64_t lost, uint64_t end_ns, bool wide)
{
	struct as_trace_end end = { .events = n, .lost = lost, .end_ns = end_ns };

	memset(r, 0, sizeof(*r));
	r->m = task_model__new(&meta);
	r->a = r->m ? analysis__new_on(r->m, &meta, NULL) : NULL;
	r->b = r->m && offcpu ? blocking__new_on(r->m, &meta) : NULL;
	CHECK(r->a && (!offcpu || r->b));
	if (!r->a || (offcpu && !r->b))
		return;
	for (size_t i = 0; i < n; i++) {
		const struct as_stack *st = evs[i].type == AS_EV_OFFCPU ? offcpu_stack : NULL;

		CHECK_EQ_U64(task_model__add(r->m, &evs[i]), 0);
		CHECK_EQ_U64(analysis__add(r->a, &evs[i]), 0);
		if (r->b)
			CHECK_EQ_U64(blocking__add(r->b, &evs[i], st), 0);
	}
	CHECK_EQ_U64(task_model__finish(r->m, end_ns), 0);
	CHECK_EQ_U64(analysis__finish(r->a, &end), 0);
	r->f = findings__new(&(struct findings_input){ .analysis = r->a, .blocking = r->b,
						     .meta = &meta, .end = &end, .wide = wide });
	CHECK(r->f != NULL);
}

static const struct finding *find(const struct findings *f, const char *kind, size_t *at)
{
	size_t n;
	const struct finding *l = findings__list(f, &n);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(l[i].kind, kind)) {
			if (at)
				*at = i;
			return &l[i];
		}
	return NULL;
}

static size_t count_kind(const struct findings *f, const char *kind)
{
	size_t n, k = 0;
	const struct finding *l = findings__list(f, &n);

	for (size_t i = 0; i < n; i++)
		k += !strcmp(l[i].kind, kind);
	return k;
}

#define N_STREAM (sizeof(stream) / sizeof(stream[0]))

/* Each kind of trouble named once, on the task it is about. */
static void test_kinds(void)
{
	struct run r;
	size_t n, at;
	const struct finding *x;

	analyse(&r, stream, N_STREAM, true, 0, BASE + 3000 * MS, false);
	if (!r.f)
		goto out;
	const struct finding *l = findings__list(r.f, &n);

	if (getenv("FINDINGS_DUMP"))
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, "%s %s: %s\n    %s\n    -> %s\n", finding_severity__str(l[i].severity),
				l[i].kind, l[i].title, l[i].detail, l[i].advice);
	/* blocking: the call, the kernel function, the program's line */
	x = find(r.f, "blocking", &at);
	CHECK(x != NULL);
	if (x) {
		CHECK_EQ_U64(x->severity, FINDING_ERROR);
		CHECK(x->has_task);
		CHECK_EQ_U64(x->task_id, 1);
		CHECK_STR(x->task_name, "app::blocker::{async_fn_env#0}");
		CHECK_STR(x->file, "src/app.rs");
		CHECK_EQ_U64(x->line, 15);
		CHECK_EQ_U64(x->weight_ns, 199 * MS);
		CHECK_STR(x->title, "#1 app::blocker blocked its worker 199.0 ms in std::thread::sleep "
			  "(do_nanosleep)");
		CHECK(strstr(x->detail, "app::blocker::{closure} at src/app.rs:15 called "
				     "std::thread::sleep") != NULL);
		CHECK(strstr(x->advice, "tokio::time::sleep") != NULL);
		CHECK_EQ_U64(at, 0);   /* the worst first */
	}
	/* its long poll is the blocking finding's, not another one */
	CHECK(!find(r.f, "long_poll", NULL) || strcmp(find(r.f, "long_poll", NULL)->task_name,
						     probes[0].future));
	/* the cruncher: a long poll on the CPU */
	x = find(r.f, "long_poll", NULL);
	CHECK(x != NULL);
	if (x) {
		CHECK_STR(x->task_name, "app::crunch");
		CHECK_EQ_U64(x->severity, FINDING_ERROR);   /* 50 ms >= 10 x 1 ms */
		CHECK(strstr(x->title, "held its worker 50.0 ms in one poll, on CPU") != NULL);
		CHECK(x->file == NULL);
	}
	/* never woken: the stuck task (to the end) and the dropped one */
	CHECK_EQ_U64(count_kind(r.f, "never_woken"), 2);
	x = find(r.f, "never_woken", NULL);
	if (x) {
		CHECK_STR(x->task_name, "app::stuck_forever::{async_fn_env#0}");
		CHECK_EQ_U64(x->severity, FINDING_WARNING);
		CHECK(strstr(x->title, "#2 app::stuck_forever was never woken") != NULL);
		CHECK(strstr(x->title, "until the end") != NULL);
		CHECK(strstr(x->detail, "never made progress") != NULL);
	}
	bool dropped = false;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(l[i].kind, "never_woken") && !strcmp(l[i].task_name, "app::dropped_idle")) {
			dropped = true;
			CHECK(strstr(l[i].title, "until dropped") != NULL);
			CHECK_EQ_U64(l[i].task_id, 6);
		}
	CHECK(dropped);
	/* starved: the waiter, 200 ms behind the blocker; one worker */
	x = find(r.f, "starved", NULL);
	CHECK(x != NULL);
	if (x) {
		CHECK_STR(x->task_name, "app::waiter");
		CHECK_EQ_U64(x->severity, FINDING_ERROR);   /* >= 10 x 10 ms */
		CHECK(strstr(x->title, "#4 app::waiter waited up to 200.0 ms") != NULL);
		CHECK(strstr(x->detail, "One worker thread") != NULL);
	}
	/* self wakes: 12 of 12 */
	x = find(r.f, "self_wake", NULL);
	CHECK(x != NULL);
	if (x) {
		CHECK_STR(x->task_name, "app::main::{async_block#0}::{async_block_env#2}");
		CHECK_STR(x->title, "#3 app::main::{async_block#0}::{async_block#2} woke itself 12 "
			  "times (100% of its wakes)");
	}
	/* no loss, no info about off-CPU data: it was there */
	CHECK(!find(r.f, "lost_events", NULL));
	CHECK(!find(r.f, "no_offcpu", NULL));
	/* most severe first; the blocking call before the task it starved */
	for (size_t i = 1; i < n; i++)
		CHECK(l[i - 1].severity <= l[i].severity);
	size_t starved_at = 0;
	CHECK(find(r.f, "starved", &starved_at) && starved_at > 0);
	CHECK_EQ_U64(findings__count(r.f, FINDING_ERROR) + findings__count(r.f, FINDING_WARNING) +
		     findings__count(r.f, FINDING_INFO), n);
	CHECK_EQ_U64(findings__omitted(r.f), 0);
out:
	run_free(&r);
}

/* Without off-CPU data the blocker is a long poll of unknown cause, and the
 * findings say how to learn it; lost events come first. */
static void test_no_offcpu_lost(void)
{
	struct run r;
	const struct finding *x;
	size_t at;

	analyse(&r, stream, N_STREAM, false, 500, BASE + 3000 * MS, false);
	if (!r.f)
		goto out;
	CHECK(!find(r.f, "blocking", NULL));
	CHECK_EQ_U64(count_kind(r.f, "long_poll"), 2);
	x = find(r.f, "long_poll", NULL);
	if (x) {
		CHECK_STR(x->task_name, "app::blocker::{async_fn_env#0}");
		CHECK(strstr(x->title, "cause unknown (no off-CPU data)") != NULL);
		CHECK(strstr(x->advice, "without --no-offcpu") != NULL);
	}
	x = find(r.f, "no_offcpu", NULL);
	CHECK(x && x->severity == FINDING_INFO && !x->has_task);
	x = find(r.f, "lost_events", &at);
	CHECK(x != NULL);
	if (x) {
		CHECK_EQ_U64(at, 0);
		CHECK_EQ_U64(x->severity, FINDING_ERROR);   /* 500 of 35 events */
		CHECK(!x->has_task);
		CHECK(strstr(x->title, "500 events lost") != NULL);
		CHECK(strstr(x->advice, "--buffer-size") != NULL);
	}
out:
	run_free(&r);
}

/* Off-CPU intervals recorded (the trace says so, format 11) but none came:
 * the cruncher's long poll ran on the CPU; unknown when the trace does not
 * say and nothing came. */
static void test_recorded(void)
{
	struct as_event evs[] = {
		{ .type = AS_EV_THREAD, .tid = 11, .ts = BASE, .str = "w" },
		{ .type = AS_EV_POLL_BEGIN, .tid = 11, .ts = BASE + 1 * MS, .task = T_CRUNCH,
		  .probe = 4, .other = 5 },
		{ .type = AS_EV_POLL_END, .tid = 11, .ts = BASE + 51 * MS, .task = T_CRUNCH,
		  .flags = AS_POLL_READY },
	};
	struct run r;
	const struct finding *x;

	meta.recorded = AS_REC_KNOWN | AS_REC_OFFCPU;
	analyse(&r, evs, 3, true, 0, BASE + 100 * MS, false);
	x = r.f ? find(r.f, "long_poll", NULL) : NULL;
	CHECK(x && strstr(x->title, "50.0 ms in one poll, on CPU"));
	CHECK(r.f && !find(r.f, "no_offcpu", NULL));
	run_free(&r);
	meta.recorded = AS_REC_KNOWN;   /* recorded without them */
	analyse(&r, evs, 3, true, 0, BASE + 100 * MS, false);
	x = r.f ? find(r.f, "long_poll", NULL) : NULL;
	CHECK(x && strstr(x->title, "cause unknown (no off-CPU data)"));
	CHECK(r.f && find(r.f, "no_offcpu", NULL));
	run_free(&r);
	meta.recorded = 0;              /* unknown, and none came */
	analyse(&r, evs, 3, true, 0, BASE + 100 * MS, false);
	x = r.f ? find(r.f, "long_poll", NULL) : NULL;
	CHECK(x && strstr(x->title, "cause unknown (no off-CPU data)"));
	run_free(&r);
}

/* Two tasks of one name, both never woken: one finding for both, its task
 * the one idle longest; --wide keeps the full name in the title. */
/* A long poll off CPU mostly because the thread was preempted (another
 * thread had the CPU): said as such, with advice about the machine, not
 * "on CPU" and "split the work"; a little preemption leaves it on CPU. */
static void test_long_poll_preempted(void)
{
	struct as_event evs[] = {
		{ .type = AS_EV_THREAD, .tid = 11, .ts = BASE, .str = "w" },
		{ .type = AS_EV_POLL_BEGIN, .tid = 11, .ts = BASE + 1 * MS, .task = T_CRUNCH,
		  .probe = 4, .other = 5 },
		{ .type = AS_EV_OFFCPU, .tid = 11, .ts = BASE + 5 * MS, .task = T_CRUNCH,
		  .other = 40 * MS, .flags = AS_OFFCPU_PREEMPTED, .stack = 1 },
		{ .type = AS_EV_POLL_END, .tid = 11, .ts = BASE + 51 * MS, .task = T_CRUNCH,
		  .flags = AS_POLL_READY },
	};
	struct run r;
	const struct finding *x;

	meta.recorded = AS_REC_KNOWN | AS_REC_OFFCPU;
	analyse(&r, evs, 4, true, 0, BASE + 100 * MS, false);
	x = r.f ? find(r.f, "long_poll", NULL) : NULL;
	CHECK(x != NULL);
	if (x) {
		CHECK(strstr(x->title, "held its worker 50.0 ms in one poll, mostly preempted") != NULL);
		CHECK(strstr(x->detail, "preempted for 40.0 ms of its polls") != NULL);
		CHECK(strstr(x->advice, "fewer workers than CPUs") != NULL);
	}
	CHECK(r.f && !find(r.f, "blocking", NULL));   /* preemption is no blocking call */
	run_free(&r);
	evs[2].other = 10 * MS;   /* 10 of 50 ms: its own work, mostly */
	analyse(&r, evs, 4, true, 0, BASE + 100 * MS, false);
	x = r.f ? find(r.f, "long_poll", NULL) : NULL;
	CHECK(x && strstr(x->title, "50.0 ms in one poll, on CPU"));
	CHECK(x && strstr(x->detail, "10.0 ms of its polls preempted"));
	run_free(&r);
	meta.recorded = AS_REC_KNOWN;
}

static void test_merge_wide(void)
{
	struct as_event evs[] = {
		{ .type = AS_EV_THREAD, .tid = 11, .ts = BASE, .str = "w" },
		{ .type = AS_EV_POLL_BEGIN, .tid = 11, .ts = BASE + 1 * MS, .task = 0xa, .probe = 1,
		  .other = 7 },
		{ .type = AS_EV_POLL_END, .tid = 11, .ts = BASE + 2 * MS, .task = 0xa },
		{ .type = AS_EV_POLL_BEGIN, .tid = 11, .ts = BASE + 500 * MS, .task = 0xb, .probe = 1,
		  .other = 8 },
		{ .type = AS_EV_POLL_END, .tid = 11, .ts = BASE + 501 * MS, .task = 0xb },
	};
	struct run r;

	analyse(&r, evs, sizeof(evs) / sizeof(evs[0]), false, 0, BASE + 4000 * MS, true);
	if (!r.f)
		goto out;
	CHECK_EQ_U64(count_kind(r.f, "never_woken"), 1);
	const struct finding *x = find(r.f, "never_woken", NULL);
	if (x) {
		CHECK_EQ_U64(x->tasks, 2);
		CHECK_EQ_U64(x->task_id, 7);
		CHECK(strstr(x->title, "2 tasks app::stuck_forever were never woken") != NULL);
		CHECK(strstr(x->title, "up to 4.00 s") != NULL);
		CHECK(strstr(x->detail, "#7 the worst") != NULL);
	}
out:
	run_free(&r);
}

/* top's live view: the long poll, the starved task, the self-waker. */
static void test_live(void)
{
	struct live *l = live__new(&meta);
	struct findings *f = NULL;

	CHECK(l != NULL);
	if (!l)
		return;
	for (size_t i = 0; i < N_STREAM; i++)
		if (stream[i].type != AS_EV_OFFCPU)
			CHECK_EQ_U64(live__add(l, &stream[i]), 0);
	live__tick(l, BASE + 1000 * MS);
	f = findings__new_live(l, &(struct findings_live_opts){ .runtime = "tokio" });
	CHECK(f != NULL);
	if (!f)
		goto out;
	const struct finding *x = find(f, "long_poll", NULL);
	CHECK(x != NULL);
	if (x) {
		CHECK_STR(x->task_name, "app::blocker::{async_fn_env#0}");
		CHECK(strstr(x->title, "held its worker 200.0 ms in one poll") != NULL);
		CHECK(strstr(x->advice, "asyncscope record -p PID") != NULL);
	}
	x = find(f, "starved", NULL);
	CHECK(x && !strcmp(x->task_name, "app::waiter"));
	x = find(f, "self_wake", NULL);
	CHECK(x && x->task_id == 3);
	/* idle 1 s only: not yet never woken in a live view (10 s) */
	CHECK(!find(f, "never_woken", NULL));
out:
	findings__free(f);
	live__free(l);
}

/* A spawn_blocking closure blocking on a pool thread is no finding, and
 * that thread no worker; a task blocking inside block_in_place (it spawned
 * the worker loop that took its worker's queue) is an info, not an error,
 * and that loop, though nothing was polled in it, is a worker task. */
static void test_pool_and_block_in_place(void)
{
#define T_POOL 0x7000
#define T_LOOP 0x8000
	const struct as_event evs[] = {
		{ .type = AS_EV_THREAD, .tid = 11, .ts = BASE, .str = "tokio-runtime-w" },
		{ .type = AS_EV_WAKE, .tid = 11, .ts = BASE + 1 * US, .task = T_POOL },
		{ .type = AS_EV_POLL_BEGIN, .tid = 13, .ts = BASE + 1 * MS, .task = T_POOL, .probe = 6,
		  .other = 7 },
		{ .type = AS_EV_OFFCPU, .tid = 13, .ts = BASE + 2 * MS, .task = T_POOL,
		  .other = 100 * MS, .stack = 1 },
		{ .type = AS_EV_POLL_END, .tid = 13, .ts = BASE + 150 * MS, .task = T_POOL,
		  .flags = AS_POLL_READY },
		{ .type = AS_EV_WAKE, .tid = 11, .ts = BASE + 199 * MS, .task = T_BLOCK },
		{ .type = AS_EV_POLL_BEGIN, .tid = 11, .ts = BASE + 200 * MS, .task = T_BLOCK,
		  .probe = 0, .other = 1 },
		/* block_in_place: the loop taking the worker's queue spawned */
		{ .type = AS_EV_SPAWN, .tid = 11, .ts = BASE + 201 * MS,
		  .str = "tokio-1.24.2/src/runtime/scheduler/multi_thread/worker.rs",
		  .other = (uint64_t)343 << 32 | 13 },
		{ .type = AS_EV_WAKE, .tid = 11, .ts = BASE + 201 * MS + 1 * US, .task = T_LOOP },
		{ .type = AS_EV_POLL_BEGIN, .tid = 12, .ts = BASE + 202 * MS, .task = T_LOOP,
		  .probe = 7, .other = 8 },
		{ .type = AS_EV_OFFCPU, .tid = 11, .ts = BASE + 205 * MS, .task = T_BLOCK,
		  .other = 190 * MS, .stack = 1 },
		{ .type = AS_EV_POLL_END, .tid = 11, .ts = BASE + 400 * MS, .task = T_BLOCK,
		  .flags = AS_POLL_READY },
		{ .type = AS_EV_POLL_END, .tid = 12, .ts = BASE + 500 * MS, .task = T_LOOP,
		  .flags = AS_POLL_READY },
	};
	struct run r;
	const struct finding *x;
	size_t n;

	meta.recorded = AS_REC_KNOWN | AS_REC_OFFCPU;
	analyse(&r, evs, sizeof(evs) / sizeof(evs[0]), true, 0, BASE + 600 * MS, false);
	CHECK(r.f != NULL);
	if (!r.f)
		goto out;
	CHECK(!find(r.f, "blocking", NULL));
	CHECK(!find(r.f, "long_poll", NULL));
	x = find(r.f, "block_in_place", NULL);
	CHECK(x != NULL);
	if (x) {
		CHECK_EQ_U64(x->severity, FINDING_INFO);
		CHECK_STR(x->task_name, "app::blocker::{async_fn_env#0}");
		CHECK(strstr(x->title, "blocked 190.0 ms in std::thread::sleep (do_nanosleep) inside "
			     "block_in_place") != NULL);
		CHECK(strstr(x->detail, "block_in_place (1 time)") != NULL);
	}
	const struct task_stats *t = analysis__tasks(r.a, &n);
	size_t workers = 0, pool = 0;
	for (size_t i = 0; i < n; i++) {
		if (t[i].header == T_LOOP)
			CHECK_EQ_U64(t[i].kind, TASK_KIND_WORKER);
		if (t[i].header == T_POOL)
			pool += t[i].pool && t[i].kind == TASK_KIND_TASK;
		if (t[i].header == T_BLOCK)
			CHECK_EQ_U64(t[i].handoffs, 1);
	}
	CHECK_EQ_U64(pool, 1);
	const struct worker_stats *w = analysis__workers(r.a, &n);
	for (size_t i = 0; i < n; i++) {
		CHECK(w[i].tid != 13);   /* the pool's thread */
		workers += w[i].tid == 11 || w[i].tid == 12;
	}
	CHECK_EQ_U64(workers, 2);
out:
	run_free(&r);
	meta.recorded = AS_REC_KNOWN;
#undef T_POOL
#undef T_LOOP
}

/* One poll of T_BLOCK on a worker, 100 ms off CPU inside it at stack st,
 * off-CPU recording said, through analyse(). */
static void one_blocked_poll(struct run *r, const struct as_stack *st)
{
	const struct as_event evs[] = {
		{ .type = AS_EV_THREAD, .tid = 11, .ts = BASE, .str = "w" },
		{ .type = AS_EV_POLL_BEGIN, .tid = 11, .ts = BASE + 1 * MS, .task = T_BLOCK,
		  .probe = 0, .other = 1 },
		{ .type = AS_EV_OFFCPU, .tid = 11, .ts = BASE + 2 * MS, .task = T_BLOCK,
		  .other = 100 * MS, .stack = st->id },
		{ .type = AS_EV_POLL_END, .tid = 11, .ts = BASE + 110 * MS, .task = T_BLOCK,
		  .flags = AS_POLL_READY },
	};

	meta.recorded = AS_REC_KNOWN | AS_REC_OFFCPU;
	offcpu_stack = st;
	analyse(r, evs, sizeof(evs) / sizeof(evs[0]), true, 0, BASE + 200 * MS, false);
	offcpu_stack = &sleep_stack;
	meta.recorded = AS_REC_KNOWN;
}

/* A user stack of one frame, libc's open (the frame-pointer walk stopped
 * there), is cut short: the call is named, the wording says the program's
 * frame is unknown and --dwarf finds it; one that reaches the thread's
 * start without the program's code is a library's blocking. */
static void test_cut_stack(void)
{
	static const struct as_frame cut_frames[] = {
		{ 0xffffffff81000100ull, "__schedule" },
		{ 0xffffffff81000200ull, "schedule" },
		{ 0xffffffff81b00010ull, "wait_for_partner" },
		{ 0xffffffff81b00200ull, "fifo_open" },
		{ 0x7f0000002000ull, "open" },
	};
	static const struct as_frame lib_frames[] = {
		{ 0xffffffff81000100ull, "__schedule" },
		{ 0xffffffff81000200ull, "schedule" },
		{ 0xffffffff81b00010ull, "wait_for_partner" },
		{ 0xffffffff81b00200ull, "fifo_open" },
		{ 0x7f0000002000ull, "open" },
		{ 0x555500005000ull, "std::fs::File::open" },
		{ 0x7f0000003000ull, "start_thread" },
		{ 0x7f0000004000ull, "clone3" },
	};
	const struct as_stack cut = { .id = 2, .n_kernel = 4, .n_user = 1, .frames = cut_frames };
	const struct as_stack lib = { .id = 3, .n_kernel = 4, .n_user = 4, .frames = lib_frames };
	struct run r;
	const struct finding *x;

	one_blocked_poll(&r, &cut);
	x = r.f ? find(r.f, "blocking", NULL) : NULL;
	CHECK(x != NULL);
	if (x) {
		CHECK(strstr(x->title, "blocked its worker 100.0 ms in open (wait_for_partner)") != NULL);
		CHECK(strstr(x->detail, "The user stack ends at open, short of the thread's start") != NULL);
		CHECK(strstr(x->advice, "record --dwarf to name the program's line") != NULL);
	}
	run_free(&r);
	one_blocked_poll(&r, &lib);
	x = r.f ? find(r.f, "blocking", NULL) : NULL;
	CHECK(x && strstr(x->detail, "(a library blocked)") && !strstr(x->advice, "--dwarf"));
	run_free(&r);
}

/* Known by a frame alone (profile mode names few tasks): a stack through a
 * blocking-pool task's poll makes no finding, one through block_in_place
 * (1.24 inlines it: exit_runtime is the frame left) an info. */
static void test_frames_by_design(void)
{
	static const struct as_frame pool_frames[] = {
		{ 0xffffffff81000100ull, "__schedule" },
		{ 0xffffffff81000200ull, "schedule" },
		{ 0xffffffff81a00010ull, "do_nanosleep" },
		{ 0xffffffff81a00200ull, "hrtimer_nanosleep" },
		{ 0x7f0000001000ull, "clock_nanosleep" },
		{ 0x555500002000ull, "app::main::{{closure}}::{{closure}}", "src/app.rs", 24 },
		{ 0x555500003000ull, "<tokio::runtime::blocking::task::BlockingTask<T> as "
				     "core::future::future::Future>::poll" },
		{ 0x555500004000ull, "tokio::runtime::task::core::Core<T,S>::poll" },
	};
	static const struct as_frame bip_frames[] = {
		{ 0xffffffff81000100ull, "__schedule" },
		{ 0xffffffff81000200ull, "schedule" },
		{ 0xffffffff81a00010ull, "do_nanosleep" },
		{ 0xffffffff81a00200ull, "hrtimer_nanosleep" },
		{ 0x7f0000001000ull, "clock_nanosleep" },
		{ 0x555500002000ull, "app::main::{{closure}}::{{closure}}::{{closure}}", "src/app.rs", 29 },
		{ 0x555500005000ull, "tokio::runtime::context::exit_runtime" },
	};
	const struct as_stack pool = { .id = 4, .n_kernel = 4, .n_user = 4, .frames = pool_frames };
	const struct as_stack bip = { .id = 5, .n_kernel = 4, .n_user = 3, .frames = bip_frames };
	struct run r;
	const struct finding *x;

	one_blocked_poll(&r, &pool);
	CHECK(r.f && !find(r.f, "blocking", NULL) && !find(r.f, "block_in_place", NULL));
	run_free(&r);
	one_blocked_poll(&r, &bip);
	x = r.f ? find(r.f, "block_in_place", NULL) : NULL;
	CHECK(r.f && !find(r.f, "blocking", NULL));
	CHECK(x && x->severity == FINDING_INFO && x->line == 29);
	CHECK(x && strstr(x->detail, "called tokio::task::block_in_place, which first handed"));
	run_free(&r);
}

/* What the recorder read of the tasks idle at the end (AS_SPAWN_WAKERS):
 * none of the stuck task's wakers left makes it a lost_waker error; one
 * held, a never_woken info (a wait); a note that a later poll outdates, or
 * one of a task not idle, says nothing. */
static void test_wakers_held(void)
{
	struct as_event evs[N_STREAM + 4];
	const struct as_event note = { .type = AS_EV_SPAWN, .flags = AS_SPAWN_WAKERS, .tid = 42,
				       .ts = BASE + 2999 * MS, .task = T_STUCK };
	struct run r;
	const struct finding *x;
	size_t n;

	/* no waker left */
	memcpy(evs, stream, sizeof(stream));
	evs[N_STREAM] = note;
	/* the self-waker is gone: a note of it is no one's */
	evs[N_STREAM + 1] = (struct as_event){ .type = AS_EV_SPAWN, .flags = AS_SPAWN_WAKERS,
					       .tid = 42, .ts = BASE + 2999 * MS, .task = T_SELF };
	analyse(&r, evs, N_STREAM + 2, true, 0, BASE + 3000 * MS, false);
	if (r.f) {
		x = find(r.f, "lost_waker", NULL);
		CHECK(x != NULL);
		if (x) {
			CHECK_EQ_U64(x->severity, FINDING_ERROR);
			CHECK_STR(x->task_name, "app::stuck_forever::{async_fn_env#0}");
			CHECK_STR(x->title, "#2 app::stuck_forever can never be woken again: no waker "
				  "of it was left (idle 3.00 s until the end)");
			CHECK(strstr(x->detail, "counted only its runtime's task list and its "
					     "JoinHandle") != NULL);
		}
		/* the dropped task still is one, as before (no note of it) */
		CHECK_EQ_U64(count_kind(r.f, "never_woken"), 1);
		CHECK_STR(find(r.f, "never_woken", NULL)->task_name, "app::dropped_idle");
		const struct task_stats *t = analysis__task(r.a, 2);
		CHECK(t && t->wakers_known && t->wakers == 0);
		CHECK(analysis__task(r.a, 3) && !analysis__task(r.a, 3)->wakers_known);
	}
	run_free(&r);

	/* a waker held: a wait, an info */
	evs[N_STREAM] = note;
	evs[N_STREAM].other = 2;
	analyse(&r, evs, N_STREAM + 1, true, 0, BASE + 3000 * MS, false);
	if (r.f) {
		CHECK(!find(r.f, "lost_waker", NULL));
		CHECK_EQ_U64(count_kind(r.f, "never_woken"), 2);
		const struct finding *l = findings__list(r.f, &n);
		bool seen = false;

		for (size_t i = 0; i < n; i++)
			if (!strcmp(l[i].kind, "never_woken") &&
			    !strcmp(l[i].task_name, "app::stuck_forever::{async_fn_env#0}")) {
				seen = true;
				CHECK_EQ_U64(l[i].severity, FINDING_INFO);
				CHECK(strstr(l[i].title, "until the end; a waker of it was held (it "
						       "waits)") != NULL);
				CHECK(strstr(l[i].advice, "nothing to fix") != NULL);
			}
		CHECK(seen);
	}
	run_free(&r);

	/* woken and polled again after the note: idle anew, not known */
	evs[N_STREAM] = note;
	evs[N_STREAM].ts = BASE + 1400 * MS;
	evs[N_STREAM + 1] = (struct as_event){ .type = AS_EV_WAKE, .tid = 11,
					       .ts = BASE + 1500 * MS, .task = T_STUCK };
	evs[N_STREAM + 2] = (struct as_event){ .type = AS_EV_POLL_BEGIN, .tid = 11,
					       .ts = BASE + 1500 * MS + 10 * US, .task = T_STUCK,
					       .probe = 1, .other = 2 };
	evs[N_STREAM + 3] = (struct as_event){ .type = AS_EV_POLL_END, .tid = 11,
					       .ts = BASE + 1500 * MS + 20 * US, .task = T_STUCK };
	/* in time order: the note and the re-poll before the last FREE */
	struct as_event last = evs[N_STREAM - 1];
	memmove(&evs[N_STREAM - 1], &evs[N_STREAM], 4 * sizeof(evs[0]));
	evs[N_STREAM + 3] = last;
	analyse(&r, evs, N_STREAM + 4, true, 0, BASE + 3000 * MS, false);
	if (r.f) {
		CHECK(!find(r.f, "lost_waker", NULL));
		const struct finding *l = findings__list(r.f, &n);

		for (size_t i = 0; i < n; i++)
			if (!strcmp(l[i].kind, "never_woken"))
				CHECK_EQ_U64(l[i].severity, FINDING_WARNING);
		CHECK(analysis__task(r.a, 2) && !analysis__task(r.a, 2)->wakers_known);
	}
	run_free(&r);
}

/* Tasks found in memory at the end, of which no event came (record -p's
 * AS_SPAWN_BEFORE notes): idle since the recording began (meta's clock),
 * named and numbered by the note, with the wakers note after it: one held
 * none (lost_waker, its detail saying its last poll came before the
 * recording), one held a waker (never_woken, an info); one runnable all
 * along (starved); one in one poll all along on a thread of its own (a
 * long poll since before the recording, its cause unknown, not "on CPU");
 * a note of a task the trace knows changes nothing. */
static void test_found_before(void)
{
	struct as_event evs[N_STREAM + 8];
	const uint64_t at = BASE + 2999 * MS;
	struct run r;
	size_t n;

	memcpy(evs, stream, sizeof(stream));
	evs[N_STREAM] = (struct as_event){ .type = AS_EV_SPAWN, .flags = AS_SPAWN_BEFORE,
					   .tid = 42, .ts = at, .task = 0xb100, .other = 71,
					   .str = "app::hung::{async_fn_env#0}" };
	evs[N_STREAM + 1] = (struct as_event){ .type = AS_EV_SPAWN, .flags = AS_SPAWN_WAKERS,
					       .tid = 42, .ts = at, .task = 0xb100 };
	evs[N_STREAM + 2] = (struct as_event){ .type = AS_EV_SPAWN, .flags = AS_SPAWN_BEFORE,
					       .tid = 42, .ts = at, .task = 0xb200, .other = 72,
					       .str = "app::waits::{async_fn_env#0}" };
	evs[N_STREAM + 3] = (struct as_event){ .type = AS_EV_SPAWN, .flags = AS_SPAWN_WAKERS,
					       .tid = 42, .ts = at, .task = 0xb200, .other = 1 };
	evs[N_STREAM + 4] = (struct as_event){ .type = AS_EV_SPAWN,
					       .flags = AS_SPAWN_BEFORE | AS_SPAWN_QUEUED,
					       .tid = 42, .ts = at, .task = 0xb300, .other = 73,
					       .str = "app::queued::{async_fn_env#0}" };
	/* known to the trace: no second task */
	evs[N_STREAM + 5] = (struct as_event){ .type = AS_EV_SPAWN, .flags = AS_SPAWN_BEFORE,
					       .tid = 42, .ts = at, .task = T_STUCK, .other = 99,
					       .str = "app::other::{async_fn_env#0}" };
	evs[N_STREAM + 6] = (struct as_event){ .type = AS_EV_SPAWN,
					       .flags = AS_SPAWN_BEFORE | AS_SPAWN_RUNNING,
					       .tid = 77, .ts = at, .task = 0xb400, .other = 74,
					       .str = "app::spins::{async_fn_env#0}" };
	analyse(&r, evs, N_STREAM + 7, true, 0, BASE + 3000 * MS, false);
	if (r.f) {
		const struct finding *x = find(r.f, "long_poll", NULL);
		const struct finding *lp = NULL;
		size_t nl;
		const struct finding *all = findings__list(r.f, &nl);

		for (size_t i = 0; i < nl; i++)
			if (!strcmp(all[i].kind, "long_poll") && all[i].task_id == 74)
				lp = &all[i];
		CHECK(x && lp);
		if (lp) {
			CHECK_STR(lp->title, "#74 app::spins held its worker 3.00 s in one poll, since "
				  "before the recording (still in it at the end)");
			CHECK(strstr(lp->detail, "its off-CPU time was not recorded") != NULL);
			CHECK(strstr(lp->advice, "asyncscope profile -p PID") != NULL);
		}
		x = find(r.f, "lost_waker", NULL);

		CHECK(x != NULL);
		if (x) {
			CHECK_STR(x->task_name, "app::hung::{async_fn_env#0}");
			CHECK_EQ_U64(x->task_id, 71);
			CHECK_STR(x->title, "#71 app::hung can never be woken again: no waker of it "
				  "was left (idle 3.00 s until the end)");
			CHECK(strstr(x->detail, "Its last poll returned Pending before the recording "
					     "began (no event of it was recorded") != NULL);
		}
		const struct finding *l = findings__list(r.f, &n);
		bool waits = false, queued = false;

		for (size_t i = 0; i < n; i++) {
			if (!strcmp(l[i].kind, "never_woken") &&
			    !strcmp(l[i].task_name, "app::waits::{async_fn_env#0}")) {
				waits = true;
				CHECK_EQ_U64(l[i].severity, FINDING_INFO);
			}
			if (!strcmp(l[i].kind, "starved") &&
			    !strcmp(l[i].task_name, "app::queued::{async_fn_env#0}")) {
				queued = true;
				CHECK(strstr(l[i].title, "waited up to 3.00 s") != NULL);
			}
		}
		CHECK(waits);
		CHECK(queued);
		size_t nt, before = 0;
		const struct task_stats *t = analysis__tasks(r.a, &nt);

		for (size_t i = 0; i < nt; i++) {
			if (!t[i].before)
				continue;
			before++;
			CHECK_EQ_U64(t[i].polls, t[i].tokio_id == 74);
			CHECK_EQ_U64(t[i].first_ns, BASE);
			CHECK(t[i].tokio_id >= 71 && t[i].tokio_id <= 74);
			CHECK_EQ_U64(t[i].state, t[i].tokio_id == 73 ? TASK_STATE_RUNNABLE :
					 t[i].tokio_id == 74 ? TASK_STATE_RUNNING : TASK_STATE_IDLE);
			if (t[i].tokio_id == 74)
				CHECK_EQ_U64(t[i].busy_ns, 3000 * MS);   /* BASE to the end */
		}
		CHECK_EQ_U64(before, 4);
		CHECK_EQ_U64(analysis__summary(r.a)->tasks, 6 + 4);   /* T_BLOCK .. T_DROP, and 4 */
	}
	run_free(&r);
}

static void test_bad_input(void)
{
	errno = 0;
	CHECK(findings__new(&(struct findings_input){ 0 }) == NULL && errno == EINVAL);
	CHECK(findings__new_live(NULL, NULL) == NULL);
	findings__free(NULL);
	size_t n = 1;
	CHECK(findings__list(NULL, &n) == NULL && n == 0);
	CHECK_STR(finding_severity__str(FINDING_WARNING), "warning");
}

int main(void)
{
	RUN(test_kinds);
	RUN(test_no_offcpu_lost);
	RUN(test_recorded);
	RUN(test_long_poll_preempted);
	RUN(test_merge_wide);
	RUN(test_live);
	RUN(test_pool_and_block_in_place);
	RUN(test_cut_stack);
	RUN(test_frames_by_design);
	RUN(test_wakers_held);
	RUN(test_found_before);
	RUN(test_bad_input);
	TEST_MAIN_END();
}
