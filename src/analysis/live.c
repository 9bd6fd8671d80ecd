/* Live task model for `top`: current states and per-window rates. Same
 * event rules as src/analysis/tasks.c (nesting marks the runtime's worker
 * task, the first schedule of a new task is its spawn, a task freed inside its
 * own poll goes when the poll ends), kept small: no whole-trace totals
 * beyond what the view shows. */
#include "analysis/live.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/u64map.h"

struct live {
	const struct as_trace_meta *meta;
	struct live_task *tasks;
	size_t n_tasks, cap_tasks;
	struct u64map by_header;      /* header -> index + 1 */
	struct live_worker *workers;
	size_t n_workers, cap_workers;
	struct u64map by_tid;         /* tid + 1 -> index + 1 */
	uint64_t next_seq;
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

struct live *live__new(const struct as_trace_meta *meta)
{
	struct live *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->meta = meta;
	l->next_seq = 1;
	return l;
}

static struct live_task *task_find(struct live *l, uint64_t header)
{
	uint64_t idx;

	return u64map__get(&l->by_header, header, &idx) ? &l->tasks[idx - 1] : NULL;
}

static struct live_task *task_new(struct live *l, uint64_t header, uint64_t ts)
{
	if (l->n_tasks == l->cap_tasks) {
		size_t cap = l->cap_tasks ? l->cap_tasks * 2 : 64;
		struct live_task *t = realloc(l->tasks, cap * sizeof(*t));
		if (!t)
			return NULL;
		l->tasks = t;
		l->cap_tasks = cap;
	}
	if (u64map__set(&l->by_header, header, l->n_tasks + 1))
		return NULL;
	struct live_task *t = &l->tasks[l->n_tasks++];
	memset(t, 0, sizeof(*t));
	t->seq = l->next_seq++;
	t->header = header;
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
	t->free_pending = false;
}

static int on_poll_begin(struct live *l, const struct as_event *ev, struct live_worker *w)
{
	struct live_task *t = task_find(l, ev->task);

	if (t && t->state == LIVE_ST_DONE) {
		/* the address was reused by a new task */
		u64map__del(&l->by_header, ev->task);
		t = NULL;
	}
	if (!t && !(t = task_new(l, ev->task, ev->ts)))
		return -ENOMEM;
	if (!t->name && l->meta && ev->probe < l->meta->n_probes)
		t->name = l->meta->probes[ev->probe].future;
	if (!t->tokio_id)
		t->tokio_id = ev->other;
	if (w->depth > 0) {
		struct live_task *outer = task_find(l, w->stack[w->depth - 1]);
		if (outer)
			outer->worker = true;
	}
	if (w->depth < 8) {
		w->stack[w->depth] = ev->task;
		w->begin[w->depth] = ev->ts;
	}
	w->depth++;
	if (t->woken_at && ev->ts >= t->woken_at)
		hist__add(&t->sched_hist, ev->ts - t->woken_at);
	t->woken_at = 0;
	t->state = LIVE_ST_RUNNING;
	t->since = ev->ts;
	t->run_begin = ev->ts;
	t->run_tid = ev->tid;
	return 0;
}

static int on_poll_end(struct live *l, const struct as_event *ev, struct live_worker *w)
{
	uint32_t i = w->depth;

	while (i > 0 && (i > 8 || w->stack[i - 1] != ev->task))
		i--;
	if (i == 0)
		return 0;   /* its begin was not seen (attached mid-poll) */
	uint64_t begin = w->begin[i - 1];
	w->depth = i - 1;
	struct live_task *t = task_find(l, ev->task);
	if (!t || t->state != LIVE_ST_RUNNING)
		return 0;
	uint64_t d = ev->ts > begin ? ev->ts - begin : 0;
	t->polls++;
	t->w_polls++;
	t->busy_ns += d;
	t->w_busy += in_window(l, begin, ev->ts);
	if (d > t->max_poll_ns)
		t->max_poll_ns = d;
	if (hist__add(&t->poll_hist, d))
		return -ENOMEM;
	if (!t->worker) {
		w->polls++;
		w->w_busy += in_window(l, begin, ev->ts);
	}
	if ((ev->flags & AS_POLL_READY) || t->free_pending) {
		finish_task(t, ev->ts);
	} else if (t->woken_at) {
		t->state = LIVE_ST_RUNNABLE;   /* woken while it ran */
		t->since = ev->ts;
		t->woken_at = ev->ts;
	} else {
		t->state = LIVE_ST_IDLE;
		t->since = ev->ts;
	}
	return 0;
}

static int on_wake(struct live *l, const struct as_event *ev, struct live_worker *w)
{
	struct live_task *t = task_find(l, ev->task);

	if (t && t->state == LIVE_ST_DONE && !t->freed)
		return 0;   /* a waker outlived its finished task */
	if (!t || t->state == LIVE_ST_DONE) {
		if (t)
			u64map__del(&l->by_header, ev->task);
		/* first sight through a schedule: a spawn */
		t = task_new(l, ev->task, ev->ts);
		if (!t)
			return -ENOMEM;
		if (w->spawn_pending) {
			snprintf(t->spawn, sizeof(t->spawn), "%s:%llu", w->spawn_file,
				 (unsigned long long)w->spawn_line);
			t->parent = w->spawn_parent;
			w->spawn_pending = false;
		}
		t->woken_at = ev->ts;
		return 0;
	}
	enum live_waker kind = LIVE_WAKER_THREAD;
	if (ev->flags & AS_WAKE_IO)
		kind = LIVE_WAKER_IO;
	else if (ev->flags & AS_WAKE_TIMER)
		kind = LIVE_WAKER_TIMER;
	else if (ev->other == ev->task)
		kind = LIVE_WAKER_SELF;
	else if (ev->other) {
		struct live_task *waker = task_find(l, ev->other);
		kind = waker && waker->worker ? LIVE_WAKER_RUNTIME : LIVE_WAKER_TASK;
	}
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
	return 0;
}

int live__add(struct live *l, const struct as_event *ev)
{
	struct live_worker *w = worker_get(l, ev->tid);

	if (!w)
		return -ENOMEM;
	l->sum.events++;
	l->win_events++;
	if (!l->sum.first_ns || ev->ts < l->sum.first_ns)
		l->sum.first_ns = ev->ts;
	if (!l->win_start)
		l->win_start = ev->ts;
	switch (ev->type) {
	case AS_EV_THREAD:
		snprintf(w->name, sizeof(w->name), "%s", ev->str ? ev->str : "");
		return 0;
	case AS_EV_POLL_BEGIN:
		w->polled = true;
		return on_poll_begin(l, ev, w);
	case AS_EV_POLL_END:
		return on_poll_end(l, ev, w);
	case AS_EV_WAKE:
		return on_wake(l, ev, w);
	case AS_EV_SPAWN: {
		snprintf(w->spawn_file, sizeof(w->spawn_file), "%s", ev->str ? ev->str : "?");
		w->spawn_line = ev->other >> 32;
		w->spawn_pending = true;
		struct live_task *p = w->depth > 0 && w->depth <= 8 ?
				      task_find(l, w->stack[w->depth - 1]) : NULL;
		w->spawn_parent = p && !p->worker ? p->seq : 0;
		return 0;
	}
	case AS_EV_FREE: {
		struct live_task *t = task_find(l, ev->task);
		if (!t)
			return 0;
		t->freed = true;
		if (t->state == LIVE_ST_DONE)
			return 0;
		if (t->state == LIVE_ST_RUNNING && t->run_tid == ev->tid)
			t->free_pending = true;   /* freed inside its own poll */
		else
			finish_task(t, ev->ts);
		return 0;
	}
	case AS_EV_PARK:
		w->polled = true;
		if (!w->parked) {
			w->parked = true;
			w->since = ev->ts;
		}
		return 0;
	case AS_EV_UNPARK:
		if (w->parked) {
			w->w_parked += in_window(l, w->since, ev->ts);
			w->parked = false;
			w->since = ev->ts;
		}
		return 0;
	default:
		return 0;
	}
}

int live__note_stack(struct live *l, uint64_t header, uint64_t tokio_id, const char *name,
		     const char *parked, const char *stack, uint64_t now_ns)
{
	struct live_task *t = task_find(l, header);

	if (t && t->state == LIVE_ST_DONE)
		return 0;
	if (!t) {
		t = task_new(l, header, now_ns);
		if (!t)
			return -ENOMEM;
		t->state = LIVE_ST_IDLE;
	}
	if (!t->tokio_id)
		t->tokio_id = tokio_id;
	if (!t->name && name)
		snprintf(t->name_buf, sizeof(t->name_buf), "%s", name);
	snprintf(t->parked, sizeof(t->parked), "%s", parked ? parked : "");
	snprintf(t->stack, sizeof(t->stack), "%s", stack ? stack : "");
	return 0;
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
	for (size_t i = 0; i < l->n_tasks; i++)
		if (l->tasks[i].state != LIVE_ST_DONE)
			u64map__set(&l->by_header, l->tasks[i].header, i + 1);
}

void live__tick(struct live *l, uint64_t now)
{
	uint64_t win = now > l->win_start ? now - l->win_start : 0;
	double secs = (double)win / 1e9;

	l->sum.now_ns = now;
	l->sum.tasks_live = l->sum.tasks_done = 0;
	for (size_t i = 0; i < l->n_workers; i++) {
		struct live_worker *w = &l->workers[i];
		if (w->parked)
			w->w_parked += in_window(l, w->since, now);
		for (uint32_t d = 0; d < w->depth && d < 8; d++) {
			struct live_task *t = task_find(l, w->stack[d]);
			if (t && !t->worker) {
				w->w_busy += in_window(l, w->begin[d], now);
				break;
			}
		}
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
	free(l->tasks);
	free(l->workers);
	u64map__clear(&l->by_header);
	u64map__clear(&l->by_tid);
	free(l);
}
