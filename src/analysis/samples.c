/* samples: raw durations in front of a histogram (see samples.h). The
 * answers match analysis/hist.c's on the same values: a percentile is the
 * nearest-rank value's bucket middle clamped to [min, max] (hist.c's
 * walk stops in the bucket of that value, bucket indices growing with the
 * value), or the value itself for up to HIST_INLINE values (hist.c's
 * inline mode); they are found by selection, not by bucketing every
 * value. Pure C, no I/O, no globals. */
#include "analysis/samples.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static inline uint32_t *raw(struct samples *s)
{
	return s->cap ? s->u.heap : s->u.v;
}

/* The raw values into the histogram (allocated if need be); they stay
 * allocated as a write buffer. 0 or -ENOMEM (nothing moved). */
static int flush(struct samples *s)
{
	const uint32_t *v = raw(s);

	if (!s->n)
		return 0;
	if (!s->h && !(s->h = calloc(1, sizeof(*s->h))))
		return -ENOMEM;
	for (uint32_t i = 0; i < s->n; i++)
		if (hist__add(s->h, v[i])) {
			/* the ones added are in; keep the rest raw */
			memmove(raw(s), v + i, (s->n - i) * sizeof(*v));
			s->n -= i;
			return -ENOMEM;
		}
	s->n = 0;
	return 0;
}

int samples__add_slow(struct samples *s, uint64_t v)
{
	uint32_t ncap, *p;

	if (v > UINT32_MAX) {
		if (!s->h && !(s->h = calloc(1, sizeof(*s->h))))
			return -ENOMEM;
		return hist__add(s->h, v);
	}
	if (s->cap == SAMPLES_MAX) {   /* a full write buffer */
		int err = flush(s);

		if (err)
			return err;
		s->u.heap[s->n++] = (uint32_t)v;
		return 0;
	}
	ncap = s->cap ? s->cap * 4 : 16;
	if (ncap > SAMPLES_MAX)
		ncap = SAMPLES_MAX;
	if (s->cap) {
		p = realloc(s->u.heap, ncap * sizeof(*p));
		if (!p)
			return -ENOMEM;
	} else {
		p = malloc(ncap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		memcpy(p, s->u.v, s->n * sizeof(*p));
	}
	s->u.heap = p;
	s->cap = ncap;
	p[s->n++] = (uint32_t)v;
	return 0;
}

uint64_t samples__count(const struct samples *s)
{
	return s->n + (s->h ? s->h->count : 0);
}

uint64_t samples__max(const struct samples *s)
{
	const uint32_t *v = s->cap ? s->u.heap : s->u.v;
	uint64_t m = s->h && s->h->count ? s->h->max : 0;

	for (uint32_t i = 0; i < s->n; i++)
		if (v[i] > m)
			m = v[i];
	return m;
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

/* Reorders v[0 .. n) so that v[k] is the (k + 1)-th smallest, the values
 * before it no larger and after it no smaller (Hoare's selection, the
 * middle of three as pivot). */
static void select_k(uint32_t *v, uint32_t n, uint32_t k)
{
	uint32_t lo = 0, hi = n - 1;

	while (hi > lo) {
		if (hi - lo < 8) {   /* insertion sort of a short range */
			for (uint32_t i = lo + 1; i <= hi; i++) {
				uint32_t x = v[i], j = i;

				for (; j > lo && v[j - 1] > x; j--)
					v[j] = v[j - 1];
				v[j] = x;
			}
			return;
		}
		uint32_t mid = lo + (hi - lo) / 2, a = v[lo], b = v[mid], c = v[hi], piv;

		piv = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
		uint32_t i = lo, j = hi;

		for (;;) {
			while (v[i] < piv)
				i++;
			while (v[j] > piv)
				j--;
			if (i >= j)
				break;
			uint32_t t = v[i];

			v[i] = v[j];
			v[j] = t;
			i++;
			j--;
		}
		/* v[lo .. j] <= piv <= v[j + 1 .. hi] */
		if (k <= j)
			hi = j;
		else
			lo = j + 1;
	}
}

/* The middle of v's bucket (hist.c's mid()). */
static uint64_t bucket_mid(uint64_t v)
{
	uint64_t lo, hi;

	hist__bounds(hist__index(v), &lo, &hi);
	return lo + (hi - lo) / 2;
}

void samples__quantiles(struct samples *s, const double *q, uint64_t *out, size_t n)
{
	uint32_t *v = raw(s), mn = UINT32_MAX, mx = 0;
	uint64_t rank[8];

	if (s->h && !flush(s)) {
		hist__quantiles(s->h, q, out, n);
		return;
	}
	/* out of memory with a histogram: its values are not counted here */
	if (!s->n || n > 8) {
		for (size_t k = 0; k < n; k++)
			out[k] = 0;
		return;
	}
	if (s->n <= HIST_INLINE) {   /* exact: the values themselves, sorted */
		uint32_t t[HIST_INLINE], m = s->n;

		for (uint32_t i = 0; i < m; i++) {
			uint32_t x = v[i], j = i;

			for (; j > 0 && t[j - 1] > x; j--)
				t[j] = t[j - 1];
			t[j] = x;
		}
		for (size_t k = 0; k < n; k++)
			out[k] = q[k] <= 0 ? t[0] : q[k] >= 1 ? t[m - 1] : t[rank_of(m, q[k]) - 1];
		return;
	}
	for (uint32_t i = 0; i < s->n; i++) {
		mn = v[i] < mn ? v[i] : mn;
		mx = v[i] > mx ? v[i] : mx;
	}
	for (size_t k = 0; k < n; k++)
		rank[k] = q[k] <= 0 ? 1 : q[k] >= 1 ? s->n : rank_of(s->n, q[k]);
	/* from the top rank down: each selection leaves the values below it
	 * in front, where the next one looks */
	uint32_t top = s->n;

	for (size_t k = n; k-- > 0;) {
		uint64_t x;

		if (q[k] <= 0) {
			out[k] = mn;
			continue;
		}
		if (q[k] >= 1 || rank[k] >= s->n) {
			x = mx;
		} else {
			if (rank[k] > top)   /* not ascending: the whole range again */
				top = s->n;
			select_k(v, top, (uint32_t)rank[k] - 1);
			top = (uint32_t)rank[k];
			x = v[rank[k] - 1];
		}
		if (q[k] >= 1 || s->n <= HIST_INLINE) {
			out[k] = x;      /* exact: the maximum, or inline values */
		} else {
			uint64_t m = bucket_mid(x);

			out[k] = m < mn ? mn : m > mx ? mx : m;
		}
	}
}

int samples__merge_into(struct hist *dst, struct samples *s)
{
	int err;

	if (s->h) {
		if ((err = flush(s)))
			return err;
		return hist__merge(dst, s->h);
	}
	return hist__add_u32(dst, raw(s), s->n);
}

int samples__merge(struct samples *dst, struct samples *src)
{
	const uint32_t *v = raw(src);
	int err;

	for (uint32_t i = 0; i < src->n; i++)
		if ((err = samples__add(dst, v[i])))
			return err;
	if (src->h && src->h->count) {
		if (!dst->h && !(dst->h = calloc(1, sizeof(*dst->h))))
			return -ENOMEM;
		return hist__merge(dst->h, src->h);
	}
	return 0;
}

void samples__each(struct samples *s, void (*fn)(void *ctx, uint64_t v, uint64_t n), void *ctx)
{
	if (s->h && !flush(s)) {
		struct hist_bucket b[256];
		size_t n = hist__buckets(s->h, b, 256);

		for (size_t i = 0; i < n; i++)
			fn(ctx, b[i].low, b[i].count);
		return;
	}
	const uint32_t *v = raw(s);

	for (uint32_t i = 0; i < s->n; i++)
		fn(ctx, v[i], 1);
}

size_t samples__mem(const struct samples *s)
{
	return s->cap * sizeof(uint32_t) + (s->h ? sizeof(*s->h) + hist__mem(s->h) : 0);
}

void samples__clear(struct samples *s)
{
	if (s->cap)
		free(s->u.heap);
	if (s->h) {
		hist__clear(s->h);
		free(s->h);
	}
	memset(s, 0, sizeof(*s));
}
