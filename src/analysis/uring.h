/* io_uring requests per task (AS_EV_URING, record --uring): submissions
 * made inside each task's polls, their completions and completion latency.
 * Fed every event of a trace in order. Pure C: no libbpf, no I/O, no
 * globals. A request belongs to the task polled on its thread then (the
 * task model's: task_model.h); requests submitted outside any poll are
 * counted on one row of their own (task 0). */
#ifndef AS_ANALYSIS_URING_H
#define AS_ANALYSIS_URING_H

#include <stddef.h>
#include <stdint.h>

#include "pipeline/sink.h"
#include "trace/event.h"

struct uring;

struct uring_task {
	uint64_t task;         /* header address, 0: outside any poll */
	uint64_t seq;          /* the model's number (1, 2, ...), 0 outside polls or
	                          for a task the model never saw polled */
	uint64_t tokio_id;     /* 0 unknown */
	const char *name;      /* root future of its poll probe, "?", or "outside-polls" */
	uint64_t submitted, completed, errors;
	uint64_t p50_ns, p99_ns, max_ns;   /* completion latency */
};

struct uring_summary {
	uint64_t submitted, completed, errors;
};

struct task_model;

/* meta is borrowed until uring__free (probe names). NULL and errno on
 * failure. With a task model of its own, fed by uring__add(). */
struct uring *uring__new(const struct as_trace_meta *meta);
/* The same on task model m, shared with other analyses of the run, before
 * its first event (u observes it): m is borrowed and must outlive u (the
 * rows' names are its strings); the caller feeds m each event before
 * uring__add() (or puts task_model__sink(m) before uring__sink(u)). */
struct uring *uring__new_on(struct task_model *m, const struct as_trace_meta *meta);
/* Takes one event. Returns 0, -EINVAL for NULL u or ev, or -ENOMEM. */
int uring__add(struct uring *u, const struct as_event *ev);
/* Rows with submissions or completions, most submissions first (ties: by
 * address). Owned by u, valid until the next add or free. NULL with *n 0
 * when none or out of memory. */
const struct uring_task *uring__tasks(struct uring *u, size_t *n);
const struct uring_summary *uring__summary(const struct uring *u);
/* A sink view of x (pipeline/sink.h; ops->free NULL: x stays the caller's):
 * add() is uring__add(), no finish. With a shared model (uring__new_on()),
 * put task_model__sink() first. */
struct as_sink uring__sink(struct uring *x);

/* Accepts NULL. */
void uring__free(struct uring *u);

#endif
