/* Internal to the task analysis (tasks.c: rows, polls, states, findings;
 * tasks_edges.c: the wake graph). Not for other modules: they use tasks.h.
 * The analysis observes a task model (task_model.h); what it keeps per live
 * task and per thread lives in the model's tasks and threads (struct tlive,
 * struct tthread). Pure C: no libbpf, no I/O, no globals. */
#ifndef AS_ANALYSIS_TASKS_INT_H
#define AS_ANALYSIS_TASKS_INT_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/task_model.h"
#include "analysis/cbag.h"
#include "analysis/samples.h"
#include "analysis/task_stats.h"
#include "util/u64map.h"
#include "util/u64tab.h"

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
#define GROUP_SUB_BITS CBAG_SUB_BITS
#define GROUP_BUCKETS 256      /* buckets read at once from an edge's histogram */

/* A wake waiting for the woken task's next poll, to time its edge. */
struct pend {
	uint32_t ref;          /* its entry in the task's wake log, or (PEND_EDGE |)
	                          its edge in the task's edge table */
	uint32_t code;         /* the waker code */
	uint64_t ts;
};
#define PEND_EDGE 0x80000000u

/* One wake of a live task, logged as it comes: the edges are made from the
 * log when it fills or the task goes (ta_fold_edges()), in one pass over
 * memory of the task's own, not a lookup per wake. */
struct wlog_ent {
	uint32_t code;         /* waker code (see tasks.c) */
	uint32_t from_ident;   /* the waker task's identity, 0 none */
	uint32_t slot;         /* the waker task's row slot */
	uint32_t delay;        /* wake -> poll ns, or WL_UNTIMED, WL_PENDING */
};
#define WL_UNTIMED UINT32_MAX          /* not timed (not the first from its waker) */
#define WL_PENDING (UINT32_MAX - 1)    /* timed at the next poll (a pend) */
#define WLOG_MAX 63                    /* entries before they go into edges (1008
                                          bytes: the allocator's fast path, as
                                          SAMPLES_MAX) */

/* Wakes of one waker code into a live task, while the task lives. */
struct edge_acc {
	uint32_t code;         /* waker code: a wake_source, or seq + EDGE_TASK */
	uint32_t from_ident;   /* waker task's identity, index + 1; 0 none */
	uint64_t count, timed;
	uint32_t tasks;        /* waker tasks merged into it (runtime, blocking) */
	bool merged;           /* merged into another edge of its kind */
	/* ta_fold_edges(): the waker's kind and whether it has a row, found
	 * once for the edge */
	uint8_t kind;
	bool waker_row;
	uint32_t waker_slot;   /* a waker task's row slot when the edge was made */
	struct samples delay;  /* wake -> poll delays of its timed wakes */
};

/* The edges into a live task, in order of creation, in one array of its
 * own (walked in order when the task goes), found by waker code through a
 * small open-addressing index once there are more than EDGE_SCAN. */
struct tedges {
	struct edge_acc *e;
	uint32_t n, cap;
	uint32_t *slot;        /* index + 1 by code hash, 0 empty; nslot of them */
	uint32_t nslot;        /* a power of two, 0: no index (scan) */
};
#define EDGE_SCAN 8

/* The counters of a live task's row (struct task_stats' fields of those
 * names), kept with its other live data: the row is written once, when the
 * task goes (or the trace ends). tokio_id: the first non-zero one its polls
 * gave. */
struct tcount {
	uint64_t polls, pending_polls, ready_polls, busy_ns, max_poll_ns;
	uint64_t sched_ns, idle_ns, wakes, self_wakes, last_ns, long_polls;
	uint64_t starved, starve_max_ns, stalls, stall_since_ns, stall_ns, tokio_id;
	bool stall_until_end;
};

/* The analysis's part of a live task of the model. */
struct tlive {
	bool has_row;          /* born with a row (false: out of memory then) */
	uint8_t n_pend;
	uint32_t ident;        /* its identity (index + 1 into a->idents), 0 not
	                          looked up yet (only once its name is final) */
	size_t idx;            /* into a->tasks */
	struct tcount c;
	/* Time of its leaf polls charged to worker threads, taken back if the
	 * task turns out to be a worker (a poll nests inside a later poll of it). */
	uint64_t leaf_ns, leaf_polls;
	uint32_t leaf_tid;
	bool leaf_mixed;       /* leaf polls on more than one thread */
	struct pend pend[PEND_MAX];
	struct wlog_ent *log;  /* its wakes not in edges yet: n_log of cap_log */
	uint16_t n_log, cap_log;
	struct tedges ed;      /* the edges into it (made from the log) */
	struct samples h[DIST__MAX];
};

/* The analysis's part of a thread of the model. */
struct tthread {
	struct worker_stats st;
};

/* Wakes with a folded end, merged per pair of end codes (see END_GROUP). */
struct gedge {
	uint32_t from, to;               /* end codes */
	uint32_t from_ident, to_ident;   /* identities of task ends, 0 unknown */
	uint64_t count, timed, tasks;
	uint64_t max;                    /* exact maximum delay */
	struct cbag delay;               /* delays at group precision */
};
/* two cache lines (a->gedges is 64-byte aligned): an update reads no more */
_Static_assert(sizeof(struct gedge) == 128, "a group edge is two cache lines");

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
	/* Tasks folded while idle (the live-task limit): how many, and the sum
	 * of the starts of their idle times, closed at the end of the trace. */
	uint64_t open_idle;
	unsigned __int128 open_since;
};

struct analysis {
	struct as_trace_meta meta;        /* shallow copy: clock only */
	bool has_meta, finished;
	struct analysis_opts opts;        /* defaults filled in */
	struct analysis_observer obs;
	int err;                          /* -ENOMEM met since the last add() returned */

	struct task_model *model;         /* the rules of a task's life */
	bool own_model;                   /* made (fed, finished, freed) by the analysis */
	size_t toff, thoff;               /* struct tlive / tthread in the model's */
	struct tm_ops ops;                /* what it observes */

	struct task_stats *tasks;         /* slots; sorted by seq after finish */
	size_t n_tasks, cap_tasks;        /* slots used so far */
	/* Per slot until finish: what a wake edge's waker end and a folded
	 * row need of the row, read without the row itself (a cache miss
	 * each): its seq (0 a free slot), identity (0 not known yet), RF_*;
	 * after, per row in seq order, its seq alone (ta_row_of()) */
	struct rinfo { uint64_t seq; uint32_t ident; uint8_t flags; } *rinfo;
	size_t cap_rinfo;
	size_t *free_slots;               /* slots of folded rows, for reuse */
	size_t n_free, cap_free;
	struct u64tab slot_of;            /* seq -> slot + 1 (until finish; no tombstones) */
	size_t *keep;                     /* min-heap of kept finished user rows (slots) */
	size_t n_keep, cap_keep;
	uint64_t folded, folded_polls, folded_long_polls;
	uint64_t folded_live;             /* of folded, by the live-task limit */

	struct worker_stats *workers;
	size_t n_workers;
	struct summary sum;
	bool seen_event;
	bool counted_by_model;            /* its sink takes no event: the model counts them */
	uint64_t last_ts;                 /* largest timestamp seen */

	struct hist dist[DIST__MAX];      /* user tasks, folded in as they go */
	size_t n_live_edges;              /* edges into live tasks (their tedges) */
	struct long_poll *heap;           /* min-heap on duration, absolute start,
	                                     group: the task's identity + 1 */
	size_t n_heap;
	struct wake_edge *edges;          /* compact edges (see the top), then the results */
	size_t n_edges, cap_edges;
	uint32_t *eslot;                  /* per compact edge until finish: the row slot
	                                     its waker task had (edge_acc.waker_slot) */
	size_t cap_eslot;
	size_t n_moved;                   /* of which moved into group edges (count 0) */
	size_t sweep_at;                  /* n_edges that calls sweep_edges() */
	struct row_edges *rowe;           /* per slot of a->tasks */
	size_t cap_rowe;
	struct tedges fold_ed;            /* ta_fold_edges()'s edge table for a task
	                                     without one: its memory kept for the next */
	struct gedge *gedges;             /* group edges (64-byte aligned in gedges_raw) */
	void *gedges_raw;                 /* the block that holds them */
	size_t n_gedges, cap_gedges;
	struct u64tab gedge_of;           /* from << 32 | to -> index + 1 */
	uint64_t *gscratch;               /* ta_fold_edges(): the group edge keys, then
	                                     indices + 1, of one task's edges */
	size_t cap_gscratch;
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

/* Growth of a (pointer, len, cap) array to hold need elements. */
static inline int ta_grow(void **arr, size_t *cap, size_t need, size_t size)
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
static inline int ta_reserve(void **arr, size_t *cap, size_t len, size_t size)
{
	return ta_grow(arr, cap, len + 1, size);
}

static inline void ta_nomem(struct analysis *a, int err)
{
	if (err)
		a->err = -ENOMEM;
}

static inline struct tlive *ta_live(const struct analysis *a, const struct tm_task *t)
{
	return tm_task__data(t, a->toff);
}

static inline int ta_by_seq(const void *x, const void *y)
{
	const struct task_stats *a = x, *b = y;

	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

#define RF_WORKER 1            /* its kind is TASK_KIND_WORKER */
#define RF_BLOCKING 2          /* a blocking-pool task's (TM_NAME_POOL) */

/* Whether name is that of a task of the runtime's blocking pool (its
 * profile's pool_tasks, not a worker loop). */
static inline bool ta_blocking_name(const struct analysis *a, const char *name)
{
	return task_model__name_kind(a->model, name) & TM_NAME_POOL;
}

/* The slot of the row of task seq (live or kept), or -1: folded or never
 * seen. Before finish only. */
static inline long ta_slot_of(const struct analysis *a, uint64_t seq)
{
	uint64_t v;

	return seq && u64tab__get(&a->slot_of, seq, &v) ? (long)(v - 1) : -1;
}

/* The row of task seq (live or kept), or NULL: folded or never seen. */
static inline const struct task_stats *ta_row_of(const struct analysis *a, uint64_t seq)
{
	uint64_t v;

	if (a->sorted) {
		/* the rows' seqs, in order, in rinfo (see sort_rows()) */
		size_t lo = 0, hi = a->n_tasks;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (a->rinfo[mid].seq < seq)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo < a->n_tasks && a->rinfo[lo].seq == seq ? &a->tasks[lo] : NULL;
	}
	if (seq && u64tab__get(&a->slot_of, seq, &v))
		return &a->tasks[v - 1];
	return NULL;
}

/* tasks_idents.c */
/* The identity of row st (index + 1 into a->idents), added if new; 0 out of
 * memory (a->err set). */
uint32_t ta_ident_get(struct analysis *a, const struct task_stats *st);
/* The identity of live task l (its name is final). */
uint32_t ta_live_ident(struct analysis *a, struct tlive *l);
/* The group of a folded task whose identity is ident (index + 1): index + 1
 * into a->groups, 0 none. */
static inline uint32_t ta_group_ref(const struct analysis *a, uint32_t ident)
{
	return ident && ident <= a->n_idents ? a->group_of[ident - 1] : 0;
}

/* tasks_edges.c */
/* A wake of live task l (a row, seq to_seq) by w at ts: counted on its edge
 * and, when first from that waker since the last poll, timed at the next
 * poll. */
void ta_wake_edge(struct analysis *a, struct tlive *l, uint64_t to_seq, const struct tm_wake *w,
		  uint64_t ts);
/* Live task l (a row) is polled at ts: its pending wakes are timed. */
void ta_wake_timed(struct analysis *a, struct tlive *l, uint64_t ts);
/* The edges into task l (seq to_seq) are final: kept compact, or into
 * group edges when its row was folded (folded). */
void ta_fold_edges(struct analysis *a, struct tlive *l, uint64_t to_seq, bool folded);
/* Frees the edges into l unfolded (the analysis is being freed). */
void ta_clear_edges(struct analysis *a, struct tlive *l);
/* Bytes the edges into l hold. */
size_t ta_edges_mem(const struct tlive *l);
/* The kept row in slot (identity id) is being folded: its compact edges go
 * into group edges. */
void ta_row_edges_out(struct analysis *a, size_t slot, uint32_t id);
/* The wake edge results (see tasks_edges.c). Returns 0 or -ENOMEM. */
int ta_finish_edges(struct analysis *a);

#endif
