/* tasks: the task analysis (see tasks.h), an observer of the task model
 * (task_model.h), which owns the rules of a task's life: this file keeps
 * the numbers. Per live task it keeps a struct tlive, and per thread a
 * struct tthread, inside the model's own records (tasks_int.h); per-task
 * numbers go to a row in an array of slots (a map from seq finds it).
 *
 * Rows: a live task's row is always kept. When a user task goes, its row
 * joins a min-heap of at most opts.max_tasks finished rows ordered by busy
 * time (then seq, later first); past the cap, the least busy of the heap and
 * the new row is folded into its group (identity: name and spawn location,
 * final by then: the name is set at the first poll) and its slot reused. The
 * stalls and starves of a folded row become list entries right away; those
 * of kept rows at finish, as before. finish() sorts the kept rows by seq.
 *
 * Every change of a live task's state is published by the model (leave(),
 * enter()), which keeps the sums, the histograms, the stall and starve
 * counts and the observer in step. A live task's histograms are folded into
 * its row and into the totals when it goes (FREE or the end), then freed.
 * Wake edges into live tasks are keyed by (waker code, woken seq): code
 * 1..5 a wake_source, seq + EDGE_TASK a task. The edges into a task are
 * listed from it and folded when it goes too (edges from the runtime's loops
 * or blocking tasks merged per kind; slots and map keys freed), after its
 * row was kept or folded:
 *  - its row folded: each edge goes into a group edge (struct gedge, keyed
 *    by its two ends, a->gedges), its delay histogram merged; ends are end
 *    codes (tasks_int.h), a task end its group when the task was folded or
 *    its identity already is a group;
 *  - its row kept: each edge whose waker has a row too becomes a compact
 *    struct wake_edge in a->edges (percentiles taken, histogram freed), the
 *    edges of one task contiguous, found from its slot (a->rowe); the others
 *    go into group edges as above.
 * A kept row folded later (fold_row()) takes its compact edges into group
 * edges (their maximum, p50 and p99 standing in for their delays); compact
 * edges whose waker was folded since are moved the same way by
 * sweep_edges(), run when a->edges has grown by half since the last sweep,
 * which also drops the moved ones. So the edge records are bounded by the
 * pairs of rows, groups and sources, not by the length of the trace.
 * A waker task is known to be the runtime's loop only once a poll nests in
 * it, so analysis__finish() resolves the kinds again and merges what became
 * duplicates (see ta_finish_edges()). Until then an edge in a->edges holds
 * the waker code in from_seq and the identities of both ends (index + 1) in
 * from_group and to_group. The wake graph is in tasks_edges.c.
 * Pure C: no libbpf, no I/O, no globals. */
#include "analysis/tasks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/tasks_int.h"
#include "util/u64map.h"


const char *task_kind__str(enum task_kind kind)
{
	return kind == TASK_KIND_WORKER ? "worker" : "task";
}

const char *wake_source__str(enum wake_source src)
{
	switch (src) {
	case WAKE_FROM_TASK: return "task";
	case WAKE_FROM_IO: return "io";
	case WAKE_FROM_TIMER: return "timer";
	case WAKE_FROM_RUNTIME: return "runtime";
	case WAKE_FROM_BLOCKING: return "blocking";
	case WAKE_FROM_THREAD: return "thread";
	}
	return "unknown";
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

/* x ranks below y among finished rows: less busy, or as busy and later. */
static bool worse(const struct task_stats *x, const struct task_stats *y)
{
	return x->busy_ns < y->busy_ns || (x->busy_ns == y->busy_ns && x->seq > y->seq);
}

/* Finished row in slot folds into its group: its sums go there, its stall
 * and starve (if any) to the lists, its compact edges (if it was kept a
 * while) to group edges, its slot to the free list. Returns false (out of
 * memory, a->err set; the row stays) or true. */
static bool fold_row(struct analysis *a, size_t slot)
{
	struct task_stats *st = &a->tasks[slot];
	/* its identity, known since it went (or looked up now) */
	uint32_t id = a->rinfo[slot].ident ? a->rinfo[slot].ident : ta_ident_get(a, st);
	struct task_group *g;

	if (!id ||
	    ta_grow((void **)&a->stalls, &a->cap_stalls, a->n_stalls + 1, sizeof(*a->stalls)) ||
	    ta_grow((void **)&a->starves, &a->cap_starves, a->n_starves + 1, sizeof(*a->starves)) ||
	    ta_reserve((void **)&a->free_slots, &a->cap_free, a->n_free, sizeof(*a->free_slots))) {
		a->err = -ENOMEM;
		return false;
	}
	if (st->stalls)
		a->stalls[a->n_stalls++] = (struct stall){
			.seq = st->seq, .group = id, .since_ns = st->stall_since_ns,
			.stalled_ns = st->stall_ns, .until_end = st->stall_until_end,
			.count = st->stalls,
		};
	if (st->starved)
		a->starves[a->n_starves++] = (struct starve){
			.seq = st->seq, .group = id, .max_wait_ns = st->starve_max_ns,
			.count = st->starved,
		};
	g = &a->idents[id - 1].g;
	g->tasks++;
	g->polls += st->polls;
	g->pending_polls += st->pending_polls;
	g->ready_polls += st->ready_polls;
	g->busy_ns += st->busy_ns;
	if (st->max_poll_ns > g->max_poll_ns)
		g->max_poll_ns = st->max_poll_ns;
	g->idle_ns += st->idle_ns;
	g->sched_ns += st->sched_ns;
	g->wakes += st->wakes;
	g->self_wakes += st->self_wakes;
	g->long_polls += st->long_polls;
	a->folded++;
	a->folded_polls += st->polls;
	a->folded_long_polls += st->long_polls;
	u64tab__del_shift(&a->slot_of, st->seq);
	ta_row_edges_out(a, slot, id);
	st->seq = 0; /* a free slot */
	a->rinfo[slot].seq = 0;
	a->free_slots[a->n_free++] = slot;
	return true;
}

static void keep_sift_down(struct analysis *a, size_t i)
{
	size_t *h = a->keep, n = a->n_keep, x = h[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && worse(&a->tasks[h[c + 1]], &a->tasks[h[c]]))
			c++;
		if (!worse(&a->tasks[h[c]], &a->tasks[x]))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

/* The user task in slot has finished: keep its row among the max_tasks
 * busiest finished ones, or fold the least busy of them and it. Worker tasks
 * (the runtime's loops, a few) always keep theirs. */
static void row_done(struct analysis *a, size_t slot)
{
	size_t i, top;

	if (a->tasks[slot].kind != TASK_KIND_TASK || a->opts.max_tasks == ANALYSIS_UNLIMITED)
		return;
	if (a->n_keep < a->opts.max_tasks) {
		if (ta_reserve((void **)&a->keep, &a->cap_keep, a->n_keep, sizeof(*a->keep))) {
			a->err = -ENOMEM; /* the row stays, outside the heap */
			return;
		}
		for (i = a->n_keep++; i > 0 &&
		     worse(&a->tasks[slot], &a->tasks[a->keep[(i - 1) / 2]]); i = (i - 1) / 2)
			a->keep[i] = a->keep[(i - 1) / 2];
		a->keep[i] = slot;
		return;
	}
	top = a->keep[0];
	if (!worse(&a->tasks[top], &a->tasks[slot])) {
		fold_row(a, slot);
		return;
	}
	if (!fold_row(a, top))
		return;
	a->keep[0] = slot;
	keep_sift_down(a, 0);
}

/* Task l goes and keeps its row: its distributions' percentiles into the
 * row (not for a row folded at once: a group keeps no percentiles). */
static void fold_pct(struct analysis *a, struct tlive *l)
{
	struct task_stats *st = &a->tasks[l->idx];
	struct samples *h = l->h;

	static const double q[2] = { 0.5, 0.99 };
	uint64_t v[2];

	samples__quantiles(&h[DIST_POLL], q, v, 2);
	st->poll_p50_ns = v[0];
	st->poll_p99_ns = v[1];
	samples__quantiles(&h[DIST_SCHED], q, v, 2);
	st->sched_p50_ns = v[0];
	st->sched_p99_ns = v[1];
	st->sched_max_ns = samples__max(&h[DIST_SCHED]);
	samples__quantiles(&h[DIST_IDLE], q, v, 2);
	st->idle_p50_ns = v[0];
	st->idle_p99_ns = v[1];
}

/* Task l goes: for a user task (kind, its row's) its distributions become
 * part of the totals; then they are freed (the edges into it are folded by
 * the caller: ta_fold_edges()). */
static void fold_dists(struct analysis *a, struct tlive *l, enum task_kind kind)
{
	for (int d = 0; d < DIST__MAX; d++) {
		if (kind == TASK_KIND_TASK)
			ta_nomem(a, samples__merge_into(&a->dist[d], &l->h[d]));
		samples__clear(&l->h[d]);
	}
	l->n_pend = 0;
}

/* Keeps the long poll p if it is among the longest opts.long_poll_keep. */
static void long_poll_add(struct analysis *a, const struct long_poll *p)
{
	struct long_poll *h = a->heap;
	size_t n = a->n_heap, i;

	if (n == a->opts.long_poll_keep) {
		if (p->duration_ns <= h[0].duration_ns)
			return;
		i = 0; /* replace the shortest, sift down */
		for (;;) {
			size_t c = 2 * i + 1;

			if (c >= n)
				break;
			if (c + 1 < n && h[c + 1].duration_ns < h[c].duration_ns)
				c++;
			if (h[c].duration_ns >= p->duration_ns)
				break;
			h[i] = h[c];
			i = c;
		}
		h[i] = *p;
		return;
	}
	for (i = a->n_heap++; i > 0 && h[(i - 1) / 2].duration_ns > p->duration_ns; i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = *p;
}

static void touch(struct tcount *c, uint64_t ts)
{
	if (ts > c->last_ns)
		c->last_ns = ts;
}

/* The counters of live task t (l) into its row, whose other fields are
 * kept there as they come. */
static void flush_row(struct analysis *a, struct tlive *l, const struct tm_task *t)
{
	struct task_stats *st = &a->tasks[l->idx];
	const struct tcount *c = &l->c;

	st->polls = c->polls;
	st->pending_polls = c->pending_polls;
	st->ready_polls = c->ready_polls;
	st->busy_ns = c->busy_ns;
	st->max_poll_ns = c->max_poll_ns;
	st->sched_ns = c->sched_ns;
	st->idle_ns = c->idle_ns;
	st->wakes = c->wakes;
	st->self_wakes = c->self_wakes;
	st->last_ns = c->last_ns;
	st->long_polls = c->long_polls;
	st->starved = c->starved;
	st->starve_max_ns = c->starve_max_ns;
	st->stalls = c->stalls;
	st->stall_since_ns = c->stall_since_ns;
	st->stall_ns = c->stall_ns;
	st->stall_until_end = c->stall_until_end;
	st->tokio_id = c->tokio_id;
	/* the model names a task by spawn (task::Builder::name) only at a poll:
	 * a name it has now was there at a poll of it */
	st->label = t->label;
}

/* ------------------------------------------- observer of the task model */

static struct tthread *tthread(const struct analysis *a, const struct tm_thread *th)
{
	return tm_thread__data(th, a->thoff);
}

static void on_thread(void *ctx, struct tm_thread *th, uint64_t ts)
{
	struct analysis *a = ctx;

	tthread(a, th)->st.tid = th->tid;
	if (a->obs.thread)
		a->obs.thread(a->obs.ctx, th->tid, ts);
}

/* A new task: a row in a free slot (or a new one). */
static void on_born(void *ctx, struct tm_task *t, struct tm_thread *th, const struct as_event *ev)
{
	struct analysis *a = ctx;
	struct tlive *l = ta_live(a, t);
	struct task_stats *st;
	size_t slot;

	(void)th;
	if (!a->n_free &&
	    ta_reserve((void **)&a->tasks, &a->cap_tasks, a->n_tasks, sizeof(*a->tasks)))
		goto nomem;
	if (!a->opts.states_only &&
	    ta_grow((void **)&a->rowe, &a->cap_rowe, a->cap_tasks, sizeof(*a->rowe)))
		goto nomem;
	if (ta_grow((void **)&a->rinfo, &a->cap_rinfo, a->cap_tasks, sizeof(*a->rinfo)))
		goto nomem;
	slot = a->n_free ? a->free_slots[a->n_free - 1] : a->n_tasks;
	if (u64tab__set(&a->slot_of, t->seq, slot + 1))
		goto nomem;
	if (a->n_free)
		a->n_free--;
	else
		a->n_tasks++;
	st = &a->tasks[slot];
	memset(st, 0, sizeof(*st));
	a->rinfo[slot] = (struct rinfo){ .seq = t->seq };
	if (a->rowe)
		a->rowe[slot] = (struct row_edges){ 0 };
	st->seq = t->seq;
	st->header = t->header;
	st->first_ns = st->last_ns = ev->ts;
	l->c.last_ns = ev->ts;
	if (t->spawned_in_trace) {
		st->spawned_in_trace = true;
		st->spawn_file = t->spawn_file;
		st->spawn_line = t->spawn_line;
		st->spawn_col = t->spawn_col;
		st->parent = t->parent;
	}
	l->idx = slot;
	l->has_row = true;
	return;
nomem:
	a->err = -ENOMEM; /* the task is followed without a row */
}

static void on_enter(void *ctx, struct tm_task *t, uint64_t ts)
{
	struct analysis *a = ctx;

	if (t->state == TM_RUNNABLE && a->obs.runnable)
		a->obs.runnable(a->obs.ctx, t->seq, ts, 1);
}

/* t leaves its RUNNABLE or IDLE state at ts, after d, ended by `by`: the
 * sums (a runnable wait counts in sched_ns only when a poll ends it),
 * distributions, stall and starve accounting, the observer. */
static void on_leave(void *ctx, struct tm_task *t, uint64_t ts, uint64_t d, enum tm_by by)
{
	struct analysis *a = ctx;
	struct tlive *l = ta_live(a, t);
	struct tcount *st = &l->c;

	if (a->obs.span)
		a->obs.span(a->obs.ctx, t->seq, t->state == TM_RUNNABLE ? TASK_STATE_RUNNABLE
					   : TASK_STATE_IDLE, 0, false, t->since, t->since + d);
	if (t->state == TM_RUNNABLE && a->obs.runnable)
		a->obs.runnable(a->obs.ctx, t->seq, ts, -1);
	if (!l->has_row)
		return;
	if (t->state == TM_RUNNABLE) {
		if (by == TM_BY_POLL) {
			st->sched_ns += d;
			if (!a->opts.states_only)
				ta_nomem(a, samples__add(&l->h[DIST_SCHED], d));
		}
		if (d > st->starve_max_ns)
			st->starve_max_ns = d;
		if (d > a->opts.starve_ns && !a->opts.states_only)
			st->starved++;
		return;
	}
	st->idle_ns += d;
	if ((by == TM_BY_POLL || by == TM_BY_WAKE) && !a->opts.states_only)
		ta_nomem(a, samples__add(&l->h[DIST_IDLE], d));
	if (d > a->opts.stall_ns && !a->opts.states_only) {
		st->stalls++;
		if (by == TM_BY_END || (!st->stall_until_end && d > st->stall_ns)) {
			st->stall_since_ns = t->since; /* absolute until finish */
			st->stall_ns = d;
			st->stall_until_end = by == TM_BY_END;
		}
	}
}

/* Row idx takes model task t's name, and with it whether it is a
 * blocking-pool task (the flag the edges read, and the row's). */
static void row_named(struct analysis *a, size_t idx, const struct tm_task *t)
{
	a->tasks[idx].name = t->name;
	if (t->name_kind & TM_NAME_POOL) {
		a->rinfo[idx].flags |= RF_BLOCKING;
		a->tasks[idx].pool = true;
	}
}

static void on_poll_begin(void *ctx, struct tm_task *t, struct tm_thread *th,
			  const struct as_event *ev)
{
	struct analysis *a = ctx;
	struct tlive *l = ta_live(a, t);

	(void)th;
	if (!l->has_row)
		return;
	if (l->n_pend)
		ta_wake_timed(a, l, ev->ts);
	if (!l->c.polls && !a->tasks[l->idx].name)
		row_named(a, l->idx, t);
	if (!l->c.tokio_id && ev->other)
		l->c.tokio_id = ev->other;
	l->c.polls++;
	touch(&l->c, ev->ts);
}

/* Accounts the poll of frame f on thread th that lasted d, ended `how`
 * at ts (TM_TRACE_END: still running when the trace ended). */
static void on_poll_end(void *ctx, struct tm_thread *th, const struct tm_frame *f, uint64_t ts,
			uint64_t d, enum tm_end how)
{
	struct analysis *a = ctx;
	struct tlive *l = ta_live(a, f->task);
	struct tcount *st = &l->c;
	bool user = !f->task->worker;   /* kind TASK_KIND_TASK (see on_worker()) */
	struct tthread *tt = tthread(a, th);

	if (a->obs.span)
		a->obs.span(a->obs.ctx, f->task->seq, TASK_STATE_RUNNING, th->tid, !f->nested,
			    f->begin, f->begin + d);
	if (!l->has_row)
		return;
	if (how != TM_TRACE_END && !a->opts.states_only)
		ta_nomem(a, samples__add(&l->h[DIST_POLL], d));
	if (!f->nested && user && d > a->opts.long_poll_ns &&
	    !a->opts.states_only) {
		struct long_poll p = {
			.seq = f->task->seq, .group = ta_live_ident(a, l), .tid = th->tid,
			.until_end = how == TM_TRACE_END, .start_ns = f->begin, .duration_ns = d,
		};

		st->long_polls++;
		long_poll_add(a, &p);
	}
	st->busy_ns += d;
	if (d > st->max_poll_ns)
		st->max_poll_ns = d;
	if (!f->nested && user) {
		tt->st.busy_ns += d;
		tt->st.polls++;
		if (l->leaf_polls && l->leaf_tid != th->tid)
			l->leaf_mixed = true;
		l->leaf_tid = th->tid;
		l->leaf_ns += d;
		l->leaf_polls++;
	}
	if (how != TM_TRACE_END)
		touch(st, ts);
	if (how == TM_READY)
		st->ready_polls++;
	else if (how == TM_PENDING)
		st->pending_polls++;
}

/* Task t turned out to be a worker: take back the time its earlier polls
 * were charged to threads as user-task time. */
static void on_worker(void *ctx, struct tm_task *t)
{
	struct analysis *a = ctx;
	struct tlive *l = ta_live(a, t);
	struct task_stats *st = &a->tasks[l->idx];
	const struct tm_thread *th;
	struct tthread *tt;

	if (!l->has_row)
		return;
	st->kind = TASK_KIND_WORKER;
	a->rinfo[l->idx].flags |= RF_WORKER;
	if (!l->leaf_polls)
		return;
	th = l->leaf_mixed ? NULL : task_model__thread(a->model, l->leaf_tid);
	tt = th ? tthread(a, th) : NULL;
	if (tt && tt->st.polls >= l->leaf_polls && tt->st.busy_ns >= l->leaf_ns) {
		tt->st.polls -= l->leaf_polls;
		tt->st.busy_ns -= l->leaf_ns;
	} else {
		a->sum.anomalies++;
	}
	l->leaf_polls = l->leaf_ns = 0;
}

static void on_wake(void *ctx, struct tm_task *t, const struct as_event *ev,
		    const struct tm_wake *w)
{
	struct analysis *a = ctx;
	struct tlive *l = ta_live(a, t);
	struct tcount *st = &l->c;

	if (!l->has_row)
		return;
	touch(st, ev->ts);
	if (w->state == TM_COMPLETED)
		return; /* an anomaly of the model */
	st->wakes++;
	/* a task woken again from inside the poll that already woke it (an
	 * interval catching up: each missed tick's timer fires in the poll)
	 * wakes itself once: it is polled once more, as after a yield */
	if (w->self && !w->again)
		st->self_wakes++;
	ta_wake_edge(a, l, t->seq, w, ev->ts);
}

/* The task is gone (FREE, or its address reused without a FREE): its row is
 * kept or folded (row_done()), then the edges into it are folded. */
static void on_gone(void *ctx, struct tm_task *t, uint64_t ts, bool freed)
{
	struct analysis *a = ctx;
	struct tlive *l = ta_live(a, t);
	uint64_t seq = t->seq;

	if (!l->has_row)
		return;
	if (freed)
		touch(&l->c, ts);
	flush_row(a, l, t);
	a->tasks[l->idx].state = TASK_STATE_COMPLETED;
	ta_live_ident(a, l); /* while its row is there */
	row_done(a, l->idx);
	/* its slot is its own until the next birth, folded (seq 0) or not */
	bool kept = a->tasks[l->idx].seq == seq;

	if (kept)
		fold_pct(a, l);
	fold_dists(a, l, a->tasks[l->idx].kind);
	ta_fold_edges(a, l, seq, !kept);
}

/* Live task t is folded away by the model's live-task limit: its row goes
 * into its group as a finished one's does (its state as it is now; an idle
 * time still open is counted in the group to the end of the trace), the
 * edges into it to group edges. */
static void on_fold(void *ctx, struct tm_task *t, uint64_t ts)
{
	struct analysis *a = ctx;
	struct tlive *l = ta_live(a, t);
	uint64_t seq = t->seq;
	uint32_t id;

	(void)ts;
	if (!l->has_row)
		return;
	flush_row(a, l, t);
	a->tasks[l->idx].state = t->state == TM_IDLE ? TASK_STATE_IDLE
				 : t->state == TM_RUNNABLE ? TASK_STATE_RUNNABLE
				 : TASK_STATE_COMPLETED;
	id = ta_live_ident(a, l);
	if (a->tasks[l->idx].kind != TASK_KIND_TASK || !fold_row(a, l->idx)) {
		/* out of memory (or not a user task): the row stays, final */
		fold_pct(a, l);
		fold_dists(a, l, a->tasks[l->idx].kind);
		ta_fold_edges(a, l, seq, false);
		return;
	}
	fold_dists(a, l, a->tasks[l->idx].kind);
	a->folded_live++;
	if (t->state == TM_IDLE && id) {
		a->idents[id - 1].open_idle++;
		a->idents[id - 1].open_since += t->since;
	}
	ta_fold_edges(a, l, seq, true);
}

static void on_park(void *ctx, struct tm_thread *th, uint64_t ts)
{
	struct analysis *a = ctx;

	(void)ts;
	tthread(a, th)->st.parks++;
}

static void on_unpark(void *ctx, struct tm_thread *th, uint64_t begin, uint64_t ts, uint64_t d)
{
	struct analysis *a = ctx;

	tthread(a, th)->st.parked_ns += d;
	if (a->obs.park)
		a->obs.park(a->obs.ctx, th->tid, begin, ts);
}

/* A task still live at the end: its state then; its distributions and the
 * edges into it are folded. */
static void on_cut(void *ctx, struct tm_task *t, uint64_t end_ns)
{
	struct analysis *a = ctx;
	struct tlive *l = ta_live(a, t);
	struct task_stats *st = &a->tasks[l->idx];

	(void)end_ns;
	if (!l->has_row)
		return;
	flush_row(a, l, t);
	/* a task known without a poll (a profile trace's, by id) */
	if (!st->polls && !st->name)
		row_named(a, l->idx, t);
	if (!st->tokio_id)
		st->tokio_id = t->tokio_id;
	st->before = t->before;
	switch (t->state) {
	case TM_RUNNING:
		st->state = TASK_STATE_RUNNING;
		break;
	case TM_RUNNABLE:
		st->state = TASK_STATE_RUNNABLE;
		break;
	case TM_IDLE:
		st->state = TASK_STATE_IDLE;
		st->wakers = t->wakers;
		st->wakers_known = t->wakers_known;
		break;
	case TM_COMPLETED:
		st->state = TASK_STATE_COMPLETED;
		break;
	}
	fold_pct(a, l);
	fold_dists(a, l, st->kind);
	ta_fold_edges(a, l, st->seq, false);
}

static const struct tm_ops observer_ops = {
	.thread = on_thread, .born = on_born, .leave = on_leave, .enter = on_enter,
	.poll_begin = on_poll_begin, .poll_end = on_poll_end, .worker = on_worker,
	.wake = on_wake, .gone = on_gone, .park = on_park, .unpark = on_unpark, .cut = on_cut,
	.fold = on_fold,
};

static struct analysis *analysis_new(struct task_model *m, bool own,
				     const struct as_trace_meta *meta,
				     const struct analysis_opts *opts)
{
	struct analysis *a = calloc(1, sizeof(*a));
	int err;

	if (!a)
		return NULL;
	a->model = m;
	if (meta) {
		a->meta = *meta;
		a->has_meta = true;
	}
	if (opts)
		a->opts = *opts;
	if (a->opts.observer)
		a->obs = *a->opts.observer;
	a->opts.observer = NULL;
	if (!a->opts.long_poll_ns)
		a->opts.long_poll_ns = ANALYSIS_LONG_POLL_NS;
	if (!a->opts.stall_ns)
		a->opts.stall_ns = ANALYSIS_STALL_NS;
	if (!a->opts.starve_ns)
		a->opts.starve_ns = ANALYSIS_STARVE_NS;
	if (!a->opts.long_poll_keep)
		a->opts.long_poll_keep = ANALYSIS_LONG_POLL_KEEP;
	if (!a->opts.max_tasks)
		a->opts.max_tasks = ANALYSIS_MAX_TASKS;
	a->sweep_at = SWEEP_MIN;
	a->sum.start_ns = UINT64_MAX;   /* the first event's, or set at finish */
	a->sum.long_poll_ns = a->opts.long_poll_ns;
	a->sum.stall_ns = a->opts.stall_ns;
	a->sum.starve_ns = a->opts.starve_ns;
	if (!a->opts.states_only) {
		a->heap = calloc(a->opts.long_poll_keep, sizeof(*a->heap));
		if (!a->heap) {
			free(a);
			return NULL;
		}
	}
	a->ops = observer_ops;
	if (!a->obs.runnable)
		a->ops.enter = NULL; /* only the observer wants it */
	err = task_model__observe(m, &a->ops, a, sizeof(struct tlive), &a->toff,
				  sizeof(struct tthread), &a->thoff);
	if (err) {
		free(a->heap);
		free(a);
		errno = -err;
		return NULL;
	}
	a->own_model = own;
	return a;
}

struct analysis *analysis__new_on(struct task_model *m, const struct as_trace_meta *meta,
				  const struct analysis_opts *opts)
{
	int err;

	if (!m) {
		errno = EINVAL;
		return NULL;
	}
	if ((err = task_model__set_max_live(m, analysis_max_live(opts)))) {
		errno = -err;
		return NULL;
	}
	return analysis_new(m, false, meta, opts);
}

struct analysis *analysis__new_opts(const struct as_trace_meta *meta,
				    const struct analysis_opts *opts)
{
	struct task_model *m = task_model__new(meta);
	struct analysis *a;
	int err;

	if (!m)
		return NULL;
	err = task_model__set_max_live(m, analysis_max_live(opts));
	if (err) {
		task_model__free(m);
		errno = -err;
		return NULL;
	}
	a = analysis_new(m, true, meta, opts);
	if (!a) {
		int err = errno;

		task_model__free(m);
		errno = err;
	}
	return a;
}

size_t analysis_max_live(const struct analysis_opts *opts)
{
	size_t n = opts && opts->max_live_tasks ? opts->max_live_tasks : ANALYSIS_MAX_LIVE_TASKS;

	return n == ANALYSIS_UNLIMITED ? 0 : n;
}

struct analysis *analysis__new(const struct as_trace_meta *meta)
{
	return analysis__new_opts(meta, NULL);
}

int analysis__add(struct analysis *a, const struct as_event *ev)
{
	int err = 0;
	uint64_t ts;

	if (__builtin_expect(!a || !ev || a->finished, 0))
		return -EINVAL;
	a->sum.events++;
	ts = ev->ts;
	/* start_ns begins at UINT64_MAX (no event seen: see finish) */
	if (ts < a->sum.start_ns)
		a->sum.start_ns = ts;
	if (ts > a->last_ts)
		a->last_ts = ts;
	/* other concerns' events (USDT hits, ...) are counted, not analysed
	 * here; only a type no trace can hold is an anomaly */
	if (__builtin_expect(ev->type == 0 || ev->type >= AS_EV__MAX, 0))
		a->sum.anomalies++;
	if (__builtin_expect(a->own_model, 0))
		err = task_model__add(a->model, ev);
	if (__builtin_expect(a->err != 0, 0)) {
		if (!err)
			err = a->err;
		a->err = 0;
	}
	return err;
}


static int by_duration(const void *x, const void *y)
{
	const struct long_poll *a = x, *b = y;

	if (a->duration_ns != b->duration_ns)
		return a->duration_ns < b->duration_ns ? 1 : -1;
	return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns;
}

static int by_stall(const void *x, const void *y)
{
	const struct stall *a = x, *b = y;

	if (a->stalled_ns != b->stalled_ns)
		return a->stalled_ns < b->stalled_ns ? 1 : -1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int by_wait(const void *x, const void *y)
{
	const struct starve *a = x, *b = y;

	if (a->max_wait_ns != b->max_wait_ns)
		return a->max_wait_ns < b->max_wait_ns ? 1 : -1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Long polls (those of tasks that turned out to be workers dropped, start
 * made relative), stalled and starved tasks: the folded rows' entries (made
 * when they were folded) and the kept rows'. Group references resolved. */
static int finish_lists(struct analysis *a)
{
	const struct summary *s = &a->sum;
	size_t n = 0, n_stall = 0, n_starve = 0;

	for (size_t i = 0; i < a->n_heap; i++) {
		struct long_poll p = a->heap[i];
		const struct task_stats *st = ta_row_of(a, p.seq);

		if (st && st->kind != TASK_KIND_TASK)
			continue;
		p.group = st ? 0 : ta_group_ref(a, p.group);
		p.start_ns = p.start_ns > s->start_ns ? p.start_ns - s->start_ns : 0;
		a->heap[n++] = p;
	}
	a->n_heap = n;
	qsort(a->heap, a->n_heap, sizeof(*a->heap), by_duration);

	for (size_t i = 0; i < a->n_stalls; i++) {
		struct stall *p = &a->stalls[i];

		p->group = ta_group_ref(a, p->group);
		p->since_ns = p->since_ns > s->start_ns ? p->since_ns - s->start_ns : 0;
	}
	for (size_t i = 0; i < a->n_starves; i++)
		a->starves[i].group = ta_group_ref(a, a->starves[i].group);
	for (size_t i = 0; i < a->n_tasks; i++) {
		n_stall += a->tasks[i].kind == TASK_KIND_TASK && a->tasks[i].stalls;
		n_starve += a->tasks[i].kind == TASK_KIND_TASK && a->tasks[i].starved;
	}
	if (ta_grow((void **)&a->stalls, &a->cap_stalls, a->n_stalls + n_stall + 1,
		 sizeof(*a->stalls)) ||
	    ta_grow((void **)&a->starves, &a->cap_starves, a->n_starves + n_starve + 1,
		 sizeof(*a->starves)))
		return -ENOMEM;
	for (size_t i = 0; i < a->n_tasks; i++) {
		const struct task_stats *st = &a->tasks[i];

		if (st->kind != TASK_KIND_TASK)
			continue;
		if (st->stalls)
			a->stalls[a->n_stalls++] = (struct stall){
				.seq = st->seq, .since_ns = st->stall_since_ns,
				.stalled_ns = st->stall_ns, .until_end = st->stall_until_end,
				.count = st->stalls,
			};
		if (st->starved)
			a->starves[a->n_starves++] = (struct starve){
				.seq = st->seq, .max_wait_ns = st->starve_max_ns, .count = st->starved,
			};
	}
	qsort(a->stalls, a->n_stalls, sizeof(*a->stalls), by_stall);
	qsort(a->starves, a->n_starves, sizeof(*a->starves), by_wait);
	return 0;
}

/* Identities (indices into ctx, the array of idents) by busy time of their
 * groups, then tasks, then the order they were met. */
static int by_group_busy(const void *x, const void *y, void *ctx)
{
	size_t i = *(const size_t *)x, j = *(const size_t *)y;
	const struct ident *id = ctx;
	const struct task_group *a = &id[i].g, *b = &id[j].g;

	if (a->busy_ns != b->busy_ns)
		return a->busy_ns < b->busy_ns ? 1 : -1;
	if (a->tasks != b->tasks)
		return a->tasks < b->tasks ? 1 : -1;
	return i < j ? -1 : i > j;
}

/* The groups of folded tasks, busiest first, and the map from identities to
 * them. */
static int finish_groups(struct analysis *a)
{
	size_t *order;

	a->group_of = calloc(a->n_idents ? a->n_idents : 1, sizeof(*a->group_of));
	a->groups = calloc(a->n_idents ? a->n_idents : 1, sizeof(*a->groups));
	order = calloc(a->n_idents ? a->n_idents : 1, sizeof(*order));
	if (!a->group_of || !a->groups || !order) {
		free(order);
		return -ENOMEM;
	}
	for (size_t i = 0; i < a->n_idents; i++)
		if (a->idents[i].g.tasks)
			order[a->n_groups++] = i;
	qsort_r(order, a->n_groups, sizeof(*order), by_group_busy, a->idents);
	for (size_t i = 0; i < a->n_groups; i++) {
		a->groups[i] = a->idents[order[i]].g;
		a->group_of[order[i]] = (uint32_t)(i + 1);
	}
	free(order);
	return 0;
}

/* Kept and live rows to the front of a->tasks, in seq order. */
static void sort_rows(struct analysis *a)
{
	size_t n = 0;

	for (size_t i = 0; i < a->n_tasks; i++)
		if (a->tasks[i].seq)
			a->tasks[n++] = a->tasks[i];
	a->n_tasks = n;
	if (n)
		qsort(a->tasks, a->n_tasks, sizeof(*a->tasks), ta_by_seq);
	/* from now on rinfo holds the rows' seqs in that order: ta_row_of()
	 * searches them there, 16 bytes a row rather than a row's 300 */
	for (size_t i = 0; i < n; i++)
		a->rinfo[i] = (struct rinfo){ .seq = a->tasks[i].seq };
	a->sorted = true;
	a->n_free = 0;
	a->n_keep = 0;
	u64tab__clear(&a->slot_of);
}

int analysis__finish(struct analysis *a, const struct as_trace_end *end)
{
	struct tm_thread *const *threads;
	size_t n_threads;
	struct summary *s;
	uint64_t end_ns;

	if (!a || a->finished)
		return -EINVAL;
	s = &a->sum;
	if (a->counted_by_model) {
		/* the events its sink was not called for: the model's counts */
		const struct tm_counts *c = task_model__counts(a->model);

		s->events += c->events;
		if (c->min_ts < s->start_ns)
			s->start_ns = c->min_ts;
		if (c->max_ts > a->last_ts)
			a->last_ts = c->max_ts;
		s->anomalies += c->bad_types;
	}
	a->seen_event = s->events > 0;
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

	/* Polls, parks and tasks still open: closed by the model (its
	 * callbacks), which is finished first when shared. */
	if (a->own_model)
		task_model__finish(a->model, end_ns);
	s->anomalies += task_model__anomalies(a->model);
	sort_rows(a);
	/* a worker loop block_in_place started: its spawner handed its
	 * worker's queue over (rows sorted by seq: the spawner's by search) */
	for (size_t i = 0; i < a->n_tasks; i++) {
		const struct task_stats *w = &a->tasks[i], *p;

		if (w->kind == TASK_KIND_WORKER && w->parent &&
		    (task_model__name_kind(a->model, w->name) & TM_NAME_HANDOFF) &&
		    (p = ta_row_of(a, w->parent)) != NULL)
			a->tasks[p - a->tasks].handoffs++;
	}
	for (size_t i = 0; i < a->n_tasks; i++) {
		struct task_stats *st = &a->tasks[i];

		st->mean_poll_ns = st->polls ? st->busy_ns / st->polls : 0;
		st->pending_ratio = st->polls ? (double)st->pending_polls / (double)st->polls : 0;
		st->self_wake_ratio = st->wakes ? (double)st->self_wakes / (double)st->wakes : 0;
		if (st->stalls)
			st->stall_since_ns = st->stall_since_ns > s->start_ns
					     ? st->stall_since_ns - s->start_ns : 0;
		if (st->kind == TASK_KIND_TASK)
			s->long_polls += st->long_polls;
		s->tasks++;
		s->polls += st->polls;
		if (st->kind == TASK_KIND_WORKER) {
			s->worker_tasks++;
		} else {
			s->user_tasks++;
			s->user_polls += st->polls;
		}
	}
	/* Folded tasks: user tasks, all of them. */
	s->tasks += a->folded;
	s->user_tasks += a->folded;
	s->polls += a->folded_polls;
	s->user_polls += a->folded_polls;
	s->long_polls += a->folded_long_polls;
	s->folded_tasks = a->folded;
	s->max_tasks = a->opts.max_tasks == ANALYSIS_UNLIMITED ? 0 : a->opts.max_tasks;
	s->max_live_tasks = task_model__max_live(a->model);
	s->folded_live_tasks = a->folded_live;
	s->folded_events = task_model__folded_events(a->model);
	for (size_t i = 0; i < a->n_idents; i++) {
		struct ident *id = &a->idents[i];
		unsigned __int128 to_end = (unsigned __int128)id->open_idle * end_ns;

		/* open idle times to the end, as cut tasks' (clamped as a whole) */
		if (id->open_idle)
			id->g.idle_ns += to_end > id->open_since
					 ? (uint64_t)(to_end - id->open_since) : 0;
	}
	if (finish_groups(a))
		return -ENOMEM;
	s->task_groups = a->n_groups;

	threads = task_model__threads(a->model, &n_threads);
	a->workers = calloc(n_threads ? n_threads : 1, sizeof(*a->workers));
	if (!a->workers)
		return -ENOMEM;
	for (size_t i = 0; i < n_threads; i++)
		if (threads[i]->runs_tasks) {
			struct worker_stats *w = &a->workers[a->n_workers++];

			*w = tthread(a, threads[i])->st;
			w->tid = threads[i]->tid;
			w->name = threads[i]->name;
		}
	s->workers = a->n_workers;
	if (!a->opts.states_only && (finish_lists(a) || ta_finish_edges(a)))
		return -ENOMEM;
	s->stalled_tasks = a->n_stalls;
	s->starved_tasks = a->n_starves;
	if (a->err)
		return a->err;
	a->finished = true;
	return 0;
}

bool analysis__pool_name(const struct analysis *a, const char *name)
{
	return a && ta_blocking_name(a, name);
}

const struct task_stats *analysis__tasks(const struct analysis *a, size_t *n)
{
	*n = a && a->finished ? a->n_tasks : 0;
	return a && a->finished ? a->tasks : NULL;
}

const struct task_stats *analysis__task(const struct analysis *a, uint64_t seq)
{
	return a && a->finished ? ta_row_of(a, seq) : NULL;
}

const struct task_group *analysis__groups(const struct analysis *a, size_t *n)
{
	*n = a && a->finished ? a->n_groups : 0;
	return *n ? a->groups : NULL;
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

const struct hist *analysis__dist(const struct analysis *a, enum dist d)
{
	return a && a->finished && d >= 0 && d < DIST__MAX ? &a->dist[d] : NULL;
}

const struct long_poll *analysis__long_polls(const struct analysis *a, size_t *n)
{
	*n = a && a->finished ? a->n_heap : 0;
	return *n ? a->heap : NULL;
}

const struct stall *analysis__stalled(const struct analysis *a, size_t *n)
{
	*n = a && a->finished ? a->n_stalls : 0;
	return *n ? a->stalls : NULL;
}

const struct starve *analysis__starved(const struct analysis *a, size_t *n)
{
	*n = a && a->finished ? a->n_starves : 0;
	return *n ? a->starves : NULL;
}

const struct wake_edge *analysis__edges(const struct analysis *a, size_t *n)
{
	*n = a && a->finished ? a->n_edges : 0;
	return *n ? a->edges : NULL;
}

static int sink_add(void *impl, const struct as_event *ev, const struct as_stack *stack)
{
	struct analysis *a = impl;
	int err;

	(void)stack;
	if (!a || !ev || !a->counted_by_model)
		return analysis__add(a, ev);
	/* called all the same (a caller of the ops that does not read the
	 * sink's types): the model counted the event, its errors come here */
	if (a->finished)
		return -EINVAL;
	err = a->err;
	a->err = 0;
	return err;
}

static int sink_finish(void *impl, const struct as_trace_end *end)
{
	return analysis__finish(impl, end);
}

static const struct as_sink_ops sink_ops = {
	.name = "tasks", .add = sink_add, .finish = sink_finish, .free = NULL,
};

struct as_sink analysis__sink(struct analysis *a)
{
	/* On a shared model, the model's sink (before this one) counts the
	 * events: no call for each (its errors come at finish). */
	if (a && !a->own_model) {
		a->counted_by_model = true;
		return (struct as_sink){ .ops = &sink_ops, .impl = a, .types = AS_SINK_NO_EVENTS };
	}
	return (struct as_sink){ .ops = &sink_ops, .impl = a };
}

struct mem_walk {
	const struct analysis *a;
	struct analysis_mem *m;
};

static void mem_one(void *ctx, struct tm_task *t)
{
	struct mem_walk *w = ctx;
	const struct tlive *l = ta_live(w->a, t);

	w->m->live_tasks++;
	for (int d = 0; d < DIST__MAX; d++)
		w->m->live_hist_bytes += samples__mem(&l->h[d]);
	w->m->edge_bytes += ta_edges_mem(l);
}

void analysis__mem(const struct analysis *a, struct analysis_mem *m)
{
	struct mem_walk w = { .a = a, .m = m };

	memset(m, 0, sizeof(*m));
	if (!a)
		return;
	task_model__each(a->model, mem_one, &w);
	m->rows = a->n_tasks - a->n_free;
	m->folded_tasks = a->folded;
	m->groups = a->n_idents;
	m->live_edges = a->n_live_edges;
	m->group_edges = a->n_gedges;
	m->edges = m->live_edges + a->n_edges - a->n_moved + a->n_gedges;
	task_model__threads(a->model, &m->threads);
	m->edge_bytes += a->gedge_of.cap * 2 * sizeof(uint64_t) +
			 a->cap_edges * sizeof(*a->edges) + a->cap_gedges * sizeof(*a->gedges) +
			 a->cap_rowe * sizeof(*a->rowe);
	for (size_t i = 0; i < a->n_gedges; i++)
		m->edge_bytes += cbag__mem(&a->gedges[i].delay);
	m->bytes = m->live_hist_bytes + task_model__bytes(a->model) +
		   a->cap_tasks * sizeof(*a->tasks) + m->edge_bytes +
		   (a->slot_of.cap + a->ident_of.cap) * 2 * sizeof(uint64_t) +
		   a->opts.long_poll_keep * sizeof(*a->heap) +
		   a->cap_stalls * sizeof(*a->stalls) +
		   a->cap_starves * sizeof(*a->starves) + a->cap_idents * sizeof(*a->idents) +
		   (a->cap_free + a->cap_keep) * sizeof(size_t);
	for (int d = 0; d < DIST__MAX; d++)
		m->bytes += hist__mem(&a->dist[d]);
}

static void free_one(void *ctx, struct tm_task *t)
{
	struct tlive *l = ta_live(ctx, t);

	for (int d = 0; d < DIST__MAX; d++)
		samples__clear(&l->h[d]);
	ta_clear_edges(ctx, l);
}

void analysis__free(struct analysis *a)
{
	if (!a)
		return;
	task_model__each(a->model, free_one, a);
	if (a->own_model)
		task_model__free(a->model);
	for (size_t i = 0; i < a->n_gedges; i++)
		cbag__clear(&a->gedges[i].delay);
	free(a->gedges_raw);
	u64tab__clear(&a->gedge_of);
	free(a->gscratch);
	free(a->fold_ed.e);
	free(a->fold_ed.slot);
	free(a->rowe);
	free(a->free_slots);
	free(a->keep);
	u64tab__clear(&a->slot_of);
	free(a->idents);
	u64map__clear(&a->ident_of);
	free(a->groups);
	free(a->group_of);
	for (int d = 0; d < DIST__MAX; d++)
		hist__clear(&a->dist[d]);
	free(a->heap);
	free(a->edges);
	free(a->eslot);
	free(a->stalls);
	free(a->starves);
	free(a->tasks);
	free(a->rinfo);
	free(a->workers);
	free(a);
}

bool analysis__wakes_unrecorded(const struct analysis *a, const struct as_trace_meta *meta)
{
	const struct task_stats *t;
	const struct task_group *g;
	size_t n;

	if (!as_meta_lite(meta))
		return false;
	t = analysis__tasks(a, &n);
	for (size_t i = 0; i < n; i++)
		if (t[i].wakes)
			return false;
	g = analysis__groups(a, &n);
	for (size_t i = 0; i < n; i++)
		if (g[i].wakes)
			return false;
	return true;
}
