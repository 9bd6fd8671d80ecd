/* The reader of a session's in-kernel aggregation (serve --tasks,
 * bpf/agg.bpf.c): per task group (poll probe, spawn site) its counters and
 * histograms summed over the CPUs, the live tasks and the stalled ones per
 * group, and the totals, read from the BPF maps whenever asked (at scrape
 * time). A reader holds its own descriptors of the maps and its own copy of
 * the probes' root future names: it outlives its session (the last read of
 * a target that exited), and may be read from another thread than the
 * session's (not two reads at once). The one other module of src/record
 * that uses libbpf (its map calls only). Never prints. */
#ifndef AS_RECORD_AGG_H
#define AS_RECORD_AGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "events.h"
#include "record/recorder.h"

struct rec_agg;

struct rec_agg_group {
	uint32_t probe;              /* the poll probe (AGG_PROBE_NONE: the overflow group) */
	struct agg_site site;        /* its spawn site, zero unknown (rec_agg__site_file()) */
	const char *future;          /* the probe's root future type, NULL unknown (the
	                                reader's, valid until it is freed) */
	struct agg_group v;          /* summed over the CPUs */
	uint64_t live;               /* tasks of the group alive now */
	uint64_t stalled;            /* of which idle (Pending, no wake) at least the stall
	                                threshold */
};

struct rec_agg_read {
	struct rec_agg_group *groups;  /* n, owned (rec_agg_read__clear) */
	size_t n;
	struct agg_totals tot;       /* summed over the CPUs */
	uint64_t live;               /* tasks followed (in agg_tasks) */
	uint64_t live_unpolled;      /* of which never polled yet (no group) */
};

/* A reader of s's aggregation (s recorded with o->agg). Returns 0 with
 * *out, -ENOENT when s has none, or -errno. */
int rec_session__agg(struct rec_session *s, struct rec_agg **out);

/* Internal (session.c): a reader of these maps (descriptors duplicated)
 * of the plan's probes, for pid. NULL and errno on failure. */
struct rec_agg *rec_agg__new(int groups, int tasks, int totals, const struct as_probe *probes,
			     size_t n_probes, pid_t pid, const char *binary, uint64_t bias);

/* Reads the maps now: the totals, the groups, and with tasks the live
 * tasks (a walk of them all: live, stalled; now_ns, CLOCK_MONOTONIC, and
 * stall_ns say which idle tasks are stalled). Returns 0 or -errno (out
 * cleared then). */
int rec_agg__read(struct rec_agg *a, bool tasks, uint64_t now_ns, uint64_t stall_ns,
		  struct rec_agg_read *out);
void rec_agg_read__clear(struct rec_agg_read *r);
/* The file name of spawn site s into buf (size n): read from the target's
 * memory, or once it exited from its binary (a string of .rodata). Returns
 * 0, or -errno (buf "" then). */
int rec_agg__site_file(struct rec_agg *a, const struct agg_site *s, char *buf, size_t n);
/* Accepts NULL. */
void rec_agg__free(struct rec_agg *a);

#endif
