/* Blocking analysis: accumulates off-CPU intervals per task, per (kernel
 * function, user frame) cause and per stack; sorts on demand. Its task rows
 * are the task model's tasks (task_model.h): the task polled on the thread
 * at a switch, its row index kept in the task (per-task observer data);
 * the future frames open then and whether the thread is parked come from
 * the model's threads. Depends on util/ and the task model only. */
#include "analysis/blocking.h"
#include "analysis/stack_fold.h"
#include "analysis/task_model.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strtab.h"
#include "util/u64map.h"

/* What a stack id means for the analysis, computed once per stack. */
struct sinfo {
	uint32_t cause;       /* index into causes_def */
	const char *frames;   /* "user;...;kernel" part of a folded line (may be "") */
	uint32_t n_frames;    /* frames in it */
	int32_t own, kernel;  /* in frames (stack_fold.h), -1 none */
	uint32_t skip;        /* tracing frames left out, innermost */
	struct as_stack st;   /* a copy (the source moves its stack records; their
	                         frames stay until it is freed); id 0 none */
};

/* Off-CPU time per (task row, stack, future chain): for writers that want
 * the frames themselves (pprof). */
struct pacc {
	uint32_t task, si;
	const char *chain;    /* interned, NULL none */
	uint64_t ns, count;
	uint32_t next;        /* another with the same (task, si): index + 1, 0 none */
};

struct cause_def {
	const char *kernel, *user, *file, *futures, *call;
	uint32_t line;
	bool cut;
	uint8_t where;        /* TM_NAME_POOL / TM_NAME_HANDOFF: a frame said so */
};

/* Future frame levels named in a cause (the model keeps more). */
#define FUT_DEPTH_MAX 48

struct acc {
	uint32_t task;        /* index into tasks */
	uint32_t what;        /* cause or folded line index */
	uint64_t ns, count, preempted_ns;
	uint64_t runnable_ns;
};

/* Per thread (model thread data): its last counted off-CPU interval and
 * its last run-queue wait, to pair the two (either may come first in the
 * stream: two programs on the same switch). */
struct th_pair {
	uint64_t off_start, off_end;  /* 0: none pending */
	uint32_t off_acc;             /* index into causes + 1 */
	uint64_t rq_start, rq_end;    /* 0: none pending */
};

/* The two programs read the clock within microseconds at the same switch. */
#define PAIR_SLACK_NS 200000

struct blocking {
	const struct as_trace_meta *meta;
	struct task_model *model;     /* tasks, threads: parked, future frames */
	bool own_model;
	size_t toff;                  /* per model task: uint32_t, index + 1 of its row */
	size_t thoff;                 /* per model thread: struct th_pair */
	struct strtab strs;           /* interned names and folded strings */
	struct blocking_task *tasks;
	size_t n_tasks, cap_tasks;
	struct u64map unknown;        /* address -> index + 1 of its row: tasks the model
	                                 never saw (their polls' begins lost) */
	struct u64map stacks;         /* stack id -> index into sinfo */
	struct sinfo *sinfo;
	size_t n_sinfo, cap_sinfo;
	struct cause_def *causes_def;
	size_t n_causes_def, cap_causes_def;
	struct u64map cause_acc;      /* task << 32 | cause -> index into causes + 1 */
	struct acc *causes;
	size_t n_causes, cap_causes;
	struct u64map line_acc;       /* folded line string index -> index into lines + 1 */
	struct blocking_folded *lines;
	size_t n_lines, cap_lines;
	struct u64map pacc_of;        /* (task << 32 | si) + 1 -> index into paccs + 1 */
	struct pacc *paccs;
	size_t n_paccs, cap_paccs;
	unsigned fold_flags;          /* stack_fold.h: STACK_FOLD_ALL */
	struct stack_crates crates;   /* library crates learnt from the stacks */
	struct blocking_cause *out_causes; /* per-task arrays handed out */
	struct blocking_task *view;   /* tasks handed out, sorted */
	size_t n_view;
	bool sorted;
	struct blocking_summary sum;
	bool profile;                 /* a profile trace (as_meta_profile()) */
};

#define GROW(arr, n, cap, init) ({ int r_ = 0; \
	if ((n) == (cap)) { size_t c_ = (cap) ? (cap) * 2 : (init); \
		void *p_ = realloc((arr), c_ * sizeof(*(arr))); \
		if (!p_) r_ = -ENOMEM; else { (arr) = p_; (cap) = c_; } } r_; })

static const char *intern(struct blocking *b, const char *s)
{
	uint32_t idx;
	size_t n = strlen(s);
	return strtab__intern(&b->strs, s, n, &idx) < 0 ? NULL : strtab__get(&b->strs, idx);
}

struct blocking *blocking__new_on(struct task_model *m, const struct as_trace_meta *meta)
{
	struct blocking *b;

	if (!m) {
		errno = EINVAL;
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->meta = meta;
	b->model = m;
	b->profile = b->sum.profile = as_meta_profile(meta);
	/* no callbacks: the row of a task is looked up at its switches */
	static const struct tm_ops none = { 0 };
	int err = task_model__observe(m, &none, b, sizeof(uint32_t), &b->toff,
				      sizeof(struct th_pair), &b->thoff);

	if (err) {
		free(b);
		errno = -err;
		return NULL;
	}
	return b;
}

struct blocking *blocking__new(const struct as_trace_meta *meta)
{
	struct task_model *m = task_model__new(meta);
	struct blocking *b = m ? blocking__new_on(m, meta) : NULL;

	if (!b) {
		task_model__free(m);
		errno = ENOMEM;
		return NULL;
	}
	b->own_model = true;
	return b;
}

static bool prefixed(const char *s, const char *const *pre)
{
	for (; *pre; pre++)
		if (!strncmp(s, *pre, strlen(*pre)))
			return true;
	return false;
}

/* Tracing frames (the BPF program that took the stack, which kallsyms
 * names after the last text symbol before it, often _einittext). */
static bool tracing_frame(const char *s)
{
	static const char *const pre[] = { "__traceiter_", "__bpf_", "bpf_", "_einittext", NULL };
	return !*s || prefixed(s, pre);
}

/* Scheduler and tracing frames sit above the function that blocked. */
static bool sched_frame(const char *s)
{
	static const char *const pre[] = {
		"__schedule", "schedule", "preempt_schedule", "__cond_resched", "_cond_resched",
		"finish_task_switch", "__traceiter_", "__bpf_", "bpf_", "io_schedule",
		"__switch_to", "context_switch", NULL,
	};
	return tracing_frame(s) || prefixed(s, pre);
}

/* The index of cause c (strings interned) among the definitions, added when
 * new. Causes are few: a linear search will do. */
static int cause_index(struct blocking *b, const struct cause_def *c, uint32_t *out)
{
	int err;

	for (size_t i = 0; i < b->n_causes_def; i++) {
		const struct cause_def *d = &b->causes_def[i];
		if (d->kernel == c->kernel && d->user == c->user && d->file == c->file &&
		    d->line == c->line && d->futures == c->futures && d->call == c->call &&
		    d->cut == c->cut && d->where == c->where) {
			*out = (uint32_t)i;
			return 0;
		}
	}
	if ((err = GROW(b->causes_def, b->n_causes_def, b->cap_causes_def, 16)))
		return err;
	b->causes_def[b->n_causes_def] = *c;
	*out = (uint32_t)b->n_causes_def++;
	return 0;
}

/* The future frames open on thread th (the model's), "outer;...;inner"
 * interned, or NULL. */
static int chain_string(struct blocking *b, const struct tm_thread *th, const char **out)
{
	char buf[4096];
	size_t len = 0;

	*out = NULL;
	if (!th || !th->fut_seen || !b->meta)
		return 0;
	for (uint32_t d = 0; d < th->fut_depth && d < FUT_DEPTH_MAX; d++) {
		const char *n = "?";
		if (th->fut[d] < b->meta->n_probes &&
		    b->meta->probes[th->fut[d]].role == AS_ROLE_FUTURE) {
			const struct as_probe *p = &b->meta->probes[th->fut[d]];
			n = p->future && *p->future ? p->future : p->symbol;
		}
		int k = snprintf(buf + len, sizeof(buf) - len, "%s%s", d ? ";" : "", n);
		if (k < 0 || (size_t)k >= sizeof(buf) - len)
			break;
		len += (size_t)k;
	}
	if (!len)
		return 0;
	return (*out = intern(b, buf)) ? 0 : -ENOMEM;
}

static int stack_info(struct blocking *b, const struct as_stack *st, uint32_t *out)
{
	uint64_t v;
	uint32_t id = st ? st->id : 0;
	int err;

	if (u64map__get(&b->stacks, (uint64_t)id + 1, &v)) {
		*out = (uint32_t)v;
		return 0;
	}
	const char *kernel = "?", *user = "?", *file = NULL, *call = NULL;
	uint32_t nk = st ? st->n_kernel : 0, nu = st ? st->n_user : 0, line = 0;
	for (uint32_t i = 0; i < nk; i++)
		if (!sched_frame(st->frames[i].sym)) {
			kernel = st->frames[i].sym;
			break;
		}
	if ((err = stack_crates__learn(&b->crates, st)))
		return err;
	for (uint32_t i = nk; i < nk + nu; i++)
		if (stack_frame_kind(st->frames[i].sym, &b->crates) == FRAME_OWN) {
			user = st->frames[i].sym;
			file = st->frames[i].file;
			line = file ? st->frames[i].line : 0;
			/* what it called: the frame inside it (innermost first) */
			if (i > nk && st->frames[i - 1].sym && *st->frames[i - 1].sym)
				call = st->frames[i - 1].sym;
			break;
		}
	/* no frame of the program's own: the walk may have stopped short of it
	 * (frame pointers end in code built without them, libc's, unless
	 * --dwarf), when it did not reach the thread's start; the innermost
	 * user frame is then the call that blocked */
	bool cut = false;
	if (!strcmp(user, "?") && nu) {
		const char *out = st->frames[nk + nu - 1].sym;

		cut = !stack_frame_start(out);
		if (!call && st->frames[nk].sym && *st->frames[nk].sym)
			call = st->frames[nk].sym;
	}
	/* a frame only a blocking-pool task's poll has, or only
	 * block_in_place (the runtime profile's): blocking by design */
	uint8_t where = 0;
	for (uint32_t i = nk; i < nk + nu && !where; i++)
		where = (uint8_t)task_model__frame_kind(b->model, st->frames[i].sym);
	/* user frames outermost first, then kernel frames outermost first,
	 * without the tracing frames innermost */
	uint32_t skip = 0;
	while (skip < nk && tracing_frame(st->frames[skip].sym))
		skip++;
	struct stack_line sl;
	if ((err = stack_fold_line(st, skip, b->fold_flags, &b->crates, &sl)))
		return err;
	const char *f = intern(b, sl.s);
	free(sl.s);
	if (!f || (kernel = intern(b, kernel)) == NULL || (user = intern(b, user)) == NULL ||
	    (file && (file = intern(b, file)) == NULL) || (call && (call = intern(b, call)) == NULL))
		return -ENOMEM;
	uint32_t cause;
	if ((err = cause_index(b, &(struct cause_def){ kernel, user, file, NULL, call, line, cut,
								 where },
			       &cause)))
		return err;
	if ((err = GROW(b->sinfo, b->n_sinfo, b->cap_sinfo, 16)))
		return err;
	b->sinfo[b->n_sinfo] = (struct sinfo){ .cause = cause, .frames = f, .n_frames = sl.n,
						.own = sl.own, .kernel = sl.kernel,
						.skip = skip };
	if (st)
		b->sinfo[b->n_sinfo].st = *st;
	if ((err = u64map__set(&b->stacks, (uint64_t)id + 1, b->n_sinfo)))
		return err;
	*out = (uint32_t)b->n_sinfo++;
	return 0;
}

/* The row of model task t (NULL: a task the model never saw, at addr),
 * made on its first switch. */
static int task_row(struct blocking *b, struct tm_task *t, uint64_t addr, uint32_t *idx)
{
	uint32_t *slot = t ? tm_task__data(t, b->toff) : NULL;
	uint64_t v;
	int err;

	if (slot && *slot) {
		*idx = *slot - 1;
		if (!b->tasks[*idx].tokio_id)
			b->tasks[*idx].tokio_id = t->tokio_id;
		return 0;
	}
	if (u64map__get(&b->unknown, t ? t->header : addr, &v)) {
		*idx = (uint32_t)(v - 1);
		if (t) {
			/* a row kept by address before the model knew the task
			 * (its poll began before the recording): now the task's */
			struct blocking_task *r = &b->tasks[*idx];

			u64map__del(&b->unknown, t->header);
			r->seq = t->seq;
			if (!r->tokio_id)
				r->tokio_id = t->tokio_id;
			r->name = t->name && *t->name ? t->name : "?";
			*slot = *idx + 1;
		}
		return 0;
	}
	if ((err = GROW(b->tasks, b->n_tasks, b->cap_tasks, 64)))
		return err;
	b->tasks[b->n_tasks] = (struct blocking_task){ .task = addr, .name = "?" };
	if (t) {
		b->tasks[b->n_tasks] = (struct blocking_task){
			.task = t->header, .seq = t->seq, .tokio_id = t->tokio_id,
			.name = t->name && *t->name ? t->name : "?",
		};
		*slot = (uint32_t)b->n_tasks + 1;
	} else if ((err = u64map__set(&b->unknown, addr, b->n_tasks + 1))) {
		return err;
	}
	*idx = (uint32_t)b->n_tasks++;
	return 0;
}

/* An off-CPU interval [off_start, off_end] and a run-queue wait
 * [rq_start, rq_end] of one thread that end at the same switch-in: the
 * interval's part from the wakeup on was spent waiting for a CPU. */
static void pair(struct blocking *b, struct th_pair *p)
{
	if (!p->off_end || !p->rq_end)
		return;
	uint64_t d = p->rq_end > p->off_end ? p->rq_end - p->off_end : p->off_end - p->rq_end;
	if (d > PAIR_SLACK_NS || p->rq_start + PAIR_SLACK_NS < p->off_start ||
	    p->rq_start > p->off_end)
		return;
	uint64_t w = p->rq_start > p->off_start ? p->off_end - p->rq_start :
		     p->off_end - p->off_start;
	if (p->off_acc && p->off_acc <= b->n_causes) {
		struct acc *a = &b->causes[p->off_acc - 1];
		a->runnable_ns += w;
		b->tasks[a->task].runnable_ns += w;
		b->sum.runnable_ns += w;
	}
	p->off_end = p->rq_end = 0;
}

static void add_runq(struct blocking *b, const struct as_event *ev)
{
	const struct tm_thread *th = task_model__thread(b->model, ev->tid);
	if (!th)
		return;
	struct th_pair *p = tm_thread__data(th, b->thoff);
	p->rq_start = ev->ts;
	p->rq_end = ev->ts + ev->other;
	pair(b, p);
}

static int pacc_add(struct blocking *b, uint32_t t, uint32_t si, const char *chain, uint64_t ns)
{
	uint64_t key = ((uint64_t)t << 32 | si) + 1, v;
	uint32_t at = 0;
	int err;

	if (u64map__get(&b->pacc_of, key, &v))
		for (at = (uint32_t)v; at && b->paccs[at - 1].chain != chain; at = b->paccs[at - 1].next)
			;
	if (!at) {
		if ((err = GROW(b->paccs, b->n_paccs, b->cap_paccs, 64)))
			return err;
		b->paccs[b->n_paccs] = (struct pacc){ .task = t, .si = si, .chain = chain,
						      .next = u64map__get(&b->pacc_of, key, &v) ?
							      (uint32_t)v : 0 };
		at = (uint32_t)++b->n_paccs;
		if ((err = u64map__set(&b->pacc_of, key, at)))
			return err;
	}
	b->paccs[at - 1].ns += ns;
	b->paccs[at - 1].count++;
	return 0;
}

static int add_offcpu(struct blocking *b, const struct as_event *ev, const struct as_stack *st)
{
	uint32_t t, si;
	uint64_t v;
	int err;

	const struct tm_thread *th = task_model__thread(b->model, ev->tid);

	if (th && th->parked) {
		b->sum.parked_ns += ev->other;
		b->sum.parked_count++;
		return 0;
	}
	/* the task polled there when it was switched out (ev->task) */
	struct tm_task *mt = task_model__polled(b->model, ev->tid, ev->task);

	if (mt && mt->worker) {
		/* a worker's own loop (its launch task) between polls: the
		 * runtime's time, not a task blocking (in a task trace a page
		 * fault waiting on mmap_lock while another thread maps memory, in
		 * a profile trace its parking too) */
		b->sum.runtime_ns += ev->other;
		b->sum.runtime_count++;
		return 0;
	}

	if (!mt && (!ev->task || ev->task == UINT64_MAX))  /* UINT64_MAX: not a map key */
		return 0;
	if ((err = task_row(b, mt, ev->task, &t)) || (err = stack_info(b, st, &si)))
		return err;
	/* the cause with the future frames polled then (record --futures) */
	const char *chain;
	uint32_t cause = b->sinfo[si].cause;
	if ((err = chain_string(b, th, &chain)))
		return err;
	if (chain) {
		struct cause_def c = b->causes_def[cause];
		c.futures = chain;
		if ((err = cause_index(b, &c, &cause)))
			return err;
	}
	struct blocking_task *bt = &b->tasks[t];
	if (!bt->count)
		b->sum.tasks++;
	bt->ns += ev->other;
	bt->count++;
	if (ev->flags & AS_OFFCPU_PREEMPTED)
		bt->preempted_ns += ev->other;
	b->sum.ns += ev->other;
	b->sum.count++;

	uint64_t key = ((uint64_t)t << 32 | cause) + 1; /* keys are never 0 */
	if (!u64map__get(&b->cause_acc, key, &v)) {
		if ((err = GROW(b->causes, b->n_causes, b->cap_causes, 64)))
			return err;
		b->causes[b->n_causes] = (struct acc){ .task = t, .what = cause };
		if ((err = u64map__set(&b->cause_acc, key, b->n_causes + 1)))
			return err;
		v = ++b->n_causes;
	}
	b->causes[v - 1].ns += ev->other;
	b->causes[v - 1].count++;
	if (ev->flags & AS_OFFCPU_PREEMPTED)
		b->causes[v - 1].preempted_ns += ev->other;
	if (th) {
		struct th_pair *p = tm_thread__data(th, b->thoff);
		p->off_start = ev->ts;
		p->off_end = ev->ts + ev->other;
		p->off_acc = (uint32_t)v;
		pair(b, p);
	}

	/* per (task, stack, chain), for writers of the frames themselves */
	if ((err = pacc_add(b, t, si, chain, ev->other)))
		return err;

	/* the folded line: task name, the future frames, then the stack's */
	const char *fr = b->sinfo[si].frames;
	size_t n = strlen(bt->name) + (chain ? strlen(chain) + 1 : 0) + strlen(fr) + 2;
	char *line = malloc(n);
	if (!line)
		return -ENOMEM;
	snprintf(line, n, "%s%s%s%s%s", bt->name, chain ? ";" : "", chain ? chain : "",
		 *fr ? ";" : "", fr);
	const char *l = intern(b, line);
	free(line);
	if (!l)
		return -ENOMEM;
	uint32_t li;
	strtab__find(&b->strs, l, strlen(l), &li);
	if (!u64map__get(&b->line_acc, (uint64_t)li + 1, &v)) {
		if ((err = GROW(b->lines, b->n_lines, b->cap_lines, 64)))
			return err;
		/* the task is frame 0, then the chain's frames, then the stack's */
		int32_t shift = 1;
		for (const char *c = chain; c && *c; c++)
			shift += *c == ';';
		shift += chain != NULL;
		b->lines[b->n_lines] = (struct blocking_folded){
			.stack = l,
			.own = b->sinfo[si].own >= 0 ? b->sinfo[si].own + shift : -1,
			.kernel = b->sinfo[si].kernel >= 0 ? b->sinfo[si].kernel + shift : -1,
		};
		if ((err = u64map__set(&b->line_acc, (uint64_t)li + 1, b->n_lines + 1)))
			return err;
		v = ++b->n_lines;
	}
	b->lines[v - 1].ns += ev->other;
	return 0;
}

int blocking__add(struct blocking *b, const struct as_event *ev, const struct as_stack *stack)
{
	int err;

	if (!b || !ev)
		return -EINVAL;
	b->sorted = false;
	/* its own model sees the event first, as a shared one would */
	if (b->own_model && (err = task_model__add(b->model, ev)))
		return err;
	if (ev->type == AS_EV_RUNQ)
		add_runq(b, ev);
	return ev->type == AS_EV_OFFCPU ? add_offcpu(b, ev, stack) : 0;
}

static int by_task_ns(const void *x, const void *y)
{
	const struct blocking_task *a = x, *b = y;
	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return a->task < b->task ? -1 : a->task > b->task;
}

static int by_cause_ns(const void *x, const void *y)
{
	const struct blocking_cause *a = x, *b = y;
	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	int c = strcmp(a->kernel, b->kernel);
	return c ? c : strcmp(a->user, b->user);
}

static int by_line_ns(const void *x, const void *y)
{
	const struct blocking_folded *a = x, *b = y;
	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return strcmp(a->stack, b->stack);
}

/* Builds the handed-out views: tasks with time (sorted, their causes
 * attached), lines sorted. */
static int sort_all(struct blocking *b, struct blocking_task **out, size_t *n_out)
{
	/* a profile trace names a task again when its name was found after
	 * its first record (AS_SPAWN_TASK); either trace finds a worker's
	 * launch task only once it polls a task or is seen in its loop, which
	 * may be after its first intervals: the model has them now (their
	 * folded lines keep the first name) */
	for (size_t t = 0; t < b->n_tasks; t++) {
		struct blocking_task *bt = &b->tasks[t];
		struct tm_task *mt = bt->count ? task_model__task(b->model, bt->task) : NULL;
		if (!mt)
			continue;
		if (b->profile && mt->name && *mt->name)
			bt->name = mt->name;
		if (b->profile && !bt->tokio_id)
			bt->tokio_id = mt->tokio_id;
		if (mt->worker) {
			b->sum.runtime_ns += bt->ns;
			b->sum.runtime_count += bt->count;
			b->sum.ns -= bt->ns;
			b->sum.count -= bt->count;
			b->sum.tasks--;
			b->sum.runnable_ns -= bt->runnable_ns;
			bt->count = bt->ns = bt->preempted_ns = bt->runnable_ns = 0;
		}
	}
	free(b->out_causes);
	b->out_causes = NULL;
	size_t n = 0;
	struct blocking_task *v = calloc(b->n_tasks ? b->n_tasks : 1, sizeof(*v));
	b->out_causes = calloc(b->n_causes ? b->n_causes : 1, sizeof(*b->out_causes));
	size_t *first = calloc(b->n_tasks ? b->n_tasks : 1, sizeof(*first));
	size_t *cnt = calloc(b->n_tasks ? b->n_tasks : 1, sizeof(*cnt));
	if (!v || !b->out_causes || !first || !cnt) {
		free(v);
		free(first);
		free(cnt);
		return -ENOMEM;
	}
	for (size_t i = 0; i < b->n_causes; i++)
		cnt[b->causes[i].task]++;
	for (size_t t = 0, pos = 0; t < b->n_tasks; t++) {
		first[t] = pos;
		pos += cnt[t];
		cnt[t] = 0;
	}
	for (size_t i = 0; i < b->n_causes; i++) {
		const struct acc *a = &b->causes[i];
		b->out_causes[first[a->task] + cnt[a->task]++] = (struct blocking_cause){
			.kernel = b->causes_def[a->what].kernel, .user = b->causes_def[a->what].user,
			.file = b->causes_def[a->what].file, .line = b->causes_def[a->what].line,
			.futures = b->causes_def[a->what].futures, .call = b->causes_def[a->what].call,
			.cut = b->causes_def[a->what].cut,
			.pool = b->causes_def[a->what].where == TM_NAME_POOL,
			.handoff = b->causes_def[a->what].where == TM_NAME_HANDOFF,
			.ns = a->ns, .count = a->count, .preempted_ns = a->preempted_ns,
			.runnable_ns = a->runnable_ns,
		};
	}
	for (size_t t = 0; t < b->n_tasks; t++) {
		if (!b->tasks[t].count)
			continue;
		v[n] = b->tasks[t];
		v[n].causes = b->out_causes + first[t];
		v[n].n_causes = cnt[t];
		qsort(v[n].causes, v[n].n_causes, sizeof(*v[n].causes), by_cause_ns);
		n++;
	}
	qsort(v, n, sizeof(*v), by_task_ns);
	if (b->n_lines)
		qsort(b->lines, b->n_lines, sizeof(*b->lines), by_line_ns);
	/* line_acc indexes are stale after the sort: rebuild them */
	u64map__clear(&b->line_acc);
	for (size_t i = 0; i < b->n_lines; i++) {
		uint32_t li;
		strtab__find(&b->strs, b->lines[i].stack, strlen(b->lines[i].stack), &li);
		if (u64map__set(&b->line_acc, (uint64_t)li + 1, i + 1)) {
			free(v);
			free(first);
			free(cnt);
			return -ENOMEM;
		}
	}
	free(first);
	free(cnt);
	*out = v;
	*n_out = n;
	return 0;
}

static int ensure_sorted(struct blocking *b)
{
	struct blocking_task *v;
	size_t n;
	int err;

	if (b->sorted)
		return 0;
	if ((err = sort_all(b, &v, &n)))
		return err;
	free(b->view);
	b->view = v;
	b->n_view = n;
	b->sorted = true;
	return 0;
}

const struct blocking_task *blocking__tasks(struct blocking *b, size_t *n)
{
	*n = 0;
	if (!b || ensure_sorted(b))
		return NULL;
	*n = b->n_view;
	return b->view;
}

const struct blocking_folded *blocking__folded(struct blocking *b, size_t *n)
{
	*n = 0;
	if (!b || ensure_sorted(b))
		return NULL;
	*n = b->n_lines;
	return b->lines;
}

const struct blocking_summary *blocking__summary(struct blocking *b)
{
	/* a profile trace's late names and runtime tasks are settled by the sort */
	if (b && b->profile)
		ensure_sorted(b);
	return b ? &b->sum : NULL;
}

int blocking__set_fold(struct blocking *b, unsigned flags)
{
	if (!b || b->n_sinfo)
		return -EINVAL;
	b->fold_flags = flags;
	return 0;
}

int blocking__each(struct blocking *b, blocking_each_fn fn, void *ctx)
{
	int err;

	if (!b || !fn)
		return -EINVAL;
	if ((err = ensure_sorted(b)))
		return err;
	for (size_t i = 0; i < b->n_paccs; i++) {
		const struct pacc *a = &b->paccs[i];
		const struct blocking_task *t = &b->tasks[a->task];
		const struct sinfo *si = &b->sinfo[a->si];
		struct blocking_stack_weight w = {
			.task = t, .stack = si->st.id ? &si->st : NULL, .skip_kernel = si->skip,
			.flags = b->fold_flags,
			.futures = a->chain, .ns = a->ns, .count = a->count,
		};
		if (!t->count)
			continue;   /* a worker's own loop, found late: not a task's */
		if ((err = fn(ctx, &w)))
			return err;
	}
	return 0;
}

void blocking__free(struct blocking *b)
{
	if (!b)
		return;
	strtab__clear(&b->strs);
	free(b->tasks);
	u64map__clear(&b->unknown);
	if (b->own_model)
		task_model__free(b->model);
	u64map__clear(&b->stacks);
	free(b->sinfo);
	free(b->causes_def);
	u64map__clear(&b->cause_acc);
	free(b->causes);
	u64map__clear(&b->line_acc);
	free(b->lines);
	u64map__clear(&b->pacc_of);
	free(b->paccs);
	stack_crates__clear(&b->crates);
	free(b->out_causes);
	free(b->view);
	free(b);
}

/* ------------------------------------------------------------------ sink */

static int sink_add(void *impl, const struct as_event *ev, const struct as_stack *stack)
{
	return blocking__add(impl, ev, stack);   /* read for AS_EV_OFFCPU only */
}

static const struct as_sink_ops sink_ops = {
	.name = "blocking", .add = sink_add, .finish = NULL, .free = NULL,
};

struct as_sink blocking__sink(struct blocking *x)
{
	/* on a shared model, only the events it reads (not called for the
	 * others: most of a trace) */
	return (struct as_sink){ .ops = &sink_ops, .impl = x,
				 .types = x && !x->own_model ? AS_SINK_TYPE(AS_EV_OFFCPU) |
							       AS_SINK_TYPE(AS_EV_RUNQ) : 0 };
}
