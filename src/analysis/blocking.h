/* Blocking inside polls: off-CPU intervals (AS_EV_OFFCPU, record --offcpu)
 * per task and per cause, and the flame-graph stacks behind them. Fed every
 * event of a trace in order, with the stack each off-CPU event refers to.
 * Pure C: no libbpf, no I/O, no globals.
 *
 * A cause is (innermost kernel function, first user frame in the program's
 * own code, the call that frame made): the kernel frame is the first that is not the scheduler's
 * (schedule, __schedule, ...); the user frame the innermost of the
 * program's own code (stack_frame_kind(): not std, core, alloc, the async
 * runtimes', a known or registry crate's, nor a C library function). Intervals
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
	bool pool;            /* a frame of a blocking-pool task's poll on the stack
	                         (the runtime profile's pool_frames): by design */
	bool handoff;         /* inside block_in_place (handoff_frames) */
	bool cut;             /* user is "?" and the user stack stopped before the
	                         thread's start: the program's frame may have been
	                         cut off (frame pointers end in libc; --dwarf) */
	uint64_t ns, count;
	uint64_t runnable_ns; /* of ns, waiting for a CPU (below) */
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
	uint64_t runnable_ns; /* of which runnable, waiting for a CPU: from the
	                         thread's wakeup (or its preemption) to its switch
	                         back in, known from its run-queue wait ending at
	                         that switch (AS_EV_RUNQ: record --offcpu / --runq);
	                         ns - runnable_ns is the time the call blocked */
	struct blocking_cause *causes; /* n_causes, most time first */
	size_t n_causes;
};

/* One flame-graph line: "task-future;future frames (record --futures,
 * outermost first);user frames (outermost first);kernel frames (outermost
 * first)" and its weight in ns. */
struct blocking_folded {
	const char *stack;
	uint64_t ns;
	int32_t own;          /* index of the program's first frame in stack, -1 none */
	int32_t kernel;       /* index of its first kernel frame, -1 none */
};

/* One (task, stack, future chain) of the off-CPU time, for writers that
 * want the frames themselves (pprof). */
struct blocking_stack_weight {
	const struct blocking_task *task; /* its name and ids final (causes not set) */
	const struct as_stack *stack;  /* its frames lent by the source the events
	                                  came from (valid while it is), NULL none */
	uint32_t skip_kernel;          /* innermost tracing frames */
	unsigned flags;                /* how the lines fold (stack_fold.h) */
	const char *futures;           /* future frames polled at the switches,
	                                  outermost first, ";" between, NULL none */
	uint64_t ns, count;
};
typedef int (*blocking_each_fn)(void *ctx, const struct blocking_stack_weight *w);

struct blocking_summary {
	uint64_t ns, count;           /* inside polls of tasks (parked excluded) */
	uint64_t runnable_ns;         /* of ns, waiting for a CPU (blocking_task) */
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

/* How stacks fold in the lines (stack_fold.h flags: STACK_FOLD_ALL keeps
 * every frame; the default folds them to start at the task's code);
 * before the first off-CPU event. Returns 0 or -EINVAL. */
int blocking__set_fold(struct blocking *b, unsigned flags);
/* Calls fn for every (task, stack, chain) with off-CPU time, in no set
 * order, until fn returns non-zero (returned). Returns 0, fn's value,
 * -EINVAL or -ENOMEM. */
int blocking__each(struct blocking *b, blocking_each_fn fn, void *ctx);

/* Accepts NULL. */
void blocking__free(struct blocking *b);

#endif
