/* tasks_edges: the wake graph of the task analysis (see tasks.h, struct
 * wake_edge, and the top of tasks.c for how edges are kept, folded and
 * merged). Wakes come from the task model's wake() through tasks.c
 * (ta_wake_edge()); the waker kinds are the model's (task_model.h), resolved
 * again at finish once every task's kind is known.
 * Pure C: no libbpf, no I/O, no globals. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/tasks_int.h"

static enum wake_source resolve(const struct analysis *a, uint64_t code, uint32_t from_ident,
				uint64_t *from_seq);
static enum wake_source resolve_row(const struct analysis *a, uint64_t code,
				    uint32_t from_ident, uint64_t *from_seq, bool *row);

/* resolve_row() for a waker task whose row had slot `slot` when its edge
 * was made: its row is looked for there (its seq still there: the same
 * row; else, a row never moving before finish, it was folded), without a
 * lookup by seq. After finish (rows sorted) or for a slot past the rows:
 * resolve_row(). */
static enum wake_source resolve_slot(const struct analysis *a, uint64_t code,
				     uint32_t from_ident, uint32_t slot, uint64_t *from_seq,
				     bool *row)
{
	uint64_t seq = code - EDGE_TASK;
	const char *name;

	if (code < EDGE_TASK || a->sorted || slot >= a->cap_rinfo)
		return resolve_row(a, code, from_ident, from_seq, row);
	*from_seq = 0;
	if (a->rinfo[slot].seq == seq) {
		uint8_t f = a->rinfo[slot].flags;

		*row = true;
		if (f & RF_WORKER)
			return WAKE_FROM_RUNTIME;
		if (f & RF_BLOCKING)
			return WAKE_FROM_BLOCKING;
		*from_seq = seq;
		return WAKE_FROM_TASK;
	}
	*row = false;
	name = from_ident && from_ident <= a->n_idents ? a->idents[from_ident - 1].g.name : NULL;
	if (ta_blocking_name(a, name))
		return WAKE_FROM_BLOCKING;
	*from_seq = seq;
	return WAKE_FROM_TASK;
}

static enum wake_source resolve_edge(const struct analysis *a, const struct edge_acc *e,
				     uint64_t *from_seq, bool *row)
{
	return resolve_slot(a, e->code, e->from_ident, e->waker_slot, from_seq, row);
}

/* The waker end of compact edge i of a->edges (waker_end() through the
 * slot its waker's row had: a->eslot[i]). */
static uint32_t waker_end_at(const struct analysis *a, size_t i)
{
	const struct wake_edge *e = &a->edges[i];
	uint64_t seq;
	bool row;
	enum wake_source k = resolve_slot(a, e->from_seq, e->from_group,
					  a->eslot ? a->eslot[i] : UINT32_MAX, &seq, &row);

	if (k != WAKE_FROM_TASK)
		return (uint32_t)k;
	return e->from_group && (!row || a->idents[e->from_group - 1].g.tasks)
	       ? END_GROUP | e->from_group : (uint32_t)(seq + EDGE_TASK);
}

/* The end code (see END_GROUP) of task seq, whose identity is id (0
 * unknown), plus base (EDGE_TASK for a waker, 0 for a woken task): its group
 * if it was folded or if its identity is a group already, else the task. */
static uint32_t task_end(const struct analysis *a, uint64_t seq, uint32_t id, uint64_t base)
{
	if (id && (!ta_row_of(a, seq) || a->idents[id - 1].g.tasks))
		return END_GROUP | id;
	return (uint32_t)(seq + base);
}

/* The end code of the waker of edge code (from_ident: the waker task's
 * identity), its kind as far as known now. */
static uint32_t waker_end(const struct analysis *a, uint64_t code, uint32_t from_ident)
{
	uint64_t seq;
	enum wake_source k = resolve(a, code, from_ident, &seq);

	return k == WAKE_FROM_TASK ? task_end(a, seq, from_ident, EDGE_TASK) : (uint32_t)k;
}

/* Room for one more group edge in a->gedges, kept 64-byte aligned (an
 * edge is two cache lines) inside a block grown by realloc() (a large one
 * is remapped, not copied: no second copy of the edges at the peak), the
 * edges moved when the block's alignment changes. 0 or -ENOMEM. */
static int gedges_reserve(struct analysis *a)
{
	size_t ncap = a->cap_gedges ? a->cap_gedges * 2 : 64;
	size_t old_off = a->gedges ? (size_t)((char *)a->gedges - (char *)a->gedges_raw) : 0;
	char *raw;
	struct gedge *p;

	if (a->n_gedges < a->cap_gedges)
		return 0;
	raw = realloc(a->gedges_raw, ncap * sizeof(*p) + 64);
	if (!raw)
		return -ENOMEM;
	p = (struct gedge *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
	if ((char *)p - raw != (ptrdiff_t)old_off && a->n_gedges)
		memmove(p, raw + old_off, a->n_gedges * sizeof(*p));
	a->gedges_raw = raw;
	a->gedges = p;
	a->cap_gedges = ncap;
	return 0;
}

/* The group edge (from, to), added if new; NULL out of memory (a->err set). */
static struct gedge *gedge_get(struct analysis *a, uint32_t from, uint32_t to,
			       uint32_t from_ident, uint32_t to_ident)
{
	uint64_t key = (uint64_t)from << 32 | to, v;
	struct gedge *g;

	if (u64tab__get(&a->gedge_of, key, &v))
		return &a->gedges[v - 1];
	if (key == UINT64_MAX) { /* 2^31 - 1 identities: cannot be keyed */
		a->sum.anomalies++;
		return NULL;
	}
	if (gedges_reserve(a) || u64tab__set(&a->gedge_of, key, a->n_gedges + 1)) {
		a->err = -ENOMEM;
		return NULL;
	}
	g = &a->gedges[a->n_gedges++];
	memset(g, 0, sizeof(*g));
	g->from = from;
	g->to = to;
	g->from_ident = from_ident;
	g->to_ident = to_ident;
	return g;
}

/* The waker end of live edge e, from the kind and row ta_fold_edges()
 * found for it: waker_end() without its lookups. */
static inline uint32_t gedge_from(const struct analysis *a, const struct edge_acc *e)
{
	if (e->kind != WAKE_FROM_TASK)
		return e->kind;
	return e->from_ident && (!e->waker_row || a->idents[e->from_ident - 1].g.tasks)
	       ? END_GROUP | e->from_ident : (uint32_t)e->code;
}

/* n delays of d into group edge g. */
static void gedge_sample(struct analysis *a, struct gedge *g, uint64_t d, uint64_t n)
{
	if (!n)
		return;
	if (d > g->max)
		g->max = d;
	ta_nomem(a, cbag__add(&g->delay, d, n));
}

struct sample_into {
	struct analysis *a;
	struct gedge *g;
};

static void sample_into(void *ctx, uint64_t v, uint64_t n)
{
	struct sample_into *x = ctx;

	gedge_sample(x->a, x->g, v, n);
}

/* The wakes of live edge e into group edge (from, to): its delays at group
 * precision (coarse() of a raw value is that of the lowest value of its
 * histogram bucket: a bucket is at most a sixteenth of a group step), its
 * maximum exact. at: the group edge's index + 1 when known, else 0. */
static void gedge_add_acc(struct analysis *a, struct edge_acc *e, uint32_t from, uint32_t to,
			  uint32_t to_ident, uint64_t at)
{
	struct gedge *g = at ? &a->gedges[at - 1] : gedge_get(a, from, to, e->from_ident, to_ident);
	struct sample_into x = { .a = a, .g = g };
	uint64_t max;

	if (!g)
		return;
	g->count += e->count;
	g->timed += e->timed;
	g->tasks += e->tasks;
	if (!e->delay.n && !e->delay.h)
		return;
	samples__each(&e->delay, sample_into, &x);
	max = samples__max(&e->delay);
	if (max > g->max)
		g->max = max;
}

/* The wakes of compact edge e into group edge (from, to): its delays as its
 * maximum once, then the other timed wakes half at its p50, half at its p99
 * (exact for up to two). */
static void gedge_add_rec_at(struct analysis *a, const struct wake_edge *e, uint32_t from,
			     uint32_t to, uint64_t at)
{
	struct gedge *g = at ? &a->gedges[at - 1] : gedge_get(a, from, to, e->from_group, e->to_group);
	uint64_t rest;

	if (!g)
		return;
	g->count += e->count;
	g->timed += e->timed;
	g->tasks += e->tasks;
	if (!e->timed)
		return;
	rest = e->timed - 1;
	gedge_sample(a, g, e->delay_max_ns, 1);
	gedge_sample(a, g, e->delay_p50_ns, rest - rest / 2);
	gedge_sample(a, g, e->delay_p99_ns, rest / 2);
}

static void gedge_add_rec(struct analysis *a, const struct wake_edge *e, uint32_t from,
			  uint32_t to)
{
	gedge_add_rec_at(a, e, from, to, 0);
}

/* Lookups in flight ahead of the one being made (gedges_find()): enough
 * to overlap their latencies, few enough for the misses the processor
 * keeps outstanding at once (prefetches past those are dropped). */
#define FIND_AHEAD 6

/* The group edges of keys[0 .. n) (from << 32 | to; 0: none) looked up,
 * each map slot fetched FIND_AHEAD lookups ahead, then each found record
 * fetched: keys[i] becomes the edge's index + 1, or 0 (none yet, or no
 * key). */
static void gedges_find(struct analysis *a, uint64_t *keys, size_t n)
{
	for (size_t x = 0; x < n + FIND_AHEAD; x++) {
		if (x < n && keys[x])
			u64tab__prefetch(&a->gedge_of, keys[x]);
		if (x < FIND_AHEAD)
			continue;
		size_t y = x - FIND_AHEAD;
		uint64_t v = 0;

		if (!keys[y] || !u64tab__get(&a->gedge_of, keys[y], &v))
			v = 0;
		keys[y] = v;
		if (v) {
			__builtin_prefetch(&a->gedges[v - 1], 1);
			__builtin_prefetch((char *)&a->gedges[v - 1] + 64, 1);
		}
	}
}

/* The kept row in slot (identity id) is being folded: its compact edges go
 * into group edges (found first, their memory fetched ahead: the same
 * updates in the same order). */
void ta_row_edges_out(struct analysis *a, size_t slot, uint32_t id)
{
	struct row_edges *r = a->rowe ? &a->rowe[slot] : NULL;
	size_t first, n;
	bool hints;

	if (!r || !r->first)
		return;
	first = r->first - 1;
	n = r->n;
	/* the waker ends first: nothing below changes them */
	hints = !ta_grow((void **)&a->gscratch, &a->cap_gscratch, n, sizeof(*a->gscratch));
	if (hints) {
		for (size_t i = 0; i < n; i++) {
			const struct wake_edge *e = &a->edges[first + i];

			a->gscratch[i] = e->count ? (uint64_t)waker_end_at(a, first + i) << 32 |
						    (END_GROUP | id) : 0;
		}
		gedges_find(a, a->gscratch, n);
	}
	for (size_t i = 0; i < n; i++) {
		struct wake_edge *e = &a->edges[first + i];

		if (!e->count)
			continue; /* moved by a sweep already */
		gedge_add_rec_at(a, e, waker_end_at(a, first + i), END_GROUP | id,
				 hints ? a->gscratch[i] : 0);
		e->count = 0;
		a->n_moved++;
	}
	*r = (struct row_edges){ 0 };
}

/* Compacts a->edges: drops the edges moved out, moves those whose waker was
 * folded since into group edges, and finds the runs of each kept row again. */
static void sweep_edges(struct analysis *a)
{
	size_t n = 0;
	uint64_t last_to = 0;
	struct row_edges *last_r = NULL;

	for (size_t i = 0; i < a->n_edges; i++) {
		struct wake_edge e = a->edges[i];
		struct row_edges *r = NULL;
		uint64_t v;

		/* a row's edges come in a run: its row looked up once */
		if (a->rowe && e.to_seq == last_to && last_to) {
			r = last_r;
		} else if (a->rowe && u64tab__get(&a->slot_of, e.to_seq, &v)) {
			r = &a->rowe[v - 1];
			last_to = e.to_seq;
			last_r = r;
		} else {
			last_to = 0;
			last_r = NULL;
		}
		if (r && r->first == i + 1)
			*r = (struct row_edges){ 0 }; /* its run starts: found again below */
		if (!e.count)
			continue;
		if (e.from_group) {
			uint64_t seq;
			bool row;

			/* waker_folded(), through the slot its waker's row had */
			if (resolve_slot(a, e.from_seq, e.from_group, a->eslot[i], &seq, &row) ==
			    WAKE_FROM_TASK && !row) {
				gedge_add_rec(a, &e, END_GROUP | e.from_group,
					      task_end(a, e.to_seq, e.to_group, 0));
				continue;
			}
		}
		if (r) {
			if (!r->n)
				r->first = (uint32_t)(n + 1);
			r->n++;
		}
		a->eslot[n] = a->eslot[i];
		a->edges[n++] = e;
	}
	a->n_edges = n;
	a->n_moved = 0;
	a->sweep_at = n + n / 2 > SWEEP_MIN ? n + n / 2 : SWEEP_MIN;
}

static inline uint32_t code_hash(uint32_t code, uint32_t nslot)
{
	return (uint32_t)(((uint64_t)code * 0x9e3779b97f4a7c15ULL) >> 32) & (nslot - 1);
}

/* The edge index table of t, nslot slots (a power of two), rebuilt from its
 * edges. 0 or -ENOMEM (the table unchanged). */
static int edges_index(struct tedges *t, uint32_t nslot)
{
	uint32_t *slot = calloc(nslot, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->n; i++) {
		uint32_t h = code_hash(t->e[i].code, nslot);

		while (slot[h])
			h = (h + 1) & (nslot - 1);
		slot[h] = i + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->nslot = nslot;
	return 0;
}

/* The index of t's edge from code (scanned, or through its index), or -1. */
static inline long edge_find(const struct tedges *t, uint32_t code)
{
	if (!t->nslot) {
		for (uint32_t i = 0; i < t->n; i++)
			if (t->e[i].code == code)
				return (long)i;
		return -1;
	}
	for (uint32_t h = code_hash(code, t->nslot);; h = (h + 1) & (t->nslot - 1)) {
		uint32_t s = t->slot[h];

		if (!s)
			return -1;
		if (t->e[s - 1].code == code)
			return (long)(s - 1);
	}
}

/* The edge of wake w in l's table, made if new (the waker's identity and
 * row slot from w): its index, or -1 out of memory (a->err set). */
static long edge_at(struct analysis *a, struct tlive *l, const struct wlog_ent *w)
{
	struct tedges *t = &l->ed;
	struct edge_acc *e;
	long idx;

	if ((idx = edge_find(t, w->code)) >= 0)
		return idx;
	if (t->n == t->cap) {
		uint32_t ncap = t->cap ? t->cap * 2 : 16;
		struct edge_acc *p = realloc(t->e, ncap * sizeof(*p));

		if (!p)
			goto nomem;
		t->e = p;
		t->cap = ncap;
	}
	/* an index past EDGE_SCAN edges, at most half full */
	if (t->n + 1 > EDGE_SCAN && 2 * (t->n + 1) > t->nslot &&
	    edges_index(t, t->nslot ? 2 * t->nslot : 4 * EDGE_SCAN))
		goto nomem;
	idx = (long)t->n++;
	e = &t->e[idx];
	memset(e, 0, sizeof(*e));
	e->code = w->code;
	e->from_ident = w->from_ident;
	e->waker_slot = w->slot;
	e->tasks = 1;
	if (t->nslot) {
		uint32_t h = code_hash(e->code, t->nslot);

		while (t->slot[h])
			h = (h + 1) & (t->nslot - 1);
		t->slot[h] = (uint32_t)idx + 1;
	}
	a->n_live_edges++;
	return idx;
nomem:
	a->err = -ENOMEM;
	return -1;
}

/* l's logged wakes into its edges, in order (an edge made at the first wake
 * of its waker, as the wakes came): each counted, a timed one's delay
 * sampled, a pending one's pend now on its edge (one whose pend was dropped
 * since, the task going, stays untimed). Out of memory: the wakes that did
 * not fit are lost (a->err set), their pends too. */
static void wlog_compact(struct analysis *a, struct tlive *l)
{
	for (uint32_t i = 0; i < l->n_log; i++) {
		const struct wlog_ent *w = &l->log[i];
		long idx = edge_at(a, l, w);
		struct edge_acc *e;

		if (idx < 0)
			continue;
		e = &l->ed.e[idx];
		e->count++;
		if (w->delay == WL_PENDING) {
			for (unsigned p = 0; p < l->n_pend; p++)
				if (l->pend[p].ref == i) {
					l->pend[p].ref = PEND_EDGE | (uint32_t)idx;
					break;
				}
		} else if (w->delay != WL_UNTIMED) {
			e->timed++;
			ta_nomem(a, samples__add(&e->delay, w->delay));
		}
	}
	l->n_log = 0;
	/* pends left on the log (their wake lost) go */
	unsigned n = 0;

	for (unsigned p = 0; p < l->n_pend; p++)
		if (l->pend[p].ref & PEND_EDGE)
			l->pend[n++] = l->pend[p];
	l->n_pend = (uint8_t)n;
}

void ta_wake_timed(struct analysis *a, struct tlive *l, uint64_t ts)
{
	/* out of order: already counted as an anomaly by the model */
#define DELAY(p) (ts > (p)->ts ? ts - (p)->ts : 0)
	for (unsigned i = 0; i < l->n_pend; i++)
		if (!(l->pend[i].ref & PEND_EDGE) && DELAY(&l->pend[i]) >= WL_PENDING) {
			/* too long for the log: its wakes into edges first (every
			 * pend then on an edge, or lost out of memory) */
			wlog_compact(a, l);
			break;
		}
	for (unsigned i = 0; i < l->n_pend; i++) {
		const struct pend *p = &l->pend[i];
		uint64_t d = DELAY(p);

		if (!(p->ref & PEND_EDGE)) {
			l->log[p->ref].delay = (uint32_t)d;
			continue;
		}
		struct edge_acc *e = &l->ed.e[p->ref & ~PEND_EDGE];

		e->timed++;
		ta_nomem(a, samples__add(&e->delay, d));
	}
#undef DELAY
	l->n_pend = 0;
}

void ta_wake_edge(struct analysis *a, struct tlive *l, uint64_t to_seq, const struct tm_wake *w,
		  uint64_t ts)
{
	uint64_t code;
	uint32_t from_ident = 0, slot = 0, i;

	if (a->opts.states_only)
		return;
	switch (w->kind) {
	case TM_WAKER_IO: code = WAKE_FROM_IO; break;
	case TM_WAKER_TIMER: code = WAKE_FROM_TIMER; break;
	case TM_WAKER_THREAD: code = WAKE_FROM_THREAD; break;
	case TM_WAKER_TASK: {
		struct tlive *wl = ta_live(a, w->waker);

		if (!wl->has_row) {
			a->sum.anomalies++;
			return;
		}
		code = w->waker->seq + EDGE_TASK;
		from_ident = ta_live_ident(a, wl);
		slot = (uint32_t)wl->idx;
		break;
	}
	default:
		code = WAKE_FROM_RUNTIME; /* a poll begun before the recording: the runtime's loop */
		break;
	}
	if (code >= END_GROUP || to_seq >= END_GROUP - EDGE_TASK) {
		a->sum.anomalies++;   /* beyond what the end codes can say */
		return;
	}
	if (l->n_log == l->cap_log) {
		if (l->cap_log < WLOG_MAX) {
			uint16_t ncap = l->cap_log ? WLOG_MAX : 16;
			struct wlog_ent *p = realloc(l->log, ncap * sizeof(*p));

			if (!p) {
				a->err = -ENOMEM;
				return;
			}
			l->log = p;
			l->cap_log = ncap;
		} else {
			wlog_compact(a, l);
		}
	}
	i = l->n_log++;
	l->log[i] = (struct wlog_ent){ .code = (uint32_t)code, .from_ident = from_ident,
				       .slot = slot, .delay = WL_UNTIMED };
	/* timed at the next poll if the first from that waker since the last */
	for (unsigned p = 0; p < l->n_pend; p++)
		if (l->pend[p].code == (uint32_t)code)
			return;
	if (l->n_pend == PEND_MAX) {
		a->sum.unsampled_wakes++;
		return;
	}
	l->log[i].delay = WL_PENDING;
	l->pend[l->n_pend++] = (struct pend){ .ref = i, .code = (uint32_t)code, .ts = ts };
}

/* Frees the edge table of l (its edges' delays already cleared) and its
 * log; a table borrowed from a->fold_ed goes back there, emptied. */
static void edges_free(struct analysis *a, struct tlive *l, bool borrowed)
{
	a->n_live_edges -= l->ed.n;
	if (borrowed) {
		free(l->ed.slot);
		a->fold_ed = (struct tedges){ .e = l->ed.e, .cap = l->ed.cap };
	} else {
		free(l->ed.e);
		free(l->ed.slot);
	}
	l->ed = (struct tedges){ 0 };
	free(l->log);
	l->log = NULL;
	l->n_log = l->cap_log = 0;
}

/* The edges into task l are final: edges from the runtime or from blocking
 * tasks (as far as known now) merged per kind; then, if its row was folded
 * (folded), every edge into group edges; else the edges from tasks with a
 * row, percentiles taken, appended to a->edges in the order they were
 * created (the table is walked newest first, as the edges are decided),
 * the others into group edges. Their samples and the table freed. */
void ta_fold_edges(struct analysis *a, struct tlive *l, uint64_t to_seq, bool folded)
{
	uint32_t merged[WAKE_FROM_THREAD + 1] = { 0 }, to_ident, to_end;
	size_t k = 0, at, first = a->n_edges;
	bool borrowed = false;
	uint64_t v;

	if (!l->ed.n && !l->n_log) {
		edges_free(a, l, false);   /* a log allocated, its wakes lost */
		return;
	}
	/* a task whose edges are all in its log: made in a table that serves
	 * every such task in turn (its memory kept) */
	if (!l->ed.cap && a->fold_ed.cap) {
		l->ed = a->fold_ed;
		a->fold_ed = (struct tedges){ 0 };
		borrowed = true;
	}
	wlog_compact(a, l);
	struct edge_acc *const E = l->ed.e;

	if (!l->ed.n) {
		edges_free(a, l, borrowed);
		return;
	}
	to_ident = ta_live_ident(a, l);
	for (uint32_t i = l->ed.n; i-- > 0;) {
		struct edge_acc *e = &E[i], *into;
		uint64_t from_seq;
		enum wake_source kind;

		if (e->merged)
			continue;
		bool row;

		kind = resolve_edge(a, e, &from_seq, &row);
		e->kind = (uint8_t)kind;
		e->waker_row = kind == WAKE_FROM_TASK && row;   /* ta_row_of(from_seq) */
		k++;
		if (kind == WAKE_FROM_RUNTIME || kind == WAKE_FROM_BLOCKING) {
			if (!merged[kind]) {
				merged[kind] = i + 1;
			} else {
				into = &E[merged[kind] - 1];
				into->count += e->count;
				into->timed += e->timed;
				into->tasks += e->tasks;
				ta_nomem(a, samples__merge(&into->delay, &e->delay));
				e->merged = true;
				k--;
			}
		}
	}
	if (ta_grow((void **)&a->edges, &a->cap_edges, a->n_edges + k, sizeof(*a->edges)) ||
	    ta_grow((void **)&a->eslot, &a->cap_eslot, a->cap_edges, sizeof(*a->eslot))) {
		a->err = -ENOMEM;   /* the edges into it are lost */
		for (uint32_t i = 0; i < l->ed.n; i++)
			samples__clear(&E[i].delay);
		edges_free(a, l, borrowed);
		return;
	}
	at = a->n_edges + k;
	to_end = task_end(a, to_seq, to_ident, 0);
	/* The group edges these go into are found first, their map slots and
	 * then their records fetched ahead (a group edge table is large and
	 * each lookup a cache miss): the same updates in the same order,
	 * their memory latencies overlapped. Out of memory: no hints. */
	size_t ng = 0, j = 0;

	if (!ta_grow((void **)&a->gscratch, &a->cap_gscratch, k, sizeof(*a->gscratch))) {
		for (uint32_t i = l->ed.n; i-- > 0;) {
			struct edge_acc *e = &E[i];

			if (!e->merged && (folded || (e->kind == WAKE_FROM_TASK && !e->waker_row))) {
				uint64_t key = (uint64_t)gedge_from(a, e) << 32 | to_end;

				a->gscratch[ng++] = key;
			}
		}
		gedges_find(a, a->gscratch, ng);
	}
	for (uint32_t i = l->ed.n; i-- > 0;) {
		struct edge_acc *e = &E[i];

		if (!e->merged) {
			/* waker_folded() and waker_end() from what the first loop found */
			if (folded || (e->kind == WAKE_FROM_TASK && !e->waker_row)) {
				uint64_t hint = j < ng ? a->gscratch[j] : 0;

				j++;
				gedge_add_acc(a, e, gedge_from(a, e), to_end, to_ident, hint);
			} else {
				static const double q[2] = { 0.5, 0.99 };
				uint64_t pq[2];

				samples__quantiles(&e->delay, q, pq, 2);
				a->eslot[--at] = e->waker_slot;
				a->edges[at] = (struct wake_edge){
					.from_seq = e->code, .to_seq = to_seq, .count = e->count,
					.timed = e->timed, .delay_p50_ns = pq[0], .delay_p99_ns = pq[1],
					.delay_max_ns = samples__max(&e->delay),
					.from_group = e->from_ident, .to_group = to_ident,
					.tasks = e->tasks,
				};
			}
		}
		samples__clear(&e->delay);
	}
	edges_free(a, l, borrowed);
	if (at > a->n_edges) { /* some went into group edges: close the gap */
		memmove(&a->edges[a->n_edges], &a->edges[at], (first + k - at) * sizeof(*a->edges));
		memmove(&a->eslot[a->n_edges], &a->eslot[at], (first + k - at) * sizeof(*a->eslot));
		k -= at - a->n_edges;
	}
	a->n_edges += k;
	if (k && a->rowe && u64tab__get(&a->slot_of, to_seq, &v))
		a->rowe[v - 1] = (struct row_edges){ .first = (uint32_t)(first + 1),
						     .n = (uint32_t)k };
	if (a->n_edges >= a->sweep_at)
		sweep_edges(a);
}

void ta_clear_edges(struct analysis *a, struct tlive *l)
{
	for (uint32_t i = 0; i < l->ed.n; i++)
		samples__clear(&l->ed.e[i].delay);
	edges_free(a, l, false);
}

size_t ta_edges_mem(const struct tlive *l)
{
	size_t n = l->ed.cap * sizeof(*l->ed.e) + l->ed.nslot * sizeof(*l->ed.slot) +
		   l->cap_log * sizeof(*l->log);

	for (uint32_t i = 0; i < l->ed.n; i++)
		n += samples__mem(&l->ed.e[i].delay);
	return n;
}

static int by_count(const void *x, const void *y)
{
	const struct wake_edge *a = x, *b = y;

	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	if (a->to_seq != b->to_seq)
		return a->to_seq < b->to_seq ? -1 : 1;
	if (a->from_kind != b->from_kind)
		return a->from_kind < b->from_kind ? -1 : 1;
	if (a->from_seq != b->from_seq)
		return a->from_seq < b->from_seq ? -1 : 1;
	if (a->to_group != b->to_group)
		return a->to_group < b->to_group ? -1 : 1;
	return a->from_group < b->from_group ? -1 : a->from_group > b->from_group;
}

/* The sort order of wake edges (by_count()) as a key: ~count, then the
 * other fields as one 127-bit string [to_seq:31][from_kind:3][from_seq:31]
 * [to_group:31][from_group:31] in two words (seqs and groups are below 2^31:
 * the end codes' bound), then the index (the order of the input: stable, as
 * the merge sort of glibc's qsort() was). */
struct ekey {
	uint64_t nc;
	uint64_t hi, lo;
	uint32_t idx;             /* into the edges */
};

static inline int ekey_cmp(const struct ekey *x, const struct ekey *y)
{
	if (x->nc != y->nc)
		return x->nc < y->nc ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void ekey_sift(struct ekey *k, size_t i, size_t n)
{
	struct ekey x = k[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && ekey_cmp(&k[c + 1], &k[c]) > 0)
			c++;
		if (ekey_cmp(&k[c], &x) <= 0)
			break;
		k[i] = k[c];
		i = c;
	}
	k[i] = x;
}

/* Introsort of k[0 .. n): quicksort (middle of three), insertion sort of
 * short ranges, heapsort past a depth; no memory of its own (the key array
 * is all the sort holds beside the edges). */
static void ekey_sort(struct ekey *k, size_t n, unsigned depth)
{
	while (n > 16) {
		if (!depth--) {
			for (size_t i = n / 2; i-- > 0;)
				ekey_sift(k, i, n);
			for (size_t i = n; i-- > 1;) {
				struct ekey t = k[0];

				k[0] = k[i];
				k[i] = t;
				ekey_sift(k, 0, i);
			}
			return;
		}
		size_t m = n / 2, lo = 0, hi = n - 1;

		/* the middle of three to k[m], then Hoare's partition around it */
		if (ekey_cmp(&k[m], &k[lo]) < 0) {
			struct ekey t = k[m]; k[m] = k[lo]; k[lo] = t;
		}
		if (ekey_cmp(&k[hi], &k[m]) < 0) {
			struct ekey t = k[hi]; k[hi] = k[m]; k[m] = t;
			if (ekey_cmp(&k[m], &k[lo]) < 0) {
				t = k[m]; k[m] = k[lo]; k[lo] = t;
			}
		}
		struct ekey piv = k[m];
		size_t i = lo, j = hi;

		for (;;) {
			while (ekey_cmp(&k[i], &piv) < 0)
				i++;
			while (ekey_cmp(&k[j], &piv) > 0)
				j--;
			if (i >= j)
				break;
			struct ekey t = k[i];

			k[i] = k[j];
			k[j] = t;
			i++;
			j--;
		}
		/* k[0 .. j] <= piv <= k[j + 1 .. n): the smaller side first */
		if (j + 1 < n - (j + 1)) {
			ekey_sort(k, j + 1, depth);
			k += j + 1;
			n -= j + 1;
		} else {
			ekey_sort(k + j + 1, n - (j + 1), depth);
			n = j + 1;
		}
	}
	for (size_t i = 1; i < n; i++) {
		struct ekey x = k[i];
		size_t j = i;

		for (; j > 0 && ekey_cmp(&k[j - 1], &x) > 0; j--)
			k[j] = k[j - 1];
		k[j] = x;
	}
}

/* Sorts the edges by by_count() (stable): the keys sorted, then the records
 * moved into place cycle by cycle. Returns 0 or -ENOMEM (then qsort()). */
static int edges_sort(struct wake_edge *E, size_t n)
{
	struct ekey *k = malloc(n * sizeof(*k));
	unsigned depth = 0;

	bool fits = k && n <= UINT32_MAX;

	for (size_t i = 0; fits && i < n; i++)   /* beyond the key's widths: not expected */
		if (E[i].to_seq >> 31 || E[i].from_seq >> 31 || (unsigned)E[i].from_kind >> 3 ||
		    E[i].to_group >> 31 || E[i].from_group >> 31)
			fits = false;
	if (!fits) {
		free(k);
		qsort(E, n, sizeof(*E), by_count);
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		k[i] = (struct ekey){
			.nc = ~E[i].count,
			.hi = E[i].to_seq << 32 | (uint64_t)E[i].from_kind << 29 | E[i].from_seq >> 2,
			.lo = (E[i].from_seq & 3) << 62 | (uint64_t)E[i].to_group << 31 |
			      E[i].from_group,
			.idx = (uint32_t)i };
	for (size_t x = n; x; x >>= 1)
		depth += 2;
	ekey_sort(k, n, depth);
	for (size_t j = 0; j < n; j++) {
		struct wake_edge t;
		size_t at = j;

		if (k[j].idx == j)
			continue;
		t = E[j];
		for (;;) {
			size_t src = k[at].idx;

			k[at].idx = (uint32_t)at;
			if (src == j) {
				E[at] = t;
				break;
			}
			E[at] = E[src];
			at = src;
		}
	}
	free(k);
	return 0;
}

/* The waker kind of edge code (from_ident: the waker task's identity), as
 * far as known now; at finish, every task's kind is known. A folded waker
 * was a user task (worker tasks are never folded). */
static enum wake_source resolve_row(const struct analysis *a, uint64_t code,
				    uint32_t from_ident, uint64_t *from_seq, bool *row)
{
	const char *name;

	*from_seq = 0;
	*row = false;
	if (code < EDGE_TASK)
		return (enum wake_source)code;
	if (!a->sorted) {
		/* the row's kind and name from its flags, not from the row */
		long slot = ta_slot_of(a, code - EDGE_TASK);

		if (slot >= 0) {
			*row = true;
			if (a->rinfo[slot].flags & RF_WORKER)
				return WAKE_FROM_RUNTIME;
			if (a->rinfo[slot].flags & RF_BLOCKING)
				return WAKE_FROM_BLOCKING;
			*from_seq = code - EDGE_TASK;
			return WAKE_FROM_TASK;
		}
		name = from_ident && from_ident <= a->n_idents ? a->idents[from_ident - 1].g.name
							       : NULL;
	} else {
		const struct task_stats *w = ta_row_of(a, code - EDGE_TASK);

		*row = w != NULL;
		if (w && w->kind == TASK_KIND_WORKER)
			return WAKE_FROM_RUNTIME;
		name = w ? w->name : from_ident && from_ident <= a->n_idents
		       ? a->idents[from_ident - 1].g.name : NULL;
	}
	if (ta_blocking_name(a, name))
		return WAKE_FROM_BLOCKING;
	*from_seq = code - EDGE_TASK;
	return WAKE_FROM_TASK;
}

static enum wake_source resolve(const struct analysis *a, uint64_t code, uint32_t from_ident,
				uint64_t *from_seq)
{
	bool row;

	return resolve_row(a, code, from_ident, from_seq, &row);
}

/* The final end codes of group edge g, every task's kind and row known:
 * a waker that turned out to be the runtime's loop or a blocking task is
 * that kind; a task end its group if it was folded or its identity is a
 * group. */
static uint32_t final_from(const struct analysis *a, const struct gedge *g)
{
	const char *name;

	if (g->from < EDGE_TASK)
		return g->from;
	if (!(g->from & END_GROUP))
		return waker_end(a, g->from, g->from_ident);
	name = a->idents[(g->from & ~END_GROUP) - 1].g.name;
	if (task_model__worker_name(a->model, name))
		return WAKE_FROM_RUNTIME;
	if (ta_blocking_name(a, name))
		return WAKE_FROM_BLOCKING;
	return g->from;
}

static uint32_t final_to(const struct analysis *a, const struct gedge *g)
{
	return g->to & END_GROUP ? g->to : task_end(a, g->to, g->to_ident, 0);
}

/* Group edges with their final ends, merged where they meet (exactly: the
 * histograms merge). */
static int finish_gedges(struct analysis *a)
{
	struct u64map at = { 0 };
	size_t n = 0;
	int err = 0;

	for (size_t i = 0; i < a->n_gedges && !err; i++) {
		struct gedge *g = &a->gedges[i];
		uint32_t from = final_from(a, g), to = final_to(a, g);
		uint64_t key = (uint64_t)from << 32 | to, v;

		if (u64map__get(&at, key, &v)) {
			struct gedge *o = &a->gedges[v - 1];

			o->count += g->count;
			o->timed += g->timed;
			o->tasks += g->tasks;
			if (g->max > o->max)
				o->max = g->max;
			err = cbag__merge(&o->delay, &g->delay);
			cbag__clear(&g->delay);
			continue;
		}
		err = u64map__set(&at, key, n + 1);
		g->from = from;
		g->to = to;
		if (n != i) {
			a->gedges[n] = *g;
			memset(g, 0, sizeof(*g));
		}
		n++;
	}
	for (size_t i = n; i < a->n_gedges; i++)
		cbag__clear(&a->gedges[i].delay);
	a->n_gedges = n;
	u64map__clear(&at);
	u64tab__clear(&a->gedge_of); /* keys changed: no more lookups */
	return err;
}

/* Wake edges: the compact ones (in a->edges, into kept and live rows) are
 * resolved again now that every task's kind is known: those whose waker was
 * folded since go into group edges; duplicates (a waker that turned out to
 * be a worker after its edges were folded) merged in place: counts add up,
 * the maximum is exact, the percentiles are those of the part with the most
 * timed wakes. Then the group edges get their final ends and join them, with
 * group references for their group ends. Then sorted. */
int ta_finish_edges(struct analysis *a)
{
	struct u64map merged = { 0 };
	struct wake_edge *res;
	size_t n = 0, total;
	int err = 0;

	for (size_t i = 0; i < a->n_edges && !err; i++) {
		struct wake_edge e = a->edges[i], *o;
		uint64_t from_seq, v, key;
		enum wake_source k;

		if (!e.count)
			continue; /* moved into a group edge */
		k = resolve(a, e.from_seq, e.from_group, &from_seq);
		if ((k == WAKE_FROM_TASK && !ta_row_of(a, from_seq)) || !ta_row_of(a, e.to_seq)) {
			gedge_add_rec(a, &e, waker_end(a, e.from_seq, e.from_group),
				      task_end(a, e.to_seq, e.to_group, 0));
			continue;
		}
		key = (uint64_t)k << 32 | e.to_seq;
		if (k != WAKE_FROM_TASK && u64map__get(&merged, key, &v)) {
			o = &a->edges[v - 1];
			if (e.timed > o->timed) {
				o->delay_p50_ns = e.delay_p50_ns;
				o->delay_p99_ns = e.delay_p99_ns;
			}
			o->count += e.count;
			o->timed += e.timed;
			o->tasks += e.tasks;
			if (e.delay_max_ns > o->delay_max_ns)
				o->delay_max_ns = e.delay_max_ns;
			continue;
		}
		if (k != WAKE_FROM_TASK)
			err = u64map__set(&merged, key, n + 1);
		o = &a->edges[n++];
		*o = e;
		o->from_kind = k;
		o->from_seq = from_seq;
		o->from_group = 0;
		o->to_group = 0;
	}
	a->n_edges = n;
	a->n_moved = 0;
	u64map__clear(&merged);
	if (err || finish_gedges(a))
		return -ENOMEM;
	/* The group edges' results take the place of their records (smaller),
	 * then the compact edges join them: no second copy of either. */
	_Static_assert(sizeof(struct wake_edge) <= sizeof(struct gedge), "results in place");
	for (size_t i = 0; i < a->n_gedges; i++) {
		struct gedge g;
		struct wake_edge o;

		memcpy(&g, &a->gedges[i], sizeof(g));
		static const double q[2] = { 0.5, 0.99 };
		uint64_t pq[2];

		cbag__quantiles(&g.delay, q, pq, 2);
		o = (struct wake_edge){
			.count = g.count, .timed = g.timed, .tasks = g.tasks,
			.delay_p50_ns = pq[0], .delay_p99_ns = pq[1], .delay_max_ns = g.max,
		};
		cbag__clear(&g.delay);
		if (g.from < EDGE_TASK) {
			o.from_kind = (enum wake_source)g.from;
		} else if (g.from & END_GROUP) {
			o.from_kind = WAKE_FROM_TASK;
			o.from_group = ta_group_ref(a, g.from & ~END_GROUP);
		} else {
			o.from_kind = WAKE_FROM_TASK;
			o.from_seq = g.from - EDGE_TASK;
		}
		if (g.to & END_GROUP)
			o.to_group = ta_group_ref(a, g.to & ~END_GROUP);
		else
			o.to_seq = g.to;
		memcpy((char *)a->gedges + i * sizeof(o), &o, sizeof(o));
	}
	total = a->n_gedges + a->n_edges;
	/* the results to the block's start, then the block to their size */
	if (a->n_gedges && (void *)a->gedges != a->gedges_raw)
		memmove(a->gedges_raw, a->gedges, a->n_gedges * sizeof(*res));
	a->n_gedges = 0; /* no histogram left to free */
	res = realloc(a->gedges_raw, (total ? total : 1) * sizeof(*res));
	if (!res)
		return -ENOMEM;
	a->gedges_raw = NULL;
	if (n)
		memcpy(res + (total - n), a->edges, n * sizeof(*res));
	free(a->edges);
	a->edges = res;
	a->n_edges = a->cap_edges = total;
	a->gedges = NULL;
	a->cap_gedges = 0;
	if (a->n_edges)
		edges_sort(a->edges, a->n_edges);
	return 0;
}

