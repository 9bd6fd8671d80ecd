/* io_uring analysis: per task counters and a latency histogram
 * (analysis/hist). Depends on util/ and analysis/hist only. */
#include "analysis/uring.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hist.h"
#include "util/strtab.h"
#include "util/u64map.h"

struct row {
	struct uring_task t;
	struct hist lat;
};

struct uring {
	const struct as_trace_meta *meta;
	struct strtab strs;
	struct row *rows;      /* rows[0]: outside polls */
	size_t n, cap;
	struct u64map live;    /* task address -> row index */
	struct uring_task *view;
	size_t n_view;
	bool sorted;
	struct uring_summary sum;
};

struct uring *uring__new(const struct as_trace_meta *meta)
{
	struct uring *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->meta = meta;
	u->rows = calloc(16, sizeof(*u->rows));
	if (!u->rows) {
		free(u);
		errno = ENOMEM;
		return NULL;
	}
	u->cap = 16;
	u->rows[0].t.name = "outside-polls";
	u->n = 1;
	return u;
}

static int row_of(struct uring *u, uint64_t task, size_t *idx)
{
	uint64_t v;

	if (!task || task == UINT64_MAX) {
		*idx = 0;
		return 0;
	}
	if (u64map__get(&u->live, task, &v)) {
		*idx = (size_t)v;
		return 0;
	}
	if (u->n == u->cap) {
		size_t cap = u->cap * 2;
		struct row *r = realloc(u->rows, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		u->rows = r;
		u->cap = cap;
	}
	if (u64map__set(&u->live, task, u->n))
		return -ENOMEM;
	memset(&u->rows[u->n], 0, sizeof(u->rows[0]));
	u->rows[u->n].t.task = task;
	u->rows[u->n].t.name = "?";
	*idx = u->n++;
	return 0;
}

int uring__add(struct uring *u, const struct as_event *ev)
{
	size_t i;
	int err;

	if (!u || !ev)
		return -EINVAL;
	switch (ev->type) {
	case AS_EV_POLL_BEGIN:
		if (!ev->task || ev->task == UINT64_MAX)
			return 0;
		if ((err = row_of(u, ev->task, &i)))
			return err;
		if (ev->other)
			u->rows[i].t.tokio_id = ev->other;
		if (!strcmp(u->rows[i].t.name, "?") && u->meta && ev->probe < u->meta->n_probes) {
			const struct as_probe *p = &u->meta->probes[ev->probe];
			uint32_t s;
			if (p->future && *p->future) {
				size_t len = strlen(p->future);
				if (!strtab__find(&u->strs, p->future, len, &s) &&
				    strtab__add(&u->strs, p->future, len, &s))
					return -ENOMEM;
				u->rows[i].t.name = strtab__get(&u->strs, s);
			}
		}
		return 0;
	case AS_EV_FREE:
		if (ev->task && ev->task != UINT64_MAX)
			u64map__del(&u->live, ev->task);  /* a reused address is a new task */
		return 0;
	case AS_EV_URING:
		if ((err = row_of(u, ev->task, &i)))
			return err;
		u->sorted = false;
		if (ev->flags & AS_URING_COMPLETE) {
			u->rows[i].t.completed++;
			u->sum.completed++;
			if (ev->flags & AS_URING_ERROR) {
				u->rows[i].t.errors++;
				u->sum.errors++;
			}
			return hist__add(&u->rows[i].lat, ev->other);
		}
		u->rows[i].t.submitted++;
		u->sum.submitted++;
		return 0;
	default:
		return 0;
	}
}

static int by_submitted(const void *x, const void *y)
{
	const struct uring_task *a = x, *b = y;
	if (a->submitted != b->submitted)
		return a->submitted > b->submitted ? -1 : 1;
	return a->task < b->task ? -1 : a->task > b->task;
}

const struct uring_task *uring__tasks(struct uring *u, size_t *n)
{
	*n = 0;
	if (!u)
		return NULL;
	if (!u->sorted) {
		free(u->view);
		u->n_view = 0;
		u->view = calloc(u->n, sizeof(*u->view));
		if (!u->view)
			return NULL;
		for (size_t i = 0; i < u->n; i++) {
			struct row *r = &u->rows[i];
			if (!r->t.submitted && !r->t.completed)
				continue;
			struct uring_task t = r->t;
			t.p50_ns = hist__quantile(&r->lat, 0.5);
			t.p99_ns = hist__quantile(&r->lat, 0.99);
			t.max_ns = r->lat.max;
			u->view[u->n_view++] = t;
		}
		qsort(u->view, u->n_view, sizeof(*u->view), by_submitted);
		u->sorted = true;
	}
	*n = u->n_view;
	return u->n_view ? u->view : NULL;
}

const struct uring_summary *uring__summary(const struct uring *u)
{
	return u ? &u->sum : NULL;
}

void uring__free(struct uring *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->n; i++)
		hist__clear(&u->rows[i].lat);
	free(u->rows);
	u64map__clear(&u->live);
	strtab__clear(&u->strs);
	free(u->view);
	free(u);
}

/* ------------------------------------------------------------------ sink */

static int sink_add(void *impl, const struct as_event *ev, const struct as_stack *stack)
{
	(void)stack;
	return uring__add(impl, ev);
}

static const struct as_sink_ops sink_ops = {
	.name = "io_uring", .add = sink_add, .finish = NULL, .free = NULL,
};

struct as_sink uring__sink(struct uring *x)
{
	return (struct as_sink){ .ops = &sink_ops, .impl = x };
}
