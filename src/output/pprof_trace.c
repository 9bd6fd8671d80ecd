/* pprof_trace: the analyses of a trace (CPU samples, blocking, futures,
 * the poll tracker) into one pprof profile (see pprof_trace.h). This file
 * runs them as observers of one task model, finds the sampling period from
 * the samples' spacing, and turns their results into pprof samples. No
 * I/O. */
#include "output/pprof_trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/blocking.h"
#include "analysis/cpu_samples.h"
#include "analysis/futures.h"
#include "analysis/stack_fold.h"
#include "analysis/task_model.h"
#include "output/folded.h"
#include "util/task_id.h"
#include "util/u64map.h"

/* Spacings kept to find the sampling period (a busy thread's samples are
 * one period apart, others more: the densest cluster is the period). */
#define SPACINGS_MAX (1u << 20)
#define SPACINGS_MIN 16

/* One task's poll time (task mode). */
struct poll_time {
	uint64_t seq, tokio_id;
	const char *name;      /* the tracker's, NULL unknown */
	uint64_t ns;
};

struct pprof_trace {
	const struct as_trace_meta *meta;
	unsigned flags;
	struct cpu_samples *cpu;
	struct blocking *bl;
	struct futures *fu;          /* NULL: the trace has no future probes */
	struct ptrack *pt;
	struct poll_time *polls;
	size_t n_polls, cap_polls;
	struct u64map poll_of;       /* seq -> index + 1 */
	struct u64map last_sample;   /* tid + 1 -> ts of its last sample */
	uint64_t *spacings;
	size_t n_spacings, cap_spacings;
	struct stack_crates crates;
	int err;
};

/* The types of a profile, their indices (-1 absent). */
enum { T_SAMPLES, T_CPU, T_OFFCPU, T_FUTURE, T_AWAIT, T_POLL, T__N };

struct build {
	struct pprof_trace *t;
	struct pprof *p;
	int type[T__N];
	int64_t period;
	int n_types;
};

static int on_poll(void *ctx, const struct ptrack_out *o)
{
	struct pprof_trace *t = ctx;
	uint64_t v;

	if (o->type != PTRACK_POLL || !o->poll->user || o->poll->end <= o->poll->begin)
		return 0;
	const struct ptrack_task *k = &o->poll->task;
	if (!u64map__get(&t->poll_of, k->seq, &v)) {
		if (t->n_polls == t->cap_polls) {
			size_t cap = t->cap_polls ? t->cap_polls * 2 : 64;
			struct poll_time *a = realloc(t->polls, cap * sizeof(*a));

			if (!a)
				return -ENOMEM;
			t->polls = a;
			t->cap_polls = cap;
		}
		t->polls[t->n_polls] = (struct poll_time){ .seq = k->seq };
		v = ++t->n_polls;
		if (u64map__set(&t->poll_of, k->seq, v))
			return -ENOMEM;
	}
	struct poll_time *pt = &t->polls[v - 1];
	pt->ns += o->poll->end - o->poll->begin;
	pt->name = k->name;
	if (k->tokio_id)
		pt->tokio_id = k->tokio_id;
	return 0;
}

static bool has_futures(const struct as_trace_meta *meta)
{
	for (uint32_t i = 0; meta && i < meta->n_probes; i++)
		if (meta->probes[i].role == AS_ROLE_FUTURE)
			return true;
	return false;
}

struct pprof_trace *pprof_trace__new_on(struct task_model *m, const struct as_trace_meta *meta,
					unsigned fold_flags)
{
	struct pprof_trace *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->meta = meta;
	t->flags = fold_flags;
	if (!(t->cpu = cpu_samples__new_on(m, meta)) || !(t->bl = blocking__new_on(m, meta)) ||
	    /* per task: each future and await sample labelled with its task */
	    (has_futures(meta) &&
	     !(t->fu = futures__new_on(m, meta, &(struct futures_opts){ .per_task = true }))) ||
	    (!as_meta_profile(meta) && !(t->pt = ptrack__new_on(m, meta, on_poll, t)))) {
		pprof_trace__free(t);
		errno = ENOMEM;
		return NULL;
	}
	cpu_samples__set_fold(t->cpu, fold_flags);
	blocking__set_fold(t->bl, fold_flags);
	return t;
}

/* The sampling period's sink: each sample's spacing from the last one of
 * its thread. */
static int rate_add(void *impl, const struct as_event *ev, const struct as_stack *stack)
{
	struct pprof_trace *t = impl;
	uint64_t last;

	(void)stack;
	if (ev->type != AS_EV_SAMPLE)
		return 0;
	if (u64map__get(&t->last_sample, (uint64_t)ev->tid + 1, &last) && ev->ts > last &&
	    t->n_spacings < SPACINGS_MAX) {
		if (t->n_spacings == t->cap_spacings) {
			size_t cap = t->cap_spacings ? t->cap_spacings * 2 : 1024;
			uint64_t *a = realloc(t->spacings, cap * sizeof(*a));

			if (!a)
				return -ENOMEM;
			t->spacings = a;
			t->cap_spacings = cap;
		}
		t->spacings[t->n_spacings++] = ev->ts - last;
	}
	return u64map__set(&t->last_sample, (uint64_t)ev->tid + 1, ev->ts);
}

static const struct as_sink_ops rate_ops = { .name = "sample rate", .add = rate_add };

size_t pprof_trace__sinks(struct pprof_trace *t, struct as_sink *out, size_t max)
{
	size_t n = 0;

	if (!t)
		return 0;
	if (n < max)
		out[n++] = cpu_samples__sink(t->cpu);
	if (n < max)
		out[n++] = blocking__sink(t->bl);
	if (t->fu && n < max)
		out[n++] = futures__sink(t->fu);
	if (n < max)
		out[n++] = (struct as_sink){ .ops = &rate_ops, .impl = t };
	return n;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The sampling period: the densest cluster of spacings (within 5%), its
 * median, as a whole rate (a recorder takes HZ: 99 -> 10101010 ns). */
static int64_t period_of(struct pprof_trace *t)
{
	size_t best = 0, best_i = 0, n = t->n_spacings;

	if (n < SPACINGS_MIN)
		return 0;
	qsort(t->spacings, n, sizeof(*t->spacings), cmp_u64);
	for (size_t i = 0, j = 0; i < n; i++) {
		if (j < i)
			j = i;
		while (j + 1 < n && t->spacings[j + 1] <= t->spacings[i] + t->spacings[i] / 20)
			j++;
		if (j - i + 1 > best) {
			best = j - i + 1;
			best_i = i;
		}
	}
	if (best < SPACINGS_MIN)
		return 0;
	uint64_t med = t->spacings[best_i + best / 2];
	if (!med)
		return 0;
	uint64_t hz = (1000000000ull + med / 2) / med;
	return hz ? (int64_t)((1000000000ull + hz / 2) / hz) : 0;
}

static void values_zero(struct build *b, int64_t *v)
{
	for (int i = 0; i < b->n_types; i++)
		v[i] = 0;
}

static int add_cpu(void *ctx, const struct cpu_stack_weight *w)
{
	struct build *b = ctx;
	int64_t v[T__N];
	char id[TASK_ID_MAX];
	const char *root[1] = { w->row->name };
	struct pprof_label lab[2] = { { .key = "task", .str = w->row->name } };
	size_t nl = 1;
	int err;

	if ((err = stack_crates__learn(&b->t->crates, w->stack)))
		return err;
	values_zero(b, v);
	v[b->type[T_SAMPLES]] = (int64_t)w->count;
	if (b->type[T_CPU] >= 0)
		v[b->type[T_CPU]] = (int64_t)w->count * b->period;
	if (w->row->kind == CPU_ROW_TASK)
		lab[nl++] = (struct pprof_label){ .key = "task_id", .str = task_id_format(id,
						  sizeof(id), w->row->tokio_id, w->row->seq, w->row->task) };
	return pprof__add_stack(b->p, &(struct pprof_stack){ .roots = root, .n_roots = 1,
				.stack = w->stack, .skip_kernel = w->skip_kernel, .flags = w->flags,
				.crates = &b->t->crates }, v, lab, nl);
}

#define CHAIN_MAX 48

static int add_offcpu(void *ctx, const struct blocking_stack_weight *w)
{
	struct build *b = ctx;
	int64_t v[T__N];
	char id[TASK_ID_MAX], chain[4096];
	const char *root[1 + CHAIN_MAX] = { w->task->name };
	size_t nr = 1;
	int err;

	if ((err = stack_crates__learn(&b->t->crates, w->stack)))
		return err;
	/* the future frames polled then, outermost first */
	if (w->futures) {
		snprintf(chain, sizeof(chain), "%s", w->futures);
		for (char *s = chain, *e; s && nr < 1 + CHAIN_MAX; s = e) {
			e = strchr(s, ';');
			if (e)
				*e++ = '\0';
			root[nr++] = s;
		}
	}
	values_zero(b, v);
	v[b->type[T_OFFCPU]] = (int64_t)w->ns;
	struct pprof_label lab[2] = {
		{ .key = "task", .str = w->task->name },
		{ .key = "task_id", .str = task_id_format(id, sizeof(id), w->task->tokio_id,
							  w->task->seq, w->task->task) },
	};
	return pprof__add_stack(b->p, &(struct pprof_stack){ .roots = root, .n_roots = nr,
				.stack = w->stack, .skip_kernel = w->skip_kernel, .flags = w->flags,
				.crates = &b->t->crates }, v, lab, 2);
}

/* A future frame's name, file and line: "name (file:LINE)" (a wait leaf)
 * split; else the function's own file:line. */
static void future_frame(const struct futures *fu, const char *s, char *name, size_t len,
			 struct pprof_frame *f)
{
	const char *open = strrchr(s, '(');
	size_t n;
	const struct futures_fn *fns = futures__fns(fu, &n);

	*f = (struct pprof_frame){ .function = s };
	if (open && open > s + 1 && open[-1] == ' ' && s[strlen(s) - 1] == ')') {
		const char *colon = strrchr(open, ':');
		size_t nl = (size_t)(open - 1 - s);

		if (colon && nl < len) {
			memcpy(name, s, nl);
			name[nl] = '\0';
			f->function = name;
			f->line = (uint32_t)strtoul(colon + 1, NULL, 10);
			for (size_t i = 0; i < n; i++)
				if (!strcmp(fns[i].name, name) && fns[i].file) {
					f->file = fns[i].file;
					break;
				}
			return;
		}
	}
	for (size_t i = 0; i < n; i++)
		if (!strcmp(fns[i].name, s)) {
			f->file = fns[i].file;
			f->line = fns[i].line;
			break;
		}
}

static int add_futures(struct build *b, enum futures_graph g, int type)
{
	size_t n;
	const struct futures_stack *st = futures__stacks(b->t->fu, g, &n);
	char names[CHAIN_MAX][256];
	struct pprof_frame fr[CHAIN_MAX];
	int64_t v[T__N];
	int err;

	for (size_t i = 0; i < n; i++) {
		uint32_t nf = st[i].n < CHAIN_MAX ? st[i].n : CHAIN_MAX;

		if (!st[i].ns || !nf)
			continue;
		/* leaf first; the root (the task's label) is synthetic */
		for (uint32_t k = 0; k < nf; k++) {
			const char *s = st[i].frames[nf - 1 - k];

			if (nf - 1 - k == 0)
				fr[k] = (struct pprof_frame){ .function = s };
			else
				future_frame(b->t->fu, s, names[k], sizeof(names[k]), &fr[k]);
		}
		values_zero(b, v);
		v[type] = (int64_t)st[i].ns;
		struct pprof_label lab[2] = {
			{ .key = "task", .str = st[i].frames[0] },
			{ .key = "task_id", .str = st[i].task },
		};
		if ((err = pprof__add_sample(b->p, fr, nf, v, lab, st[i].task ? 2 : 1)))
			return err;
	}
	return 0;
}

static int add_polls(struct build *b)
{
	int64_t v[T__N];
	char id[TASK_ID_MAX];
	int err;

	for (size_t i = 0; i < b->t->n_polls; i++) {
		const struct poll_time *pt = &b->t->polls[i];
		const char *name = pt->name ? pt->name : "?";
		struct pprof_frame f = { .function = name };
		struct pprof_label lab[2] = {
			{ .key = "task", .str = name },
			{ .key = "task_id", .str = task_id_format(id, sizeof(id), pt->tokio_id,
								  pt->seq, 0) },
		};

		values_zero(b, v);
		v[b->type[T_POLL]] = (int64_t)pt->ns;
		if ((err = pprof__add_sample(b->p, &f, 1, v, lab, 2)))
			return err;
	}
	return 0;
}

int pprof_trace__build(struct pprof_trace *t, const struct as_trace_end *end, struct pprof **out,
		       struct pprof_trace_summary *sum)
{
	struct build b = { .t = t };
	struct pprof_trace_summary s = { 0 };
	char note[512];
	int err = -ENOMEM;

	*out = NULL;
	if (!t)
		return -EINVAL;
	if (t->pt && (err = ptrack__finish(t->pt, end ? end->end_ns : 0)) && err != -EINVAL)
		return err;
	const struct cpu_summary *cs = cpu_samples__summary(t->cpu);
	const struct blocking_summary *bs = blocking__summary(t->bl);
	const struct futures_summary *fs = t->fu ? futures__summary(t->fu) : NULL;
	s.cpu_samples = cs ? cs->samples : 0;
	s.period_ns = s.cpu_samples ? period_of(t) : 0;
	s.offcpu_ns = bs ? bs->ns : 0;
	s.future_ns = fs ? fs->oncpu_ns : 0;
	s.await_ns = fs ? fs->wait_ns : 0;
	for (size_t i = 0; i < t->n_polls; i++)
		s.poll_ns += t->polls[i].ns;

	if (!(b.p = pprof__new()))
		return -ENOMEM;
	for (int i = 0; i < T__N; i++)
		b.type[i] = -1;
	b.period = s.period_ns;
	/* types present, in the default's order of preference */
	if (s.cpu_samples && s.period_ns)
		b.type[T_CPU] = pprof__add_type(b.p, "cpu", "nanoseconds");
	if (s.cpu_samples)
		b.type[T_SAMPLES] = pprof__add_type(b.p, "samples", "count");
	if (s.offcpu_ns)
		b.type[T_OFFCPU] = pprof__add_type(b.p, "offcpu", "nanoseconds");
	if (s.future_ns)
		b.type[T_FUTURE] = pprof__add_type(b.p, "future", "nanoseconds");
	if (s.poll_ns || !pprof__types(b.p))
		b.type[T_POLL] = pprof__add_type(b.p, "poll", "nanoseconds");
	if (s.await_ns)
		b.type[T_AWAIT] = pprof__add_type(b.p, "await", "nanoseconds");
	for (int i = 0; i < T__N; i++)
		if (b.type[i] < -1) {
			err = b.type[i];
			goto fail;
		}
	b.n_types = pprof__types(b.p);
	if (pprof__set_default_type(b.p, 0))
		goto fail;
	if (s.period_ns && (err = pprof__set_period(b.p, "cpu", "nanoseconds", s.period_ns)))
		goto fail;
	if (t->meta) {
		uint64_t dur = end && end->end_ns > t->meta->clock_mono_ns
			       ? end->end_ns - t->meta->clock_mono_ns : 0;
		pprof__set_time(b.p, (int64_t)t->meta->clock_real_ns, (int64_t)dur);
		snprintf(note, sizeof(note), "asyncscope: %s (pid %u)%s",
			 t->meta->target ? t->meta->target : "?", t->meta->pid,
			 end && end->truncated ? ", truncated trace" : "");
		if ((err = pprof__add_comment(b.p, note)))
			goto fail;
		/* nothing lost silently: the trace's counts, in every output */
		if (end) {
			snprintf(note, sizeof(note), "lost events %s%" PRIu64 ", missed events %s%" PRIu64
				 "%s", end->truncated ? "at least " : "", end->lost,
				 end->truncated ? "at least " : "", end->missed,
				 end->lost || end->missed ? ": the numbers undercount" : "");
			if ((err = pprof__add_comment(b.p, note)))
				goto fail;
		}
		if (t->meta->target && *t->meta->target &&
		    (err = pprof__set_main_binary(b.p, t->meta->target, t->meta->build_id)))
			goto fail;
	}
	if (s.cpu_samples) {
		if (s.period_ns)
			snprintf(note, sizeof(note), "cpu: %" PRIu64 " samples x %" PRId64 " ns (%.0f Hz, "
				 "from the samples' spacing)", s.cpu_samples, s.period_ns,
				 1e9 / (double)s.period_ns);
		else
			snprintf(note, sizeof(note), "cpu: %" PRIu64 " samples, too few on one thread "
				 "to find the sampling period: samples/count only", s.cpu_samples);
		if ((err = pprof__add_comment(b.p, note)))
			goto fail;
	}
	if ((err = pprof__add_comment(b.p, (t->flags & STACK_FOLD_ALL) ? "stacks: every frame"
				      : "stacks: from the task's code (the runtime's frames "
				      "between a thread's start and the task's future left "
				      "out; --all-frames keeps them)")))
		goto fail;
	if (s.cpu_samples && (err = cpu_samples__each(t->cpu, add_cpu, &b)))
		goto fail;
	if (s.offcpu_ns && (err = blocking__each(t->bl, add_offcpu, &b)))
		goto fail;
	if (s.future_ns && (err = add_futures(&b, FUTURES_ONCPU, b.type[T_FUTURE])))
		goto fail;
	if (s.await_ns && (err = add_futures(&b, FUTURES_WAIT, b.type[T_AWAIT])))
		goto fail;
	if (s.poll_ns && (err = add_polls(&b)))
		goto fail;
	s.samples = pprof__samples(b.p);
	if (sum)
		*sum = s;
	*out = b.p;
	return 0;
fail:
	pprof__free(b.p);
	return err ? err : -ENOMEM;
}

void pprof_trace__free(struct pprof_trace *t)
{
	if (!t)
		return;
	cpu_samples__free(t->cpu);
	blocking__free(t->bl);
	futures__free(t->fu);
	ptrack__free(t->pt);
	free(t->polls);
	u64map__clear(&t->poll_of);
	u64map__clear(&t->last_sample);
	free(t->spacings);
	stack_crates__clear(&t->crates);
	free(t);
}
