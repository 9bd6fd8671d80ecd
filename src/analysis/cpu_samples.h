/* CPU samples per task (AS_EV_SAMPLE, record --sample): how many samples
 * fell inside the polls of each task, and the flame-graph stacks behind
 * them. Fed every event of a trace in order, with the stack each sample
 * refers to. Pure C: no libbpf, no I/O, no globals.
 *
 * A sample belongs to the task polled on its thread then (the task
 * model's: task_model.h). Samples of a worker outside any task poll go to
 * "scheduler", or to "idle" while the worker is parked (between PARK and
 * UNPARK). Tokio's multi_thread worker loop is itself polled as a task: a
 * task the model calls a worker is the runtime's, and its samples count as
 * "scheduler" too. Samples of a thread that never polled or parked are
 * "outside the runtime". */
#ifndef AS_ANALYSIS_CPU_SAMPLES_H
#define AS_ANALYSIS_CPU_SAMPLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pipeline/sink.h"
#include "trace/event.h"

struct cpu_samples;

enum cpu_row_kind {
	CPU_ROW_TASK = 0,      /* a task's polls */
	CPU_ROW_SCHEDULER,     /* workers outside task polls, runtime tasks */
	CPU_ROW_IDLE,          /* workers while parked */
	CPU_ROW_OTHER,         /* threads outside the runtime */
};

struct cpu_row {
	enum cpu_row_kind kind;
	uint64_t task;         /* CPU_ROW_TASK: header address, else 0 */
	uint64_t seq;          /* CPU_ROW_TASK: the model's number (1, 2, ...), 0 for
	                          a task the model never saw polled, else 0 */
	uint64_t tokio_id;     /* 0 unknown */
	const char *name;      /* root future of the task's poll probe ("?"), or
	                          "scheduler", "idle", "outside-runtime" (a profile
	                          trace: "thread TID (NAME)") */
	uint64_t samples;
};

/* One flame-graph line: "task-future;user frames (outermost first);kernel
 * frames (outermost first)" and its sample count. A task's (or, in a
 * profile trace, a thread's) frames are folded to start at its code
 * (analysis/stack_fold.h) unless cpu_samples__set_fold() says
 * STACK_FOLD_ALL; the scheduler's, idle workers' and other threads' lose
 * only the thread's start (STACK_FOLD_THREAD: they start at the runtime's
 * loop). */
struct cpu_folded {
	const char *stack;
	uint64_t count;
	int32_t own;           /* index of the program's first frame in stack, -1 none */
	int32_t kernel;        /* index of its first kernel frame, -1 none */
};

/* One (row, stack) of the samples, for writers that want the frames
 * themselves (pprof): the samples of row with that stack. */
struct cpu_stack_weight {
	const struct cpu_row *row;   /* a runtime task's samples: the scheduler row */
	const struct as_stack *stack; /* its frames lent by the source the samples
	                                 came from (valid while it is), NULL none */
	uint32_t skip_kernel;        /* innermost kernel frames of the sampling path */
	unsigned flags;              /* how the line folded it (stack_fold.h) */
	uint64_t count;
};
typedef int (*cpu_samples_each_fn)(void *ctx, const struct cpu_stack_weight *w);

struct cpu_summary {
	uint64_t samples;      /* all samples */
	uint64_t in_tasks;     /* in CPU_ROW_TASK rows */
	uint64_t tasks;        /* CPU_ROW_TASK rows with samples */
	bool profile;          /* a profile trace (as_meta_profile()): tasks by the
	                          thread's CONTEXT, no polls; samples in no task are
	                          CPU_ROW_OTHER rows per thread, "thread 12 (main)" */
};

struct task_model;

/* meta is borrowed until cpu_samples__free (probe names). NULL and errno
 * on failure. With a task model of its own, fed by cpu_samples__add(). */
struct cpu_samples *cpu_samples__new(const struct as_trace_meta *meta);
/* The same on task model m, shared with other analyses of the run, before
 * its first event (c observes it): m is borrowed and must outlive c (the
 * rows' names are its strings); the caller feeds m each event before
 * cpu_samples__add() (or puts task_model__sink(m) before
 * cpu_samples__sink(c)). */
struct cpu_samples *cpu_samples__new_on(struct task_model *m, const struct as_trace_meta *meta);
/* Takes one event; for AS_EV_SAMPLE, stack is the one its stack field
 * names (NULL when none; read during the call only). Returns 0, -EINVAL
 * for NULL c or ev, or -ENOMEM. */
int cpu_samples__add(struct cpu_samples *c, const struct as_event *ev, const struct as_stack *stack);
/* Rows with samples, most first (ties: tasks by address, then the other
 * kinds in enum order). Owned by c, valid until the next add or free. NULL
 * with *n 0 when out of memory. */
const struct cpu_row *cpu_samples__rows(struct cpu_samples *c, size_t *n);
/* Flame-graph lines, most samples first (ties: by string). Owned by c,
 * valid until the next add or free. */
const struct cpu_folded *cpu_samples__folded(struct cpu_samples *c, size_t *n);
/* Summary (tasks counted as rows() does). NULL for NULL c. */
const struct cpu_summary *cpu_samples__summary(struct cpu_samples *c);
/* A sink view of x (pipeline/sink.h; ops->free NULL: x stays the caller's):
 * add() is cpu_samples__add() with the event's stack, no finish. With a
 * shared model (cpu_samples__new_on()), put task_model__sink() first. */
struct as_sink cpu_samples__sink(struct cpu_samples *x);

/* How task rows' stacks fold (stack_fold.h flags: STACK_FOLD_ALL keeps
 * every frame); before the first sample. Returns 0 or -EINVAL. */
int cpu_samples__set_fold(struct cpu_samples *c, unsigned flags);
/* Calls fn for every (row, stack) with samples, in no set order, until fn
 * returns non-zero (returned). The rows' names are final (as rows()).
 * Returns 0, fn's value, -EINVAL or -ENOMEM. */
int cpu_samples__each(struct cpu_samples *c, cpu_samples_each_fn fn, void *ctx);

/* Accepts NULL. */
void cpu_samples__free(struct cpu_samples *c);

#endif
