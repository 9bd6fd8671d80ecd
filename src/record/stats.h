/* The statistics of a recording: what was recorded, of which kind, how
 * many distinct tasks, what was dropped, how deep DWARF unwinding went;
 * the trace's end record and the recorder_result made from them. Pure
 * counting: no libbpf, no I/O. Internal to src/record. */
#ifndef AS_RECORD_STATS_H
#define AS_RECORD_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "events.h"
#include "record/recorder.h"
#include "trace/event.h"
#include "util/u64map.h"

/* --dwarf: depths of the user stacks unwound, for one kind of record
 * (struct recorder_unwind), with their distributions for the medians. */
struct unwind_stats {
	uint64_t stacks, frames, fp_frames, fp_kept;
	uint64_t hist[AS_OFFCPU_FRAMES + 1], fp_hist[AS_OFFCPU_FRAMES + 1];
};

struct rec_stats {
	uint64_t events;            /* events handed on (to the consumer, the file) */
	uint64_t tasks;             /* tasks seen (born at a poll or a wake, as in the report) */
	uint64_t missed;            /* malformed or unattributable records */
	uint64_t write_errors, stack_errors;
	uint64_t offcpu, samples, runq, uring_sub, uring_done, future_polls;
	uint64_t profile_no_id;     /* profile: records whose task id was unreadable */
	struct u64map live;         /* task headers seen and not freed */
	struct unwind_stats uw_samples, uw_offcpu;
	/* spawns seen without a &Location: call sites found by unwinding,
	 * and not found (their tasks have no spawn site) */
	uint64_t spawn_sites, spawn_sites_unknown;
};

/* Counts a decoded event by its kind (before any fix-up drops it). */
void rec_stats__count(struct rec_stats *st, const struct as_event *ev);

/* An event as written: a task first seen in a poll or a wake (or again
 * after its free) counts as a new one, as the report counts them. */
void rec_stats__note_task(struct rec_stats *st, const struct as_event *ev);

/* One stack unwound: kept user frames, the frame-pointer walk's, and
 * whether the walk's were kept. */
void unwind_stats__add(struct unwind_stats *st, uint32_t kept, uint32_t fp, bool fp_won);

/* The medians and sums of st. */
struct recorder_unwind unwind_stats__result(const struct unwind_stats *st);

/* Everything missed: the recorder's own counts and the BPF side's. */
uint64_t rec_stats__missed(const struct rec_stats *st, const struct raw_counters *c);

/* Fills the counts of res (not the future plan, stacks, bytes, status). */
void rec_stats__result(const struct rec_stats *st, const struct as_trace_end *end,
		       struct recorder_result *res);

void rec_stats__clear(struct rec_stats *st);

#endif
