/* zoom: the second pass of the HTML page's timeline and task detail (see
 * zoom.h). Like the timeline, an inner state-only analysis reports spans,
 * runnable count changes, parks and first sights of threads through its
 * observer; spans go into the lanes they overlap, and the detailed tasks'
 * polls and runnable waits into their histograms. The first pass says which
 * tasks are users' and which are notable.
 * Pure C, no I/O, no globals. */
#include "analysis/zoom.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/u64map.h"

struct zoom {
	const struct analysis *pass1;
	uint64_t *worker_seqs;            /* seqs of pass 1's worker rows, ascending */
	size_t n_worker_seqs;
	uint64_t n_seqs;                  /* tasks seen in pass 1 */
	size_t candidates;
	struct analysis *inner;
	bool finished;
	uint64_t start, end;

	struct zoom_worker *workers;
	size_t n_workers;
	struct u64map worker_of;          /* tid + 1 -> index + 1 */

	struct zoom_task *tasks;
	size_t n_tasks;
	struct u64map task_of;            /* seq -> index + 1 */
	struct pend { uint64_t end, d; bool set; } *pend;  /* a runnable wait, until
	                                                      the poll that ends it */

	struct zoom_lane runnable;
	int64_t n_runnable;               /* count now */
	uint64_t runnable_ts;             /* time of the last count change */
	int err;
};

static bool user_task(const struct zoom *z, uint64_t seq)
{
	size_t lo = 0, hi = z->n_worker_seqs;

	if (!seq || seq > z->n_seqs)
		return false;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (z->worker_seqs[mid] == seq)
			return false;
		if (z->worker_seqs[mid] < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return true;
}

/* Sets up l over [start, end] in at most max buckets, none narrower than
 * ZOOM_MIN_BUCKET_NS; b too when two. Returns 0 or -ENOMEM. */
static int lane_init(struct zoom_lane *l, uint64_t start, uint64_t end, size_t max, bool two)
{
	uint64_t dur = end > start ? end - start : 1;

	if (!max)
		max = 1;
	l->start_ns = start;
	l->end_ns = start + dur;
	l->bucket_ns = dur / max + (dur % max != 0);
	if (l->bucket_ns < ZOOM_MIN_BUCKET_NS)
		l->bucket_ns = ZOOM_MIN_BUCKET_NS;
	l->buckets = (size_t)(dur / l->bucket_ns + (dur % l->bucket_ns != 0));
	if (!l->buckets)
		l->buckets = 1;
	l->a = calloc(l->buckets, sizeof(uint64_t));
	l->b = two ? calloc(l->buckets, sizeof(uint64_t)) : NULL;
	return !l->a || (two && !l->b) ? -ENOMEM : 0;
}

static size_t bucket_of(const struct zoom_lane *l, uint64_t ts)
{
	uint64_t i;

	if (ts <= l->start_ns)
		return 0;
	i = (ts - l->start_ns) / l->bucket_ns;
	return i >= l->buckets ? l->buckets - 1 : (size_t)i;
}

/* Adds the overlap of [b, e) with each bucket of l to arr. */
static void spread(const struct zoom_lane *l, uint64_t *arr, uint64_t b, uint64_t e)
{
	if (b < l->start_ns)
		b = l->start_ns;
	if (e > l->end_ns)
		e = l->end_ns;
	while (b < e) {
		size_t i = bucket_of(l, b);
		uint64_t bend = l->start_ns + (uint64_t)(i + 1) * l->bucket_ns;
		uint64_t x = i == l->buckets - 1 || e < bend ? e : bend;

		arr[i] += x - b;
		b = x;
	}
}

static struct zoom_worker *worker(struct zoom *z, uint32_t tid)
{
	uint64_t v;

	return u64map__get(&z->worker_of, (uint64_t)tid + 1, &v) ? &z->workers[v - 1] : NULL;
}

static void on_span(void *ctx, uint64_t seq, enum task_state what, uint32_t tid, bool leaf,
		    uint64_t begin, uint64_t end)
{
	struct zoom *z = ctx;
	struct zoom_worker *w;
	struct zoom_task *t;
	struct pend *p;
	uint64_t v;

	if (!user_task(z, seq))
		return;
	if (what == TASK_STATE_RUNNING && leaf && (w = worker(z, tid)))
		spread(&w->lane, w->lane.a, begin, end);
	if (!u64map__get(&z->task_of, seq, &v))
		return;
	t = &z->tasks[v - 1];
	p = &z->pend[v - 1];
	if (what == TASK_STATE_RUNNABLE) {
		spread(&t->lane, t->lane.b, begin, end);
		*p = (struct pend){ .end = end, .d = end - begin, .set = true };
		return;
	}
	if (what != TASK_STATE_RUNNING) {
		p->set = false;
		return;
	}
	spread(&t->lane, t->lane.a, begin, end);
	/* the runnable wait this poll ended (as the report's sched_ns) */
	if (p->set && p->end == begin && hist__add(&t->sched, p->d))
		z->err = -ENOMEM;
	p->set = false;
	/* a poll still running when the trace ended has no duration sample */
	if (!(t->row->state == TASK_STATE_RUNNING && end >= z->end) &&
	    hist__add(&t->poll, end - begin))
		z->err = -ENOMEM;
}

/* The count held from runnable_ts until ts: a candidate maximum for every
 * bucket in between. */
static void carry(struct zoom *z, uint64_t ts)
{
	struct zoom_lane *l = &z->runnable;
	size_t from = bucket_of(l, z->runnable_ts), to = bucket_of(l, ts);
	uint64_t c = z->n_runnable > 0 ? (uint64_t)z->n_runnable : 0;

	for (size_t i = from; i <= to && i < l->buckets; i++)
		if (c > l->a[i])
			l->a[i] = c;
	if (ts > z->runnable_ts)
		z->runnable_ts = ts;
}

static void on_runnable(void *ctx, uint64_t seq, uint64_t ts, int delta)
{
	struct zoom *z = ctx;

	if (!user_task(z, seq))
		return;
	carry(z, ts);
	z->n_runnable += delta;
	carry(z, ts);
}

static void on_park(void *ctx, uint32_t tid, uint64_t begin, uint64_t end)
{
	struct zoom *z = ctx;
	struct zoom_worker *w = worker(z, tid);

	if (w)
		spread(&w->lane, w->lane.b, begin, end);
}

static void on_thread(void *ctx, uint32_t tid, uint64_t ts)
{
	struct zoom *z = ctx;
	struct zoom_worker *w = worker(z, tid);

	if (w && !w->seen) {
		w->seen = true;
		w->first_ns = ts;
	}
}

/* ------------------------------------------------------------ picking */

typedef uint64_t (*row_key)(const struct task_stats *t);

static uint64_t k_busy(const struct task_stats *t) { return t->busy_ns; }
static uint64_t k_max_poll(const struct task_stats *t) { return t->max_poll_ns; }
static uint64_t k_sched_max(const struct task_stats *t) { return t->sched_max_ns; }
static uint64_t k_sched(const struct task_stats *t) { return t->sched_ns; }
static uint64_t k_polls(const struct task_stats *t) { return t->polls; }
static uint64_t k_wakes(const struct task_stats *t) { return t->wakes; }
static uint64_t k_long(const struct task_stats *t) { return t->long_polls; }
static uint64_t k_stall(const struct task_stats *t) { return t->stalls ? t->stall_ns : 0; }
static uint64_t k_starve(const struct task_stats *t) { return t->starved ? t->starve_max_ns : 0; }

static int by_key(const void *x, const void *y, void *ctx)
{
	const struct task_stats *a = *(const struct task_stats *const *)x;
	const struct task_stats *b = *(const struct task_stats *const *)y;
	row_key key = *(row_key *)ctx;
	uint64_t ka = key(a), kb = key(b);

	if (ka != kb)
		return ka < kb ? 1 : -1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Adds row t to the detailed tasks unless there or full. */
static int pick(struct zoom *z, const struct task_stats *t, size_t max)
{
	uint64_t v;

	if (!t || t->kind != TASK_KIND_TASK || z->n_tasks >= max || u64map__get(&z->task_of, t->seq, &v))
		return 0;
	z->tasks[z->n_tasks].seq = t->seq;
	z->tasks[z->n_tasks].row = t;
	z->n_tasks++;
	return u64map__set(&z->task_of, t->seq, z->n_tasks);
}

/* The notable user tasks, in the order of the criteria below, each taking
 * its quota of its top tasks (those with a zero key left out). */
static int pick_tasks(struct zoom *z, const struct zoom_opts *opts)
{
	static const struct { row_key key; size_t quota; } crit[] = {
		{ k_busy, 200 }, { k_max_poll, 80 }, { k_long, 80 }, { k_stall, 80 },
		{ k_starve, 80 }, { k_sched_max, 80 }, { k_sched, 40 }, { k_polls, 40 },
		{ k_wakes, 40 },
	};
	size_t max = opts && opts->detail_max ? opts->detail_max : ZOOM_DETAIL_MAX;
	size_t n_rows, n = 0;
	const struct task_stats *rows = analysis__tasks(z->pass1, &n_rows);
	const struct task_stats **order = calloc(n_rows ? n_rows : 1, sizeof(*order));
	int err = 0;

	z->tasks = calloc(max ? max : 1, sizeof(*z->tasks));
	z->pend = calloc(max ? max : 1, sizeof(*z->pend));
	if (!order || !z->tasks || !z->pend) {
		free(order);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n_rows; i++)
		if (rows[i].kind == TASK_KIND_TASK)
			order[n++] = &rows[i];
	z->candidates = n;
	for (size_t c = 0; c < sizeof(crit) / sizeof(crit[0]) && !err; c++) {
		row_key key = crit[c].key;

		qsort_r(order, n, sizeof(*order), by_key, &key);
		for (size_t i = 0; i < n && i < crit[c].quota && !err; i++)
			if (crit[c].key(order[i]))
				err = pick(z, order[i], max);
		if (c == 0)   /* the caller's right after the busiest */
			for (size_t i = 0; opts && i < opts->n_extra && !err; i++)
				err = pick(z, analysis__task(z->pass1, opts->extra[i]), max);
	}
	free(order);
	return err;
}

struct zoom *zoom__new(const struct analysis *pass1, const struct as_trace_meta *meta,
		       const struct zoom_opts *opts)
{
	const struct summary *s = analysis__summary(pass1);
	const struct worker_stats *ws;
	const struct task_stats *rows;
	struct zoom *z;
	size_t n_rows, per;

	if (!s) {
		errno = EINVAL;
		return NULL;
	}
	z = calloc(1, sizeof(*z));
	if (!z)
		return NULL;
	z->pass1 = pass1;
	z->n_seqs = s->tasks;
	z->start = s->start_ns;
	z->end = s->end_ns > s->start_ns ? s->end_ns : s->start_ns;
	z->runnable_ts = z->start;
	rows = analysis__tasks(pass1, &n_rows);
	for (size_t i = 0; i < n_rows; i++)
		z->n_worker_seqs += rows[i].kind != TASK_KIND_TASK;
	z->worker_seqs = calloc(z->n_worker_seqs ? z->n_worker_seqs : 1, sizeof(uint64_t));
	if (!z->worker_seqs)
		goto nomem;
	for (size_t i = 0, k = 0; i < n_rows; i++)
		if (rows[i].kind != TASK_KIND_TASK)
			z->worker_seqs[k++] = rows[i].seq;

	/* workers: busy and parked, plus the runnable lane, share the budget */
	ws = analysis__workers(pass1, &z->n_workers);
	z->workers = calloc(z->n_workers ? z->n_workers : 1, sizeof(*z->workers));
	if (!z->workers)
		goto nomem;
	per = ZOOM_WORKER_BUCKETS / (2 * z->n_workers + 1);
	if (lane_init(&z->runnable, z->start, z->end, per, false))
		goto nomem;
	for (size_t i = 0; i < z->n_workers; i++) {
		z->workers[i].tid = ws[i].tid;
		z->workers[i].name = ws[i].name;
		if (lane_init(&z->workers[i].lane, z->start, z->end, per, true) ||
		    u64map__set(&z->worker_of, (uint64_t)ws[i].tid + 1, i + 1))
			goto nomem;
	}
	if (pick_tasks(z, opts))
		goto nomem;
	for (size_t i = 0; i < z->n_tasks; i++) {
		struct zoom_task *t = &z->tasks[i];
		uint64_t from = t->row->first_ns > z->start ? t->row->first_ns : z->start;
		uint64_t to = t->row->last_ns > from ? t->row->last_ns : from;

		/* a task still alive at the end lives until then */
		if (t->row->state != TASK_STATE_COMPLETED)
			to = z->end > from ? z->end : from;
		t->fine = i < ZOOM_LANES_MAX;   /* the first picked are the busiest */
		if (lane_init(&t->lane, from, to, t->fine ? ZOOM_LANE_BUCKETS : ZOOM_STRIP_BUCKETS, true))
			goto nomem;
	}

	struct analysis_observer obs = {
		.ctx = z, .span = on_span, .runnable = on_runnable, .park = on_park,
		.thread = on_thread,
	};
	uint64_t max_live = s->max_live_tasks;
	struct analysis_opts ao = { .states_only = true, .observer = &obs, .max_tasks = 1,
				    .max_live_tasks = max_live ? max_live : ANALYSIS_UNLIMITED };
	z->inner = analysis__new_opts(meta, &ao);
	if (!z->inner)
		goto nomem;
	return z;
nomem:
	zoom__free(z);
	errno = ENOMEM;
	return NULL;
}

int zoom__add(struct zoom *z, const struct as_event *ev)
{
	int err;

	if (!z || z->finished)
		return -EINVAL;
	err = analysis__add(z->inner, ev);
	return err ? err : z->err;
}

int zoom__finish(struct zoom *z, const struct as_trace_end *end)
{
	int err;

	if (!z || z->finished)
		return -EINVAL;
	err = analysis__finish(z->inner, end);
	if (err)
		return err;
	if (z->err)
		return z->err;
	carry(z, z->end);
	analysis__free(z->inner);   /* it has served */
	z->inner = NULL;
	z->finished = true;
	return 0;
}

const struct zoom_worker *zoom__workers(const struct zoom *z, size_t *n)
{
	*n = z && z->finished ? z->n_workers : 0;
	return *n ? z->workers : NULL;
}

const struct zoom_lane *zoom__runnable(const struct zoom *z)
{
	return z && z->finished ? &z->runnable : NULL;
}

const struct zoom_task *zoom__tasks(const struct zoom *z, size_t *n)
{
	*n = z && z->finished ? z->n_tasks : 0;
	return *n ? z->tasks : NULL;
}

size_t zoom__candidates(const struct zoom *z)
{
	return z ? z->candidates : 0;
}

static void lane_free(struct zoom_lane *l)
{
	free(l->a);
	free(l->b);
}

void zoom__free(struct zoom *z)
{
	if (!z)
		return;
	analysis__free(z->inner);
	for (size_t i = 0; z->workers && i < z->n_workers; i++)
		lane_free(&z->workers[i].lane);
	free(z->workers);
	u64map__clear(&z->worker_of);
	for (size_t i = 0; z->tasks && i < z->n_tasks; i++) {
		hist__clear(&z->tasks[i].poll);
		hist__clear(&z->tasks[i].sched);
		lane_free(&z->tasks[i].lane);
	}
	free(z->tasks);
	free(z->pend);
	u64map__clear(&z->task_of);
	lane_free(&z->runnable);
	free(z->worker_seqs);
	free(z);
}

/* ------------------------------------------------------------------ sink */

static int sink_add(void *impl, const struct as_event *ev, const struct as_stack *stack)
{
	(void)stack;
	return zoom__add(impl, ev);
}

static int sink_finish(void *impl, const struct as_trace_end *end)
{
	return zoom__finish(impl, end);
}

static const struct as_sink_ops sink_ops = {
	.name = "zoom", .add = sink_add, .finish = sink_finish, .free = NULL,
};

struct as_sink zoom__sink(struct zoom *z)
{
	return (struct as_sink){ .ops = &sink_ops, .impl = z };
}
