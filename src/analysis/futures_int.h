/* Internal to the future-level analysis (futures.c: following frames and
 * polls; futures_results.c: rendering the graphs, functions and parked
 * tasks at finish). Not for other modules: they use futures.h. */
#ifndef AS_ANALYSIS_FUTURES_INT_H
#define AS_ANALYSIS_FUTURES_INT_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "analysis/futures.h"
#include "analysis/task_model.h"
#include "util/strtab.h"
#include "util/u64map.h"

#define NONE UINT32_MAX
#define MAX_IDS 0x7fffffffu   /* nodes, chains, pairs: ids stay below this */

/* A probe as this analysis sees it. */
struct pinfo {
	uint32_t fn;            /* AS_ROLE_FUTURE: function index + 1, else 0 */
	uint32_t root;          /* a probe with a future name: root label id + 1 */
	const char *raw;        /* its raw future name (interned), for worker types */
};

/* A future function and what it needs besides its stats. */
struct fnrec {
	struct futures_fn st;
	uint32_t *awaits;       /* await point -> line */
	const char **awaitees;  /* await point -> awaited future (interned), or NULL */
	uint32_t n_awaits;
};

/* A call path: a task root (parent NONE, what = root label id) or a function
 * (what = fn) called from parent. */
struct node {
	uint32_t parent, what;
	uint64_t self_ns;
};

/* (function, await point) of a frame in an await chain. */
struct pair {
	uint32_t fn;
	int32_t ap;             /* -1 unknown */
};

/* A cons cell of an await chain: chain id = index + 1; 0 is the empty chain. */
struct cell {
	uint32_t pair;
	uint32_t next;
};

/* Pending time of (task root, chain). */
struct wait {
	uint32_t root, chain;
	uint64_t ns;
	uint32_t task;          /* opts.per_task: its task's identity, a strs id + 1 */
};

/* A task that stopped pending only at its FREE or the end: a parked entry. */
struct pk {
	uint64_t seq, tokio_id, since, waiting;
	uint32_t root, chain;
	bool until_end;
};

/* A future frame in progress. */
struct ffr {
	uint32_t probe, fn, depth, node;
	uint64_t begin;
	uint64_t child_ns;      /* frames and task polls nested directly in it */
	uint64_t floor;         /* latest end of those: its end is not before */
	uint64_t task;          /* seq of its task, 0 none */
	uint32_t pend;          /* chain of the last child that returned Pending */
	bool pend_known;        /* that child's Pending was recorded, not assumed */
};

/* A task poll in progress. */
struct pol {
	struct tm_task *task;
	uint32_t rnode;         /* root node of its task */
	size_t base;            /* frames open when it began */
	uint64_t begin, child_ns, floor;
	uint32_t pend;
	bool pend_known;
	bool nested;            /* another poll began inside it */
};

struct thr {
	uint32_t tid;
	const char *name;       /* interned, or NULL */
	uint32_t noroot;        /* node of its "(no task)" root + 1, 0 not yet */
	struct ffr *fr;
	size_t nfr, capfr;
	struct pol *po;
	size_t npo, cappo;
	uint64_t last_ts;       /* its previous event */
};

/* The analysis's part of a task of the model. */
struct ftask {
	uint32_t root;          /* root label id + 1, 0 before its first poll */
	bool polled, pending;
	uint64_t since;         /* pending: end of its last poll */
	uint32_t chain;         /* pending: its await chain */
};

struct futures {
	struct task_model *model;
	bool own_model;
	size_t toff;            /* struct ftask in the model's tasks */
	struct futures_opts opts;
	struct futures_observer obs;
	int err;                /* sticky -ENOMEM of the current add() */
	bool finished, seen;
	uint64_t last_ts;
	uint64_t end_ns;        /* in futures__finish() */

	struct pinfo *pi;
	uint32_t n_probes;
	struct strtab strs;     /* names, files, root labels, fn keys (raw) */
	struct fnrec *fns;
	size_t n_fns;
	struct u64map fn_of;    /* key string index + 1 -> function */

	struct node *nodes;
	size_t n_nodes, cap_nodes;
	struct u64map node_of;  /* root: label + 1; else (parent + 1) << 32 | fn */
	struct pair *pairs;
	size_t n_pairs, cap_pairs;
	struct u64map pair_of;  /* (fn + 1) << 32 | (ap + 1) -> index + 1 */
	struct cell *cells;
	size_t n_cells, cap_cells;
	struct u64map cell_of;  /* next << 32 | (pair + 1) -> chain id */
	struct wait *waits;
	size_t n_waits, cap_waits;
	struct u64map wait_of;  /* (root + 1) << 32 | chain -> index + 1 (opts.per_task:
	                           (root node + 1) << 32 | chain) */
	struct u64map task_root; /* opts.per_task: task seq -> its root node + 1 */
	struct u64map root_task; /* opts.per_task: root node + 1 -> its task's
	                            identity, a strs id + 1 */

	struct pk *pk;          /* min-heap on waiting: the longest parked kept */
	size_t n_pk, cap_pk;

	struct thr *thr;
	size_t n_thr, cap_thr;
	struct u64map thr_of;   /* tid + 1 -> index + 1 */

	struct futures_summary sum;

	/* results */
	struct strtab labels;   /* rendered (sanitised) frame labels */
	struct futures_stack *stacks[2];
	size_t n_stacks[2];
	const char **frame_pool; /* backing store of the stacks' frames */
	size_t n_pool, cap_pool;
	struct futures_fn *fn_sorted;
	size_t n_fn_sorted;
	struct futures_parked *parked;
	size_t n_parked;
	struct futures_link *links; /* backing store of the parked chains */
	size_t n_links;
};

static inline void fu_nomem(struct futures *f, int err)
{
	if (err && !f->err)
		f->err = err;
}

/* Interns the len bytes at s into t: returns its index, or -ENOMEM. */
static inline long fu_intern_len(struct strtab *t, const char *s, size_t len)
{
	uint32_t idx;

	if (strtab__intern(t, s, len, &idx) < 0)
		return -ENOMEM;
	return idx;
}

static inline const char *fu_basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* futures_results.c */
/* After the last frame and poll closed: the parked entries, the lines of
 * both graphs, the functions sorted. Returns 0 or -ENOMEM. */
int fu_build_results(struct futures *f);

#endif
