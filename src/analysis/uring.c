/* io_uring analysis: per task counters and a latency histogram
 * (analysis/hist). Task rows are the task model's tasks (task_model.h):
 * the task polled on the submitting thread, its row index kept in the task
 * (per-task observer data). Depends on util/, analysis/hist and the task
 * model only. */
#include "analysis/uring.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hist.h"
#include "analysis/task_model.h"
#include "util/u64map.h"

struct row {
	struct uring_task t;
	struct hist lat;
};

struct uring {
	const struct as_trace_meta *meta;
	struct task_model *model;
	bool own_model;
	size_t toff;           /* per model task: uint32_t, row index (0 none) */
	struct row *rows;      /* rows[0]: outside polls */
	size_t n, cap;
	struct u64map unknown; /* address -> row index: tasks the model never saw
	                          (their polls' begins lost) */
	struct uring_task *view;
	size_t n_view;
	bool sorted;
	struct uring_summary sum;
};

struct uring *uring__new_on(struct task_model *m, const struct as_trace_meta *meta)
{
	static const struct tm_ops none = { 0 };  /* rows are looked up at requests */
	struct uring *u;
	int err;

	if (!m) {
		errno = EINVAL;
		return NULL;
	}
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->meta = meta;
	u->model = m;
	u->rows = calloc(16, sizeof(*u->rows));
	if (!u->rows) {
		free(u);
		errno = ENOMEM;
		return NULL;
	}
	if ((err = task_model__observe(m, &none, u, sizeof(uint32_t), &u->toff, 0, NULL))) {
		free(u->rows);
		free(u);
		errno = -err;
		return NULL;
	}
	u->cap = 16;
	u->rows[0].t.name = "outside-polls";
	u->n = 1;
	return u;
}

struct uring *uring__new(const struct as_trace_meta *meta)
{
	struct task_model *m = task_model__new(meta);
	struct uring *u = m ? uring__new_on(m, meta) : NULL;

	if (!u) {
		task_model__free(m);
		errno = ENOMEM;
		return NULL;
	}
	u->own_model = true;
	return u;
}

/* The row of the request ev: for a submission its thread's task polled
 * then (the model's), for a completion the submitter it names (dated at the
 * completion, when that thread may be polling another task); rows[0]
 * outside polls. */
static int row_of(struct uring *u, const struct as_event *ev, size_t *idx)
{
	struct tm_task *t = (ev->flags & AS_URING_COMPLETE)
			    ? (ev->task && ev->task != UINT64_MAX ? task_model__task(u->model, ev->task)
								  : NULL)
			    : task_model__polled(u->model, ev->tid, ev->task);
	uint32_t *slot = t ? tm_task__data(t, u->toff) : NULL;
	uint64_t task = ev->task, v;

	if (!t && (!task || task == UINT64_MAX)) {
		*idx = 0;
		return 0;
	}
	if (slot && *slot) {
		*idx = *slot;
		if (!u->rows[*idx].t.tokio_id)
			u->rows[*idx].t.tokio_id = t->tokio_id;
		return 0;
	}
	if (u64map__get(&u->unknown, t ? t->header : task, &v)) {
		*idx = (size_t)v;
		if (t) {
			/* a row kept by address before the model knew the task
			 * (its poll began before the recording): now the task's */
			struct uring_task *r = &u->rows[*idx].t;

			u64map__del(&u->unknown, t->header);
			r->seq = t->seq;
			if (!r->tokio_id)
				r->tokio_id = t->tokio_id;
			r->name = t->name && *t->name ? t->name : "?";
			*slot = (uint32_t)*idx;
		}
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
	if (!t && u64map__set(&u->unknown, task, u->n))
		return -ENOMEM;
	memset(&u->rows[u->n], 0, sizeof(u->rows[0]));
	u->rows[u->n].t.task = task;
	u->rows[u->n].t.name = "?";
	if (t) {
		u->rows[u->n].t.task = t->header;
		u->rows[u->n].t.seq = t->seq;
		u->rows[u->n].t.tokio_id = t->tokio_id;
		u->rows[u->n].t.name = t->name && *t->name ? t->name : "?";
		*slot = (uint32_t)u->n;
	}
	*idx = u->n++;
	return 0;
}

int uring__add(struct uring *u, const struct as_event *ev)
{
	size_t i;
	int err;

	if (!u || !ev)
		return -EINVAL;
	/* its own model sees the event first, as a shared one would */
	if (u->own_model && (err = task_model__add(u->model, ev)))
		return err;
	switch (ev->type) {
	case AS_EV_URING:
		if ((err = row_of(u, ev, &i)))
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
	u64map__clear(&u->unknown);
	if (u->own_model)
		task_model__free(u->model);
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
