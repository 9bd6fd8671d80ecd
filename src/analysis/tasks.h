/* Task analysis: turns the decoded event stream (src/trace/event.h) into
 * per-task, per-worker-thread and whole-trace statistics. Pure C: no libbpf,
 * no I/O, no globals. Robust to what real recordings contain: events a few
 * microseconds out of order between threads, a recording that starts in the
 * middle of polls, lost events. Such oddities never fail the analysis: they
 * are clamped (no negative durations) and counted in summary.anomalies.
 *
 * Use: analysis__new(meta); analysis__add() for each event in order;
 * analysis__finish(end) once; then read the results through the accessors,
 * valid until analysis__free(). */
#ifndef AS_ANALYSIS_TASKS_H
#define AS_ANALYSIS_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/event.h"

enum task_kind {
	TASK_KIND_TASK = 0,   /* an ordinary (user) task */
	TASK_KIND_WORKER,     /* another task's poll nested inside one of its polls:
	                         the runtime's own executor loop (multi_thread worker) */
};

enum task_state {             /* at the end of the trace */
	TASK_STATE_COMPLETED = 0, /* a Ready poll or its FREE was seen */
	TASK_STATE_RUNNING,       /* inside a poll when the trace ended */
	TASK_STATE_RUNNABLE,      /* woken or spawned, not polled since */
	TASK_STATE_IDLE,          /* last poll returned Pending, no wake since */
};

/* "task"/"worker" and "completed"/"running"/"runnable"/"idle" (static strings). */
const char *task_kind__str(enum task_kind kind);
const char *task_state__str(enum task_state state);

/* One task: a task header address between its first sight and its FREE (an
 * address seen again after FREE is a new task). Durations in ns. */
struct task_stats {
	uint64_t seq;             /* 1, 2, ... in order of first sight */
	uint64_t tokio_id;        /* first non-zero id seen at a poll, 0 unknown */
	uint64_t header;          /* task header address */
	const char *name;         /* root future type (the poll probe's `future`), or NULL */
	const char *spawn_file;   /* spawn call site file, NULL unknown */
	uint32_t spawn_line;      /* valid when spawn_file is set */
	uint32_t spawn_col;
	bool spawned_in_trace;    /* false: existed before the recording started */
	uint64_t parent;          /* seq of the task polled where it was spawned, 0 none */
	enum task_kind kind;
	enum task_state state;
	uint64_t polls;           /* = pending_polls + ready_polls + polls cut short
	                             (still running at the end, or end never seen) */
	uint64_t pending_polls;
	uint64_t ready_polls;
	uint64_t busy_ns;         /* sum of poll durations (a poll still running at the
	                             end counts up to the end) */
	uint64_t max_poll_ns;
	uint64_t mean_poll_ns;    /* busy_ns / polls, 0 without polls */
	uint64_t sched_ns;        /* sum of runnable -> poll start delays; a task woken
	                             while running is runnable from the end of that poll */
	uint64_t idle_ns;         /* sum of Pending poll end -> wake (or FREE, or end) */
	uint64_t wakes;           /* wakes, not counting the spawn-time schedule */
	uint64_t self_wakes;      /* wakes from inside its own poll */
	uint64_t first_ns;        /* first event about it */
	uint64_t last_ns;         /* last event about it */
};

/* One thread that polled a task or parked. */
struct worker_stats {
	uint32_t tid;
	const char *name;         /* from AS_EV_THREAD, or NULL */
	uint64_t polls;           /* polls of kind "task" tasks run on it */
	uint64_t busy_ns;         /* time a kind "task" poll was in progress on it */
	uint64_t parked_ns;       /* PARK -> UNPARK; a PARK open at the end counts to the end */
	uint64_t parks;
};

struct summary {
	uint64_t start_ns;        /* first event, or meta->clock_mono_ns if earlier */
	uint64_t end_ns;          /* end->end_ns (or the last event without a trailer) */
	uint64_t duration_ns;
	uint64_t events;          /* events given to analysis__add() */
	uint64_t tasks;           /* all tasks */
	uint64_t user_tasks;      /* kind "task" */
	uint64_t worker_tasks;    /* kind "worker" */
	uint64_t polls;           /* all polls */
	uint64_t user_polls;      /* polls of kind "task" tasks */
	uint64_t workers;         /* threads in analysis__workers() */
	uint64_t lost;            /* from the trailer */
	uint64_t missed;          /* from the trailer */
	uint64_t anomalies;       /* events that did not fit (see the top of this file) */
};

struct analysis;

/* Returns a new analysis, or NULL with errno set. meta (may be NULL) is
 * borrowed until analysis__finish() returns: its probes' future names are
 * read by analysis__add() and copied. */
struct analysis *analysis__new(const struct as_trace_meta *meta);

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
 * all memory is owned by the analysis. Tasks are in seq order (tasks[i].seq
 * == i + 1), workers in order of first sight of their thread. Before finish:
 * no results (n = 0, NULL). */
const struct task_stats *analysis__tasks(const struct analysis *a, size_t *n);
const struct worker_stats *analysis__workers(const struct analysis *a, size_t *n);
const struct summary *analysis__summary(const struct analysis *a);

/* Frees a and everything it owns; NULL accepted. */
void analysis__free(struct analysis *a);

#endif
