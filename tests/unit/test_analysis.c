/* Unit tests for src/analysis/tasks.c: small event streams built with helpers,
 * exact numbers expected. No timing, no root. */
#include <errno.h>
#include <stdlib.h>

#include "analysis/tasks.h"
#include "harness.h"

#define P_USER 0    /* poll probe of app::main::{{closure}} */
#define P_WORKER 1  /* poll probe of the runtime worker loop */
#define P_NONAME 2  /* poll probe without a future name */

static struct as_probe probes[] = {
	{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "app::main::{{closure}}" },
	{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "tokio::runtime::blocking::task::BlockingTask<worker::run>" },
	{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll", .future = NULL },
};

static struct as_trace_meta meta = {
	.format_version = 1, .pid = 42, .target = "/bin/app", .build_id = "",
	.runtime = "tokio", .cmdline = "app", .probes = probes, .n_probes = 3,
};

static struct analysis *new_a(void)
{
	struct analysis *a = analysis__new(&meta);

	CHECK(a != NULL);
	return a;
}

static void add(struct analysis *a, uint8_t type, uint32_t tid, uint64_t ts, uint64_t task,
		uint64_t other, uint16_t probe, uint8_t flags, const char *str)
{
	struct as_event ev = {
		.type = type, .flags = flags, .probe = probe, .tid = tid, .ts = ts,
		.task = task, .other = other, .str = str,
	};
	CHECK_EQ_U64(analysis__add(a, &ev), 0);
}

static void begin(struct analysis *a, uint32_t tid, uint64_t ts, uint64_t task, uint16_t probe,
		  uint64_t id)
{
	add(a, AS_EV_POLL_BEGIN, tid, ts, task, id, probe, 0, NULL);
}

static void end(struct analysis *a, uint32_t tid, uint64_t ts, uint64_t task, int ready)
{
	add(a, AS_EV_POLL_END, tid, ts, task, 0, 0, ready ? AS_POLL_READY : 0, NULL);
}

static void wake(struct analysis *a, uint32_t tid, uint64_t ts, uint64_t task, uint64_t by)
{
	add(a, AS_EV_WAKE, tid, ts, task, by, 0, 0, NULL);
}

static void spawn(struct analysis *a, uint32_t tid, uint64_t ts, const char *file,
		  uint32_t line, uint32_t col)
{
	/* A heap copy freed at once: the analysis must copy what it keeps. */
	char *copy = file ? strdup(file) : NULL;

	add(a, AS_EV_SPAWN, tid, ts, 0, (uint64_t)line << 32 | col, 0, 0, copy);
	free(copy);
}

static void free_ev(struct analysis *a, uint32_t tid, uint64_t ts, uint64_t task)
{
	add(a, AS_EV_FREE, tid, ts, task, 0, 0, 0, NULL);
}

static void park(struct analysis *a, uint32_t tid, uint64_t ts, int parking)
{
	add(a, parking ? AS_EV_PARK : AS_EV_UNPARK, tid, ts, 0, 0, 0, 0, NULL);
}

static void thread(struct analysis *a, uint32_t tid, uint64_t ts, const char *name)
{
	char *copy = strdup(name);

	add(a, AS_EV_THREAD, tid, ts, 0, 0, 0, 0, copy);
	free(copy);
}

static void finish(struct analysis *a, uint64_t end_ns, uint64_t lost, uint64_t missed)
{
	struct as_trace_end e = { .events = 0, .lost = lost, .missed = missed, .end_ns = end_ns };

	CHECK_EQ_U64(analysis__finish(a, &e), 0);
}

static const struct task_stats *task(struct analysis *a, uint64_t seq)
{
	size_t n;
	const struct task_stats *t = analysis__tasks(a, &n);
	static const struct task_stats none;

	if (seq == 0 || seq > n) {
		fprintf(stderr, "no task with seq %llu (%zu tasks)\n", (unsigned long long)seq, n);
		th_failed_checks++;
		return &none;
	}
	CHECK_EQ_U64(t[seq - 1].seq, seq);
	return &t[seq - 1];
}

static const struct worker_stats *worker(struct analysis *a, uint32_t tid)
{
	size_t n;
	const struct worker_stats *w = analysis__workers(a, &n);
	static const struct worker_stats none;

	for (size_t i = 0; i < n; i++)
		if (w[i].tid == tid)
			return &w[i];
	fprintf(stderr, "no worker with tid %u\n", tid);
	th_failed_checks++;
	return &none;
}

/* Spawn, schedule, poll Pending, wake, poll Ready, free. */
static void test_lifecycle(void)
{
	struct analysis *a = new_a();
	const struct task_stats *t;

	spawn(a, 1, 100, "src/main.rs", 10, 5);
	wake(a, 1, 110, 0x1000, 0);           /* spawn-time schedule */
	begin(a, 2, 150, 0x1000, P_USER, 7);  /* sched 40 */
	end(a, 2, 200, 0x1000, 0);            /* poll 50 */
	wake(a, 3, 300, 0x1000, 0);           /* idle 100 */
	begin(a, 2, 320, 0x1000, P_USER, 7);  /* sched 20 */
	end(a, 2, 420, 0x1000, 1);            /* poll 100, Ready */
	free_ev(a, 2, 500, 0x1000);
	finish(a, 1000, 0, 0);

	t = task(a, 1);
	CHECK_EQ_U64(t->tokio_id, 7);
	CHECK_EQ_U64(t->header, 0x1000);
	CHECK_STR(t->name, "app::main::{{closure}}");
	CHECK_STR(t->spawn_file, "src/main.rs");
	CHECK_EQ_U64(t->spawn_line, 10);
	CHECK_EQ_U64(t->spawn_col, 5);
	CHECK(t->spawned_in_trace);
	CHECK_EQ_U64(t->parent, 0);
	CHECK_EQ_U64(t->kind, TASK_KIND_TASK);
	CHECK_EQ_U64(t->state, TASK_STATE_COMPLETED);
	CHECK_EQ_U64(t->polls, 2);
	CHECK_EQ_U64(t->pending_polls, 1);
	CHECK_EQ_U64(t->ready_polls, 1);
	CHECK_EQ_U64(t->busy_ns, 150);
	CHECK_EQ_U64(t->max_poll_ns, 100);
	CHECK_EQ_U64(t->mean_poll_ns, 75);
	CHECK_EQ_U64(t->sched_ns, 60);
	CHECK_EQ_U64(t->idle_ns, 100);
	CHECK_EQ_U64(t->wakes, 1);
	CHECK_EQ_U64(t->self_wakes, 0);
	CHECK_EQ_U64(t->first_ns, 110);
	CHECK_EQ_U64(t->last_ns, 500);

	const struct summary *s = analysis__summary(a);
	CHECK_EQ_U64(s->events, 8);
	CHECK_EQ_U64(s->tasks, 1);
	CHECK_EQ_U64(s->user_tasks, 1);
	CHECK_EQ_U64(s->polls, 2);
	CHECK_EQ_U64(s->user_polls, 2);
	CHECK_EQ_U64(s->start_ns, 100);
	CHECK_EQ_U64(s->duration_ns, 900);
	CHECK_EQ_U64(s->anomalies, 0);
	CHECK_EQ_U64(worker(a, 2)->polls, 2);
	CHECK_EQ_U64(worker(a, 2)->busy_ns, 150);
	analysis__free(a);
}

/* Self wake and a wake while runnable: the sched clock starts at the end of the
 * poll that woke itself and is not restarted by the second wake. */
static void test_self_wake(void)
{
	struct analysis *a = new_a();
	const struct task_stats *t;

	begin(a, 1, 0, 0x2000, P_USER, 0);   /* existed before the recording */
	wake(a, 1, 10, 0x2000, 0x2000);      /* self wake (yield_now) */
	end(a, 1, 20, 0x2000, 0);            /* runnable from here */
	wake(a, 5, 25, 0x2000, 0x9999);      /* already runnable */
	begin(a, 1, 50, 0x2000, P_USER, 3);  /* sched 30 */
	end(a, 1, 60, 0x2000, 0);            /* idle to the end */
	finish(a, 100, 0, 0);

	t = task(a, 1);
	CHECK(!t->spawned_in_trace);
	CHECK(t->spawn_file == NULL);
	CHECK_EQ_U64(t->tokio_id, 3);        /* first non-zero id */
	CHECK_EQ_U64(t->wakes, 2);
	CHECK_EQ_U64(t->self_wakes, 1);
	CHECK_EQ_U64(t->sched_ns, 30);
	CHECK_EQ_U64(t->idle_ns, 40);
	CHECK_EQ_U64(t->busy_ns, 30);
	CHECK_EQ_U64(t->pending_polls, 2);
	CHECK_EQ_U64(t->state, TASK_STATE_IDLE);
	CHECK_EQ_U64(analysis__summary(a)->anomalies, 0);
	analysis__free(a);
}

/* A worker loop task whose poll holds user polls: kind worker, thread busy
 * counts only the user polls, spawn parent is the user task. */
static void test_nesting(void)
{
	struct analysis *a = new_a();
	const struct summary *s;

	thread(a, 2, 0, "tokio-runtime-w");
	begin(a, 2, 0, 0xa000, P_WORKER, 1);  /* seq 1: worker loop */
	begin(a, 2, 100, 0xb000, P_USER, 2);  /* seq 2 */
	spawn(a, 2, 120, "src/lib.rs", 33, 9);
	wake(a, 2, 130, 0xc000, 0xb000);      /* seq 3, spawned by seq 2 */
	end(a, 2, 200, 0xb000, 0);
	begin(a, 2, 300, 0xc000, P_NONAME, 3);
	end(a, 2, 350, 0xc000, 1);
	park(a, 2, 400, 1);
	park(a, 2, 600, 0);
	finish(a, 1000, 0, 0);

	CHECK_EQ_U64(task(a, 1)->kind, TASK_KIND_WORKER);
	CHECK_EQ_U64(task(a, 1)->state, TASK_STATE_RUNNING);
	CHECK_EQ_U64(task(a, 1)->polls, 1);
	CHECK_EQ_U64(task(a, 1)->busy_ns, 1000);
	CHECK_STR(task(a, 1)->name, "tokio::runtime::blocking::task::BlockingTask<worker::run>");
	CHECK_EQ_U64(task(a, 2)->kind, TASK_KIND_TASK);
	CHECK_EQ_U64(task(a, 2)->state, TASK_STATE_IDLE);
	CHECK_EQ_U64(task(a, 3)->kind, TASK_KIND_TASK);
	CHECK_EQ_U64(task(a, 3)->parent, 2);
	CHECK_STR(task(a, 3)->spawn_file, "src/lib.rs");
	CHECK_EQ_U64(task(a, 3)->spawn_line, 33);
	CHECK_EQ_U64(task(a, 3)->sched_ns, 170);
	CHECK_EQ_U64(task(a, 3)->wakes, 0);
	CHECK(task(a, 3)->name == NULL);      /* probe without a future name */
	CHECK_EQ_U64(task(a, 3)->state, TASK_STATE_COMPLETED);

	const struct worker_stats *w = worker(a, 2);
	CHECK_STR(w->name, "tokio-runtime-w");
	CHECK_EQ_U64(w->polls, 2);
	CHECK_EQ_U64(w->busy_ns, 150);
	CHECK_EQ_U64(w->parked_ns, 200);
	CHECK_EQ_U64(w->parks, 1);

	s = analysis__summary(a);
	CHECK_EQ_U64(s->tasks, 3);
	CHECK_EQ_U64(s->user_tasks, 2);
	CHECK_EQ_U64(s->worker_tasks, 1);
	CHECK_EQ_U64(s->polls, 3);
	CHECK_EQ_U64(s->user_polls, 2);
	CHECK_EQ_U64(s->workers, 1);
	CHECK_EQ_U64(s->anomalies, 0);
	analysis__free(a);
}

/* A task first polled as a leaf, later found to be a worker: the time of its
 * leaf poll is taken back from the thread. */
static void test_late_worker(void)
{
	struct analysis *a = new_a();

	begin(a, 4, 0, 0xa000, P_WORKER, 0);
	end(a, 4, 10, 0xa000, 0);
	begin(a, 4, 20, 0xa000, P_WORKER, 0);
	begin(a, 4, 30, 0xb000, P_USER, 0);
	end(a, 4, 35, 0xb000, 0);
	end(a, 4, 50, 0xa000, 0);
	finish(a, 100, 0, 0);

	CHECK_EQ_U64(task(a, 1)->kind, TASK_KIND_WORKER);
	CHECK_EQ_U64(task(a, 1)->busy_ns, 40);
	CHECK_EQ_U64(worker(a, 4)->polls, 1);
	CHECK_EQ_U64(worker(a, 4)->busy_ns, 5);
	CHECK_EQ_U64(analysis__summary(a)->user_polls, 1);
	analysis__free(a);
}

/* A header freed then reused is a second task; a completed task polled again
 * without a FREE (lost) is a new task too, with an anomaly. */
static void test_header_reuse(void)
{
	struct analysis *a = new_a();

	begin(a, 1, 0, 0x3000, P_USER, 1);
	end(a, 1, 10, 0x3000, 1);
	free_ev(a, 1, 20, 0x3000);
	wake(a, 1, 30, 0x3000, 0);            /* new task, spawn schedule */
	begin(a, 1, 40, 0x3000, P_USER, 2);
	end(a, 1, 50, 0x3000, 1);
	begin(a, 1, 60, 0x3000, P_USER, 3);   /* FREE lost */
	end(a, 1, 70, 0x3000, 0);
	finish(a, 100, 0, 0);

	size_t n;
	analysis__tasks(a, &n);
	CHECK_EQ_U64(n, 3);
	CHECK_EQ_U64(task(a, 1)->tokio_id, 1);
	CHECK_EQ_U64(task(a, 1)->state, TASK_STATE_COMPLETED);
	CHECK_EQ_U64(task(a, 2)->tokio_id, 2);
	CHECK(task(a, 2)->spawned_in_trace);
	CHECK_EQ_U64(task(a, 2)->sched_ns, 10);
	CHECK_EQ_U64(task(a, 2)->wakes, 0);
	CHECK_EQ_U64(task(a, 2)->state, TASK_STATE_COMPLETED);
	CHECK_EQ_U64(task(a, 3)->tokio_id, 3);
	CHECK_EQ_U64(task(a, 3)->state, TASK_STATE_IDLE);
	CHECK_EQ_U64(task(a, 3)->idle_ns, 30);
	CHECK_EQ_U64(analysis__summary(a)->anomalies, 1);
	analysis__free(a);
}

/* Attached mid-poll: an end without begin is ignored; an end of a deeper poll
 * pops the polls above it (their ends were lost). */
static void test_attach_mid_poll(void)
{
	struct analysis *a = new_a();

	end(a, 1, 5, 0x4000, 0);              /* began before the recording */
	park(a, 1, 6, 0);                     /* parked before the recording */
	begin(a, 1, 10, 0x5000, P_USER, 0);
	begin(a, 1, 20, 0x6000, P_USER, 0);
	end(a, 1, 50, 0x5000, 0);             /* 0x6000's end lost */
	finish(a, 100, 0, 0);

	size_t n;
	analysis__tasks(a, &n);
	CHECK_EQ_U64(n, 2);
	CHECK_EQ_U64(task(a, 1)->header, 0x5000);
	CHECK_EQ_U64(task(a, 1)->kind, TASK_KIND_WORKER);
	CHECK_EQ_U64(task(a, 1)->busy_ns, 40);
	CHECK_EQ_U64(task(a, 1)->pending_polls, 1);
	CHECK_EQ_U64(task(a, 2)->busy_ns, 30);
	CHECK_EQ_U64(task(a, 2)->polls, 1);
	CHECK_EQ_U64(task(a, 2)->pending_polls, 0);
	CHECK_EQ_U64(task(a, 2)->state, TASK_STATE_IDLE);
	CHECK_EQ_U64(worker(a, 1)->busy_ns, 30);
	CHECK_EQ_U64(worker(a, 1)->parks, 0);
	CHECK_EQ_U64(worker(a, 1)->parked_ns, 0);
	CHECK_EQ_U64(analysis__summary(a)->anomalies, 3);
	analysis__free(a);
}

/* Each of the four end states. */
static void test_states(void)
{
	struct analysis *a = new_a();

	begin(a, 1, 0, 0x100, P_USER, 0);     /* completed */
	end(a, 1, 10, 0x100, 1);
	begin(a, 1, 20, 0x200, P_USER, 0);    /* idle */
	end(a, 1, 30, 0x200, 0);
	begin(a, 1, 40, 0x300, P_USER, 0);    /* runnable: woken after Pending */
	end(a, 1, 50, 0x300, 0);
	wake(a, 2, 60, 0x300, 0);
	wake(a, 2, 70, 0x400, 0);             /* runnable: spawned, never polled */
	begin(a, 2, 80, 0x500, P_USER, 0);    /* running */
	finish(a, 100, 0, 0);

	CHECK_EQ_U64(task(a, 1)->state, TASK_STATE_COMPLETED);
	CHECK_EQ_U64(task(a, 2)->state, TASK_STATE_IDLE);
	CHECK_EQ_U64(task(a, 2)->idle_ns, 70);
	CHECK_EQ_U64(task(a, 3)->state, TASK_STATE_RUNNABLE);
	CHECK_EQ_U64(task(a, 3)->idle_ns, 10);
	CHECK_EQ_U64(task(a, 3)->sched_ns, 0);
	CHECK_EQ_U64(task(a, 4)->state, TASK_STATE_RUNNABLE);
	CHECK_EQ_U64(task(a, 4)->polls, 0);
	CHECK(task(a, 4)->name == NULL);
	CHECK_EQ_U64(task(a, 5)->state, TASK_STATE_RUNNING);
	CHECK_EQ_U64(task(a, 5)->polls, 1);
	CHECK_EQ_U64(task(a, 5)->busy_ns, 20);
	CHECK_EQ_U64(task(a, 5)->max_poll_ns, 20);
	CHECK_EQ_U64(worker(a, 2)->busy_ns, 20);
	CHECK_EQ_U64(worker(a, 2)->polls, 1);
	size_t n;
	analysis__workers(a, &n);
	CHECK_EQ_U64(n, 2);
	CHECK_EQ_U64(analysis__summary(a)->anomalies, 0);
	analysis__free(a);
}

/* Park accounting: closed parks, a park open at the end, a double park. */
static void test_park(void)
{
	struct analysis *a = new_a();

	thread(a, 9, 0, "main");              /* never polls or parks: not a worker */
	park(a, 3, 100, 1);
	park(a, 3, 300, 0);
	park(a, 3, 500, 1);
	park(a, 3, 550, 1);                   /* anomaly, first PARK kept */
	finish(a, 1000, 0, 0);

	size_t n;
	analysis__workers(a, &n);
	CHECK_EQ_U64(n, 1);
	CHECK_EQ_U64(worker(a, 3)->parks, 2);
	CHECK_EQ_U64(worker(a, 3)->parked_ns, 700);
	CHECK(worker(a, 3)->name == NULL);
	CHECK_EQ_U64(analysis__summary(a)->anomalies, 1);
	analysis__free(a);
}

/* Pending spawn sites: discarded at the next poll end, replaced by the next
 * spawn; a task first seen by a wake without one has no location. */
static void test_spawn_sites(void)
{
	struct analysis *a = new_a();

	begin(a, 1, 0, 0x100, P_USER, 0);
	spawn(a, 1, 5, "a.rs", 1, 1);
	end(a, 1, 10, 0x100, 0);
	wake(a, 1, 20, 0x200, 0);             /* seq 2: site discarded */
	spawn(a, 1, 30, "b.rs", 2, 2);
	spawn(a, 1, 31, "c.rs", 3, 3);
	wake(a, 2, 32, 0x300, 0);             /* seq 3: other thread, no site */
	wake(a, 1, 33, 0x400, 0);             /* seq 4: c.rs */
	wake(a, 1, 34, 0x500, 0);             /* seq 5: site used up */
	finish(a, 100, 0, 0);

	CHECK(task(a, 2)->spawned_in_trace);
	CHECK(task(a, 2)->spawn_file == NULL);
	CHECK(task(a, 3)->spawn_file == NULL);
	CHECK_STR(task(a, 4)->spawn_file, "c.rs");
	CHECK_EQ_U64(task(a, 4)->spawn_line, 3);
	CHECK_EQ_U64(task(a, 4)->parent, 0);
	CHECK(task(a, 5)->spawn_file == NULL);
	CHECK(task(a, 5)->spawned_in_trace);
	analysis__free(a);
}

/* Timestamps out of order never underflow: clamped to 0 and counted. */
static void test_out_of_order(void)
{
	struct analysis *a = new_a();
	const struct summary *s;

	begin(a, 1, 1000, 0x100, P_USER, 0);
	end(a, 1, 990, 0x100, 0);             /* -10 */
	wake(a, 2, 980, 0x100, 0);            /* idle -10 */
	begin(a, 1, 970, 0x100, P_USER, 0);   /* sched -10 */
	end(a, 1, 2000, 0x100, 0);
	park(a, 3, 1500, 1);
	park(a, 3, 1400, 0);                  /* -100 */
	begin(a, 1, 2500, 0x200, P_USER, 0);
	wake(a, 1, 2100, 0x900, 0);
	finish(a, 2200, 0, 0);                /* trailer before the last events */

	CHECK_EQ_U64(task(a, 1)->busy_ns, 1030);
	CHECK_EQ_U64(task(a, 1)->max_poll_ns, 1030);
	CHECK_EQ_U64(task(a, 1)->sched_ns, 0);
	CHECK_EQ_U64(task(a, 1)->idle_ns, 200);
	CHECK_EQ_U64(task(a, 2)->busy_ns, 0);
	CHECK_EQ_U64(task(a, 2)->state, TASK_STATE_RUNNING);
	CHECK_EQ_U64(worker(a, 3)->parked_ns, 0);
	s = analysis__summary(a);
	CHECK_EQ_U64(s->start_ns, 970);
	CHECK_EQ_U64(s->duration_ns, 1230);
	CHECK_EQ_U64(s->anomalies, 5);
	analysis__free(a);
}

/* Freed while idle: idle until the FREE; freed while running: poll cut. */
static void test_free(void)
{
	struct analysis *a = new_a();

	begin(a, 1, 0, 0x100, P_USER, 0);
	end(a, 1, 10, 0x100, 0);
	free_ev(a, 1, 60, 0x100);
	begin(a, 1, 70, 0x200, P_USER, 0);
	free_ev(a, 2, 90, 0x200);
	free_ev(a, 2, 95, 0x777);             /* never seen: ignored */
	finish(a, 100, 0, 0);

	CHECK_EQ_U64(task(a, 1)->idle_ns, 50);
	CHECK_EQ_U64(task(a, 1)->state, TASK_STATE_COMPLETED);
	CHECK_EQ_U64(task(a, 1)->last_ns, 60);
	CHECK_EQ_U64(task(a, 2)->busy_ns, 20);
	CHECK_EQ_U64(task(a, 2)->state, TASK_STATE_COMPLETED);
	CHECK_EQ_U64(worker(a, 1)->busy_ns, 30);
	CHECK_EQ_U64(analysis__summary(a)->anomalies, 1);
	analysis__free(a);
}

/* Trailer, start time, API misuse. */
static void test_summary_and_api(void)
{
	struct analysis *a = new_a();
	struct as_trace_meta m = meta;
	struct as_event ev = { .type = AS_EV__MAX, .ts = 10 };
	size_t n = 99;

	CHECK(analysis__tasks(a, &n) == NULL);
	CHECK_EQ_U64(n, 0);
	CHECK(analysis__summary(a) == NULL);
	CHECK_EQ_U64(analysis__add(a, NULL), -EINVAL);
	CHECK_EQ_U64(analysis__add(a, &ev), 0);     /* unknown type: anomaly */
	ev.type = AS_EV_POLL_BEGIN;
	ev.task = 0;
	CHECK_EQ_U64(analysis__add(a, &ev), 0);     /* no header: anomaly */
	finish(a, 50, 7, 3);
	CHECK_EQ_U64(analysis__finish(a, NULL), -EINVAL);
	CHECK_EQ_U64(analysis__add(a, &ev), -EINVAL);
	CHECK_EQ_U64(analysis__summary(a)->lost, 7);
	CHECK_EQ_U64(analysis__summary(a)->missed, 3);
	CHECK_EQ_U64(analysis__summary(a)->anomalies, 2);
	CHECK_EQ_U64(analysis__summary(a)->duration_ns, 40);
	analysis__free(a);

	m.clock_mono_ns = 5;
	a = analysis__new(&m);
	ev.type = AS_EV_THREAD;
	CHECK_EQ_U64(analysis__add(a, &ev), 0);     /* NULL name accepted */
	CHECK_EQ_U64(analysis__finish(a, NULL), 0); /* no trailer: ends at the last event */
	CHECK_EQ_U64(analysis__summary(a)->start_ns, 5);
	CHECK_EQ_U64(analysis__summary(a)->duration_ns, 5);
	analysis__free(a);

	a = analysis__new(NULL);                    /* no meta, no events */
	CHECK_EQ_U64(analysis__finish(a, NULL), 0);
	CHECK_EQ_U64(analysis__summary(a)->duration_ns, 0);
	analysis__workers(a, &n);
	CHECK_EQ_U64(n, 0);
	analysis__free(a);
	analysis__free(NULL);
	CHECK_STR(task_kind__str(TASK_KIND_WORKER), "worker");
	CHECK_STR(task_state__str(TASK_STATE_RUNNABLE), "runnable");
}

/* Many tasks: map growth, every task kept after FREE. */
static void test_many(void)
{
	struct analysis *a = new_a();
	uint64_t ts = 0;

	for (uint64_t i = 0; i < 5000; i++) {
		uint64_t h = 0x10000 + (i % 100) * 64; /* addresses reused */
		wake(a, 1, ts++, h, 0);
		begin(a, 2, ts++, h, P_USER, i + 1);
		end(a, 2, ts++, h, 1);
		free_ev(a, 2, ts++, h);
	}
	finish(a, ts, 0, 0);
	size_t n;
	const struct task_stats *t = analysis__tasks(a, &n);
	CHECK_EQ_U64(n, 5000);
	CHECK_EQ_U64(t[4999].tokio_id, 5000);
	CHECK_EQ_U64(t[4999].sched_ns, 1);
	CHECK_EQ_U64(analysis__summary(a)->polls, 5000);
	CHECK_EQ_U64(analysis__summary(a)->anomalies, 0);
	analysis__free(a);
}

int main(void)
{
	RUN(test_lifecycle);
	RUN(test_self_wake);
	RUN(test_nesting);
	RUN(test_late_worker);
	RUN(test_header_reuse);
	RUN(test_attach_mid_poll);
	RUN(test_states);
	RUN(test_park);
	RUN(test_spawn_sites);
	RUN(test_out_of_order);
	RUN(test_free);
	RUN(test_summary_and_api);
	RUN(test_many);
	TEST_MAIN_END();
}
