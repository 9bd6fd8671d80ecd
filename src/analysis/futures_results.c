/* futures_results: what the future-level analysis gives after finish (see
 * futures.h): the flame-graph lines rendered from the interned call paths
 * and await chains, the functions sorted, the parked tasks with their
 * chains; and the accessors. Pure C: no I/O. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/futures_int.h"

/* ---------------------------------------------------------------- results */

/* Writes s sanitised (';' -> ',', control bytes -> '?') and interns it into
 * labels; returns the interned string or NULL. */
static const char *label(struct futures *f, const char *s, const char *file, uint32_t line)
{
	char *buf = NULL;
	int len;
	long idx;

	if (file && line)
		len = asprintf(&buf, "%s (%s:%" PRIu32 ")", s, fu_basename_of(file), line);
	else if (line)
		len = asprintf(&buf, "%s (line %" PRIu32 ")", s, line);
	else
		len = asprintf(&buf, "%s", s);
	if (len < 0) {
		fu_nomem(f, -ENOMEM);
		return NULL;
	}
	for (char *c = buf; *c; c++) {
		unsigned char u = (unsigned char)*c;

		if (u == ';')
			*c = ',';
		else if (u < 0x20 || u == 0x7f)
			*c = '?';
	}
	idx = fu_intern_len(&f->labels, buf, (size_t)len);
	free(buf);
	if (idx < 0) {
		fu_nomem(f, -ENOMEM);
		return NULL;
	}
	return strtab__get(&f->labels, (uint32_t)idx);
}

/* Line of (fn, ap): the .await's when known, else the function's. */
static uint32_t pair_line(const struct futures *f, const struct pair *pr, bool *at_await)
{
	const struct fnrec *fn = &f->fns[pr->fn];

	*at_await = pr->ap >= 0 && (uint32_t)pr->ap < fn->n_awaits && fn->awaits[pr->ap];
	return *at_await ? fn->awaits[pr->ap] : fn->st.line;
}

static const char **pool_take(struct futures *f, size_t n)
{
	if (f->n_pool + n > f->cap_pool)
		return NULL;
	f->n_pool += n;
	return &f->frame_pool[f->n_pool - n];
}

static int by_frames(const void *x, const void *y)
{
	const struct futures_stack *a = x, *b = y;

	for (uint32_t i = 0; i < a->n && i < b->n; i++)
		if (a->frames[i] != b->frames[i]) {
			int c = strcmp(a->frames[i], b->frames[i]);

			if (c)
				return c;
		}
	if (a->n != b->n)
		return a->n < b->n ? -1 : 1;
	/* per task (interned: equal identities are equal pointers) */
	if (a->task != b->task)
		return !a->task ? -1 : !b->task ? 1 : strcmp(a->task, b->task);
	return 0;
}

/* Sorts the lines of graph g and merges equal ones. */
static void sort_merge(struct futures *f, int g)
{
	struct futures_stack *s = f->stacks[g];
	size_t n = f->n_stacks[g], o = 0;

	if (!n)
		return;
	qsort(s, n, sizeof(*s), by_frames);
	for (size_t i = 1; i < n; i++) {
		if (!by_frames(&s[o], &s[i]))
			s[o].ns += s[i].ns;
		else
			s[++o] = s[i];
	}
	f->n_stacks[g] = o + 1;
}

static int fill_oncpu(struct futures *f)
{
	struct futures_stack *out = f->stacks[FUTURES_ONCPU];

	for (size_t i = 0; out && i < f->n_nodes; i++) {
		uint32_t depth = 0;

		if (!f->nodes[i].self_ns)
			continue;
		for (uint32_t k = (uint32_t)i; k != NONE; k = f->nodes[k].parent)
			depth++;
		const char **fr = pool_take(f, depth);
		const char *task = NULL;

		if (!fr)
			return -ENOMEM;
		uint32_t j = depth;

		for (uint32_t k = (uint32_t)i; k != NONE; k = f->nodes[k].parent) {
			const struct node *nd = &f->nodes[k];

			if (nd->parent == NONE) {
				uint64_t tid;
				fr[--j] = label(f, strtab__get(&f->strs, nd->what), NULL, 0);
				if (u64map__get(&f->root_task, (uint64_t)k + 1, &tid))
					task = strtab__get(&f->strs, (uint32_t)(tid - 1));
			} else {
				const struct futures_fn *st = &f->fns[nd->what].st;

				fr[--j] = label(f, st->name, f->opts.lines ? st->file : NULL,
						f->opts.lines ? st->line : 0);
			}
			if (!fr[j])
				return -ENOMEM;
		}
		out[f->n_stacks[FUTURES_ONCPU]++] = (struct futures_stack){
			.frames = fr, .n = depth, .ns = f->nodes[i].self_ns, .task = task,
		};
		f->sum.oncpu_ns += f->nodes[i].self_ns;
	}
	return 0;
}

static uint32_t chain_len(const struct futures *f, uint32_t c)
{
	uint32_t n = 0;

	for (; c; c = f->cells[c - 1].next)
		n++;
	return n;
}

static int fill_wait(struct futures *f)
{
	struct futures_stack *out = f->stacks[FUTURES_WAIT];

	for (size_t i = 0; out && i < f->n_waits; i++) {
		const struct wait *w = &f->waits[i];
		uint32_t n = chain_len(f, w->chain) + 1, j = 0;
		const char **fr;

		if (!w->ns)
			continue;
		if (!(fr = pool_take(f, n)))
			return -ENOMEM;
		fr[j++] = label(f, strtab__get(&f->strs, w->root), NULL, 0);
		for (uint32_t c = w->chain; c; c = f->cells[c - 1].next, j++) {
			const struct pair *pr = &f->pairs[f->cells[c - 1].pair];
			const struct futures_fn *st = &f->fns[pr->fn].st;
			bool leaf = !f->cells[c - 1].next, at;
			uint32_t line = pair_line(f, pr, &at);

			fr[j] = leaf || f->opts.lines ? label(f, st->name, st->file, line)
						      : label(f, st->name, NULL, 0);
		}
		for (j = 0; j < n; j++)
			if (!fr[j])
				return -ENOMEM;
		out[f->n_stacks[FUTURES_WAIT]++] = (struct futures_stack){
			.frames = fr, .n = n, .ns = w->ns,
			.task = w->task ? strtab__get(&f->strs, w->task - 1) : NULL,
		};
		f->sum.wait_ns += w->ns;
	}
	return 0;
}

static int by_self(const void *x, const void *y)
{
	const struct futures_fn *a = x, *b = y;
	int c;

	if (a->self_ns != b->self_ns)
		return a->self_ns < b->self_ns ? 1 : -1;
	if ((c = strcmp(a->name, b->name)))
		return c;
	return a->line < b->line ? -1 : a->line > b->line;
}

static int by_waiting(const void *x, const void *y)
{
	const struct futures_parked *a = x, *b = y;

	if (a->waiting_ns != b->waiting_ns)
		return a->waiting_ns > b->waiting_ns ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The parked entries kept, with their chains, longest waiting first. */
static int finish_parked(struct futures *f)
{
	size_t nl = 0;

	for (size_t i = 0; i < f->n_pk; i++)
		nl += chain_len(f, f->pk[i].chain);
	f->parked = calloc(f->n_pk ? f->n_pk : 1, sizeof(*f->parked));
	f->links = calloc(nl ? nl : 1, sizeof(*f->links));
	if (!f->parked || !f->links)
		return -ENOMEM;
	for (size_t i = 0; i < f->n_pk; i++) {
		const struct pk *e = &f->pk[i];
		struct futures_parked *p = &f->parked[f->n_parked++];

		*p = (struct futures_parked){
			.seq = e->seq, .tokio_id = e->tokio_id,
			.name = strtab__get(&f->strs, e->root), .since_ns = e->since,
			.waiting_ns = e->waiting, .until_end = e->until_end,
			.chain = e->chain ? &f->links[f->n_links] : NULL,
			.n_chain = chain_len(f, e->chain),
		};
		for (uint32_t c = e->chain; c; c = f->cells[c - 1].next) {
			const struct pair *pr = &f->pairs[f->cells[c - 1].pair];
			struct futures_link *l = &f->links[f->n_links++];

			l->name = f->fns[pr->fn].st.name;
			l->file = f->fns[pr->fn].st.file;
			l->line = pair_line(f, pr, &l->at_await);
			if (l->at_await && f->fns[pr->fn].awaitees)
				l->awaitee = f->fns[pr->fn].awaitees[pr->ap];
		}
	}
	if (f->n_parked > 1)
		qsort(f->parked, f->n_parked, sizeof(*f->parked), by_waiting);
	return 0;
}

int fu_build_results(struct futures *f)
{
	size_t n[2] = { 0, 0 };
	int err;

	if ((err = finish_parked(f)))
		return err;
	if (f->err)
		return f->err;
	/* the lines and their frames: one allocation each */
	for (size_t i = 0; i < f->n_nodes; i++) {
		if (!f->nodes[i].self_ns)
			continue;
		n[FUTURES_ONCPU]++;
		for (uint32_t k = (uint32_t)i; k != NONE; k = f->nodes[k].parent)
			f->cap_pool++;
	}
	for (size_t i = 0; i < f->n_waits; i++)
		if (f->waits[i].ns) {
			n[FUTURES_WAIT]++;
			f->cap_pool += chain_len(f, f->waits[i].chain) + 1;
		}
	for (int g = 0; g < 2; g++)
		if (n[g] && !(f->stacks[g] = calloc(n[g], sizeof(struct futures_stack))))
			return -ENOMEM;
	if (f->cap_pool && !(f->frame_pool = calloc(f->cap_pool, sizeof(*f->frame_pool))))
		return -ENOMEM;
	if ((err = fill_oncpu(f)) || (err = fill_wait(f)))
		return err;
	sort_merge(f, FUTURES_ONCPU);
	sort_merge(f, FUTURES_WAIT);
	f->sum.oncpu_stacks = f->n_stacks[FUTURES_ONCPU];
	f->sum.wait_stacks = f->n_stacks[FUTURES_WAIT];
	f->sum.chains = f->n_cells;
	f->sum.paths = f->n_nodes;

	f->fn_sorted = calloc(f->n_fns ? f->n_fns : 1, sizeof(*f->fn_sorted));
	if (!f->fn_sorted)
		return -ENOMEM;
	for (size_t i = 0; i < f->n_fns; i++)
		if (f->fns[i].st.polls)
			f->fn_sorted[f->n_fn_sorted++] = f->fns[i].st;
	if (f->n_fn_sorted > 1)
		qsort(f->fn_sorted, f->n_fn_sorted, sizeof(*f->fn_sorted), by_self);
	return f->err;
}

const struct futures_summary *futures__summary(const struct futures *f)
{
	return f ? &f->sum : NULL;
}

const struct futures_stack *futures__stacks(const struct futures *f, enum futures_graph g,
					    size_t *n)
{
	if (!f || (g != FUTURES_ONCPU && g != FUTURES_WAIT) || !f->finished) {
		*n = 0;
		return NULL;
	}
	*n = f->n_stacks[g];
	return f->stacks[g];
}

const struct futures_fn *futures__fns(const struct futures *f, size_t *n)
{
	*n = f ? f->n_fn_sorted : 0;
	return f ? f->fn_sorted : NULL;
}

const struct futures_fn *futures__fn(const struct futures *f, uint32_t fn)
{
	return f && fn < f->n_fns ? &f->fns[fn].st : NULL;
}

const struct futures_parked *futures__parked(const struct futures *f, size_t *n)
{
	*n = f ? f->n_parked : 0;
	return f ? f->parked : NULL;
}

const struct futures_parked *futures__parked_task(const struct futures *f, uint64_t seq)
{
	for (size_t i = 0; f && i < f->n_parked; i++)
		if (f->parked[i].seq == seq)
			return &f->parked[i];
	return NULL;
}

void futures__free(struct futures *f)
{
	if (!f)
		return;
	if (f->own_model)
		task_model__free(f->model);
	for (size_t i = 0; i < f->n_thr; i++) {
		free(f->thr[i].fr);
		free(f->thr[i].po);
	}
	free(f->thr);
	u64map__clear(&f->thr_of);
	for (size_t i = 0; i < f->n_fns; i++) {
		free(f->fns[i].awaits);
		free(f->fns[i].awaitees);
	}
	free(f->fns);
	u64map__clear(&f->fn_of);
	free(f->pi);
	free(f->nodes);
	u64map__clear(&f->node_of);
	free(f->pairs);
	u64map__clear(&f->pair_of);
	free(f->cells);
	u64map__clear(&f->cell_of);
	free(f->waits);
	u64map__clear(&f->wait_of);
	u64map__clear(&f->task_root);
	u64map__clear(&f->root_task);
	strtab__clear(&f->strs);
	strtab__clear(&f->labels);
	free(f->stacks[0]);
	free(f->stacks[1]);
	free(f->frame_pool);
	free(f->fn_sorted);
	free(f->parked);
	free(f->pk);
	free(f->links);
	free(f);
}

