/* folded: the poll tracker shared by the exporters, and the folded-stacks
 * writer (see folded.h). The tracker mirrors the state machine of
 * analysis/tasks.c (keep them in step: the exporters' counts are checked
 * against `report`), but keeps only live tasks (a map keyed by header, freed
 * at FREE) and per-thread poll stacks.
 * Pure C: no libbpf, no reader; writes only to the FILE* given. */
#include "output/folded.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sym/demangle.h"
#include "util/strtab.h"
#include "util/u64map.h"

/* ---------------------------------------------------------------- tracker */

enum live_state { LIVE_RUNNING, LIVE_RUNNABLE, LIVE_IDLE, LIVE_COMPLETED };

struct live {
	struct ptrack_task info;
	enum live_state state;
	uint64_t since;         /* LIVE_RUNNABLE / LIVE_IDLE: start of the interval */
	uint32_t run_tid;       /* LIVE_RUNNING: thread whose stack holds its poll */
	bool woken_in_poll;
	bool polled;            /* name taken from its first poll */
	bool worker;            /* a poll began inside one of its polls, or see worker_raw */
	bool free_pending;      /* freed inside its own poll: retired when it ends */
	uint32_t raw_id;        /* 1 + index of its raw root future name, 0 none */
	bool has_wake;
	struct ptrack_wake wake;
};

struct frame {
	struct ptrack_poll p;   /* begin, task, wake; end and how filled at close */
	uint32_t raw_id;
	bool nested;
};

struct thread {
	uint32_t tid;
	char *name;
	struct frame *stack;
	size_t depth, cap;
	bool spawn_pending;
	uint32_t spawn_id, spawn_line, spawn_col;
	bool parked;
	uint64_t park_start;
};

struct ptrack {
	ptrack_out_fn out;
	void *ctx;
	uint32_t *probe_name;   /* per probe: name_id */
	uint32_t *probe_raw;    /* per probe: raw_id (the analysis compares raw names) */
	uint32_t n_probes;
	struct strtab names;    /* distinct pretty future names */
	struct strtab raws;     /* distinct raw future names */
	/* raw_ids of the runtime's loops: a task of such a type polled outermost
	 * on its thread is a worker too (an idle worker has nothing nested) */
	uint32_t *worker_raw;
	size_t n_worker_raw, cap_worker_raw;
	struct strtab files;    /* distinct spawn files */
	struct u64map live;     /* header -> struct live * */
	struct thread **threads;
	size_t n_threads, cap_threads;
	struct u64map thread_of; /* tid + 1 -> index + 1 */
	uint64_t next_seq;
	uint64_t runnable, parked;
	bool finished;
};

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
	if (!strtab__find(t, s, len, &idx)) {
		ret = strtab__add(t, s, len, &idx);
		if (ret)
			return ret;
	}
	*id = idx + 1;
	return 0;
}

static const char *name_of(const struct strtab *t, uint32_t id)
{
	return id ? strtab__get(t, id - 1) : NULL;
}

struct ptrack *ptrack__new(const struct as_trace_meta *meta, ptrack_out_fn out, void *ctx)
{
	struct ptrack *t = calloc(1, sizeof(*t));
	int err = ENOMEM;

	if (!t)
		return NULL;
	t->out = out;
	t->ctx = ctx;
	t->next_seq = 1;
	if (meta && meta->probes && meta->n_probes) {
		t->probe_name = calloc(meta->n_probes, sizeof(*t->probe_name));
		t->probe_raw = calloc(meta->n_probes, sizeof(*t->probe_raw));
		if (!t->probe_name || !t->probe_raw)
			goto fail;
		t->n_probes = meta->n_probes;
		for (uint32_t i = 0; i < meta->n_probes; i++) {
			char *pretty;

			if (!meta->probes[i].future)
				continue;
			if ((err = -intern(&t->raws, meta->probes[i].future, &t->probe_raw[i])))
				goto fail;
			pretty = sym_pretty_future(meta->probes[i].future);
			if (!pretty)
				goto fail;
			err = -intern(&t->names, pretty, &t->probe_name[i]);
			free(pretty);
			if (err)
				goto fail;
		}
	}
	return t;
fail:
	ptrack__free(t);
	errno = err ? err : ENOMEM;
	return NULL;
}

static struct thread *thread_find(const struct ptrack *t, uint32_t tid)
{
	uint64_t v;

	return u64map__get(&t->thread_of, (uint64_t)tid + 1, &v) ? t->threads[v - 1] : NULL;
}

static struct thread *thread_get(struct ptrack *t, uint32_t tid)
{
	struct thread *th = thread_find(t, tid);

	if (th)
		return th;
	if (t->n_threads == t->cap_threads) {
		size_t ncap = t->cap_threads ? t->cap_threads * 2 : 16;
		struct thread **p = realloc(t->threads, ncap * sizeof(*p));

		if (!p)
			return NULL;
		t->threads = p;
		t->cap_threads = ncap;
	}
	th = calloc(1, sizeof(*th));
	if (!th)
		return NULL;
	if (u64map__set(&t->thread_of, (uint64_t)tid + 1, t->n_threads + 1)) {
		free(th);
		return NULL;
	}
	th->tid = tid;
	t->threads[t->n_threads++] = th;
	return th;
}

static struct live *live_get(const struct ptrack *t, uint64_t header)
{
	uint64_t v;

	return u64map__get(&t->live, header, &v) ? (struct live *)(uintptr_t)v : NULL;
}

/* The live task of frame f, or NULL if it is gone (its seq no longer lives). */
static struct live *frame_live(const struct ptrack *t, const struct frame *f)
{
	struct live *l = live_get(t, f->p.task.header);

	return l && l->info.seq == f->p.task.seq ? l : NULL;
}

static void set_state(struct ptrack *t, struct live *l, enum live_state s, uint64_t since)
{
	if (l->state == LIVE_RUNNABLE)
		t->runnable--;
	if (s == LIVE_RUNNABLE)
		t->runnable++;
	l->state = s;
	l->since = since;
}

static struct live *task_new(struct ptrack *t, uint64_t header, enum live_state s, uint64_t ts)
{
	struct live *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	if (u64map__set(&t->live, header, (uint64_t)(uintptr_t)l)) {
		free(l);
		return NULL;
	}
	l->info.seq = t->next_seq++;
	l->info.header = header;
	l->state = LIVE_IDLE;
	set_state(t, l, s, ts);
	return l;
}

static int emit_interval(struct ptrack *t, enum ptrack_out_type type, const struct live *l,
			 uint64_t to)
{
	struct ptrack_out o = { .type = type, .task = &l->info, .from = l->since, .to = to };

	if (to < l->since)
		o.to = o.from;
	return t->out(t->ctx, &o);
}

/* Closes the open state interval of l (runnable or idle) at ts. */
static int close_state(struct ptrack *t, const struct live *l, uint64_t ts)
{
	if (l->state == LIVE_RUNNABLE)
		return emit_interval(t, PTRACK_SCHEDULED, l, ts);
	if (l->state == LIVE_IDLE)
		return emit_interval(t, PTRACK_IDLE, l, ts);
	return 0;
}

static int task_retire(struct ptrack *t, struct live *l, uint64_t ts, bool freed)
{
	struct ptrack_out o = { .type = PTRACK_TASK_GONE, .task = &l->info, .to = ts,
				.freed = freed };
	int err;

	set_state(t, l, LIVE_COMPLETED, ts);
	u64map__del(&t->live, l->info.header);
	err = t->out(t->ctx, &o);
	free(l);
	return err;
}

/* Accounts the poll of frame f (already off the stack) ending at ts. */
static int poll_close(struct ptrack *t, struct frame *f, uint64_t ts, enum ptrack_end how)
{
	struct live *l = frame_live(t, f);
	struct ptrack_out o = { .type = PTRACK_POLL, .poll = &f->p };
	int err;

	f->p.end = ts < f->p.begin ? f->p.begin : ts;
	f->p.how = how;
	f->p.user = !f->nested && !(l && l->worker);
	err = t->out(t->ctx, &o);
	if (err || !l)
		return err;
	if (how == PTRACK_CUT || how == PTRACK_TRACE_END) {
		if (how == PTRACK_CUT && l->state == LIVE_RUNNING) {
			set_state(t, l, l->woken_in_poll ? LIVE_RUNNABLE : LIVE_IDLE, ts);
			l->woken_in_poll = false;
		}
		return 0;
	}
	if (how == PTRACK_READY) {
		set_state(t, l, LIVE_COMPLETED, ts);
		return 0;
	}
	set_state(t, l, l->woken_in_poll ? LIVE_RUNNABLE : LIVE_IDLE, ts);
	l->woken_in_poll = false;
	return 0;
}

static int frame_drop(struct ptrack *t, struct thread *th, size_t i, uint64_t ts)
{
	struct frame f = th->stack[i];

	memmove(&th->stack[i], &th->stack[i + 1], (th->depth - i - 1) * sizeof(*th->stack));
	th->depth--;
	return poll_close(t, &f, ts, PTRACK_CUT);
}

/* A running task's poll must be closed (freed, or polled again while running). */
static int unrun(struct ptrack *t, struct live *l, uint64_t ts)
{
	struct thread *th = thread_find(t, l->run_tid);

	if (th)
		for (size_t i = th->depth; i-- > 0;)
			if (th->stack[i].p.task.header == l->info.header)
				return frame_drop(t, th, i, ts);
	set_state(t, l, LIVE_IDLE, ts);
	return 0;
}

static bool worker_raw(const struct ptrack *t, uint32_t raw_id)
{
	for (size_t i = 0; raw_id && i < t->n_worker_raw; i++)
		if (t->worker_raw[i] == raw_id)
			return true;
	return false;
}

/* A poll began inside frame f: its task is the runtime's loop, and so is
 * every task of the same root future type polled outermost on its thread
 * (as analysis/tasks.c make_worker()). */
static int make_worker(struct ptrack *t, const struct frame *f)
{
	struct live *l = frame_live(t, f);

	if (l)
		l->worker = true;
	if (!f->raw_id || worker_raw(t, f->raw_id))
		return 0;
	if (t->n_worker_raw == t->cap_worker_raw) {
		size_t ncap = t->cap_worker_raw ? t->cap_worker_raw * 2 : 4;
		uint32_t *p = realloc(t->worker_raw, ncap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		t->worker_raw = p;
		t->cap_worker_raw = ncap;
	}
	t->worker_raw[t->n_worker_raw++] = f->raw_id;
	for (size_t i = 0; i < t->n_threads; i++) {
		struct thread *th = t->threads[i];

		if (th->depth && th->stack[0].raw_id == f->raw_id && (l = frame_live(t, &th->stack[0])))
			l->worker = true;
	}
	return 0;
}

static int on_poll_begin(struct ptrack *t, const struct as_event *ev)
{
	struct thread *th = thread_get(t, ev->tid);
	struct live *l;
	struct frame *f;
	int err;

	if (!th)
		return -ENOMEM;
	l = live_get(t, ev->task);
	if (l && l->state == LIVE_COMPLETED) {
		/* polled after completing: its FREE was lost and the address reused */
		err = task_retire(t, l, ev->ts, false);
		if (err)
			return err;
		l = NULL;
	}
	if (l && l->state == LIVE_RUNNING) {
		err = unrun(t, l, ev->ts);
		if (err)
			return err;
	}
	if (!l) {
		l = task_new(t, ev->task, LIVE_RUNNING, ev->ts);
		if (!l)
			return -ENOMEM;
	} else {
		err = close_state(t, l, ev->ts);
		if (err)
			return err;
	}
	if (th->depth == th->cap) {
		size_t ncap = th->cap ? th->cap * 2 : 8;
		struct frame *p = realloc(th->stack, ncap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		th->stack = p;
		th->cap = ncap;
	}
	if (!l->polled && !l->raw_id && ev->probe < t->n_probes) {
		l->raw_id = t->probe_raw[ev->probe];
		l->info.name_id = t->probe_name[ev->probe];
		l->info.name = name_of(&t->names, l->info.name_id);
	}
	l->polled = true;
	if (!l->info.tokio_id && ev->other)
		l->info.tokio_id = ev->other;
	if (th->depth) {
		th->stack[th->depth - 1].nested = true;
		if ((err = make_worker(t, &th->stack[th->depth - 1])))
			return err;
	}
	f = &th->stack[th->depth++];
	memset(f, 0, sizeof(*f));
	f->raw_id = l->raw_id;
	if (th->depth == 1 && worker_raw(t, l->raw_id))
		l->worker = true;
	f->p.task = l->info;
	f->p.tid = ev->tid;
	f->p.begin = ev->ts;
	f->p.has_wake = l->has_wake;
	f->p.wake = l->wake;
	l->has_wake = false;
	set_state(t, l, LIVE_RUNNING, ev->ts);
	l->run_tid = ev->tid;
	l->woken_in_poll = false;
	return 0;
}

static int on_poll_end(struct ptrack *t, const struct as_event *ev)
{
	struct thread *th = thread_get(t, ev->tid);
	struct frame f;
	size_t i;
	int err;

	if (!th)
		return -ENOMEM;
	th->spawn_pending = false;
	for (i = th->depth; i-- > 0;)
		if (th->stack[i].p.task.header == ev->task)
			break;
	if (i == (size_t)-1)
		return 0; /* begin not seen (attached mid-poll) or lost */
	while (th->depth > i + 1)
		if ((err = frame_drop(t, th, th->depth - 1, ev->ts)))
			return err;
	f = th->stack[--th->depth];
	err = poll_close(t, &f, ev->ts, (ev->flags & AS_POLL_READY) ? PTRACK_READY : PTRACK_PENDING);
	if (err)
		return err;
	struct live *l = live_get(t, ev->task);

	if (l && l->free_pending && l->state != LIVE_RUNNING) {
		l->free_pending = false;
		if ((err = close_state(t, l, ev->ts)))
			return err;
		return task_retire(t, l, ev->ts, true);
	}
	return 0;
}

/* What the waking thread is doing: for the start of a flow. */
static void wake_from(const struct ptrack *t, const struct thread *th,
		      const struct as_event *ev, struct ptrack_wake *w)
{
	memset(w, 0, sizeof(*w));
	w->ts = ev->ts;
	w->tid = ev->tid;
	w->flags = ev->flags & (AS_WAKE_IO | AS_WAKE_TIMER);
	if (th && th->depth) {
		const struct frame *top = &th->stack[th->depth - 1];
		const struct live *l = frame_live(t, top);

		w->waker_seq = top->p.task.seq;
		w->in_user_poll = !top->nested && !(l && l->worker);
	}
}

static int on_wake(struct ptrack *t, const struct as_event *ev)
{
	struct live *l = live_get(t, ev->task);
	struct thread *th = thread_get(t, ev->tid);
	int err;

	if (!th)
		return -ENOMEM;
	if (!l) {
		/* first sight: the spawn-time schedule */
		l = task_new(t, ev->task, LIVE_RUNNABLE, ev->ts);
		if (!l)
			return -ENOMEM;
		if (th->spawn_pending) {
			l->info.spawn_id = th->spawn_id;
			l->info.spawn_file = name_of(&t->files, th->spawn_id);
			l->info.spawn_line = th->spawn_line;
			l->info.spawn_col = th->spawn_col;
			th->spawn_pending = false;
		}
		wake_from(t, th, ev, &l->wake);
		l->wake.spawn = true;
		l->has_wake = true;
		return 0;
	}
	switch (l->state) {
	case LIVE_IDLE:
		if ((err = close_state(t, l, ev->ts)))
			return err;
		set_state(t, l, LIVE_RUNNABLE, ev->ts);
		break;
	case LIVE_RUNNING:
		l->woken_in_poll = true;
		break;
	default:
		return 0; /* already runnable, or completed */
	}
	if (!l->has_wake) {
		wake_from(t, th, ev, &l->wake);
		l->has_wake = true;
	}
	return 0;
}

static int on_spawn(struct ptrack *t, const struct as_event *ev)
{
	struct thread *th = thread_get(t, ev->tid);
	int err;

	if (!th)
		return -ENOMEM;
	if ((err = intern(&t->files, ev->str, &th->spawn_id)))
		return err;
	th->spawn_pending = true;
	th->spawn_line = (uint32_t)(ev->other >> 32);
	th->spawn_col = (uint32_t)ev->other;
	return 0;
}

static int on_free(struct ptrack *t, const struct as_event *ev)
{
	struct live *l = live_get(t, ev->task);
	int err;

	if (!l)
		return 0; /* never seen */
	if (l->state == LIVE_RUNNING && l->run_tid == ev->tid) {
		/* Tokio frees a completed task inside its own poll (JoinHandle
		 * gone): retired when that poll ends */
		l->free_pending = true;
		return 0;
	}
	if (l->state == LIVE_RUNNING && (err = unrun(t, l, ev->ts)))
		return err;
	if ((err = close_state(t, l, ev->ts)))
		return err;
	return task_retire(t, l, ev->ts, true);
}

static int on_park(struct ptrack *t, const struct as_event *ev, bool park)
{
	struct thread *th = thread_get(t, ev->tid);
	struct ptrack_out o = { .type = PTRACK_PARKED, .tid = ev->tid };

	if (!th)
		return -ENOMEM;
	if (park) {
		if (!th->parked) {
			th->parked = true;
			th->park_start = ev->ts;
			t->parked++;
		}
		return 0;
	}
	if (!th->parked)
		return 0;
	th->parked = false;
	t->parked--;
	o.from = th->park_start;
	o.to = ev->ts < o.from ? o.from : ev->ts;
	return t->out(t->ctx, &o);
}

static int on_thread(struct ptrack *t, const struct as_event *ev)
{
	struct thread *th = thread_get(t, ev->tid);

	if (!th)
		return -ENOMEM;
	if (!th->name && ev->str && !(th->name = strdup(ev->str)))
		return -ENOMEM;
	return 0;
}

int ptrack__add(struct ptrack *t, const struct as_event *ev)
{
	if (!t || !ev || t->finished)
		return -EINVAL;
	switch (ev->type) {
	case AS_EV_THREAD:
		return on_thread(t, ev);
	case AS_EV_SPAWN:
		return on_spawn(t, ev);
	case AS_EV_PARK:
	case AS_EV_UNPARK:
		return on_park(t, ev, ev->type == AS_EV_PARK);
	case AS_EV_POLL_BEGIN:
	case AS_EV_POLL_END:
	case AS_EV_WAKE:
	case AS_EV_FREE:
		if (ev->task == 0 || ev->task == UINT64_MAX)
			return 0;
		if (ev->type == AS_EV_POLL_BEGIN)
			return on_poll_begin(t, ev);
		if (ev->type == AS_EV_POLL_END)
			return on_poll_end(t, ev);
		if (ev->type == AS_EV_WAKE)
			return on_wake(t, ev);
		return on_free(t, ev);
	default:
		return 0;
	}
}

int ptrack__finish(struct ptrack *t, uint64_t end_ns)
{
	int err;

	if (!t || t->finished)
		return -EINVAL;
	t->finished = true;
	for (size_t i = 0; i < t->n_threads; i++) {
		struct thread *th = t->threads[i];

		while (th->depth) {
			struct frame f = th->stack[--th->depth];

			if ((err = poll_close(t, &f, end_ns, PTRACK_TRACE_END)))
				return err;
		}
		if (th->parked) {
			struct ptrack_out o = { .type = PTRACK_PARKED, .tid = th->tid,
						.from = th->park_start, .to = end_ns };

			if (o.to < o.from)
				o.to = o.from;
			th->parked = false;
			t->parked--;
			if ((err = t->out(t->ctx, &o)))
				return err;
		}
	}
	/* Live tasks, in seq order for a stable output. */
	size_t n = 0;
	struct live **all = malloc((t->live.len ? t->live.len : 1) * sizeof(*all));

	if (!all)
		return -ENOMEM;
	for (size_t i = 0; i < t->live.cap; i++)
		if (t->live.keys[i] != 0 && t->live.keys[i] != UINT64_MAX)
			all[n++] = (struct live *)(uintptr_t)t->live.vals[i];
	for (size_t i = 1; i < n; i++) /* insertion sort by seq: few live tasks */
		for (size_t j = i; j > 0 && all[j - 1]->info.seq > all[j]->info.seq; j--) {
			struct live *x = all[j];

			all[j] = all[j - 1];
			all[j - 1] = x;
		}
	err = 0;
	for (size_t i = 0; i < n && !err; i++) {
		err = close_state(t, all[i], end_ns);
		if (!err)
			err = task_retire(t, all[i], end_ns, false);
		all[i] = NULL;
	}
	free(all);
	return err;
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
	const struct thread *th = t ? thread_find(t, tid) : NULL;

	return th ? th->name : NULL;
}

void ptrack__free(struct ptrack *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->live.cap; i++)
		if (t->live.keys[i] != 0 && t->live.keys[i] != UINT64_MAX)
			free((void *)(uintptr_t)t->live.vals[i]);
	u64map__clear(&t->live);
	for (size_t i = 0; i < t->n_threads; i++) {
		free(t->threads[i]->stack);
		free(t->threads[i]->name);
		free(t->threads[i]);
	}
	free(t->threads);
	u64map__clear(&t->thread_of);
	strtab__clear(&t->names);
	strtab__clear(&t->raws);
	strtab__clear(&t->files);
	free(t->probe_name);
	free(t->probe_raw);
	free(t->worker_raw);
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

static void put_line(struct folded *f, uint32_t tid, const char *name, uint64_t seq, uint64_t ns)
{
	const char *tname = ptrack__thread_name(f->pt, tid);

	if (!ns)
		return;
	put_frame(f->out, tname ? tname : "thread");
	fprintf(f->out, ":%" PRIu32 ";", tid);
	put_frame(f->out, name ? name : "unknown");
	if (seq)
		fprintf(f->out, ";task#%" PRIu64, seq);
	fprintf(f->out, " %" PRIu64 "\n", ns);
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
			put_line(f, tc->c[i].tid, o->task->name, o->task->seq, tc->c[i].ns);
		u64map__del(&f->tasks, o->task->seq);
		free(tc->c);
		free(tc);
		if (ferror(f->out))
			return -EIO;
	}
	return 0;
}

struct folded *folded__new(FILE *out, const struct as_trace_meta *meta, bool per_task)
{
	struct folded *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->out = out;
	f->per_task = per_task;
	f->pt = ptrack__new(meta, folded_out, f);
	if (!f->pt) {
		free(f);
		errno = ENOMEM;
		return NULL;
	}
	return f;
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
		put_line(f, f->cells[i].tid, name_of(&f->pt->names, f->cells[i].name_id), 0,
			 f->cells[i].ns);
	if (fflush(f->out) || ferror(f->out))
		return -EIO;
	return 0;
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

int folded_futures_write(FILE *out, const struct futures *fu, enum futures_graph g,
			 uint64_t *lines, uint64_t *total_ns)
{
	size_t n;
	const struct futures_stack *st = futures__stacks(fu, g, &n);
	uint64_t nl = 0, total = 0;

	if (!out || !fu || !futures__summary(fu))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!st[i].ns)
			continue;
		for (uint32_t j = 0; j < st[i].n; j++) {
			if (j)
				putc(';', out);
			put_frame(out, st[i].frames[j]); /* already clean: belt and braces */
		}
		fprintf(out, " %" PRIu64 "\n", st[i].ns);
		nl++;
		total += st[i].ns;
	}
	if (lines)
		*lines = nl;
	if (total_ns)
		*total_ns = total;
	if (fflush(out) || ferror(out))
		return -EIO;
	return 0;
}
