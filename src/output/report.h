/* Task reports: the results of a finished analysis (analysis/tasks.h) written
 * in one format each (text.c, json.c). Outputs only format: they compute
 * nothing the analysis does not already hold, and write only to the FILE*
 * they are given. Both name a task as every output does (util/task_id.h:
 * "#3" the runtime's id, else "~7" its seq): the text in one TASK column,
 * the JSON in "task" keys beside "seq" and "id". */
#ifndef AS_OUTPUT_REPORT_H
#define AS_OUTPUT_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "analysis/tasks.h"
#include "analysis/timeline.h"
#include "trace/event.h"

/* Options of a report; NULL means all false / NULL. */
struct usdt_counts;
struct blocking;
struct futures;
struct findings;
struct text_view;

struct report_opts {
	bool truncated;   /* the trace had no end record: it stops at its last event */
	const struct timeline *timeline; /* finished second pass over the same trace,
	                                    or NULL: no timeline section (borrowed) */
	const struct usdt_counts *usdt;  /* finished USDT hit counts, or NULL: no
	                                    "usdt" section in JSON (borrowed) */
	struct blocking *blocking;       /* off-CPU inside polls, or NULL: no
	                                    "blocking" section in JSON (borrowed) */
	const struct futures *futures;   /* finished future-level analysis of the
	                                    same trace (analysis/futures.h), or NULL:
	                                    no FUTURES / PARKED AT sections, no
	                                    "futures" in JSON (borrowed) */
	const struct findings *findings; /* what is wrong (analysis/findings.h), or
	                                    NULL: no FINDINGS block in text, an
	                                    empty "findings" in JSON (borrowed) */
	const struct text_view *view;    /* colour, names, rows per table
	                                    (output/view.h); NULL: the defaults */
};

/* Write the report of a (finished with analysis__finish()) to out. meta gives
 * the target, pid, runtime and format version (NULL: unknown); end gives the
 * lost and missed counts (NULL: those of the analysis summary, which are the
 * same when the analysis was finished with this end); opts may be NULL. All
 * borrowed. Return 0,
 * -EINVAL if a is NULL or not finished, -ENOMEM, or -EIO on a write error. */

/* Human-readable: header, FINDINGS (opts->findings: what is wrong, most
 * severe first, output/view.h), TASKS (by busy time, runtime worker tasks
 * apart), TASK GROUPS (only when tasks were folded: one line per group, and
 * how to raise the limit), WORKERS, DISTRIBUTIONS (one line per histogram),
 * LONG POLLS (longest first), STALLED and STARVED, WAKE EDGES, with
 * opts->futures FUTURES (the future functions by self time, and the frames
 * lost) and PARKED AT (the longest-waiting tasks parked for good, each with
 * its await chain), TOTALS. Every table at most opts->view->limit rows (a
 * line says how many more), names as opts->view says (util/rust_name.h),
 * colour if asked. Durations as "1.23 ms". The timeline is not shown in
 * text. */
/* A flight recorder snapshot's line, nothing for another trace:
 * "flight recorder snapshot: trigger blocking (DETAIL) at 1.20 s, window 30.00 s + 2.00 s after" */
void report_flight_line(FILE *out, const struct as_trace_meta *meta);

int report_text(FILE *out, const struct analysis *a, const struct as_trace_meta *meta,
		const struct as_trace_end *end, const struct report_opts *opts);

/* One JSON document, stable schema (keys listed in json.c), tasks with a
 * row in seq order, then the groups of folded tasks. Durations in integer
 * ns; ratios and fractions as decimals. Entries naming a folded task (long
 * polls, stalled, starved, wake edges) keep its seq and carry its group. */
int report_json(FILE *out, const struct analysis *a, const struct as_trace_meta *meta,
		const struct as_trace_end *end, const struct report_opts *opts);

#endif
