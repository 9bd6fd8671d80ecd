/* The task model: the one place that knows the rules of a task's life in
 * the decoded event stream (src/trace/event.h), and publishes that life to
 * observers. Every consumer that follows tasks (the task analysis, its wake
 * graph and findings, the folded and Perfetto exporters' poll tracker, ...)
 * observes one model instead of re-deriving the rules. Pure C: no libbpf, no
 * I/O, no globals.
 *
 * The rules:
 *  - a task is a task header address between its first sight (its
 *    spawn-time WAKE, or a POLL_BEGIN) and its FREE; an address polled again
 *    after a Ready poll (its FREE lost) or seen after FREE is a new task;
 *    tasks are numbered (seq) 1, 2, ... in order of first sight;
 *  - the first WAKE of a new task is its spawn-time schedule, not a wake; it
 *    takes the spawn site (AS_EV_SPAWN) pending on the waking thread and, as
 *    parent, the task polled there when the site was seen;
 *  - its name (root future type) comes from the probe of its first poll;
 *  - polls nest per thread; a POLL_END closes its poll and cuts the polls
 *    begun inside it whose end was lost; a poll of a running task cuts its
 *    poll in progress; a cut poll counts as Pending;
 *  - a task is the runtime's executor (a worker) once another poll begins
 *    inside one of its polls, and so is every task of the same root future
 *    type polled outermost on its thread (an idle worker);
 *  - a task freed inside its own poll goes when that poll ends;
 *  - wakes: by the I/O driver, the timer, from inside a task's poll (the
 *    waker task), from a poll begun before the recording (the runtime), or
 *    from a thread outside any poll;
 *  - threads park and unpark; what is open at the end of the trace is cut
 *    there (polls innermost first, parks, then each live task);
 *  - future frames (record --futures: AS_EV_FUTURE_ENTER / EXIT) are kept
 *    per thread as the recorded depth says: an ENTER at depth d opens level
 *    d (levels skipped since the last one, whose ENTERs were lost, are
 *    TM_FUT_UNKNOWN), an EXIT at depth d closes it and whatever was left
 *    open inside it; a thread's frames are followed from its first ENTER.
 *  - with a live-task limit (task_model__set_max_live(), off by default),
 *    once more tasks than that are live, the least recently active ones
 *    (last poll begin or end, wake or birth) are folded away: published
 *    (fold()) and forgotten, but for tasks on a thread's stack (running, or
 *    freed inside their poll) and workers, which stay. A folded task's later
 *    events (its header remembered: the last 8 * max_live of them) are counted
 *    (task_model__folded_events()) and dropped, its FREE ending that; a
 *    completed one is not remembered (its address seen again is a new task,
 *    as above), nor is one forgotten since (a new task too).
 * Events out of order are clamped (no negative durations) and counted in
 * task_model__anomalies(), as are events that do not fit these rules.
 *
 * Observers: up to TASK_MODEL_MAX_OBSERVERS, registered before the first
 * event (task_model__observe()), each with a table of callbacks (any may be
 * NULL) called in registration order, synchronously, in event order. An
 * observer may ask for bytes of its own in every task and every thread
 * (task_model__task_data() / task_model__thread_data()): zeroed at birth,
 * gone with the task, so no observer keeps a map of its own.
 *
 * Sharing: several analyses of one run observe one model. Feed the model
 * once per event (task_model__add(), or its sink task_model__sink() placed
 * before the observers' sinks) and finish it before them. `report`, say:
 *
 *   m = task_model__new(meta);
 *   an = analysis__new_on(m, meta, &opts);   fu = futures__new_on(m, meta, NULL);
 *   bl = blocking__new_on(m, meta);          uc = usdt_counts__new_on(m, meta);
 *   struct as_sink s[] = { task_model__sink(m), analysis__sink(an),
 *                          futures__sink(fu), blocking__sink(bl), usdt_counts__sink(uc) };
 *   pipeline_run(src, s, 5, &popts, &res);   (finishes each, in that order)
 *   ... read the results; free an, fu, bl, uc, then m.
 *
 * (the CPU-sample and io_uring analyses likewise: cpu_samples__new_on(),
 * uring__new_on()). Each of those also has a constructor that makes a model
 * of its own (analysis__new_opts(), futures__new(), blocking__new(), ...)
 * for a run alone.
 *
 * Ownership: tasks and threads are owned by the model; a task pointer is
 * valid from born() until the callback after its gone() or cut() returns
 * (cut tasks stay readable until task_model__free()); thread pointers until
 * task_model__free(). Strings (names, spawn files, thread names) are the
 * model's, interned (equal strings are equal pointers), valid until
 * task_model__free(). */
#ifndef AS_ANALYSIS_TASK_MODEL_H
#define AS_ANALYSIS_TASK_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pipeline/sink.h"
#include "trace/event.h"

#define TASK_MODEL_MAX_OBSERVERS 8

enum tm_state {
	TM_RUNNING = 0,           /* a poll of it is on a thread's stack */
	TM_RUNNABLE,              /* woken or spawned, not polled since */
	TM_IDLE,                  /* its last poll returned Pending, no wake since */
	TM_COMPLETED,             /* its last poll returned Ready */
};

/* How a poll ended. */
enum tm_end {
	TM_PENDING = 0,           /* returned Pending */
	TM_READY,                 /* returned Ready */
	TM_CUT,                   /* its end was never seen (counted as an anomaly) */
	TM_TRACE_END,             /* still running when the trace ended */
};

/* What ended a runnable or idle interval. */
enum tm_by { TM_BY_POLL, TM_BY_WAKE, TM_BY_FREE, TM_BY_END };

/* Who woke a task. */
enum tm_waker {
	TM_WAKER_TASK = 0,        /* from inside the poll of a live task (tm_wake.waker) */
	TM_WAKER_IO,              /* the I/O driver (AS_WAKE_IO) */
	TM_WAKER_TIMER,           /* the timer (AS_WAKE_TIMER) */
	TM_WAKER_RUNTIME,         /* a poll begun before the recording (unknown header):
	                             the runtime's loop */
	TM_WAKER_THREAD,          /* a thread outside any poll */
};

struct tm_task {
	uint64_t seq;             /* 1, 2, ... in order of first sight */
	uint64_t header;          /* task header address */
	uint64_t tokio_id;        /* first non-zero id seen at a poll, 0 unknown */
	const char *name;         /* raw root future type of its first poll's probe, or NULL */
	const char *label;        /* its name given at spawn (task::Builder::name), or NULL */
	const char *spawn_file;   /* spawn site, NULL unknown */
	uint32_t spawn_id;        /* 0 for NULL, else 1 + index of the distinct string */
	uint32_t spawn_line, spawn_col;
	uint64_t parent;          /* seq of the task polled where it was spawned, 0 none */
	uint16_t probe;           /* poll probe of its first poll (when polled) */
	bool spawned_in_trace;    /* born by its spawn-time WAKE */
	bool polled;
	bool worker;              /* the runtime's loop (see the top) */
	uint8_t name_kind;        /* TM_NAME_* bits of name */
	bool woken_in_poll;       /* TM_RUNNING: woken meanwhile, runnable at the end */
	bool free_pending;        /* freed inside its own poll */
	enum tm_state state;
	uint64_t since;           /* TM_RUNNABLE / TM_IDLE: start of that interval */
	uint32_t run_tid;         /* TM_RUNNING: the thread whose stack holds its poll */
	/* TM_IDLE: the wakers of it held when the recording ended
	 * (AS_SPAWN_WAKERS), with wakers_known; any later event clears it */
	uint32_t wakers;
	bool wakers_known;
	/* found in memory when the recording ended (AS_SPAWN_BEFORE), no event
	 * of it: idle or runnable since before the recording began */
	bool before;
};

/* A poll in progress on a thread. */
struct tm_frame {
	struct tm_task *task;
	uint64_t begin;
	bool nested;              /* another poll began inside it */
};

struct tm_thread {
	uint32_t tid;
	uint32_t idx;             /* 0, 1, ... in order of first sight */
	const char *name;         /* the first AS_EV_THREAD name, or NULL */
	struct tm_frame *stack;   /* polls in progress, outermost first */
	size_t depth, cap;
	bool spawn_pending;       /* a spawn site waits for its task's first WAKE */
	const char *spawn_file;
	uint32_t spawn_id, spawn_line, spawn_col;
	uint64_t spawn_parent;
	bool parked;
	uint64_t park_start;
	bool runs_tasks;          /* polled a task, or parked: a worker thread */
	/* Future frames open now, outermost first: fut[0 .. fut_depth) holds
	 * each level's probe (index into meta.probes, AS_ROLE_FUTURE), or
	 * TM_FUT_UNKNOWN; only the first TM_FUT_MAX levels are stored. */
	uint16_t *fut;
	uint32_t fut_depth;
	bool fut_seen;            /* an ENTER was seen on it */
};

#define TM_FUT_UNKNOWN UINT16_MAX  /* a level whose ENTER was lost */
#define TM_FUT_MAX 1024            /* future frame levels stored per thread */

struct tm_wake {
	enum tm_waker kind;
	struct tm_task *waker;    /* TM_WAKER_TASK: the live task whose poll woke it */
	const struct tm_thread *thread; /* the waking thread, NULL if not seen yet */
	enum tm_state state;      /* the woken task's state before the wake; a wake of a
	                             TM_COMPLETED task changes nothing (an anomaly) */
	bool self;                /* woken from inside its own poll */
	bool again;               /* already woken (runnable, or woken in this poll):
	                             the runtime schedules nothing more (Tokio's
	                             NOTIFIED bit); e.g. a timer reset to a deadline
	                             past, firing inside the poll that reset it */
};

/* Callbacks; ctx is the observer's. ts is the event's time; d an interval
 * already clamped to >= 0. */
struct tm_ops {
	/* Thread th seen for the first time (any event that concerns it). */
	void (*thread)(void *ctx, struct tm_thread *th, uint64_t ts);
	/* Task t born by event ev on thread th: its spawn-time WAKE
	 * (spawned_in_trace; enter() follows) or a POLL_BEGIN (poll_begin()
	 * follows); or known from memory (task_model__adopt(): ev->type 0, th
	 * NULL; enter(TM_IDLE) follows). */
	void (*born)(void *ctx, struct tm_task *t, struct tm_thread *th,
		     const struct as_event *ev);
	/* t leaves t->state (TM_RUNNABLE or TM_IDLE), held over
	 * [t->since, t->since + d), at ts, ended by `by`. */
	void (*leave)(void *ctx, struct tm_task *t, uint64_t ts, uint64_t d, enum tm_by by);
	/* t entered t->state (TM_RUNNABLE or TM_IDLE) at ts (= t->since). */
	void (*enter)(void *ctx, struct tm_task *t, uint64_t ts);
	/* A poll of t began on th at ev->ts: its frame is th->stack[th->depth - 1]. */
	void (*poll_begin)(void *ctx, struct tm_task *t, struct tm_thread *th,
			   const struct as_event *ev);
	/* The poll of frame f (off the stack) on th ended after d ns (at
	 * f->begin + d), as `how`; the state change follows (enter()). */
	void (*poll_end)(void *ctx, struct tm_thread *th, const struct tm_frame *f, uint64_t ts,
			 uint64_t d, enum tm_end how);
	/* t turned out to be the runtime's loop (t->worker just set). */
	void (*worker)(void *ctx, struct tm_task *t);
	/* t (already known) was woken by ev; leave()/enter() follow. */
	void (*wake)(void *ctx, struct tm_task *t, const struct as_event *ev,
		     const struct tm_wake *w);
	/* t is gone at ts: freed (FREE), or not (its address polled again
	 * after its Ready poll). After the call t is freed. */
	void (*gone)(void *ctx, struct tm_task *t, uint64_t ts, bool freed);
	/* th parked at ts (a PARK while parked is ignored). */
	void (*park)(void *ctx, struct tm_thread *th, uint64_t ts);
	/* th was parked over [begin, begin + d): UNPARK at ts, or the end of the
	 * trace (ts = end_ns). */
	void (*unpark)(void *ctx, struct tm_thread *th, uint64_t begin, uint64_t ts, uint64_t d);
	/* At the end of the trace, after its polls and parks were closed, for
	 * each task still live (in no particular order; leave(TM_BY_END) came
	 * first when it was runnable or idle). t->state is its state then. */
	void (*cut)(void *ctx, struct tm_task *t, uint64_t end_ns);
	/* Once, last: every live task is still readable (task_model__each()). */
	void (*finish)(void *ctx, uint64_t end_ns);
	/* A future frame was entered (ev->type AS_EV_FUTURE_ENTER) or left
	 * (AS_EV_FUTURE_EXIT) on th: th->fut is up to date. */
	void (*frame)(void *ctx, struct tm_thread *th, const struct as_event *ev);
	/* Live task t is folded away at ts (the live-task limit, see the top):
	 * t->state is TM_RUNNABLE, TM_IDLE (since t->since, not left: no
	 * leave() comes) or TM_COMPLETED. After the call t is freed; nothing
	 * more is published about it. */
	void (*fold)(void *ctx, struct tm_task *t, uint64_t ts);
};

struct task_model;

/* Returns a new model, or NULL with errno set. meta (may be NULL) is read
 * during the call only (the probes' root future names are copied). */
struct task_model *task_model__new(const struct as_trace_meta *meta);
/* A model that follows only threads (names, parks) and their future frames,
 * no tasks: for a consumer that needs no more when it runs alone. */
struct task_model *task_model__new_frames(const struct as_trace_meta *meta);
/* Registers an observer: ops (read during the call), ctx, and the bytes it
 * wants in each task and thread; *task_off / *thread_off (may be NULL when
 * 0 bytes) get where they are. Returns 0, -EBUSY after the first event,
 * -ENOSPC past TASK_MODEL_MAX_OBSERVERS. */
int task_model__observe(struct task_model *m, const struct tm_ops *ops, void *ctx,
			size_t task_bytes, size_t *task_off, size_t thread_bytes,
			size_t *thread_off);
/* Feeds one event in trace order. Returns 0, -EINVAL (after finish), or
 * -ENOMEM (the model stays consistent; that event may be lost). Observers
 * report their own errors through their own objects. */
int task_model__add(struct task_model *m, const struct as_event *ev);
/* Closes the trace at end_ns (see the top); once. Returns 0 or -EINVAL. */
int task_model__finish(struct task_model *m, uint64_t end_ns);

/* Sets the live-task limit (see the top): max_live 0 none (the default).
 * Returns 0, or -EBUSY after the first event. Ignored by a frames-only
 * model. */
int task_model__set_max_live(struct task_model *m, size_t max_live);
/* The limit in effect, 0 none. */
size_t task_model__max_live(const struct task_model *m);
/* Whether header is a folded task's, remembered (no live task there). */
bool task_model__is_folded(const struct task_model *m, uint64_t header);
/* Tasks folded away by the limit, and the events dropped as theirs. */
uint64_t task_model__folded(const struct task_model *m);
uint64_t task_model__folded_events(const struct task_model *m);
/* An estimate of the bytes the model holds (its observers' bytes in tasks
 * and threads included). */
size_t task_model__bytes(const struct task_model *m);
/* A task known otherwise than by an event (read from the target's memory),
 * idle since ts: born (ev of type 0, ts) and entered TM_IDLE, unless a live
 * task has that header already. *out (may be NULL) gets the task. Returns
 * 0, -EINVAL, -ENOMEM. */
int task_model__adopt(struct task_model *m, uint64_t header, uint64_t ts, struct tm_task **out);
/* Events that did not fit (out of order, lost ends, unknown tasks ...). */
uint64_t task_model__anomalies(const struct task_model *m);
/* Every event task_model__add() took: how many, their smallest and largest
 * timestamps (UINT64_MAX and 0 before the first), and those of a type no
 * trace holds (0, or AS_EV__MAX and past). */
struct tm_counts {
	uint64_t events, min_ts, max_ts, bad_types;
};
const struct tm_counts *task_model__counts(const struct task_model *m);
/* Threads in order of first sight. */
struct tm_thread *const *task_model__threads(const struct task_model *m, size_t *n);
/* Whether name (a model string) is the root future type of a worker task. */
bool task_model__worker_name(const struct task_model *m, const char *name);
/* What the trace's runtime profiles (probe/profile.h) say a root future
 * type name is, TM_NAME_* bits (0: an ordinary task's, or NULL). */
enum {
	TM_NAME_LOOP = 1,         /* a worker's loop (worker_loops) */
	TM_NAME_HANDOFF = 2,      /* with LOOP: the one block_in_place starts */
	TM_NAME_POOL = 4,         /* a blocking-pool task (pool_tasks), not a loop */
};
#define TM_MAX_PROFILES 4
unsigned task_model__name_kind(const struct task_model *m, const char *name);
/* What they say a user stack frame's function name is: TM_NAME_POOL (only
 * in a blocking-pool task's poll), TM_NAME_HANDOFF (only inside
 * block_in_place), or 0. */
unsigned task_model__frame_kind(const struct task_model *m, const char *sym);
/* Thread tid, or NULL if not seen. */
const struct tm_thread *task_model__thread(const struct task_model *m, uint32_t tid);
/* The live task at header, or NULL. */
struct tm_task *task_model__task(const struct task_model *m, uint64_t header);
/* The task polled now on thread tid: the innermost poll on its stack;
 * when none, the live task at header (the task an event such as
 * AS_EV_OFFCPU names, polled where the model lost the poll's begin), or
 * NULL. */
struct tm_task *task_model__polled(const struct task_model *m, uint32_t tid, uint64_t header);
/* Live tasks now (after finish: the tasks cut at the end). */
size_t task_model__live(const struct task_model *m);
/* Calls fn for each live task, in no particular order. */
void task_model__each(const struct task_model *m, void (*fn)(void *ctx, struct tm_task *t),
		      void *ctx);
/* Whether the poll of frame f was a user task's: not nested, not a worker's. */
static inline bool tm_frame__user(const struct tm_frame *f)
{
	return !f->nested && !f->task->worker;
}

static inline void *tm_task__data(const struct tm_task *t, size_t off)
{
	return (char *)t + off;
}

static inline void *tm_thread__data(const struct tm_thread *th, size_t off)
{
	return (char *)th + off;
}

/* A sink view of m (ops->free NULL): add() feeds it, finish() closes it at
 * end->end_ns. Put it before the sinks of the analyses built on m. */
struct as_sink task_model__sink(struct task_model *m);

/* Frees m; NULL accepted. */
void task_model__free(struct task_model *m);

#endif
