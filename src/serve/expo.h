/* The Prometheus text exposition (format 0.0.4) of serve's metrics: every
 * family with # HELP and # TYPE, base units (seconds, bytes), counters
 * named _total, histograms with cumulative `le` buckets, _sum and _count;
 * label values escaped. What a mode cannot measure is left out, never
 * written as 0. Pure: writes to a stream, no other I/O. */
#ifndef AS_SERVE_EXPO_H
#define AS_SERVE_EXPO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "serve/registry.h"

#define EXPO_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct expo_state {
	const struct registry *reg;
	const char *version;          /* asyncscope's */
	bool tasks;                   /* serve --tasks: the aggregation's families */
	bool offcpu;                  /* off-CPU intervals taken: the blocking families */
	bool by_task;                 /* samples carry task ids (tokio's CONTEXT): else
	                                 every sample is the row "none" (threads) */
	uint64_t sample_hz;
	uint64_t offcpu_min_ns;
	uint64_t long_poll_ns, stall_ns;
	/* counts over every session */
	uint64_t samples, offcpu_intervals, lost, missed;
	uint64_t busy_est_ns;         /* without tasks: sampled CPU in tasks + blocking in them */
	uint64_t attaches;            /* sessions started */
	bool up;                      /* a target is attached now */
	bool follow;                  /* serve --name: the restarts counter */
	bool target_cpu_known;
	uint64_t target_cpu_ns;       /* the targets' CPU time, over every session */
	uint64_t stacks_dropped;      /* pprof stacks not kept (the store full) */
	/* the agent itself (process_*) */
	uint64_t self_cpu_ns, self_rss, self_vsize, self_open_fds, self_max_fds;
	double self_start_s;          /* Unix time */
};

/* Writes the exposition of st to f. Returns 0, or -EIO when f failed. */
int expo_write(FILE *f, const struct expo_state *st);

/* ns as exact decimal seconds ("0.000001024", "12", "3.5") into buf
 * (at least 32 bytes); returns buf. */
char *expo_seconds(char *buf, uint64_t ns);
/* Writes v escaped as a label value (\\, \", \n). */
void expo_label_value(FILE *f, const char *v);

#endif
