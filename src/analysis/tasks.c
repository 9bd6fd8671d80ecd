/* tasks: the task analysis (see tasks.h). State machine per live task (kept
 * in a map keyed by header, freed at FREE) and per thread (a stack of polls in
 * progress, a pending spawn site, a park in progress); final per-task numbers
 * go to a compact array indexed by seq - 1. Strings kept are interned once
 * (util/strtab).
 * Pure C: no libbpf, no I/O, no globals. */
#include "analysis/tasks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/strtab.h"
#include "util/u64map.h"

enum live_state { LIVE_RUNNING, LIVE_RUNNABLE, LIVE_IDLE, LIVE_COMPLETED };

/* A task whose header has not been freed yet. */
struct live {
	size_t idx;            /* into a->tasks */
	enum live_state state;
	uint32_t run_tid;      /* LIVE_RUNNING: thread whose stack holds its poll */
	bool woken_in_poll;    /* woken while running: runnable when the poll ends */
	uint64_t since;        /* LIVE_RUNNABLE: sched clock start; LIVE_IDLE: idle start */
	/* Time of its leaf polls charged to worker threads, taken back if the
	 * task turns out to be a worker (a poll nests inside a later poll of it). */
	uint64_t leaf_ns, leaf_polls;
	uint32_t leaf_tid;
	bool leaf_mixed;       /* leaf polls on more than one thread */
};

/* A poll in progress on a thread. */
struct frame {
	uint64_t header;
	size_t idx;            /* into a->tasks */
	uint64_t begin;
	bool nested;           /* another poll began inside it */
};

struct thread {
	uint32_t tid;
	bool worker;           /* polled a task or parked: listed in the results */
	struct frame *stack;
	size_t depth, cap;
	bool spawn_pending;
	const char *spawn_file;
	uint32_t spawn_line, spawn_col;
	uint64_t spawn_parent;
	bool parked;
	uint64_t park_start;
	struct worker_stats st; /* st.name is interned */
};

struct analysis {
	struct as_trace_meta meta;        /* shallow copy: probes read in add() only */
	bool has_meta, finished;

	struct task_stats *tasks;
	size_t n_tasks, cap_tasks;
	struct u64map live;               /* header -> struct live * */

	struct thread *threads;
	size_t n_threads, cap_threads;
	struct u64map thread_of;          /* tid + 1 -> index + 1 into threads */

	struct strtab strs;               /* interned strings (names, files) */

	struct worker_stats *workers;
	size_t n_workers;
	struct summary sum;
	bool seen_event;
	uint64_t last_ts;                 /* largest timestamp seen */
};

const char *task_kind__str(enum task_kind kind)
{
	return kind == TASK_KIND_WORKER ? "worker" : "task";
}

const char *task_state__str(enum task_state state)
{
	switch (state) {
	case TASK_STATE_COMPLETED: return "completed";
	case TASK_STATE_RUNNING: return "running";
	case TASK_STATE_RUNNABLE: return "runnable";
	case TASK_STATE_IDLE: return "idle";
	}
	return "unknown";
}

/* Growth of a (pointer, len, cap) array by one element. */
static int reserve(void **arr, size_t *cap, size_t len, size_t size)
{
	size_t ncap;
	void *p;

	if (len < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	p = realloc(*arr, ncap * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

/* b - a, or 0 (and an anomaly) if the events came out of order. */
static uint64_t span(struct analysis *a, uint64_t from, uint64_t to)
{
	if (to >= from)
		return to - from;
	a->sum.anomalies++;
	return 0;
}

/* Returns the copy of s owned by a (one per distinct string), NULL for NULL s,
 * or NULL with *err set (-ENOMEM). */
static const char *intern(struct analysis *a, const char *s, int *err)
{
	size_t len;
	uint32_t idx;
	int ret;

	if (!s)
		return NULL;
	len = strlen(s);
	if (!strtab__find(&a->strs, s, len, &idx)) {
		ret = strtab__add(&a->strs, s, len, &idx);
		if (ret) {
			*err = ret;
			return NULL;
		}
	}
	return strtab__get(&a->strs, idx);
}

static struct thread *thread_get(struct analysis *a, uint32_t tid)
{
	uint64_t v;
	struct thread *t;

	if (u64map__get(&a->thread_of, (uint64_t)tid + 1, &v))
		return &a->threads[v - 1];
	if (reserve((void **)&a->threads, &a->cap_threads, a->n_threads, sizeof(*a->threads)))
		return NULL;
	if (u64map__set(&a->thread_of, (uint64_t)tid + 1, a->n_threads + 1))
		return NULL;
	t = &a->threads[a->n_threads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->st.tid = tid;
	return t;
}

static struct thread *thread_find(struct analysis *a, uint32_t tid)
{
	uint64_t v;

	if (u64map__get(&a->thread_of, (uint64_t)tid + 1, &v))
		return &a->threads[v - 1];
	return NULL;
}

static struct live *live_get(struct analysis *a, uint64_t header)
{
	uint64_t v;

	if (u64map__get(&a->live, header, &v))
		return (struct live *)(uintptr_t)v;
	return NULL;
}

/* Starts a new task for header; returns its live state or NULL (-ENOMEM). */
static struct live *task_new(struct analysis *a, uint64_t header, uint64_t ts)
{
	struct live *l = NULL;
	struct task_stats *st;

	if (reserve((void **)&a->tasks, &a->cap_tasks, a->n_tasks, sizeof(*a->tasks)))
		return NULL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	if (u64map__set(&a->live, header, (uint64_t)(uintptr_t)l)) {
		free(l);
		return NULL;
	}
	st = &a->tasks[a->n_tasks];
	memset(st, 0, sizeof(*st));
	st->seq = a->n_tasks + 1;
	st->header = header;
	st->first_ns = st->last_ns = ts;
	l->idx = a->n_tasks++;
	return l;
}

/* The task is gone (FREE, or its address reused without a FREE). */
static void task_retire(struct analysis *a, uint64_t header, struct live *l)
{
	a->tasks[l->idx].state = TASK_STATE_COMPLETED;
	u64map__del(&a->live, header);
	free(l);
}

static void touch(struct task_stats *st, uint64_t ts)
{
	if (ts > st->last_ns)
		st->last_ns = ts;
}

enum poll_end { END_PENDING, END_READY, END_CUT, END_TRACE };

/* Accounts the poll of frame f on thread t ending at ts. END_CUT: its end was
 * never seen (an inner or outer poll ended first, or the task was freed or
 * polled again); END_TRACE: still running when the trace ended. */
static void poll_close(struct analysis *a, struct thread *t, const struct frame *f,
		       uint64_t ts, enum poll_end how)
{
	struct task_stats *st = &a->tasks[f->idx];
	struct live *l = live_get(a, f->header);
	uint64_t d = span(a, f->begin, ts);

	if (l && l->idx != f->idx)
		l = NULL;
	st->busy_ns += d;
	if (d > st->max_poll_ns)
		st->max_poll_ns = d;
	if (!f->nested && st->kind == TASK_KIND_TASK) {
		t->st.busy_ns += d;
		t->st.polls++;
		if (l) {
			if (l->leaf_polls && l->leaf_tid != t->tid)
				l->leaf_mixed = true;
			l->leaf_tid = t->tid;
			l->leaf_ns += d;
			l->leaf_polls++;
		}
	}
	if (how != END_TRACE)
		touch(st, ts);
	if (how == END_CUT || how == END_TRACE) {
		if (how == END_CUT)
			a->sum.anomalies++;
		if (l && how == END_CUT && l->state == LIVE_RUNNING) {
			/* Unknown outcome: assume Pending. */
			l->state = l->woken_in_poll ? LIVE_RUNNABLE : LIVE_IDLE;
			l->since = ts;
			l->woken_in_poll = false;
		}
		return;
	}
	if (how == END_READY) {
		st->ready_polls++;
		if (l)
			l->state = LIVE_COMPLETED;
		return;
	}
	st->pending_polls++;
	if (!l)
		return;
	l->state = l->woken_in_poll ? LIVE_RUNNABLE : LIVE_IDLE;
	l->since = ts;
	l->woken_in_poll = false;
}

/* Removes frame i from t's stack, closing it as cut short at ts. */
static void frame_drop(struct analysis *a, struct thread *t, size_t i, uint64_t ts)
{
	struct frame f = t->stack[i];

	memmove(&t->stack[i], &t->stack[i + 1], (t->depth - i - 1) * sizeof(*t->stack));
	t->depth--;
	poll_close(a, t, &f, ts, END_CUT);
}

/* A running task's poll must be closed (freed or polled again while running). */
static void unrun(struct analysis *a, uint64_t header, struct live *l, uint64_t ts)
{
	struct thread *t = thread_find(a, l->run_tid);

	if (t)
		for (size_t i = t->depth; i-- > 0;)
			if (t->stack[i].header == header) {
				frame_drop(a, t, i, ts);
				return;
			}
	a->sum.anomalies++;
	l->state = LIVE_IDLE;
	l->since = ts;
}

/* The task in stats slot idx turned out to be a worker: take back the time
 * its earlier polls were charged to threads as user-task time. */
static void make_worker(struct analysis *a, const struct frame *f)
{
	struct task_stats *st = &a->tasks[f->idx];
	struct live *l = live_get(a, f->header);
	struct thread *t;

	if (st->kind == TASK_KIND_WORKER)
		return;
	st->kind = TASK_KIND_WORKER;
	if (!l || !l->leaf_polls)
		return;
	t = l->leaf_mixed ? NULL : thread_find(a, l->leaf_tid);
	if (t && t->st.polls >= l->leaf_polls && t->st.busy_ns >= l->leaf_ns) {
		t->st.polls -= l->leaf_polls;
		t->st.busy_ns -= l->leaf_ns;
	} else {
		a->sum.anomalies++;
	}
	l->leaf_polls = l->leaf_ns = 0;
}

static int on_poll_begin(struct analysis *a, const struct as_event *ev)
{
	struct thread *t = thread_get(a, ev->tid);
	struct live *l;
	struct task_stats *st;
	int err = 0;

	if (!t)
		return -ENOMEM;
	t->worker = true;
	l = live_get(a, ev->task);
	if (l && l->state == LIVE_COMPLETED) {
		/* Polled after completing: its FREE was lost and the address reused. */
		a->sum.anomalies++;
		task_retire(a, ev->task, l);
		l = NULL;
	}
	if (l && l->state == LIVE_RUNNING) {
		unrun(a, ev->task, l, ev->ts);
		t = thread_find(a, ev->tid);
	}
	if (!l) {
		l = task_new(a, ev->task, ev->ts);
		if (!l)
			return -ENOMEM;
	} else if (l->state == LIVE_RUNNABLE) {
		a->tasks[l->idx].sched_ns += span(a, l->since, ev->ts);
	} else if (l->state == LIVE_IDLE) {
		a->tasks[l->idx].idle_ns += span(a, l->since, ev->ts);
	}
	if (reserve((void **)&t->stack, &t->cap, t->depth, sizeof(*t->stack)))
		return -ENOMEM;
	st = &a->tasks[l->idx];
	if (!st->polls && !st->name && a->has_meta && ev->probe < a->meta.n_probes &&
	    a->meta.probes) {
		st->name = intern(a, a->meta.probes[ev->probe].future, &err);
		if (err)
			return err;
	}
	if (!st->tokio_id && ev->other)
		st->tokio_id = ev->other;
	st->polls++;
	touch(st, ev->ts);
	if (t->depth) {
		t->stack[t->depth - 1].nested = true;
		make_worker(a, &t->stack[t->depth - 1]);
	}
	t->stack[t->depth++] = (struct frame){
		.header = ev->task, .idx = l->idx, .begin = ev->ts,
	};
	l->state = LIVE_RUNNING;
	l->run_tid = ev->tid;
	l->woken_in_poll = false;
	return 0;
}

static int on_poll_end(struct analysis *a, const struct as_event *ev)
{
	struct thread *t = thread_get(a, ev->tid);
	size_t i;

	if (!t)
		return -ENOMEM;
	t->spawn_pending = false;
	for (i = t->depth; i-- > 0;)
		if (t->stack[i].header == ev->task)
			break;
	if (i == (size_t)-1) {
		a->sum.anomalies++; /* begin not seen (attached mid-poll) or lost */
		return 0;
	}
	while (t->depth > i + 1)
		frame_drop(a, t, t->depth - 1, ev->ts);
	t->depth--;
	poll_close(a, t, &t->stack[i], ev->ts,
		   (ev->flags & AS_POLL_READY) ? END_READY : END_PENDING);
	return 0;
}

static int on_wake(struct analysis *a, const struct as_event *ev)
{
	struct live *l = live_get(a, ev->task);
	struct task_stats *st;
	struct thread *t;

	if (!l) {
		/* First sight: the spawn-time schedule, not a wake. */
		t = thread_get(a, ev->tid);
		if (!t)
			return -ENOMEM;
		l = task_new(a, ev->task, ev->ts);
		if (!l)
			return -ENOMEM;
		st = &a->tasks[l->idx];
		st->spawned_in_trace = true;
		if (t->spawn_pending) {
			st->spawn_file = t->spawn_file;
			st->spawn_line = t->spawn_line;
			st->spawn_col = t->spawn_col;
			st->parent = t->spawn_parent;
			t->spawn_pending = false;
		}
		l->state = LIVE_RUNNABLE;
		l->since = ev->ts;
		return 0;
	}
	st = &a->tasks[l->idx];
	touch(st, ev->ts);
	if (l->state == LIVE_COMPLETED) {
		a->sum.anomalies++;
		return 0;
	}
	st->wakes++;
	if (ev->other == ev->task)
		st->self_wakes++;
	switch (l->state) {
	case LIVE_IDLE:
		st->idle_ns += span(a, l->since, ev->ts);
		l->state = LIVE_RUNNABLE;
		l->since = ev->ts;
		break;
	case LIVE_RUNNING:
		l->woken_in_poll = true;
		break;
	default:
		break; /* already runnable: the clock keeps running */
	}
	return 0;
}

static int on_spawn(struct analysis *a, const struct as_event *ev)
{
	struct thread *t = thread_get(a, ev->tid);
	int err = 0;

	if (!t)
		return -ENOMEM;
	t->spawn_file = intern(a, ev->str, &err);
	if (err)
		return err;
	t->spawn_pending = true;
	t->spawn_line = (uint32_t)(ev->other >> 32);
	t->spawn_col = (uint32_t)ev->other;
	t->spawn_parent = t->depth ? a->tasks[t->stack[t->depth - 1].idx].seq : 0;
	return 0;
}

static int on_free(struct analysis *a, const struct as_event *ev)
{
	struct live *l = live_get(a, ev->task);
	struct task_stats *st;

	if (!l)
		return 0; /* never seen: existed before the recording, never ran in it */
	st = &a->tasks[l->idx];
	if (l->state == LIVE_RUNNING)
		unrun(a, ev->task, l, ev->ts);
	if (l->state == LIVE_IDLE)
		st->idle_ns += span(a, l->since, ev->ts);
	touch(st, ev->ts);
	task_retire(a, ev->task, l);
	return 0;
}

static int on_thread(struct analysis *a, const struct as_event *ev)
{
	struct thread *t = thread_get(a, ev->tid);
	int err = 0;

	if (!t)
		return -ENOMEM;
	if (!t->st.name)
		t->st.name = intern(a, ev->str, &err);
	return err;
}

static int on_park(struct analysis *a, const struct as_event *ev, bool park)
{
	struct thread *t = thread_get(a, ev->tid);

	if (!t)
		return -ENOMEM;
	t->worker = true;
	if (park) {
		if (t->parked) {
			a->sum.anomalies++; /* keep the first PARK */
			return 0;
		}
		t->parked = true;
		t->park_start = ev->ts;
		t->st.parks++;
		return 0;
	}
	if (!t->parked) {
		a->sum.anomalies++; /* parked before the recording started, or PARK lost */
		return 0;
	}
	t->st.parked_ns += span(a, t->park_start, ev->ts);
	t->parked = false;
	return 0;
}

struct analysis *analysis__new(const struct as_trace_meta *meta)
{
	struct analysis *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	if (meta) {
		a->meta = *meta;
		a->has_meta = true;
	}
	return a;
}

int analysis__add(struct analysis *a, const struct as_event *ev)
{
	if (!a || !ev || a->finished)
		return -EINVAL;
	a->sum.events++;
	if (!a->seen_event || ev->ts < a->sum.start_ns)
		a->sum.start_ns = ev->ts;
	if (!a->seen_event || ev->ts > a->last_ts)
		a->last_ts = ev->ts;
	a->seen_event = true;

	switch (ev->type) {
	case AS_EV_THREAD:
		return on_thread(a, ev);
	case AS_EV_SPAWN:
		return on_spawn(a, ev);
	case AS_EV_PARK:
		return on_park(a, ev, true);
	case AS_EV_UNPARK:
		return on_park(a, ev, false);
	case AS_EV_POLL_BEGIN:
	case AS_EV_POLL_END:
	case AS_EV_WAKE:
	case AS_EV_FREE:
		if (ev->task == 0 || ev->task == UINT64_MAX) {
			a->sum.anomalies++;
			return 0;
		}
		if (ev->type == AS_EV_POLL_BEGIN)
			return on_poll_begin(a, ev);
		if (ev->type == AS_EV_POLL_END)
			return on_poll_end(a, ev);
		if (ev->type == AS_EV_WAKE)
			return on_wake(a, ev);
		return on_free(a, ev);
	default:
		a->sum.anomalies++;
		return 0;
	}
}

int analysis__finish(struct analysis *a, const struct as_trace_end *end)
{
	struct summary *s;
	uint64_t end_ns;

	if (!a || a->finished)
		return -EINVAL;
	s = &a->sum;
	end_ns = end ? end->end_ns : a->last_ts;
	if (!a->seen_event)
		s->start_ns = a->has_meta && a->meta.clock_mono_ns ? a->meta.clock_mono_ns : end_ns;
	if (a->has_meta && a->meta.clock_mono_ns && a->meta.clock_mono_ns < s->start_ns)
		s->start_ns = a->meta.clock_mono_ns;
	s->end_ns = end_ns;
	s->duration_ns = end_ns > s->start_ns ? end_ns - s->start_ns : 0;
	if (end) {
		s->lost = end->lost;
		s->missed = end->missed;
	}

	/* Polls still in progress: innermost first, so nesting is already known. */
	for (size_t i = 0; i < a->n_threads; i++) {
		struct thread *t = &a->threads[i];

		while (t->depth) {
			t->depth--;
			poll_close(a, t, &t->stack[t->depth], end_ns, END_TRACE);
		}
		if (t->parked) {
			t->st.parked_ns += span(a, t->park_start, end_ns);
			t->parked = false;
		}
	}
	/* Live tasks: state at the end. */
	for (size_t i = 0; i < a->live.cap; i++) {
		uint64_t k = a->live.keys[i];
		struct live *l;
		struct task_stats *st;

		if (k == 0 || k == UINT64_MAX)
			continue;
		l = (struct live *)(uintptr_t)a->live.vals[i];
		st = &a->tasks[l->idx];
		switch (l->state) {
		case LIVE_RUNNING:
			st->state = TASK_STATE_RUNNING;
			break;
		case LIVE_RUNNABLE:
			st->state = TASK_STATE_RUNNABLE;
			break;
		case LIVE_IDLE:
			st->state = TASK_STATE_IDLE;
			st->idle_ns += span(a, l->since, end_ns);
			break;
		case LIVE_COMPLETED:
			st->state = TASK_STATE_COMPLETED;
			break;
		}
	}
	for (size_t i = 0; i < a->n_tasks; i++) {
		struct task_stats *st = &a->tasks[i];

		st->mean_poll_ns = st->polls ? st->busy_ns / st->polls : 0;
		s->tasks++;
		s->polls += st->polls;
		if (st->kind == TASK_KIND_WORKER) {
			s->worker_tasks++;
		} else {
			s->user_tasks++;
			s->user_polls += st->polls;
		}
	}

	a->workers = calloc(a->n_threads ? a->n_threads : 1, sizeof(*a->workers));
	if (!a->workers)
		return -ENOMEM;
	for (size_t i = 0; i < a->n_threads; i++)
		if (a->threads[i].worker)
			a->workers[a->n_workers++] = a->threads[i].st;
	s->workers = a->n_workers;
	a->finished = true;
	return 0;
}

const struct task_stats *analysis__tasks(const struct analysis *a, size_t *n)
{
	*n = a && a->finished ? a->n_tasks : 0;
	return a && a->finished ? a->tasks : NULL;
}

const struct worker_stats *analysis__workers(const struct analysis *a, size_t *n)
{
	*n = a && a->finished ? a->n_workers : 0;
	return a && a->finished ? a->workers : NULL;
}

const struct summary *analysis__summary(const struct analysis *a)
{
	return a && a->finished ? &a->sum : NULL;
}

void analysis__free(struct analysis *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->live.cap; i++) {
		uint64_t k = a->live.keys[i];

		if (k != 0 && k != UINT64_MAX)
			free((void *)(uintptr_t)a->live.vals[i]);
	}
	u64map__clear(&a->live);
	for (size_t i = 0; i < a->n_threads; i++)
		free(a->threads[i].stack);
	free(a->threads);
	u64map__clear(&a->thread_of);
	strtab__clear(&a->strs);
	free(a->tasks);
	free(a->workers);
	free(a);
}
