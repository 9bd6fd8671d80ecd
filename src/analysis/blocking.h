/* Blocking inside polls: off-CPU intervals (AS_EV_OFFCPU, record --offcpu)
 * per task and per cause, and the flame-graph stacks behind them. Fed every
 * event of a trace in order, with the stack each off-CPU event refers to.
 * Pure C: no libbpf, no I/O, no globals.
 *
 * A cause is (innermost kernel function, first user frame in the program's
 * own code, the call that frame made): the kernel frame is the first that is not the scheduler's
 * (schedule, __schedule, ...); the user frame the first whose name is not
 * std, core, alloc, the async runtimes' or a C library function. Intervals
 * spent parked in the runtime (between a worker's PARK and UNPARK: the
 * worker loop is itself polled as a task in Tokio's multi_thread runtime)
 * are counted apart, not as blocking. */
#ifndef AS_ANALYSIS_BLOCKING_H
#define AS_ANALYSIS_BLOCKING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pipeline/sink.h"
#include "trace/event.h"

struct blocking;

struct blocking_cause {
	const char *kernel;   /* innermost kernel function, "?" unknown */
	const char *user;     /* first user frame of the program's code, "?" unknown */
	const char *file;     /* its source file (traces of format 7 with DWARF line
	                         info), NULL unknown */
	uint32_t line;        /* its line, 0 unknown */
	const char *futures;  /* the future frames polled at the switch (record
	                         --futures), outermost first, ";" between, NULL none */
	const char *call;     /* the function the user frame called on the way to the
	                         switch (std::thread::sleep, clock_nanosleep, ...):
	                         the frame just inside it, NULL when the user frame is
	                         the innermost or unknown */
	uint64_t ns, count;
	uint64_t preempted_ns; /* of ns, switched out runnable (preempted) */
};

/* A task of the task model (its name and ids the model's). */
struct blocking_task {
	uint64_t task;        /* header address */
	uint64_t seq;         /* the model's number (1, 2, ... in order of first
	                         sight), 0 for a task the model never saw polled */
	uint64_t tokio_id;    /* 0 unknown */
	const char *name;     /* root future of its first poll's probe, or "?" */
	uint64_t ns, count;   /* off-CPU time and intervals inside its polls */
	uint64_t preempted_ns; /* of which switched out runnable (preempted) */
	struct blocking_cause *causes; /* n_causes, most time first */
	size_t n_causes;
};

/* One flame-graph line: "task-future;future frames (record --futures,
 * outermost first);user frames (outermost first);kernel frames (outermost
 * first)" and its weight in ns. */
struct blocking_folded {
	const char *stack;
	uint64_t ns;
};

struct blocking_summary {
	uint64_t ns, count;           /* inside polls of tasks (parked excluded) */
	uint64_t parked_ns, parked_count; /* while the worker was parked */
	uint64_t runtime_ns, runtime_count; /* in a worker's own loop, outside
	                                       any task's poll (a profile
	                                       trace: its parking too) */
	uint64_t tasks;               /* tasks with off-CPU time */
	bool profile;                 /* a profile trace (as_meta_profile()): tasks by
	                                 each thread's CONTEXT, off CPU while in a task) */
};

struct task_model;

/* meta is borrowed until blocking__free (probe names). NULL and errno on
 * failure. With a task model of its own, fed by blocking__add(). */
struct blocking *blocking__new(const struct as_trace_meta *meta);
/* The same on task model m, shared with other analyses of the run, before
 * its first event (b observes it): the task polled on a thread at a switch
 * (task_model__polled(), the task AS_EV_OFFCPU names), the frames on the
 * thread then, whether it is parked. m is borrowed and must outlive b (the
 * rows' names are its strings); the caller feeds m each event before
 * blocking__add() (or puts task_model__sink(m) before blocking__sink(b)). */
struct blocking *blocking__new_on(struct task_model *m, const struct as_trace_meta *meta);
/* Takes one event; for AS_EV_OFFCPU, stack is the one its stack field names
 * (NULL when none; copied as needed). Returns 0, -EINVAL for NULL b or ev,
 * or -ENOMEM. */
int blocking__add(struct blocking *b, const struct as_event *ev, const struct as_stack *stack);
/* Tasks with off-CPU time, most first (ties: by address). Owned by b, valid
 * until the next add or free. */
const struct blocking_task *blocking__tasks(struct blocking *b, size_t *n);
/* Flame-graph lines, heaviest first. Owned by b, valid until the next add
 * or free. */
const struct blocking_folded *blocking__folded(struct blocking *b, size_t *n);
const struct blocking_summary *blocking__summary(struct blocking *b);
/* A sink view of x (pipeline/sink.h; ops->free NULL: x stays the caller's):
 * add() is blocking__add() (the stack read for AS_EV_OFFCPU), no finish.
 * With a shared model (blocking__new_on()), put task_model__sink() first. */
struct as_sink blocking__sink(struct blocking *x);

/* Accepts NULL. */
void blocking__free(struct blocking *b);

#endif
