/* tasks: the task analysis (see tasks.h). State machine per live task (kept
 * in a map keyed by header, freed at FREE) and per thread (a stack of polls in
 * progress, a pending spawn site, a park in progress); per-task numbers go to
 * a row in an array of slots (a map from seq finds it). Strings kept are
 * interned once (util/strtab).
 *
 * Rows: a live task's row is always kept. When a user task goes, its row
 * joins a min-heap of at most opts.max_tasks finished rows ordered by busy
 * time (then seq, later first); past the cap, the least busy of the heap and
 * the new row is folded into its group (identity: name and spawn location,
 * final by then: the name is set at the first poll) and its slot reused. The
 * stalls and starves of a folded row become list entries right away; those
 * of kept rows at finish, as before. finish() sorts the kept rows by seq.
 *
 * Every change of a live task's state goes through enter() and leave(), which
 * keep the sums, the histograms, the stall and starve counts and the observer
 * in step. A live task's histograms are folded into its row and into the
 * totals when it goes (FREE or the end), then freed. Wake edges into live
 * tasks are keyed by (waker code, woken seq): code 1..5 a wake_source, seq +
 * EDGE_TASK a task. The edges into a task are listed from it and folded when
 * it goes too (edges from the runtime's loops or blocking tasks merged per
 * kind; slots and map keys freed), after its row was kept or folded:
 *  - its row folded: each edge goes into a group edge (struct gedge, keyed
 *    by its two ends, a->gedges), its delay histogram merged; ends are end
 *    codes (below), a task end its group when the task was folded or its
 *    identity already is a group;
 *  - its row kept: each edge whose waker has a row too becomes a compact
 *    struct wake_edge in a->edges (percentiles taken, histogram freed), the
 *    edges of one task contiguous, found from its slot (a->rowe); the others
 *    go into group edges as above.
 * A kept row folded later (fold_row()) takes its compact edges into group
 * edges (their maximum, p50 and p99 standing in for their delays); compact
 * edges whose waker was folded since are moved the same way by
 * sweep_edges(), run when a->edges has grown by half since the last sweep,
 * which also drops the moved ones. So the edge records are bounded by the
 * pairs of rows, groups and sources, not by the length of the trace.
 * A waker task is known to be the runtime's loop only once a poll nests in
 * it, so analysis__finish() resolves the kinds again and merges what became
 * duplicates (see finish_edges()). Until then an edge in a->edges holds the
 * waker code in from_seq and the identities of both ends (index + 1) in
 * from_group and to_group.
 * Pure C: no libbpf, no I/O, no globals. */
#include "analysis/tasks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/strtab.h"
#include "util/u64map.h"

enum live_state { LIVE_RUNNING, LIVE_RUNNABLE, LIVE_IDLE, LIVE_COMPLETED };

#define PEND_MAX 4             /* timed wakes waiting for a poll, per task */
#define EDGE_TASK 8            /* edge code of task seq s: s + EDGE_TASK */
/* End codes of group edges (32 bits each): the waker end a wake_source
 * (below EDGE_TASK), a task with a row (seq + EDGE_TASK) or a group
 * (END_GROUP | identity index + 1); the woken end a task (its seq) or a
 * group. Edges take task seqs below END_GROUP - EDGE_TASK (later ones are
 * counted as anomalies). */
#define END_GROUP 0x80000000u
#define SWEEP_MIN 4096         /* compact edges held before the first sweep */
/* Group edges sample delays at GROUP_SUB_BITS significant bits after the
 * leading one (8 steps per power of two, each sample the middle of its step:
 * within 6.25%): their histograms then hold at most 8 buckets per power of
 * two, however many wakes they merge. */
#define GROUP_SUB_BITS 3
#define GROUP_BUCKETS 256      /* buckets read at once from an edge's histogram */
#define BLOCKING_PREFIX "tokio::runtime::blocking::task::BlockingTask"

/* A wake waiting for the woken task's next poll, to time its edge. */
struct pend {
	uint32_t edge;         /* into a->edges */
	uint64_t ts;
};

/* A task whose header has not been freed yet. */
struct live {
	size_t idx;            /* into a->tasks */
	uint32_t ident;        /* its identity (index + 1 into a->idents), 0 not
	                          looked up yet (only once its name is final) */
	enum live_state state;
	uint32_t run_tid;      /* LIVE_RUNNING: thread whose stack holds its poll */
	bool woken_in_poll;    /* woken while running: runnable when the poll ends */
	bool free_pending;     /* freed inside its own poll: retired when it ends */
	uint64_t since;        /* LIVE_RUNNABLE: sched clock start; LIVE_IDLE: idle start */
	/* Time of its leaf polls charged to worker threads, taken back if the
	 * task turns out to be a worker (a poll nests inside a later poll of it). */
	uint64_t leaf_ns, leaf_polls;
	uint32_t leaf_tid;
	bool leaf_mixed;       /* leaf polls on more than one thread */
	uint8_t n_pend;
	struct pend pend[PEND_MAX];
	uint32_t edges_head;   /* edges into it: index + 1 into a->eacc, 0 none */
	struct hist h[DIST__MAX];
};

/* A poll in progress on a thread. */
struct frame {
	uint64_t header;
	size_t idx;            /* into a->tasks */
	uint64_t seq;          /* the row's, to tell a reused slot */
	uint64_t begin;
	bool nested;           /* another poll began inside it */
};

struct thread {
	uint32_t tid;
	bool worker;           /* polled a task or parked: listed in the results */
	struct frame *stack;
	size_t depth, cap;
	bool spawn_pending;
	const char *spawn_file;
	uint32_t spawn_line, spawn_col;
	uint64_t spawn_parent;
	bool parked;
	uint64_t park_start;
	struct worker_stats st; /* st.name is interned */
};

/* Wakes of one (waker code, woken seq) pair while the woken task lives. */
struct edge_acc {
	uint64_t code, to_seq, count, timed;
	struct hist delay;
	uint32_t next_to;      /* next edge into the same task: index + 1, 0 none */
	uint32_t from_ident;   /* waker task's identity, index + 1; 0 none */
	uint32_t tasks;        /* waker tasks merged into it (runtime, blocking) */
	bool merged;           /* merged into another edge of its kind */
};

/* Wakes with a folded end, merged per pair of end codes (see END_GROUP). */
struct gedge {
	uint32_t from, to;               /* end codes */
	uint32_t from_ident, to_ident;   /* identities of task ends, 0 unknown */
	uint64_t count, timed, tasks;
	uint64_t max;                    /* exact maximum delay */
	struct hist delay;               /* delays at group precision (coarse()) */
};

/* The compact edges into a kept finished row: a->edges[first - 1 ..], n of
 * them (some perhaps moved out since: count 0); first 0 none. */
struct row_edges {
	uint32_t first, n;
};

/* A (name, spawn location) seen on a finished task or a waker, and the sums
 * of the tasks folded into it. */
struct ident {
	struct task_group g;
	uint32_t next;         /* next identity with the same hash: index + 1 */
};

struct analysis {
	struct as_trace_meta meta;        /* shallow copy: probes read in add() only */
	bool has_meta, finished;
	struct analysis_opts opts;        /* defaults filled in */
	struct analysis_observer obs;
	int err;                          /* -ENOMEM met inside the current add() */

	struct task_stats *tasks;         /* slots; sorted by seq after finish */
	size_t n_tasks, cap_tasks;        /* slots used so far */
	size_t *free_slots;               /* slots of folded rows, for reuse */
	size_t n_free, cap_free;
	struct u64map slot_of;            /* seq -> slot + 1 (until finish) */
	uint64_t next_seq;
	size_t *keep;                     /* min-heap of kept finished user rows (slots) */
	size_t n_keep, cap_keep;
	uint64_t folded, folded_polls, folded_long_polls;
	struct u64map live;               /* header -> struct live * */

	struct thread *threads;
	size_t n_threads, cap_threads;
	struct u64map thread_of;          /* tid + 1 -> index + 1 into threads */

	struct strtab strs;               /* interned strings (names, files) */
	const char **worker_names;        /* root future types of worker tasks (interned) */
	size_t n_worker_names, cap_worker_names;

	struct worker_stats *workers;
	size_t n_workers;
	struct summary sum;
	bool seen_event;
	uint64_t last_ts;                 /* largest timestamp seen */

	struct hist dist[DIST__MAX];      /* user tasks, folded in as they go */
	struct edge_acc *eacc;            /* edges into live tasks (slots) */
	size_t n_eacc, cap_eacc;
	uint32_t *free_eacc;              /* free slots of eacc */
	size_t n_free_eacc, cap_free_eacc;
	struct u64map edge_of;            /* code << 32 | to_seq -> index + 1 */
	struct long_poll *heap;           /* min-heap on duration, absolute start,
	                                     group: the task's identity + 1 */
	size_t n_heap;
	struct wake_edge *edges;          /* compact edges (see the top), then the results */
	size_t n_edges, cap_edges;
	size_t n_moved;                   /* of which moved into group edges (count 0) */
	size_t sweep_at;                  /* n_edges that calls sweep_edges() */
	struct row_edges *rowe;           /* per slot of a->tasks */
	size_t cap_rowe;
	struct gedge *gedges;             /* group edges */
	size_t n_gedges, cap_gedges;
	struct u64map gedge_of;           /* from << 32 | to -> index + 1 */
	struct stall *stalls;             /* of folded rows (absolute since, group:
	                                     identity + 1), then the results */
	size_t n_stalls, cap_stalls;
	struct starve *starves;
	size_t n_starves, cap_starves;

	struct ident *idents;
	size_t n_idents, cap_idents;
	struct u64map ident_of;           /* hash -> first identity index + 1 */

	/* Results of finish(). */
	struct task_group *groups;
	size_t n_groups;
	uint32_t *group_of;               /* identity -> group index + 1, 0 none */
	bool sorted;                      /* a->tasks sorted by seq, no free slot */
};

const char *task_kind__str(enum task_kind kind)
{
	return kind == TASK_KIND_WORKER ? "worker" : "task";
}

const char *wake_source__str(enum wake_source src)
{
	switch (src) {
	case WAKE_FROM_TASK: return "task";
	case WAKE_FROM_IO: return "io";
	case WAKE_FROM_TIMER: return "timer";
	case WAKE_FROM_RUNTIME: return "runtime";
	case WAKE_FROM_BLOCKING: return "blocking";
	case WAKE_FROM_THREAD: return "thread";
	}
	return "unknown";
}

const char *task_state__str(enum task_state state)
{
	switch (state) {
	case TASK_STATE_COMPLETED: return "completed";
	case TASK_STATE_RUNNING: return "running";
	case TASK_STATE_RUNNABLE: return "runnable";
	case TASK_STATE_IDLE: return "idle";
	}
	return "unknown";
}

/* Growth of a (pointer, len, cap) array to hold need elements. */
static int grow(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t ncap = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*arr, ncap * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

/* Growth of a (pointer, len, cap) array by one element. */
static int reserve(void **arr, size_t *cap, size_t len, size_t size)
{
	return grow(arr, cap, len + 1, size);
}

/* b - a, or 0 (and an anomaly) if the events came out of order. */
static uint64_t span(struct analysis *a, uint64_t from, uint64_t to)
{
	if (to >= from)
		return to - from;
	a->sum.anomalies++;
	return 0;
}

/* Returns the copy of s owned by a (one per distinct string), NULL for NULL s,
 * or NULL with *err set (-ENOMEM). */
static const char *intern(struct analysis *a, const char *s, int *err)
{
	size_t len;
	uint32_t idx;
	int ret;

	if (!s)
		return NULL;
	len = strlen(s);
	if (!strtab__find(&a->strs, s, len, &idx)) {
		ret = strtab__add(&a->strs, s, len, &idx);
		if (ret) {
			*err = ret;
			return NULL;
		}
	}
	return strtab__get(&a->strs, idx);
}

static struct thread *thread_get(struct analysis *a, uint32_t tid, uint64_t ts)
{
	uint64_t v;
	struct thread *t;

	if (u64map__get(&a->thread_of, (uint64_t)tid + 1, &v))
		return &a->threads[v - 1];
	if (reserve((void **)&a->threads, &a->cap_threads, a->n_threads, sizeof(*a->threads)))
		return NULL;
	if (u64map__set(&a->thread_of, (uint64_t)tid + 1, a->n_threads + 1))
		return NULL;
	t = &a->threads[a->n_threads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->st.tid = tid;
	if (a->obs.thread)
		a->obs.thread(a->obs.ctx, tid, ts);
	return t;
}

static struct thread *thread_find(struct analysis *a, uint32_t tid)
{
	uint64_t v;

	if (u64map__get(&a->thread_of, (uint64_t)tid + 1, &v))
		return &a->threads[v - 1];
	return NULL;
}

static struct live *live_get(struct analysis *a, uint64_t header)
{
	uint64_t v;

	if (u64map__get(&a->live, header, &v))
		return (struct live *)(uintptr_t)v;
	return NULL;
}

/* Starts a new task for header; returns its live state or NULL (-ENOMEM). */
static struct live *task_new(struct analysis *a, uint64_t header, uint64_t ts)
{
	struct live *l = NULL;
	struct task_stats *st;
	size_t slot;

	if (!a->n_free &&
	    reserve((void **)&a->tasks, &a->cap_tasks, a->n_tasks, sizeof(*a->tasks)))
		return NULL;
	if (!a->opts.states_only &&
	    grow((void **)&a->rowe, &a->cap_rowe, a->cap_tasks, sizeof(*a->rowe)))
		return NULL;
	slot = a->n_free ? a->free_slots[a->n_free - 1] : a->n_tasks;
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	if (u64map__set(&a->live, header, (uint64_t)(uintptr_t)l)) {
		free(l);
		return NULL;
	}
	if (u64map__set(&a->slot_of, a->next_seq + 1, slot + 1)) {
		u64map__del(&a->live, header);
		free(l);
		return NULL;
	}
	if (a->n_free)
		a->n_free--;
	else
		a->n_tasks++;
	st = &a->tasks[slot];
	memset(st, 0, sizeof(*st));
	if (a->rowe)
		a->rowe[slot] = (struct row_edges){ 0 };
	st->seq = ++a->next_seq;
	st->header = header;
	st->first_ns = st->last_ns = ts;
	l->idx = slot;
	return l;
}

static int by_seq(const void *x, const void *y)
{
	const struct task_stats *a = x, *b = y;

	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The row of task seq (live or kept), or NULL: folded or never seen. */
static const struct task_stats *row_of(const struct analysis *a, uint64_t seq)
{
	struct task_stats key = { .seq = seq };
	uint64_t v;

	if (a->sorted)
		return a->n_tasks ? bsearch(&key, a->tasks, a->n_tasks, sizeof(*a->tasks), by_seq)
				  : NULL;
	if (seq && u64map__get(&a->slot_of, seq, &v))
		return &a->tasks[v - 1];
	return NULL;
}

static uint64_t ident_hash(const struct task_stats *st)
{
	uint64_t h = (uint64_t)(uintptr_t)st->name * 0x9e3779b97f4a7c15ULL;

	h = (h ^ (h >> 29) ^ (uint64_t)(uintptr_t)st->spawn_file) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 31) ^ ((uint64_t)st->spawn_line << 32 | st->spawn_col)) *
	    0x94d049bb133111ebULL;
	h ^= h >> 32;
	return h == 0 ? 1 : h == UINT64_MAX ? h - 1 : h; /* keys u64map reserves */
}

/* The identity (name, spawn location) of row st, index + 1 into a->idents,
 * added if new; 0 out of memory (a->err set). Names and files are interned:
 * equal strings are equal pointers. */
static uint32_t ident_get(struct analysis *a, const struct task_stats *st)
{
	uint64_t key = ident_hash(st), v = 0;
	struct task_group *g;

	if (u64map__get(&a->ident_of, key, &v))
		for (uint32_t i = (uint32_t)v; i; i = a->idents[i - 1].next) {
			g = &a->idents[i - 1].g;
			if (g->name == st->name && g->spawn_file == st->spawn_file &&
			    g->spawn_line == st->spawn_line && g->spawn_col == st->spawn_col)
				return i;
		}
	if (a->n_idents >= UINT32_MAX - 1 ||
	    reserve((void **)&a->idents, &a->cap_idents, a->n_idents, sizeof(*a->idents)) ||
	    u64map__set(&a->ident_of, key, a->n_idents + 1)) {
		a->err = -ENOMEM;
		return 0;
	}
	a->idents[a->n_idents] = (struct ident){
		.g = { .name = st->name, .spawn_file = st->spawn_file,
		       .spawn_line = st->spawn_line, .spawn_col = st->spawn_col },
		.next = (uint32_t)v,
	};
	return (uint32_t)++a->n_idents;
}

/* The identity of live task l (its name is final: it is polling, or going). */
static uint32_t live_ident(struct analysis *a, struct live *l)
{
	if (!l->ident)
		l->ident = ident_get(a, &a->tasks[l->idx]);
	return l->ident;
}

/* x ranks below y among finished rows: less busy, or as busy and later. */
static bool worse(const struct task_stats *x, const struct task_stats *y)
{
	return x->busy_ns < y->busy_ns || (x->busy_ns == y->busy_ns && x->seq > y->seq);
}

static void row_edges_out(struct analysis *a, size_t slot, uint32_t id);

/* Finished row in slot folds into its group: its sums go there, its stall
 * and starve (if any) to the lists, its compact edges (if it was kept a
 * while) to group edges, its slot to the free list. Returns false (out of
 * memory, a->err set; the row stays) or true. */
static bool fold_row(struct analysis *a, size_t slot)
{
	struct task_stats *st = &a->tasks[slot];
	uint32_t id = ident_get(a, st);
	struct task_group *g;

	if (!id ||
	    grow((void **)&a->stalls, &a->cap_stalls, a->n_stalls + 1, sizeof(*a->stalls)) ||
	    grow((void **)&a->starves, &a->cap_starves, a->n_starves + 1, sizeof(*a->starves)) ||
	    reserve((void **)&a->free_slots, &a->cap_free, a->n_free, sizeof(*a->free_slots))) {
		a->err = -ENOMEM;
		return false;
	}
	if (st->stalls)
		a->stalls[a->n_stalls++] = (struct stall){
			.seq = st->seq, .group = id, .since_ns = st->stall_since_ns,
			.stalled_ns = st->stall_ns, .until_end = st->stall_until_end,
			.count = st->stalls,
		};
	if (st->starved)
		a->starves[a->n_starves++] = (struct starve){
			.seq = st->seq, .group = id, .max_wait_ns = st->starve_max_ns,
			.count = st->starved,
		};
	g = &a->idents[id - 1].g;
	g->tasks++;
	g->polls += st->polls;
	g->pending_polls += st->pending_polls;
	g->ready_polls += st->ready_polls;
	g->busy_ns += st->busy_ns;
	if (st->max_poll_ns > g->max_poll_ns)
		g->max_poll_ns = st->max_poll_ns;
	g->idle_ns += st->idle_ns;
	g->sched_ns += st->sched_ns;
	g->wakes += st->wakes;
	g->self_wakes += st->self_wakes;
	g->long_polls += st->long_polls;
	a->folded++;
	a->folded_polls += st->polls;
	a->folded_long_polls += st->long_polls;
	u64map__del(&a->slot_of, st->seq);
	row_edges_out(a, slot, id);
	st->seq = 0; /* a free slot */
	a->free_slots[a->n_free++] = slot;
	return true;
}

static void keep_sift_down(struct analysis *a, size_t i)
{
	size_t *h = a->keep, n = a->n_keep, x = h[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && worse(&a->tasks[h[c + 1]], &a->tasks[h[c]]))
			c++;
		if (!worse(&a->tasks[h[c]], &a->tasks[x]))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

/* The user task in slot has finished: keep its row among the max_tasks
 * busiest finished ones, or fold the least busy of them and it. Worker tasks
 * (the runtime's loops, a few) always keep theirs. */
static void row_done(struct analysis *a, size_t slot)
{
	size_t i, top;

	if (a->tasks[slot].kind != TASK_KIND_TASK || a->opts.max_tasks == ANALYSIS_UNLIMITED)
		return;
	if (a->n_keep < a->opts.max_tasks) {
		if (reserve((void **)&a->keep, &a->cap_keep, a->n_keep, sizeof(*a->keep))) {
			a->err = -ENOMEM; /* the row stays, outside the heap */
			return;
		}
		for (i = a->n_keep++; i > 0 &&
		     worse(&a->tasks[slot], &a->tasks[a->keep[(i - 1) / 2]]); i = (i - 1) / 2)
			a->keep[i] = a->keep[(i - 1) / 2];
		a->keep[i] = slot;
		return;
	}
	top = a->keep[0];
	if (!worse(&a->tasks[top], &a->tasks[slot])) {
		fold_row(a, slot);
		return;
	}
	if (!fold_row(a, top))
		return;
	a->keep[0] = slot;
	keep_sift_down(a, 0);
}

static void nomem(struct analysis *a, int err)
{
	if (err)
		a->err = -ENOMEM;
}

/* Adds v to a live task's distribution d (kept until it goes). */
static void sample(struct analysis *a, struct live *l, enum dist d, uint64_t v)
{
	if (!a->opts.states_only)
		nomem(a, hist__add(&l->h[d], v));
}

static enum wake_source resolve(const struct analysis *a, uint64_t code, uint32_t from_ident,
				uint64_t *from_seq);

/* The end code (see END_GROUP) of task seq, whose identity is id (0
 * unknown), plus base (EDGE_TASK for a waker, 0 for a woken task): its group
 * if it was folded or if its identity is a group already, else the task. */
static uint32_t task_end(const struct analysis *a, uint64_t seq, uint32_t id, uint64_t base)
{
	if (id && (!row_of(a, seq) || a->idents[id - 1].g.tasks))
		return END_GROUP | id;
	return (uint32_t)(seq + base);
}

/* The end code of the waker of edge code (from_ident: the waker task's
 * identity), its kind as far as known now. */
static uint32_t waker_end(const struct analysis *a, uint64_t code, uint32_t from_ident)
{
	uint64_t seq;
	enum wake_source k = resolve(a, code, from_ident, &seq);

	return k == WAKE_FROM_TASK ? task_end(a, seq, from_ident, EDGE_TASK) : (uint32_t)k;
}

/* Whether the waker of edge code (from_ident: its identity) is a task that
 * was folded. */
static bool waker_folded(const struct analysis *a, uint64_t code, uint32_t from_ident)
{
	uint64_t seq;

	return resolve(a, code, from_ident, &seq) == WAKE_FROM_TASK && !row_of(a, seq);
}

/* The group edge (from, to), added if new; NULL out of memory (a->err set). */
static struct gedge *gedge_get(struct analysis *a, uint32_t from, uint32_t to,
			       uint32_t from_ident, uint32_t to_ident)
{
	uint64_t key = (uint64_t)from << 32 | to, v;
	struct gedge *g;

	if (u64map__get(&a->gedge_of, key, &v))
		return &a->gedges[v - 1];
	if (key == UINT64_MAX) { /* 2^31 - 1 identities: cannot be keyed */
		a->sum.anomalies++;
		return NULL;
	}
	if (reserve((void **)&a->gedges, &a->cap_gedges, a->n_gedges, sizeof(*a->gedges)) ||
	    u64map__set(&a->gedge_of, key, a->n_gedges + 1)) {
		a->err = -ENOMEM;
		return NULL;
	}
	g = &a->gedges[a->n_gedges++];
	memset(g, 0, sizeof(*g));
	g->from = from;
	g->to = to;
	g->from_ident = from_ident;
	g->to_ident = to_ident;
	return g;
}

/* Delay d at group-edge precision: the middle of its step of 2^-GROUP_SUB_BITS
 * of its power of two (exact below 2^(GROUP_SUB_BITS + 1)). */
static uint64_t coarse(uint64_t d)
{
	unsigned top;
	uint64_t step;

	if (d < 2ULL << GROUP_SUB_BITS)
		return d;
	top = 63 - (unsigned)__builtin_clzll(d);
	step = 1ULL << (top - GROUP_SUB_BITS);
	return (d & ~(step - 1)) + step / 2;
}

/* n delays of d into group edge g. */
static void gedge_sample(struct analysis *a, struct gedge *g, uint64_t d, uint64_t n)
{
	if (!n)
		return;
	if (d > g->max)
		g->max = d;
	nomem(a, hist__add_n(&g->delay, coarse(d), n));
}

/* The wakes of live edge e into group edge (from, to): its histogram's
 * buckets (each as its lowest value) at group precision, its maximum
 * exact. */
static void gedge_add_acc(struct analysis *a, struct edge_acc *e, uint32_t from, uint32_t to,
			  uint32_t to_ident)
{
	struct gedge *g = gedge_get(a, from, to, e->from_ident, to_ident);
	struct hist_bucket b[GROUP_BUCKETS];
	size_t n;

	if (!g)
		return;
	g->count += e->count;
	g->timed += e->timed;
	g->tasks += e->tasks;
	if (!e->delay.count)
		return;
	n = hist__buckets(&e->delay, b, GROUP_BUCKETS);
	for (size_t i = 0; i < n; i++)
		gedge_sample(a, g, b[i].low, b[i].count);
	if (e->delay.max > g->max)
		g->max = e->delay.max;
}

/* The wakes of compact edge e into group edge (from, to): its delays as its
 * maximum once, then the other timed wakes half at its p50, half at its p99
 * (exact for up to two). */
static void gedge_add_rec(struct analysis *a, const struct wake_edge *e, uint32_t from,
			  uint32_t to)
{
	struct gedge *g = gedge_get(a, from, to, e->from_group, e->to_group);
	uint64_t rest;

	if (!g)
		return;
	g->count += e->count;
	g->timed += e->timed;
	g->tasks += e->tasks;
	if (!e->timed)
		return;
	rest = e->timed - 1;
	gedge_sample(a, g, e->delay_max_ns, 1);
	gedge_sample(a, g, e->delay_p50_ns, rest - rest / 2);
	gedge_sample(a, g, e->delay_p99_ns, rest / 2);
}

/* The kept row in slot (identity id) is being folded: its compact edges go
 * into group edges. */
static void row_edges_out(struct analysis *a, size_t slot, uint32_t id)
{
	struct row_edges *r = a->rowe ? &a->rowe[slot] : NULL;

	if (!r || !r->first)
		return;
	for (size_t i = r->first - 1; i < r->first - 1 + (size_t)r->n; i++) {
		struct wake_edge *e = &a->edges[i];

		if (!e->count)
			continue; /* moved by a sweep already */
		gedge_add_rec(a, e, waker_end(a, e->from_seq, e->from_group), END_GROUP | id);
		e->count = 0;
		a->n_moved++;
	}
	*r = (struct row_edges){ 0 };
}

/* Compacts a->edges: drops the edges moved out, moves those whose waker was
 * folded since into group edges, and finds the runs of each kept row again. */
static void sweep_edges(struct analysis *a)
{
	size_t n = 0;

	for (size_t i = 0; i < a->n_edges; i++) {
		struct wake_edge e = a->edges[i];
		struct row_edges *r = NULL;
		uint64_t v;

		if (a->rowe && u64map__get(&a->slot_of, e.to_seq, &v)) {
			r = &a->rowe[v - 1];
			if (r->first == i + 1)
				*r = (struct row_edges){ 0 }; /* its run starts: found again below */
		}
		if (!e.count)
			continue;
		if (e.from_group && waker_folded(a, e.from_seq, e.from_group)) {
			gedge_add_rec(a, &e, END_GROUP | e.from_group,
				      task_end(a, e.to_seq, e.to_group, 0));
			continue;
		}
		if (r) {
			if (!r->n)
				r->first = (uint32_t)(n + 1);
			r->n++;
		}
		a->edges[n++] = e;
	}
	a->n_edges = n;
	a->n_moved = 0;
	a->sweep_at = n + n / 2 > SWEEP_MIN ? n + n / 2 : SWEEP_MIN;
}

/* The edges into task l are final: edges from the runtime or from blocking
 * tasks (as far as known now) merged per kind; then, if its row was folded
 * (folded), every edge into group edges; else the edges from tasks with a
 * row, percentiles taken, appended to a->edges in the order they were
 * created (the list runs newest first), the others into group edges. Their
 * histograms, map keys and slots freed. */
static void fold_edges(struct analysis *a, struct live *l, uint64_t to_seq, bool folded)
{
	uint32_t merged[WAKE_FROM_THREAD + 1] = { 0 }, to_ident;
	size_t k = 0, at, first = a->n_edges;
	uint64_t v;

	if (!l->edges_head)
		return;
	to_ident = live_ident(a, l);
	for (uint32_t i = l->edges_head; i; i = a->eacc[i - 1].next_to) {
		struct edge_acc *e = &a->eacc[i - 1], *into;
		uint64_t from_seq;
		enum wake_source kind;

		if (e->merged)
			continue; /* by an earlier call that ran out of memory */
		kind = resolve(a, e->code, e->from_ident, &from_seq);
		k++;
		if (kind == WAKE_FROM_RUNTIME || kind == WAKE_FROM_BLOCKING) {
			if (!merged[kind]) {
				merged[kind] = i;
			} else {
				into = &a->eacc[merged[kind] - 1];
				into->count += e->count;
				into->timed += e->timed;
				into->tasks += e->tasks;
				nomem(a, hist__merge(&into->delay, &e->delay));
				e->merged = true;
				k--;
			}
		}
	}
	if (grow((void **)&a->edges, &a->cap_edges, a->n_edges + k, sizeof(*a->edges)) ||
	    grow((void **)&a->free_eacc, &a->cap_free_eacc, a->n_eacc, sizeof(*a->free_eacc))) {
		a->err = -ENOMEM;
		return; /* the edges stay live: folded at finish, or lost */
	}
	at = a->n_edges + k;
	for (uint32_t i = l->edges_head, next; i; i = next) {
		struct edge_acc *e = &a->eacc[i - 1];

		next = e->next_to;
		if (!e->merged) {
			if (folded || waker_folded(a, e->code, e->from_ident))
				gedge_add_acc(a, e, waker_end(a, e->code, e->from_ident),
					      task_end(a, to_seq, to_ident, 0), to_ident);
			else
				a->edges[--at] = (struct wake_edge){
					.from_seq = e->code, .to_seq = e->to_seq, .count = e->count,
					.timed = e->timed,
					.delay_p50_ns = hist__quantile(&e->delay, 0.5),
					.delay_p99_ns = hist__quantile(&e->delay, 0.99),
					.delay_max_ns = e->delay.max, .from_group = e->from_ident,
					.to_group = to_ident, .tasks = e->tasks,
				};
		}
		hist__clear(&e->delay);
		u64map__del(&a->edge_of, e->code << 32 | e->to_seq);
		a->free_eacc[a->n_free_eacc++] = i - 1;
	}
	l->edges_head = 0;
	if (at > a->n_edges) { /* some went into group edges: close the gap */
		memmove(&a->edges[a->n_edges], &a->edges[at], (first + k - at) * sizeof(*a->edges));
		k -= at - a->n_edges;
	}
	a->n_edges += k;
	if (k && a->rowe && u64map__get(&a->slot_of, to_seq, &v))
		a->rowe[v - 1] = (struct row_edges){ .first = (uint32_t)(first + 1),
						     .n = (uint32_t)k };
	if (a->n_edges >= a->sweep_at)
		sweep_edges(a);
}

/* Task l goes: its distributions become percentiles in its row and, for a
 * user task, part of the totals; then they are freed (the edges into it are
 * folded by the caller: fold_edges()). */
static void fold(struct analysis *a, struct live *l)
{
	struct task_stats *st = &a->tasks[l->idx];
	const struct hist *h = l->h;

	st->poll_p50_ns = hist__quantile(&h[DIST_POLL], 0.5);
	st->poll_p99_ns = hist__quantile(&h[DIST_POLL], 0.99);
	st->sched_p50_ns = hist__quantile(&h[DIST_SCHED], 0.5);
	st->sched_p99_ns = hist__quantile(&h[DIST_SCHED], 0.99);
	st->sched_max_ns = h[DIST_SCHED].max;
	st->idle_p50_ns = hist__quantile(&h[DIST_IDLE], 0.5);
	st->idle_p99_ns = hist__quantile(&h[DIST_IDLE], 0.99);
	for (int d = 0; d < DIST__MAX; d++) {
		if (st->kind == TASK_KIND_TASK)
			nomem(a, hist__merge(&a->dist[d], &l->h[d]));
		hist__clear(&l->h[d]);
	}
	l->n_pend = 0;
}

/* The task is gone (FREE, or its address reused without a FREE): its row is
 * kept or folded (row_done()), then the edges into it are folded. */
static void task_retire(struct analysis *a, uint64_t header, struct live *l)
{
	uint64_t seq = a->tasks[l->idx].seq;

	a->tasks[l->idx].state = TASK_STATE_COMPLETED;
	fold(a, l);
	live_ident(a, l); /* while its row is there */
	u64map__del(&a->live, header);
	row_done(a, l->idx);
	fold_edges(a, l, seq, a->tasks[l->idx].seq != seq);
	free(l);
}

/* l enters state s (RUNNABLE or IDLE) at ts. */
static void enter(struct analysis *a, struct live *l, enum live_state s, uint64_t ts)
{
	l->state = s;
	l->since = ts;
	if (s == LIVE_RUNNABLE && a->obs.runnable)
		a->obs.runnable(a->obs.ctx, a->tasks[l->idx].seq, ts, 1);
}

enum leave_by { BY_POLL, BY_WAKE, BY_FREE, BY_END };

/* l leaves its RUNNABLE or IDLE state at ts, ended by `by`: the sums (a
 * runnable wait counts in sched_ns only when a poll ends it, as before),
 * distributions, stall and starve accounting, the observer. */
static void leave(struct analysis *a, struct live *l, uint64_t ts, enum leave_by by)
{
	struct task_stats *st = &a->tasks[l->idx];
	uint64_t d;

	if (l->state != LIVE_RUNNABLE && l->state != LIVE_IDLE)
		return;
	d = span(a, l->since, ts);
	if (a->obs.span)
		a->obs.span(a->obs.ctx, st->seq, l->state == LIVE_RUNNABLE ? TASK_STATE_RUNNABLE
					   : TASK_STATE_IDLE, 0, false, l->since, l->since + d);
	if (l->state == LIVE_RUNNABLE) {
		if (a->obs.runnable)
			a->obs.runnable(a->obs.ctx, st->seq, ts, -1);
		if (by == BY_POLL) {
			st->sched_ns += d;
			sample(a, l, DIST_SCHED, d);
		}
		if (d > st->starve_max_ns)
			st->starve_max_ns = d;
		if (d > a->opts.starve_ns && !a->opts.states_only)
			st->starved++;
		return;
	}
	st->idle_ns += d;
	if (by == BY_POLL || by == BY_WAKE)
		sample(a, l, DIST_IDLE, d);
	if (d > a->opts.stall_ns && !a->opts.states_only) {
		st->stalls++;
		if (by == BY_END || (!st->stall_until_end && d > st->stall_ns)) {
			st->stall_since_ns = l->since; /* absolute until finish */
			st->stall_ns = d;
			st->stall_until_end = by == BY_END;
		}
	}
}

/* Keeps the long poll p if it is among the longest opts.long_poll_keep. */
static void long_poll_add(struct analysis *a, const struct long_poll *p)
{
	struct long_poll *h = a->heap;
	size_t n = a->n_heap, i;

	if (n == a->opts.long_poll_keep) {
		if (p->duration_ns <= h[0].duration_ns)
			return;
		i = 0; /* replace the shortest, sift down */
		for (;;) {
			size_t c = 2 * i + 1;

			if (c >= n)
				break;
			if (c + 1 < n && h[c + 1].duration_ns < h[c].duration_ns)
				c++;
			if (h[c].duration_ns >= p->duration_ns)
				break;
			h[i] = h[c];
			i = c;
		}
		h[i] = *p;
		return;
	}
	for (i = a->n_heap++; i > 0 && h[(i - 1) / 2].duration_ns > p->duration_ns; i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = *p;
}

/* The edge of (code, task l): its index, or -1 (out of memory or a seq too
 * large for the key). from_ident: the waker task's identity, or 0. */
static long edge_get(struct analysis *a, uint64_t code, uint32_t from_ident, struct live *l)
{
	uint64_t key, v, to_seq = a->tasks[l->idx].seq;
	struct edge_acc *e;
	size_t idx;

	if (code >= END_GROUP || to_seq >= END_GROUP - EDGE_TASK || a->n_eacc >= UINT32_MAX - 1) {
		a->sum.anomalies++;
		return -1;
	}
	key = code << 32 | to_seq;
	if (u64map__get(&a->edge_of, key, &v))
		return (long)(v - 1);
	if (!a->n_free_eacc &&
	    reserve((void **)&a->eacc, &a->cap_eacc, a->n_eacc, sizeof(*a->eacc))) {
		a->err = -ENOMEM;
		return -1;
	}
	idx = a->n_free_eacc ? a->free_eacc[a->n_free_eacc - 1] : a->n_eacc;
	if (u64map__set(&a->edge_of, key, idx + 1)) {
		a->err = -ENOMEM;
		return -1;
	}
	if (a->n_free_eacc)
		a->n_free_eacc--;
	else
		a->n_eacc++;
	e = &a->eacc[idx];
	memset(e, 0, sizeof(*e));
	e->code = code;
	e->to_seq = to_seq;
	e->from_ident = from_ident;
	e->tasks = 1;
	e->next_to = l->edges_head;
	l->edges_head = (uint32_t)(idx + 1);
	return (long)idx;
}

/* A wake of task l by (ev->flags, ev->other): counted on its edge and, when
 * first from that waker since the last poll, timed at the next poll. */
static void wake_edge(struct analysis *a, struct live *l, const struct as_event *ev)
{
	struct live *w;
	uint64_t code;
	uint32_t from_ident = 0;
	long e;

	if (a->opts.states_only)
		return;
	if (ev->flags & AS_WAKE_IO)
		code = WAKE_FROM_IO;
	else if (ev->flags & AS_WAKE_TIMER)
		code = WAKE_FROM_TIMER;
	else if (!ev->other)
		code = WAKE_FROM_THREAD;
	else if ((w = live_get(a, ev->other))) {
		code = a->tasks[w->idx].seq + EDGE_TASK;
		from_ident = live_ident(a, w);
	} else {
		code = WAKE_FROM_RUNTIME; /* a poll begun before the recording: the runtime's loop */
	}
	e = edge_get(a, code, from_ident, l);
	if (e < 0)
		return;
	a->eacc[e].count++;
	for (unsigned i = 0; i < l->n_pend; i++)
		if (l->pend[i].edge == (uint32_t)e)
			return;
	if (l->n_pend == PEND_MAX) {
		a->sum.unsampled_wakes++;
		return;
	}
	l->pend[l->n_pend++] = (struct pend){ .edge = (uint32_t)e, .ts = ev->ts };
}

static void touch(struct task_stats *st, uint64_t ts)
{
	if (ts > st->last_ns)
		st->last_ns = ts;
}

enum poll_end { END_PENDING, END_READY, END_CUT, END_TRACE };

/* Accounts the poll of frame f on thread t ending at ts. END_CUT: its end was
 * never seen (an inner or outer poll ended first, or the task was freed or
 * polled again); END_TRACE: still running when the trace ended. */
static void poll_close(struct analysis *a, struct thread *t, const struct frame *f,
		       uint64_t ts, enum poll_end how)
{
	struct task_stats *st = &a->tasks[f->idx], gone;
	struct live *l = live_get(a, f->header);
	uint64_t d = span(a, f->begin, ts);

	if (st->seq != f->seq) {
		/* Its row was folded, the slot perhaps reused: cannot happen (a
		 * task's frame goes before the task does); count nothing in it. */
		memset(&gone, 0, sizeof(gone));
		gone.seq = f->seq;
		st = &gone;
	}
	if (l && l->idx != f->idx)
		l = NULL;
	if (a->obs.span)
		a->obs.span(a->obs.ctx, st->seq, TASK_STATE_RUNNING, t->tid, !f->nested, f->begin,
			    f->begin + d);
	if (how != END_TRACE && !a->opts.states_only) {
		if (l)
			sample(a, l, DIST_POLL, d);
		else if (st->kind == TASK_KIND_TASK)
			nomem(a, hist__add(&a->dist[DIST_POLL], d)); /* its row is closed */
	}
	if (!f->nested && st->kind == TASK_KIND_TASK && d > a->opts.long_poll_ns &&
	    !a->opts.states_only) {
		struct long_poll p = {
			.seq = st->seq, .group = l ? live_ident(a, l) : 0, .tid = t->tid,
			.until_end = how == END_TRACE, .start_ns = f->begin, .duration_ns = d,
		};

		st->long_polls++;
		long_poll_add(a, &p);
	}
	st->busy_ns += d;
	if (d > st->max_poll_ns)
		st->max_poll_ns = d;
	if (!f->nested && st->kind == TASK_KIND_TASK) {
		t->st.busy_ns += d;
		t->st.polls++;
		if (l) {
			if (l->leaf_polls && l->leaf_tid != t->tid)
				l->leaf_mixed = true;
			l->leaf_tid = t->tid;
			l->leaf_ns += d;
			l->leaf_polls++;
		}
	}
	if (how != END_TRACE)
		touch(st, ts);
	if (how == END_CUT || how == END_TRACE) {
		if (how == END_CUT)
			a->sum.anomalies++;
		if (l && how == END_CUT && l->state == LIVE_RUNNING) {
			/* Unknown outcome: assume Pending. */
			enter(a, l, l->woken_in_poll ? LIVE_RUNNABLE : LIVE_IDLE, ts);
			l->woken_in_poll = false;
		}
		return;
	}
	if (how == END_READY) {
		st->ready_polls++;
		if (l)
			l->state = LIVE_COMPLETED;
		return;
	}
	st->pending_polls++;
	if (!l)
		return;
	enter(a, l, l->woken_in_poll ? LIVE_RUNNABLE : LIVE_IDLE, ts);
	l->woken_in_poll = false;
}

/* Removes frame i from t's stack, closing it as cut short at ts. */
static void frame_drop(struct analysis *a, struct thread *t, size_t i, uint64_t ts)
{
	struct frame f = t->stack[i];

	memmove(&t->stack[i], &t->stack[i + 1], (t->depth - i - 1) * sizeof(*t->stack));
	t->depth--;
	poll_close(a, t, &f, ts, END_CUT);
}

/* A running task's poll must be closed (freed or polled again while running). */
static void unrun(struct analysis *a, uint64_t header, struct live *l, uint64_t ts)
{
	struct thread *t = thread_find(a, l->run_tid);

	if (t)
		for (size_t i = t->depth; i-- > 0;)
			if (t->stack[i].header == header) {
				frame_drop(a, t, i, ts);
				return;
			}
	a->sum.anomalies++;
	enter(a, l, LIVE_IDLE, ts);
}

/* The task in stats slot idx turned out to be a worker: take back the time
 * its earlier polls were charged to threads as user-task time. */
static void make_worker_one(struct analysis *a, const struct frame *f)
{
	struct task_stats *st = &a->tasks[f->idx];
	struct live *l = live_get(a, f->header);
	struct thread *t;

	if (st->seq != f->seq || st->kind == TASK_KIND_WORKER)
		return;
	st->kind = TASK_KIND_WORKER;
	if (!l || !l->leaf_polls)
		return;
	t = l->leaf_mixed ? NULL : thread_find(a, l->leaf_tid);
	if (t && t->st.polls >= l->leaf_polls && t->st.busy_ns >= l->leaf_ns) {
		t->st.polls -= l->leaf_polls;
		t->st.busy_ns -= l->leaf_ns;
	} else {
		a->sum.anomalies++;
	}
	l->leaf_polls = l->leaf_ns = 0;
}

static bool worker_name(const struct analysis *a, const char *name)
{
	for (size_t i = 0; name && i < a->n_worker_names; i++)
		if (a->worker_names[i] == name) /* interned: one pointer per string */
			return true;
	return false;
}

/* The task of frame f is the runtime's loop (a poll nested in it). So is
 * every task with the same root future type polled outermost on its thread:
 * a worker that never ran a task (an idle one) has nothing nested in its poll
 * but the same type. Its poll in progress is turned now; later ones when
 * they begin (on_poll_begin). */
static void make_worker(struct analysis *a, const struct frame *f)
{
	const char *name = a->tasks[f->idx].name;

	if (a->tasks[f->idx].seq != f->seq)
		return;
	make_worker_one(a, f);
	if (!name || worker_name(a, name))
		return;
	if (reserve((void **)&a->worker_names, &a->cap_worker_names, a->n_worker_names,
		    sizeof(*a->worker_names))) {
		a->err = -ENOMEM;
		return;
	}
	a->worker_names[a->n_worker_names++] = name;
	for (size_t i = 0; i < a->n_threads; i++)
		if (a->threads[i].depth && a->tasks[a->threads[i].stack[0].idx].name == name)
			make_worker_one(a, &a->threads[i].stack[0]); /* checks the seq */
}

static int on_poll_begin(struct analysis *a, const struct as_event *ev)
{
	struct thread *t = thread_get(a, ev->tid, ev->ts);
	struct live *l;
	struct task_stats *st;
	int err = 0;

	if (!t)
		return -ENOMEM;
	t->worker = true;
	l = live_get(a, ev->task);
	if (l && l->state == LIVE_COMPLETED) {
		/* Polled after completing: its FREE was lost and the address reused. */
		a->sum.anomalies++;
		task_retire(a, ev->task, l);
		l = NULL;
	}
	if (l && l->state == LIVE_RUNNING) {
		unrun(a, ev->task, l, ev->ts);
		t = thread_find(a, ev->tid);
	}
	if (!l) {
		l = task_new(a, ev->task, ev->ts);
		if (!l)
			return -ENOMEM;
	} else {
		leave(a, l, ev->ts, BY_POLL);
	}
	for (unsigned i = 0; i < l->n_pend; i++) {
		struct edge_acc *e = &a->eacc[l->pend[i].edge];

		e->timed++;
		/* out of order: already counted as an anomaly by leave() */
		nomem(a, hist__add(&e->delay, ev->ts > l->pend[i].ts ? ev->ts - l->pend[i].ts : 0));
	}
	l->n_pend = 0;
	if (reserve((void **)&t->stack, &t->cap, t->depth, sizeof(*t->stack)))
		return -ENOMEM;
	st = &a->tasks[l->idx];
	if (!st->polls && !st->name && a->has_meta && ev->probe < a->meta.n_probes &&
	    a->meta.probes) {
		st->name = intern(a, a->meta.probes[ev->probe].future, &err);
		if (err)
			return err;
	}
	if (!st->tokio_id && ev->other)
		st->tokio_id = ev->other;
	st->polls++;
	touch(st, ev->ts);
	if (t->depth) {
		t->stack[t->depth - 1].nested = true;
		make_worker(a, &t->stack[t->depth - 1]);
	}
	t->stack[t->depth++] = (struct frame){
		.header = ev->task, .idx = l->idx, .seq = st->seq, .begin = ev->ts,
	};
	if (t->depth == 1 && st->kind == TASK_KIND_TASK && worker_name(a, st->name))
		make_worker_one(a, &t->stack[0]);
	l->state = LIVE_RUNNING;
	l->run_tid = ev->tid;
	l->woken_in_poll = false;
	return 0;
}

static int on_free(struct analysis *a, const struct as_event *ev);

static int on_poll_end(struct analysis *a, const struct as_event *ev)
{
	struct thread *t = thread_get(a, ev->tid, ev->ts);
	size_t i;

	if (!t)
		return -ENOMEM;
	t->spawn_pending = false;
	for (i = t->depth; i-- > 0;)
		if (t->stack[i].header == ev->task)
			break;
	if (i == (size_t)-1) {
		a->sum.anomalies++; /* begin not seen (attached mid-poll) or lost */
		return 0;
	}
	while (t->depth > i + 1)
		frame_drop(a, t, t->depth - 1, ev->ts);
	t->depth--;
	poll_close(a, t, &t->stack[i], ev->ts,
		   (ev->flags & AS_POLL_READY) ? END_READY : END_PENDING);
	struct live *l = live_get(a, ev->task);
	if (l && l->free_pending && l->state != LIVE_RUNNING) {
		struct as_event freed = *ev;
		freed.type = AS_EV_FREE;
		l->free_pending = false;
		return on_free(a, &freed);
	}
	return 0;
}

static int on_wake(struct analysis *a, const struct as_event *ev)
{
	struct live *l = live_get(a, ev->task);
	struct task_stats *st;
	struct thread *t;

	if (!l) {
		/* First sight: the spawn-time schedule, not a wake. */
		t = thread_get(a, ev->tid, ev->ts);
		if (!t)
			return -ENOMEM;
		l = task_new(a, ev->task, ev->ts);
		if (!l)
			return -ENOMEM;
		st = &a->tasks[l->idx];
		st->spawned_in_trace = true;
		if (t->spawn_pending) {
			st->spawn_file = t->spawn_file;
			st->spawn_line = t->spawn_line;
			st->spawn_col = t->spawn_col;
			st->parent = t->spawn_parent;
			t->spawn_pending = false;
		}
		enter(a, l, LIVE_RUNNABLE, ev->ts);
		return 0;
	}
	st = &a->tasks[l->idx];
	touch(st, ev->ts);
	if (l->state == LIVE_COMPLETED) {
		a->sum.anomalies++;
		return 0;
	}
	st->wakes++;
	if (ev->other == ev->task)
		st->self_wakes++;
	wake_edge(a, l, ev);
	switch (l->state) {
	case LIVE_IDLE:
		leave(a, l, ev->ts, BY_WAKE);
		enter(a, l, LIVE_RUNNABLE, ev->ts);
		break;
	case LIVE_RUNNING:
		l->woken_in_poll = true;
		break;
	default:
		break; /* already runnable: the clock keeps running */
	}
	return 0;
}

static int on_spawn(struct analysis *a, const struct as_event *ev)
{
	struct thread *t = thread_get(a, ev->tid, ev->ts);
	int err = 0;

	if (!t)
		return -ENOMEM;
	t->spawn_file = intern(a, ev->str, &err);
	if (err)
		return err;
	t->spawn_pending = true;
	t->spawn_line = (uint32_t)(ev->other >> 32);
	t->spawn_col = (uint32_t)ev->other;
	t->spawn_parent = t->depth ? t->stack[t->depth - 1].seq : 0;
	return 0;
}

static int on_free(struct analysis *a, const struct as_event *ev)
{
	struct live *l = live_get(a, ev->task);
	struct task_stats *st;

	if (!l)
		return 0; /* never seen: existed before the recording, never ran in it */
	if (l->state == LIVE_RUNNING && l->run_tid == ev->tid) {
		/* Tokio frees a completed task from inside its own poll (when its
		 * JoinHandle is gone): retire it when that poll ends. */
		l->free_pending = true;
		return 0;
	}
	st = &a->tasks[l->idx];
	if (l->state == LIVE_RUNNING)
		unrun(a, ev->task, l, ev->ts);   /* freed from elsewhere: its end was lost */
	leave(a, l, ev->ts, BY_FREE);
	touch(st, ev->ts);
	task_retire(a, ev->task, l);
	return 0;
}

static int on_thread(struct analysis *a, const struct as_event *ev)
{
	struct thread *t = thread_get(a, ev->tid, ev->ts);
	int err = 0;

	if (!t)
		return -ENOMEM;
	if (!t->st.name)
		t->st.name = intern(a, ev->str, &err);
	return err;
}

static int on_park(struct analysis *a, const struct as_event *ev, bool park)
{
	struct thread *t = thread_get(a, ev->tid, ev->ts);

	if (!t)
		return -ENOMEM;
	t->worker = true;
	if (park) {
		if (t->parked) {
			a->sum.anomalies++; /* keep the first PARK */
			return 0;
		}
		t->parked = true;
		t->park_start = ev->ts;
		t->st.parks++;
		return 0;
	}
	if (!t->parked) {
		a->sum.anomalies++; /* parked before the recording started, or PARK lost */
		return 0;
	}
	t->st.parked_ns += span(a, t->park_start, ev->ts);
	t->parked = false;
	if (a->obs.park)
		a->obs.park(a->obs.ctx, t->tid, t->park_start, ev->ts);
	return 0;
}

struct analysis *analysis__new_opts(const struct as_trace_meta *meta,
				    const struct analysis_opts *opts)
{
	struct analysis *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	if (meta) {
		a->meta = *meta;
		a->has_meta = true;
	}
	if (opts)
		a->opts = *opts;
	if (a->opts.observer)
		a->obs = *a->opts.observer;
	a->opts.observer = NULL;
	if (!a->opts.long_poll_ns)
		a->opts.long_poll_ns = ANALYSIS_LONG_POLL_NS;
	if (!a->opts.stall_ns)
		a->opts.stall_ns = ANALYSIS_STALL_NS;
	if (!a->opts.starve_ns)
		a->opts.starve_ns = ANALYSIS_STARVE_NS;
	if (!a->opts.long_poll_keep)
		a->opts.long_poll_keep = ANALYSIS_LONG_POLL_KEEP;
	if (!a->opts.max_tasks)
		a->opts.max_tasks = ANALYSIS_MAX_TASKS;
	a->sweep_at = SWEEP_MIN;
	a->sum.long_poll_ns = a->opts.long_poll_ns;
	a->sum.stall_ns = a->opts.stall_ns;
	a->sum.starve_ns = a->opts.starve_ns;
	if (!a->opts.states_only) {
		a->heap = calloc(a->opts.long_poll_keep, sizeof(*a->heap));
		if (!a->heap) {
			free(a);
			return NULL;
		}
	}
	return a;
}

struct analysis *analysis__new(const struct as_trace_meta *meta)
{
	return analysis__new_opts(meta, NULL);
}

static int add(struct analysis *a, const struct as_event *ev);

int analysis__add(struct analysis *a, const struct as_event *ev)
{
	int err;

	if (!a || !ev || a->finished)
		return -EINVAL;
	a->err = 0;
	err = add(a, ev);
	return err ? err : a->err;
}

static int add(struct analysis *a, const struct as_event *ev)
{
	a->sum.events++;
	if (!a->seen_event || ev->ts < a->sum.start_ns)
		a->sum.start_ns = ev->ts;
	if (!a->seen_event || ev->ts > a->last_ts)
		a->last_ts = ev->ts;
	a->seen_event = true;

	switch (ev->type) {
	case AS_EV_THREAD:
		return on_thread(a, ev);
	case AS_EV_SPAWN:
		return on_spawn(a, ev);
	case AS_EV_PARK:
		return on_park(a, ev, true);
	case AS_EV_UNPARK:
		return on_park(a, ev, false);
	case AS_EV_POLL_BEGIN:
	case AS_EV_POLL_END:
	case AS_EV_WAKE:
	case AS_EV_FREE:
		if (ev->task == 0 || ev->task == UINT64_MAX) {
			a->sum.anomalies++;
			return 0;
		}
		if (ev->type == AS_EV_POLL_BEGIN)
			return on_poll_begin(a, ev);
		if (ev->type == AS_EV_POLL_END)
			return on_poll_end(a, ev);
		if (ev->type == AS_EV_WAKE)
			return on_wake(a, ev);
		return on_free(a, ev);
	default:
		/* other concerns' events (USDT hits, ...) are counted, not
		 * analysed here; only a type no trace can hold is an anomaly */
		if (ev->type == 0 || ev->type >= AS_EV__MAX)
			a->sum.anomalies++;
		return 0;
	}
}

static int by_duration(const void *x, const void *y)
{
	const struct long_poll *a = x, *b = y;

	if (a->duration_ns != b->duration_ns)
		return a->duration_ns < b->duration_ns ? 1 : -1;
	return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns;
}

static int by_stall(const void *x, const void *y)
{
	const struct stall *a = x, *b = y;

	if (a->stalled_ns != b->stalled_ns)
		return a->stalled_ns < b->stalled_ns ? 1 : -1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int by_wait(const void *x, const void *y)
{
	const struct starve *a = x, *b = y;

	if (a->max_wait_ns != b->max_wait_ns)
		return a->max_wait_ns < b->max_wait_ns ? 1 : -1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int by_count(const void *x, const void *y)
{
	const struct wake_edge *a = x, *b = y;

	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	if (a->to_seq != b->to_seq)
		return a->to_seq < b->to_seq ? -1 : 1;
	if (a->from_kind != b->from_kind)
		return a->from_kind < b->from_kind ? -1 : 1;
	if (a->from_seq != b->from_seq)
		return a->from_seq < b->from_seq ? -1 : 1;
	if (a->to_group != b->to_group)
		return a->to_group < b->to_group ? -1 : 1;
	return a->from_group < b->from_group ? -1 : a->from_group > b->from_group;
}

/* The group of a folded task whose identity is ident (index + 1): index + 1
 * into a->groups, 0 none. */
static uint32_t group_ref(const struct analysis *a, uint32_t ident)
{
	return ident && ident <= a->n_idents ? a->group_of[ident - 1] : 0;
}

/* Long polls (those of tasks that turned out to be workers dropped, start
 * made relative), stalled and starved tasks: the folded rows' entries (made
 * when they were folded) and the kept rows'. Group references resolved. */
static int finish_lists(struct analysis *a)
{
	const struct summary *s = &a->sum;
	size_t n = 0, n_stall = 0, n_starve = 0;

	for (size_t i = 0; i < a->n_heap; i++) {
		struct long_poll p = a->heap[i];
		const struct task_stats *st = row_of(a, p.seq);

		if (st && st->kind != TASK_KIND_TASK)
			continue;
		p.group = st ? 0 : group_ref(a, p.group);
		p.start_ns = p.start_ns > s->start_ns ? p.start_ns - s->start_ns : 0;
		a->heap[n++] = p;
	}
	a->n_heap = n;
	qsort(a->heap, a->n_heap, sizeof(*a->heap), by_duration);

	for (size_t i = 0; i < a->n_stalls; i++) {
		struct stall *p = &a->stalls[i];

		p->group = group_ref(a, p->group);
		p->since_ns = p->since_ns > s->start_ns ? p->since_ns - s->start_ns : 0;
	}
	for (size_t i = 0; i < a->n_starves; i++)
		a->starves[i].group = group_ref(a, a->starves[i].group);
	for (size_t i = 0; i < a->n_tasks; i++) {
		n_stall += a->tasks[i].kind == TASK_KIND_TASK && a->tasks[i].stalls;
		n_starve += a->tasks[i].kind == TASK_KIND_TASK && a->tasks[i].starved;
	}
	if (grow((void **)&a->stalls, &a->cap_stalls, a->n_stalls + n_stall + 1,
		 sizeof(*a->stalls)) ||
	    grow((void **)&a->starves, &a->cap_starves, a->n_starves + n_starve + 1,
		 sizeof(*a->starves)))
		return -ENOMEM;
	for (size_t i = 0; i < a->n_tasks; i++) {
		const struct task_stats *st = &a->tasks[i];

		if (st->kind != TASK_KIND_TASK)
			continue;
		if (st->stalls)
			a->stalls[a->n_stalls++] = (struct stall){
				.seq = st->seq, .since_ns = st->stall_since_ns,
				.stalled_ns = st->stall_ns, .until_end = st->stall_until_end,
				.count = st->stalls,
			};
		if (st->starved)
			a->starves[a->n_starves++] = (struct starve){
				.seq = st->seq, .max_wait_ns = st->starve_max_ns, .count = st->starved,
			};
	}
	qsort(a->stalls, a->n_stalls, sizeof(*a->stalls), by_stall);
	qsort(a->starves, a->n_starves, sizeof(*a->starves), by_wait);
	return 0;
}

/* The waker kind of edge code (from_ident: the waker task's identity), as
 * far as known now; at finish, every task's kind is known. A folded waker
 * was a user task (worker tasks are never folded). */
static enum wake_source resolve(const struct analysis *a, uint64_t code, uint32_t from_ident,
				uint64_t *from_seq)
{
	const struct task_stats *w;
	const char *name;

	*from_seq = 0;
	if (code < EDGE_TASK)
		return (enum wake_source)code;
	w = row_of(a, code - EDGE_TASK);
	if (w && w->kind == TASK_KIND_WORKER)
		return WAKE_FROM_RUNTIME;
	name = w ? w->name : from_ident && from_ident <= a->n_idents
	       ? a->idents[from_ident - 1].g.name : NULL;
	if (name && !strncmp(name, BLOCKING_PREFIX, strlen(BLOCKING_PREFIX)))
		return WAKE_FROM_BLOCKING;
	*from_seq = code - EDGE_TASK;
	return WAKE_FROM_TASK;
}

/* The final end codes of group edge g, every task's kind and row known:
 * a waker that turned out to be the runtime's loop or a blocking task is
 * that kind; a task end its group if it was folded or its identity is a
 * group. */
static uint32_t final_from(const struct analysis *a, const struct gedge *g)
{
	const char *name;

	if (g->from < EDGE_TASK)
		return g->from;
	if (!(g->from & END_GROUP))
		return waker_end(a, g->from, g->from_ident);
	name = a->idents[(g->from & ~END_GROUP) - 1].g.name;
	if (worker_name(a, name))
		return WAKE_FROM_RUNTIME;
	if (name && !strncmp(name, BLOCKING_PREFIX, strlen(BLOCKING_PREFIX)))
		return WAKE_FROM_BLOCKING;
	return g->from;
}

static uint32_t final_to(const struct analysis *a, const struct gedge *g)
{
	return g->to & END_GROUP ? g->to : task_end(a, g->to, g->to_ident, 0);
}

/* Group edges with their final ends, merged where they meet (exactly: the
 * histograms merge). */
static int finish_gedges(struct analysis *a)
{
	struct u64map at = { 0 };
	size_t n = 0;
	int err = 0;

	for (size_t i = 0; i < a->n_gedges && !err; i++) {
		struct gedge *g = &a->gedges[i];
		uint32_t from = final_from(a, g), to = final_to(a, g);
		uint64_t key = (uint64_t)from << 32 | to, v;

		if (u64map__get(&at, key, &v)) {
			struct gedge *o = &a->gedges[v - 1];

			o->count += g->count;
			o->timed += g->timed;
			o->tasks += g->tasks;
			if (g->max > o->max)
				o->max = g->max;
			err = hist__merge(&o->delay, &g->delay);
			hist__clear(&g->delay);
			continue;
		}
		err = u64map__set(&at, key, n + 1);
		g->from = from;
		g->to = to;
		if (n != i) {
			a->gedges[n] = *g;
			memset(g, 0, sizeof(*g));
		}
		n++;
	}
	for (size_t i = n; i < a->n_gedges; i++)
		hist__clear(&a->gedges[i].delay);
	a->n_gedges = n;
	u64map__clear(&at);
	u64map__clear(&a->gedge_of); /* keys changed: no more lookups */
	return err;
}

/* Wake edges: the compact ones (in a->edges, into kept and live rows) are
 * resolved again now that every task's kind is known: those whose waker was
 * folded since go into group edges; duplicates (a waker that turned out to
 * be a worker after its edges were folded) merged in place: counts add up,
 * the maximum is exact, the percentiles are those of the part with the most
 * timed wakes. Then the group edges get their final ends and join them, with
 * group references for their group ends. Then sorted. */
static int finish_edges(struct analysis *a)
{
	struct u64map merged = { 0 };
	struct wake_edge *res;
	size_t n = 0, total;
	int err = 0;

	for (size_t i = 0; i < a->n_edges && !err; i++) {
		struct wake_edge e = a->edges[i], *o;
		uint64_t from_seq, v, key;
		enum wake_source k;

		if (!e.count)
			continue; /* moved into a group edge */
		k = resolve(a, e.from_seq, e.from_group, &from_seq);
		if ((k == WAKE_FROM_TASK && !row_of(a, from_seq)) || !row_of(a, e.to_seq)) {
			gedge_add_rec(a, &e, waker_end(a, e.from_seq, e.from_group),
				      task_end(a, e.to_seq, e.to_group, 0));
			continue;
		}
		key = (uint64_t)k << 32 | e.to_seq;
		if (k != WAKE_FROM_TASK && u64map__get(&merged, key, &v)) {
			o = &a->edges[v - 1];
			if (e.timed > o->timed) {
				o->delay_p50_ns = e.delay_p50_ns;
				o->delay_p99_ns = e.delay_p99_ns;
			}
			o->count += e.count;
			o->timed += e.timed;
			o->tasks += e.tasks;
			if (e.delay_max_ns > o->delay_max_ns)
				o->delay_max_ns = e.delay_max_ns;
			continue;
		}
		if (k != WAKE_FROM_TASK)
			err = u64map__set(&merged, key, n + 1);
		o = &a->edges[n++];
		*o = e;
		o->from_kind = k;
		o->from_seq = from_seq;
		o->from_group = 0;
		o->to_group = 0;
	}
	a->n_edges = n;
	a->n_moved = 0;
	u64map__clear(&merged);
	if (err || finish_gedges(a))
		return -ENOMEM;
	/* The group edges' results take the place of their records (smaller),
	 * then the compact edges join them: no second copy of either. */
	_Static_assert(sizeof(struct wake_edge) <= sizeof(struct gedge), "results in place");
	for (size_t i = 0; i < a->n_gedges; i++) {
		struct gedge g;
		struct wake_edge o;

		memcpy(&g, &a->gedges[i], sizeof(g));
		o = (struct wake_edge){
			.count = g.count, .timed = g.timed, .tasks = g.tasks,
			.delay_p50_ns = hist__quantile(&g.delay, 0.5),
			.delay_p99_ns = hist__quantile(&g.delay, 0.99), .delay_max_ns = g.max,
		};
		hist__clear(&g.delay);
		if (g.from < EDGE_TASK) {
			o.from_kind = (enum wake_source)g.from;
		} else if (g.from & END_GROUP) {
			o.from_kind = WAKE_FROM_TASK;
			o.from_group = group_ref(a, g.from & ~END_GROUP);
		} else {
			o.from_kind = WAKE_FROM_TASK;
			o.from_seq = g.from - EDGE_TASK;
		}
		if (g.to & END_GROUP)
			o.to_group = group_ref(a, g.to & ~END_GROUP);
		else
			o.to_seq = g.to;
		memcpy((char *)a->gedges + i * sizeof(o), &o, sizeof(o));
	}
	total = a->n_gedges + a->n_edges;
	a->n_gedges = 0; /* no histogram left to free */
	res = realloc(a->gedges, (total ? total : 1) * sizeof(*res));
	if (!res)
		return -ENOMEM;
	if (n)
		memcpy(res + (total - n), a->edges, n * sizeof(*res));
	free(a->edges);
	a->edges = res;
	a->n_edges = a->cap_edges = total;
	a->gedges = NULL;
	a->cap_gedges = 0;
	if (a->n_edges)
		qsort(a->edges, a->n_edges, sizeof(*a->edges), by_count);
	return 0;
}

/* Identities (indices into ctx, the array of idents) by busy time of their
 * groups, then tasks, then the order they were met. */
static int by_group_busy(const void *x, const void *y, void *ctx)
{
	size_t i = *(const size_t *)x, j = *(const size_t *)y;
	const struct ident *id = ctx;
	const struct task_group *a = &id[i].g, *b = &id[j].g;

	if (a->busy_ns != b->busy_ns)
		return a->busy_ns < b->busy_ns ? 1 : -1;
	if (a->tasks != b->tasks)
		return a->tasks < b->tasks ? 1 : -1;
	return i < j ? -1 : i > j;
}

/* The groups of folded tasks, busiest first, and the map from identities to
 * them. */
static int finish_groups(struct analysis *a)
{
	size_t *order;

	a->group_of = calloc(a->n_idents ? a->n_idents : 1, sizeof(*a->group_of));
	a->groups = calloc(a->n_idents ? a->n_idents : 1, sizeof(*a->groups));
	order = calloc(a->n_idents ? a->n_idents : 1, sizeof(*order));
	if (!a->group_of || !a->groups || !order) {
		free(order);
		return -ENOMEM;
	}
	for (size_t i = 0; i < a->n_idents; i++)
		if (a->idents[i].g.tasks)
			order[a->n_groups++] = i;
	qsort_r(order, a->n_groups, sizeof(*order), by_group_busy, a->idents);
	for (size_t i = 0; i < a->n_groups; i++) {
		a->groups[i] = a->idents[order[i]].g;
		a->group_of[order[i]] = (uint32_t)(i + 1);
	}
	free(order);
	return 0;
}

/* Kept and live rows to the front of a->tasks, in seq order. */
static void sort_rows(struct analysis *a)
{
	size_t n = 0;

	for (size_t i = 0; i < a->n_tasks; i++)
		if (a->tasks[i].seq)
			a->tasks[n++] = a->tasks[i];
	a->n_tasks = n;
	if (n)
		qsort(a->tasks, a->n_tasks, sizeof(*a->tasks), by_seq);
	a->sorted = true;
	a->n_free = 0;
	a->n_keep = 0;
	u64map__clear(&a->slot_of);
}

int analysis__finish(struct analysis *a, const struct as_trace_end *end)
{
	struct summary *s;
	uint64_t end_ns;

	if (!a || a->finished)
		return -EINVAL;
	s = &a->sum;
	end_ns = end ? end->end_ns : a->last_ts;
	if (!a->seen_event)
		s->start_ns = a->has_meta && a->meta.clock_mono_ns ? a->meta.clock_mono_ns : end_ns;
	if (a->has_meta && a->meta.clock_mono_ns && a->meta.clock_mono_ns < s->start_ns)
		s->start_ns = a->meta.clock_mono_ns;
	s->end_ns = end_ns;
	s->duration_ns = end_ns > s->start_ns ? end_ns - s->start_ns : 0;
	if (end) {
		s->lost = end->lost;
		s->missed = end->missed;
	}

	/* Polls still in progress: innermost first, so nesting is already known. */
	for (size_t i = 0; i < a->n_threads; i++) {
		struct thread *t = &a->threads[i];

		while (t->depth) {
			t->depth--;
			poll_close(a, t, &t->stack[t->depth], end_ns, END_TRACE);
		}
		if (t->parked) {
			t->st.parked_ns += span(a, t->park_start, end_ns);
			t->parked = false;
			if (a->obs.park)
				a->obs.park(a->obs.ctx, t->tid, t->park_start, end_ns);
		}
	}
	/* Live tasks: state at the end. */
	for (size_t i = 0; i < a->live.cap; i++) {
		uint64_t k = a->live.keys[i];
		struct live *l;
		struct task_stats *st;

		if (k == 0 || k == UINT64_MAX)
			continue;
		l = (struct live *)(uintptr_t)a->live.vals[i];
		st = &a->tasks[l->idx];
		switch (l->state) {
		case LIVE_RUNNING:
			st->state = TASK_STATE_RUNNING;
			break;
		case LIVE_RUNNABLE:
			st->state = TASK_STATE_RUNNABLE;
			break;
		case LIVE_IDLE:
			st->state = TASK_STATE_IDLE;
			break;
		case LIVE_COMPLETED:
			st->state = TASK_STATE_COMPLETED;
			break;
		}
		leave(a, l, end_ns, BY_END);
		fold(a, l);
		fold_edges(a, l, st->seq, false);
	}
	sort_rows(a);
	for (size_t i = 0; i < a->n_tasks; i++) {
		struct task_stats *st = &a->tasks[i];

		st->mean_poll_ns = st->polls ? st->busy_ns / st->polls : 0;
		st->pending_ratio = st->polls ? (double)st->pending_polls / (double)st->polls : 0;
		st->self_wake_ratio = st->wakes ? (double)st->self_wakes / (double)st->wakes : 0;
		if (st->stalls)
			st->stall_since_ns = st->stall_since_ns > s->start_ns
					     ? st->stall_since_ns - s->start_ns : 0;
		if (st->kind == TASK_KIND_TASK)
			s->long_polls += st->long_polls;
		s->tasks++;
		s->polls += st->polls;
		if (st->kind == TASK_KIND_WORKER) {
			s->worker_tasks++;
		} else {
			s->user_tasks++;
			s->user_polls += st->polls;
		}
	}
	/* Folded tasks: user tasks, all of them. */
	s->tasks += a->folded;
	s->user_tasks += a->folded;
	s->polls += a->folded_polls;
	s->user_polls += a->folded_polls;
	s->long_polls += a->folded_long_polls;
	s->folded_tasks = a->folded;
	s->max_tasks = a->opts.max_tasks == ANALYSIS_UNLIMITED ? 0 : a->opts.max_tasks;
	if (finish_groups(a))
		return -ENOMEM;
	s->task_groups = a->n_groups;

	a->workers = calloc(a->n_threads ? a->n_threads : 1, sizeof(*a->workers));
	if (!a->workers)
		return -ENOMEM;
	for (size_t i = 0; i < a->n_threads; i++)
		if (a->threads[i].worker)
			a->workers[a->n_workers++] = a->threads[i].st;
	s->workers = a->n_workers;
	if (!a->opts.states_only && (finish_lists(a) || finish_edges(a)))
		return -ENOMEM;
	s->stalled_tasks = a->n_stalls;
	s->starved_tasks = a->n_starves;
	if (a->err)
		return a->err;
	a->finished = true;
	return 0;
}

const struct task_stats *analysis__tasks(const struct analysis *a, size_t *n)
{
	*n = a && a->finished ? a->n_tasks : 0;
	return a && a->finished ? a->tasks : NULL;
}

const struct task_stats *analysis__task(const struct analysis *a, uint64_t seq)
{
	return a && a->finished ? row_of(a, seq) : NULL;
}

const struct task_group *analysis__groups(const struct analysis *a, size_t *n)
{
	*n = a && a->finished ? a->n_groups : 0;
	return *n ? a->groups : NULL;
}

const struct worker_stats *analysis__workers(const struct analysis *a, size_t *n)
{
	*n = a && a->finished ? a->n_workers : 0;
	return a && a->finished ? a->workers : NULL;
}

const struct summary *analysis__summary(const struct analysis *a)
{
	return a && a->finished ? &a->sum : NULL;
}

const struct hist *analysis__dist(const struct analysis *a, enum dist d)
{
	return a && a->finished && d >= 0 && d < DIST__MAX ? &a->dist[d] : NULL;
}

const struct long_poll *analysis__long_polls(const struct analysis *a, size_t *n)
{
	*n = a && a->finished ? a->n_heap : 0;
	return *n ? a->heap : NULL;
}

const struct stall *analysis__stalled(const struct analysis *a, size_t *n)
{
	*n = a && a->finished ? a->n_stalls : 0;
	return *n ? a->stalls : NULL;
}

const struct starve *analysis__starved(const struct analysis *a, size_t *n)
{
	*n = a && a->finished ? a->n_starves : 0;
	return *n ? a->starves : NULL;
}

const struct wake_edge *analysis__edges(const struct analysis *a, size_t *n)
{
	*n = a && a->finished ? a->n_edges : 0;
	return *n ? a->edges : NULL;
}

void analysis__mem(const struct analysis *a, struct analysis_mem *m)
{
	memset(m, 0, sizeof(*m));
	if (!a)
		return;
	for (size_t i = 0; i < a->live.cap; i++) {
		uint64_t k = a->live.keys[i];
		const struct live *l;

		if (k == 0 || k == UINT64_MAX)
			continue;
		l = (const struct live *)(uintptr_t)a->live.vals[i];
		m->live_tasks++;
		for (int d = 0; d < DIST__MAX; d++)
			m->live_hist_bytes += hist__mem(&l->h[d]);
	}
	m->rows = a->n_tasks - a->n_free;
	m->folded_tasks = a->folded;
	m->groups = a->n_idents;
	m->live_edges = a->n_eacc - a->n_free_eacc;
	m->group_edges = a->n_gedges;
	m->edges = m->live_edges + a->n_edges - a->n_moved + a->n_gedges;
	m->threads = a->n_threads;
	m->edge_bytes = a->cap_eacc * sizeof(*a->eacc) + a->cap_free_eacc * sizeof(*a->free_eacc) +
			(a->edge_of.cap + a->gedge_of.cap) * 2 * sizeof(uint64_t) +
			a->cap_edges * sizeof(*a->edges) + a->cap_gedges * sizeof(*a->gedges) +
			a->cap_rowe * sizeof(*a->rowe);
	for (size_t i = 0; i < a->n_eacc; i++)
		m->edge_bytes += hist__mem(&a->eacc[i].delay);
	for (size_t i = 0; i < a->n_gedges; i++)
		m->edge_bytes += hist__mem(&a->gedges[i].delay);
	m->bytes = m->live_hist_bytes + m->live_tasks * sizeof(struct live) +
		   a->cap_tasks * sizeof(*a->tasks) + m->edge_bytes +
		   (a->live.cap + a->thread_of.cap + a->slot_of.cap + a->ident_of.cap) * 2 *
		   sizeof(uint64_t) +
		   a->cap_threads * sizeof(*a->threads) + a->opts.long_poll_keep * sizeof(*a->heap) +
		   a->cap_stalls * sizeof(*a->stalls) +
		   a->cap_starves * sizeof(*a->starves) + a->cap_idents * sizeof(*a->idents) +
		   (a->cap_free + a->cap_keep) * sizeof(size_t) + a->strs.cap * sizeof(char *);
	for (uint32_t i = 0; i < a->strs.n; i++)
		m->bytes += a->strs.lens[i] + 1;
	for (int d = 0; d < DIST__MAX; d++)
		m->bytes += hist__mem(&a->dist[d]);
}

void analysis__free(struct analysis *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->live.cap; i++) {
		uint64_t k = a->live.keys[i];
		struct live *l;

		if (k == 0 || k == UINT64_MAX)
			continue;
		l = (struct live *)(uintptr_t)a->live.vals[i];
		for (int d = 0; d < DIST__MAX; d++)
			hist__clear(&l->h[d]);
		free(l);
	}
	for (size_t i = 0; i < a->n_eacc; i++)
		hist__clear(&a->eacc[i].delay);
	free(a->eacc);
	free(a->free_eacc);
	u64map__clear(&a->edge_of);
	for (size_t i = 0; i < a->n_gedges; i++)
		hist__clear(&a->gedges[i].delay);
	free(a->gedges);
	u64map__clear(&a->gedge_of);
	free(a->rowe);
	free(a->free_slots);
	free(a->keep);
	u64map__clear(&a->slot_of);
	free(a->idents);
	u64map__clear(&a->ident_of);
	free(a->groups);
	free(a->group_of);
	for (int d = 0; d < DIST__MAX; d++)
		hist__clear(&a->dist[d]);
	free(a->heap);
	free(a->edges);
	free(a->stalls);
	free(a->starves);
	u64map__clear(&a->live);
	for (size_t i = 0; i < a->n_threads; i++)
		free(a->threads[i].stack);
	free(a->threads);
	u64map__clear(&a->thread_of);
	strtab__clear(&a->strs);
	free(a->worker_names);
	free(a->tasks);
	free(a->workers);
	free(a);
}
