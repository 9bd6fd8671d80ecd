/* Timeline: what the workers and the busiest tasks did over time, in fixed
 * time buckets spanning the whole trace. Bucket bounds need the trace's
 * start and end, which a streaming reader only knows at the end, so the
 * timeline is a second pass: built from the finished first-pass analysis
 * (trace bounds, task kinds, worker threads, the busiest tasks), then fed the
 * same events again. It runs its own state-only analysis (tasks.h, with an
 * observer) on them, so a task's states mean exactly what they mean in the
 * report; task seqs agree because the events are the same.
 *
 * Memory: buckets x (worker threads + top tasks), plus the inner analysis
 * (live tasks; it keeps no finished rows). Pure C, no I/O, no globals.
 *
 * Use: timeline__new(pass1, meta, opts); timeline__add() for each event;
 * timeline__finish(end); read; timeline__free(). */
#ifndef AS_ANALYSIS_TIMELINE_H
#define AS_ANALYSIS_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/tasks.h"
#include "pipeline/sink.h"
#include "trace/event.h"

#define TIMELINE_BUCKETS 100
#define TIMELINE_TOP_TASKS 50

struct timeline_opts {
	size_t buckets;           /* 0: TIMELINE_BUCKETS (at most that many; fewer
	                             when the trace is shorter than that in ns) */
	size_t top_tasks;         /* 0: TIMELINE_TOP_TASKS, user tasks by busy time
	                             (among those pass 1 kept a row for) */
};

/* One worker thread of the first pass (analysis__workers()), per bucket.
 * busy: a user-task poll in progress on it; parked: PARK -> UNPARK; idle:
 * the rest of the bucket from the thread's first event on. ns per bucket. */
struct timeline_worker {
	uint32_t tid;
	const char *name;         /* borrowed from the first pass, or NULL */
	uint64_t *busy_ns, *idle_ns, *parked_ns;
	uint64_t *polls;          /* user-task polls that began in the bucket */
};

/* One of the busiest user tasks: the fraction (0..1) of each bucket it was
 * running (being polled), scheduled (runnable) and idle. */
struct timeline_task {
	uint64_t seq;
	const char *name;         /* borrowed from the first pass, or NULL */
	double *running, *scheduled, *idle;
};

struct timeline;

/* Returns a timeline over the trace pass1 analysed (finished; borrowed until
 * timeline__free()), or NULL with errno set (EINVAL: pass1 not finished).
 * meta as for analysis__new(); opts may be NULL. */
struct timeline *timeline__new(const struct analysis *pass1, const struct as_trace_meta *meta,
			       const struct timeline_opts *opts);

/* Feeds one event, as analysis__add(). */
int timeline__add(struct timeline *tl, const struct as_event *ev);

/* Closes the trace (end as for analysis__finish(), normally the same) and
 * computes the buckets. Returns 0, -EINVAL if called twice, -ENOMEM. */
int timeline__finish(struct timeline *tl, const struct as_trace_end *end);

/* Results, valid after timeline__finish() until timeline__free(). start_ns:
 * absolute (the first pass's summary.start_ns); bucket i covers
 * [start + i * bucket_ns, start + (i + 1) * bucket_ns), the last one clipped
 * to the end of the trace. Arrays have timeline__buckets() entries. */
uint64_t timeline__start_ns(const struct timeline *tl);
uint64_t timeline__bucket_ns(const struct timeline *tl);
size_t timeline__buckets(const struct timeline *tl);
const struct timeline_worker *timeline__workers(const struct timeline *tl, size_t *n);
const struct timeline_task *timeline__tasks(const struct timeline *tl, size_t *n);
/* User tasks runnable (woken, not yet polled): the most at any instant of
 * each bucket, and the time average over the bucket. */
const uint64_t *timeline__runnable_max(const struct timeline *tl);
const double *timeline__runnable_avg(const struct timeline *tl);

/* A sink view of x (pipeline/sink.h; ops->free NULL: x stays the caller's):
 * add() is timeline__add(), finish() timeline__finish() (a second pass:
 * a run of its own after the first pass finished). */
struct as_sink timeline__sink(struct timeline *x);

/* Frees tl and everything it owns; NULL accepted. */
void timeline__free(struct timeline *tl);

#endif
