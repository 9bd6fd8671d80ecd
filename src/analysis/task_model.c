/* task_model: the rules of a task's life (see task_model.h). Live tasks in
 * a map keyed by header (each one allocation holding the observers' bytes
 * too), threads in an array of pointers (stable) found through a map and a
 * small cache by tid (events come in runs per thread), each with its stack of
 * polls in progress. A frame points at its task: a task's frame always goes
 * before the task does (a FREE from another thread first cuts its poll, one
 * from inside its poll waits for the poll's end). Names and spawn files are
 * interned once (util/strtab). Observers are a small fixed table.
 * With a live-task limit (task_model__set_max_live()) each task also has a
 * stamp of its last activity (a clock ticked at each), in a record just
 * before it in its allocation, and a place in a min-heap of the live tasks
 * by stamp, put right lazily (an activity is one store; the heap moves only
 * when a task is born or goes, or when tasks are folded away), and the
 * headers of tasks folded away while not completed are remembered
 * (the last FOLD_REMEMBER * max_live of them, a map and a ring: some 40
 * bytes each against about 1 KiB for a live task in a report) so that their
 * later events are recognised and dropped.
 * Pure C: no libbpf, no I/O, no globals. */
#include "analysis/task_model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "probe/profile.h"
#include "util/glob.h"
#include "util/strtab.h"
#include "util/u64map.h"
#include "util/u64tab.h"

#define THREAD_CACHE 64         /* threads cached by tid % THREAD_CACHE */

/* Per callback, the observers that have it: a call each, nothing to test. */
#define SUB(cb) struct { \
	__typeof__(((struct tm_ops *)0)->cb) fn; \
	void *ctx; \
} cb[TASK_MODEL_MAX_OBSERVERS]; \
	uint8_t n_##cb;

struct subs {
	SUB(thread) SUB(born) SUB(leave) SUB(enter) SUB(poll_begin) SUB(poll_end)
	SUB(worker) SUB(wake) SUB(gone) SUB(park) SUB(unpark) SUB(cut) SUB(finish) SUB(frame)
	SUB(fold)
};

/* A task's place in the order of activity, just before the task itself:
 * its stamp (a clock that ticks at each activity, so the least recently
 * active task has the smallest) and its place in the heap of live tasks. */
struct act {
	uint64_t stamp;
	uint32_t heap_pos;         /* index + 1 into m->heap, 0 none */
	uint32_t hint;             /* its event hint (as_event.hint) in m->by_hint, 0 none */
};
#define ACT_BYTES 16               /* sizeof(struct act), keeps tasks 16-aligned */
#define FOLD_SKIPS 64              /* busy tasks passed over per fold attempt */
#define FOLD_REMEMBER 8            /* folded headers remembered, per max_live */

struct task_model {
	struct subs s;
	size_t n_obs;
	size_t task_size, thread_size;    /* with the observers' bytes */
	bool started, finished;           /* started: an observer comes too late */
	bool frames_only;                 /* task_model__new_frames() */
	bool slow;                        /* finished or frames_only: not the fast path */

	const char **probe_name;          /* per probe: its root future (interned) */
	uint8_t *probe_kind;              /* per probe: TM_NAME_* bits of that name */
	uint32_t n_probes;
	/* the runtime profiles of the trace's runtime (all when it names none
	 * known): what their names of worker loops and pool tasks are */
	const struct runtime_profile *profs[TM_MAX_PROFILES];
	size_t n_profs;
	bool has_meta;
	uint64_t start_ns;                /* meta's clock_mono_ns: the recording's start, 0 */
	struct strtab strs;
	const char **worker_names;        /* root future types of workers (interned) */
	size_t n_worker_names, cap_worker_names;

	struct u64tab live;               /* header -> struct tm_task * */
	/* Live tasks by the hint their events carry (as_event.hint), at
	 * hint & (cap_hint - 1): a task found there is the live one at the
	 * event's header when its header is that (an entry is a live task or
	 * NULL: cleared when that task goes; a hint sharing its place takes it
	 * over), without a lookup in `live`. cap_hint, a power of two, follows
	 * the live tasks (twice as many), not the hints (a source's slots can
	 * run far past the tasks the model keeps: the live-task limit). */
	struct tm_task **by_hint;
	uint32_t cap_hint;
	struct u64map label_of;           /* runtime task id -> strs index + 1 of its name
	                                     (AS_SPAWN_NAME), until the task is seen */
	uint64_t next_seq;
	struct tm_thread **threads;
	size_t n_threads, cap_threads;
	struct u64map thread_of;          /* tid + 1 -> index + 1 */
	struct tm_thread *cache[THREAD_CACHE]; /* by tid % THREAD_CACHE: the last one met */
	uint64_t anomalies;
	struct tm_counts counts;          /* of every event added */

	/* Live-task limit (0 none): the activity order (a min-heap of the live
	 * tasks by the stamp they had when last put in place: a stamp only
	 * grows, so a task whose stamp moved on since is put back in place
	 * when it comes to the top, and the top is then the least recently
	 * active task), the remembered headers of folded tasks (header -> ring
	 * position + 1) and the ring of them, oldest overwritten first. */
	size_t max_live;
	uint64_t clock;                   /* the last stamp given */
	struct heap_ent { uint64_t key; struct tm_task *t; } *heap;
	size_t n_heap, cap_heap;
	struct u64map folded_of;
	uint64_t *ring;                   /* grown up to ring_max, then wraps */
	size_t ring_pos, ring_len, ring_cap, ring_max;
	uint64_t folded, folded_events;
};

/* Publication to every observer that has callback cb. */
#define EMIT(m, cb, ...) do { \
	for (unsigned i_ = 0; i_ < (m)->s.n_##cb; i_++) \
		(m)->s.cb[i_].fn((m)->s.cb[i_].ctx, __VA_ARGS__); \
} while (0)

static size_t align16(size_t n)
{
	return (n + 15) & ~(size_t)15;
}

/* Interns s; returns the copy (NULL for NULL s) and *id (1 + index, 0
 * NULL), or NULL with *err = -ENOMEM. */
static const char *intern(struct task_model *m, const char *s, uint32_t *id, int *err)
{
	size_t len;
	uint32_t idx;

	*id = 0;
	if (!s)
		return NULL;
	len = strlen(s);
	int added = strtab__intern(&m->strs, s, len, &idx);
	if (added < 0) {
		*err = added;
		return NULL;
	}
	*id = idx + 1;
	return strtab__get(&m->strs, idx);
}

static int add_worker_name(struct task_model *m, const char *name);

struct task_model *task_model__new(const struct as_trace_meta *meta)
{
	struct task_model *m = calloc(1, sizeof(*m));
	int err = 0;
	uint32_t id;

	if (!m)
		return NULL;
	m->counts.min_ts = UINT64_MAX;
	m->task_size = align16(sizeof(struct tm_task));
	m->thread_size = align16(sizeof(struct tm_thread));
	m->has_meta = meta != NULL;
	m->start_ns = meta ? meta->clock_mono_ns : 0;
	int np = meta && meta->runtime ? profile_parse(meta->runtime, m->profs, TM_MAX_PROFILES,
						       NULL, 0) : -EINVAL;
	if (np > 0) {
		m->n_profs = (size_t)np;
	} else {
		for (m->n_profs = 0; profiles[m->n_profs] && m->n_profs < TM_MAX_PROFILES; m->n_profs++)
			m->profs[m->n_profs] = profiles[m->n_profs];
	}
	if (meta && meta->probes && meta->n_probes) {
		m->probe_name = calloc(meta->n_probes, sizeof(*m->probe_name));
		m->probe_kind = calloc(meta->n_probes, sizeof(*m->probe_kind));
		if (!m->probe_name || !m->probe_kind)
			goto fail;
		m->n_probes = meta->n_probes;
		for (uint32_t i = 0; i < meta->n_probes; i++) {
			m->probe_name[i] = intern(m, meta->probes[i].future, &id, &err);
			if (err)
				goto fail;
			m->probe_kind[i] = (uint8_t)task_model__name_kind(m, m->probe_name[i]);
			/* a worker's loop by its name, from its first poll */
			if ((m->probe_kind[i] & TM_NAME_LOOP) && add_worker_name(m, m->probe_name[i]))
				goto fail;
		}
	}
	return m;
fail:
	task_model__free(m);
	errno = ENOMEM;
	return NULL;
}

struct task_model *task_model__new_frames(const struct as_trace_meta *meta)
{
	struct task_model *m = task_model__new(meta);

	if (m)
		m->frames_only = m->slow = true;
	return m;
}

int task_model__observe(struct task_model *m, const struct tm_ops *ops, void *ctx,
			size_t task_bytes, size_t *task_off, size_t thread_bytes,
			size_t *thread_off)
{
	if (!m || !ops)
		return -EINVAL;
	if (m->started || m->n_threads || m->next_seq)
		return -EBUSY;
	if (m->n_obs == TASK_MODEL_MAX_OBSERVERS)
		return -ENOSPC;
#define ADD(cb) do { \
	if (ops->cb) { \
		m->s.cb[m->s.n_##cb].fn = ops->cb; \
		m->s.cb[m->s.n_##cb].ctx = ctx; \
		m->s.n_##cb++; \
	} \
} while (0)
	ADD(thread); ADD(born); ADD(leave); ADD(enter); ADD(poll_begin); ADD(poll_end);
	ADD(worker); ADD(wake); ADD(gone); ADD(park); ADD(unpark); ADD(cut); ADD(finish);
	ADD(frame); ADD(fold);
#undef ADD
	m->n_obs++;
	if (task_off)
		*task_off = m->task_size;
	m->task_size += align16(task_bytes);
	if (thread_off)
		*thread_off = m->thread_size;
	m->thread_size += align16(thread_bytes);
	return 0;
}

/* to - from, or 0 (and an anomaly) if the events came out of order. */
static uint64_t span(struct task_model *m, uint64_t from, uint64_t to)
{
	if (to >= from)
		return to - from;
	m->anomalies++;
	return 0;
}

static struct tm_thread *thread_find(struct task_model *m, uint32_t tid)
{
	struct tm_thread *th = m->cache[tid % THREAD_CACHE];
	uint64_t v;

	if (th && th->tid == tid)
		return th;
	if (!u64map__get(&m->thread_of, (uint64_t)tid + 1, &v))
		return NULL;
	return m->cache[tid % THREAD_CACHE] = m->threads[v - 1];
}

static struct tm_thread *thread_get(struct task_model *m, uint32_t tid, uint64_t ts)
{
	struct tm_thread *th = thread_find(m, tid);

	if (th)
		return th;
	if (m->n_threads == m->cap_threads) {
		size_t ncap = m->cap_threads ? m->cap_threads * 2 : 16;
		struct tm_thread **p = realloc(m->threads, ncap * sizeof(*p));

		if (!p)
			return NULL;
		m->threads = p;
		m->cap_threads = ncap;
	}
	th = calloc(1, m->thread_size);
	if (!th)
		return NULL;
	if (u64map__set(&m->thread_of, (uint64_t)tid + 1, m->n_threads + 1)) {
		free(th);
		return NULL;
	}
	th->tid = tid;
	th->idx = (uint32_t)m->n_threads;
	m->threads[m->n_threads++] = th;
	m->cache[tid % THREAD_CACHE] = th;
	EMIT(m, thread, th, ts);
	return th;
}

static struct act *act_of(const struct tm_task *t);

#define HINT_MIN 1024
#define HINT_MAX (1u << 20)

/* Remembers t under hint h (as_event.hint). */
static void hint_set(struct task_model *m, uint32_t h, struct tm_task *t)
{
	struct act *n = act_of(t);

	if (m->cap_hint < HINT_MAX && m->live.len * 2 > m->cap_hint) {
		/* grown to twice the live tasks, the entries put back in place */
		uint32_t ncap = m->cap_hint ? m->cap_hint : HINT_MIN;
		struct tm_task **p;

		while (ncap < HINT_MAX && ncap < m->live.len * 2)
			ncap *= 2;
		p = calloc(ncap, sizeof(*p));
		if (p) {
			for (uint32_t i = 0; i < m->cap_hint; i++)
				if (m->by_hint[i])
					p[act_of(m->by_hint[i])->hint & (ncap - 1)] = m->by_hint[i];
			free(m->by_hint);
			m->by_hint = p;
			m->cap_hint = ncap;
		} else if (!m->cap_hint) {
			return;   /* a hint only */
		}
	}
	uint32_t mask = m->cap_hint - 1;

	if (n->hint && (n->hint & mask) != (h & mask) && m->by_hint[n->hint & mask] == t)
		m->by_hint[n->hint & mask] = NULL;
	m->by_hint[h & mask] = t;
	n->hint = h;
}

/* The live task of event ev (ev->task), or NULL: through its hint when
 * that leads to the task at that header, else by header. */
static inline struct tm_task *live_of(struct task_model *m, const struct as_event *ev);

static struct tm_task *live_get(const struct task_model *m, uint64_t header)
{
	uint64_t v;

	return u64tab__get(&m->live, header, &v) ? (struct tm_task *)(uintptr_t)v : NULL;
}

static struct act *act_of(const struct tm_task *t)
{
	return (struct act *)((char *)t - ACT_BYTES);
}

static inline struct tm_task *live_of(struct task_model *m, const struct as_event *ev)
{
	uint32_t h = ev->hint;
	struct tm_task *t;

	if (h && m->cap_hint && (t = m->by_hint[h & (m->cap_hint - 1)]) && t->header == ev->task)
		return t;
	t = live_get(m, ev->task);
	if (t && h)
		hint_set(m, h, t);
	return t;
}

static struct tm_task *act_task(struct act *n)
{
	return (struct tm_task *)((char *)n + ACT_BYTES);
}

static inline void heap_put(struct task_model *m, size_t i, struct heap_ent e)
{
	m->heap[i] = e;
	act_of(e.t)->heap_pos = (uint32_t)(i + 1);
}

static void heap_up(struct task_model *m, size_t i)
{
	struct heap_ent e = m->heap[i];

	while (i > 0 && m->heap[(i - 1) / 2].key > e.key) {
		heap_put(m, i, m->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_put(m, i, e);
}

static void heap_down(struct task_model *m, size_t i)
{
	struct heap_ent e = m->heap[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= m->n_heap)
			break;
		if (c + 1 < m->n_heap && m->heap[c + 1].key < m->heap[c].key)
			c++;
		if (m->heap[c].key >= e.key)
			break;
		heap_put(m, i, m->heap[c]);
		i = c;
	}
	heap_put(m, i, e);
}

/* t is active now: the latest stamp (its heap place is fixed lazily). */
static inline void touch(struct task_model *m, struct tm_task *t)
{
	if (m->max_live)
		act_of(t)->stamp = ++m->clock;
}

static void task_release(struct task_model *m, struct tm_task *t)
{
	struct act *n = act_of(t);

	if (n->hint && m->by_hint[n->hint & (m->cap_hint - 1)] == t)
		m->by_hint[n->hint & (m->cap_hint - 1)] = NULL;

	if (m->max_live && n->heap_pos) {
		size_t i = n->heap_pos - 1;

		if (i != --m->n_heap) {
			heap_put(m, i, m->heap[m->n_heap]);
			heap_down(m, i);
			heap_up(m, i);
		}
	}
	free(n);
}

/* Remembers header as a folded task's (the oldest remembered one
 * forgotten once the ring is full). */
static void remember(struct task_model *m, uint64_t header)
{
	uint64_t v, old;

	if (m->ring_len == m->ring_cap && m->ring_cap < m->ring_max) {
		/* not wrapped yet: ring_pos == ring_len */
		size_t ncap = m->ring_cap ? m->ring_cap * 2 : 1024;
		uint64_t *p;

		if (ncap > m->ring_max)
			ncap = m->ring_max;
		p = realloc(m->ring, ncap * sizeof(*p));
		if (!p)
			return; /* out of memory: its later events make a new task */
		m->ring = p;
		m->ring_cap = ncap;
	}
	if (m->ring_len == m->ring_cap) {
		old = m->ring[m->ring_pos];
		if (u64map__get(&m->folded_of, old, &v) && v == m->ring_pos + 1)
			u64map__del(&m->folded_of, old);
		m->ring_len--;
	}
	if (u64map__set(&m->folded_of, header, m->ring_pos + 1))
		return; /* out of memory: its later events make a new task */
	m->ring[m->ring_pos] = header;
	m->ring_pos = (m->ring_pos + 1) % m->ring_cap;
	m->ring_len++;
}

/* Whether header is a remembered folded task's (not a live one's). */
static bool is_folded(const struct task_model *m, uint64_t header)
{
	uint64_t v;

	return m->folded_of.len && u64map__get(&m->folded_of, header, &v);
}

/* Folds the least recently active tasks past max_live, at ts: published
 * (fold()), remembered unless completed, freed. Tasks on a stack (running,
 * or freed inside their poll) and workers are passed over (moved to the
 * front), at most FOLD_SKIPS of them per call. */
static void fold_some(struct task_model *m, uint64_t ts)
{
	unsigned skips = 0;

	while (m->live.len > m->max_live && m->n_heap) {
		struct tm_task *t = m->heap[0].t;
		uint64_t stamp = act_of(t)->stamp;

		if (m->heap[0].key != stamp) {   /* active since it was put there */
			m->heap[0].key = stamp;
			heap_down(m, 0);
			continue;
		}
		if (t->state == TM_RUNNING || t->free_pending || t->worker) {
			if (++skips > FOLD_SKIPS)
				return;
			m->heap[0].key = act_of(t)->stamp = ++m->clock;   /* the most recent */
			heap_down(m, 0);
			continue;
		}
		EMIT(m, fold, t, ts);
		if (t->state != TM_COMPLETED)
			remember(m, t->header);
		u64tab__del(&m->live, t->header);
		m->folded++;
		task_release(m, t);
	}
}

/* A new task at header, state TM_RUNNING until told otherwise; NULL out of
 * memory. Published by the caller (born()) once its fields are set; then
 * tasks past the limit are folded (fold_some()). */
static struct tm_task *task_new(struct task_model *m, uint64_t header, uint64_t ts)
{
	struct act *n = calloc(1, ACT_BYTES + m->task_size);
	struct tm_task *t;

	(void)ts;
	if (!n)
		return NULL;
	t = act_task(n);
	if (m->max_live && m->n_heap == m->cap_heap) {
		size_t ncap = m->cap_heap ? m->cap_heap * 2 : 1024;
		struct heap_ent *p = realloc(m->heap, ncap * sizeof(*p));

		if (!p) {
			free(n);
			return NULL;
		}
		m->heap = p;
		m->cap_heap = ncap;
	}
	if (u64tab__set(&m->live, header, (uint64_t)(uintptr_t)t)) {
		free(n);
		return NULL;
	}
	if (m->max_live) {
		n->stamp = ++m->clock;
		m->heap[m->n_heap++] = (struct heap_ent){ .key = n->stamp, .t = t };
		heap_up(m, m->n_heap - 1);
		/* (adopt()) a new task there now: forgotten, its ring entry stale */
		if (m->folded_of.len)
			u64map__del(&m->folded_of, header);
	}
	t->seq = ++m->next_seq;
	t->header = header;
	return t;
}

/* t enters s (TM_RUNNABLE or TM_IDLE) at ts. */
static inline __attribute__((always_inline)) void enter(struct task_model *m, struct tm_task *t, enum tm_state s, uint64_t ts)
{
	t->state = s;
	t->since = ts;
	t->wakers_known = false;   /* a note holds for the idle state it came in */
	EMIT(m, enter, t, ts);
}

/* t leaves its runnable or idle state at ts. */
static inline __attribute__((always_inline)) void leave(struct task_model *m, struct tm_task *t, uint64_t ts, enum tm_by by)
{
	uint64_t d;

	if (t->state != TM_RUNNABLE && t->state != TM_IDLE)
		return;
	d = span(m, t->since, ts);
	EMIT(m, leave, t, ts, d, by);
}

/* t goes (it was neither running nor on a stack). */
static void retire(struct task_model *m, struct tm_task *t, uint64_t ts, bool freed)
{
	t->state = TM_COMPLETED;
	u64tab__del(&m->live, t->header);
	EMIT(m, gone, t, ts, freed);
	task_release(m, t);
}

/* The poll of frame f (off th's stack) ends at ts. */
static void poll_close(struct task_model *m, struct tm_thread *th, const struct tm_frame *f,
		       uint64_t ts, enum tm_end how)
{
	struct tm_task *t = f->task;
	uint64_t d = span(m, f->begin, ts);

	EMIT(m, poll_end, th, f, ts, d, how);
	switch (how) {
	case TM_CUT:
		m->anomalies++;
		if (t->state == TM_RUNNING) {
			/* unknown outcome: assume Pending */
			enter(m, t, t->woken_in_poll ? TM_RUNNABLE : TM_IDLE, ts);
			t->woken_in_poll = false;
		}
		return;
	case TM_TRACE_END:
		return;
	case TM_READY:
		t->state = TM_COMPLETED;
		return;
	case TM_PENDING:
		enter(m, t, t->woken_in_poll ? TM_RUNNABLE : TM_IDLE, ts);
		t->woken_in_poll = false;
		return;
	}
}

/* Removes frame i from th's stack, closing it as cut short at ts. */
static void frame_drop(struct task_model *m, struct tm_thread *th, size_t i, uint64_t ts)
{
	struct tm_frame f = th->stack[i];

	memmove(&th->stack[i], &th->stack[i + 1], (th->depth - i - 1) * sizeof(*th->stack));
	th->depth--;
	poll_close(m, th, &f, ts, TM_CUT);
}

/* A running task's poll must be closed (freed, or polled again while running). */
static void unrun(struct task_model *m, struct tm_task *t, uint64_t ts)
{
	struct tm_thread *th = thread_find(m, t->run_tid);

	if (th)
		for (size_t i = th->depth; i-- > 0;)
			if (th->stack[i].task == t) {
				frame_drop(m, th, i, ts);
				return;
			}
	m->anomalies++;
	enter(m, t, TM_IDLE, ts);
}

static void make_worker_one(struct task_model *m, struct tm_task *t)
{
	if (t->worker)
		return;
	t->worker = true;
	EMIT(m, worker, t);
}

static bool worker_name(const struct task_model *m, const char *name)
{
	for (size_t i = 0; name && i < m->n_worker_names; i++)
		if (m->worker_names[i] == name) /* interned: one pointer per string */
			return true;
	return false;
}

/* name (interned) is a worker loop's root future type from now on. */
static int add_worker_name(struct task_model *m, const char *name)
{
	if (!name || worker_name(m, name))
		return 0;
	if (m->n_worker_names == m->cap_worker_names) {
		size_t ncap = m->cap_worker_names ? m->cap_worker_names * 2 : 4;
		const char **p = realloc(m->worker_names, ncap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		m->worker_names = p;
		m->cap_worker_names = ncap;
	}
	m->worker_names[m->n_worker_names++] = name;
	return 0;
}

static bool glob_any(const char *const *pats, const char *s)
{
	for (size_t i = 0; pats && pats[i]; i++)
		if (glob_match(pats[i], s))
			return true;
	return false;
}

unsigned task_model__name_kind(const struct task_model *m, const char *name)
{
	for (size_t i = 0; name && m && i < m->n_profs; i++) {
		const struct runtime_profile *p = m->profs[i];

		if (p->worker_loops && glob_match(p->worker_loops, name))
			return TM_NAME_LOOP | (glob_any(p->handoff_loops, name) ? TM_NAME_HANDOFF : 0);
		if (p->pool_tasks && glob_match(p->pool_tasks, name))
			return TM_NAME_POOL;
	}
	return 0;
}

unsigned task_model__frame_kind(const struct task_model *m, const char *sym)
{
	for (size_t i = 0; sym && m && i < m->n_profs; i++) {
		if (glob_any(m->profs[i]->pool_frames, sym))
			return TM_NAME_POOL;
		if (glob_any(m->profs[i]->handoff_frames, sym))
			return TM_NAME_HANDOFF;
	}
	return 0;
}

/* A poll began inside frame f: its task is the runtime's loop, and so is
 * every task with the same root future type polled outermost on its thread
 * now (an idle worker has nothing nested in its poll but the same type);
 * later ones when they begin. */
static int make_worker(struct task_model *m, const struct tm_frame *f)
{
	const char *name = f->task->name;

	make_worker_one(m, f->task);
	if (!name || worker_name(m, name))
		return 0;
	if (add_worker_name(m, name))
		return -ENOMEM;
	for (size_t i = 0; i < m->n_threads; i++)
		if (m->threads[i]->depth && m->threads[i]->stack[0].task->name == name) {
			make_worker_one(m, m->threads[i]->stack[0].task);
			m->threads[i]->runs_tasks = true;
		}
	return 0;
}

__attribute__((noinline)) static int on_poll_begin(struct task_model *m, const struct as_event *ev)
{
	struct tm_thread *th = thread_get(m, ev->tid, ev->ts);
	struct tm_task *t;
	bool born = false;
	int err;

	if (!th)
		return -ENOMEM;
	t = live_of(m, ev);
	if (t && t->state == TM_COMPLETED) {
		/* polled after completing: its FREE was lost and the address reused */
		m->anomalies++;
		retire(m, t, ev->ts, false);
		t = NULL;
	}
	if (t && t->state == TM_RUNNING)
		unrun(m, t, ev->ts);
	if (th->depth == th->cap) {
		size_t ncap = th->cap ? th->cap * 2 : 8;
		struct tm_frame *p = realloc(th->stack, ncap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		th->stack = p;
		th->cap = ncap;
	}
	if (!t) {
		t = task_new(m, ev->task, ev->ts);
		if (!t)
			return -ENOMEM;
		if (ev->hint)
			hint_set(m, ev->hint, t);
		born = true;
	} else {
		leave(m, t, ev->ts, TM_BY_POLL);
		touch(m, t);
	}
	if (!t->polled) {
		t->probe = ev->probe;
		if (ev->probe < m->n_probes) {
			t->name = m->probe_name[ev->probe];
			t->name_kind = m->probe_kind[ev->probe];
		}
		t->polled = true;
	}
	if (!t->tokio_id && ev->other) {
		uint64_t v;
		t->tokio_id = ev->other;
		if (m->label_of.len && u64map__get(&m->label_of, ev->other, &v)) {
			t->label = strtab__get(&m->strs, (uint32_t)(v - 1));
			u64map__del(&m->label_of, ev->other);
		}
	}
	if (born)
		EMIT(m, born, t, th, ev);
	/* Another task of the type of this thread's outermost poll, a worker's
	 * loop: loops do not nest, so the outer one returned unseen (a worker's
	 * loop has no return probe: the profile's endless_polls) and its thread
	 * now runs the next, as Tokio's blocking pool does with a worker it had
	 * not started yet at shutdown: that loop's task completed. */
	while (th->depth && t->name && th->stack[0].task != t && th->stack[0].task->worker &&
	       th->stack[0].task->name == t->name) {
		struct tm_frame f = th->stack[--th->depth];
		poll_close(m, th, &f, ev->ts, th->depth ? TM_CUT : TM_READY);
	}
	if (th->depth) {
		th->stack[th->depth - 1].nested = true;
		if ((err = make_worker(m, &th->stack[th->depth - 1])))
			return err;
	}
	th->stack[th->depth++] = (struct tm_frame){ .task = t, .begin = ev->ts };
	t->state = TM_RUNNING;
	t->run_tid = ev->tid;
	t->woken_in_poll = false;
	if (th->depth == 1 && worker_name(m, t->name))
		make_worker_one(m, t);
	/* a thread that polls tasks is a worker, not one of the blocking
	 * pool's polling only its tasks */
	if (!(t->name_kind & TM_NAME_POOL) || t->worker)
		th->runs_tasks = true;
	EMIT(m, poll_begin, t, th, ev);
	if (born && m->max_live && m->live.len > m->max_live)
		fold_some(m, ev->ts);
	return 0;
}

static int on_free(struct task_model *m, const struct as_event *ev, struct tm_task *t);

__attribute__((noinline)) static int on_poll_end(struct task_model *m, const struct as_event *ev)
{
	struct tm_thread *th = thread_get(m, ev->tid, ev->ts);
	struct tm_task *t;
	struct tm_frame f;
	size_t i;

	if (!th)
		return -ENOMEM;
	th->spawn_pending = false;
	for (i = th->depth; i-- > 0;)
		if (th->stack[i].task->header == ev->task)
			break;
	if (i == (size_t)-1) {
		m->anomalies++; /* begin not seen (attached mid-poll) or lost */
		return 0;
	}
	while (th->depth > i + 1)
		frame_drop(m, th, th->depth - 1, ev->ts);
	f = th->stack[--th->depth];
	t = f.task;
	touch(m, t);
	poll_close(m, th, &f, ev->ts, (ev->flags & AS_POLL_READY) ? TM_READY : TM_PENDING);
	if (t->free_pending && t->state != TM_RUNNING) {
		t->free_pending = false;
		return on_free(m, ev, t);
	}
	return 0;
}

__attribute__((noinline)) static int on_wake(struct task_model *m, const struct as_event *ev)
{
	struct tm_task *t = live_of(m, ev);
	struct tm_thread *th;
	struct tm_wake w;

	if (!t) {
		/* first sight: the spawn-time schedule, not a wake */
		th = thread_get(m, ev->tid, ev->ts);
		if (!th)
			return -ENOMEM;
		t = task_new(m, ev->task, ev->ts);
		if (!t)
			return -ENOMEM;
		if (ev->hint)
			hint_set(m, ev->hint, t);
		t->spawned_in_trace = true;
		if (th->spawn_pending) {
			t->spawn_file = th->spawn_file;
			t->spawn_id = th->spawn_id;
			t->spawn_line = th->spawn_line;
			t->spawn_col = th->spawn_col;
			t->parent = th->spawn_parent;
			th->spawn_pending = false;
		}
		EMIT(m, born, t, th, ev);
		enter(m, t, TM_RUNNABLE, ev->ts);
		if (m->max_live && m->live.len > m->max_live)
			fold_some(m, ev->ts);
		return 0;
	}
	touch(m, t);
	th = thread_find(m, ev->tid);
	w = (struct tm_wake){ .state = t->state, .self = ev->other == ev->task, .thread = th,
			      .again = t->state == TM_RUNNABLE ||
				       (t->state == TM_RUNNING && t->woken_in_poll) };
	if (ev->flags & AS_WAKE_IO)
		w.kind = TM_WAKER_IO;
	else if (ev->flags & AS_WAKE_TIMER)
		w.kind = TM_WAKER_TIMER;
	else if (!ev->other)
		w.kind = TM_WAKER_THREAD;
	/* the waker: the task polled on the waking thread, as a rule (a task on
	 * a stack is the live one at its header) */
	else if ((w.waker = th && th->depth && th->stack[th->depth - 1].task->header == ev->other
			    ? th->stack[th->depth - 1].task : live_get(m, ev->other)))
		w.kind = TM_WAKER_TASK;
	else
		w.kind = TM_WAKER_RUNTIME; /* a poll begun before the recording */
	EMIT(m, wake, t, ev, &w);
	switch (t->state) {
	case TM_COMPLETED:
		m->anomalies++;
		break;
	case TM_IDLE:
		leave(m, t, ev->ts, TM_BY_WAKE);
		enter(m, t, TM_RUNNABLE, ev->ts);
		break;
	case TM_RUNNING:
		t->woken_in_poll = true;
		break;
	case TM_RUNNABLE:
		break; /* already runnable: the clock keeps running */
	}
	return 0;
}

/* A task a note declares (ev: task its header, other its runtime task id,
 * str its root future type), not seen before: born at ts in state `state`
 * (as task_model__adopt(), known by id and name at its birth). NULL: folded
 * at once, or out of memory (*err). */
static struct tm_task *born_known(struct task_model *m, const struct as_event *ev, uint64_t ts,
				  enum tm_state state, int *err)
{
	const char *name = NULL;
	struct tm_task *t;
	uint32_t id;

	if (ev->str && ev->str[0] && !(name = intern(m, ev->str, &id, err)))
		return NULL;
	if (!(t = task_new(m, ev->task, ts))) {
		*err = -ENOMEM;
		return NULL;
	}
	t->tokio_id = ev->other;
	t->name = name;
	t->name_kind = (uint8_t)task_model__name_kind(m, name);
	EMIT(m, born, t, NULL, &(struct as_event){ .ts = ts, .task = ev->task });
	enter(m, t, state, ts);
	if (m->max_live && m->live.len > m->max_live)
		fold_some(m, ts);
	return live_get(m, ev->task);
}

/* A note of a task in one poll on thread ev->tid since before the
 * recording (AS_SPAWN_BEFORE | AS_SPAWN_RUNNING): its poll, begun at since,
 * open on that thread, which polled nothing else meanwhile (else the note
 * is wrong, and dropped); the end closes it as still running. */
static int running_before(struct task_model *m, const struct as_event *ev, uint64_t since)
{
	struct tm_thread *th = thread_get(m, ev->tid, since);
	const char *name = NULL;
	struct tm_task *t;
	uint32_t id;
	int err = 0;

	if (!th)
		return -ENOMEM;
	if (th->depth) {
		m->anomalies++;
		return 0;
	}
	if (!th->cap) {
		if (!(th->stack = malloc(8 * sizeof(*th->stack))))
			return -ENOMEM;
		th->cap = 8;
	}
	if (ev->str && ev->str[0] && !(name = intern(m, ev->str, &id, &err)))
		return err;
	if (!(t = task_new(m, ev->task, since)))
		return -ENOMEM;
	t->tokio_id = ev->other;
	t->name = name;
	t->name_kind = (uint8_t)task_model__name_kind(m, name);
	t->polled = true;
	t->before = true;
	const struct as_event begin = { .type = AS_EV_POLL_BEGIN, .tid = ev->tid, .ts = since,
					.task = ev->task, .other = ev->other };

	EMIT(m, born, t, th, &begin);
	th->stack[th->depth++] = (struct tm_frame){ .task = t, .begin = since };
	t->state = TM_RUNNING;
	t->run_tid = ev->tid;
	if (!(t->name_kind & TM_NAME_POOL))
		th->runs_tasks = true;
	EMIT(m, poll_begin, t, th, &begin);
	if (m->max_live && m->live.len > m->max_live)
		fold_some(m, ev->ts);
	return 0;
}

__attribute__((noinline)) static int on_spawn(struct task_model *m, const struct as_event *ev)
{
	struct tm_thread *th;
	int err = 0;

	if (ev->flags & AS_SPAWN_BEFORE) {
		/* no spawn: a task found in memory at the end, of which no event
		 * came: idle (or runnable) since before the recording began */
		if (!ev->task || ev->task == UINT64_MAX || live_get(m, ev->task))
			return 0;
		uint64_t since = m->start_ns && m->start_ns <= ev->ts ? m->start_ns
				 : m->counts.min_ts;
		if (ev->flags & AS_SPAWN_RUNNING)
			return running_before(m, ev, since);
		struct tm_task *t = born_known(m, ev, since,
					       ev->flags & AS_SPAWN_QUEUED ? TM_RUNNABLE : TM_IDLE,
					       &err);
		if (t)
			t->before = true;
		return err;
	}
	if (ev->flags & AS_SPAWN_WAKERS) {
		/* no spawn: what held an idle task when the recording ended */
		struct tm_task *t = ev->task && ev->task != UINT64_MAX ? live_get(m, ev->task) : NULL;

		if (t && t->state == TM_IDLE) {
			t->wakers = ev->other > UINT32_MAX ? UINT32_MAX : (uint32_t)ev->other;
			t->wakers_known = true;
		}
		return 0;
	}
	if (!(th = thread_get(m, ev->tid, ev->ts)))
		return -ENOMEM;
	if ((ev->flags & AS_SPAWN_TASK) && ev->task && ev->task != UINT64_MAX) {
		/* a profile trace's task, known by id (no poll): born idle (its
		 * state unknown), named; the runtime's own a worker */
		struct tm_task *t = live_get(m, ev->task);

		if (!t) {
			if (!(t = born_known(m, ev, ev->ts, TM_IDLE, &err)))
				return err;   /* folded at once, or no memory */
		} else {
			const char *name = NULL;
			uint32_t id;

			if (ev->str && ev->str[0] && !(name = intern(m, ev->str, &id, &err)))
				return err;
			if (!t->tokio_id)
				t->tokio_id = ev->other;
			if (!t->name) {
				t->name = name;
				t->name_kind = (uint8_t)task_model__name_kind(m, name);
			}
		}
		if ((ev->flags & AS_SPAWN_RUNTIME) && !t->worker)
			make_worker_one(m, t);
		return 0;
	}
	if (ev->flags & AS_SPAWN_NAME) {
		/* a name for the task of that id, met at its first poll */
		uint32_t id;
		if (!ev->str || !ev->str[0] || !ev->other || ev->other == UINT64_MAX)
			return 0;
		if (!intern(m, ev->str, &id, &err))
			return err ? err : 0;
		return u64map__set(&m->label_of, ev->other, id);
	}
	/* no file: a spawn whose call site was not found (parent still known) */
	th->spawn_file = ev->str && ev->str[0] ? intern(m, ev->str, &th->spawn_id, &err) : NULL;
	if (!th->spawn_file)
		th->spawn_id = 0;
	if (err)
		return err;
	th->spawn_pending = true;
	th->spawn_line = (uint32_t)(ev->other >> 32);
	th->spawn_col = (uint32_t)ev->other;
	th->spawn_parent = th->depth ? th->stack[th->depth - 1].task->seq : 0;
	return 0;
}

/* FREE of t (or its retirement when the poll it was freed in ends). */
static int on_free(struct task_model *m, const struct as_event *ev, struct tm_task *t)
{
	if (t->state == TM_RUNNING && t->run_tid == ev->tid && ev->type == AS_EV_FREE) {
		/* Tokio frees a completed task from inside its own poll (when its
		 * JoinHandle is gone): retire it when that poll ends. */
		t->free_pending = true;
		return 0;
	}
	if (t->state == TM_RUNNING)
		unrun(m, t, ev->ts);   /* freed from elsewhere: its end was lost */
	leave(m, t, ev->ts, TM_BY_FREE);
	retire(m, t, ev->ts, true);
	return 0;
}

__attribute__((noinline)) static int on_thread(struct task_model *m, const struct as_event *ev)
{
	struct tm_thread *th = thread_get(m, ev->tid, ev->ts);
	uint32_t id;
	int err = 0;

	if (!th)
		return -ENOMEM;
	if (!th->name)
		th->name = intern(m, ev->str, &id, &err);
	return err;
}

static int on_park(struct task_model *m, const struct as_event *ev, bool park)
{
	struct tm_thread *th = thread_get(m, ev->tid, ev->ts);
	uint64_t d;

	if (!th)
		return -ENOMEM;
	th->runs_tasks = true;
	if (park) {
		if (th->parked) {
			m->anomalies++; /* keep the first PARK */
			return 0;
		}
		th->parked = true;
		th->park_start = ev->ts;
		EMIT(m, park, th, ev->ts);
		return 0;
	}
	if (!th->parked) {
		m->anomalies++; /* parked before the recording started, or PARK lost */
		return 0;
	}
	d = span(m, th->park_start, ev->ts);
	th->parked = false;
	EMIT(m, unpark, th, th->park_start, ev->ts, d);
	return 0;
}

/* A future frame entered or left on ev->tid (see the top of task_model.h).
 * Events of a probe index outside the probes are ignored. */
__attribute__((noinline)) static int on_frame(struct task_model *m, const struct as_event *ev)
{
	struct tm_thread *th;
	uint32_t d = AS_FUT_DEPTH(ev->other);

	if (!m->has_meta || ev->probe >= m->n_probes)
		return 0;
	th = ev->type == AS_EV_FUTURE_ENTER ? thread_get(m, ev->tid, ev->ts)
					    : thread_find(m, ev->tid);
	if (!th)
		return ev->type == AS_EV_FUTURE_ENTER ? -ENOMEM : 0;
	if (ev->type == AS_EV_FUTURE_EXIT) {
		/* an exit deeper than what is open (its entry lost) closes nothing:
		 * levels never entered are not made up */
		if (!th->fut_seen || d >= th->fut_depth)
			return 0;
		th->fut_depth = d;   /* this frame and any left open inside it are gone */
		EMIT(m, frame, th, ev);
		return 0;
	}
	if (!th->fut) {
		th->fut = malloc(TM_FUT_MAX * sizeof(*th->fut));
		if (!th->fut)
			return -ENOMEM;
	}
	th->fut_seen = true;
	/* levels skipped (lost entries) are unknown, not stale */
	for (uint32_t k = th->fut_depth; k < d && k < TM_FUT_MAX; k++)
		th->fut[k] = TM_FUT_UNKNOWN;
	if (d < TM_FUT_MAX)
		th->fut[d] = ev->probe;
	th->fut_depth = d + 1;
	EMIT(m, frame, th, ev);
	return 0;
}

/* A frames-only model (task_model__new_frames()): threads, parks, frames. */
static __attribute__((noinline)) int add_frames_only(struct task_model *m, const struct as_event *ev)
{
	switch (ev->type) {
	case AS_EV_THREAD:
		return on_thread(m, ev);
	case AS_EV_PARK:
		return on_park(m, ev, true);
	case AS_EV_UNPARK:
		return on_park(m, ev, false);
	case AS_EV_FUTURE_ENTER:
	case AS_EV_FUTURE_EXIT:
		return on_frame(m, ev);
	default:
		return 0;
	}
}

/* An event for a folded task (its header remembered, no live task there):
 * counted and dropped (true). Its FREE forgets it: the address may be
 * reused by a new task. */
static __attribute__((noinline)) bool folded_drop(struct task_model *m, const struct as_event *ev)
{
	struct tm_thread *th;

	if (live_get(m, ev->task) || !is_folded(m, ev->task))
		return false;
	m->folded_events++;
	if (ev->type == AS_EV_FREE)
		u64map__del(&m->folded_of, ev->task);
	if (ev->type == AS_EV_POLL_END && (th = thread_find(m, ev->tid)))
		th->spawn_pending = false; /* as any POLL_END does */
	return true;
}

int task_model__add(struct task_model *m, const struct as_event *ev)
{
	struct tm_task *t;

	if (__builtin_expect(!m || !ev || m->finished, 0))
		return -EINVAL;
	m->counts.events++;
	if (ev->ts < m->counts.min_ts)
		m->counts.min_ts = ev->ts;
	if (ev->ts > m->counts.max_ts)
		m->counts.max_ts = ev->ts;
	if (__builtin_expect(ev->type == 0 || ev->type >= AS_EV__MAX, 0))
		m->counts.bad_types++;
	if (__builtin_expect(m->slow, 0))
		return add_frames_only(m, ev);
	switch (ev->type) {
	case AS_EV_THREAD:
		return on_thread(m, ev);
	case AS_EV_SPAWN:
		return on_spawn(m, ev);
	case AS_EV_PARK:
		return on_park(m, ev, true);
	case AS_EV_UNPARK:
		return on_park(m, ev, false);
	case AS_EV_POLL_BEGIN:
	case AS_EV_POLL_END:
	case AS_EV_WAKE:
	case AS_EV_FREE:
		if (ev->task == 0 || ev->task == UINT64_MAX) {
			m->anomalies++;
			return 0;
		}
		if (__builtin_expect(m->folded_of.len != 0, 0) && folded_drop(m, ev))
			return 0;
		if (ev->type == AS_EV_POLL_BEGIN)
			return on_poll_begin(m, ev);
		if (ev->type == AS_EV_POLL_END)
			return on_poll_end(m, ev);
		if (ev->type == AS_EV_WAKE)
			return on_wake(m, ev);
		t = live_of(m, ev);
		/* never seen: existed before the recording, never ran in it */
		return t ? on_free(m, ev, t) : 0;
	case AS_EV_FUTURE_ENTER:
	case AS_EV_FUTURE_EXIT:
		return on_frame(m, ev);
	default:
		return 0;
	}
}

int task_model__finish(struct task_model *m, uint64_t end_ns)
{
	if (!m || m->finished)
		return -EINVAL;
	m->finished = m->slow = true;
	m->started = true;
	/* polls still in progress: innermost first, so nesting is known */
	for (size_t i = 0; i < m->n_threads; i++) {
		struct tm_thread *th = m->threads[i];

		while (th->depth) {
			struct tm_frame f = th->stack[--th->depth];

			poll_close(m, th, &f, end_ns, TM_TRACE_END);
		}
		if (th->parked) {
			uint64_t d = span(m, th->park_start, end_ns);

			th->parked = false;
			EMIT(m, unpark, th, th->park_start, end_ns, d);
		}
	}
	for (size_t i = 0; i < m->live.cap; i++) {
		uint64_t k = m->live.s[i].key;
		struct tm_task *t;

		if (k == 0 || k == UINT64_MAX)
			continue;
		t = (struct tm_task *)(uintptr_t)m->live.s[i].val;
		leave(m, t, end_ns, TM_BY_END);
		EMIT(m, cut, t, end_ns);
	}
	EMIT(m, finish, end_ns);
	return 0;
}

int task_model__adopt(struct task_model *m, uint64_t header, uint64_t ts, struct tm_task **out)
{
	struct as_event ev = { .ts = ts, .task = header };
	struct tm_task *t;

	if (out)
		*out = NULL;
	if (!m || m->finished || m->frames_only || !header || header == UINT64_MAX)
		return -EINVAL;
	m->started = true;
	if (!(t = live_get(m, header))) {
		if (!(t = task_new(m, header, ts)))
			return -ENOMEM;
		EMIT(m, born, t, NULL, &ev);
		enter(m, t, TM_IDLE, ts);
		if (m->max_live && m->live.len > m->max_live)
			fold_some(m, ts);
	}
	if (out)
		*out = t;
	return 0;
}

int task_model__set_max_live(struct task_model *m, size_t max_live)
{
	if (!m)
		return -EINVAL;
	if (m->started || m->n_threads || m->next_seq)
		return -EBUSY;
	if (m->frames_only)
		max_live = 0;
	m->max_live = max_live;
	m->ring_max = max_live < SIZE_MAX / FOLD_REMEMBER / sizeof(*m->ring)
		      ? max_live * FOLD_REMEMBER : SIZE_MAX / sizeof(*m->ring);
	return 0;
}

size_t task_model__max_live(const struct task_model *m)
{
	return m ? m->max_live : 0;
}

bool task_model__is_folded(const struct task_model *m, uint64_t header)
{
	return m && header && header != UINT64_MAX && !live_get(m, header) && is_folded(m, header);
}

uint64_t task_model__folded(const struct task_model *m)
{
	return m ? m->folded : 0;
}

uint64_t task_model__folded_events(const struct task_model *m)
{
	return m ? m->folded_events : 0;
}

size_t task_model__bytes(const struct task_model *m)
{
	size_t n;

	if (!m)
		return 0;
	n = sizeof(*m) + m->live.len * (ACT_BYTES + m->task_size) + m->cap_heap * sizeof(*m->heap) +
	    m->n_threads * m->thread_size + m->ring_cap * sizeof(*m->ring) +
	    m->folded_of.cap * 2 * sizeof(uint64_t) +
	    (m->live.cap + m->thread_of.cap) * 2 * sizeof(uint64_t) +
	    m->cap_threads * sizeof(*m->threads) + m->strs.cap * sizeof(char *) +
	    m->n_probes * sizeof(*m->probe_name);
	for (size_t i = 0; i < m->n_threads; i++)
		n += m->threads[i]->cap * sizeof(struct tm_frame);
	for (uint32_t i = 0; i < m->strs.n; i++)
		n += m->strs.lens[i] + 1;
	return n;
}

const struct tm_counts *task_model__counts(const struct task_model *m)
{
	return &m->counts;
}

uint64_t task_model__anomalies(const struct task_model *m)
{
	return m ? m->anomalies : 0;
}

struct tm_thread *const *task_model__threads(const struct task_model *m, size_t *n)
{
	*n = m ? m->n_threads : 0;
	return m ? m->threads : NULL;
}

bool task_model__worker_name(const struct task_model *m, const char *name)
{
	return m && worker_name(m, name);
}

const struct tm_thread *task_model__thread(const struct task_model *m, uint32_t tid)
{
	uint64_t v;

	if (!m)
		return NULL;
	if (m->cache[tid % THREAD_CACHE] && m->cache[tid % THREAD_CACHE]->tid == tid)
		return m->cache[tid % THREAD_CACHE];
	return u64map__get(&m->thread_of, (uint64_t)tid + 1, &v) ? m->threads[v - 1] : NULL;
}

struct tm_task *task_model__task(const struct task_model *m, uint64_t header)
{
	return m && header && header != UINT64_MAX ? live_get(m, header) : NULL;
}

struct tm_task *task_model__polled(const struct task_model *m, uint32_t tid, uint64_t header)
{
	const struct tm_thread *th = task_model__thread(m, tid);

	if (th && th->depth)
		return th->stack[th->depth - 1].task;
	return task_model__task(m, header);
}

size_t task_model__live(const struct task_model *m)
{
	return m ? m->live.len : 0;
}

void task_model__each(const struct task_model *m, void (*fn)(void *ctx, struct tm_task *t),
		      void *ctx)
{
	for (size_t i = 0; m && i < m->live.cap; i++)
		if (m->live.s[i].key != 0 && m->live.s[i].key != UINT64_MAX)
			fn(ctx, (struct tm_task *)(uintptr_t)m->live.s[i].val);
}

static int sink_add(void *impl, const struct as_event *ev, const struct as_stack *stack)
{
	(void)stack;
	return task_model__add(impl, ev);
}

static int sink_finish(void *impl, const struct as_trace_end *end)
{
	return task_model__finish(impl, end ? end->end_ns : 0);
}

static const struct as_sink_ops sink_ops = {
	.name = "task model", .add = sink_add, .finish = sink_finish, .free = NULL,
};

struct as_sink task_model__sink(struct task_model *m)
{
	return (struct as_sink){ .ops = &sink_ops, .impl = m };
}

void task_model__free(struct task_model *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->live.cap; i++)
		if (m->live.s[i].key != 0 && m->live.s[i].key != UINT64_MAX)
			free(act_of((struct tm_task *)(uintptr_t)m->live.s[i].val));
	u64tab__clear(&m->live);
	free(m->by_hint);
	free(m->heap);
	u64map__clear(&m->folded_of);
	free(m->ring);
	u64map__clear(&m->label_of);
	for (size_t i = 0; i < m->n_threads; i++) {
		free(m->threads[i]->stack);
		free(m->threads[i]->fut);
		free(m->threads[i]);
	}
	free(m->threads);
	u64map__clear(&m->thread_of);
	strtab__clear(&m->strs);
	free(m->probe_name);
	free(m->probe_kind);
	free(m->worker_names);
	free(m);
}
