/* pprof_trace: a trace's analyses gathered into one pprof profile
 * (output/pprof.h), for `export --format pprof` and `--format speedscope`.
 * Sample types, each present only when the trace holds such data:
 *
 *   samples/count, cpu/nanoseconds  CPU samples (record --sample, profile):
 *                                   cpu = samples x the sampling period,
 *                                   found from the samples' spacing
 *   offcpu/nanoseconds              off CPU inside polls (--offcpu, profile)
 *   future/nanoseconds              self time of the program's futures in
 *                                   polls (record --futures)
 *   await/nanoseconds               time pending, by the await chain polled
 *                                   last (record --futures)
 *   poll/nanoseconds                busy time of each task's polls (task mode)
 *
 * Each sample's stack starts at a synthetic frame naming the task (its
 * root future, as folded stacks start: "scheduler", "idle", ... for CPU
 * samples outside tasks), then (off CPU) the future frames polled then,
 * then the recorded frames, folded as stack_fold.h says (the runtime's
 * scaffolding left out unless STACK_FOLD_ALL). Labels: "task" (that name),
 * "task_id" (util/task_id.h: "#3", "~7"; on future and await samples too:
 * the futures analysis keeps each task's paths apart, futures_opts.per_task)
 * and "program_frame"
 * (the program's first frame in the stack, when there is one).
 *
 * Observes a task model like every analysis: memory as theirs (the
 * distinct stacks), nothing per event. No I/O. */
#ifndef AS_OUTPUT_PPROF_TRACE_H
#define AS_OUTPUT_PPROF_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output/pprof.h"
#include "pipeline/sink.h"
#include "trace/event.h"

struct task_model;
struct pprof_trace;

/* What went into a profile. */
struct pprof_trace_summary {
	uint64_t cpu_samples;
	int64_t period_ns;         /* the sampling period found, 0 unknown (fewer
	                              than 16 spacings of samples on one thread) */
	uint64_t offcpu_ns, future_ns, await_ns, poll_ns;
	uint64_t samples;          /* pprof samples (distinct stacks and labels) */
};

/* A collector on task model m (borrowed; registered before m's first
 * event), meta borrowed until pprof_trace__free(); fold_flags for every
 * stack (stack_fold.h). NULL and errno on failure. */
struct pprof_trace *pprof_trace__new_on(struct task_model *m, const struct as_trace_meta *meta,
					unsigned fold_flags);
/* Its sinks, to run after the model's own (task_model__sink(m)): up to 4
 * into out; returns how many. */
size_t pprof_trace__sinks(struct pprof_trace *t, struct as_sink *out, size_t max);
/* After the run (the sinks finished; the source that lent the stacks not
 * yet freed): the profile, into *out (the caller frees it). end may be
 * NULL. Returns 0, -ENOMEM. */
int pprof_trace__build(struct pprof_trace *t, const struct as_trace_end *end, struct pprof **out,
		       struct pprof_trace_summary *sum);
/* Accepts NULL. */
void pprof_trace__free(struct pprof_trace *t);

#endif
