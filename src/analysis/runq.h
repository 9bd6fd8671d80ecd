/* Run-queue delay per thread (AS_EV_RUNQ, record --runq or --offcpu): how
 * long the target's threads waited for a CPU once runnable, as a histogram
 * per thread, so that a worker the OS kept off a CPU is told apart from a
 * task the runtime kept waiting. Fed every event of a trace in order. Pure
 * C: no libbpf, no I/O, no globals.
 *
 * A worker is a thread that polled a task or parked in the runtime. */
#ifndef AS_ANALYSIS_RUNQ_H
#define AS_ANALYSIS_RUNQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pipeline/sink.h"
#include "trace/event.h"

struct runq;

struct runq_thread {
	uint32_t tid;
	const char *name;     /* thread name (comm), "?" unknown */
	bool worker;
	uint64_t count;       /* waits */
	uint64_t p50_ns, p99_ns, max_ns, total_ns;
	uint64_t in_poll;     /* waits that began inside a poll (in Tokio's multi_thread
	                         runtime, the worker loop is one: nearly all of a worker's) */
};

/* NULL and errno on failure. */
struct runq *runq__new(void);
/* Takes one event. Returns 0, -EINVAL for NULL q or ev, or -ENOMEM. */
int runq__add(struct runq *q, const struct as_event *ev);
/* Threads with at least one wait: workers first, then most total delay
 * first (ties: by tid). Owned by q, valid until the next add or free. NULL
 * with *n 0 when out of memory or none. */
const struct runq_thread *runq__threads(struct runq *q, size_t *n);
/* A sink view of x (pipeline/sink.h; ops->free NULL: x stays the caller's):
 * add() is runq__add(), no finish. */
struct as_sink runq__sink(struct runq *x);

/* Accepts NULL. */
void runq__free(struct runq *q);

#endif
