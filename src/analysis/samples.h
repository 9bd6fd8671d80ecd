/* Samples: the durations of one distribution of a live task (or of one
 * wake edge) kept as raw values, and only past SAMPLES_MAX of them in a
 * log-linear histogram (analysis/hist.h). Every answer is the one a
 * histogram fed the same values would give (percentiles as the middle of
 * the value's bucket clamped to the minimum and maximum, exact for up to
 * HIST_INLINE values; the same merge into another histogram): adding a
 * value is a store, and the bucket work is done once, when the task goes.
 *
 * Memory: SAMPLES_INLINE values inline (no allocation: most wake edges
 * hold one or two), then an array grown fourfold from 16 up to
 * SAMPLES_MAX values (1 KiB), then that array is a write buffer in front of the
 * histogram. Values of 2^32 ns (4.3 s) and more go to the histogram
 * directly. Zero-initialised is empty. Pure C, no I/O, no globals. */
#ifndef AS_ANALYSIS_SAMPLES_H
#define AS_ANALYSIS_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/hist.h"

#define SAMPLES_INLINE 2
/* 252: the array of 1008 bytes stays in the allocator's fast path (glibc's
 * per-thread cache takes blocks up to 1032 bytes, its header included) */
#define SAMPLES_MAX 252

struct samples {
	uint32_t n;               /* raw values held */
	uint32_t cap;             /* 0: inline (SAMPLES_INLINE), else the array's size */
	union {
		uint32_t v[SAMPLES_INLINE];
		uint32_t *heap;
	} u;
	struct hist *h;           /* the values not held raw, NULL none */
};

int samples__add_slow(struct samples *s, uint64_t v);

/* Adds v. Returns 0 or -ENOMEM (s unchanged). */
static inline int samples__add(struct samples *s, uint64_t v)
{
	if (__builtin_expect(v <= UINT32_MAX, 1)) {
		if (!s->cap && s->n < SAMPLES_INLINE) {
			s->u.v[s->n++] = (uint32_t)v;
			return 0;
		}
		if (s->cap && s->n < s->cap) {
			s->u.heap[s->n++] = (uint32_t)v;
			return 0;
		}
	}
	return samples__add_slow(s, v);
}

/* Values held in all. */
uint64_t samples__count(const struct samples *s);
/* The largest value, 0 when empty. */
uint64_t samples__max(const struct samples *s);
/* The values at quantiles q[0 .. n) (ascending, n <= 8), as
 * hist__quantiles() on a histogram of the same values gives them. May
 * reorder the raw values (hence not const); may allocate (the histogram,
 * out of memory: the raw values' own answer). */
void samples__quantiles(struct samples *s, const double *q, uint64_t *out, size_t n);
/* Adds every value of s to dst (hist__merge() of a histogram of them).
 * Returns 0 or -ENOMEM. */
int samples__merge_into(struct hist *dst, struct samples *s);
/* Adds every value of src to dst. Returns 0 or -ENOMEM. */
int samples__merge(struct samples *dst, struct samples *src);
/* Calls fn(ctx, v, n) for the values of s, n of value v each (raw values
 * one by one, the histogram's buckets as their lowest value). */
void samples__each(struct samples *s, void (*fn)(void *ctx, uint64_t v, uint64_t n), void *ctx);
/* Bytes allocated by s (not counting the struct itself). */
size_t samples__mem(const struct samples *s);
/* Frees what s allocated and empties it. */
void samples__clear(struct samples *s);

#endif
