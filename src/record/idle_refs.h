/* idle_refs: what holds each task idle when a recording ends. The tasks
 * idle then (their last poll returned Pending and no wake came since) are
 * followed through the events the recorder writes; before the target is
 * let go, the state word of each (for a runtime whose profile describes
 * it, struct task_state_layout) is read from its memory, and after the
 * last events each task still idle as it was read gets an AS_SPAWN_WAKERS
 * note: the wakers of it held, 0 when nothing can wake it again. */
#ifndef AS_RECORD_IDLE_REFS_H
#define AS_RECORD_IDLE_REFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "probe/plan.h"
#include "trace/event.h"
#include "util/u64map.h"

struct idle_read {
	uint64_t header, gen;
	uint32_t wakers;
};

/* A task found in the target's memory of which no event was written. */
struct idle_before {
	uint64_t header, id;
	char *name;                  /* its root future type, or NULL */
	bool queued;                 /* runnable, not idle */
	bool running;                /* in a poll, on thread tid, not idle */
	uint32_t tid;
	char comm[17];               /* that thread's name, "" unknown */
	bool wakers_known;
	uint32_t wakers;
};

struct rec_idle {
	struct u64map idle;          /* header -> gen << 16 | its last poll's probe */
	uint64_t gen;
	struct idle_read *reads;
	size_t n_reads;
	uint64_t unread;             /* idle tasks of a described runtime not read */
	/* the tasks found in memory (rec_idle__before()), header -> index + 1
	 * into before; an event of one (it was not idle after all, or its
	 * events came late) drops it */
	struct idle_before *before;
	size_t n_before, cap_before;
	struct u64map before_of;
};

/* The counts rec_idle__emit() returns. */
struct idle_emitted {
	uint64_t notes;              /* wakers notes of tasks followed */
	uint64_t no_waker;           /* ... of which hold none */
	uint64_t before_idle;        /* tasks found idle in memory, no event of them */
	uint64_t before_queued;      /* ... found runnable */
	uint64_t before_running;     /* ... found in a poll */
	uint64_t before_no_waker;    /* ... idle ones that hold no waker */
};

/* Follows one event as written (POLL_END Pending: idle; POLL_BEGIN, WAKE,
 * FREE: not). 0 or -ENOMEM (the task then not followed). */
int rec_idle__note(struct rec_idle *x, const struct as_event *ev);

/* Reads the state word of every idle task of a runtime plan describes, in
 * process pid (process_vm_readv); kept for rec_idle__emit(). 0, or
 * -ENOMEM; a task whose word cannot be read (the target gone) is counted
 * in x->unread. */
int rec_idle__read(struct rec_idle *x, pid_t pid, const struct probe_plan *plan);

/* A task found in the target's memory (idle, queued: runnable, or running
 * on thread tid) at the end of a recording of a running program: noted
 * unless an event of it was written (it is followed, or gone), unless one
 * comes before rec_idle__emit(), and unless it runs on no known thread.
 * name is copied. 0, or -ENOMEM. */
int rec_idle__before(struct rec_idle *x, const struct idle_before *b);

/* Calls emit(ctx, ev) with an AS_SPAWN_WAKERS note at ts on thread tid for
 * each task read that is still idle as it was then (no event of it since);
 * then for each task found in memory and still unseen, an AS_SPAWN_BEFORE
 * note (and its AS_SPAWN_WAKERS note when its wakers are known). The
 * counts go to *out. */
void rec_idle__emit(struct rec_idle *x, uint64_t ts, uint32_t tid,
		    void (*emit)(void *ctx, const struct as_event *ev), void *ctx,
		    struct idle_emitted *out);

void rec_idle__free(struct rec_idle *x);

#endif
