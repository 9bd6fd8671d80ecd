/* Run-queue delay analysis: one histogram (analysis/hist) per thread;
 * percentiles computed on demand. Depends on util/ and analysis/hist only. */
#include "analysis/runq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hist.h"
#include "util/strtab.h"
#include "util/u64map.h"

struct thr {
	uint32_t tid;
	const char *name;
	bool worker;
	uint64_t in_poll;
	struct hist h;
};

struct runq {
	struct strtab strs;
	struct thr *thr;
	size_t n, cap;
	struct u64map idx;        /* tid + 1 -> index */
	struct runq_thread *view;
	size_t n_view;
	bool sorted;
};

struct runq *runq__new(void)
{
	return calloc(1, sizeof(struct runq));
}

static struct thr *thread_of(struct runq *q, uint32_t tid)
{
	uint64_t v;

	if (u64map__get(&q->idx, (uint64_t)tid + 1, &v))
		return &q->thr[v];
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 16;
		struct thr *t = realloc(q->thr, cap * sizeof(*t));
		if (!t)
			return NULL;
		q->thr = t;
		q->cap = cap;
	}
	if (u64map__set(&q->idx, (uint64_t)tid + 1, q->n))
		return NULL;
	q->thr[q->n] = (struct thr){ .tid = tid, .name = "?" };
	return &q->thr[q->n++];
}

int runq__add(struct runq *q, const struct as_event *ev)
{
	struct thr *t;
	uint32_t i;

	if (!q || !ev)
		return -EINVAL;
	switch (ev->type) {
	case AS_EV_THREAD:
		if (!ev->str)
			return 0;
		if (!(t = thread_of(q, ev->tid)))
			return -ENOMEM;
		if (strtab__intern(&q->strs, ev->str, strlen(ev->str), &i) >= 0)
			t->name = strtab__get(&q->strs, i);
		else
			return -ENOMEM;
		return 0;
	case AS_EV_POLL_BEGIN:
	case AS_EV_PARK:
		if (!(t = thread_of(q, ev->tid)))
			return -ENOMEM;
		t->worker = true;
		return 0;
	case AS_EV_RUNQ:
		if (!(t = thread_of(q, ev->tid)))
			return -ENOMEM;
		q->sorted = false;
		if (ev->task)
			t->in_poll++;
		return hist__add(&t->h, ev->other);
	default:
		return 0;
	}
}

static int by_worker_total(const void *x, const void *y)
{
	const struct runq_thread *a = x, *b = y;
	if (a->worker != b->worker)
		return a->worker ? -1 : 1;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

const struct runq_thread *runq__threads(struct runq *q, size_t *n)
{
	*n = 0;
	if (!q)
		return NULL;
	if (!q->sorted) {
		free(q->view);
		q->n_view = 0;
		q->view = calloc(q->n ? q->n : 1, sizeof(*q->view));
		if (!q->view)
			return NULL;
		for (size_t i = 0; i < q->n; i++) {
			const struct thr *t = &q->thr[i];
			if (!t->h.count)
				continue;
			q->view[q->n_view++] = (struct runq_thread){
				.tid = t->tid, .name = t->name, .worker = t->worker, .count = t->h.count,
				.p50_ns = hist__quantile(&t->h, 0.5), .p99_ns = hist__quantile(&t->h, 0.99),
				.max_ns = t->h.max, .total_ns = t->h.sum, .in_poll = t->in_poll,
			};
		}
		qsort(q->view, q->n_view, sizeof(*q->view), by_worker_total);
		q->sorted = true;
	}
	*n = q->n_view;
	return q->n_view ? q->view : NULL;
}

void runq__free(struct runq *q)
{
	if (!q)
		return;
	for (size_t i = 0; i < q->n; i++)
		hist__clear(&q->thr[i].h);
	free(q->thr);
	u64map__clear(&q->idx);
	strtab__clear(&q->strs);
	free(q->view);
	free(q);
}

/* ------------------------------------------------------------------ sink */

static int sink_add(void *impl, const struct as_event *ev, const struct as_stack *stack)
{
	(void)stack;
	return runq__add(impl, ev);
}

static const struct as_sink_ops sink_ops = {
	.name = "run queue", .add = sink_add, .finish = NULL, .free = NULL,
};

struct as_sink runq__sink(struct runq *x)
{
	return (struct as_sink){ .ops = &sink_ops, .impl = x };
}
