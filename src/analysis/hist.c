/* hist: log-linear histograms (see hist.h). Bucket index of v: v itself below
 * 128; above, group g = msb(v) - 6 holds [2^(g+6), 2^(g+7)) in 128 buckets of
 * width 2^(g-1), and the index is g * 128 + the 7 bits after the top one.
 * Pure C, no I/O, no globals. */
#include "analysis/hist.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

size_t hist__index(uint64_t v)
{
	unsigned msb, g;

	if (v < HIST_SUB)
		return (size_t)v;
	msb = 63 - (unsigned)__builtin_clzll(v);
	g = msb - HIST_SUB_BITS + 1;
	return (size_t)g * HIST_SUB + (size_t)((v >> (msb - HIST_SUB_BITS)) - HIST_SUB);
}

void hist__bounds(size_t index, uint64_t *low, uint64_t *high)
{
	size_t g = index / HIST_SUB, sub = index % HIST_SUB;
	unsigned shift;

	if (g == 0) {
		*low = *high = sub;
		return;
	}
	shift = (unsigned)g - 1;
	*low = (uint64_t)(HIST_SUB + sub) << shift;
	*high = *low + (((uint64_t)1 << shift) - 1);
}

static uint64_t mid(size_t index)
{
	uint64_t lo, hi;

	hist__bounds(index, &lo, &hi);
	return lo + (hi - lo) / 2;
}

/* Makes the dense counts cover group g; returns 0 or -ENOMEM. */
static int cover(struct hist *h, unsigned g)
{
	unsigned lo, hi;
	uint64_t *p;

	if (h->counts && g >= h->lo && g <= h->hi)
		return 0;
	lo = h->counts && h->lo < g ? h->lo : g;
	hi = h->counts && h->hi > g ? h->hi : g;
	p = calloc((size_t)(hi - lo + 1) * HIST_SUB, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (h->counts) {
		memcpy(p + (size_t)(h->lo - lo) * HIST_SUB, h->counts,
		       (size_t)(h->hi - h->lo + 1) * HIST_SUB * sizeof(*p));
		free(h->counts);
	}
	h->counts = p;
	h->lo = (uint8_t)lo;
	h->hi = (uint8_t)hi;
	return 0;
}

/* Adds n to the dense bucket of v (range already covered). */
static void bump(struct hist *h, uint64_t v, uint64_t n)
{
	size_t i = hist__index(v);

	h->counts[i - (size_t)h->lo * HIST_SUB] += n;
}

static void account(struct hist *h, uint64_t v, uint64_t n)
{
	uint64_t add = v * n;

	if (!h->count || v < h->min)
		h->min = v;
	if (!h->count || v > h->max)
		h->max = v;
	h->count += n;
	if ((n && add / n != v) || h->sum + add < h->sum)
		h->sum = UINT64_MAX;
	else
		h->sum += add;
}

/* Turns the inline values into dense counts covering at least group g. */
static int densify(struct hist *h, unsigned g)
{
	struct hist d = { 0 };
	int err;

	err = cover(&d, g);
	for (unsigned i = 0; !err && i < h->n_inline; i++)
		err = cover(&d, (unsigned)(hist__index(h->vals[i]) / HIST_SUB));
	if (err) {
		free(d.counts);
		return err;
	}
	for (unsigned i = 0; i < h->n_inline; i++)
		bump(&d, h->vals[i], 1);
	h->counts = d.counts;
	h->lo = d.lo;
	h->hi = d.hi;
	h->n_inline = 0;
	return 0;
}

int hist__add_n(struct hist *h, uint64_t v, uint64_t n)
{
	unsigned g = (unsigned)(hist__index(v) / HIST_SUB);
	int err;

	if (!n)
		return 0;
	if (!h->counts && h->count + n <= HIST_INLINE) {
		for (uint64_t i = 0; i < n; i++)
			h->vals[h->n_inline++] = v;
		account(h, v, n);
		return 0;
	}
	err = h->counts ? cover(h, g) : densify(h, g);
	if (err)
		return err;
	bump(h, v, n);
	account(h, v, n);
	return 0;
}

int hist__add(struct hist *h, uint64_t v)
{
	return hist__add_n(h, v, 1);
}

int hist__merge(struct hist *dst, const struct hist *src)
{
	uint64_t count, sum;
	int err;

	if (!src->count)
		return 0;
	if (!src->counts) {
		for (unsigned i = 0; i < src->n_inline; i++) {
			err = hist__add(dst, src->vals[i]);
			if (err)
				return err;
		}
		return 0;
	}
	err = dst->counts ? cover(dst, src->lo) : densify(dst, src->lo);
	if (!err)
		err = cover(dst, src->hi);
	if (err)
		return err;
	for (size_t i = 0; i < (size_t)(src->hi - src->lo + 1) * HIST_SUB; i++)
		dst->counts[i + (size_t)(src->lo - dst->lo) * HIST_SUB] += src->counts[i];
	if (!dst->count || src->min < dst->min)
		dst->min = src->min;
	if (!dst->count || src->max > dst->max)
		dst->max = src->max;
	count = dst->count;
	sum = dst->sum;
	dst->count = count + src->count;
	dst->sum = sum + src->sum < sum ? UINT64_MAX : sum + src->sum;
	return 0;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

uint64_t hist__quantile(const struct hist *h, double q)
{
	uint64_t rank, seen = 0;
	double r;

	if (!h->count)
		return 0;
	if (q <= 0)
		return h->min;
	if (q >= 1)
		return h->max;
	r = q * (double)h->count;
	rank = (uint64_t)r;
	if ((double)rank < r)
		rank++;
	if (rank < 1)
		rank = 1;
	if (!h->counts) {
		uint64_t v[HIST_INLINE];

		memcpy(v, h->vals, h->n_inline * sizeof(*v));
		qsort(v, h->n_inline, sizeof(*v), cmp_u64);
		return v[rank - 1];
	}
	for (size_t i = 0; i < (size_t)(h->hi - h->lo + 1) * HIST_SUB; i++) {
		seen += h->counts[i];
		if (seen >= rank) {
			uint64_t m = mid(i + (size_t)h->lo * HIST_SUB);

			return m < h->min ? h->min : m > h->max ? h->max : m;
		}
	}
	return h->max;
}

uint64_t hist__mean(const struct hist *h)
{
	return h->count ? h->sum / h->count : 0;
}

/* The non-empty buckets at resolution 2^k sub-buckets per bucket: writes at
 * most max of them into out (may be NULL) and returns how many there are. */
static size_t coarse(const struct hist *h, unsigned k, struct hist_bucket *out, size_t max)
{
	size_t n = 0, cur = (size_t)-1;
	uint64_t lo, hi;

	if (!h->counts) {
		uint64_t v[HIST_INLINE];

		memcpy(v, h->vals, h->n_inline * sizeof(*v));
		qsort(v, h->n_inline, sizeof(*v), cmp_u64);
		for (unsigned i = 0; i < h->n_inline; i++) {
			size_t c = hist__index(v[i]) >> k;

			if (c == cur) {
				if (out && n - 1 < max)
					out[n - 1].count++;
				continue;
			}
			cur = c;
			if (out && n < max) {
				hist__bounds(c << k, &out[n].low, &hi);
				hist__bounds(((c + 1) << k) - 1, &lo, &out[n].high);
				out[n].count = 1;
			}
			n++;
		}
		return n;
	}
	for (size_t i = 0; i < (size_t)(h->hi - h->lo + 1) * HIST_SUB; i += (size_t)1 << k) {
		uint64_t sum = 0;

		for (size_t j = 0; j < ((size_t)1 << k); j++)
			sum += h->counts[i + j];
		if (!sum)
			continue;
		if (out && n < max) {
			size_t idx = i + (size_t)h->lo * HIST_SUB;

			hist__bounds(idx, &out[n].low, &hi);
			hist__bounds(idx + ((size_t)1 << k) - 1, &lo, &out[n].high);
			out[n].count = sum;
		}
		n++;
	}
	return n;
}

size_t hist__buckets(const struct hist *h, struct hist_bucket *out, size_t max)
{
	unsigned k = 0;

	while (k < HIST_SUB_BITS && coarse(h, k, NULL, 0) > max)
		k++;
	return coarse(h, k, out, max);
}

size_t hist__mem(const struct hist *h)
{
	return h->counts ? (size_t)(h->hi - h->lo + 1) * HIST_SUB * sizeof(*h->counts) : 0;
}

void hist__clear(struct hist *h)
{
	free(h->counts);
	memset(h, 0, sizeof(*h));
}
