/* hist: log-linear histograms (see hist.h). Bucket index of v: v itself below
 * 128; above, group g = msb(v) - 6 holds [2^(g+6), 2^(g+7)) in 128 buckets of
 * width 2^(g-1), and the index is g * 128 + the 7 bits after the top one.
 * Three storage modes, each moved to only forward: inline exact values,
 * sparse (sorted bucket list), dense (counts over a range of groups).
 * Pure C, no I/O, no globals. */
#include "analysis/hist.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static inline size_t index_of(uint64_t v)
{
	unsigned msb, g;

	if (v < HIST_SUB)
		return (size_t)v;
	msb = 63 - (unsigned)__builtin_clzll(v);
	g = msb - HIST_SUB_BITS + 1;
	return (size_t)g * HIST_SUB + (size_t)((v >> (msb - HIST_SUB_BITS)) - HIST_SUB);
}

size_t hist__index(uint64_t v)
{
	return index_of(v);
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

/* Sorts the (at most HIST_INLINE) values v[0 .. n) in place. */
static inline void sort_small(uint64_t *v, unsigned n)
{
	for (unsigned i = 1; i < n; i++) {
		uint64_t x = v[i];
		unsigned j = i;

		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* In-order walk over (bucket index, count), whatever the mode. */
struct walk {
	const struct hist *h;
	size_t pos;
	uint64_t v[HIST_INLINE];
};

/* Sparse mode: adds are appended unsorted after the list (entries[n_entries ..
 * n_entries + n_pend)) while there is room and at most PEND_MAX wait, then
 * merged in by settle(): an add touches the list's end, not log2(n) lines of
 * it. */
#define PEND_MAX 32

/* Whether n more can wait in the pending adds: the histogram's count below
 * 2^31 and n too, so that no bucket merged by settle() passes 32 bits (a
 * merge's adds come before its count is taken, but each bucket once). */
static inline bool fits32(const struct hist *h, uint64_t n)
{
	return h->count < (1ULL << 31) && n < (1ULL << 31);
}

/* Merges the pending adds into the sorted list (no allocation: the merged
 * list is no longer than list and pending together). */
static void settle(struct hist *h)
{
	struct hist_entry t[PEND_MAX], *e = h->entries;
	unsigned m = h->n_pend, u = 0;
	long i, j, k;

	memcpy(t, e + h->n_entries, m * sizeof(*t));
	for (unsigned a = 1; a < m; a++) { /* insertion sort by index */
		struct hist_entry x = t[a];
		unsigned b = a;

		for (; b > 0 && t[b - 1].index > x.index; b--)
			t[b] = t[b - 1];
		t[b] = x;
	}
	for (unsigned a = 0; a < m; a++) { /* one entry a bucket */
		if (u && t[u - 1].index == t[a].index)
			t[u - 1].count += t[a].count;
		else
			t[u++] = t[a];
	}
	/* from the back: the list's tail moves up past the new entries */
	i = (long)h->n_entries - 1;
	j = (long)u - 1;
	k = (long)h->n_entries + (long)u - 1;
	while (j >= 0) {
		if (i >= 0 && e[i].index > t[j].index) {
			e[k--] = e[i--];
		} else if (i >= 0 && e[i].index == t[j].index) {
			e[k] = e[i--];
			e[k--].count += t[j--].count;
		} else {
			e[k--] = t[j--];
		}
	}
	/* buckets already listed left a gap of k - i entries */
	if (k > i)
		memmove(&e[i + 1], &e[k + 1],
			((size_t)h->n_entries + u - (size_t)(k + 1)) * sizeof(*e));
	h->n_entries += u - (uint32_t)(k - i);
	h->n_pend = 0;
}

/* Pending adds merged before h is read (see hist.h: logically const). */
static inline void settled(const struct hist *h)
{
	if (h->n_pend)
		settle((struct hist *)h);
}

static void walk_start(struct walk *w, const struct hist *h)
{
	settled(h);
	w->h = h;
	w->pos = 0;
	if (!h->counts && !h->entries) {
		memcpy(w->v, h->vals, h->n_inline * sizeof(*w->v));
		sort_small(w->v, h->n_inline);
	}
}

static bool walk_next(struct walk *w, size_t *idx, uint64_t *n)
{
	const struct hist *h = w->h;

	if (h->counts) {
		size_t total = (size_t)(h->hi - h->lo + 1) * HIST_SUB;

		while (w->pos < total && !h->counts[w->pos])
			w->pos++;
		if (w->pos == total)
			return false;
		*idx = w->pos + (size_t)h->lo * HIST_SUB;
		*n = h->counts[w->pos++];
		return true;
	}
	if (h->entries) {
		if (w->pos == h->n_entries)
			return false;
		*idx = h->entries[w->pos].index;
		*n = h->entries[w->pos++].count;
		return true;
	}
	if (w->pos == h->n_inline)
		return false;
	*idx = index_of(w->v[w->pos++]);
	*n = 1;
	return true;
}

/* Dense mode: makes the counts cover group g; returns 0 or -ENOMEM. */
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

/* Moves h to dense counts covering at least groups g_lo..g_hi. */
static int densify(struct hist *h, unsigned g_lo, unsigned g_hi)
{
	struct hist d = { 0 };
	struct walk w;
	size_t idx;
	uint64_t n;
	int err;

	if (h->counts)
		return cover(h, g_lo) ?: cover(h, g_hi);
	err = cover(&d, g_lo) ?: cover(&d, g_hi);
	walk_start(&w, h);
	while (!err && walk_next(&w, &idx, &n))
		err = cover(&d, (unsigned)(idx / HIST_SUB));
	if (err) {
		free(d.counts);
		return err;
	}
	walk_start(&w, h);
	while (walk_next(&w, &idx, &n))
		d.counts[idx - (size_t)d.lo * HIST_SUB] += n;
	free(h->entries);
	h->entries = NULL;
	h->n_entries = h->cap_entries = 0;
	h->n_inline = 0;
	h->counts = d.counts;
	h->lo = d.lo;
	h->hi = d.hi;
	return 0;
}

/* Moves h from inline values to a bucket list. */
static int sparsify(struct hist *h)
{
	struct hist_entry *e;
	struct walk w;
	size_t idx, n_e = 0;
	uint64_t n;

	e = malloc(8 * sizeof(*e));
	if (!e)
		return -ENOMEM;
	walk_start(&w, h);
	while (walk_next(&w, &idx, &n)) {
		if (n_e && e[n_e - 1].index == idx) {
			e[n_e - 1].count++;
			continue;
		}
		e[n_e++] = (struct hist_entry){ .index = (uint16_t)idx, .count = 1 };
	}
	h->entries = e;
	h->n_entries = (uint32_t)n_e;
	h->cap_entries = 8;
	h->n_inline = 0;
	return 0;
}

/* Adds n to bucket idx (h not inline). Returns 0 or -ENOMEM. */
static int put(struct hist *h, size_t idx, uint64_t n)
{
	uint32_t lo = 0, hi;
	unsigned g = (unsigned)(idx / HIST_SUB);
	int err;

	if (h->counts && g >= h->lo && g <= h->hi) { /* dense, in range: the common case */
		h->counts[idx - (size_t)h->lo * HIST_SUB] += n;
		return 0;
	}
	if (h->entries) {
		if (h->n_entries + h->n_pend < h->cap_entries && h->n_pend < PEND_MAX &&
		    fits32(h, n)) {
			h->entries[h->n_entries + h->n_pend++] =
				(struct hist_entry){ .index = (uint16_t)idx, .count = (uint32_t)n };
			return 0;
		}
		if (h->n_pend) {
			settle(h);
			/* room left: pending again; nearly full, the search below
			 * (which grows the list exactly when a new bucket needs it) */
			if (h->cap_entries - h->n_entries >= h->cap_entries / 8 &&
			    fits32(h, n)) {
				h->entries[h->n_entries + h->n_pend++] =
					(struct hist_entry){ .index = (uint16_t)idx,
							     .count = (uint32_t)n };
				return 0;
			}
		}
		/* the first entry not below idx, by a branch-free binary search
		 * (the halving's outcome is a conditional move, not a jump the
		 * processor mispredicts half the time) */
		hi = h->n_entries;
		if (hi) {
			const struct hist_entry *base = h->entries;

			for (uint32_t n_left = hi; n_left > 1;) {
				uint32_t half = n_left / 2;

				base = base[half].index < idx ? base + half : base;
				n_left -= half;
			}
			lo = (uint32_t)(base - h->entries) + (base->index < idx);
		}
		if (lo < h->n_entries && h->entries[lo].index == idx &&
		    h->entries[lo].count <= UINT32_MAX - n) {
			h->entries[lo].count += (uint32_t)n;
			return 0;
		}
		if (n <= UINT32_MAX && !(lo < h->n_entries && h->entries[lo].index == idx) &&
		    h->n_entries < HIST_SPARSE_MAX) {
			if (h->n_entries == h->cap_entries) {
				struct hist_entry *p = realloc(h->entries,
							       2 * h->cap_entries * sizeof(*p));

				if (!p)
					return -ENOMEM;
				h->entries = p;
				h->cap_entries *= 2;
			}
			memmove(&h->entries[lo + 1], &h->entries[lo],
				(h->n_entries - lo) * sizeof(*h->entries));
			h->entries[lo] = (struct hist_entry){ .index = (uint16_t)idx,
							      .count = (uint32_t)n };
			h->n_entries++;
			return 0;
		}
		err = densify(h, g, g); /* full, or a count past 32 bits */
	} else {
		err = cover(h, g);
	}
	if (err)
		return err;
	h->counts[idx - (size_t)h->lo * HIST_SUB] += n;
	return 0;
}

static void account(struct hist *h, uint64_t min, uint64_t max, uint64_t n, uint64_t sum)
{
	if (!h->count || min < h->min)
		h->min = min;
	if (!h->count || max > h->max)
		h->max = max;
	h->count += n;
	h->sum = h->sum + sum < h->sum || sum == UINT64_MAX ? UINT64_MAX : h->sum + sum;
}

static uint64_t times(uint64_t v, uint64_t n)
{
	return n && v > UINT64_MAX / n ? UINT64_MAX : v * n;
}

int hist__add_n(struct hist *h, uint64_t v, uint64_t n)
{
	int err;

	if (!n)
		return 0;
	if (!h->counts && !h->entries) {
		if (h->count + n <= HIST_INLINE) {
			for (uint64_t i = 0; i < n; i++)
				h->vals[h->n_inline++] = v;
			account(h, v, v, n, times(v, n));
			return 0;
		}
		err = sparsify(h);
		if (err)
			return err;
	}
	err = put(h, index_of(v), n);
	if (err)
		return err;
	account(h, v, v, n, times(v, n));
	return 0;
}

int hist__add(struct hist *h, uint64_t v)
{
	return hist__add_n(h, v, 1);
}

int hist__add_u32(struct hist *h, const uint32_t *v, size_t n)
{
	uint32_t mn = UINT32_MAX, mx = 0;
	uint64_t sum = 0;
	size_t i;
	int err;

	if (!n)
		return 0;
	for (i = 0; i < n; i++) {
		mn = v[i] < mn ? v[i] : mn;
		mx = v[i] > mx ? v[i] : mx;
	}
	if (!h->counts || index_of(mn) / HIST_SUB < h->lo || index_of(mx) / HIST_SUB > h->hi) {
		for (i = 0; i < n; i++)
			if ((err = hist__add(h, v[i])))
				return err;
		return 0;
	}
	/* dense counts covering them all: the same counts, min, max, count and
	 * sum (which saturates the same whether added at once or in turn) */
	uint64_t *c = h->counts - (size_t)h->lo * HIST_SUB;

	for (i = 0; i < n; i++) {
		c[index_of(v[i])]++;
		sum += v[i];
	}
	account(h, mn, mx, n, sum);
	return 0;
}

int hist__merge(struct hist *dst, const struct hist *src)
{
	struct walk w;
	size_t idx;
	uint64_t n;
	int err = 0;

	if (!src->count)
		return 0;
	if (!src->counts && !src->entries) {
		for (unsigned i = 0; i < src->n_inline && !err; i++)
			err = hist__add(dst, src->vals[i]);
		return err;
	}
	settled(src);
	if (src->counts && !dst->counts)
		err = densify(dst, src->lo, src->hi);
	else if (!dst->counts && !dst->entries)
		err = sparsify(dst);
	if (!err && src->entries && dst->counts &&
	    src->entries[0].index / HIST_SUB >= dst->lo &&
	    src->entries[src->n_entries - 1].index / HIST_SUB <= dst->hi) {
		/* a bucket list into dense counts that cover it: no search */
		uint64_t *c = dst->counts - (size_t)dst->lo * HIST_SUB;

		for (uint32_t i = 0; i < src->n_entries; i++)
			c[src->entries[i].index] += src->entries[i].count;
		account(dst, src->min, src->max, src->count, src->sum);
		return 0;
	}
	walk_start(&w, src);
	while (!err && walk_next(&w, &idx, &n))
		err = put(dst, idx, n);
	if (!err)
		account(dst, src->min, src->max, src->count, src->sum);
	return err;
}

uint64_t hist__quantile(const struct hist *h, double q)
{
	uint64_t rank, seen = 0, n;
	struct walk w;
	size_t idx;
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
	walk_start(&w, h);
	if (!h->counts && !h->entries)
		return w.v[rank - 1]; /* inline: exact */
	while (walk_next(&w, &idx, &n)) {
		seen += n;
		if (seen >= rank) {
			uint64_t m = mid(idx);

			return m < h->min ? h->min : m > h->max ? h->max : m;
		}
	}
	return h->max;
}

/* The rank hist__quantile() looks for at q in (0, 1). */
static uint64_t rank_of(const struct hist *h, double q)
{
	double r = q * (double)h->count;
	uint64_t rank = (uint64_t)r;

	if ((double)rank < r)
		rank++;
	return rank < 1 ? 1 : rank;
}

void hist__quantiles(const struct hist *h, const double *q, uint64_t *out, size_t n)
{
	uint64_t seen = 0, cnt, rank[8];
	size_t i = 0, idx, k;
	struct walk w;

	if (n > 8 || !h->count) {
		for (k = 0; k < n; k++)
			out[k] = hist__quantile(h, q[k]);
		return;
	}
	for (k = 0; k < n; k++) {
		if (q[k] <= 0 || q[k] >= 1 || (k && q[k] < q[k - 1])) {
			for (k = 0; k < n; k++)
				out[k] = hist__quantile(h, q[k]);
			return;
		}
		rank[k] = rank_of(h, q[k]);
	}
	walk_start(&w, h);
	if (!h->counts && !h->entries) {
		for (k = 0; k < n; k++)
			out[k] = w.v[rank[k] - 1]; /* inline: exact */
		return;
	}
	while (i < n && walk_next(&w, &idx, &cnt)) {
		seen += cnt;
		if (seen < rank[i])
			continue;
		uint64_t m = mid(idx);

		m = m < h->min ? h->min : m > h->max ? h->max : m;
		while (i < n && seen >= rank[i])
			out[i++] = m;
	}
	for (; i < n; i++)
		out[i] = h->max;
}

uint64_t hist__mean(const struct hist *h)
{
	return h->count ? h->sum / h->count : 0;
}

/* The non-empty buckets at resolution 2^k sub-buckets per bucket: writes at
 * most max of them into out (may be NULL) and returns how many there are. */
static size_t coarse(const struct hist *h, unsigned k, struct hist_bucket *out, size_t max)
{
	size_t n_out = 0, cur = (size_t)-1, idx;
	struct walk w;
	uint64_t lo, hi, n;

	walk_start(&w, h);
	while (walk_next(&w, &idx, &n)) {
		size_t c = idx >> k;

		if (c == cur) {
			if (out && n_out - 1 < max)
				out[n_out - 1].count += n;
			continue;
		}
		cur = c;
		if (out && n_out < max) {
			hist__bounds(c << k, &out[n_out].low, &hi);
			hist__bounds(((c + 1) << k) - 1, &lo, &out[n_out].high);
			out[n_out].count = n;
		}
		n_out++;
	}
	return n_out;
}

size_t hist__buckets(const struct hist *h, struct hist_bucket *out, size_t max)
{
	unsigned k = 0;

	settled(h);
	/* a list no longer than max is its own answer at full resolution */
	if (h->counts || (h->entries ? h->n_entries : h->n_inline) > max)
		while (k < HIST_SUB_BITS && coarse(h, k, NULL, 0) > max)
			k++;
	return coarse(h, k, out, max);
}

size_t hist__mem(const struct hist *h)
{
	if (h->counts)
		return (size_t)(h->hi - h->lo + 1) * HIST_SUB * sizeof(*h->counts);
	return h->cap_entries * sizeof(*h->entries);
}

void hist__clear(struct hist *h)
{
	free(h->counts);
	free(h->entries);
	memset(h, 0, sizeof(*h));
}
