/* futures: the future-level analysis (see futures.h). Per thread, a stack of
 * future frames and a stack of task polls in progress; a poll records how
 * many frames were open when it began (its base): the frames above belong to
 * it, those below to an outer context (a block_on future, a LocalSet). Tasks
 * and their polls come from the task model (task_model.h), which this
 * analysis observes, so that seqs agree with `report`.
 *
 * Interned once each: call paths (nodes: a root label or (parent node,
 * function)), with the self time of the frames on that path; await chains
 * (cons cells (function, await point, next chain), outermost first, built
 * bottom-up as frames return Pending); and (task root, chain) pairs with the
 * pending time behind them. Flame-graph lines are rendered from these at
 * finish (futures_results.c; the structures are in futures_int.h). Depends
 * on the task model, util/ and sym/demangle (names) only; no I/O. */
#include "analysis/futures.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/task_model.h"
#include "sym/demangle.h"
#include "util/strtab.h"
#include "util/task_id.h"
#include "util/u64map.h"

#include "analysis/futures_int.h"

const char *futures_outcome__str(enum futures_outcome o)
{
	switch (o) {
	case FUTURES_READY: return "Ready";
	case FUTURES_PENDING: return "Pending";
	case FUTURES_UNKNOWN: return "unknown";
	case FUTURES_CUT: return "cut short";
	case FUTURES_RUNNING: return "running at end";
	}
	return "?";
}

static int grow(void **arr, size_t *cap, size_t n, size_t size)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	p = realloc(*arr, ncap * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

static const char *intern(struct futures *f, const char *s)
{
	long idx;

	if (!s)
		return NULL;
	idx = fu_intern_len(&f->strs, s, strlen(s));
	if (idx < 0) {
		fu_nomem(f, -ENOMEM);
		return NULL;
	}
	return strtab__get(&f->strs, (uint32_t)idx);
}

/* Label id of s (interned), or -ENOMEM. */
static long label_id(struct futures *f, const char *s)
{
	return fu_intern_len(&f->strs, s, strlen(s));
}

/* ---------------------------------------------------------------- setup */

static int add_fn(struct futures *f, const struct as_probe *p, uint32_t *fn)
{
	char addr[24], *key = NULL;
	const char *name = p->future ? p->future : p->symbol && *p->symbol ? p->symbol : NULL;
	int len;
	long idx;
	uint64_t v;

	if (!name) {
		snprintf(addr, sizeof(addr), "0x%" PRIx64, p->addr);
		name = addr;
	}
	/* one function per (name, file, line) */
	len = asprintf(&key, "fn\x1f%s\x1f%s\x1f%" PRIu32, name, p->src_file ? p->src_file : "",
		       p->src_line);
	if (len < 0)
		return -ENOMEM;
	idx = fu_intern_len(&f->strs, key, (size_t)len);
	free(key);
	if (idx < 0)
		return -ENOMEM;
	if (u64map__get(&f->fn_of, (uint64_t)idx + 1, &v)) {
		*fn = (uint32_t)v;
		return 0;
	}
	if (u64map__set(&f->fn_of, (uint64_t)idx + 1, f->n_fns))
		return -ENOMEM;
	struct fnrec r = { .st = { .name = intern(f, name), .file = intern(f, p->src_file),
				   .line = p->src_line } };
	if (f->err || !r.st.name)
		return -ENOMEM;
	if (p->n_awaits && p->await_lines) {
		r.awaits = calloc(p->n_awaits, sizeof(*r.awaits));
		if (!r.awaits)
			return -ENOMEM;
		memcpy(r.awaits, p->await_lines, p->n_awaits * sizeof(*r.awaits));
		r.n_awaits = p->n_awaits;
		if (p->await_types) {
			r.awaitees = calloc(p->n_awaits, sizeof(*r.awaitees));
			if (!r.awaitees) {
				free(r.awaits);
				return -ENOMEM;
			}
			for (uint32_t i = 0; i < p->n_awaits; i++)
				r.awaitees[i] = intern(f, p->await_types[i]);
			if (f->err) {
				free(r.awaits);
				free(r.awaitees);
				return -ENOMEM;
			}
		}
	}
	f->fns[f->n_fns] = r;
	*fn = (uint32_t)f->n_fns++;
	return 0;
}

static const struct tm_ops observer_ops;

static struct futures *futures_new(struct task_model *m, const struct as_trace_meta *meta,
				   const struct futures_opts *opts)
{
	struct futures *f = calloc(1, sizeof(*f));
	int err = -ENOMEM;

	if (!f)
		return NULL;
	f->model = m;
	if ((err = task_model__observe(m, &observer_ops, f, sizeof(struct ftask), &f->toff, 0,
				       NULL))) {
		free(f);
		errno = -err;
		return NULL;
	}
	err = -ENOMEM;
	if (opts)
		f->opts = *opts;
	if (f->opts.observer)
		f->obs = *f->opts.observer;
	f->opts.observer = NULL;
	if (meta && meta->probes && meta->n_probes) {
		f->n_probes = meta->n_probes;
		f->pi = calloc(meta->n_probes, sizeof(*f->pi));
		f->fns = calloc(meta->n_probes, sizeof(*f->fns));
		if (!f->pi || !f->fns)
			goto fail;
		for (uint32_t i = 0; i < meta->n_probes; i++) {
			const struct as_probe *p = &meta->probes[i];
			uint32_t fn;

			if (p->role == AS_ROLE_FUTURE) {
				if ((err = add_fn(f, p, &fn)))
					goto fail;
				f->pi[i].fn = fn + 1;
				continue;
			}
			if (!p->future)
				continue;
			char *pretty = sym_pretty_future(p->future);
			long id;

			if (!pretty)
				goto fail;
			id = label_id(f, pretty);
			free(pretty);
			f->pi[i].raw = intern(f, p->future);
			if (id < 0 || !f->pi[i].raw)
				goto fail;
			f->pi[i].root = (uint32_t)id + 1;
		}
	}
	return f;
fail:
	futures__free(f);
	errno = -err;
	return NULL;
}

struct futures *futures__new_on(struct task_model *m, const struct as_trace_meta *meta,
				const struct futures_opts *opts)
{
	if (!m) {
		errno = EINVAL;
		return NULL;
	}
	return futures_new(m, meta, opts);
}

struct futures *futures__new(const struct as_trace_meta *meta, const struct futures_opts *opts)
{
	struct task_model *m = task_model__new(meta);
	struct futures *f;

	if (!m)
		return NULL;
	f = futures_new(m, meta, opts);
	if (!f) {
		int err = errno;

		task_model__free(m);
		errno = err;
		return NULL;
	}
	f->own_model = true;
	return f;
}

/* ------------------------------------------------------------ interning */

static uint32_t node_get(struct futures *f, uint32_t parent, uint32_t what)
{
	uint64_t key = parent == NONE ? (uint64_t)what + 1 : ((uint64_t)parent + 1) << 32 | what;
	uint64_t v;

	if (u64map__get(&f->node_of, key, &v))
		return (uint32_t)(v - 1);
	if (f->n_nodes >= MAX_IDS ||
	    grow((void **)&f->nodes, &f->cap_nodes, f->n_nodes, sizeof(*f->nodes)) ||
	    u64map__set(&f->node_of, key, f->n_nodes + 1)) {
		fu_nomem(f, -ENOMEM);
		return NONE;
	}
	f->nodes[f->n_nodes] = (struct node){ .parent = parent, .what = what };
	return (uint32_t)f->n_nodes++;
}

/* The root node of task mt (its ftask t named): its root label's, shared
 * by every task of that root future, or with opts.per_task one of its
 * own, its identity kept beside it (root_task). NONE when out of memory. */
static uint32_t root_node(struct futures *f, const struct tm_task *mt, const struct ftask *t)
{
	char id[TASK_ID_MAX];
	uint64_t v;

	if (!f->opts.per_task)
		return node_get(f, NONE, t->root - 1);
	if (u64map__get(&f->task_root, mt->seq, &v))
		return (uint32_t)(v - 1);
	long lid = label_id(f, task_id_format(id, sizeof(id), mt->tokio_id, mt->seq, mt->header));
	if (lid < 0 || f->n_nodes >= MAX_IDS ||
	    grow((void **)&f->nodes, &f->cap_nodes, f->n_nodes, sizeof(*f->nodes)) ||
	    u64map__set(&f->task_root, mt->seq, f->n_nodes + 1) ||
	    u64map__set(&f->root_task, f->n_nodes + 1, (uint64_t)lid + 1)) {
		fu_nomem(f, -ENOMEM);
		return NONE;
	}
	f->nodes[f->n_nodes] = (struct node){ .parent = NONE, .what = t->root - 1 };
	return (uint32_t)f->n_nodes++;
}

/* Chain (fn, ap) . next; 0 (the empty chain) when out of memory. */
static uint32_t cons(struct futures *f, uint32_t fn, int ap, uint32_t next)
{
	uint64_t key = ((uint64_t)fn + 1) << 32 | (uint32_t)(ap + 1), v;
	uint32_t pair;

	if (u64map__get(&f->pair_of, key, &v)) {
		pair = (uint32_t)(v - 1);
	} else {
		if (f->n_pairs >= MAX_IDS ||
		    grow((void **)&f->pairs, &f->cap_pairs, f->n_pairs, sizeof(*f->pairs)) ||
		    u64map__set(&f->pair_of, key, f->n_pairs + 1)) {
			fu_nomem(f, -ENOMEM);
			return 0;
		}
		f->pairs[f->n_pairs] = (struct pair){ .fn = fn, .ap = ap };
		pair = (uint32_t)f->n_pairs++;
	}
	key = (uint64_t)next << 32 | (pair + 1);
	if (u64map__get(&f->cell_of, key, &v))
		return (uint32_t)v;
	if (f->n_cells >= MAX_IDS ||
	    grow((void **)&f->cells, &f->cap_cells, f->n_cells, sizeof(*f->cells)) ||
	    u64map__set(&f->cell_of, key, f->n_cells + 1)) {
		fu_nomem(f, -ENOMEM);
		return 0;
	}
	f->cells[f->n_cells] = (struct cell){ .pair = pair, .next = next };
	return (uint32_t)++f->n_cells;
}

/* ns of pending time behind chain, for root label root; with
 * opts.per_task, for the task whose root node is rnode (else NONE). */
static void wait_weight(struct futures *f, uint32_t root, uint32_t rnode, uint32_t chain,
			uint64_t ns)
{
	uint64_t key = ((uint64_t)(rnode != NONE ? rnode : root) + 1) << 32 | chain, v, task = 0;

	if (rnode != NONE && !u64map__get(&f->root_task, (uint64_t)rnode + 1, &task))
		task = 0;

	if (u64map__get(&f->wait_of, key, &v)) {
		f->waits[v - 1].ns += ns;
		return;
	}
	if (grow((void **)&f->waits, &f->cap_waits, f->n_waits, sizeof(*f->waits)) ||
	    u64map__set(&f->wait_of, key, f->n_waits + 1)) {
		fu_nomem(f, -ENOMEM);
		return;
	}
	f->waits[f->n_waits++] = (struct wait){ .root = root, .chain = chain, .ns = ns,
						.task = (uint32_t)task };
}

/* ---------------------------------------------------------- tasks, threads */

static struct thr *thr_get(struct futures *f, uint32_t tid)
{
	uint64_t v;

	if (u64map__get(&f->thr_of, (uint64_t)tid + 1, &v))
		return &f->thr[v - 1];
	if (grow((void **)&f->thr, &f->cap_thr, f->n_thr, sizeof(*f->thr)) ||
	    u64map__set(&f->thr_of, (uint64_t)tid + 1, f->n_thr + 1))
		return NULL;
	memset(&f->thr[f->n_thr], 0, sizeof(f->thr[0]));
	f->thr[f->n_thr].tid = tid;
	return &f->thr[f->n_thr++];
}

static struct thr *thr_find(const struct futures *f, uint32_t tid)
{
	uint64_t v;

	return u64map__get(&f->thr_of, (uint64_t)tid + 1, &v) ? &f->thr[v - 1] : NULL;
}

static struct ftask *ft(const struct futures *f, const struct tm_task *t)
{
	return tm_task__data(t, f->toff);
}

/* The runtime's loop: a poll nested in one of its polls, or a task of the
 * root future type of such a task. */
static bool is_worker(const struct futures *f, const struct tm_task *t)
{
	return t->worker || task_model__worker_name(f->model, t->name);
}

/* Ends the pending interval of t at ts: its weight goes to its chain. */
static void wait_end(struct futures *f, struct tm_task *mt, uint64_t ts)
{
	struct ftask *t = ft(f, mt);

	if (!t->pending)
		return;
	t->pending = false;
	if (is_worker(f, mt) || !t->root)
		return;
	uint32_t rnode = f->opts.per_task ? root_node(f, mt, t) : NONE;
	if (f->opts.per_task && rnode == NONE)
		return;   /* out of memory: said by f->err */
	wait_weight(f, t->root - 1, rnode, t->chain, ts > t->since ? ts - t->since : 0);
}

/* The "(no task) thread NAME" root of th, as a node. */
static uint32_t noroot(struct futures *f, struct thr *th)
{
	char buf[64], *s = NULL;
	long id;

	if (th->noroot)
		return th->noroot - 1;
	if (th->name) {
		if (asprintf(&s, "(no task) thread %s", th->name) < 0) {
			fu_nomem(f, -ENOMEM);
			return NONE;
		}
	} else {
		snprintf(buf, sizeof(buf), "(no task) thread %" PRIu32, th->tid);
	}
	id = label_id(f, s ? s : buf);
	free(s);
	if (id < 0) {
		fu_nomem(f, -ENOMEM);
		return NONE;
	}
	uint32_t n = node_get(f, NONE, (uint32_t)id);

	if (n != NONE)
		th->noroot = n + 1;
	return n;
}

/* Names t's root at its first poll (probe: the poll probe). */
static void task_name(struct futures *f, struct tm_task *mt, uint16_t probe)
{
	struct ftask *t = ft(f, mt);
	char *s = NULL;
	long id;

	if (probe < f->n_probes && f->pi[probe].root) {
		t->root = f->pi[probe].root;
		return;
	}
	if (mt->spawn_file) {
		if (asprintf(&s, "(task spawned at %s:%" PRIu32 ")", fu_basename_of(mt->spawn_file),
			     mt->spawn_line) < 0)
			s = NULL;
		id = s ? label_id(f, s) : -ENOMEM;
		free(s);
	} else {
		id = label_id(f, "(unknown task)");
	}
	if (id < 0) {
		fu_nomem(f, -ENOMEM);
		return;
	}
	t->root = (uint32_t)id + 1;
}

/* ---------------------------------------------------------------- frames */

/* The innermost poll of th, or NULL. */
static struct pol *top_poll(struct thr *th)
{
	return th->npo ? &th->po[th->npo - 1] : NULL;
}

static size_t seg_base(const struct thr *th)
{
	return th->npo ? th->po[th->npo - 1].base : 0;
}

static void pend_set(uint32_t *pend, bool *known, uint32_t chain, bool is_known)
{
	if (is_known || !*known) {
		*pend = chain;
		*known = is_known;
	}
}

static enum futures_outcome exit_outcome(const struct as_event *ev)
{
	uint32_t s = AS_FUT_STATE(ev->other);

	if (ev->flags & AS_FUTURE_READY)
		return FUTURES_READY;
	if (ev->flags & AS_FUTURE_PENDING)
		return FUTURES_PENDING;
	if (s == 2)
		return FUTURES_READY;      /* __state Returned */
	if (s >= 4)
		return FUTURES_PENDING;    /* __state Suspend(n) */
	return FUTURES_UNKNOWN;
}

/* Closes the top frame of th at ts with outcome how; other: the EXIT's
 * other (its __state), 0 without an EXIT. */
static void frame_close(struct futures *f, struct thr *th, uint64_t ts, enum futures_outcome how,
			uint64_t other)
{
	struct ffr fr = th->fr[--th->nfr];
	struct fnrec *fn = &f->fns[fr.fn];
	uint64_t end = ts, dur, self;
	int ap = how == FUTURES_CUT ? -1 : as_fut_await_point(other);

	if (end < fr.begin)
		end = fr.begin;
	if (end < fr.floor)
		end = fr.floor;
	dur = end - fr.begin;
	self = dur - (fr.child_ns < dur ? fr.child_ns : dur);
	if (fr.node != NONE)
		f->nodes[fr.node].self_ns += self;
	fn->st.polls++;
	fn->st.total_ns += dur;
	fn->st.self_ns += self;
	if (dur > fn->st.max_ns)
		fn->st.max_ns = dur;
	f->sum.frames++;
	switch (how) {
	case FUTURES_READY:
		fn->st.ready++;
		f->sum.ready++;
		break;
	case FUTURES_PENDING:
		fn->st.pending++;
		f->sum.pending++;
		break;
	case FUTURES_UNKNOWN:
		f->sum.unknown++;
		fn->st.unknown++;
		break;
	case FUTURES_CUT:
		f->sum.exits_lost++;
		fn->st.unknown++;
		break;
	case FUTURES_RUNNING:
		f->sum.open_at_end++;
		fn->st.unknown++;
		break;
	}

	/* its parent: the frame below in the same poll, or the poll */
	uint64_t *child_ns = NULL, *floor = NULL;
	uint32_t *pend = NULL;
	bool *known = NULL;
	struct pol *p = top_poll(th);

	if (th->nfr > seg_base(th)) {
		struct ffr *up = &th->fr[th->nfr - 1];

		child_ns = &up->child_ns, floor = &up->floor, pend = &up->pend, known = &up->pend_known;
	} else if (p) {
		child_ns = &p->child_ns, floor = &p->floor, pend = &p->pend, known = &p->pend_known;
	}
	if (child_ns) {
		*child_ns += dur;
		if (end > *floor)
			*floor = end;
		if (how == FUTURES_PENDING || how == FUTURES_UNKNOWN || how == FUTURES_CUT)
			pend_set(pend, known, cons(f, fr.fn, ap, fr.pend), how == FUTURES_PENDING);
	}
	if (f->obs.frame) {
		struct futures_frame out = {
			.tid = th->tid, .begin = fr.begin, .end = end, .probe = fr.probe,
			.fn = fr.fn, .name = fn->st.name, .file = fn->st.file, .line = fn->st.line,
			.outcome = how, .depth = fr.depth, .task = fr.task,
		};

		if (how == FUTURES_PENDING && ap >= 0 && (uint32_t)ap < fn->n_awaits) {
			out.await_line = fn->awaits[ap];
			out.awaitee = fn->awaitees ? fn->awaitees[ap] : NULL;
		}
		f->obs.frame(f->obs.ctx, &out);
	}
}

/* Closes the frames of th above index keep: their EXITs were lost (closed
 * at the thread's previous event), or the trace ends (end: at end_ns). */
static void frames_cut(struct futures *f, struct thr *th, size_t keep, bool end, uint64_t end_ns)
{
	while (th->nfr > keep)
		frame_close(f, th, end ? end_ns : th->last_ts,
			    end ? FUTURES_RUNNING : FUTURES_CUT, 0);
}

enum poll_how { POLL_PENDING, POLL_READY, POLL_CUT, POLL_END_OF_TRACE };

/* Closes the top poll of th at ts. */
static void poll_close(struct futures *f, struct thr *th, uint64_t ts, enum poll_how how)
{
	struct pol p;
	struct ftask *t;
	uint64_t end, dur;

	frames_cut(f, th, th->po[th->npo - 1].base, how == POLL_END_OF_TRACE, ts);
	p = th->po[--th->npo];
	t = ft(f, p.task);
	end = ts < p.begin ? p.begin : ts;
	if (end < p.floor)
		end = p.floor;
	dur = end - p.begin;
	if (!p.nested && !is_worker(f, p.task) && p.rnode != NONE)
		f->nodes[p.rnode].self_ns += dur - (p.child_ns < dur ? p.child_ns : dur);
	/* its parent: the enclosing poll if no frame began between, else the
	 * frame it ran in */
	struct pol *up = top_poll(th);

	if (up && up->base == p.base) {
		up->child_ns += dur;
		if (end > up->floor)
			up->floor = end;
	} else if (p.base > 0 && p.base <= th->nfr) {
		struct ffr *fr = &th->fr[p.base - 1];

		fr->child_ns += dur;
		if (end > fr->floor)
			fr->floor = end;
	}
	if (how == POLL_READY) {
		t->pending = false;
	} else if (how != POLL_END_OF_TRACE) {
		/* a poll cut short counts as Pending, as in analysis/tasks.c */
		t->pending = true;
		t->since = end;
		t->chain = p.pend;
	}
}

static bool pk_less(const struct pk *a, const struct pk *b)
{
	if (a->waiting != b->waiting)
		return a->waiting < b->waiting;
	return a->seq > b->seq; /* on a tie the later task goes first */
}

static void pk_down(struct futures *f, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < f->n_pk && pk_less(&f->pk[l], &f->pk[m]))
			m = l;
		if (l + 1 < f->n_pk && pk_less(&f->pk[l + 1], &f->pk[m]))
			m = l + 1;
		if (m == i)
			return;
		struct pk x = f->pk[i];

		f->pk[i] = f->pk[m];
		f->pk[m] = x;
		i = m;
	}
}

/* t, pending, goes (freed) or the trace ends at ts: keep its chain if it is
 * among the FUTURES_PARKED_KEEP longest waits. */
static void parked_add(struct futures *f, const struct tm_task *mt, uint64_t ts, bool until_end)
{
	const struct ftask *t = ft(f, mt);
	struct pk e = {
		.seq = mt->seq, .tokio_id = mt->tokio_id, .since = t->since, .root = t->root - 1,
		.waiting = ts > t->since ? ts - t->since : 0, .chain = t->chain,
		.until_end = until_end,
	};

	if (!t->pending || is_worker(f, mt) || !t->root)
		return;
	f->sum.parked_tasks++;
	if (f->n_pk == FUTURES_PARKED_KEEP) {
		if (!pk_less(&f->pk[0], &e))
			return;
		f->pk[0] = e;
		pk_down(f, 0);
		return;
	}
	if (grow((void **)&f->pk, &f->cap_pk, f->n_pk, sizeof(*f->pk))) {
		fu_nomem(f, -ENOMEM);
		return;
	}
	size_t i = f->n_pk++;

	while (i && pk_less(&e, &f->pk[(i - 1) / 2])) {
		f->pk[i] = f->pk[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	f->pk[i] = e;
}

/* ------------------------------------------- observer of the task model */

/* A poll of t began on ev->tid: its root is named at its first poll. */
static void on_poll_begin(void *ctx, struct tm_task *mt, struct tm_thread *mth,
			  const struct as_event *ev)
{
	struct futures *f = ctx;
	struct ftask *t = ft(f, mt);
	struct thr *th = thr_get(f, ev->tid);

	(void)mth;
	if (!th || grow((void **)&th->po, &th->cappo, th->npo, sizeof(*th->po))) {
		fu_nomem(f, -ENOMEM);
		return;
	}
	wait_end(f, mt, ev->ts);
	if (!t->polled)
		task_name(f, mt, ev->probe);
	t->polled = true;
	if (th->npo)
		th->po[th->npo - 1].nested = true;
	th->po[th->npo++] = (struct pol){
		.task = mt, .base = th->nfr, .begin = ev->ts, .floor = ev->ts,
		.rnode = t->root ? root_node(f, mt, t) : NONE,
	};
}

/* The poll of frame fr ended: it and the polls above it in this analysis's
 * stack are closed (a poll cut from inside the stack takes those above it
 * along; the model then cuts them later, and they are not found). The end of
 * the trace is closed by futures__finish(). */
static void on_poll_end(void *ctx, struct tm_thread *mth, const struct tm_frame *fr, uint64_t ts,
			uint64_t d, enum tm_end how)
{
	struct futures *f = ctx;
	struct thr *th;
	size_t i;

	(void)d;
	if (how == TM_TRACE_END || !(th = thr_find(f, mth->tid)))
		return;
	for (i = th->npo; i-- > 0;)
		if (th->po[i].task == fr->task)
			break;
	if (i == (size_t)-1)
		return;
	while (th->npo > i + 1)
		poll_close(f, th, ts, POLL_CUT);
	poll_close(f, th, ts, how == TM_READY ? POLL_READY
			      : how == TM_PENDING ? POLL_PENDING : POLL_CUT);
}

/* t goes (freed, or its address reused): a pending task is parked there. */
static void on_gone(void *ctx, struct tm_task *mt, uint64_t ts, bool freed)
{
	struct futures *f = ctx;

	(void)freed;
	parked_add(f, mt, ts, false);
	wait_end(f, mt, ts);
}

/* A poll of t is about to begin: its pending time ends here, before the
 * poll's nesting is known (a task becoming a worker by it is one from its
 * next wait on). */
static void on_leave(void *ctx, struct tm_task *mt, uint64_t ts, uint64_t d, enum tm_by by)
{
	(void)d;
	if (by == TM_BY_POLL)
		wait_end(ctx, mt, ts);
}

/* t is folded away by the model's live-task limit: its wait (if pending)
 * counts up to then, as if it went. */
static void on_fold(void *ctx, struct tm_task *mt, uint64_t ts)
{
	on_gone(ctx, mt, ts, false);
}

static const struct tm_ops observer_ops = {
	.leave = on_leave, .poll_begin = on_poll_begin, .poll_end = on_poll_end, .gone = on_gone,
	.fold = on_fold,
};

static int on_fut_enter(struct futures *f, struct thr *th, const struct as_event *ev)
{
	uint32_t fn = ev->probe < f->n_probes ? f->pi[ev->probe].fn : 0;
	uint32_t d = AS_FUT_DEPTH(ev->other), parent;
	size_t base = seg_base(th);
	struct pol *p;
	uint64_t begin = ev->ts, task = 0;

	if (!fn) {
		f->sum.bad++;
		return 0;
	}
	f->sum.enters++;
	/* frames at this depth or deeper are over: their EXITs were lost */
	while (th->nfr > base && th->fr[th->nfr - 1].depth >= d)
		frame_close(f, th, th->last_ts, FUTURES_CUT, 0);
	if (th->nfr > base && d > th->fr[th->nfr - 1].depth + 1)
		f->sum.entries_lost += d - th->fr[th->nfr - 1].depth - 1;
	if (th->nfr >= FUTURES_MAX_DEPTH) {
		f->sum.too_deep++;
		return 0;
	}
	p = top_poll(th);
	if (th->nfr > base) {
		const struct ffr *up = &th->fr[th->nfr - 1];

		parent = up->node;
		task = up->task;
		if (begin < up->begin)
			begin = up->begin;
	} else if (p) {
		parent = p->rnode;
		task = p->task->seq;
		if (begin < p->begin)
			begin = p->begin;
	} else {
		struct tm_task *mt = ev->task ? task_model__task(f->model, ev->task) : NULL;
		struct ftask *t = mt ? ft(f, mt) : NULL;

		/* no poll begin seen here: the task BPF saw, if known */
		if (t && t->root) {
			parent = root_node(f, mt, t);
			task = mt->seq;
		} else {
			parent = noroot(f, th);
			f->sum.outside_tasks++;
		}
	}
	if (grow((void **)&th->fr, &th->capfr, th->nfr, sizeof(*th->fr)))
		return -ENOMEM;
	th->fr[th->nfr++] = (struct ffr){
		.probe = ev->probe, .fn = fn - 1, .depth = d, .begin = begin, .floor = begin,
		.node = parent == NONE ? NONE : node_get(f, parent, fn - 1), .task = task,
	};
	return 0;
}

static int on_fut_exit(struct futures *f, struct thr *th, const struct as_event *ev)
{
	uint32_t fn = ev->probe < f->n_probes ? f->pi[ev->probe].fn : 0;
	uint32_t d = AS_FUT_DEPTH(ev->other);
	size_t base = seg_base(th);

	if (!fn) {
		f->sum.bad++;
		return 0;
	}
	f->sum.exits++;
	if (th->nfr >= FUTURES_MAX_DEPTH && d > th->fr[th->nfr - 1].depth)
		return 0; /* its ENTER was too deep, counted there */
	/* frames deeper than d are over: their EXITs were lost */
	while (th->nfr > base && th->fr[th->nfr - 1].depth > d)
		frame_close(f, th, th->last_ts, FUTURES_CUT, 0);
	if (th->nfr > base && th->fr[th->nfr - 1].depth == d) {
		if (th->fr[th->nfr - 1].probe == ev->probe) {
			frame_close(f, th, ev->ts, exit_outcome(ev), ev->other);
			return 0;
		}
		/* another function at that depth: its EXIT and this ENTER lost */
		frame_close(f, th, th->last_ts, FUTURES_CUT, 0);
	}
	f->sum.unmatched_exits++;
	return 0;
}

static int add(struct futures *f, const struct as_event *ev)
{
	struct thr *th;
	int err = 0;

	if (ev->type == AS_EV_SPAWN && (ev->flags & (AS_SPAWN_WAKERS | AS_SPAWN_BEFORE)))
		return 0;   /* the model's: no thread of the program */
	if (!f->seen || ev->ts > f->last_ts)
		f->last_ts = ev->ts;
	f->seen = true;
	switch (ev->type) {
	case AS_EV_THREAD:
	case AS_EV_SPAWN:
	case AS_EV_POLL_BEGIN:
	case AS_EV_POLL_END:
	case AS_EV_WAKE:
	case AS_EV_FUTURE_ENTER:
	case AS_EV_FUTURE_EXIT:
		break;
	default:
		return 0;
	}
	/* threads in order of first sight among these events (tasks, polls
	 * and spawns are the model's: observed above) */
	if (!(th = thr_get(f, ev->tid)))
		return -ENOMEM;
	switch (ev->type) {
	case AS_EV_THREAD:
		if (ev->str && (!th->name || strcmp(th->name, ev->str))) {
			th->name = intern(f, ev->str);
			th->noroot = 0;
		}
		break;
	case AS_EV_FUTURE_ENTER:
		err = on_fut_enter(f, th, ev);
		break;
	case AS_EV_FUTURE_EXIT:
		err = on_fut_exit(f, th, ev);
		break;
	}
	/* the thread array may have moved (thr_get in callees): look it up */
	if ((th = thr_find(f, ev->tid)) && ev->ts > th->last_ts)
		th->last_ts = ev->ts;
	return err;
}

int futures__add(struct futures *f, const struct as_event *ev)
{
	int err = 0;

	if (!f || !ev || f->finished)
		return -EINVAL;
	if (f->own_model)
		err = task_model__add(f->model, ev);
	if (!err)
		err = add(f, ev);
	if (!err)
		err = f->err;
	f->err = 0;
	return err;
}

static void pending_at_end(void *ctx, struct tm_task *mt)
{
	struct futures *f = ctx;

	parked_add(f, mt, f->end_ns, true);
	wait_end(f, mt, f->end_ns);
}

int futures__finish(struct futures *f, uint64_t end_ns)
{
	if (!f || f->finished)
		return -EINVAL;
	f->finished = true;
	f->err = 0;
	if (!end_ns || end_ns < f->last_ts)
		end_ns = f->last_ts;
	if (f->own_model)
		task_model__finish(f->model, end_ns); /* its polls: closed below */
	/* close what is still running, innermost first */
	for (size_t i = 0; i < f->n_thr; i++) {
		struct thr *th = &f->thr[i];

		while (th->nfr || th->npo) {
			if (th->npo && th->nfr == th->po[th->npo - 1].base)
				poll_close(f, th, end_ns, POLL_END_OF_TRACE);
			else
				frame_close(f, th, end_ns, FUTURES_RUNNING, 0);
		}
	}
	/* tasks still pending wait until the end */
	f->end_ns = end_ns;
	task_model__each(f->model, pending_at_end, f);
	return fu_build_results(f);
}

/* ------------------------------------------------------------------ sink */

static int sink_add(void *impl, const struct as_event *ev, const struct as_stack *stack)
{
	(void)stack;
	return futures__add(impl, ev);
}

static int sink_finish(void *impl, const struct as_trace_end *end)
{
	return futures__finish(impl, end ? end->end_ns : 0);
}

static const struct as_sink_ops sink_ops = {
	.name = "futures", .add = sink_add, .finish = sink_finish, .free = NULL,
};

struct as_sink futures__sink(struct futures *x)
{
	return (struct as_sink){ .ops = &sink_ops, .impl = x };
}
