/* Log-linear histograms of durations (ns): 128 linear sub-buckets per power
 * of two (HDR style), so any value is known to within 1/128 of itself: a
 * percentile is reported as the middle of its bucket, at most 0.4% away from
 * the exact order statistic (nearest rank), and exact below 128 ns. Covers
 * the whole uint64 range (1 ns .. 584 years); min, max, count and sum are
 * exact.
 *
 * Memory: a histogram starts as a small inline array of exact values (no
 * allocation: a task polled a few times costs nothing more), then keeps a
 * sorted list of its non-empty buckets (8 bytes each: a task polled 100 times
 * costs at most 800 bytes; adds go unsorted into the list's spare room first
 * and are merged in when it fills or the histogram is read, one cache miss
 * an add instead of a binary search's), and only past HIST_SPARSE_MAX distinct buckets
 * turns into dense counts over the range of powers of two actually seen
 * (1 KiB per power of two; 20 KiB for values spread from 1 us to 1 s).
 *
 * The struct is public so that it can be embedded (per task, per wake edge);
 * its fields are private to hist.c. A read (quantiles, buckets, a merge from
 * it) first merges the pending adds into the list: const there means
 * logically unchanged, so a histogram is never shared between threads. Zero-initialised is empty. Pure C, no
 * I/O, no globals. */
#ifndef AS_ANALYSIS_HIST_H
#define AS_ANALYSIS_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HIST_SUB_BITS 7                      /* 128 sub-buckets per power of two */
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_GROUPS (64 - HIST_SUB_BITS + 1) /* group 0: [0, 128) exact */
#define HIST_INLINE 4                        /* exact values kept before buckets */
#define HIST_SPARSE_MAX 512                  /* bucket list entries before dense */

struct hist_entry {                          /* sparse mode: one non-empty bucket */
	uint16_t index;
	uint32_t count;
};

struct hist {
	uint64_t count, sum, min, max; /* sum saturates at UINT64_MAX */
	uint64_t *counts;              /* dense: HIST_SUB per group in [lo, hi], or NULL */
	struct hist_entry *entries;    /* sparse: n_entries by index, or NULL */
	uint32_t n_entries, cap_entries;
	uint8_t lo, hi;
	uint8_t n_inline;
	uint16_t n_pend;               /* sparse: unsorted adds after the list */
	uint64_t vals[HIST_INLINE];    /* neither counts nor entries: the values */
};

/* One output bucket: values in [low, high] (inclusive), count of them. */
struct hist_bucket {
	uint64_t low, high, count;
};

/* Adds value v (n times for hist__add_n). Returns 0 or -ENOMEM (then h is
 * unchanged). */
int hist__add(struct hist *h, uint64_t v);
int hist__add_n(struct hist *h, uint64_t v, uint64_t n);

/* Adds the n values v[0 .. n), as hist__add() of each in turn would (one
 * loop over dense counts that cover them). Returns 0 or -ENOMEM (h then
 * holds the values before the one that failed). */
int hist__add_u32(struct hist *h, const uint32_t *v, size_t n);

/* Adds every value of src to dst. Returns 0 or -ENOMEM (dst may then hold
 * part of src). */
int hist__merge(struct hist *dst, const struct hist *src);

/* The value at quantile q in [0, 1] (nearest rank: the ceil(q * count)-th
 * smallest; q = 0 gives min, q = 1 gives max), within 0.4%; 0 when empty. */
uint64_t hist__quantile(const struct hist *h, double q);
/* The values at quantiles q[0 .. n) (ascending), each as hist__quantile()
 * gives it, in one walk; out[i] for q[i]. */
void hist__quantiles(const struct hist *h, const double *q, uint64_t *out, size_t n);
/* sum / count, 0 when empty. */
uint64_t hist__mean(const struct hist *h);

/* Fills out (capacity max >= 64) with the non-empty buckets, lowest first,
 * merging neighbouring sub-buckets (halving the resolution) until at most max
 * remain. Returns how many were written. */
size_t hist__buckets(const struct hist *h, struct hist_bucket *out, size_t max);

/* A hint that h is about to be added to: its bucket list or counts are
 * fetched into the cache. */
static inline void hist__prefetch(const struct hist *h)
{
	if (h->entries)
		__builtin_prefetch(h->entries + h->n_entries + h->n_pend, 1);
	else if (h->counts)
		__builtin_prefetch(h->counts, 1);
}

/* Bytes allocated by h (not counting the struct itself). */
size_t hist__mem(const struct hist *h);

/* Frees what h allocated and empties it. */
void hist__clear(struct hist *h);

/* Bucket of value v: its index over all groups and its bounds (inclusive).
 * Exposed for tests. */
size_t hist__index(uint64_t v);
void hist__bounds(size_t index, uint64_t *low, uint64_t *high);

#endif
