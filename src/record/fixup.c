/* Runtime fix-ups (fixup.h): nested wakes and held frees. */
#include "record/fixup.h"

#include <stdbool.h>
#include <stdlib.h>
#include <sys/types.h>

#include "probe/plan.h"

/* The last event of a thread, when it was a wake: a runtime whose wake
 * paths call one another out of line reports one wake at two probe points. */
struct last_wake {
	uint64_t task, ts;
	uint16_t probe;
	bool valid;
};

/* A FREE held back until the poll that task runs on another thread ends
 * (async-task: the Task handle's owner may free a completed task while its
 * last run is still returning on a worker). */
struct held_free {
	struct as_event ev;
	uint32_t poll_tid;         /* the thread running the task's poll */
};

/* Whether probe is a scheduler function reached from a waker call. */
static bool is_nested(const struct rec_fixup *f, uint16_t probe)
{
	return !f->probe_flags || (probe < f->n_probes && (f->probe_flags[probe] & PLAN_F_NESTED));
}

/* true when ev repeats the wake that this thread just reported */
static bool nested_wake(struct rec_fixup *f, const struct as_event *ev)
{
	uint64_t idx;

	if (!u64map__get(&f->thread_idx, (uint64_t)ev->tid + 1, &idx)) {
		struct last_wake *l = realloc(f->last, (f->n_threads + 1) * sizeof(*l));
		if (!l)
			return false;
		f->last = l;
		idx = f->n_threads;
		if (u64map__set(&f->thread_idx, (uint64_t)ev->tid + 1, idx))
			return false;
		f->last[f->n_threads++] = (struct last_wake){ 0 };
	}
	struct last_wake *l = &f->last[idx];
	/* no time limit: a thread preempted between the two (milliseconds
	 * under load) would count one wake twice; nothing else from the thread
	 * may come between them */
	bool dup = ev->type == AS_EV_WAKE && l->valid && l->task == ev->task &&
		   l->probe != ev->probe && is_nested(f, ev->probe) &&
		   (!f->probe_flags || !is_nested(f, l->probe));
	if (ev->type == AS_EV_WAKE && !dup)
		*l = (struct last_wake){ .task = ev->task, .ts = ev->ts, .probe = ev->probe, .valid = true };
	else if (ev->type != AS_EV_WAKE)
		l->valid = false;
	return dup;
}

/* Hands one event on, unless it repeats a wake. */
static void put(struct rec_fixup *f, const struct as_event *ev)
{
	if (nested_wake(f, ev)) {
		f->nested_wakes++;
		return;
	}
	f->emit(f->ctx, ev);
}

/* Emits held FREE i, at ts (never before the events already emitted
 * about the task), and forgets it. */
static void release_free(struct rec_fixup *f, size_t i, uint64_t ts)
{
	struct as_event e = f->held[i].ev;

	if (ts > e.ts)
		e.ts = ts;
	f->held[i] = f->held[--f->n_held];
	put(f, &e);
}

static ssize_t find_held(const struct rec_fixup *f, uint64_t task)
{
	for (size_t i = 0; i < f->n_held; i++)
		if (f->held[i].ev.task == task)
			return (ssize_t)i;
	return -1;
}

/* A task freed by another thread while its poll runs (possible with
 * async-task, never with Tokio, whose poll holds a reference) is emitted
 * as freed when that poll ends, at the poll's end: the analysis then sees
 * a complete last poll instead of a free inside a running poll. Any other
 * event about the task first releases the held FREE as it came. */
void rec_fixup__push(struct rec_fixup *f, const struct as_event *ev)
{
	uint64_t tid1 = 0;
	ssize_t h;

	if (!ev->task) {
		put(f, ev);
		return;
	}
	h = f->n_held ? find_held(f, ev->task) : -1;
	if (h >= 0 && !(ev->type == AS_EV_POLL_END && ev->tid == f->held[h].poll_tid)) {
		release_free(f, (size_t)h, 0);
		h = -1;
	}
	switch (ev->type) {
	case AS_EV_POLL_BEGIN:
		if (u64map__set(&f->running, ev->task, (uint64_t)ev->tid + 1))
			(*f->missed)++;
		break;
	case AS_EV_POLL_END:
		if (u64map__get(&f->running, ev->task, &tid1) && tid1 == (uint64_t)ev->tid + 1)
			u64map__del(&f->running, ev->task);
		put(f, ev);
		if (h >= 0)
			release_free(f, (size_t)h, ev->ts);
		return;
	case AS_EV_FREE:
		if (u64map__get(&f->running, ev->task, &tid1) && tid1 != (uint64_t)ev->tid + 1) {
			if (f->n_held == f->cap_held) {
				size_t cap = f->cap_held ? f->cap_held * 2 : 16;
				struct held_free *n = realloc(f->held, cap * sizeof(*n));
				if (!n)
					break;  /* emit it now, as it came */
				f->held = n;
				f->cap_held = cap;
			}
			u64map__del(&f->running, ev->task);
			f->held[f->n_held++] = (struct held_free){ .ev = *ev, .poll_tid = (uint32_t)(tid1 - 1) };
			f->held[f->n_held - 1].ev.str = NULL;   /* a FREE has none */
			return;
		}
		u64map__del(&f->running, ev->task);
		break;
	default:
		break;
	}
	put(f, ev);
}

void rec_fixup__flush(struct rec_fixup *f)
{
	while (f->n_held)
		release_free(f, f->n_held - 1, 0);
}

void rec_fixup__clear(struct rec_fixup *f)
{
	u64map__clear(&f->running);
	free(f->held);
	u64map__clear(&f->thread_idx);
	free(f->last);
	f->held = NULL;
	f->last = NULL;
	f->n_held = f->cap_held = f->n_threads = 0;
}
