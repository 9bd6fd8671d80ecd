/* One function runs a source into a set of sinks: `report`, `export`,
 * `blocking`, `cpu`, `uring`, `events`, `top`, `trace` and `dump` are each a
 * choice of source and sinks. A second pass over the same input is the same
 * call again on a new source. Never prints: progress goes to a callback,
 * errors to the result. */
#ifndef AS_PIPELINE_PIPELINE_H
#define AS_PIPELINE_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pipeline/sink.h"
#include "pipeline/source.h"

#define PIPELINE_MAX_SINKS 16          /* sinks one run feeds */
#define PIPELINE_PROGRESS_EVERY 4096   /* events between progress calls (a power of 2) */

struct pipeline_opts {
	bool partial;             /* a truncated input (-ENODATA), or one corrupt
	                             past some point (-EBADMSG: the events before
	                             it), ends the run like a clean end, with
	                             res->truncated set */
	/* Called every PIPELINE_PROGRESS_EVERY events with the count so far
	 * (the callback rate-limits its output itself); NULL for none. */
	void (*on_progress)(void *ctx, const struct as_source *src, uint64_t events);
	void *ctx;
};

struct pipeline_result {
	uint64_t events;          /* events read from the source */
	bool truncated;           /* the input ended before its end record */
	bool corrupt;             /* ... at a corrupt record (opts->partial) */
	/* What finish() got: the source's end record, or for a truncated input
	 * { events, lost 0, missed 0, the last timestamp, truncated 1 }. */
	struct as_trace_end end;
	int err;                  /* 0, or the -errno that stopped the run */
	const char *failed;       /* the sink whose add()/finish() failed, or NULL
	                             (the source's error then: as_source__error()) */
};

/* Reads src to its end, giving each event (and its stack) to sinks[0..n) in
 * order, then finishes each sink (n at most PIPELINE_MAX_SINKS, else
 * -E2BIG). Returns 0, or res->err (< 0): -ENODATA for
 * a truncated input without opts->partial, the source's error, or a sink's.
 * opts may be NULL. */
int pipeline_run(struct as_source *src, struct as_sink *sinks, size_t n,
		 const struct pipeline_opts *opts, struct pipeline_result *res);

#endif
