/* zoom: what the HTML page's zoomable timeline and per-task detail view
 * show, computed in the second pass beside the timeline (timeline.h, same
 * way: built from the finished first pass, fed the same events again, its
 * own state-only analysis observed, so task seqs and states mean what they
 * mean in the report).
 *
 * - The detailed tasks: the notable user tasks of the first pass (the
 *   busiest, the longest polls, the longest and the most scheduling delay,
 *   the most polled and woken, those with long polls, stalls or starvation,
 *   and the caller's own, e.g. the tasks blocking in polls), at most
 *   ZOOM_DETAIL_MAX. Each gets its poll-duration and scheduling-delay
 *   histograms (the same samples as the report's per-task percentiles: polls
 *   that ended, runnable waits a poll ended) and one lane over its own
 *   lifetime; the ZOOM_LANES_MAX busiest of them get finer lanes.
 * - One lane per worker thread over the whole trace: busy (a user-task poll
 *   on it) and parked ns per bucket; one of the runnable user tasks (most at
 *   any instant of each bucket).
 * A lane is ns per bucket of fixed width; its resolution is chosen before
 * the pass from the lane's length and a budget of buckets per kind, so the
 * data stay bounded (ZOOM_*_BUCKETS) whatever the trace's size, while short
 * lanes (a short-lived task) get fine buckets.
 *
 * Memory: the lanes' buckets (at most the budgets, 8 bytes each) and the
 * detailed tasks' histograms, plus the inner analysis (live tasks). Pure C,
 * no I/O, no globals. */
#ifndef AS_ANALYSIS_ZOOM_H
#define AS_ANALYSIS_ZOOM_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/hist.h"
#include "analysis/tasks.h"
#include "pipeline/sink.h"
#include "trace/event.h"

#define ZOOM_DETAIL_MAX 600            /* tasks detailed */
#define ZOOM_LANES_MAX 64              /* of which with fine lanes */
#define ZOOM_WORKER_BUCKETS 600000     /* buckets of all worker lanes together */
#define ZOOM_LANE_BUCKETS 8192         /* most buckets of one fine task lane */
#define ZOOM_STRIP_BUCKETS 256         /* most of another detailed task's lane */
#define ZOOM_MIN_BUCKET_NS 1000        /* no bucket narrower than 1 us */

struct zoom_opts {
	const uint64_t *extra;    /* more seqs to detail, first after the busiest */
	size_t n_extra;
	size_t detail_max;        /* 0: ZOOM_DETAIL_MAX */
};

/* A lane: buckets [i] covering [start_ns + i * bucket_ns, + bucket_ns), the
 * last one clipped to end_ns. */
struct zoom_lane {
	uint64_t start_ns, end_ns, bucket_ns;
	size_t buckets;
	uint64_t *a;              /* worker: busy ns; task: running ns; runnable: max count */
	uint64_t *b;              /* worker: parked ns; task: scheduled (runnable) ns; NULL */
};

struct zoom_worker {
	uint32_t tid;
	const char *name;         /* borrowed from the first pass, or NULL */
	bool seen;                /* an event of the thread was seen */
	uint64_t first_ns;        /* its first (before it: not alive), when seen */
	struct zoom_lane lane;
};

struct zoom_task {
	uint64_t seq;
	const struct task_stats *row;   /* the first pass's row (borrowed) */
	bool fine;                /* one of the ZOOM_LANES_MAX with a fine lane */
	struct hist poll, sched;  /* poll durations; runnable -> poll delays */
	struct zoom_lane lane;    /* over [row->first_ns, row->last_ns] */
};

struct zoom;

/* Returns the second pass over the trace pass1 analysed (finished; borrowed
 * until zoom__free()), or NULL with errno set (EINVAL: pass1 not finished).
 * meta as for analysis__new(); opts may be NULL. */
struct zoom *zoom__new(const struct analysis *pass1, const struct as_trace_meta *meta,
		       const struct zoom_opts *opts);
int zoom__add(struct zoom *z, const struct as_event *ev);
/* Closes the pass. Returns 0, -EINVAL if called twice, -ENOMEM. */
int zoom__finish(struct zoom *z, const struct as_trace_end *end);

/* Results, valid after zoom__finish() until zoom__free(). Times absolute
 * (the first pass's clock: summary.start_ns is the trace's start). */
const struct zoom_worker *zoom__workers(const struct zoom *z, size_t *n);
const struct zoom_lane *zoom__runnable(const struct zoom *z);
/* The detailed tasks: those with fine lanes first (busiest first), then
 * the others in the order they were picked. */
const struct zoom_task *zoom__tasks(const struct zoom *z, size_t *n);
/* How many user tasks the first pass had rows for (the detailed ones are
 * picked among them). */
size_t zoom__candidates(const struct zoom *z);

/* A sink view (pipeline/sink.h; ops->free NULL): add() is zoom__add(),
 * finish() zoom__finish(). */
struct as_sink zoom__sink(struct zoom *z);

/* Frees z and everything it owns; NULL accepted. */
void zoom__free(struct zoom *z);

#endif
