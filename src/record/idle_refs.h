/* idle_refs: what holds each task idle when a recording ends. The tasks
 * idle then (their last poll returned Pending and no wake came since) are
 * followed through the events the recorder writes; before the target is
 * let go, the state word of each (for a runtime whose profile describes
 * it, struct task_state_layout) is read from its memory, and after the
 * last events each task still idle as it was read gets an AS_SPAWN_WAKERS
 * note: the wakers of it held, 0 when nothing can wake it again. */
#ifndef AS_RECORD_IDLE_REFS_H
#define AS_RECORD_IDLE_REFS_H

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

struct rec_idle {
	struct u64map idle;          /* header -> gen << 16 | its last poll's probe */
	uint64_t gen;
	struct idle_read *reads;
	size_t n_reads;
	uint64_t unread;             /* idle tasks of a described runtime not read */
};

/* Follows one event as written (POLL_END Pending: idle; POLL_BEGIN, WAKE,
 * FREE: not). 0 or -ENOMEM (the task then not followed). */
int rec_idle__note(struct rec_idle *x, const struct as_event *ev);

/* Reads the state word of every idle task of a runtime plan describes, in
 * process pid (process_vm_readv); kept for rec_idle__emit(). 0, or
 * -ENOMEM; a task whose word cannot be read (the target gone) is counted
 * in x->unread. */
int rec_idle__read(struct rec_idle *x, pid_t pid, const struct probe_plan *plan);

/* Calls emit(ctx, ev) with an AS_SPAWN_WAKERS note at ts on thread tid for
 * each task read that is still idle as it was then (no event of it since).
 * Returns how many; *no_waker: how many of them hold none. */
size_t rec_idle__emit(struct rec_idle *x, uint64_t ts, uint32_t tid,
		      void (*emit)(void *ctx, const struct as_event *ev), void *ctx,
		      uint64_t *no_waker);

void rec_idle__free(struct rec_idle *x);

#endif
