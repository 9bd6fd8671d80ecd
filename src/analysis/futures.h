/* Future-level analysis (record --futures / --probe, format version 7): the
 * AS_EV_FUTURE_ENTER / AS_EV_FUTURE_EXIT events of a trace rebuilt into a
 * stack of future frames per thread, each frame attributed to the task whose
 * poll runs it. Pure C: no libbpf, no I/O, no globals.
 *
 * What it gives:
 *  - the on-CPU async flame graph: stacks "task-root;future;future..." of
 *    frames' self (exclusive) time; the task-root line alone holds the time
 *    of the task's polls outside any probed future (so a root's total is the
 *    busy time of its tasks' polls; runtime worker tasks' own time is left
 *    out, as in `report`);
 *  - the wait flame graph: for each Pending task poll, the await chain polled
 *    last under it (the frames that returned Pending, outermost first; when a
 *    future polled several children that returned Pending, as select! does,
 *    the last one), weighted by the time the task then stayed pending (its
 *    poll end to its next poll begin, its FREE, or the end of the trace); the
 *    leaf frame carries the line of the .await it is suspended at;
 *  - per task parked for good (its last poll returned Pending and it was never
 *    polled again: still pending at the end, or dropped while pending, as
 *    every task is at runtime shutdown): the await chain where it was
 *    parked, each frame with the file:line of its .await (the
 *    FUTURES_PARKED_KEEP longest waits are kept);
 *  - per future function: polls, Ready / Pending, total and self time, max.
 *
 * Tasks and their polls are those of the task model (task_model.h), which
 * the analysis observes: a task is numbered (seq) in order of first sight
 * (its spawn-time WAKE or a POLL_BEGIN), an address polled again after a
 * Ready poll or seen after FREE is a new task, so seqs are those of
 * `report`. Task roots are named as the folded
 * export names tasks: the pretty root future type, else "(task spawned at
 * FILE:LINE)", else "(unknown task)". A frame outside any task poll belongs to
 * the pseudo-root "(no task) thread NAME" (block_on futures, for example).
 *
 * Lost events never fail the analysis; each kind is counted (struct
 * futures_summary) and the recorded depth resynchronises the stacks:
 *  - an ENTER at depth d, or an EXIT at depth d of the frame at depth d,
 *    with frames deeper than d still open: their EXITs were lost; they are
 *    closed ("cut") at the thread's last event before, as are frames still
 *    open when their task poll ends (exits_lost);
 *  - an ENTER deeper than its parent + 1: ENTERs were lost (entries_lost);
 *  - an EXIT with no open frame at its depth, or one of another function:
 *    entered before the recording or its ENTER lost (unmatched_exits).
 * Frames still running when the trace ends are closed there (open_at_end).
 *
 * Memory: bounded by the live tasks, the threads' stacks, the distinct call
 * paths (on-CPU stacks and await chains are interned once each, with their
 * weights), the future functions (probes of one name, file and line, such as
 * generic copies, are one function) and FUTURES_PARKED_KEEP parked tasks;
 * nothing is kept per event or per poll.
 *
 * Use: futures__new(meta, opts); futures__add() for each event in trace
 * order; futures__finish(end_ns) once; then the accessors, whose results are
 * owned by the analysis and valid until futures__free(). */
#ifndef AS_ANALYSIS_FUTURES_H
#define AS_ANALYSIS_FUTURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pipeline/sink.h"
#include "trace/event.h"

/* How a future frame ended. */
enum futures_outcome {
	FUTURES_READY = 0,    /* returned Ready (flag, or __state Returned) */
	FUTURES_PENDING,      /* returned Pending (flag, or __state suspended) */
	FUTURES_UNKNOWN,      /* returned, outcome not recorded (a --probe function) */
	FUTURES_CUT,          /* its EXIT was lost (see the top of this file) */
	FUTURES_RUNNING,      /* still running when the trace ended */
};

/* "Ready", "Pending", "unknown", "cut short", "running at end" (static). */
const char *futures_outcome__str(enum futures_outcome o);

/* One frame as it closes, for the observer (perfetto slices). Strings are
 * owned by the analysis and live until futures__free(). */
struct futures_frame {
	uint32_t tid;
	uint64_t begin, end;         /* end >= begin; nested frames lie inside their parent */
	uint32_t probe;              /* index into meta.probes */
	uint32_t fn;                 /* index into futures__fns() (stable from the start) */
	const char *name;            /* readable name: probe future, else its symbol */
	const char *file;            /* source file of the function, NULL unknown */
	uint32_t line;               /* its line, 0 unknown */
	uint32_t await_line;         /* Pending at a known .await: its line, else 0 */
	const char *awaitee;         /* the future awaited there, NULL unknown */
	enum futures_outcome outcome;
	uint32_t depth;              /* recorded nesting depth */
	uint64_t task;               /* seq of the task whose poll ran it, 0 none */
};

struct futures_observer {
	void *ctx;
	/* Called as each frame closes (children before their parent). */
	void (*frame)(void *ctx, const struct futures_frame *fr);
};

struct futures_opts {
	bool lines;                  /* every flame-graph frame with " (file:line)":
	                                the function's line on-CPU, the .await's in
	                                the wait graph; else only wait leaves */
	const struct futures_observer *observer; /* copied; NULL none */
	bool per_task;               /* stacks kept apart per task, not merged by
	                                root future: each task's own root node and
	                                waits (futures_stack.task says whose; more
	                                memory: for exports labelling samples by
	                                task, export --format pprof) */
};

/* One future function (probes of the same name, file and line merged). */
struct futures_fn {
	const char *name;
	const char *file;            /* NULL unknown */
	uint32_t line;               /* 0 unknown */
	uint64_t polls;              /* frames closed (cut and running-at-end included) */
	uint64_t ready, pending, unknown; /* outcomes (cut and running count as unknown) */
	uint64_t total_ns;           /* sum of poll durations (a recursive future
	                                counts its nested polls again) */
	uint64_t self_ns;            /* minus the frames and task polls nested in them */
	uint64_t max_ns;             /* longest poll */
};

/* One frame of an await chain. */
struct futures_link {
	const char *name;
	const char *file;            /* NULL unknown */
	uint32_t line;               /* the .await's line when at_await, else the
	                                function's (0 unknown) */
	bool at_await;               /* line is that of the .await it is suspended at */
	const char *awaitee;         /* at_await: the future awaited there
	                                ("tokio::time::Sleep"), NULL unknown */
};

/* A task whose last poll returned Pending and which was never polled again:
 * still pending when the trace ended, or freed (dropped) while pending. */
struct futures_parked {
	uint64_t seq;                /* as in `report` */
	uint64_t tokio_id;           /* 0 unknown */
	const char *name;            /* its task-root label */
	uint64_t since_ns;           /* end of that poll, CLOCK_MONOTONIC ns */
	uint64_t waiting_ns;         /* until the end of the trace, or its FREE */
	bool until_end;              /* still pending at the end (else freed) */
	const struct futures_link *chain; /* outermost first; NULL when no frame
	                                     returned Pending under that poll */
	uint32_t n_chain;
};

/* One flame-graph line: frames, root first (interned: equal names are equal
 * pointers), and its weight in ns. Frame names never hold ';' (replaced by
 * ',') nor control characters (replaced by '?'). */
struct futures_stack {
	const char *const *frames;
	uint32_t n;
	uint64_t ns;
	const char *task;            /* opts.per_task: the task's identity
	                                (util/task_id.h: "#3", "~7"), else NULL */
};

enum futures_graph {
	FUTURES_ONCPU = 0,           /* self time of frames in task polls */
	FUTURES_WAIT,                /* pending time by last await chain */
};

struct futures_summary {
	uint64_t enters, exits;      /* FUTURE_ENTER / FUTURE_EXIT events taken */
	uint64_t frames;             /* frames closed */
	uint64_t ready, pending, unknown; /* outcomes of frames that returned */
	uint64_t exits_lost;         /* frames cut: their EXIT was lost */
	uint64_t entries_lost;       /* depth gaps: ENTERs lost */
	uint64_t unmatched_exits;    /* EXITs without their frame */
	uint64_t open_at_end;        /* frames still running at the end */
	uint64_t bad;                /* events naming no future probe (ignored) */
	uint64_t too_deep;           /* frames past FUTURES_MAX_DEPTH (ignored) */
	uint64_t outside_tasks;      /* frames outside any task poll */
	uint64_t parked_tasks;       /* tasks parked for good; futures__parked()
	                                keeps the FUTURES_PARKED_KEEP longest */
	uint64_t oncpu_ns, wait_ns;  /* sums of the two graphs' weights */
	uint64_t oncpu_stacks, wait_stacks; /* their lines */
	uint64_t paths, chains;      /* distinct call paths and await chains kept */
};

/* Frames followed per thread; deeper ones are counted in too_deep. */
#define FUTURES_MAX_DEPTH 1024
/* Parked tasks listed (the longest waits). */
#define FUTURES_PARKED_KEEP 10000

struct futures;
struct task_model;

/* Returns a new analysis with a task model of its own, or NULL with errno
 * set. meta (may be NULL) is read during the call only (names, files and
 * await lines are copied). opts may be NULL (defaults). */
struct futures *futures__new(const struct as_trace_meta *meta, const struct futures_opts *opts);
/* The same as an observer of task model m, shared with other analyses of
 * the run (see analysis__new_on()): m is borrowed, must outlive f and must
 * not have seen an event yet; the caller feeds m each event before
 * futures__add() (or puts task_model__sink(m) before futures__sink(f)) and
 * finishes m before futures__finish(). */
struct futures *futures__new_on(struct task_model *m, const struct as_trace_meta *meta,
				const struct futures_opts *opts);
/* Feeds one event in trace order (every type: polls, wakes, frees and thread
 * names are followed too). Returns 0, -EINVAL (NULL argument, or after
 * finish) or -ENOMEM (the analysis stays consistent; that event may be lost). */
int futures__add(struct futures *f, const struct as_event *ev);
/* Closes what is still open at end_ns (0: the last event's time) and builds
 * the results. Returns 0, -EINVAL if called twice, -ENOMEM. */
int futures__finish(struct futures *f, uint64_t end_ns);

/* Results, after a successful futures__finish() (before: empty / NULL). */
const struct futures_summary *futures__summary(const struct futures *f);
/* The flame-graph lines of graph g, sorted by frames; zero weights left out. */
const struct futures_stack *futures__stacks(const struct futures *f, enum futures_graph g,
					    size_t *n);
/* Future functions with at least one poll, most self time first (then by
 * name, line). */
const struct futures_fn *futures__fns(const struct futures *f, size_t *n);
/* Function fn of the observer's frames (any time; its numbers are final
 * after finish), or NULL. */
const struct futures_fn *futures__fn(const struct futures *f, uint32_t fn);
/* Tasks parked for good (see struct futures_parked), longest waiting first
 * (then by seq); at most FUTURES_PARKED_KEEP. */
const struct futures_parked *futures__parked(const struct futures *f, size_t *n);
/* The parked entry of task seq, or NULL. */
const struct futures_parked *futures__parked_task(const struct futures *f, uint64_t seq);

/* A sink view of x (pipeline/sink.h; ops->free NULL: x stays the caller's):
 * add() is futures__add() (no stack), finish() futures__finish(end->end_ns). With a
 * shared model (futures__new_on()), put task_model__sink() first. */
struct as_sink futures__sink(struct futures *x);

/* Frees f and everything it owns; NULL accepted. */
void futures__free(struct futures *f);

#endif
