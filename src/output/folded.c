/* folded: the poll tracker shared by the exporters, and the folded-stacks
 * writer (see folded.h). The tracker is an observer of the task model
 * (analysis/task_model.h), which owns the rules of a task's life: it only
 * turns what the model publishes into closed intervals, with the names the
 * exporters print and the wake behind each poll.
 * Pure C: no libbpf, no reader; writes only to the FILE* given. */
#include "output/folded.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/task_model.h"
#include "sym/demangle.h"
#include "util/strtab.h"
#include "util/task_id.h"
#include "util/u64map.h"

/* ---------------------------------------------------------------- tracker */

/* The tracker's bytes in each model task. */
struct pt_task {
	struct ptrack_task info;
	bool named;             /* its first poll was seen */
	bool has_wake;          /* wake: what made it runnable (until its next poll) */
	struct ptrack_wake wake;
	bool poll_has_wake;     /* the wake behind its poll in progress */
	struct ptrack_wake poll_wake;
};

struct ptrack {
	ptrack_out_fn out;
	void *ctx;
	struct task_model *model;
	bool own_model;
	size_t off;             /* struct pt_task in each model task */
	uint32_t *probe_name;   /* per probe: name_id */
	uint32_t n_probes;
	struct strtab names;    /* distinct pretty future names */
	uint64_t runnable, parked;
	int err;                /* the first error of the callback */
	bool finished;
};

static struct pt_task *pt(const struct ptrack *t, const struct tm_task *mt)
{
	return tm_task__data(mt, t->off);
}

static int intern(struct strtab *t, const char *s, uint32_t *id)
{
	size_t len;
	uint32_t idx;
	int ret;

	if (!s) {
		*id = 0;
		return 0;
	}
	len = strlen(s);
	ret = strtab__intern(t, s, len, &idx);
	if (ret < 0)
		return ret;
	*id = idx + 1;
	return 0;
}

static const char *name_of(const struct strtab *t, uint32_t id)
{
	return id ? strtab__get(t, id - 1) : NULL;
}

static void emit(struct ptrack *t, const struct ptrack_out *o)
{
	int err = t->out(t->ctx, o);

	if (err && !t->err)
		t->err = err;
}

static void emit_interval(struct ptrack *t, enum ptrack_out_type type, const struct tm_task *mt,
			  uint64_t to)
{
	struct ptrack_out o = { .type = type, .task = &pt(t, mt)->info, .from = mt->since,
				.to = to };

	if (to < mt->since)
		o.to = o.from;
	emit(t, &o);
}

/* Closes the open state interval of mt (runnable or idle) at ts. */
static void close_state(struct ptrack *t, const struct tm_task *mt, uint64_t ts)
{
	if (mt->state == TM_RUNNABLE)
		emit_interval(t, PTRACK_SCHEDULED, mt, ts);
	else if (mt->state == TM_IDLE)
		emit_interval(t, PTRACK_IDLE, mt, ts);
}

/* What the waking thread is doing: for the start of a flow. */
static void wake_from(const struct tm_thread *th, const struct as_event *ev,
		      struct ptrack_wake *w)
{
	memset(w, 0, sizeof(*w));
	w->ts = ev->ts;
	w->tid = ev->tid;
	w->flags = ev->flags & (AS_WAKE_IO | AS_WAKE_TIMER);
	if (th && th->depth) {
		const struct tm_frame *top = &th->stack[th->depth - 1];

		w->waker_seq = top->task->seq;
		w->in_user_poll = tm_frame__user(top);
	}
}

static void on_born(void *ctx, struct tm_task *mt, struct tm_thread *th,
		    const struct as_event *ev)
{
	struct ptrack *t = ctx;
	struct pt_task *p = pt(t, mt);

	p->info.seq = mt->seq;
	p->info.header = mt->header;
	if (ev->type != AS_EV_WAKE)
		return;
	/* first sight by the spawn-time schedule */
	p->info.spawn_id = mt->spawn_id;
	p->info.spawn_file = mt->spawn_file;
	p->info.spawn_line = mt->spawn_line;
	p->info.spawn_col = mt->spawn_col;
	wake_from(th, ev, &p->wake);
	p->wake.spawn = true;
	p->has_wake = true;
}

static void on_leave(void *ctx, struct tm_task *mt, uint64_t ts, uint64_t d, enum tm_by by)
{
	struct ptrack *t = ctx;

	(void)d;
	if (by == TM_BY_END)
		return; /* in seq order at finish */
	close_state(t, mt, ts);
	if (mt->state == TM_RUNNABLE)
		t->runnable--;
}

static void on_enter(void *ctx, struct tm_task *mt, uint64_t ts)
{
	struct ptrack *t = ctx;

	(void)ts;
	if (mt->state == TM_RUNNABLE)
		t->runnable++;
}

static void on_poll_begin(void *ctx, struct tm_task *mt, struct tm_thread *th,
			  const struct as_event *ev)
{
	struct ptrack *t = ctx;
	struct pt_task *p = pt(t, mt);

	(void)th;
	if (!p->named) {
		p->named = true;
		if (ev->probe < t->n_probes) {
			p->info.name_id = t->probe_name[ev->probe];
			p->info.name = name_of(&t->names, p->info.name_id);
		}
	}
	p->info.tokio_id = mt->tokio_id;
	p->poll_has_wake = p->has_wake;
	p->poll_wake = p->wake;
	p->has_wake = false;
}

static void on_poll_end(void *ctx, struct tm_thread *th, const struct tm_frame *f, uint64_t ts,
			uint64_t d, enum tm_end how)
{
	struct ptrack *t = ctx;
	struct pt_task *p = pt(t, f->task);
	struct ptrack_poll poll = {
		.task = p->info, .tid = th->tid, .begin = f->begin, .end = f->begin + d,
		.user = tm_frame__user(f), .has_wake = p->poll_has_wake, .wake = p->poll_wake,
	};
	struct ptrack_out o = { .type = PTRACK_POLL, .poll = &poll };

	(void)ts;
	switch (how) {
	case TM_PENDING: poll.how = PTRACK_PENDING; break;
	case TM_READY: poll.how = PTRACK_READY; break;
	case TM_CUT: poll.how = PTRACK_CUT; break;
	case TM_TRACE_END: poll.how = PTRACK_TRACE_END; break;
	}
	emit(t, &o);
}

static void on_wake(void *ctx, struct tm_task *mt, const struct as_event *ev,
		    const struct tm_wake *w)
{
	struct ptrack *t = ctx;
	struct pt_task *p = pt(t, mt);

	if (w->state != TM_IDLE && w->state != TM_RUNNING)
		return; /* already runnable, or completed */
	if (!p->has_wake) {
		wake_from(w->thread, ev, &p->wake);
		p->has_wake = true;
	}
}

static void on_gone(void *ctx, struct tm_task *mt, uint64_t ts, bool freed)
{
	struct ptrack *t = ctx;
	struct ptrack_out o = { .type = PTRACK_TASK_GONE, .task = &pt(t, mt)->info, .to = ts,
				.freed = freed };

	emit(t, &o);
}

/* mt is folded away by the model's live-task limit: no longer followed,
 * its open interval closes and it goes here, as at the end of the trace. */
static void on_fold(void *ctx, struct tm_task *mt, uint64_t ts)
{
	struct ptrack *t = ctx;
	struct ptrack_out o = { .type = PTRACK_TASK_GONE, .task = &pt(t, mt)->info, .to = ts };

	close_state(t, mt, ts);
	if (mt->state == TM_RUNNABLE)
		t->runnable--;
	emit(t, &o);
}

static void on_park(void *ctx, struct tm_thread *th, uint64_t ts)
{
	struct ptrack *t = ctx;

	(void)th;
	(void)ts;
	t->parked++;
}

static void on_unpark(void *ctx, struct tm_thread *th, uint64_t begin, uint64_t ts, uint64_t d)
{
	struct ptrack *t = ctx;
	struct ptrack_out o = { .type = PTRACK_PARKED, .tid = th->tid, .from = begin,
				.to = begin + d };

	(void)ts;
	t->parked--;
	emit(t, &o);
}

struct gather {
	struct tm_task **all;
	size_t n;
};

static void gather_one(void *ctx, struct tm_task *mt)
{
	struct gather *g = ctx;

	g->all[g->n++] = mt;
}

static int by_task_seq(const void *x, const void *y)
{
	const struct tm_task *a = *(struct tm_task *const *)x, *b = *(struct tm_task *const *)y;

	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Live tasks at the end, in seq order for a stable output. */
static void on_finish(void *ctx, uint64_t end_ns)
{
	struct ptrack *t = ctx;
	size_t n = task_model__live(t->model);
	struct gather g = { .all = malloc((n ? n : 1) * sizeof(*g.all)) };

	if (!g.all) {
		if (!t->err)
			t->err = -ENOMEM;
		return;
	}
	task_model__each(t->model, gather_one, &g);
	qsort(g.all, g.n, sizeof(*g.all), by_task_seq);
	for (size_t i = 0; i < g.n && !t->err; i++) {
		struct ptrack_out o = { .type = PTRACK_TASK_GONE, .task = &pt(t, g.all[i])->info,
					.to = end_ns };

		close_state(t, g.all[i], end_ns);
		if (g.all[i]->state == TM_RUNNABLE)
			t->runnable--;
		emit(t, &o);
	}
	free(g.all);
}

static const struct tm_ops ptrack_ops = {
	.born = on_born, .leave = on_leave, .enter = on_enter, .poll_begin = on_poll_begin,
	.poll_end = on_poll_end, .wake = on_wake, .gone = on_gone, .park = on_park,
	.unpark = on_unpark, .finish = on_finish, .fold = on_fold,
};

struct ptrack *ptrack__new_on(struct task_model *m, const struct as_trace_meta *meta,
			      ptrack_out_fn out, void *ctx)
{
	struct ptrack *t = calloc(1, sizeof(*t));
	int err = ENOMEM;

	if (!t)
		return NULL;
	t->out = out;
	t->ctx = ctx;
	t->model = m;
	if (meta && meta->probes && meta->n_probes) {
		t->probe_name = calloc(meta->n_probes, sizeof(*t->probe_name));
		if (!t->probe_name)
			goto fail;
		t->n_probes = meta->n_probes;
		for (uint32_t i = 0; i < meta->n_probes; i++) {
			char *pretty;

			if (!meta->probes[i].future)
				continue;
			pretty = sym_pretty_future(meta->probes[i].future);
			if (!pretty)
				goto fail;
			err = -intern(&t->names, pretty, &t->probe_name[i]);
			free(pretty);
			if (err)
				goto fail;
		}
	}
	if ((err = -task_model__observe(m, &ptrack_ops, t, sizeof(struct pt_task), &t->off, 0,
					NULL)))
		goto fail;
	return t;
fail:
	ptrack__free(t);
	errno = err ? err : ENOMEM;
	return NULL;
}

struct ptrack *ptrack__new(const struct as_trace_meta *meta, ptrack_out_fn out, void *ctx)
{
	struct task_model *m = task_model__new(meta);
	struct ptrack *t;

	if (!m)
		return NULL;
	t = ptrack__new_on(m, meta, out, ctx);
	if (!t) {
		int err = errno;

		task_model__free(m);
		errno = err;
		return NULL;
	}
	t->own_model = true;
	return t;
}

int ptrack__add(struct ptrack *t, const struct as_event *ev)
{
	int err;

	if (!t || !ev || t->finished)
		return -EINVAL;
	if (t->own_model && (err = task_model__add(t->model, ev)))
		return err;
	return t->err;
}

int ptrack__finish(struct ptrack *t, uint64_t end_ns)
{
	int err;

	if (!t || t->finished)
		return -EINVAL;
	t->finished = true;
	if (t->own_model && (err = task_model__finish(t->model, end_ns)))
		return err;
	return t->err;
}

uint64_t ptrack__runnable(const struct ptrack *t)
{
	return t ? t->runnable : 0;
}

uint64_t ptrack__parked(const struct ptrack *t)
{
	return t ? t->parked : 0;
}

const char *ptrack__thread_name(const struct ptrack *t, uint32_t tid)
{
	const struct tm_thread *th = t ? task_model__thread(t->model, tid) : NULL;

	return th ? th->name : NULL;
}

void ptrack__free(struct ptrack *t)
{
	if (!t)
		return;
	if (t->own_model)
		task_model__free(t->model);
	strtab__clear(&t->names);
	free(t->probe_name);
	free(t);
}

/* ---------------------------------------------------------- folded stacks */

/* Weight of one (thread, future) pair, or of one thread of a task (per_task). */
struct cell {
	uint32_t tid;
	uint32_t name_id;
	uint64_t ns;
};

/* Per-task mode: a live task's time per thread. */
struct task_cells {
	struct cell *c;
	size_t n, cap;
};

struct folded {
	FILE *out;
	bool per_task;
	enum folded_unit unit;
	uint64_t dropped, dropped_ns;
	struct ptrack *pt;
	struct cell *cells;        /* aggregated mode */
	size_t n_cells, cap_cells;
	struct u64map cell_of;     /* tid << 32 | name_id + 1 -> index + 1 */
	struct u64map tasks;       /* per_task: seq -> struct task_cells * */
	uint64_t lines, total_ns;
	bool finished;
};

static int cell_add(struct cell **arr, size_t *n, size_t *cap, uint32_t tid, uint32_t name_id,
		    uint64_t ns, size_t *idx)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 4;
		struct cell *p = realloc(*arr, ncap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		*arr = p;
		*cap = ncap;
	}
	(*arr)[*n] = (struct cell){ .tid = tid, .name_id = name_id, .ns = ns };
	*idx = (*n)++;
	return 0;
}

/* Writes s as one frame: ';' -> ',', control characters -> '?'. */
static void put_frame(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		putc(c == ';' ? ',' : c < 0x20 || c == 0x7f ? '?' : c, out);
	}
}

/* One stack: thread:tid;root future[;task #3] ns (the task frame with
 * --per-task, named as every output names a task: util/task_id.h). */
static void put_line(struct folded *f, uint32_t tid, const char *name,
		     const struct ptrack_task *task, uint64_t ns)
{
	char id[TASK_ID_MAX];

	const char *tname = ptrack__thread_name(f->pt, tid);

	if (!ns)
		return;
	if (!folded_scale(ns, f->unit)) {
		f->dropped++;
		f->dropped_ns += ns;
		return;
	}
	put_frame(f->out, tname ? tname : "thread");
	fprintf(f->out, ":%" PRIu32 ";", tid);
	put_frame(f->out, name ? name : "unknown");
	if (task)
		fprintf(f->out, ";task %s", task_id_format(id, sizeof(id), task->tokio_id, task->seq,
							    0));
	fprintf(f->out, " %" PRIu64 "\n", folded_scale(ns, f->unit));
	f->lines++;
	f->total_ns += ns;
}

static int folded_out(void *ctx, const struct ptrack_out *o)
{
	struct folded *f = ctx;
	uint64_t v;
	size_t idx;
	int err;

	if (o->type == PTRACK_POLL) {
		const struct ptrack_poll *p = o->poll;
		uint64_t ns = p->end - p->begin;

		if (!p->user)
			return 0;
		if (f->per_task) {
			struct task_cells *tc = NULL;

			if (u64map__get(&f->tasks, p->task.seq, &v)) {
				tc = (struct task_cells *)(uintptr_t)v;
			} else {
				if (!(tc = calloc(1, sizeof(*tc))))
					return -ENOMEM;
				if (u64map__set(&f->tasks, p->task.seq, (uint64_t)(uintptr_t)tc)) {
					free(tc);
					return -ENOMEM;
				}
			}
			for (size_t i = 0; i < tc->n; i++)
				if (tc->c[i].tid == p->tid) {
					tc->c[i].ns += ns;
					return 0;
				}
			return cell_add(&tc->c, &tc->n, &tc->cap, p->tid, p->task.name_id, ns, &idx);
		}
		uint64_t key = (uint64_t)p->tid << 32 | ((uint64_t)p->task.name_id + 1);

		if (u64map__get(&f->cell_of, key, &v)) {
			f->cells[v - 1].ns += ns;
			return 0;
		}
		err = cell_add(&f->cells, &f->n_cells, &f->cap_cells, p->tid, p->task.name_id, ns,
			       &idx);
		if (!err && (err = u64map__set(&f->cell_of, key, idx + 1)))
			f->n_cells--;
		return err;
	}
	if (o->type == PTRACK_TASK_GONE && f->per_task &&
	    u64map__get(&f->tasks, o->task->seq, &v)) {
		struct task_cells *tc = (struct task_cells *)(uintptr_t)v;

		for (size_t i = 0; i < tc->n; i++)
			put_line(f, tc->c[i].tid, o->task->name, o->task, tc->c[i].ns);
		u64map__del(&f->tasks, o->task->seq);
		free(tc->c);
		free(tc);
		if (ferror(f->out))
			return -EIO;
	}
	return 0;
}

static struct folded *folded_new(FILE *out, struct task_model *m, const struct as_trace_meta *meta,
				 bool per_task)
{
	struct folded *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->out = out;
	f->per_task = per_task;
	f->pt = m ? ptrack__new_on(m, meta, folded_out, f) : ptrack__new(meta, folded_out, f);
	if (!f->pt) {
		free(f);
		errno = ENOMEM;
		return NULL;
	}
	return f;
}

struct folded *folded__new(FILE *out, const struct as_trace_meta *meta, bool per_task)
{
	return folded_new(out, NULL, meta, per_task);
}

struct folded *folded__new_on(FILE *out, struct task_model *m, const struct as_trace_meta *meta,
			      bool per_task)
{
	if (!m) {
		errno = EINVAL;
		return NULL;
	}
	return folded_new(out, m, meta, per_task);
}

int folded__add(struct folded *f, const struct as_event *ev)
{
	if (!f || f->finished)
		return -EINVAL;
	return ptrack__add(f->pt, ev);
}

/* Ordering of the aggregated lines: thread name, tid, then future name. */
static int cell_cmp(const void *a, const void *b, void *arg)
{
	const struct folded *f = arg;
	const struct cell *x = a, *y = b;
	const char *nx = ptrack__thread_name(f->pt, x->tid);
	const char *ny = ptrack__thread_name(f->pt, y->tid);
	int c = strcmp(nx ? nx : "thread", ny ? ny : "thread");

	if (c)
		return c;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	nx = name_of(&f->pt->names, x->name_id);
	ny = name_of(&f->pt->names, y->name_id);
	return strcmp(nx ? nx : "unknown", ny ? ny : "unknown");
}

int folded__finish(struct folded *f, uint64_t end_ns)
{
	int err;

	if (!f || f->finished)
		return -EINVAL;
	f->finished = true;
	if ((err = ptrack__finish(f->pt, end_ns)))
		return err;
	if (f->n_cells)
		qsort_r(f->cells, f->n_cells, sizeof(*f->cells), cell_cmp, f);
	for (size_t i = 0; i < f->n_cells; i++)
		put_line(f, f->cells[i].tid, name_of(&f->pt->names, f->cells[i].name_id), NULL,
			 f->cells[i].ns);
	if (fflush(f->out) || ferror(f->out))
		return -EIO;
	return 0;
}

void folded__set_unit(struct folded *f, enum folded_unit u)
{
	if (f)
		f->unit = u;
}

uint64_t folded__dropped(const struct folded *f, uint64_t *ns)
{
	if (ns)
		*ns = f ? f->dropped_ns : 0;
	return f ? f->dropped : 0;
}

uint64_t folded__lines(const struct folded *f)
{
	return f ? f->lines : 0;
}

uint64_t folded__total_ns(const struct folded *f)
{
	return f ? f->total_ns : 0;
}

void folded__free(struct folded *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->tasks.cap; i++)
		if (f->tasks.keys[i] != 0 && f->tasks.keys[i] != UINT64_MAX) {
			struct task_cells *tc = (struct task_cells *)(uintptr_t)f->tasks.vals[i];

			free(tc->c);
			free(tc);
		}
	u64map__clear(&f->tasks);
	u64map__clear(&f->cell_of);
	free(f->cells);
	ptrack__free(f->pt);
	free(f);
}

/* ------------------------------------------------ future-level flame graphs */

int folded_futures_write_unit(FILE *out, const struct futures *fu, enum futures_graph g,
			      enum folded_unit u, uint64_t *lines, uint64_t *total_ns,
			      uint64_t *dropped)
{
	size_t n;
	const struct futures_stack *st = futures__stacks(fu, g, &n);
	uint64_t nl = 0, total = 0, drop = 0;

	if (!out || !fu || !futures__summary(fu))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!st[i].ns)
			continue;
		if (!folded_scale(st[i].ns, u)) {
			drop += st[i].ns;
			continue;
		}
		for (uint32_t j = 0; j < st[i].n; j++) {
			if (j)
				putc(';', out);
			put_frame(out, st[i].frames[j]); /* already clean: belt and braces */
		}
		fprintf(out, " %" PRIu64 "\n", folded_scale(st[i].ns, u));
		nl++;
		total += st[i].ns;
	}
	if (lines)
		*lines = nl;
	if (total_ns)
		*total_ns = total;
	if (dropped)
		*dropped = drop;
	if (fflush(out) || ferror(out))
		return -EIO;
	return 0;
}

int folded_futures_write(FILE *out, const struct futures *fu, enum futures_graph g,
			 uint64_t *lines, uint64_t *total_ns)
{
	return folded_futures_write_unit(out, fu, g, FOLDED_NS, lines, total_ns, NULL);
}

/* ---------------------------------------------------------- marks, units */

const char *folded_unit_name(enum folded_unit u)
{
	return u == FOLDED_MS ? "ms" : u == FOLDED_US ? "us" : "ns";
}

int folded_unit_parse(const char *s, enum folded_unit *u)
{
	if (!s)
		return -EINVAL;
	if (!strcmp(s, "ns"))
		*u = FOLDED_NS;
	else if (!strcmp(s, "us"))
		*u = FOLDED_US;
	else if (!strcmp(s, "ms"))
		*u = FOLDED_MS;
	else
		return -EINVAL;
	return 0;
}

uint64_t folded_scale(uint64_t ns, enum folded_unit u)
{
	uint64_t d = u == FOLDED_MS ? 1000000 : u == FOLDED_US ? 1000 : 1;

	return ns / d + (ns % d >= (d + 1) / 2 && d > 1);
}

void folded_put(FILE *out, const char *stack, int32_t own, int32_t kernel, bool annotate,
		uint64_t weight)
{
	int32_t i = 0;

	for (const char *s = stack; ; s++) {
		if (*s == ';' || !*s) {
			if (annotate && *stack && (i == own || (kernel >= 0 && i >= kernel)))
				fputs(i == own ? "_[j]" : "_[k]", out);
			if (!*s)
				break;
			i++;
		}
		putc(*s, out);
	}
	fprintf(out, " %" PRIu64 "\n", weight);
}

/* ------------------------------------------------------------------ sink */

static int sink_add(void *impl, const struct as_event *ev, const struct as_stack *stack)
{
	(void)stack;
	return folded__add(impl, ev);
}

static int sink_finish(void *impl, const struct as_trace_end *end)
{
	return folded__finish(impl, end ? end->end_ns : 0);
}

static const struct as_sink_ops sink_ops = {
	.name = "folded", .add = sink_add, .finish = sink_finish, .free = NULL,
};

struct as_sink folded__sink(struct folded *x)
{
	return (struct as_sink){ .ops = &sink_ops, .impl = x };
}
