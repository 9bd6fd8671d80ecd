/* CPU samples analysis: attributes each sample to a task, the scheduler,
 * idle workers or other threads as the task model (task_model.h) has them
 * then: the task on top of the thread's poll stack, the thread parked or a
 * worker, the task a worker (the runtime's loop); counts per row and per
 * folded stack; sorts on demand. Task rows are the model's tasks, the row
 * index kept in the task (per-task observer data). Depends on util/ and the
 * task model only. */
#include "analysis/cpu_samples.h"
#include "analysis/stack_fold.h"
#include "analysis/task_model.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strtab.h"
#include "util/u64map.h"

/* A row being counted: rows 0..2 are scheduler, idle and outside-runtime. */
struct entry {
	struct cpu_row row;
	bool runtime;         /* the model's task is a worker (the runtime's loop) */
};

/* Samples per (entry, folded stack). */
struct acc {
	uint32_t entry, stack;   /* stack: index into sf + 1 */
	uint64_t count;
};

/* A stack as its rows' lines show it: folded to the task's code (task rows)
 * or from the runtime's loop (the scheduler, idle workers and threads
 * outside the runtime, whose frames are the runtime's or the thread's:
 * STACK_FOLD_THREAD). */
struct sframes {
	uint32_t str;            /* string index of its frames */
	int32_t own, kernel;     /* in those frames (stack_fold.h), -1 none */
	uint32_t skip;           /* innermost kernel frames left out */
	bool fold;
	unsigned flags;          /* how it folded (stack_fold.h) */
	struct as_stack st;      /* a copy (the source moves its stack records;
	                            their frames stay until it is freed); id 0 none */
};

struct cpu_samples {
	const struct as_trace_meta *meta;
	struct task_model *model;    /* tasks, threads (polls, parks, workers) */
	bool own_model;
	size_t toff;                 /* per model task: uint32_t, entry index + 1 */
	struct strtab strs;
	struct entry *entries;
	size_t n_entries, cap_entries;
	struct u64map unknown;       /* address -> entry index + 1: tasks the model
	                                never saw (their polls' begins lost) */
	struct u64map thread_rows;   /* profile: tid + 1 -> entry index + 1 of its
	                                samples outside any task */
	struct u64map stack_frames;  /* (stack id + 1) << 1 | fold -> index into sf + 1 */
	struct sframes *sf;
	size_t n_sf, cap_sf;
	unsigned fold_flags;         /* stack_fold.h: STACK_FOLD_ALL */
	struct stack_crates crates;  /* library crates learnt from the stacks */
	struct acc *accs;
	size_t n_accs, cap_accs;
	struct u64map acc_idx;       /* entry << 32 | stack, + 1 -> index into accs + 1 */
	struct cpu_row *rows;        /* handed out */
	size_t n_rows;
	struct cpu_folded *lines;    /* handed out */
	size_t n_lines;
	char *line_buf;              /* backing store of lines' strings */
	bool sorted;
	struct cpu_summary sum;
};

enum { E_SCHED, E_IDLE, E_OTHER, E_FIRST_TASK };

#define GROW(arr, n, cap, init) ({ int r_ = 0; \
	if ((n) == (cap)) { size_t c_ = (cap) ? (cap) * 2 : (init); \
		void *p_ = realloc((arr), c_ * sizeof(*(arr))); \
		if (!p_) r_ = -ENOMEM; else { (arr) = p_; (cap) = c_; } } r_; })

static const char *intern(struct cpu_samples *c, const char *s, uint32_t *idx_out)
{
	uint32_t idx;
	size_t n = strlen(s);
	if (strtab__intern(&c->strs, s, n, &idx) >= 0) {
		if (idx_out)
			*idx_out = idx;
		return strtab__get(&c->strs, idx);
	}
	return NULL;
}

/* The model's task t turned out to be a worker: so is its row. */
static void on_worker(void *ctx, struct tm_task *t)
{
	struct cpu_samples *c = ctx;
	uint32_t *slot = tm_task__data(t, c->toff);

	if (*slot)
		c->entries[*slot - 1].runtime = true;
}

static const struct tm_ops observer_ops = { .worker = on_worker };

struct cpu_samples *cpu_samples__new_on(struct task_model *m, const struct as_trace_meta *meta)
{
	static const char *const names[] = { "scheduler", "idle", "outside-runtime" };
	struct cpu_samples *c;
	int err;

	if (!m) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->meta = meta;
	c->model = m;
	c->entries = calloc(64, sizeof(*c->entries));
	if (!c->entries) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	if ((err = task_model__observe(m, &observer_ops, c, sizeof(uint32_t), &c->toff, 0, NULL))) {
		free(c->entries);
		free(c);
		errno = -err;
		return NULL;
	}
	c->cap_entries = 64;
	for (int i = 0; i < E_FIRST_TASK; i++)
		c->entries[i].row = (struct cpu_row){ .kind = (enum cpu_row_kind)(i + 1), .name = names[i] };
	if (as_meta_profile(meta)) {
		/* a profile trace (no polls): task 0 is the thread's CONTEXT
		 * naming no task (block_on itself, an idle blocking thread, a
		 * thread outside the runtime): per thread (thread_entry()) */
		c->sum.profile = true;
		c->entries[E_OTHER].row.name = "no-task";
	}
	c->n_entries = E_FIRST_TASK;
	return c;
}

struct cpu_samples *cpu_samples__new(const struct as_trace_meta *meta)
{
	struct task_model *m = task_model__new(meta);
	struct cpu_samples *c = m ? cpu_samples__new_on(m, meta) : NULL;

	if (!c) {
		task_model__free(m);
		errno = ENOMEM;
		return NULL;
	}
	c->own_model = true;
	return c;
}

/* The entry of model task t (NULL: a task the model never saw, at addr),
 * made on its first sample. */
static int task_entry(struct cpu_samples *c, struct tm_task *t, uint64_t addr, uint32_t *idx)
{
	uint32_t *slot = t ? tm_task__data(t, c->toff) : NULL;
	uint64_t v;
	int err;

	if (slot && *slot) {
		*idx = *slot - 1;
		if (!c->entries[*idx].row.tokio_id)
			c->entries[*idx].row.tokio_id = t->tokio_id;
		return 0;
	}
	if (u64map__get(&c->unknown, t ? t->header : addr, &v)) {
		*idx = (uint32_t)(v - 1);
		if (t) {
			/* an entry kept by address before the model knew the task
			 * (its poll began before the recording): now the task's */
			struct cpu_row *r = &c->entries[*idx].row;

			u64map__del(&c->unknown, t->header);
			r->seq = t->seq;
			if (!r->tokio_id)
				r->tokio_id = t->tokio_id;
			r->name = t->name && *t->name ? t->name : "?";
			c->entries[*idx].runtime = t->worker;
			*slot = *idx + 1;
		}
		return 0;
	}
	if ((err = GROW(c->entries, c->n_entries, c->cap_entries, 64)))
		return err;
	c->entries[c->n_entries] = (struct entry){ .row = { .kind = CPU_ROW_TASK, .task = addr, .name = "?" } };
	if (t) {
		c->entries[c->n_entries] = (struct entry){
			.row = { .kind = CPU_ROW_TASK, .task = t->header, .seq = t->seq,
				 .tokio_id = t->tokio_id, .name = t->name && *t->name ? t->name : "?" },
			.runtime = t->worker,
		};
		*slot = (uint32_t)c->n_entries + 1;
	} else if ((err = u64map__set(&c->unknown, addr, c->n_entries + 1))) {
		return err;
	}
	*idx = (uint32_t)c->n_entries++;
	return 0;
}

static bool prefixed(const char *s, const char *const *pre)
{
	for (; *pre; pre++)
		if (!strncmp(s, *pre, strlen(*pre)))
			return true;
	return false;
}

/* Frames of the sampling itself, innermost in every kernel stack: the BPF
 * program, perf's overflow handling and the timer interrupt that ran it
 * (kallsyms names BPF programs after the last text symbol before them,
 * often _einittext). A sample taken in user mode has only these. */
static bool sampling_frame(const char *s)
{
	static const char *const pre[] = {
		"__traceiter_", "__bpf_", "bpf_", "_einittext", "perf_", "__perf_",
		"hrtimer_", "__hrtimer_", "__sysvec_apic_timer_interrupt",
		"sysvec_apic_timer_interrupt", "asm_sysvec_apic_timer_interrupt",
		"irq_exit", "__irq_exit", NULL,
	};
	return !*s || prefixed(s, pre);
}

/* The frames of a stack (may be "") as a row of its kind shows them
 * (fold: a task's or a thread's, else from the runtime's loop): index into
 * sf + 1 in *out. */
static int stack_frames(struct cpu_samples *c, const struct as_stack *st, bool fold, uint32_t *out)
{
	uint64_t v, key;
	uint32_t id = st ? st->id : 0;
	int err;

	fold = fold && !(c->fold_flags & STACK_FOLD_ALL);
	key = ((uint64_t)id + 1) << 1 | fold;
	unsigned flags = (c->fold_flags & STACK_FOLD_ALL) ? STACK_FOLD_ALL
			 : fold ? 0 : STACK_FOLD_THREAD;
	if (u64map__get(&c->stack_frames, key, &v)) {
		*out = (uint32_t)v;
		return 0;
	}
	uint32_t nk = st ? st->n_kernel : 0;
	/* the sampling path, innermost: up to the last such frame */
	uint32_t skip = 0;
	for (uint32_t i = 0; i < nk; i++)
		if (sampling_frame(st->frames[i].sym))
			skip = i + 1;
	struct stack_line line;
	if ((err = stack_crates__learn(&c->crates, st)) ||
	    (err = stack_fold_line(st, skip, flags, &c->crates, &line)))
		return err;
	uint32_t idx;
	const char *f = intern(c, line.s, &idx);
	free(line.s);
	if (!f || (err = GROW(c->sf, c->n_sf, c->cap_sf, 64)))
		return -ENOMEM;
	c->sf[c->n_sf] = (struct sframes){ .str = idx, .own = line.own, .kernel = line.kernel,
					   .skip = skip, .fold = fold, .flags = flags };
	if (st)
		c->sf[c->n_sf].st = *st;
	*out = (uint32_t)++c->n_sf;
	return u64map__set(&c->stack_frames, key, *out);
}

/* A profile trace's samples outside any task, per thread ("thread 12
 * (main)", a row of kind CPU_ROW_OTHER): where the thread's CONTEXT named
 * no task (block_on itself, a thread outside the runtime; every thread of a
 * runtime without the thread-local), the thread is what is known. */
static int thread_entry(struct cpu_samples *c, uint32_t tid, const struct tm_thread *th,
			uint32_t *idx)
{
	char name[64];
	uint64_t v;
	int err;

	if (u64map__get(&c->thread_rows, (uint64_t)tid + 1, &v)) {
		*idx = (uint32_t)(v - 1);
		return 0;
	}
	if (th && th->name && *th->name)
		snprintf(name, sizeof(name), "thread %u (%s)", tid, th->name);
	else
		snprintf(name, sizeof(name), "thread %u", tid);
	const char *n = intern(c, name, NULL);
	if (!n)
		return -ENOMEM;
	if ((err = GROW(c->entries, c->n_entries, c->cap_entries, 64)))
		return err;
	c->entries[c->n_entries] = (struct entry){ .row = { .kind = CPU_ROW_OTHER, .name = n } };
	if ((err = u64map__set(&c->thread_rows, (uint64_t)tid + 1, c->n_entries + 1)))
		return err;
	*idx = (uint32_t)c->n_entries++;
	return 0;
}

static int add_sample(struct cpu_samples *c, const struct as_event *ev, const struct as_stack *st)
{
	const struct tm_thread *th = task_model__thread(c->model, ev->tid);
	struct tm_task *t = NULL;
	uint32_t e = E_OTHER, frames;
	uint64_t v;
	int err = 0;

	if (th && th->parked)
		e = E_IDLE;
	else if ((t = task_model__polled(c->model, ev->tid, ev->task)) ||
		 (ev->task && ev->task != UINT64_MAX))
		err = task_entry(c, t, ev->task, &e);
	else
		e = th && th->runs_tasks ? E_SCHED : E_OTHER;
	if (!err && e == E_OTHER && c->sum.profile)
		err = thread_entry(c, ev->tid, th, &e);
	if (err)
		return err;   /* out of memory: e is not an entry then */
	/* a task's stack or a thread's starts at its code; the scheduler's,
	 * idle workers' and other threads' are the runtime's or the thread's */
	if ((err = stack_frames(c, st, e >= E_FIRST_TASK, &frames)))
		return err;
	c->entries[e].row.samples++;
	c->sum.samples++;
	uint64_t key = ((uint64_t)e << 32 | frames) + 1;
	if (!u64map__get(&c->acc_idx, key, &v)) {
		if ((err = GROW(c->accs, c->n_accs, c->cap_accs, 64)))
			return err;
		c->accs[c->n_accs] = (struct acc){ .entry = e, .stack = frames };
		if ((err = u64map__set(&c->acc_idx, key, c->n_accs + 1)))
			return err;
		v = ++c->n_accs;
	}
	c->accs[v - 1].count++;
	return 0;
}

int cpu_samples__add(struct cpu_samples *c, const struct as_event *ev, const struct as_stack *stack)
{
	int err;

	if (!c || !ev)
		return -EINVAL;
	c->sorted = false;
	/* its own model sees the event first, as a shared one would */
	if (c->own_model && (err = task_model__add(c->model, ev)))
		return err;
	return ev->type == AS_EV_SAMPLE ? add_sample(c, ev, stack) : 0;
}

static int by_samples(const void *x, const void *y)
{
	const struct cpu_row *a = x, *b = y;
	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return a->task < b->task ? -1 : a->task > b->task;
}

static int by_count(const void *x, const void *y)
{
	const struct cpu_folded *a = x, *b = y;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return strcmp(a->stack, b->stack);
}

static int by_stack(const void *x, const void *y)
{
	return strcmp(((const struct cpu_folded *)x)->stack, ((const struct cpu_folded *)y)->stack);
}

static int sort_all(struct cpu_samples *c)
{
	free(c->rows);
	free(c->lines);
	free(c->line_buf);
	c->rows = NULL;
	c->lines = NULL;
	c->line_buf = NULL;
	c->n_rows = c->n_lines = 0;
	c->sum.in_tasks = c->sum.tasks = 0;

	c->rows = calloc(c->n_entries, sizeof(*c->rows));
	if (!c->rows)
		return -ENOMEM;
	/* a profile trace names a task again when its name was found after
	 * its first record (AS_SPAWN_TASK): the model has it now */
	for (size_t i = E_FIRST_TASK; c->sum.profile && i < c->n_entries; i++) {
		struct entry *e = &c->entries[i];
		struct tm_task *t = task_model__task(c->model, e->row.task);
		if (!t)
			continue;
		if (t->name && *t->name)
			e->row.name = t->name;
		if (!e->row.tokio_id)
			e->row.tokio_id = t->tokio_id;
		e->runtime |= t->worker;
	}
	uint64_t sched = c->entries[E_SCHED].row.samples;
	for (size_t i = E_FIRST_TASK; i < c->n_entries; i++)
		if (c->entries[i].runtime)
			sched += c->entries[i].row.samples;
	for (size_t i = 0; i < c->n_entries; i++) {
		struct cpu_row r = c->entries[i].row;
		if (i == E_SCHED)
			r.samples = sched;
		else if (c->entries[i].runtime)
			continue;
		if (!r.samples)
			continue;
		if (r.kind == CPU_ROW_TASK) {
			c->sum.in_tasks += r.samples;
			c->sum.tasks++;
		}
		c->rows[c->n_rows++] = r;
	}
	qsort(c->rows, c->n_rows, sizeof(*c->rows), by_samples);

	/* a runtime task's samples are the scheduler's: its stacks as the
	 * scheduler's are (it may be known a worker after its first samples) */
	for (size_t i = 0; i < c->n_accs; i++) {
		/* by value: stack_frames() may move c->sf */
		struct sframes sf = c->sf[c->accs[i].stack - 1];
		uint32_t whole;
		int err;

		if (!c->entries[c->accs[i].entry].runtime || !sf.fold)
			continue;
		if ((err = stack_frames(c, sf.st.id ? &sf.st : NULL, false, &whole)))
			return err;
		c->accs[i].stack = whole;
	}
	/* lines: "label;frames", equal strings merged */
	size_t bytes = 1;
	for (size_t i = 0; i < c->n_accs; i++) {
		const struct entry *e = &c->entries[c->accs[i].entry];
		const char *name = e->runtime ? "scheduler" : e->row.name;
		bytes += strlen(name) + strlen(strtab__get(&c->strs, c->sf[c->accs[i].stack - 1].str)) + 2;
	}
	c->line_buf = malloc(bytes);
	c->lines = calloc(c->n_accs ? c->n_accs : 1, sizeof(*c->lines));
	if (!c->line_buf || !c->lines)
		return -ENOMEM;
	char *p = c->line_buf;
	for (size_t i = 0; i < c->n_accs; i++) {
		const struct entry *e = &c->entries[c->accs[i].entry];
		const char *name = e->runtime ? "scheduler" : e->row.name;
		const struct sframes *sf = &c->sf[c->accs[i].stack - 1];
		const char *fr = strtab__get(&c->strs, sf->str);
		/* the label is frame 0: the stack's own frames move by one */
		c->lines[i] = (struct cpu_folded){ .stack = p, .count = c->accs[i].count,
			.own = sf->own >= 0 ? sf->own + 1 : -1,
			.kernel = sf->kernel >= 0 ? sf->kernel + 1 : -1 };
		p += sprintf(p, "%s%s%s", name, *fr ? ";" : "", fr) + 1;
	}
	size_t n = 0;
	if (c->n_accs) {
		qsort(c->lines, c->n_accs, sizeof(*c->lines), by_stack);
		for (size_t i = 0; i < c->n_accs; i++) {
			if (n && !strcmp(c->lines[n - 1].stack, c->lines[i].stack))
				c->lines[n - 1].count += c->lines[i].count;
			else
				c->lines[n++] = c->lines[i];
		}
		qsort(c->lines, n, sizeof(*c->lines), by_count);
	}
	c->n_lines = n;
	c->sorted = true;
	return 0;
}

const struct cpu_row *cpu_samples__rows(struct cpu_samples *c, size_t *n)
{
	*n = 0;
	if (!c || (!c->sorted && sort_all(c)))
		return NULL;
	*n = c->n_rows;
	return c->rows;
}

const struct cpu_folded *cpu_samples__folded(struct cpu_samples *c, size_t *n)
{
	*n = 0;
	if (!c || (!c->sorted && sort_all(c)))
		return NULL;
	*n = c->n_lines;
	return c->lines;
}

const struct cpu_summary *cpu_samples__summary(struct cpu_samples *c)
{
	if (!c || (!c->sorted && sort_all(c)))
		return c ? &c->sum : NULL;
	return &c->sum;
}

int cpu_samples__set_fold(struct cpu_samples *c, unsigned flags)
{
	if (!c || c->n_sf)
		return -EINVAL;
	c->fold_flags = flags;
	return 0;
}

int cpu_samples__each(struct cpu_samples *c, cpu_samples_each_fn fn, void *ctx)
{
	int err;

	if (!c || !fn)
		return -EINVAL;
	if (!c->sorted && (err = sort_all(c)))
		return err;
	for (size_t i = 0; i < c->n_accs; i++) {
		const struct entry *e = &c->entries[c->accs[i].entry];
		const struct sframes *sf = &c->sf[c->accs[i].stack - 1];
		struct cpu_stack_weight w = {
			.row = e->runtime ? &c->entries[E_SCHED].row : &e->row,
			.stack = sf->st.id ? &sf->st : NULL, .skip_kernel = sf->skip,
			.flags = sf->flags, .count = c->accs[i].count,
		};
		if ((err = fn(ctx, &w)))
			return err;
	}
	return 0;
}

void cpu_samples__free(struct cpu_samples *c)
{
	if (!c)
		return;
	strtab__clear(&c->strs);
	free(c->entries);
	u64map__clear(&c->unknown);
	u64map__clear(&c->thread_rows);
	if (c->own_model)
		task_model__free(c->model);
	u64map__clear(&c->stack_frames);
	free(c->sf);
	stack_crates__clear(&c->crates);
	free(c->accs);
	u64map__clear(&c->acc_idx);
	free(c->rows);
	free(c->lines);
	free(c->line_buf);
	free(c);
}

/* ------------------------------------------------------------------ sink */

static int sink_add(void *impl, const struct as_event *ev, const struct as_stack *stack)
{
	return cpu_samples__add(impl, ev, stack);
}

static const struct as_sink_ops sink_ops = {
	.name = "cpu samples", .add = sink_add, .finish = NULL, .free = NULL,
};

struct as_sink cpu_samples__sink(struct cpu_samples *x)
{
	return (struct as_sink){ .ops = &sink_ops, .impl = x };
}
