/* cbag: delays at group-edge precision (see cbag.h). A step index is the
 * value itself below 16, else 16 + 8 * (top bit - 4) + the 3 bits after
 * it: indices grow with the values, so the list sorted by index is sorted
 * by value. Pure C, no I/O, no globals. */
#include "analysis/cbag.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hist.h"

#define SMALL (2u << CBAG_SUB_BITS)   /* 16: exact below */

static inline uint16_t step_of(uint64_t d)
{
	unsigned top;

	if (d < SMALL)
		return (uint16_t)d;
	top = 63 - (unsigned)__builtin_clzll(d);
	return (uint16_t)(SMALL + ((top - 4) << CBAG_SUB_BITS) +
			  ((d >> (top - CBAG_SUB_BITS)) & ((1u << CBAG_SUB_BITS) - 1)));
}

/* The value a step stands for: cbag_coarse() of any value in it. */
static inline uint64_t value_of(uint16_t s)
{
	unsigned top, b;

	if (s < SMALL)
		return s;
	top = ((unsigned)(s - SMALL) >> CBAG_SUB_BITS) + 4;
	b = (unsigned)(s - SMALL) & ((1u << CBAG_SUB_BITS) - 1);
	return (1ULL << top) + ((uint64_t)b << (top - CBAG_SUB_BITS)) +
	       (1ULL << (top - CBAG_SUB_BITS - 1));
}

static inline uint64_t count_of(const struct cbag_ent *e)
{
	return (uint64_t)e->count_hi << 32 | e->count_lo;
}

static inline void count_set(struct cbag_ent *e, uint64_t c)
{
	/* 48 bits: saturates (2.8e14 values in one step of one edge) */
	if (c > 0xffffffffffffULL)
		c = 0xffffffffffffULL;
	e->count_hi = (uint16_t)(c >> 32);
	e->count_lo = (uint32_t)c;
}

static inline struct cbag_ent *ents(const struct cbag *b)
{
	return b->cap ? b->u.heap : (struct cbag_ent *)b->u.in;
}

/* Room for one more entry. 0 or -ENOMEM. */
static int grow(struct cbag *b)
{
	uint16_t cap = b->cap ? b->cap : CBAG_INLINE;
	uint16_t ncap = cap * 2 > 512 ? 512 : cap * 2;
	struct cbag_ent *p;

	if (b->n < cap)
		return 0;
	if (b->cap) {
		p = realloc(b->u.heap, ncap * sizeof(*p));
		if (!p)
			return -ENOMEM;
	} else {
		p = malloc(ncap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		memcpy(p, b->u.in, b->n * sizeof(*p));
	}
	b->u.heap = p;
	b->cap = ncap;
	return 0;
}

/* n values of step s. */
static int add_step(struct cbag *b, uint16_t s, uint64_t n)
{
	struct cbag_ent *e = ents(b);
	uint16_t i = 0;

	while (i < b->n && e[i].step < s)
		i++;
	if (i < b->n && e[i].step == s) {
		count_set(&e[i], count_of(&e[i]) + n);
		return 0;
	}
	if (grow(b))
		return -ENOMEM;
	e = ents(b);
	memmove(&e[i + 1], &e[i], (size_t)(b->n - i) * sizeof(*e));
	e[i] = (struct cbag_ent){ .step = s };
	count_set(&e[i], n);
	b->n++;
	return 0;
}

int cbag__add(struct cbag *b, uint64_t d, uint64_t n)
{
	return n ? add_step(b, step_of(d), n) : 0;
}

int cbag__merge(struct cbag *dst, const struct cbag *src)
{
	const struct cbag_ent *e = ents(src);
	int err;

	for (uint16_t i = 0; i < src->n; i++)
		if ((err = add_step(dst, e[i].step, count_of(&e[i]))))
			return err;
	return 0;
}

uint64_t cbag__count(const struct cbag *b)
{
	const struct cbag_ent *e = ents(b);
	uint64_t n = 0;

	for (uint16_t i = 0; i < b->n; i++)
		n += count_of(&e[i]);
	return n;
}

/* The rank hist__quantile() looks for at q in (0, 1) among count values. */
static uint64_t rank_of(uint64_t count, double q)
{
	double r = q * (double)count;
	uint64_t rank = (uint64_t)r;

	if ((double)rank < r)
		rank++;
	return rank < 1 ? 1 : rank;
}

void cbag__quantiles(const struct cbag *b, const double *q, uint64_t *out, size_t n)
{
	const struct cbag_ent *e = ents(b);
	uint64_t count = cbag__count(b), mn, mx;

	if (!count) {
		for (size_t k = 0; k < n; k++)
			out[k] = 0;
		return;
	}
	mn = value_of(e[0].step);
	mx = value_of(e[b->n - 1].step);
	for (size_t k = 0; k < n; k++) {
		uint64_t rank, seen = 0, v = mx, lo, hi, m;

		if (q[k] <= 0) {
			out[k] = mn;
			continue;
		}
		if (q[k] >= 1) {
			out[k] = mx;
			continue;
		}
		rank = rank_of(count, q[k]);
		for (uint16_t i = 0; i < b->n; i++) {
			seen += count_of(&e[i]);
			if (seen >= rank) {
				v = value_of(e[i].step);
				break;
			}
		}
		if (count <= HIST_INLINE) {   /* a histogram's inline values: exact */
			out[k] = v;
			continue;
		}
		hist__bounds(hist__index(v), &lo, &hi);
		m = lo + (hi - lo) / 2;
		out[k] = m < mn ? mn : m > mx ? mx : m;
	}
}

size_t cbag__mem(const struct cbag *b)
{
	return b->cap * sizeof(struct cbag_ent);
}

void cbag__clear(struct cbag *b)
{
	if (b->cap)
		free(b->u.heap);
	memset(b, 0, sizeof(*b));
}
