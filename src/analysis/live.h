/* Live task view for `top`: the task model's tasks (task_model.h), kept as
 * current state plus per-interval rates (polls/s, busy %, wakes/s) instead of
 * whole-trace totals. Pure C: no I/O, no globals. Memory is bounded by live
 * tasks and threads: finished tasks stay listed for LIVE_KEEP_DONE_NS after
 * they end, then go.
 *
 * Use: live__new(meta); live__add() each event; live__tick(now) once per
 * refresh (it closes the rate window); read live__tasks() / live__workers(),
 * valid until the next live__add() or live__tick(); live__free(). */
#ifndef AS_ANALYSIS_LIVE_H
#define AS_ANALYSIS_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/hist.h"
#include "pipeline/sink.h"
#include "trace/event.h"

#define LIVE_KEEP_DONE_NS 5000000000ull

enum live_state { LIVE_ST_RUNNABLE, LIVE_ST_RUNNING, LIVE_ST_IDLE, LIVE_ST_DONE };

enum live_waker { LIVE_WAKER_TASK, LIVE_WAKER_SELF, LIVE_WAKER_IO, LIVE_WAKER_TIMER,
		  LIVE_WAKER_RUNTIME, LIVE_WAKER_THREAD, LIVE_WAKER__MAX };

struct live_task {
	uint64_t seq;             /* 1, 2, ... in order of first sight */
	uint64_t header;
	uint64_t tokio_id;        /* 0 unknown */
	const char *name;         /* root future (borrowed from the meta), or NULL */
	char spawn[128];          /* "file:line", "" unknown */
	uint64_t parent;          /* seq of the task that spawned it, 0 none/unknown */
	bool worker;              /* the runtime's executor loop (polls nest in it) */
	bool pool;                /* a blocking-pool task (spawn_blocking): made to block */
	enum live_state state;
	uint64_t since;           /* ns when it entered its state */
	uint64_t polls, busy_ns, max_poll_ns, wakes;
	uint64_t waker_counts[LIVE_WAKER__MAX];
	struct hist poll_hist;    /* poll durations */
	struct hist sched_hist;   /* wake -> poll delays */
	/* rates over the last closed window */
	double polls_per_s, wakes_per_s, busy_pct;
	/* private: the open window and bookkeeping */
	uint64_t w_polls, w_wakes, w_busy, run_begin, woken_at;
	bool freed;               /* its memory was freed: the address may be reused */
	/* where it is parked, from its memory (see live__note_stack) */
	char parked[96];          /* innermost .await "file:line", or the awaited type */
	uint64_t wakes_at;        /* parked on a timer: its deadline (CLOCK_MONOTONIC ns,
	                             the events' clock), 0 none (live__note_wakeup) */
	/* idle when its memory was read: the wakers of it held then (0: nothing
	 * can wake it again), with wakers_known (live__note_wakeup) */
	uint32_t wakers;
	bool wakers_known;
	bool idle_exact;          /* idle since a poll end seen; else since the view
	                             found it (Tokio keeps no last-poll time): a lower bound */
	char stack[640];          /* its async stack, one frame per line */
	char name_buf[160];       /* name when it came from memory (live_task__name) */
};

struct live_worker {
	uint32_t tid;
	char name[24];
	bool parked;
	uint64_t since;           /* ns when it parked or unparked */
	uint64_t polls;
	double busy_pct, parked_pct;
	/* private */
	uint64_t w_busy, w_parked;
	uint32_t depth;           /* polls in progress at the last tick */
	bool polled;              /* ran a task or parked: listed */
};

struct live_summary {
	uint64_t events, events_per_s, lost, missed;
	uint64_t first_ns, now_ns;
	uint64_t tasks_live, tasks_done;
	uint64_t tasks_folded;    /* live tasks no longer followed (the live-task
	                             limit, live__set_max_live()) */
	uint64_t max_live;        /* that limit, 0 none */
};

struct live;

struct task_model;

/* NULL with errno set on failure. meta is borrowed for the life of l. The
 * view observes a task model of its own (task_model.h: the rules of a
 * task's life, as in `report`), with no live-task limit. */
struct live *live__new(const struct as_trace_meta *meta);
/* Sets the live-task limit of l's model (task_model__set_max_live(); 0
 * none), before the first event: past it the least recently active live
 * tasks are no longer followed (their rows go at the next tick, counted in
 * summary.tasks_folded) and not taken back from memory either. Returns 0
 * or -EBUSY. */
int live__set_max_live(struct live *l, size_t max_live);
/* The same on task model m, shared (borrowed: it must outlive l and must
 * not have seen an event yet); the caller feeds m each event before
 * live__add() (or puts task_model__sink(m) before live__sink(l)). */
struct live *live__new_on(struct task_model *m, const struct as_trace_meta *meta);
/* 0 or -ENOMEM. */
int live__add(struct live *l, const struct as_event *ev);
/* Closes the rate window at now_ns and drops tasks finished long ago. */
void live__tick(struct live *l, uint64_t now_ns);
/* Records what the task at header is parked on, read from its memory (an
 * async stack dump): creates it (idle since now_ns) when no event named it
 * yet, e.g. a task that has not been polled since the view started. name
 * may be NULL; strings are copied. Returns 0 or -ENOMEM. */
int live__note_stack(struct live *l, uint64_t header, uint64_t tokio_id, const char *name,
		     const char *parked, const char *stack, uint64_t now_ns);
/* From the same memory read: the deadline of the timer the task at header
 * is parked on (0 none), and the wakers of it held (wakers_known false: not
 * read, or not idle then). No-op for a task not in the view. */
void live__note_wakeup(struct live *l, uint64_t header, uint64_t wakes_at_ns, bool wakers_known,
		       uint32_t wakers);
/* Lost / missed counters from the recorder, shown by the view. */
void live__set_lost(struct live *l, uint64_t lost, uint64_t missed);
const struct live_task *live__tasks(const struct live *l, size_t *n);
const struct live_worker *live__workers(const struct live *l, size_t *n);
const struct live_summary *live__summary(const struct live *l);
/* A sink view of x (pipeline/sink.h; ops->free NULL: x stays the caller's):
 * add() is live__add(), no finish (the view reads it as it goes, with
 * live__tick()). With a shared model (live__new_on()), put task_model__sink()
 * first. */
struct as_sink live__sink(struct live *x);

void live__free(struct live *l);

const char *live_state__str(enum live_state s);
/* The task's root future name (from a probe, else from memory), or NULL. */
const char *live_task__name(const struct live_task *t);

#endif
