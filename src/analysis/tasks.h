/* Task analysis: turns the decoded event stream (src/trace/event.h) into
 * per-task, per-worker-thread and whole-trace statistics. Pure C: no libbpf,
 * no I/O, no globals. Robust to what real recordings contain: events a few
 * microseconds out of order between threads, a recording that starts in the
 * middle of polls, lost events. Such oddities never fail the analysis: they
 * are clamped (no negative durations) and counted in summary.anomalies.
 *
 * Use: analysis__new(meta) (or analysis__new_opts()); analysis__add() for
 * each event in order; analysis__finish(end) once; then read the results
 * through the accessors, valid until analysis__free().
 *
 * Memory is bounded by the live tasks (their state, their histograms until
 * they finish, the edges into them), by opts.max_tasks rows of finished
 * tasks, by the groups and the wake edges between what has a row or a group,
 * by the stalled and starved tasks (an entry each) and by the threads. Past
 * opts.max_tasks, a finished user task keeps its own row only if it is among
 * the max_tasks busiest finished tasks; the others are folded into one
 * aggregate row per (root future name, spawn location), analysis__groups().
 * Runtime worker tasks are never folded; live tasks only past the model's
 * live-task limit (opts.max_live_tasks, task_model__set_max_live()): the
 * least recently active ones then go into the same groups, with what they
 * did up to then (an idle time still open counted to the end of the trace;
 * a stall or starved wait still open then is not listed), and the model
 * drops their later events (summary.folded_events). Nothing is kept per
 * poll or per event: long polls keep only the top N. Interned strings
 * (names, spawn files, thread names) are one copy each.
 *
 * Folding changes what is listed per task, never a total: the summary, the
 * distributions, long polls, stalled and starved tasks are exactly what they
 * would be without a cap, and so are the wake counts. Those entries name a
 * task by seq; a folded task's seq has no row (analysis__task() returns NULL)
 * and the entry's `group` says which group holds it. Wake edges are merged
 * instead: see struct wake_edge. */
#ifndef AS_ANALYSIS_TASKS_H
#define AS_ANALYSIS_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/hist.h"
#include "pipeline/sink.h"
#include "trace/event.h"

struct task_model;

#include "analysis/task_stats.h"

/* "task"/"worker", "completed"/"running"/"runnable"/"idle", and the wake
 * sources' names (static strings). */
const char *task_kind__str(enum task_kind kind);
const char *task_state__str(enum task_state state);
const char *wake_source__str(enum wake_source src);

struct analysis;

/* Returns a new analysis, or NULL with errno set. meta (may be NULL) is
 * borrowed until analysis__finish() returns: its probes' future names are
 * read by analysis__add() and copied. */
struct analysis *analysis__new(const struct as_trace_meta *meta);
/* Same with options (NULL: defaults); opts is copied. The analysis makes,
 * feeds and frees a task model of its own. */
struct analysis *analysis__new_opts(const struct as_trace_meta *meta,
				    const struct analysis_opts *opts);
/* The same as an observer of task model m (task_model.h), shared with other
 * analyses of the run: m is borrowed (it must outlive the analysis, and
 * must not have seen an event yet) and gets opts' live-task limit
 * (task_model__set_max_live(): the other observers of m must handle fold());
 * the caller feeds m each event before
 * analysis__add() (or puts task_model__sink(m) before analysis__sink(a))
 * and finishes m before analysis__finish(). Task names, spawn files and
 * thread names in the results are m's strings. */
struct analysis *analysis__new_on(struct task_model *m, const struct as_trace_meta *meta,
				  const struct analysis_opts *opts);

/* The live-task limit opts asks for, as task_model__set_max_live() takes
 * it (0 none); opts NULL: the default. */
size_t analysis_max_live(const struct analysis_opts *opts);

/* Feeds one event (its strings are copied if kept). Returns 0, -EINVAL after
 * analysis__finish() or for a NULL event, -ENOMEM. Malformed or unexpected
 * events are counted as anomalies, not errors. After -ENOMEM the analysis may
 * have lost that event but stays consistent. */
int analysis__add(struct analysis *a, const struct as_event *ev);

/* Closes the trace at end->end_ns (end may be NULL: the last event's time,
 * lost and missed 0) and computes the results. Returns 0, -EINVAL if called
 * twice, -ENOMEM. */
int analysis__finish(struct analysis *a, const struct as_trace_end *end);

/* Results, valid after a successful analysis__finish() until analysis__free();
 * all memory is owned by the analysis. Tasks with a row, in seq order (seqs
 * of folded tasks are missing: tasks[i].seq == i + 1 only when
 * summary.folded_tasks is 0), workers in order of first sight of their
 * thread. Before finish: no results (n = 0, NULL). */
const struct task_stats *analysis__tasks(const struct analysis *a, size_t *n);
/* The row of task seq, or NULL (folded, unknown seq, or before finish). */
const struct task_stats *analysis__task(const struct analysis *a, uint64_t seq);
/* Whether name is a blocking-pool task's root future (spawn_blocking: made
 * to block, on threads that are not workers), by the trace's runtime
 * profile. */
bool analysis__pool_name(const struct analysis *a, const char *name);
/* Groups of folded tasks, most busy time first; empty when nothing was
 * folded. */
const struct task_group *analysis__groups(const struct analysis *a, size_t *n);
/* True when the trace's probes saw no wake (record --lite, or a runtime
 * without a wake probe) and no task was woken: wakes, scheduling delays
 * and spawn sites were not recorded. */
bool analysis__wakes_unrecorded(const struct analysis *a, const struct as_trace_meta *meta);
const struct worker_stats *analysis__workers(const struct analysis *a, size_t *n);
const struct summary *analysis__summary(const struct analysis *a);

/* Distribution d over all user tasks (merged when each task finished); NULL
 * before finish or for a bad d. */
const struct hist *analysis__dist(const struct analysis *a, enum dist d);
/* The longest polls (at most long_poll_keep), longest first; the total is
 * summary.long_polls. */
const struct long_poll *analysis__long_polls(const struct analysis *a, size_t *n);
/* Stalled tasks, longest stall first. */
const struct stall *analysis__stalled(const struct analysis *a, size_t *n);
/* Starved tasks, longest wait first. */
const struct starve *analysis__starved(const struct analysis *a, size_t *n);
/* Wake edges, most wakes first (then by woken seq, waker kind and seq,
 * woken and waker group). Edges from the runtime or blocking tasks are
 * merged per woken task (or group). */
const struct wake_edge *analysis__edges(const struct analysis *a, size_t *n);
/* Current memory use; works before and after finish. */
void analysis__mem(const struct analysis *a, struct analysis_mem *m);

/* A sink view of a (pipeline/sink.h; ops->free NULL: a stays the
 * caller's): add() is analysis__add() (the stack is not used), finish() is
 * analysis__finish(). With a shared model, put task_model__sink() first:
 * the sink then takes no event (types AS_SINK_NO_EVENTS): what
 * analysis__add() counts (events, their first and last timestamps, types
 * no trace holds) comes from the model's counts at finish, and an error
 * met in the model's callbacks (-ENOMEM) is returned by finish() (or by the
 * sink's add() when a caller calls it all the same: it counts nothing
 * then). Do not also call analysis__add() then. */
struct as_sink analysis__sink(struct analysis *a);

/* Frees a and everything it owns (its own model, not a shared one: free
 * the analyses on a model before the model); NULL accepted. */
void analysis__free(struct analysis *a);

#endif
