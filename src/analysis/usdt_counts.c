/* USDT hit counting: probes grouped by their "provider:name" symbol; the
 * task of a hit is the task model's (task_model.h): the task polled on its
 * thread then, one row per (probe, model task). Depends on util/ and the
 * task model only. */
#include "analysis/usdt_counts.h"
#include "analysis/task_model.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/u64map.h"

/* Row keys: probe << 40 | ident; ident the model's seq, or UNKNOWN_IDENT +
 * n for the n-th address of a task the model never saw. */
#define UNKNOWN_IDENT (1ull << 39)

struct usdt_counts {
	const struct as_trace_meta *meta;
	size_t *group;            /* per meta probe: index into probes, SIZE_MAX none */
	struct usdt_probe_count *probes;
	size_t n_probes;
	struct task_model *model;
	bool own_model;
	struct u64map unknown;    /* address -> n: tasks the model never saw (their
	                             polls' begins lost) */
	struct usdt_task_count *rows;
	size_t n_rows, cap_rows;
	struct u64map by_key;     /* (probe << 40 | ident) -> row index */
	uint64_t total, bad;
	bool finished;
};

struct usdt_counts *usdt_counts__new_on(struct task_model *m, const struct as_trace_meta *meta)
{
	struct usdt_counts *c = NULL;

	if (!m) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		goto fail;
	c->meta = meta;
	c->model = m;
	c->group = calloc(meta->n_probes ? meta->n_probes : 1, sizeof(*c->group));
	c->probes = calloc(meta->n_probes ? meta->n_probes : 1, sizeof(*c->probes));
	if (!c->group || !c->probes)
		goto fail;
	for (uint32_t i = 0; i < meta->n_probes; i++) {
		const struct as_probe *p = &meta->probes[i];
		const char *sym = p->symbol ? p->symbol : "?";
		c->group[i] = SIZE_MAX;
		if (p->role != AS_ROLE_USDT)
			continue;
		size_t g = 0;
		while (g < c->n_probes && strcmp(c->probes[g].probe, sym))
			g++;
		if (g == c->n_probes)
			c->probes[c->n_probes++] = (struct usdt_probe_count){ .probe = sym };
		c->group[i] = g;
	}
	return c;
fail:
	usdt_counts__free(c);
	errno = ENOMEM;
	return NULL;
}

struct usdt_counts *usdt_counts__new(const struct as_trace_meta *meta)
{
	struct task_model *m = task_model__new(meta);
	struct usdt_counts *c = m ? usdt_counts__new_on(m, meta) : NULL;

	if (!c) {
		task_model__free(m);
		errno = ENOMEM;
		return NULL;
	}
	c->own_model = true;
	return c;
}

static int on_usdt(struct usdt_counts *c, const struct as_event *ev)
{
	if (ev->probe >= c->meta->n_probes || c->group[ev->probe] == SIZE_MAX) {
		c->bad++;
		return 0;
	}
	size_t g = c->group[ev->probe];
	struct usdt_probe_count *p = &c->probes[g];
	int64_t arg = (int64_t)ev->other;

	if (!p->hits || arg < p->arg_min)
		p->arg_min = arg;
	if (!p->hits || arg > p->arg_max)
		p->arg_max = arg;
	p->hits++;
	c->total++;
	/* the task polled on its thread then (ev->task) */
	struct tm_task *t = task_model__polled(c->model, ev->tid, ev->task);
	uint64_t ident, v;

	if (!t && (!ev->task || ev->task == UINT64_MAX))
		return 0;
	p->in_task++;
	if (t) {
		ident = t->seq;
	} else if (u64map__get(&c->unknown, ev->task, &v)) {
		ident = UNKNOWN_IDENT + v;
	} else {
		v = c->unknown.len + 1;
		if (u64map__set(&c->unknown, ev->task, v))
			return -ENOMEM;
		ident = UNKNOWN_IDENT + v;
	}
	uint64_t key = (uint64_t)g << 40 | ident;
	struct usdt_task_count *r;
	if (u64map__get(&c->by_key, key, &v)) {
		r = &c->rows[v];
	} else {
		if (c->n_rows == c->cap_rows) {
			size_t cap = c->cap_rows ? c->cap_rows * 2 : 64;
			struct usdt_task_count *n = realloc(c->rows, cap * sizeof(*n));
			if (!n)
				return -ENOMEM;
			c->rows = n;
			c->cap_rows = cap;
		}
		if (u64map__set(&c->by_key, key, c->n_rows))
			return -ENOMEM;
		r = &c->rows[c->n_rows++];
		*r = (struct usdt_task_count){ .probe = g, .task = t ? t->header : ev->task,
					       .seq = t ? t->seq : 0, .first_ts = ev->ts };
	}
	r->hits++;
	if (t) {
		r->tokio_id = t->tokio_id;
		r->name = t->name && *t->name ? t->name : NULL;
	}
	return 0;
}

int usdt_counts__add(struct usdt_counts *c, const struct as_event *ev)
{
	int err;

	if (c->finished)
		return -EINVAL;
	/* its own model sees the event first, as a shared one would */
	if (c->own_model && (err = task_model__add(c->model, ev)))
		return err;
	return ev->type == AS_EV_USDT ? on_usdt(c, ev) : 0;
}

const struct usdt_probe_count *usdt_counts__probes(const struct usdt_counts *c, size_t *n)
{
	*n = c->n_probes;
	return c->probes;
}

static int by_hits(const void *x, const void *y)
{
	const struct usdt_task_count *a = x, *b = y;

	if (a->hits != b->hits)
		return a->hits < b->hits ? 1 : -1;
	if (a->probe != b->probe)
		return a->probe < b->probe ? -1 : 1;
	return a->first_ts < b->first_ts ? -1 : a->first_ts > b->first_ts;
}

void usdt_counts__finish(struct usdt_counts *c)
{
	if (c->finished)
		return;
	c->finished = true;
	if (c->n_rows)
		qsort(c->rows, c->n_rows, sizeof(*c->rows), by_hits);
	u64map__clear(&c->by_key);  /* indices moved; no add comes after */
}

const struct usdt_task_count *usdt_counts__tasks(const struct usdt_counts *c, size_t *n)
{
	*n = c->n_rows;
	return c->rows;
}

uint64_t usdt_counts__total(const struct usdt_counts *c)
{
	return c->total;
}

uint64_t usdt_counts__bad(const struct usdt_counts *c)
{
	return c->bad;
}

void usdt_counts__free(struct usdt_counts *c)
{
	if (!c)
		return;
	free(c->group);
	free(c->probes);
	u64map__clear(&c->unknown);
	if (c->own_model)
		task_model__free(c->model);
	free(c->rows);
	u64map__clear(&c->by_key);
	free(c);
}

/* ------------------------------------------------------------------ sink */

static int sink_add(void *impl, const struct as_event *ev, const struct as_stack *stack)
{
	(void)stack;
	return usdt_counts__add(impl, ev);
}

static int sink_finish(void *impl, const struct as_trace_end *end)
{
	(void)end;
	usdt_counts__finish(impl);
	return 0;
}

static const struct as_sink_ops sink_ops = {
	.name = "usdt counts", .add = sink_add, .finish = sink_finish, .free = NULL,
};

struct as_sink usdt_counts__sink(struct usdt_counts *x)
{
	return (struct as_sink){ .ops = &sink_ops, .impl = x };
}
