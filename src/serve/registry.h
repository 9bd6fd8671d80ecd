/* serve's metrics state: what /metrics exposes, with its labels bounded.
 * Three label tables, each holding at most `cap` values of its own (the
 * first seen keep theirs for the life of the agent, so that every series
 * stays monotonic) and an `other` row where every later one is summed:
 *   tasks     by root future (profile mode's sources: CPU samples and
 *             off-CPU intervals know a task's root future, not its spawn
 *             site), plus the fixed rows runtime (a worker's own loop),
 *             none (outside any task) and unknown (a task id never named);
 *   groups    by root future and spawn site (serve --tasks: the in-kernel
 *             aggregation's groups);
 *   culprits  by the blocking cause of an off-CPU interval inside a task:
 *             kernel function, user function, its source line.
 * Counters of ended sessions (a target that restarted, serve --name) are
 * kept as a base the current session's figures are added to. Pure C, no
 * I/O, no locking (serve holds its lock around every call). */
#ifndef AS_SERVE_REGISTRY_H
#define AS_SERVE_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events.h"
#include "util/strtab.h"
#include "util/u64map.h"

#define REG_CAP_DEFAULT 100

/* Fixed rows of the task table, before the named ones. */
enum reg_task_row {
	REG_TASK_OTHER = 0,   /* named tasks past the cap */
	REG_TASK_RUNTIME,     /* the runtime's own (a worker's loop) */
	REG_TASK_NONE,        /* outside any task */
	REG_TASK_UNKNOWN,     /* a task id the task lists never named */
	REG_TASK__FIXED,
};

struct reg_task {
	const char *name;           /* the label value (interned) */
	uint64_t samples;           /* CPU samples */
	uint64_t blocked_ns, blocked;   /* off CPU inside it, blocked (not preempted) */
	uint64_t preempted_ns;      /* off CPU inside it, preempted (runnable) */
};

struct reg_culprit {
	const char *kernel, *user, *src;   /* label values ("" none) */
	uint64_t ns, count;
};

struct reg_group {
	const char *task, *spawn;   /* label values */
	struct agg_group base;      /* of ended sessions */
	struct agg_group cur;       /* the current session's, as last read */
	uint64_t live, stalled;     /* gauges of the last read */
};

struct registry {
	size_t cap;                 /* named rows per table */
	struct reg_task *tasks;     /* n_tasks: REG_TASK__FIXED fixed rows, then named */
	size_t n_tasks;
	struct reg_culprit *culprits;   /* [0]: other */
	size_t n_culprits;
	struct reg_group *groups;   /* [0]: other */
	size_t n_groups;
	/* lookups that went to other (events, not distinct values) */
	uint64_t tasks_over, culprits_over, groups_over;
	struct agg_totals agg_base, agg_cur;
	/* private */
	struct strtab strs;
	struct u64map task_idx, culprit_idx, group_idx;   /* string hash -> row + 1 */
};

/* A registry of cap named rows per table (0: REG_CAP_DEFAULT). NULL and
 * errno on failure. */
struct registry *registry__new(size_t cap);
void registry__free(struct registry *r);

/* The task row of root future name (NULL: REG_TASK_UNKNOWN), made when new
 * (REG_TASK_OTHER past the cap). Returns the row, or -ENOMEM. */
int registry__task(struct registry *r, const char *name);
/* The culprit row of (kernel, user, src) (NULL: ""). Returns the row or
 * -ENOMEM. */
int registry__culprit(struct registry *r, const char *kernel, const char *user, const char *src);
/* The group row of (task, spawn) (NULL: "unknown", ""). Returns the row
 * or -ENOMEM. */
int registry__group(struct registry *r, const char *task, const char *spawn);

/* A new read of the current session's aggregation: every group's cur and
 * the totals set to nothing, before the read's groups are added. */
void registry__agg_begin(struct registry *r);
/* The session ended: its last figures (cur) join the base. */
void registry__agg_fold(struct registry *r);
/* base + cur of group g, and of the totals. */
void registry__group_sum(const struct registry *r, size_t g, struct agg_group *out);
void registry__totals_sum(const struct registry *r, struct agg_totals *out);

/* a += b over every (u64) field of an agg_group / agg_totals. */
void agg_group__add(struct agg_group *a, const struct agg_group *b);
void agg_totals__add(struct agg_totals *a, const struct agg_totals *b);

#endif
