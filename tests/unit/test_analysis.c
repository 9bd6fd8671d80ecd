/* Unit tests for src/analysis/tasks.c: small event streams built with helpers,
 * exact numbers expected. No timing, no root. */
#include <errno.h>
#include <stdlib.h>

#include "analysis/tasks.h"
#include "analysis/timeline.h"
#include "harness.h"

#define P_USER 0    /* poll probe of app::main::{{closure}} */
#define P_WORKER 1  /* poll probe of the runtime worker loop */
#define P_NONAME 2  /* poll probe without a future name */
#define P_BLOCKING 3 /* poll probe of a spawn_blocking task */
#define P_USER2 4   /* poll probe of app::other */
#define PEND_MAX_TEST 4 /* wakes timed between two polls (distinct wakers) */

static struct as_probe probes[] = {
	{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "app::main::{{closure}}" },
	{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "tokio::runtime::blocking::task::BlockingTask<worker::run>" },
	{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll", .future = NULL },
	{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "tokio::runtime::blocking::task::BlockingTask<app::load::{{closure}}>" },
	{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "app::other" },
};

static struct as_trace_meta meta = {
	.format_version = 1, .pid = 42, .target = "/bin/app", .build_id = "",
	.runtime = "tokio", .cmdline = "app", .probes = probes, .n_probes = 5,
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
	wake(a, 1, 12, 0x2000, 0x2000);      /* again in that poll (a timer */
	wake(a, 1, 14, 0x2000, 0x2000);      /* reset to a past deadline): no more */
	end(a, 1, 20, 0x2000, 0);            /* runnable from here */
	wake(a, 5, 25, 0x2000, 0x9999);      /* already runnable */
	begin(a, 1, 50, 0x2000, P_USER, 3);  /* sched 30 */
	end(a, 1, 60, 0x2000, 0);            /* idle to the end */
	finish(a, 100, 0, 0);

	t = task(a, 1);
	CHECK(!t->spawned_in_trace);
	CHECK(t->spawn_file == NULL);
	CHECK_EQ_U64(t->tokio_id, 3);        /* first non-zero id */
	CHECK_EQ_U64(t->wakes, 4);
	CHECK_EQ_U64(t->self_wakes, 1);      /* one a poll */
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

/* Tokio frees a finished task inside its own poll (JoinHandle dropped):
 * the task is retired when that poll ends, with no anomaly. */
static void test_free_inside_own_poll(void)
{
	struct analysis *a = new_a();

	begin(a, 1, 0, 0x300, P_USER, 0);
	free_ev(a, 1, 8, 0x300);
	end(a, 1, 10, 0x300, AS_POLL_READY);
	begin(a, 1, 20, 0x300, P_USER, 0);    /* the address reused: a new task */
	end(a, 1, 25, 0x300, 0);
	finish(a, 100, 0, 0);

	CHECK_EQ_U64(task(a, 1)->busy_ns, 10);
	CHECK_EQ_U64(task(a, 1)->polls, 1);
	CHECK_EQ_U64(task(a, 1)->state, TASK_STATE_COMPLETED);
	CHECK_EQ_U64(task(a, 1)->last_ns, 10);
	CHECK_EQ_U64(task(a, 2)->polls, 1);
	CHECK_EQ_U64(task(a, 2)->state, TASK_STATE_IDLE);
	CHECK_EQ_U64(analysis__summary(a)->anomalies, 0);
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

static void wake_flags(struct analysis *a, uint32_t tid, uint64_t ts, uint64_t task,
		       uint64_t by, uint8_t flags)
{
	add(a, AS_EV_WAKE, tid, ts, task, by, 0, flags, NULL);
}

static struct analysis *new_opts(uint64_t long_poll, uint64_t stall, uint64_t starve,
				 size_t keep)
{
	struct analysis_opts o = {
		.long_poll_ns = long_poll, .stall_ns = stall, .starve_ns = starve,
		.long_poll_keep = keep,
	};
	struct analysis *a = analysis__new_opts(&meta, &o);

	CHECK(a != NULL);
	return a;
}

/* A worker that never runs a task is known by its type: the same root future
 * as a worker whose poll holds others, whether its poll began before or
 * after that one was found out. */
static void test_idle_worker(void)
{
	struct analysis *a = new_a();

	begin(a, 10, 0, 0xA1, P_WORKER, 1);      /* idle worker: nothing nests */
	begin(a, 11, 5, 0xA2, P_WORKER, 2);
	begin(a, 11, 10, 0x100, P_USER, 3);      /* nests in 0xA2 */
	end(a, 11, 20, 0x100, 1);
	begin(a, 12, 30, 0xA3, P_WORKER, 4);     /* begins once the type is known */
	end(a, 12, 40, 0xA3, 1);
	finish(a, 5000000, 0, 0);

	CHECK_EQ_U64(task(a, 1)->kind, TASK_KIND_WORKER);
	CHECK_EQ_U64(task(a, 2)->kind, TASK_KIND_WORKER);
	CHECK_EQ_U64(task(a, 4)->kind, TASK_KIND_WORKER);
	CHECK_EQ_U64(task(a, 3)->kind, TASK_KIND_TASK);
	CHECK_EQ_U64(worker(a, 10)->busy_ns, 0);
	CHECK_EQ_U64(worker(a, 10)->polls, 0);
	CHECK_EQ_U64(worker(a, 12)->polls, 0);
	CHECK_EQ_U64(worker(a, 11)->polls, 1);
	CHECK_EQ_U64(analysis__summary(a)->long_polls, 0);
	CHECK_EQ_U64(analysis__summary(a)->user_tasks, 1);
	analysis__free(a);
}

/* Per-task and overall distributions; ratios. */
static void test_distributions(void)
{
	struct analysis *a = new_a();
	const struct task_stats *t;
	const struct hist *h;

	wake(a, 1, 0, 0x100, 0);              /* spawn schedule */
	begin(a, 2, 10, 0x100, P_USER, 1);    /* sched 10 */
	end(a, 2, 110, 0x100, 0);             /* poll 100 */
	wake(a, 1, 1110, 0x100, 0);           /* idle 1000 */
	begin(a, 2, 1140, 0x100, P_USER, 1);  /* sched 30 */
	end(a, 2, 1440, 0x100, 0);            /* poll 300 */
	wake(a, 1, 3440, 0x100, 0);           /* idle 2000 */
	begin(a, 2, 3460, 0x100, P_USER, 1);  /* sched 20 */
	end(a, 2, 3660, 0x100, 1);            /* poll 200, Ready */
	free_ev(a, 2, 3700, 0x100);
	wake(a, 1, 3800, 0x200, 0);           /* a second task, still live at the end */
	begin(a, 2, 3900, 0x200, P_USER, 2);  /* sched 100 */
	end(a, 2, 4000, 0x200, 0);            /* poll 100, then idle to the end: not sampled */
	finish(a, 10000, 0, 0);

	t = task(a, 1);
	CHECK_EQ_U64(t->poll_p50_ns, 200);
	CHECK_EQ_U64(t->poll_p99_ns, 300);
	CHECK_EQ_U64(t->sched_p50_ns, 20);
	CHECK_EQ_U64(t->sched_p99_ns, 30);
	CHECK_EQ_U64(t->sched_max_ns, 30);
	CHECK_EQ_U64(t->idle_p50_ns, 1000);
	CHECK_EQ_U64(t->idle_p99_ns, 2000);
	CHECK(t->pending_ratio > 0.66 && t->pending_ratio < 0.67);
	CHECK(t->self_wake_ratio == 0);
	t = task(a, 2);
	CHECK_EQ_U64(t->idle_p50_ns, 0);
	CHECK_EQ_U64(t->idle_ns, 6000);
	CHECK(t->pending_ratio == 1);

	h = analysis__dist(a, DIST_POLL);
	CHECK(h != NULL);
	CHECK_EQ_U64(h->count, 4);
	CHECK_EQ_U64(h->sum, 700);
	CHECK_EQ_U64(hist__quantile(h, 0.5), 100);
	h = analysis__dist(a, DIST_SCHED);
	CHECK_EQ_U64(h->count, 4);
	CHECK_EQ_U64(h->max, 100);
	h = analysis__dist(a, DIST_IDLE);
	CHECK_EQ_U64(h->count, 2);
	CHECK_EQ_U64(h->min, 1000);
	CHECK(analysis__dist(a, DIST__MAX) == NULL);
	analysis__free(a);
}

/* Polls above the threshold: kept longest first, at most `keep`, total
 * counted; a worker's polls and polls at the threshold are not long. */
static void test_long_polls(void)
{
	struct analysis *a = new_opts(1000, 0, 0, 3);
	const struct long_poll *lp;
	size_t n;
	uint64_t ts = 0;

	static const uint64_t durs[] = { 1000, 5000, 1001, 9000, 2000, 7000, 500 };
	for (size_t i = 0; i < sizeof(durs) / sizeof(durs[0]); i++) {
		begin(a, 7, ts, 0x100, P_USER, 1);
		end(a, 7, ts + durs[i], 0x100, 0);
		ts += durs[i] + 100;
	}
	begin(a, 8, ts, 0x900, P_WORKER, 0);   /* worker: long but nested */
	begin(a, 8, ts + 10, 0x200, P_USER2, 2);
	end(a, 8, ts + 20, 0x200, 0);
	end(a, 8, ts + 50000, 0x900, 0);
	begin(a, 9, ts + 60000, 0x300, P_USER, 3); /* running at the end: 4000 */
	finish(a, ts + 64000, 0, 0);

	lp = analysis__long_polls(a, &n);
	CHECK_EQ_U64(n, 3);
	CHECK_EQ_U64(analysis__summary(a)->long_polls, 6); /* 5000 1001 9000 2000 7000 4000 */
	CHECK_EQ_U64(analysis__summary(a)->long_poll_ns, 1000);
	if (n == 3) {
		CHECK_EQ_U64(lp[0].duration_ns, 9000);
		CHECK_EQ_U64(lp[1].duration_ns, 7000);
		CHECK_EQ_U64(lp[2].duration_ns, 5000);
		CHECK_EQ_U64(lp[0].seq, 1);
		CHECK_EQ_U64(lp[0].tid, 7);
		CHECK_EQ_U64(lp[0].start_ns, 1000 + 5000 + 1001 + 300);
		CHECK(!lp[0].until_end);
	}
	CHECK_EQ_U64(task(a, 1)->long_polls, 5);
	CHECK_EQ_U64(task(a, 4)->long_polls, 1);
	analysis__free(a);

	/* keep 1000 by default; a poll running at the end is marked */
	a = new_a();
	begin(a, 1, 0, 0x100, P_USER, 1);
	finish(a, 5000000, 0, 0);
	lp = analysis__long_polls(a, &n);
	CHECK_EQ_U64(n, 1);
	CHECK(n == 1 && lp[0].until_end && lp[0].duration_ns == 5000000);
	analysis__free(a);
}

/* Stalls: idle longer than the threshold, ended by a wake, by FREE, or open
 * at the end (which wins over a longer earlier one). */
static void test_stalls(void)
{
	struct analysis *a = new_opts(0, 1000, 0, 0);
	const struct stall *st;
	size_t n;

	/* task 1: stall of 5000 ended by a wake, then one open at the end (3000) */
	begin(a, 1, 0, 0x100, P_USER, 1);
	end(a, 1, 10, 0x100, 0);
	wake(a, 2, 5010, 0x100, 0);
	begin(a, 1, 5020, 0x100, P_USER, 1);
	end(a, 1, 5030, 0x100, 0);
	/* task 2: a stall of 2000 ended by a wake, nothing at the end */
	begin(a, 1, 100, 0x200, P_USER, 2);
	end(a, 1, 200, 0x200, 0);
	wake(a, 2, 2200, 0x200, 0);
	begin(a, 1, 2300, 0x200, P_USER, 2);
	end(a, 1, 2400, 0x200, 1);
	/* task 3: idle 999 (not a stall) then woken */
	begin(a, 1, 300, 0x300, P_USER, 3);
	end(a, 1, 310, 0x300, 0);
	wake(a, 2, 1309, 0x300, 0);
	/* task 4: dropped after idling 1500 */
	begin(a, 1, 400, 0x400, P_USER, 4);
	end(a, 1, 500, 0x400, 0);
	free_ev(a, 2, 2000, 0x400);
	finish(a, 8030, 0, 0);

	st = analysis__stalled(a, &n);
	CHECK_EQ_U64(n, 3);
	CHECK_EQ_U64(analysis__summary(a)->stalled_tasks, 3);
	if (n == 3) {
		CHECK_EQ_U64(st[0].seq, 1);        /* 3000, open at the end */
		CHECK_EQ_U64(st[0].stalled_ns, 3000);
		CHECK_EQ_U64(st[0].since_ns, 5030);
		CHECK(st[0].until_end);
		CHECK_EQ_U64(st[0].count, 2);
		CHECK_EQ_U64(st[1].seq, 2);
		CHECK_EQ_U64(st[1].stalled_ns, 2000);
		CHECK_EQ_U64(st[1].since_ns, 200);
		CHECK(!st[1].until_end);
		CHECK_EQ_U64(st[2].seq, 4);
		CHECK_EQ_U64(st[2].stalled_ns, 1500);
	}
	CHECK_EQ_U64(task(a, 3)->stalls, 0);
	analysis__free(a);
}

/* Starved: runnable longer than the threshold before a poll (or until the
 * end); worst wait and count per task. */
static void test_starved(void)
{
	struct analysis *a = new_opts(0, 0, 100, 0);
	const struct starve *sv;
	size_t n;

	wake(a, 1, 0, 0x100, 0);
	begin(a, 2, 150, 0x100, P_USER, 1);   /* waited 150: starved */
	end(a, 2, 160, 0x100, 0);
	wake(a, 1, 200, 0x100, 0);
	begin(a, 2, 300, 0x100, P_USER, 1);   /* 100: not over */
	end(a, 2, 310, 0x100, 0);
	wake(a, 1, 400, 0x100, 0);
	begin(a, 2, 700, 0x100, P_USER, 1);   /* 300: starved */
	end(a, 2, 710, 0x100, 1);
	wake(a, 1, 800, 0x200, 0);            /* runnable until the end: 1200 */
	wake(a, 1, 900, 0x300, 0);
	begin(a, 2, 950, 0x300, P_USER, 3);   /* 50: fine */
	finish(a, 2000, 0, 0);

	sv = analysis__starved(a, &n);
	CHECK_EQ_U64(n, 2);
	if (n == 2) {
		CHECK_EQ_U64(sv[0].seq, 2);
		CHECK_EQ_U64(sv[0].max_wait_ns, 1200);
		CHECK_EQ_U64(sv[0].count, 1);
		CHECK_EQ_U64(sv[1].seq, 1);
		CHECK_EQ_U64(sv[1].max_wait_ns, 300);
		CHECK_EQ_U64(sv[1].count, 2);
	}
	CHECK_EQ_U64(task(a, 1)->sched_max_ns, 300);
	CHECK_EQ_U64(analysis__summary(a)->starve_ns, 100);
	analysis__free(a);
}

static const struct wake_edge *find_edge(struct analysis *a, enum wake_source k,
					 uint64_t from, uint64_t to)
{
	size_t n;
	const struct wake_edge *e = analysis__edges(a, &n);

	for (size_t i = 0; i < n; i++)
		if (e[i].from_kind == k && e[i].from_seq == from && e[i].to_seq == to)
			return &e[i];
	fprintf(stderr, "no edge %s:%llu -> %llu\n", wake_source__str(k),
		(unsigned long long)from, (unsigned long long)to);
	th_failed_checks++;
	return NULL;
}

/* Wake edges of every waker kind; delays from the first wake of a waker to
 * the next poll; runtime edges merged across worker tasks. */
static void test_edges(void)
{
	struct analysis *a = new_a();
	const struct wake_edge *e;
	size_t n;

	/* seq 1, 2: worker loops on threads 10, 11 (known as such once polls nest) */
	begin(a, 10, 0, 0xA1, P_WORKER, 0);
	begin(a, 11, 0, 0xA2, P_WORKER, 0);
	/* seq 3: user task T, seq 4: user task U, seq 5: a blocking task B */
	begin(a, 10, 10, 0x100, P_USER, 3);
	end(a, 10, 20, 0x100, 0);
	begin(a, 10, 30, 0x200, P_USER2, 4);
	wake(a, 10, 35, 0x100, 0x200);               /* U -> T (task) */
	wake(a, 10, 36, 0x100, 0x200);               /* again: counted, not re-timed */
	end(a, 10, 40, 0x200, 0);
	begin(a, 10, 50, 0x100, P_USER, 3);          /* U -> T delay 15 */
	end(a, 10, 60, 0x100, 0);
	wake_flags(a, 10, 100, 0x100, 0xA1, AS_WAKE_IO);     /* io -> T */
	wake_flags(a, 10, 101, 0x200, 0xA1, AS_WAKE_TIMER);  /* timer -> U */
	begin(a, 10, 110, 0x100, P_USER, 3);         /* io delay 10 */
	end(a, 10, 120, 0x100, 0);
	begin(a, 11, 130, 0x200, P_USER2, 4);        /* timer delay 29 */
	end(a, 11, 140, 0x200, 0);
	wake(a, 10, 200, 0x100, 0xA1);               /* runtime (worker seq 1) -> T */
	begin(a, 10, 210, 0x100, P_USER, 3);
	end(a, 10, 220, 0x100, 0);
	wake(a, 11, 300, 0x100, 0xA2);               /* runtime (worker seq 2) -> T: merged */
	begin(a, 11, 340, 0x100, P_USER, 3);
	end(a, 11, 350, 0x100, 0);
	wake(a, 20, 400, 0x100, 0);                  /* thread -> T */
	wake(a, 21, 400, 0x100, 0xDEAD);             /* unknown poll -> runtime */
	begin(a, 30, 500, 0x300, P_BLOCKING, 5);
	wake(a, 30, 510, 0x200, 0x300);              /* blocking -> U */
	end(a, 30, 520, 0x300, 1);
	begin(a, 10, 600, 0x100, P_USER, 3);         /* thread, runtime delays 200 */
	end(a, 10, 610, 0x100, 0);
	wake(a, 10, 620, 0x100, 0x100);              /* self: T -> T, never polled again */
	finish(a, 1000, 0, 0);

	e = analysis__edges(a, &n);
	CHECK_EQ_U64(n, 7);
	CHECK_EQ_U64(analysis__summary(a)->anomalies, 0);
	if (n)
		CHECK_EQ_U64(e[0].count, 3);             /* runtime -> T first */
	e = find_edge(a, WAKE_FROM_TASK, 4, 3);
	CHECK(e && e->count == 2 && e->timed == 1 && e->delay_p50_ns == 15);
	e = find_edge(a, WAKE_FROM_IO, 0, 3);
	CHECK(e && e->count == 1 && e->delay_max_ns == 10);
	e = find_edge(a, WAKE_FROM_TIMER, 0, 4);
	CHECK(e && e->count == 1 && e->delay_p99_ns == 29);
	e = find_edge(a, WAKE_FROM_RUNTIME, 0, 3);
	CHECK(e && e->count == 3 && e->timed == 3);
	CHECK(e && e->delay_p50_ns == 40 && e->delay_max_ns == 200);
	e = find_edge(a, WAKE_FROM_THREAD, 0, 3);
	CHECK(e && e->count == 1 && e->delay_p50_ns == 200);
	e = find_edge(a, WAKE_FROM_BLOCKING, 0, 4);
	CHECK(e && e->count == 1 && e->timed == 0);
	e = find_edge(a, WAKE_FROM_TASK, 3, 3);
	CHECK(e && e->count == 1 && e->timed == 0);
	CHECK_STR(wake_source__str(WAKE_FROM_BLOCKING), "blocking");
	CHECK_EQ_U64(task(a, 1)->kind, TASK_KIND_WORKER);
	CHECK_EQ_U64(task(a, 5)->kind, TASK_KIND_TASK);
	analysis__free(a);
}

/* More distinct wakers between two polls than are timed: counted, not timed. */
static void test_edges_unsampled(void)
{
	struct analysis *a = new_a();
	const struct wake_edge *e;
	size_t n;

	begin(a, 1, 0, 0x100, P_USER, 1);
	end(a, 1, 10, 0x100, 0);
	for (uint64_t i = 0; i < 6; i++) {
		begin(a, 2, 20 + i * 10, 0x1000 + i * 0x100, P_USER2, 10 + i);
		wake(a, 2, 25 + i * 10, 0x100, 0x1000 + i * 0x100);
		end(a, 2, 28 + i * 10, 0x1000 + i * 0x100, 0);
	}
	begin(a, 1, 100, 0x100, P_USER, 1);
	finish(a, 200, 0, 0);
	e = analysis__edges(a, &n);
	CHECK_EQ_U64(n, 6);
	uint64_t timed = 0;
	for (size_t i = 0; i < n; i++)
		timed += e[i].timed;
	CHECK_EQ_U64(timed, 4);
	CHECK_EQ_U64(analysis__summary(a)->unsampled_wakes, 2);
	analysis__free(a);
}

/* A task woken by more distinct tasks between two of its polls than its
 * wake log holds (the logged wakes go into its edges while four of them
 * wait to be timed), wakers waking twice (counted, not re-timed), and a
 * wake timed past 2^32 ns: every edge's count, timing and delays exact. */
static void test_edges_many_wakers(void)
{
	enum { N_W = 100 };
	struct analysis *a = new_a();
	const struct wake_edge *e;
	uint64_t ts = 0, woke[N_W], polled, again, timed = 0;
	size_t n;

	begin(a, 1, ts, 0x100, P_USER, 1);               /* T: seq 1 */
	end(a, 1, ts += 10, 0x100, 0);
	for (uint64_t i = 0; i < N_W; i++) {             /* wakers: seq 2 .. */
		uint64_t h = 0x10000 + i * 0x100;

		begin(a, 2, ts += 10, h, P_USER2, 100 + i);
		wake(a, 2, woke[i] = ts += 1, 0x100, h);
		if (i % 10 == 0)
			wake(a, 2, ts += 1, 0x100, h);
		end(a, 2, ts += 1, h, 0);
	}
	polled = ts += 1000;
	begin(a, 1, polled, 0x100, P_USER, 1);
	end(a, 1, ts += 10, 0x100, 0);
	begin(a, 2, ts += 10, 0x10000, P_USER2, 100);   /* waker 0 again, */
	wake(a, 2, again = ts += 1, 0x100, 0x10000);
	end(a, 2, ts += 1, 0x10000, 0);
	begin(a, 1, ts = again + 5000000000ULL, 0x100, P_USER, 1);   /* timed 5 s */
	end(a, 1, ts += 10, 0x100, 0);
	finish(a, ts + 10, 0, 0);

	e = analysis__edges(a, &n);
	CHECK_EQ_U64(n, N_W);
	/* the wakes not timed: past the four waiting, and second wakes past them */
	CHECK_EQ_U64(analysis__summary(a)->unsampled_wakes, N_W - PEND_MAX_TEST + N_W / 10 - 1);
	for (size_t i = 0; i < n; i++)
		timed += e[i].timed;
	CHECK_EQ_U64(timed, PEND_MAX_TEST + 1);
	for (uint64_t i = 0; i < N_W; i++) {
		e = find_edge(a, WAKE_FROM_TASK, 2 + i, 1);
		if (!e)
			continue;
		CHECK_EQ_U64(e->count, 1 + (i % 10 == 0) + (i == 0));
		CHECK_EQ_U64(e->timed, (i < PEND_MAX_TEST) + (i == 0));
		if (i == 0) {   /* two delays: exact */
			CHECK_EQ_U64(e->delay_p50_ns, polled - woke[0]);
			CHECK_EQ_U64(e->delay_p99_ns, 5000000000ULL);
			CHECK_EQ_U64(e->delay_max_ns, 5000000000ULL);
		} else if (i < PEND_MAX_TEST) {
			CHECK_EQ_U64(e->delay_p50_ns, polled - woke[i]);
			CHECK_EQ_U64(e->delay_max_ns, polled - woke[i]);
		} else {
			CHECK_EQ_U64(e->delay_max_ns, 0);
		}
	}
	CHECK_EQ_U64(task(a, 1)->wakes, N_W + N_W / 10 + 1);
	analysis__free(a);
}

/* Timeline on a hand-built stream: 10 buckets of 100 ns over [0, 1000). */
static void test_timeline(void)
{
	struct analysis *a;
	struct timeline *tl;
	struct timeline_opts to = { .buckets = 10, .top_tasks = 1 };
	size_t n;

	/* Run twice over the same events: pass 1 analysis, pass 2 timeline. */
	#define STREAM(x) do { \
		thread(x, 1, 0, "w1"); \
		wake(x, 9, 0, 0x100, 0);             /* T runnable 0..50 */ \
		wake(x, 9, 20, 0x200, 0);            /* U runnable 20..250 */ \
		begin(x, 1, 50, 0x100, P_USER, 1);   /* T runs 50..250 on 1 */ \
		end(x, 1, 250, 0x100, 0);            /* idle 250..600 */ \
		begin(x, 1, 250, 0x200, P_USER2, 2); /* U runs 250..300 */ \
		end(x, 1, 300, 0x200, 1); \
		park(x, 1, 300, 1);                  /* parked 300..700 */ \
		park(x, 1, 700, 0); \
		wake(x, 9, 600, 0x100, 0);           /* T runnable 600..720 */ \
		begin(x, 1, 720, 0x100, P_USER, 1);  /* runs 720..1000 (end) */ \
	} while (0)
	a = new_a();
	STREAM(a);
	finish(a, 1000, 0, 0);
	tl = timeline__new(a, &meta, &to);
	CHECK(tl != NULL);
	if (!tl) {
		analysis__free(a);
		return;
	}
	struct timeline *x = tl;
	struct as_trace_end e = { .end_ns = 1000 };
	#define TL_ADD(type_, tid_, ts_, task_, other_, probe_, flags_, str_) do { \
		struct as_event ev_ = { .type = type_, .flags = flags_, .probe = probe_, \
			.tid = tid_, .ts = ts_, .task = task_, .other = other_, .str = str_ }; \
		CHECK_EQ_U64(timeline__add(x, &ev_), 0); } while (0)
	TL_ADD(AS_EV_THREAD, 1, 0, 0, 0, 0, 0, "w1");
	TL_ADD(AS_EV_WAKE, 9, 0, 0x100, 0, 0, 0, NULL);
	TL_ADD(AS_EV_WAKE, 9, 20, 0x200, 0, 0, 0, NULL);
	TL_ADD(AS_EV_POLL_BEGIN, 1, 50, 0x100, 1, P_USER, 0, NULL);
	TL_ADD(AS_EV_POLL_END, 1, 250, 0x100, 0, 0, 0, NULL);
	TL_ADD(AS_EV_POLL_BEGIN, 1, 250, 0x200, 2, P_USER2, 0, NULL);
	TL_ADD(AS_EV_POLL_END, 1, 300, 0x200, 0, 0, AS_POLL_READY, NULL);
	TL_ADD(AS_EV_PARK, 1, 300, 0, 0, 0, 0, NULL);
	TL_ADD(AS_EV_UNPARK, 1, 700, 0, 0, 0, 0, NULL);
	TL_ADD(AS_EV_WAKE, 9, 600, 0x100, 0, 0, 0, NULL);
	TL_ADD(AS_EV_POLL_BEGIN, 1, 720, 0x100, 1, P_USER, 0, NULL);
	CHECK_EQ_U64(timeline__finish(tl, &e), 0);
	CHECK_EQ_U64(timeline__finish(tl, &e), -EINVAL);

	CHECK_EQ_U64(timeline__start_ns(tl), 0);
	CHECK_EQ_U64(timeline__bucket_ns(tl), 100);
	CHECK_EQ_U64(timeline__buckets(tl), 10);
	const struct timeline_worker *w = timeline__workers(tl, &n);
	CHECK_EQ_U64(n, 1);
	static const uint64_t busy[10] = { 50, 100, 100, 0, 0, 0, 0, 80, 100, 100 };
	static const uint64_t parked[10] = { 0, 0, 0, 100, 100, 100, 100, 0, 0, 0 };
	static const uint64_t idle[10] = { 50, 0, 0, 0, 0, 0, 0, 20, 0, 0 };
	static const uint64_t polls[10] = { 1, 0, 1, 0, 0, 0, 0, 1, 0, 0 };
	static const uint64_t rmax[10] = { 2, 1, 1, 0, 0, 0, 1, 1, 0, 0 };
	static const double ravg[10] = { 1.3, 1, 0.5, 0, 0, 0, 1, 0.2, 0, 0 };
	static const double run[10] = { 0.5, 1, 0.5, 0, 0, 0, 0, 0.8, 1, 1 };
	static const double sch[10] = { 0.5, 0, 0, 0, 0, 0, 1, 0.2, 0, 0 };
	static const double idl[10] = { 0, 0, 0.5, 1, 1, 1, 0, 0, 0, 0 };
	const uint64_t *mx = timeline__runnable_max(tl);
	const double *av = timeline__runnable_avg(tl);
	const struct timeline_task *t = timeline__tasks(tl, &n);
	CHECK_EQ_U64(n, 1);
	CHECK(n == 1 && t[0].seq == 1);
	for (int i = 0; i < 10 && w && t; i++) {
		CHECK_EQ_U64(w[0].busy_ns[i], busy[i]);
		CHECK_EQ_U64(w[0].parked_ns[i], parked[i]);
		CHECK_EQ_U64(w[0].idle_ns[i], idle[i]);
		CHECK_EQ_U64(w[0].polls[i], polls[i]);
		CHECK_EQ_U64(mx[i], rmax[i]);
		CHECK(av[i] > ravg[i] - 1e-9 && av[i] < ravg[i] + 1e-9);
		CHECK(t[0].running[i] > run[i] - 1e-9 && t[0].running[i] < run[i] + 1e-9);
		CHECK(t[0].scheduled[i] > sch[i] - 1e-9 && t[0].scheduled[i] < sch[i] + 1e-9);
		CHECK(t[0].idle[i] > idl[i] - 1e-9 && t[0].idle[i] < idl[i] + 1e-9);
		if (mx[i] != rmax[i] || !(av[i] > ravg[i] - 1e-9 && av[i] < ravg[i] + 1e-9))
			fprintf(stderr, "bucket %d: max %llu avg %f\n", i, (unsigned long long)mx[i], av[i]);
	}
	timeline__free(tl);
	analysis__free(a);
	#undef STREAM
	#undef TL_ADD
}

/* A million short-lived tasks: the live map and the histograms stay small,
 * the rows stop at max_tasks (the rest folded into one group), and so do the
 * wake edges: one compact edge per kept row, one group edge for the rest. */
static void test_bounded_memory(void)
{
	struct analysis *a = new_a();
	struct analysis_mem m;
	uint64_t ts = 0, peak_live = 0, peak_hist = 0;
	const uint64_t N = 1000000;

	for (uint64_t i = 0; i < N; i++) {
		uint64_t h = 0x10000 + (i % 64) * 64;

		wake(a, 1, ts += 10, h, 0);
		/* the first tasks poll enough to leave the inline values (dense
		 * histograms), the rest poll once (time) */
		int polls = i < 20000 ? 6 : 1;

		for (int k = 0; k < polls; k++) {
			begin(a, 2, ts += 10, h, P_USER, i + 1);
			wake(a, 2, ts += 1 + (i % 7) * 1000, h, 0x77);
			end(a, 2, ts += 5, h, k == polls - 1);
		}
		free_ev(a, 2, ts += 1, h);
		if (i % 4096 == 0) {
			analysis__mem(a, &m);
			if (m.live_tasks > peak_live)
				peak_live = m.live_tasks;
			if (m.live_hist_bytes > peak_hist)
				peak_hist = m.live_hist_bytes;
		}
	}
	analysis__mem(a, &m);
	CHECK(peak_live <= 64);
	CHECK(peak_hist <= 64 * 3 * 16 * 1024);
	CHECK_EQ_U64(m.rows, ANALYSIS_MAX_TASKS);
	CHECK_EQ_U64(m.folded_tasks, N - ANALYSIS_MAX_TASKS);
	CHECK_EQ_U64(m.groups, 1);
	/* one edge per task (runtime -> it: 0x77 is no task seen), folded when
	 * the task went: a compact one per kept row, the folded tasks' merged
	 * into one group edge (runtime -> the group) */
	CHECK_EQ_U64(m.edges, ANALYSIS_MAX_TASKS + 1);
	CHECK_EQ_U64(m.group_edges, 1);
	CHECK_EQ_U64(m.live_edges, 0);
	CHECK(m.edge_bytes < 4u << 20);
	CHECK(m.bytes < 16u << 20);
	finish(a, ts + 1, 0, 0);
	analysis__mem(a, &m);
	CHECK_EQ_U64(m.live_tasks, 0);
	CHECK_EQ_U64(m.live_hist_bytes, 0);
	CHECK_EQ_U64(analysis__dist(a, DIST_POLL)->count, N + 5 * 20000);
	size_t n;
	const struct wake_edge *e = analysis__edges(a, &n);
	uint64_t wakes = 0, tasks = 0, group = 0;
	CHECK_EQ_U64(n, ANALYSIS_MAX_TASKS + 1);
	for (size_t i = 0; i < n; i++) {
		CHECK(e[i].from_kind == WAKE_FROM_RUNTIME && e[i].from_group == 0);
		wakes += e[i].count;
		tasks += e[i].tasks;
		if (e[i].to_group) {
			CHECK_EQ_U64(e[i].to_seq, 0);
			group++;
		}
	}
	CHECK_EQ_U64(group, 1);
	CHECK_EQ_U64(wakes, N + 5 * 20000);
	CHECK_EQ_U64(tasks, N);
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
	RUN(test_free_inside_own_poll);
	RUN(test_summary_and_api);
	RUN(test_many);
	RUN(test_idle_worker);
	RUN(test_distributions);
	RUN(test_long_polls);
	RUN(test_stalls);
	RUN(test_starved);
	RUN(test_edges);
	RUN(test_edges_unsampled);
	RUN(test_edges_many_wakers);
	RUN(test_timeline);
	RUN(test_bounded_memory);
	TEST_MAIN_END();
}
