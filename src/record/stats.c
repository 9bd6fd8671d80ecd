/* Statistics of a recording (stats.h). */
#include "record/stats.h"

#include <string.h>

void rec_stats__count(struct rec_stats *st, const struct as_event *ev)
{
	switch (ev->type) {
	case AS_EV_OFFCPU: st->offcpu++; break;
	case AS_EV_SAMPLE: st->samples++; break;
	case AS_EV_RUNQ: st->runq++; break;
	case AS_EV_URING:
		if (ev->flags & AS_URING_COMPLETE)
			st->uring_done++;
		else
			st->uring_sub++;
		break;
	case AS_EV_FUTURE_ENTER: st->future_polls++; break;
	default: break;
	}
}

void rec_stats__note_task(struct rec_stats *st, const struct as_event *ev)
{
	if (ev->type == AS_EV_FREE) {
		u64map__del(&st->live, ev->task);
		return;
	}
	/* the report's rule (analysis/task_model.c): a task is born at its
	 * first poll or wake; a free, a poll's end or a sample of a task never
	 * seen so is none */
	if (ev->type != AS_EV_POLL_BEGIN && ev->type != AS_EV_WAKE)
		return;
	if (ev->task && ev->task != UINT64_MAX && !u64map__get(&st->live, ev->task, NULL)) {
		st->tasks++;
		if (u64map__set(&st->live, ev->task, 1))
			st->missed++;
	}
}

void unwind_stats__add(struct unwind_stats *st, uint32_t kept, uint32_t fp, bool fp_won)
{
	if (kept > AS_OFFCPU_FRAMES)
		kept = AS_OFFCPU_FRAMES;
	if (fp > AS_OFFCPU_FRAMES)
		fp = AS_OFFCPU_FRAMES;
	st->fp_kept += fp_won;
	st->stacks++;
	st->frames += kept;
	st->fp_frames += fp;
	st->hist[kept]++;
	st->fp_hist[fp]++;
}

/* The median of a depth distribution over n stacks (0 for none). */
static uint32_t median_depth(const uint64_t *hist, uint64_t n)
{
	uint64_t seen = 0;

	for (uint32_t k = 0; k <= AS_OFFCPU_FRAMES; k++) {
		seen += hist[k];
		if (n && seen * 2 >= n)
			return k;
	}
	return 0;
}

struct recorder_unwind unwind_stats__result(const struct unwind_stats *st)
{
	return (struct recorder_unwind){
		.stacks = st->stacks, .frames = st->frames, .fp_frames = st->fp_frames,
		.fp_kept = st->fp_kept, .median = median_depth(st->hist, st->stacks),
		.fp_median = median_depth(st->fp_hist, st->stacks),
	};
}

uint64_t rec_stats__missed(const struct rec_stats *st, const struct raw_counters *c)
{
	return st->missed + st->write_errors + st->stack_errors + c->depth_overflow +
	       c->no_thread_slot + c->offcpu_dropped + c->runq_dropped + c->uring_dropped +
	       c->fut_depth_overflow + c->prog_misses;
}

void rec_stats__result(const struct rec_stats *st, const struct as_trace_end *end,
		       struct recorder_result *res)
{
	res->events = end->events;
	res->tasks = st->tasks;
	res->lost = end->lost;
	res->missed = end->missed;
	res->offcpu = st->offcpu;
	res->samples = st->samples;
	res->unwind_samples = unwind_stats__result(&st->uw_samples);
	res->unwind_offcpu = unwind_stats__result(&st->uw_offcpu);
	res->runq = st->runq;
	res->spawn_sites = st->spawn_sites;
	res->spawn_sites_unknown = st->spawn_sites_unknown;
	res->future_polls = st->future_polls;
	res->uring_submitted = st->uring_sub;
	res->uring_completed = st->uring_done;
}

void rec_stats__clear(struct rec_stats *st)
{
	u64map__clear(&st->live);
	memset(st, 0, sizeof(*st));
}
