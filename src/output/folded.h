/* Folded stacks of user-task poll time, for flamegraph.pl, inferno and
 * speedscope, and the poll tracker that both exporters (this one and
 * output/perfetto.c) run over the decoded event stream.
 *
 * Both stream: memory is bounded by the live tasks, the threads and the
 * distinct (thread, future) pairs, never by the length of the trace. Pure C:
 * no libbpf, no trace reader; output goes only to the FILE* given. */
#ifndef AS_OUTPUT_FOLDED_H
#define AS_OUTPUT_FOLDED_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/futures.h"
#include "pipeline/sink.h"
#include "trace/event.h"

/* ---- Writing folded stacks ----
 * Marks and units, the same in every folded output:
 *  - the program's own first frame ends in "_[j]" and kernel frames in
 *    "_[k]": the annotations flamegraph.pl and inferno-flamegraph colour
 *    with --colors java (green and orange) and leave out of the labels;
 *  - time weights are in the unit given (microseconds by default, as
 *    bcc's offcputime -f and off-CPU flame graphs use), each line's weight
 *    rounded to the nearest unit; the first line is a comment naming it
 *    ("# asyncscope: ... in us"), which flamegraph.pl and inferno skip as
 *    a line of no stack (counted in their "ignored lines" warning) and
 *    speedscope ignores. */

enum folded_unit {
	FOLDED_NS = 0,
	FOLDED_US,
	FOLDED_MS,
};

/* "ns", "us", "ms". */
const char *folded_unit_name(enum folded_unit u);
/* The unit named s ("ns", "us", "ms"): 0, or -EINVAL. */
int folded_unit_parse(const char *s, enum folded_unit *u);
/* ns in unit u, rounded to the nearest. */
uint64_t folded_scale(uint64_t ns, enum folded_unit u);

/* Writes "stack weight\n" with the marks above: own and kernel are frame
 * indices in stack (-1 none); annotate false writes stack as it is. */
void folded_put(FILE *out, const char *stack, int32_t own, int32_t kernel, bool annotate,
		uint64_t weight);

/* ---- Poll tracker ----
 * Observes the task model (analysis/task_model.h: the rules of a task's
 * life, shared with `report`'s analysis), so that what the exporters count
 * agrees with `report`: a task is numbered (seq) in order of first sight, an address seen
 * again after FREE (or polled after completing) is a new task, polls cut
 * short end where the analysis ends them, a task freed inside its own poll
 * goes when that poll ends, and a task is a runtime worker once another poll
 * begins inside one of its polls (and so is any task of the same root future
 * type polled outermost on its thread: an idle worker). It reports what it sees as
 * closed intervals, through one callback. Streaming means one difference
 * from the analysis: a task's polls that ended before its first nested poll
 * are reported as user polls (a Tokio worker task has a single poll, so this
 * does not happen with Tokio). */

enum ptrack_end {
	PTRACK_PENDING = 0,   /* returned Pending */
	PTRACK_READY,         /* returned Ready */
	PTRACK_CUT,           /* its end was never seen (see analysis/tasks.c) */
	PTRACK_TRACE_END,     /* still running when the trace ended */
};

/* A task as the exporters name it. Strings are owned by the tracker and live
 * until ptrack__free(); equal names are the same pointer and name_id. */
struct ptrack_task {
	uint64_t seq;         /* 1, 2, ... as in `report` */
	uint64_t header;
	uint64_t tokio_id;    /* 0 unknown */
	const char *name;     /* pretty root future (sym_pretty_future), or NULL */
	uint32_t name_id;     /* 0 for NULL, else 1 + index of the distinct name */
	const char *spawn_file;   /* NULL unknown */
	uint32_t spawn_id;    /* 0 for NULL, else 1 + index of the distinct file */
	uint32_t spawn_line, spawn_col;
};

/* The wake that made a task runnable (or its spawn-time schedule). */
struct ptrack_wake {
	uint64_t ts;
	uint32_t tid;         /* the waking thread */
	uint8_t flags;        /* AS_WAKE_IO, AS_WAKE_TIMER */
	bool spawn;           /* the schedule at spawn, not a wake */
	bool in_user_poll;    /* a user-task poll was running on tid at ts */
	uint64_t waker_seq;   /* seq of the task whose poll was running on tid, 0 none */
};

/* One poll, reported when it ends. */
struct ptrack_poll {
	struct ptrack_task task;
	uint32_t tid;
	uint64_t begin, end;  /* end >= begin */
	enum ptrack_end how;
	bool user;            /* a user task's poll (not a runtime worker's) */
	bool has_wake;        /* wake: what made the task runnable for this poll */
	struct ptrack_wake wake;
};

enum ptrack_out_type {
	PTRACK_POLL = 1,      /* poll */
	PTRACK_SCHEDULED,     /* task was runnable from..to (wake -> poll begin) */
	PTRACK_IDLE,          /* task waited from..to (Pending -> wake) */
	PTRACK_PARKED,        /* thread tid parked from..to */
	PTRACK_TASK_GONE,     /* task is gone at `to` (freed, reused, or the trace ended:
	                         freed false); its name is final */
};

struct ptrack_out {
	enum ptrack_out_type type;
	const struct ptrack_poll *poll;      /* PTRACK_POLL */
	const struct ptrack_task *task;      /* SCHEDULED, IDLE, TASK_GONE */
	uint32_t tid;                        /* PARKED */
	uint64_t from, to;                   /* intervals (from <= to); TASK_GONE: to */
	bool freed;                          /* TASK_GONE */
};

/* Receives each output; returns 0, or a -errno that stops the tracker (and is
 * returned by ptrack__add() / ptrack__finish()). Pointers are borrowed for
 * the call. */
typedef int (*ptrack_out_fn)(void *ctx, const struct ptrack_out *o);

struct ptrack;
struct task_model;

/* Returns a tracker with a task model of its own, or NULL with errno set.
 * meta (may be NULL) is read during the call only (probe future names are
 * prettified and copied). */
struct ptrack *ptrack__new(const struct as_trace_meta *meta, ptrack_out_fn out, void *ctx);
/* The same as an observer of model m (borrowed: it must outlive the
 * tracker; registered before m's first event), which the caller feeds and
 * finishes itself (ptrack__add() and ptrack__finish() then only report the
 * callback's first error). */
struct ptrack *ptrack__new_on(struct task_model *m, const struct as_trace_meta *meta,
			      ptrack_out_fn out, void *ctx);
/* Feeds one event in trace order. Returns 0, -ENOMEM, -EINVAL after finish,
 * or the callback's first error (the tracker goes on; the caller stops).
 * Odd events (unknown type, task 0) are ignored. */
int ptrack__add(struct ptrack *t, const struct as_event *ev);
/* Closes everything still open at end_ns: polls (PTRACK_TRACE_END, innermost
 * first), parks, task states; then PTRACK_TASK_GONE for each live task.
 * Returns 0, -EINVAL if called twice, or the callback's error. */
int ptrack__finish(struct ptrack *t, uint64_t end_ns);
/* Live tasks that are runnable (woken or spawned, not yet polled), and
 * threads parked, now. */
uint64_t ptrack__runnable(const struct ptrack *t);
uint64_t ptrack__parked(const struct ptrack *t);
/* The name of thread tid (from AS_EV_THREAD), or NULL; owned by the tracker. */
const char *ptrack__thread_name(const struct ptrack *t, uint32_t tid);
/* Frees t; accepts NULL. */
void ptrack__free(struct ptrack *t);

/* ---- Folded stacks ----
 * Sample:
 *   tokio-runtime-w:4243;chain::producer 263412
 *   tokio-runtime-w:4243;chain::relay 169207
 * One line per (thread, root future) with the busy nanoseconds of the user
 * tasks' polls of that future on that thread (lines sorted, written at the
 * end); with per_task, `thread;future;task#seq ns`, written as each task
 * goes. Frames never hold ';' (replaced by ',') nor control characters
 * (replaced by '?'); a thread without a name is "thread:TID", a task without
 * a known future "unknown". Lines of zero weight are left out. The weights
 * sum exactly to the busy time of user tasks in `report`. */

struct folded;

/* Returns a writer to out (borrowed, never closed), or NULL with errno set;
 * meta as for ptrack__new(). Weights in ns until folded__set_unit(). */
struct folded *folded__new(FILE *out, const struct as_trace_meta *meta, bool per_task);
/* Writes weights in u (lines under half a unit are left out, counted in
 * folded__dropped()); before the first event. */
void folded__set_unit(struct folded *f, enum folded_unit u);
/* After finish: lines left out as under half a unit, and their weight (ns). */
uint64_t folded__dropped(const struct folded *f, uint64_t *ns);
/* The same on task model m, shared with other sinks of the run (as
 * ptrack__new_on(): the caller feeds and finishes m first). */
struct folded *folded__new_on(FILE *out, struct task_model *m, const struct as_trace_meta *meta,
			      bool per_task);
/* Feeds one event; returns 0 or -errno (-ENOMEM, -EIO). */
int folded__add(struct folded *f, const struct as_event *ev);
/* Ends the trace at end_ns, writes the remaining lines and flushes. Returns
 * 0, -EINVAL if called twice, -ENOMEM, or -EIO on a write error. */
int folded__finish(struct folded *f, uint64_t end_ns);
/* After finish: lines written and the sum of their weights (ns). */
uint64_t folded__lines(const struct folded *f);
uint64_t folded__total_ns(const struct folded *f);
/* A sink view of x (pipeline/sink.h; ops->free NULL: x stays the caller's):
 * add() is folded__add(), finish() folded__finish(end->end_ns). */
struct as_sink folded__sink(struct folded *x);

/* Frees f (not out); accepts NULL. */
void folded__free(struct folded *f);

/* ---- Future-level flame graphs (record --futures) ----
 * Sample (export --format folded-futures, on-CPU self time in ns):
 *   app::handler 41250
 *   app::handler;app::handler 20113
 *   app::handler;app::handler;app::level1;app::level2 503112
 * and --format folded-wait (pending ns by the await chain polled last; the
 * leaf at the line of its .await):
 *   app::handler;app::handler;app::level1;app::level2 (x.rs:33) 1500203117
 * Writes graph g of a finished future analysis (analysis/futures.h), one
 * `frames weight` line per stack as futures__stacks() orders them. Returns 0,
 * -EINVAL (fu not finished), or -EIO; *lines and *total_ns (may be NULL)
 * get what was written. */
int folded_futures_write(FILE *out, const struct futures *fu, enum futures_graph g,
			 uint64_t *lines, uint64_t *total_ns);
/* The same in unit u; lines under half a unit are left out, *dropped (may
 * be NULL) gets their weight in ns. *total_ns is the weight written, in ns. */
int folded_futures_write_unit(FILE *out, const struct futures *fu, enum futures_graph g,
			      enum folded_unit u, uint64_t *lines, uint64_t *total_ns,
			      uint64_t *dropped);

#endif
