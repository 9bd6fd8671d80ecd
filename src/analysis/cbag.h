/* A bag of delays at group-edge precision (tasks_int.h, GROUP_SUB_BITS):
 * each value stands for the middle of its step of an eighth of its power of
 * two (exact below 16), so a bag holds at most 496 distinct values, kept as
 * a sorted list of (step, count), the first CBAG_INLINE of them in the bag
 * itself: a group edge's delays in its own record, no histogram struct nor
 * bucket list to fetch on the way (a report adds to some 160,000 group
 * edges at random). Its answers are those of a histogram (analysis/hist.h)
 * fed the same values: percentiles as the middle of the value's bucket
 * clamped to the smallest and largest value, exact for up to HIST_INLINE
 * values. Zero-initialised is empty. Pure C, no I/O, no globals. */
#ifndef AS_ANALYSIS_CBAG_H
#define AS_ANALYSIS_CBAG_H

#include <stddef.h>
#include <stdint.h>

#define CBAG_SUB_BITS 3     /* steps per power of two: 2^3 */
#define CBAG_INLINE 9

struct cbag_ent {
	uint16_t step;      /* cbag_step() of the values */
	uint16_t count_hi;  /* count = count_hi << 32 | count_lo */
	uint32_t count_lo;
};

struct cbag {
	uint16_t n;         /* entries, by step */
	uint16_t cap;       /* 0: in in[], else the size of heap */
	union {
		struct cbag_ent in[CBAG_INLINE];
		struct cbag_ent *heap;
	} u;
};

/* d at that precision: the middle of its step (d itself below 16). */
static inline uint64_t cbag_coarse(uint64_t d)
{
	unsigned top;
	uint64_t step;

	if (d < 2ULL << CBAG_SUB_BITS)
		return d;
	top = 63 - (unsigned)__builtin_clzll(d);
	step = 1ULL << (top - CBAG_SUB_BITS);
	return (d & ~(step - 1)) + step / 2;
}

/* Adds n values d (at the bag's precision). Returns 0 or -ENOMEM. */
int cbag__add(struct cbag *b, uint64_t d, uint64_t n);
/* Adds every value of src to dst. Returns 0 or -ENOMEM. */
int cbag__merge(struct cbag *dst, const struct cbag *src);
/* The values at quantiles q[0 .. n) (each in [0, 1]), as hist__quantiles()
 * on a histogram of the bag's values gives them; 0 when empty. */
void cbag__quantiles(const struct cbag *b, const double *q, uint64_t *out, size_t n);
/* Values in the bag. */
uint64_t cbag__count(const struct cbag *b);
/* Bytes allocated (not counting the struct). */
size_t cbag__mem(const struct cbag *b);
void cbag__clear(struct cbag *b);

#endif
