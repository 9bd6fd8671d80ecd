/* Runtime fix-ups between decoding and delivery, about the runtime's own
 * events (poll, wake, free, park): a wake reported twice by a runtime
 * whose wake paths call one another out of line (a waker call, then the
 * scheduler function it reaches, with nothing else from the thread
 * between, however long a preempted thread took) is given once; a FREE of
 * a task whose poll still runs on another thread (async-task) is held
 * until that poll ends. Pure: no libbpf, no I/O. Internal to src/record. */
#ifndef AS_RECORD_FIXUP_H
#define AS_RECORD_FIXUP_H

#include <stddef.h>
#include <stdint.h>

#include "trace/event.h"
#include "util/u64map.h"

struct rec_fixup {
	/* where events go once fixed up (ev valid for the call) */
	void (*emit)(void *ctx, const struct as_event *ev);
	void *ctx;
	uint64_t *missed;          /* counts what bookkeeping could not hold */
	/* The plan's per-probe flags (n_probes of them): PLAN_F_NESTED marks a
	 * scheduler function a waker call reaches out of line. NULL: every
	 * wake point may be reached from another. */
	const uint8_t *probe_flags;
	size_t n_probes;
	uint64_t nested_wakes;     /* repeated wakes dropped */
	/* private */
	struct u64map running;     /* task header -> tid + 1 of its poll in progress */
	struct held_free *held;
	size_t n_held, cap_held;
	struct u64map thread_idx;  /* tid + 1 -> index into last */
	struct last_wake *last;
	size_t n_threads;
};

/* Takes one runtime event (ev->str, if any, only read during the call):
 * emits it now, later, or never (a repeated wake). */
void rec_fixup__push(struct rec_fixup *f, const struct as_event *ev);

/* Emits the frees still held (their poll never ended: the target exited
 * first). */
void rec_fixup__flush(struct rec_fixup *f);

/* Frees the bookkeeping (not emit's ctx). */
void rec_fixup__clear(struct rec_fixup *f);

#endif
