/* timeline: the second pass (see timeline.h). A task model of its own (the
 * rules of the first pass's, with its live-task limit) reports spans (a
 * poll, a runnable wait, an idle wait), runnable count changes, parks and
 * first sights of threads to this file's observer, as the first pass's
 * analysis saw them; each span is spread over the buckets it overlaps. The first pass says which tasks are
 * users' (a task is known to be a worker only once a poll nests in it) and
 * which are the busiest: a seq without a row there was folded into a group,
 * and only user tasks are folded; the busiest are among the kept rows (the
 * busiest finished ones and every live one). Nothing is kept per task but
 * the model's own (no rows: the spans are all it needs).
 * Pure C, no I/O, no globals. */
#include "analysis/timeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/task_model.h"
#include "util/u64tab.h"

struct wrow {                 /* per worker thread, while events come */
	uint64_t first_ns;
	bool seen;
};

struct trow {                 /* per top task, ns per bucket */
	uint64_t *running, *scheduled, *idle;
};

struct timeline {
	const struct analysis *pass1;
	const struct task_stats *kinds;   /* pass-1 rows, in seq order */
	size_t n_kinds;
	uint64_t *worker_seqs;            /* seqs of pass 1's worker rows, ascending */
	size_t n_worker_seqs;
	uint64_t n_seqs;                  /* tasks seen in pass 1 */
	struct task_model *model;         /* what follows the tasks, this pass */
	uint64_t last_ts;                 /* the largest timestamp, for finish(NULL) */
	bool finished;

	uint64_t start, end, bucket_ns;
	size_t buckets;

	struct timeline_worker *workers;
	struct wrow *wrows;
	size_t n_workers;
	struct u64tab worker_of;          /* tid + 1 -> index + 1 */

	struct timeline_task *tasks;
	struct trow *trows;
	size_t n_tasks;
	struct u64tab task_of;            /* seq -> index + 1 */

	uint64_t *runnable_ns;            /* integral of the runnable count, per bucket */
	uint64_t *runnable_max;
	double *runnable_avg;
	int64_t runnable;                 /* count now */
	uint64_t runnable_ts;             /* time of the last count change */
};

static bool user_task(const struct timeline *tl, uint64_t seq)
{
	if (!seq || seq > tl->n_seqs)
		return false;
	/* a worker has a row of that kind (never folded); any other seq, with a
	 * row or folded, is a user task: searched among the few workers, not
	 * among every row (this runs on every span) */
	size_t lo = 0, hi = tl->n_worker_seqs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (tl->worker_seqs[mid] == seq)
			return false;
		if (tl->worker_seqs[mid] < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return true;
}

static size_t bucket_of(const struct timeline *tl, uint64_t ts)
{
	uint64_t b;

	if (ts <= tl->start)
		return 0;
	b = (ts - tl->start) / tl->bucket_ns;
	return b >= tl->buckets ? tl->buckets - 1 : (size_t)b;
}

/* Adds the overlap of [b, e) with each bucket to arr. */
static void spread(const struct timeline *tl, uint64_t *arr, uint64_t b, uint64_t e)
{
	if (b < tl->start)
		b = tl->start;
	if (e > tl->end)
		e = tl->end;
	while (b < e) {
		size_t i = bucket_of(tl, b);
		uint64_t bend = tl->start + (uint64_t)(i + 1) * tl->bucket_ns;
		uint64_t x = i == tl->buckets - 1 || e < bend ? e : bend;

		arr[i] += x - b;
		b = x;
	}
}

static struct timeline_worker *worker(struct timeline *tl, uint32_t tid, size_t *idx)
{
	uint64_t v;

	if (!u64tab__get(&tl->worker_of, (uint64_t)tid + 1, &v))
		return NULL;
	*idx = v - 1;
	return &tl->workers[v - 1];
}

static void on_span(void *ctx, uint64_t seq, enum task_state what, uint32_t tid, bool leaf,
		    uint64_t begin, uint64_t end)
{
	struct timeline *tl = ctx;
	struct timeline_worker *w;
	uint64_t v;
	size_t wi;

	if (!user_task(tl, seq))
		return;
	if (what == TASK_STATE_RUNNING && leaf && (w = worker(tl, tid, &wi))) {
		spread(tl, w->busy_ns, begin, end);
		if (begin >= tl->start && begin <= tl->end)
			w->polls[bucket_of(tl, begin)]++;
	}
	if (what == TASK_STATE_RUNNABLE)
		spread(tl, tl->runnable_ns, begin, end);
	if (!u64tab__get(&tl->task_of, seq, &v))
		return;
	struct trow *r = &tl->trows[v - 1];
	spread(tl, what == TASK_STATE_RUNNING ? r->running
		   : what == TASK_STATE_RUNNABLE ? r->scheduled : r->idle, begin, end);
}

/* The count held from runnable_ts until ts: a candidate maximum for every
 * bucket in between. */
static void carry(struct timeline *tl, uint64_t ts)
{
	size_t from = bucket_of(tl, tl->runnable_ts), to = bucket_of(tl, ts);
	uint64_t c = tl->runnable > 0 ? (uint64_t)tl->runnable : 0;

	for (size_t i = from; i <= to && i < tl->buckets; i++)
		if (c > tl->runnable_max[i])
			tl->runnable_max[i] = c;
	if (ts > tl->runnable_ts)
		tl->runnable_ts = ts;
}

static void on_runnable(void *ctx, uint64_t seq, uint64_t ts, int delta)
{
	struct timeline *tl = ctx;

	if (!user_task(tl, seq))
		return;
	carry(tl, ts);
	tl->runnable += delta;
	carry(tl, ts);
}

static void on_park(void *ctx, uint32_t tid, uint64_t begin, uint64_t end)
{
	struct timeline *tl = ctx;
	struct timeline_worker *w;
	size_t wi;

	if ((w = worker(tl, tid, &wi)))
		spread(tl, w->parked_ns, begin, end);
}

static void on_thread(void *ctx, uint32_t tid, uint64_t ts)
{
	struct timeline *tl = ctx;
	size_t wi;

	if (worker(tl, tid, &wi) && !tl->wrows[wi].seen) {
		tl->wrows[wi].seen = true;
		tl->wrows[wi].first_ns = ts;
	}
}

/* The model's callbacks, as the first pass's analysis passes them to its
 * observer (tasks.c: on_thread(), on_enter(), on_leave(), on_poll_end(),
 * on_unpark()), in the model's order. */
static void tm_thread_seen(void *ctx, struct tm_thread *th, uint64_t ts)
{
	on_thread(ctx, th->tid, ts);
}

static void tm_enter(void *ctx, struct tm_task *t, uint64_t ts)
{
	if (t->state == TM_RUNNABLE)
		on_runnable(ctx, t->seq, ts, 1);
}

static void tm_leave(void *ctx, struct tm_task *t, uint64_t ts, uint64_t d, enum tm_by by)
{
	(void)by;
	on_span(ctx, t->seq, t->state == TM_RUNNABLE ? TASK_STATE_RUNNABLE : TASK_STATE_IDLE, 0,
		false, t->since, t->since + d);
	if (t->state == TM_RUNNABLE)
		on_runnable(ctx, t->seq, ts, -1);
}

static void tm_poll_end(void *ctx, struct tm_thread *th, const struct tm_frame *f, uint64_t ts,
			uint64_t d, enum tm_end how)
{
	(void)ts;
	(void)how;
	on_span(ctx, f->task->seq, TASK_STATE_RUNNING, th->tid, !f->nested, f->begin,
		f->begin + d);
}

static void tm_unpark(void *ctx, struct tm_thread *th, uint64_t begin, uint64_t ts, uint64_t d)
{
	(void)d;
	on_park(ctx, th->tid, begin, ts);
}

static const struct tm_ops model_ops = {
	.thread = tm_thread_seen, .enter = tm_enter, .leave = tm_leave,
	.poll_end = tm_poll_end, .unpark = tm_unpark,
};

static int by_busy(const void *x, const void *y)
{
	const struct task_stats *a = *(const struct task_stats *const *)x;
	const struct task_stats *b = *(const struct task_stats *const *)y;

	if (a->busy_ns != b->busy_ns)
		return a->busy_ns < b->busy_ns ? 1 : -1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static uint64_t *zeros(size_t n)
{
	return calloc(n ? n : 1, sizeof(uint64_t));
}

/* The top user tasks by busy time, with their arrays. */
static int pick_tasks(struct timeline *tl, size_t top)
{
	const struct task_stats **order;
	size_t n = 0;

	order = calloc(tl->n_kinds ? tl->n_kinds : 1, sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < tl->n_kinds; i++)
		if (tl->kinds[i].kind == TASK_KIND_TASK)
			order[n++] = &tl->kinds[i];
	qsort(order, n, sizeof(*order), by_busy);
	if (n > top)
		n = top;
	tl->tasks = calloc(n ? n : 1, sizeof(*tl->tasks));
	tl->trows = calloc(n ? n : 1, sizeof(*tl->trows));
	if (!tl->tasks || !tl->trows)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		struct trow *r = &tl->trows[i];

		tl->n_tasks++;
		tl->tasks[i].seq = order[i]->seq;
		tl->tasks[i].name = order[i]->name;
		r->running = zeros(tl->buckets);
		r->scheduled = zeros(tl->buckets);
		r->idle = zeros(tl->buckets);
		if (!r->running || !r->scheduled || !r->idle ||
		    u64tab__set(&tl->task_of, order[i]->seq, i + 1))
			goto nomem;
	}
	free(order);
	return 0;
nomem:
	free(order);
	return -ENOMEM;
}

struct timeline *timeline__new(const struct analysis *pass1, const struct as_trace_meta *meta,
			       const struct timeline_opts *opts)
{
	const struct summary *s = analysis__summary(pass1);
	const struct worker_stats *ws;
	struct timeline *tl = NULL;
	size_t nb = opts && opts->buckets ? opts->buckets : TIMELINE_BUCKETS;
	size_t top = opts && opts->top_tasks ? opts->top_tasks : TIMELINE_TOP_TASKS;
	uint64_t dur;

	if (!s) {
		errno = EINVAL;
		return NULL;
	}
	tl = calloc(1, sizeof(*tl));
	if (!tl)
		return NULL;
	tl->pass1 = pass1;
	tl->kinds = analysis__tasks(pass1, &tl->n_kinds);
	tl->n_seqs = s->tasks;
	for (size_t i = 0; i < tl->n_kinds; i++)
		tl->n_worker_seqs += tl->kinds[i].kind != TASK_KIND_TASK;
	tl->worker_seqs = calloc(tl->n_worker_seqs ? tl->n_worker_seqs : 1, sizeof(uint64_t));
	if (!tl->worker_seqs)
		goto nomem;
	for (size_t i = 0, k = 0; i < tl->n_kinds; i++)
		if (tl->kinds[i].kind != TASK_KIND_TASK)
			tl->worker_seqs[k++] = tl->kinds[i].seq;
	tl->start = s->start_ns;
	tl->end = s->end_ns > s->start_ns ? s->end_ns : s->start_ns;
	dur = tl->end - tl->start;
	tl->bucket_ns = dur / nb + (dur % nb != 0);
	if (!tl->bucket_ns)
		tl->bucket_ns = 1;
	tl->buckets = (size_t)(dur / tl->bucket_ns + (dur % tl->bucket_ns != 0));
	if (!tl->buckets)
		tl->buckets = 1;
	tl->runnable_ts = tl->start;

	ws = analysis__workers(pass1, &tl->n_workers);
	tl->workers = calloc(tl->n_workers ? tl->n_workers : 1, sizeof(*tl->workers));
	tl->wrows = calloc(tl->n_workers ? tl->n_workers : 1, sizeof(*tl->wrows));
	tl->runnable_ns = zeros(tl->buckets);
	tl->runnable_max = zeros(tl->buckets);
	tl->runnable_avg = calloc(tl->buckets, sizeof(double));
	if (!tl->workers || !tl->wrows || !tl->runnable_ns || !tl->runnable_max ||
	    !tl->runnable_avg)
		goto nomem;
	for (size_t i = 0; i < tl->n_workers; i++) {
		struct timeline_worker *w = &tl->workers[i];

		w->tid = ws[i].tid;
		w->name = ws[i].name;
		w->busy_ns = zeros(tl->buckets);
		w->idle_ns = zeros(tl->buckets);
		w->parked_ns = zeros(tl->buckets);
		w->polls = zeros(tl->buckets);
		if (!w->busy_ns || !w->idle_ns || !w->parked_ns || !w->polls ||
		    u64tab__set(&tl->worker_of, (uint64_t)w->tid + 1, i + 1))
			goto nomem;
	}
	if (pick_tasks(tl, top))
		goto nomem;

	/* the same live-task limit: the same tasks folded as in pass 1 */
	tl->model = task_model__new(meta);
	if (!tl->model || task_model__set_max_live(tl->model, s->max_live_tasks) ||
	    task_model__observe(tl->model, &model_ops, tl, 0, NULL, 0, NULL))
		goto nomem;
	return tl;
nomem:
	timeline__free(tl);
	errno = ENOMEM;
	return NULL;
}

int timeline__add(struct timeline *tl, const struct as_event *ev)
{
	if (!tl || tl->finished)
		return -EINVAL;
	if (ev->ts > tl->last_ts)
		tl->last_ts = ev->ts;
	return task_model__add(tl->model, ev);
}

int timeline__finish(struct timeline *tl, const struct as_trace_end *end)
{
	int err;

	if (!tl || tl->finished)
		return -EINVAL;
	err = task_model__finish(tl->model, end ? end->end_ns : tl->last_ts);
	if (err)
		return err;
	carry(tl, tl->end);
	for (size_t i = 0; i < tl->buckets; i++) {
		uint64_t b = tl->start + (uint64_t)i * tl->bucket_ns;
		uint64_t e = i == tl->buckets - 1 ? tl->end : b + tl->bucket_ns;
		uint64_t len = e > b ? e - b : 0;

		tl->runnable_avg[i] = len ? (double)tl->runnable_ns[i] / (double)len : 0;
		for (size_t k = 0; k < tl->n_tasks; k++) {
			struct timeline_task *t = &tl->tasks[k];
			struct trow *r = &tl->trows[k];

			if (!t->running) { /* first bucket: turn the ns arrays into fractions */
				t->running = calloc(tl->buckets, sizeof(double));
				t->scheduled = calloc(tl->buckets, sizeof(double));
				t->idle = calloc(tl->buckets, sizeof(double));
				if (!t->running || !t->scheduled || !t->idle)
					return -ENOMEM;
			}
			t->running[i] = len ? (double)r->running[i] / (double)len : 0;
			t->scheduled[i] = len ? (double)r->scheduled[i] / (double)len : 0;
			t->idle[i] = len ? (double)r->idle[i] / (double)len : 0;
		}
		for (size_t k = 0; k < tl->n_workers; k++) {
			struct timeline_worker *w = &tl->workers[k];
			uint64_t from = tl->wrows[k].seen && tl->wrows[k].first_ns > b
					? tl->wrows[k].first_ns : b;
			uint64_t alive = e > from ? e - from : 0;
			uint64_t used = w->busy_ns[i] + w->parked_ns[i];

			w->idle_ns[i] = alive > used ? alive - used : 0;
		}
	}
	/* The model has served: its tasks are not needed any more. */
	task_model__free(tl->model);
	tl->model = NULL;
	tl->finished = true;
	return 0;
}

uint64_t timeline__start_ns(const struct timeline *tl)
{
	return tl->start;
}

uint64_t timeline__bucket_ns(const struct timeline *tl)
{
	return tl->bucket_ns;
}

size_t timeline__buckets(const struct timeline *tl)
{
	return tl->buckets;
}

const struct timeline_worker *timeline__workers(const struct timeline *tl, size_t *n)
{
	*n = tl && tl->finished ? tl->n_workers : 0;
	return *n ? tl->workers : NULL;
}

const struct timeline_task *timeline__tasks(const struct timeline *tl, size_t *n)
{
	*n = tl && tl->finished ? tl->n_tasks : 0;
	return *n ? tl->tasks : NULL;
}

const uint64_t *timeline__runnable_max(const struct timeline *tl)
{
	return tl && tl->finished ? tl->runnable_max : NULL;
}

const double *timeline__runnable_avg(const struct timeline *tl)
{
	return tl && tl->finished ? tl->runnable_avg : NULL;
}

void timeline__free(struct timeline *tl)
{
	if (!tl)
		return;
	task_model__free(tl->model);
	for (size_t i = 0; tl->workers && i < tl->n_workers; i++) {
		free(tl->workers[i].busy_ns);
		free(tl->workers[i].idle_ns);
		free(tl->workers[i].parked_ns);
		free(tl->workers[i].polls);
	}
	free(tl->worker_seqs);
	free(tl->workers);
	free(tl->wrows);
	u64tab__clear(&tl->worker_of);
	for (size_t i = 0; i < tl->n_tasks; i++) {
		free(tl->tasks[i].running);
		free(tl->tasks[i].scheduled);
		free(tl->tasks[i].idle);
		free(tl->trows[i].running);
		free(tl->trows[i].scheduled);
		free(tl->trows[i].idle);
	}
	free(tl->tasks);
	free(tl->trows);
	u64tab__clear(&tl->task_of);
	free(tl->runnable_ns);
	free(tl->runnable_max);
	free(tl->runnable_avg);
	free(tl);
}

/* ------------------------------------------------------------------ sink */

static int sink_add(void *impl, const struct as_event *ev, const struct as_stack *stack)
{
	(void)stack;
	return timeline__add(impl, ev);
}

static int sink_finish(void *impl, const struct as_trace_end *end)
{
	return timeline__finish(impl, end);
}

static const struct as_sink_ops sink_ops = {
	.name = "timeline", .add = sink_add, .finish = sink_finish, .free = NULL,
};

struct as_sink timeline__sink(struct timeline *x)
{
	return (struct as_sink){ .ops = &sink_ops, .impl = x };
}
