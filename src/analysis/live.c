/* Live task model for `top`: current states and per-window rates. An
 * observer of the task model (task_model.h), which owns the rules of a
 * task's life (seqs, nesting marking the runtime's worker task, the first
 * schedule of a new task being its spawn, a task freed inside its own poll
 * going when the poll ends, wake sources): this file only keeps what the
 * view shows, per task a row in an array (found by header while the task
 * lives) kept LIVE_KEEP_DONE_NS after it ends, per thread a worker line. */
#include "analysis/live.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/task_model.h"
#include "util/u64map.h"

struct live {
	const struct as_trace_meta *meta;
	struct task_model *model;
	bool own_model;
	int err;                      /* first -ENOMEM of a callback */
	struct live_task *tasks;
	size_t n_tasks, cap_tasks;
	struct u64map by_header;      /* header -> index + 1, tasks not done */
	struct live_worker *workers;
	size_t n_workers, cap_workers;
	struct u64map by_tid;         /* tid + 1 -> index + 1 */
	uint64_t win_start;           /* open rate window start (0: first event) */
	uint64_t win_events;
	struct live_summary sum;
};

const char *live_task__name(const struct live_task *t)
{
	return t->name ? t->name : t->name_buf[0] ? t->name_buf : NULL;
}

const char *live_state__str(enum live_state s)
{
	static const char *const names[] = { "runnable", "running", "idle", "done" };
	return s <= LIVE_ST_DONE ? names[s] : "?";
}

static struct live_task *task_find(struct live *l, uint64_t header)
{
	uint64_t idx;

	return u64map__get(&l->by_header, header, &idx) ? &l->tasks[idx - 1] : NULL;
}

/* The row of model task mt, or NULL (done: a waker outliving it). */
static struct live_task *row(struct live *l, const struct tm_task *mt)
{
	struct live_task *t = task_find(l, mt->header);

	return t && t->seq == mt->seq ? t : NULL;
}

static struct live_task *task_new(struct live *l, const struct tm_task *mt, uint64_t ts)
{
	if (l->n_tasks == l->cap_tasks) {
		size_t cap = l->cap_tasks ? l->cap_tasks * 2 : 64;
		struct live_task *t = realloc(l->tasks, cap * sizeof(*t));
		if (!t)
			return NULL;
		l->tasks = t;
		l->cap_tasks = cap;
	}
	if (u64map__set(&l->by_header, mt->header, l->n_tasks + 1))
		return NULL;
	struct live_task *t = &l->tasks[l->n_tasks++];
	memset(t, 0, sizeof(*t));
	t->seq = mt->seq;
	t->header = mt->header;
	t->state = LIVE_ST_RUNNABLE;
	t->since = ts;
	return t;
}

static struct live_worker *worker_get(struct live *l, uint32_t tid)
{
	uint64_t idx;

	if (u64map__get(&l->by_tid, (uint64_t)tid + 1, &idx))
		return &l->workers[idx - 1];
	if (l->n_workers == l->cap_workers) {
		size_t cap = l->cap_workers ? l->cap_workers * 2 : 16;
		struct live_worker *w = realloc(l->workers, cap * sizeof(*w));
		if (!w)
			return NULL;
		l->workers = w;
		l->cap_workers = cap;
	}
	if (u64map__set(&l->by_tid, (uint64_t)tid + 1, l->n_workers + 1))
		return NULL;
	struct live_worker *w = &l->workers[l->n_workers++];
	memset(w, 0, sizeof(*w));
	w->tid = tid;
	return w;
}

static void nomem(struct live *l)
{
	if (!l->err)
		l->err = -ENOMEM;
}

/* Part of [from, to) inside the open window. */
static uint64_t in_window(const struct live *l, uint64_t from, uint64_t to)
{
	if (from < l->win_start)
		from = l->win_start;
	return to > from ? to - from : 0;
}

static void finish_task(struct live_task *t, uint64_t ts)
{
	t->state = LIVE_ST_DONE;
	t->since = ts;
}

/* ------------------------------------------- observer of the task model */

static void on_born(void *ctx, struct tm_task *mt, struct tm_thread *th, const struct as_event *ev)
{
	struct live *l = ctx;
	struct live_task *t = task_new(l, mt, ev->ts);

	if (!t) {
		nomem(l);
		return;
	}
	if (mt->spawn_file)
		snprintf(t->spawn, sizeof(t->spawn), "%s:%llu", mt->spawn_file,
			 (unsigned long long)mt->spawn_line);
	/* the view's tree hangs tasks under user tasks only */
	if (mt->parent && !(th && th->depth && th->stack[th->depth - 1].task->seq == mt->parent &&
			    th->stack[th->depth - 1].task->worker))
		t->parent = mt->parent;
	if (ev->type == AS_EV_WAKE)
		t->woken_at = ev->ts;
	else if (!ev->type)
		t->state = LIVE_ST_IDLE; /* known from memory (task_model__adopt()) */
}

static void on_worker(void *ctx, struct tm_task *mt)
{
	struct live_task *t = row(ctx, mt);

	if (t)
		t->worker = true;
}

static void on_poll_begin(void *ctx, struct tm_task *mt, struct tm_thread *th,
			  const struct as_event *ev)
{
	struct live *l = ctx;
	struct live_task *t = row(l, mt);

	(void)th;
	if (!t)
		return;
	if (!t->name && l->meta && ev->probe < l->meta->n_probes)
		t->name = l->meta->probes[ev->probe].future;
	if (!t->tokio_id)
		t->tokio_id = mt->tokio_id;
	t->worker = mt->worker;
	t->pool = mt->name_kind & TM_NAME_POOL;
	if (t->woken_at && ev->ts >= t->woken_at && hist__add(&t->sched_hist, ev->ts - t->woken_at))
		nomem(l);
	t->woken_at = 0;
	t->state = LIVE_ST_RUNNING;
	t->since = ev->ts;
	t->run_begin = ev->ts;
	/* the timer read from its memory is of before this poll: gone (its
	 * next stack read says the new one) */
	t->wakes_at = 0;
	t->wakers_known = false;
}

static void on_poll_end(void *ctx, struct tm_thread *th, const struct tm_frame *f, uint64_t ts,
			uint64_t d, enum tm_end how)
{
	struct live *l = ctx;
	struct live_task *t = row(l, f->task);
	struct live_worker *w;

	if (how == TM_TRACE_END || !t || t->state != LIVE_ST_RUNNING)
		return;
	t->polls++;
	t->w_polls++;
	t->busy_ns += d;
	t->w_busy += in_window(l, f->begin, ts);
	if (d > t->max_poll_ns)
		t->max_poll_ns = d;
	if (hist__add(&t->poll_hist, d))
		nomem(l);
	if (!t->worker && (w = worker_get(l, th->tid))) {
		w->polls++;
		w->w_busy += in_window(l, f->begin, ts);
	}
	if (how == TM_READY || f->task->free_pending) {
		finish_task(t, ts);
	} else if (f->task->woken_in_poll) {
		t->state = LIVE_ST_RUNNABLE;   /* woken while it ran */
		t->since = ts;
		t->woken_at = ts;
	} else {
		t->state = LIVE_ST_IDLE;
		t->since = ts;
		t->idle_exact = true;
	}
}

static void on_wake(void *ctx, struct tm_task *mt, const struct as_event *ev,
		    const struct tm_wake *w)
{
	struct live_task *t = row(ctx, mt);
	enum live_waker kind = LIVE_WAKER_THREAD;

	if (!t || t->state == LIVE_ST_DONE)
		return;   /* a waker outlived its finished task */
	switch (w->kind) {
	case TM_WAKER_IO: kind = LIVE_WAKER_IO; break;
	case TM_WAKER_TIMER: kind = LIVE_WAKER_TIMER; break;
	case TM_WAKER_THREAD: kind = LIVE_WAKER_THREAD; break;
	case TM_WAKER_RUNTIME: kind = LIVE_WAKER_RUNTIME; break;
	case TM_WAKER_TASK:
		kind = w->self ? LIVE_WAKER_SELF
		     : w->waker->worker ? LIVE_WAKER_RUNTIME : LIVE_WAKER_TASK;
		break;
	}
	/* woken again inside the poll that already woke it: one self wake */
	if (!(kind == LIVE_WAKER_SELF && w->again))
		t->waker_counts[kind]++;
	t->wakes++;
	t->w_wakes++;
	if (t->state == LIVE_ST_IDLE) {
		t->state = LIVE_ST_RUNNABLE;
		t->since = ev->ts;
		t->woken_at = ev->ts;
	} else if (t->state == LIVE_ST_RUNNING && !t->woken_at) {
		t->woken_at = ev->ts;
	}
}

static void on_gone(void *ctx, struct tm_task *mt, uint64_t ts, bool freed)
{
	struct live *l = ctx;
	struct live_task *t = row(l, mt);

	if (!t)
		return;
	t->freed = freed;
	if (t->state != LIVE_ST_DONE)
		finish_task(t, ts);
	u64map__del(&l->by_header, mt->header); /* the address may be reused */
}

static void on_park(void *ctx, struct tm_thread *th, uint64_t ts)
{
	struct live_worker *w = worker_get(ctx, th->tid);

	if (!w) {
		nomem(ctx);
		return;
	}
	w->parked = true;
	w->since = ts;
}

static void on_unpark(void *ctx, struct tm_thread *th, uint64_t begin, uint64_t ts, uint64_t d)
{
	struct live *l = ctx;
	struct live_worker *w = worker_get(l, th->tid);

	(void)begin;
	(void)d;
	if (!w || !w->parked)
		return;
	w->w_parked += in_window(l, w->since, ts);
	w->parked = false;
	w->since = ts;
}

/* mt is no longer followed (the live-task limit): its row goes at the next
 * tick. */
static void on_fold(void *ctx, struct tm_task *mt, uint64_t ts)
{
	struct live *l = ctx;
	struct live_task *t = row(l, mt);

	(void)ts;
	if (!t)
		return;
	finish_task(t, 0); /* done long ago: compact() drops it */
	u64map__del(&l->by_header, mt->header);
}

static const struct tm_ops observer_ops = {
	.born = on_born, .worker = on_worker, .poll_begin = on_poll_begin,
	.poll_end = on_poll_end, .wake = on_wake, .gone = on_gone, .park = on_park,
	.unpark = on_unpark, .fold = on_fold,
};

int live__set_max_live(struct live *l, size_t max_live)
{
	return l ? task_model__set_max_live(l->model, max_live) : -EINVAL;
}

struct live *live__new_on(struct task_model *m, const struct as_trace_meta *meta)
{
	struct live *l;
	int err;

	if (!m) {
		errno = EINVAL;
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->meta = meta;
	l->model = m;
	if ((err = task_model__observe(m, &observer_ops, l, 0, NULL, 0, NULL))) {
		free(l);
		errno = -err;
		return NULL;
	}
	return l;
}

struct live *live__new(const struct as_trace_meta *meta)
{
	struct task_model *m = task_model__new(meta);
	struct live *l = m ? live__new_on(m, meta) : NULL;

	if (!l) {
		task_model__free(m);
		errno = ENOMEM;
		return NULL;
	}
	l->own_model = true;
	return l;
}

int live__add(struct live *l, const struct as_event *ev)
{
	struct live_worker *w = worker_get(l, ev->tid);
	int err = 0;

	if (!w)
		return -ENOMEM;
	l->sum.events++;
	l->win_events++;
	if (!l->sum.first_ns || ev->ts < l->sum.first_ns)
		l->sum.first_ns = ev->ts;
	if (!l->win_start)
		l->win_start = ev->ts;
	if (ev->type == AS_EV_THREAD)
		snprintf(w->name, sizeof(w->name), "%s", ev->str ? ev->str : "");
	else if (ev->type == AS_EV_POLL_BEGIN || ev->type == AS_EV_PARK)
		w->polled = true;
	if (l->own_model)
		err = task_model__add(l->model, ev);
	if (!err)
		err = l->err;
	l->err = 0;
	return err;
}

int live__note_stack(struct live *l, uint64_t header, uint64_t tokio_id, const char *name,
		     const char *parked, const char *stack, uint64_t now_ns)
{
	struct live_task *t = task_find(l, header);
	struct tm_task *mt;
	int err;

	if (t && t->state == LIVE_ST_DONE)
		return 0;
	if (!t && task_model__is_folded(l->model, header))
		return 0;   /* no longer followed: not taken back */
	if (!t) {
		if ((err = task_model__adopt(l->model, header, now_ns, &mt)))
			return err;
		if (l->err) {
			l->err = 0;
			return -ENOMEM;
		}
		if (!(t = row(l, mt)))
			return 0;
	}
	if (!t->tokio_id)
		t->tokio_id = tokio_id;
	if (!t->name && name)
		snprintf(t->name_buf, sizeof(t->name_buf), "%s", name);
	snprintf(t->parked, sizeof(t->parked), "%s", parked ? parked : "");
	snprintf(t->stack, sizeof(t->stack), "%s", stack ? stack : "");
	return 0;
}

void live__note_wakeup(struct live *l, uint64_t header, uint64_t wakes_at_ns, bool wakers_known,
		       uint32_t wakers)
{
	struct live_task *t = task_find(l, header);

	if (t) {
		t->wakes_at = wakes_at_ns;
		t->wakers_known = wakers_known && t->state == LIVE_ST_IDLE;
		t->wakers = wakers;
	}
}

void live__set_lost(struct live *l, uint64_t lost, uint64_t missed)
{
	l->sum.lost = lost;
	l->sum.missed = missed;
}

/* Drops finished tasks older than LIVE_KEEP_DONE_NS; rebuilds the index. */
static void compact(struct live *l, uint64_t now)
{
	size_t o = 0;

	for (size_t i = 0; i < l->n_tasks; i++) {
		struct live_task *t = &l->tasks[i];
		if (t->state == LIVE_ST_DONE && now > t->since + LIVE_KEEP_DONE_NS) {
			hist__clear(&t->poll_hist);
			hist__clear(&t->sched_hist);
			continue;
		}
		if (o != i)
			l->tasks[o] = *t;
		o++;
	}
	if (o == l->n_tasks)
		return;
	l->n_tasks = o;
	u64map__clear(&l->by_header);
	/* rows of tasks the model still has (done ones too, until their FREE) */
	for (size_t i = 0; i < l->n_tasks; i++) {
		struct tm_task *mt = task_model__task(l->model, l->tasks[i].header);

		if (mt && mt->seq == l->tasks[i].seq)
			u64map__set(&l->by_header, l->tasks[i].header, i + 1);
	}
}

void live__tick(struct live *l, uint64_t now)
{
	uint64_t win = now > l->win_start ? now - l->win_start : 0;
	double secs = (double)win / 1e9;

	l->sum.now_ns = now;
	/* no event yet (an idle target): the view's time starts at its first tick */
	if (!l->sum.first_ns)
		l->sum.first_ns = now;
	l->sum.tasks_live = l->sum.tasks_done = 0;
	l->sum.tasks_folded = task_model__folded(l->model);
	l->sum.max_live = task_model__max_live(l->model);
	for (size_t i = 0; i < l->n_workers; i++) {
		struct live_worker *w = &l->workers[i];
		const struct tm_thread *th = task_model__thread(l->model, w->tid);

		if (w->parked)
			w->w_parked += in_window(l, w->since, now);
		/* the outermost user-task poll in progress */
		for (size_t d = 0; th && d < th->depth; d++)
			if (!th->stack[d].task->worker) {
				w->w_busy += in_window(l, th->stack[d].begin, now);
				break;
			}
		w->depth = th ? (uint32_t)th->depth : 0;
		w->busy_pct = win ? 100.0 * (double)w->w_busy / (double)win : 0;
		w->parked_pct = win ? 100.0 * (double)w->w_parked / (double)win : 0;
		w->w_busy = w->w_parked = 0;
	}
	for (size_t i = 0; i < l->n_tasks; i++) {
		struct live_task *t = &l->tasks[i];
		if (t->state == LIVE_ST_RUNNING)
			t->w_busy += in_window(l, t->run_begin, now);
		t->polls_per_s = secs > 0 ? (double)t->w_polls / secs : 0;
		t->wakes_per_s = secs > 0 ? (double)t->w_wakes / secs : 0;
		t->busy_pct = win ? 100.0 * (double)t->w_busy / (double)win : 0;
		t->w_polls = t->w_wakes = t->w_busy = 0;
		if (t->state == LIVE_ST_DONE)
			l->sum.tasks_done++;
		else
			l->sum.tasks_live++;
	}
	l->sum.events_per_s = secs > 0 ? (uint64_t)((double)l->win_events / secs) : 0;
	l->win_events = 0;
	l->win_start = now;
	compact(l, now);
}

const struct live_task *live__tasks(const struct live *l, size_t *n)
{
	*n = l->n_tasks;
	return l->tasks;
}

const struct live_worker *live__workers(const struct live *l, size_t *n)
{
	*n = l->n_workers;
	return l->workers;
}

const struct live_summary *live__summary(const struct live *l)
{
	return &l->sum;
}

void live__free(struct live *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n_tasks; i++) {
		hist__clear(&l->tasks[i].poll_hist);
		hist__clear(&l->tasks[i].sched_hist);
	}
	if (l->own_model)
		task_model__free(l->model);
	free(l->tasks);
	free(l->workers);
	u64map__clear(&l->by_header);
	u64map__clear(&l->by_tid);
	free(l);
}

/* ------------------------------------------------------------------ sink */

static int sink_add(void *impl, const struct as_event *ev, const struct as_stack *stack)
{
	(void)stack;
	return live__add(impl, ev);
}

static const struct as_sink_ops sink_ops = {
	.name = "live view", .add = sink_add, .finish = NULL, .free = NULL,
};

struct as_sink live__sink(struct live *x)
{
	return (struct as_sink){ .ops = &sink_ops, .impl = x };
}
