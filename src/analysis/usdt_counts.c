/* USDT hit counting: probes grouped by their "provider:name" symbol; task
 * identities by header address between first sight and FREE. */
#include "analysis/usdt_counts.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/u64map.h"

struct live {
	uint64_t ident;           /* 1, 2, ...: one per task identity */
	uint64_t tokio_id;
	const char *name;
};

struct usdt_counts {
	const struct as_trace_meta *meta;
	size_t *group;            /* per meta probe: index into probes, SIZE_MAX none */
	struct usdt_probe_count *probes;
	size_t n_probes;
	struct live *live;        /* slots; the freed ones listed in free_live */
	size_t n_live, cap_live;
	size_t *free_live;
	size_t n_free;
	struct u64map by_addr;    /* task address -> live slot + 1 */
	uint64_t next_ident;
	struct usdt_task_count *rows;
	size_t n_rows, cap_rows;
	struct u64map by_key;     /* (probe << 40 | ident) -> row index */
	uint64_t total, bad;
	bool finished;
};

struct usdt_counts *usdt_counts__new(const struct as_trace_meta *meta)
{
	struct usdt_counts *c = calloc(1, sizeof(*c));

	if (!c)
		goto fail;
	c->meta = meta;
	c->next_ident = 1;
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

/* The live slot of task addr, created when absent; NULL on ENOMEM. */
static struct live *live_get(struct usdt_counts *c, uint64_t addr)
{
	uint64_t v;
	size_t slot;

	if (addr == UINT64_MAX)
		return NULL;
	if (u64map__get(&c->by_addr, addr, &v))
		return &c->live[v - 1];
	if (c->n_free) {
		slot = c->free_live[--c->n_free];
	} else {
		if (c->n_live == c->cap_live) {
			size_t cap = c->cap_live ? c->cap_live * 2 : 64;
			struct live *l = realloc(c->live, cap * sizeof(*l));
			if (!l)
				return NULL;
			c->live = l;
			size_t *f = realloc(c->free_live, cap * sizeof(*f));
			if (!f)
				return NULL;
			c->free_live = f;
			c->cap_live = cap;
		}
		slot = c->n_live++;
	}
	if (u64map__set(&c->by_addr, addr, slot + 1)) {
		c->free_live[c->n_free++] = slot;
		return NULL;
	}
	c->live[slot] = (struct live){ .ident = c->next_ident++ };
	return &c->live[slot];
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
	if (!ev->task || ev->task == UINT64_MAX)
		return 0;
	p->in_task++;
	struct live *l = live_get(c, ev->task);
	if (!l)
		return -ENOMEM;
	uint64_t key = (uint64_t)g << 40 | l->ident, v;
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
		*r = (struct usdt_task_count){ .probe = g, .task = ev->task, .first_ts = ev->ts };
	}
	r->hits++;
	r->tokio_id = l->tokio_id;
	r->name = l->name;
	return 0;
}

int usdt_counts__add(struct usdt_counts *c, const struct as_event *ev)
{
	if (c->finished)
		return -EINVAL;
	switch (ev->type) {
	case AS_EV_USDT:
		return on_usdt(c, ev);
	case AS_EV_POLL_BEGIN: {
		if (!ev->task || !c->n_probes)
			return 0;
		struct live *l = live_get(c, ev->task);
		if (!l)
			return -ENOMEM;
		if (ev->other)
			l->tokio_id = ev->other;
		if (ev->probe < c->meta->n_probes && c->meta->probes[ev->probe].future &&
		    c->meta->probes[ev->probe].future[0])
			l->name = c->meta->probes[ev->probe].future;
		return 0;
	}
	case AS_EV_FREE: {
		uint64_t v;
		if (ev->task && u64map__get(&c->by_addr, ev->task, &v)) {
			u64map__del(&c->by_addr, ev->task);
			c->free_live[c->n_free++] = (size_t)(v - 1);
		}
		return 0;
	}
	default:
		return 0;
	}
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
	free(c->live);
	free(c->free_live);
	u64map__clear(&c->by_addr);
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
