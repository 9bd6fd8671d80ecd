/* The task analysis' result types (analysis/tasks.h): task rows, worker
 * threads, the summary, groups, distributions, long polls, stalls,
 * starvation, wake edges, options. Types only, so that the analysis'
 * private header (tasks_int.h) has them without the analysis' API. */
#ifndef AS_ANALYSIS_TASK_STATS_H
#define AS_ANALYSIS_TASK_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/hist.h"

#define ANALYSIS_LONG_POLL_NS 1000000ULL     /* default --long-poll: 1 ms */
#define ANALYSIS_STALL_NS 1000000000ULL      /* default --stall: 1 s */
#define ANALYSIS_STARVE_NS 10000000ULL       /* default --starve: 10 ms */
#define ANALYSIS_LONG_POLL_KEEP 1000         /* long polls listed (the longest) */
#define ANALYSIS_MAX_TASKS 10000             /* default max_tasks (finished rows kept) */
#define ANALYSIS_MAX_LIVE_TASKS 20000       /* default max_live_tasks (tasks followed at once) */
#define ANALYSIS_UNLIMITED SIZE_MAX          /* max_tasks: keep every row */

enum task_kind {
	TASK_KIND_TASK = 0,   /* an ordinary (user) task */
	TASK_KIND_WORKER,     /* another task's poll nested inside one of its polls:
	                         the runtime's own executor loop (multi_thread worker);
	                         also a task of the same root future type as such a
	                         task (an idle worker, nothing nested in it) */
};

enum task_state {             /* at the end of the trace */
	TASK_STATE_COMPLETED = 0, /* a Ready poll or its FREE was seen */
	TASK_STATE_RUNNING,       /* inside a poll when the trace ended */
	TASK_STATE_RUNNABLE,      /* woken or spawned, not polled since */
	TASK_STATE_IDLE,          /* last poll returned Pending, no wake since */
};

/* "task"/"worker" and "completed"/"running"/"runnable"/"idle" (static strings). */

/* One task: a task header address between its first sight and its FREE (an
 * address seen again after FREE is a new task). Durations in ns. */
struct task_stats {
	uint64_t seq;             /* 1, 2, ... in order of first sight */
	uint64_t tokio_id;        /* first non-zero id seen at a poll, 0 unknown */
	uint64_t header;          /* task header address */
	const char *name;         /* root future type (the poll probe's `future`), or NULL */
	const char *label;        /* name given at spawn (task::Builder::name), or NULL */
	const char *spawn_file;   /* spawn call site file, NULL unknown */
	uint32_t spawn_line;      /* valid when spawn_file is set */
	uint32_t spawn_col;
	bool spawned_in_trace;    /* false: existed before the recording started */
	uint64_t parent;          /* seq of the task polled where it was spawned, 0 none */
	enum task_kind kind;
	bool pool;                /* a blocking-pool task (spawn_blocking): made to
	                             block, on a thread that is not a worker */
	uint32_t handoffs;        /* worker loops it started by block_in_place (its
	                             worker's queue handed to another thread) */
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
	uint64_t self_wakes;      /* wakes from inside its own poll, one a poll (a wake
	                             again in it schedules nothing more) */
	uint64_t first_ns;        /* first event about it */
	uint64_t last_ns;         /* last event about it */

	/* Distributions (hist.h precision; 0 without samples). Poll: polls that
	 * ended (not one still running at the end). Sched: runnable -> poll
	 * begin, as sched_ns. Idle: Pending poll end -> the wake (or poll) that
	 * ended it; idle time cut by FREE or the end of the trace is in idle_ns
	 * but not sampled. */
	uint64_t poll_p50_ns, poll_p99_ns;
	uint64_t sched_p50_ns, sched_p99_ns, sched_max_ns;
	uint64_t idle_p50_ns, idle_p99_ns;
	double pending_ratio;     /* pending_polls / polls, 0 without polls */
	double self_wake_ratio;   /* self_wakes / wakes, 0 without wakes */
	uint64_t long_polls;      /* its polls longer than the long-poll threshold */
	/* Starved: runnable longer than the starve threshold before its next poll
	 * (a wait still open at FREE or at the end counts too). */
	uint64_t starved;         /* such waits */
	uint64_t starve_max_ns;   /* its longest runnable wait, starved or not */
	/* Stalled: idle (last poll Pending, no wake) longer than the stall
	 * threshold. The stall shown is the one still open at the end of the
	 * trace if it qualifies, else the longest. */
	uint64_t stalls;          /* such idle intervals */
	uint64_t stall_since_ns;  /* start of the stall shown, relative to summary.start_ns */
	uint64_t stall_ns;        /* its length */
	bool stall_until_end;     /* it lasted until the end of the trace */
	/* Idle at the end: the wakers of it held then, as the recorder read them
	 * in the target's memory (AS_SPAWN_WAKERS); 0: nothing could wake it
	 * again. Meaningful only with wakers_known. */
	uint32_t wakers;
	bool wakers_known;
	/* Found in the program's memory when the recording ended, no event of
	 * it recorded (AS_SPAWN_BEFORE): idle (or runnable) since before the
	 * recording began */
	bool before;
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
	uint64_t long_poll_ns;    /* thresholds in effect */
	uint64_t stall_ns;
	uint64_t starve_ns;
	uint64_t long_polls;      /* user-task polls longer than long_poll_ns */
	uint64_t stalled_tasks;   /* entries of analysis__stalled() */
	uint64_t starved_tasks;   /* entries of analysis__starved() */
	uint64_t unsampled_wakes; /* wakes counted on their edge but not timed (more
	                             than 4 distinct wakers between two polls) */
	uint64_t max_tasks;       /* finished rows kept (opts.max_tasks), 0 unlimited */
	uint64_t folded_tasks;    /* tasks only counted in analysis__groups() (user
	                             tasks, included in tasks and user_tasks) */
	uint64_t task_groups;     /* entries of analysis__groups() */
	uint64_t max_live_tasks;  /* the model's live-task limit, 0 none */
	uint64_t folded_live_tasks; /* of folded_tasks, those folded while live
	                             (more than max_live_tasks live at once) */
	uint64_t folded_events;   /* events for them after that (not analysed) */
};

/* Finished user tasks without a row of their own, folded together by root
 * future name and spawn location (and live ones folded by the live-task
 * limit: their sums up to then, an idle time still open counted to the end
 * of the trace): sums over them (maxima for max_poll_ns).
 * Per-task percentiles are not kept for groups (the distributions over all
 * user tasks include these tasks' samples). */
struct task_group {
	const char *name;         /* root future type, or NULL */
	const char *spawn_file;   /* NULL unknown */
	uint32_t spawn_line, spawn_col;
	uint64_t tasks;
	uint64_t polls, pending_polls, ready_polls;
	uint64_t busy_ns, max_poll_ns, idle_ns, sched_ns;
	uint64_t wakes, self_wakes;
	uint64_t long_polls;      /* as task_stats.long_polls, summed */
};

/* Distributions over all user (kind "task") tasks. */
enum dist {
	DIST_POLL = 0,            /* poll durations */
	DIST_SCHED,               /* scheduling delays: runnable -> poll begin */
	DIST_IDLE,                /* idle times: Pending poll end -> wake */
	DIST__MAX,
};

/* A poll longer than the long-poll threshold (user tasks only). */
struct long_poll {
	uint64_t seq;             /* the task */
	uint32_t group;           /* 0: seq has a row; else its group, index + 1
	                             into analysis__groups() (same in stall,
	                             starve and wake_edge) */
	uint32_t tid;             /* the thread that ran it */
	bool until_end;           /* still running when the trace ended */
	uint64_t start_ns;        /* relative to summary.start_ns */
	uint64_t duration_ns;
};

/* A stalled task (see task_stats.stalls), user tasks only. */
struct stall {
	uint64_t seq;
	uint32_t group;
	uint64_t since_ns;        /* relative to summary.start_ns */
	uint64_t stalled_ns;
	bool until_end;           /* still idle when the trace ended */
	uint64_t count;           /* stalls of that task */
};

/* A starved task (see task_stats.starved), user tasks only. */
struct starve {
	uint64_t seq;
	uint32_t group;
	uint64_t max_wait_ns;
	uint64_t count;
};

/* Who woke a task (the waker side of a wake edge). */
enum wake_source {
	WAKE_FROM_TASK = 0,       /* a user task, inside its poll */
	WAKE_FROM_IO,             /* the I/O driver (AS_WAKE_IO) */
	WAKE_FROM_TIMER,          /* the timer (AS_WAKE_TIMER) */
	WAKE_FROM_RUNTIME,        /* the runtime's own loop (a worker-kind task, or a
	                             poll begun before the recording started) */
	WAKE_FROM_BLOCKING,       /* a spawn_blocking task (BlockingTask, not a worker) */
	WAKE_FROM_THREAD,         /* a thread outside any poll */
};

/* "task", "io", "timer", "runtime", "blocking", "thread" (static strings). */

/* Wakes of one task by one waker. Delay: from the wake to the woken task's
 * next poll begin; when a waker wakes it several times between two polls,
 * the first of those wakes is timed.
 *
 * Group edges: the wakes where the woken task or the waker task was folded
 * are merged per (waker, woken) where each task end is a group (its
 * index + 1 in from_group / to_group, its seq 0): the folded task's group,
 * and for the other task, when it kept its row, the group of its name and
 * spawn location if there is one (else its seq). So there are at most as
 * many group edges as pairs of groups, sources and rows, however long the
 * trace. Counts, timed and the maximum delay add up exactly; the
 * percentiles come from the merged delay histograms, except that an edge
 * first kept per task and merged later (its woken task lost its place among
 * the busiest, or its waker was folded after it) brings its wakes in as its
 * maximum, p50 and p99 only. Edges between tasks that have rows are as
 * without a cap. */
struct wake_edge {
	enum wake_source from_kind;
	uint64_t from_seq;        /* WAKE_FROM_TASK: the waker task's seq, 0 for a
	                             group; else 0 */
	uint64_t to_seq;          /* 0 for a group */
	uint32_t from_group;      /* the waker's group, index + 1 into
	                             analysis__groups(), when a group end */
	uint32_t to_group;        /* the woken task's group, when a group end */
	uint64_t count;           /* wakes */
	uint64_t timed;           /* wakes followed by a poll: delay samples */
	uint64_t delay_p50_ns, delay_p99_ns, delay_max_ns;
	uint64_t tasks;           /* (waker, woken) task pairs merged into it: 1 but
	                             for group edges and edges from the runtime or
	                             blocking tasks */
};

/* Observer of the task state machine: called while events are added (and by
 * analysis__finish() for what the end of the trace closes), in event order.
 * Used by the timeline (timeline.h) in a second pass. Any callback may be
 * NULL; ctx is passed back. */
struct analysis_observer {
	void *ctx;
	/* Task seq was in state what (RUNNING: a poll on tid, leaf: no other
	 * poll nested in it; RUNNABLE or IDLE: tid 0) over [begin, end). */
	void (*span)(void *ctx, uint64_t seq, enum task_state what, uint32_t tid, bool leaf,
		     uint64_t begin, uint64_t end);
	/* Task seq became runnable (delta +1) or stopped being runnable (-1) at ts. */
	void (*runnable)(void *ctx, uint64_t seq, uint64_t ts, int delta);
	/* Thread tid was parked over [begin, end). */
	void (*park)(void *ctx, uint32_t tid, uint64_t begin, uint64_t end);
	/* Thread tid was seen for the first time at ts (any event). */
	void (*thread)(void *ctx, uint32_t tid, uint64_t ts);
};

struct analysis_opts {
	uint64_t long_poll_ns;    /* 0: ANALYSIS_LONG_POLL_NS */
	uint64_t stall_ns;        /* 0: ANALYSIS_STALL_NS */
	uint64_t starve_ns;       /* 0: ANALYSIS_STARVE_NS */
	size_t long_poll_keep;    /* 0: ANALYSIS_LONG_POLL_KEEP */
	size_t max_tasks;         /* finished user-task rows kept: 0 ANALYSIS_MAX_TASKS,
	                             ANALYSIS_UNLIMITED every one */
	size_t max_live_tasks;    /* live-task limit of the analysis' model
	                             (task_model__set_max_live()), its own or
	                             a shared one: 0 ANALYSIS_MAX_LIVE_TASKS,
	                             ANALYSIS_UNLIMITED none */
	bool states_only;         /* no distributions, edges, long polls, stalls:
	                             the task rows and the observer only */
	const struct analysis_observer *observer; /* copied; NULL: none */
};

/* What the analysis holds now (for tests and figures). */
struct analysis_mem {
	size_t live_tasks;        /* tasks not freed yet */
	size_t live_hist_bytes;   /* their histograms' allocations */
	size_t rows;              /* task rows held (live tasks and kept finished ones) */
	size_t folded_tasks;      /* finished tasks folded into groups */
	size_t groups;            /* distinct (name, spawn location) seen */
	size_t edges;             /* wake edge records */
	size_t live_edges;        /* of which into live tasks (with a histogram) */
	size_t group_edges;       /* of which group edges (with a histogram) */
	size_t edge_bytes;        /* what all the edges hold (part of bytes) */
	size_t threads;
	size_t bytes;             /* estimate of everything allocated */
};

#endif
