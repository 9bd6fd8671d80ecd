/* Unit tests for src/analysis/hist.c: bucket layout, the relative error bound
 * of quantiles against exact sorted data, merging, output buckets, memory. */
#include <errno.h>
#include <stdlib.h>

#include "analysis/hist.h"
#include "harness.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static int cmp_size(const void *x, const void *y)
{
	size_t a = *(const size_t *)x, b = *(const size_t *)y;

	return a < b ? -1 : a > b;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* Every value lies in its bucket; buckets tile the range without gaps. */
static void test_layout(void)
{
	uint64_t lo, hi, prev_hi = 0;

	for (size_t i = 0; i < HIST_GROUPS * HIST_SUB; i++) {
		hist__bounds(i, &lo, &hi);
		CHECK(lo <= hi);
		if (i)
			CHECK_EQ_U64(lo, prev_hi + 1);
		CHECK_EQ_U64(hist__index(lo), i);
		CHECK_EQ_U64(hist__index(hi), i);
		/* width / low < 1/128 above the exact range */
		if (lo >= HIST_SUB)
			CHECK((hi - lo + 1) * 128 <= lo);
		prev_hi = hi;
	}
	CHECK_EQ_U64(prev_hi, UINT64_MAX);
	CHECK_EQ_U64(hist__index(0), 0);
	CHECK_EQ_U64(hist__index(127), 127);
	CHECK_EQ_U64(hist__index(128), 128);
	CHECK_EQ_U64(hist__index(UINT64_MAX), HIST_GROUPS * HIST_SUB - 1);
}

/* Quantiles within 1% of the exact nearest-rank value, on data spread from
 * 1 ns to an hour (log-uniform), and on narrow data. */
static void check_quantiles(uint64_t *v, size_t n)
{
	static const double qs[] = { 0, 0.001, 0.1, 0.25, 0.5, 0.9, 0.99, 0.999, 1 };
	struct hist h = { 0 };
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++) {
		CHECK_EQ_U64(hist__add(&h, v[i]), 0);
		sum += v[i];
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	CHECK_EQ_U64(h.count, n);
	CHECK_EQ_U64(h.min, v[0]);
	CHECK_EQ_U64(h.max, v[n - 1]);
	CHECK_EQ_U64(hist__mean(&h), sum / n);
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		double r = qs[i] * (double)n;
		size_t rank = (size_t)r < r ? (size_t)r + 1 : (size_t)r;
		uint64_t exact = v[rank ? rank - 1 : 0], got = hist__quantile(&h, qs[i]);
		double err = exact ? ((double)got - (double)exact) / (double)exact : (double)got;

		if (err < 0)
			err = -err;
		if (err > 0.01)
			fprintf(stderr, "q %.3f: got %llu exact %llu\n", qs[i],
				(unsigned long long)got, (unsigned long long)exact);
		CHECK(err <= 0.01);
		if (exact < 128)
			CHECK_EQ_U64(got, exact);
	}
	hist__clear(&h);
}

static void test_error_bound(void)
{
	size_t n = 200000;
	uint64_t *v = malloc(n * sizeof(*v));

	CHECK(v != NULL);
	if (!v)
		return;
	for (size_t i = 0; i < n; i++) {
		/* log-uniform over 1 ns .. 2^42 ns (~73 min) */
		unsigned e = (unsigned)(rnd() % 42);
		v[i] = ((uint64_t)1 << e) + rnd() % ((uint64_t)1 << e);
	}
	check_quantiles(v, n);
	for (size_t i = 0; i < n; i++)
		v[i] = 1000000 + rnd() % 10000; /* 1 ms +- 1% */
	check_quantiles(v, n);
	for (size_t i = 0; i < 3; i++)
		v[i] = 3 - i;                   /* inline, exact */
	check_quantiles(v, 3);
	for (size_t i = 0; i < 1000; i++)
		v[i] = rnd() % 200;             /* mostly exact range */
	check_quantiles(v, 1000);
	free(v);
}

static void test_empty_and_inline(void)
{
	struct hist h = { 0 };
	struct hist_bucket b[64];

	CHECK_EQ_U64(hist__quantile(&h, 0.5), 0);
	CHECK_EQ_U64(hist__mean(&h), 0);
	CHECK_EQ_U64(hist__buckets(&h, b, 64), 0);
	CHECK_EQ_U64(hist__add(&h, 5000), 0);
	CHECK_EQ_U64(hist__mem(&h), 0);          /* one value: nothing allocated */
	CHECK_EQ_U64(hist__quantile(&h, 0.5), 5000);
	for (int i = 0; i < HIST_INLINE - 1; i++)
		hist__add(&h, 7);
	CHECK_EQ_U64(hist__mem(&h), 0);
	CHECK_EQ_U64(hist__buckets(&h, b, 64), 2);
	CHECK_EQ_U64(b[0].low, 7);
	CHECK_EQ_U64(b[0].count, HIST_INLINE - 1);
	CHECK(b[1].low <= 5000 && b[1].high >= 5000);
	hist__add(&h, 9);                        /* now a bucket list */
	CHECK(hist__mem(&h) > 0 && hist__mem(&h) <= 64);
	CHECK(h.entries != NULL && h.counts == NULL);
	CHECK_EQ_U64(h.count, HIST_INLINE + 1);
	CHECK_EQ_U64(hist__quantile(&h, 0), 7);
	CHECK_EQ_U64(hist__quantile(&h, 1), 5000);
	CHECK_EQ_U64(hist__add_n(&h, 100, 10), 0);
	CHECK_EQ_U64(h.count, HIST_INLINE + 11);
	CHECK_EQ_U64(hist__quantile(&h, 0.5), 100);
	hist__clear(&h);
	CHECK_EQ_U64(h.count, 0);
	hist__clear(&h);
}

/* Bucket list while few buckets are used (a task polled 100 times costs
 * under 1 KiB), dense past HIST_SPARSE_MAX; same answers either way. */
static void test_modes(void)
{
	struct hist h = { 0 }, ref = { 0 };

	for (int i = 0; i < 100; i++)
		hist__add(&h, 1000 + rnd() % 100000000);
	CHECK(h.entries != NULL && h.counts == NULL);
	CHECK(hist__mem(&h) <= 1024);
	for (int i = 0; i < 100000; i++)
		hist__add(&h, 1000 + rnd() % 100000000);
	CHECK(h.counts != NULL && h.entries == NULL);
	hist__clear(&h);

	/* the error bound holds in list mode too */
	uint64_t v[300];
	for (int i = 0; i < 300; i++)
		v[i] = 1000 + rnd() % 1000000;
	for (int i = 0; i < 300; i++)
		hist__add(&h, v[i]);
	CHECK(h.entries != NULL && h.counts == NULL);
	hist__clear(&h);
	check_quantiles(v, 300);
	/* a bucket count past 32 bits in a list */
	hist__clear(&h);
	hist__add(&h, 1);
	hist__add(&h, 2);
	hist__add(&h, 3);
	hist__add(&h, 4);
	hist__add(&h, 5);
	CHECK(h.entries != NULL);
	CHECK_EQ_U64(hist__add_n(&h, 5, 5000000000ULL), 0);
	CHECK_EQ_U64(h.count, 5000000005ULL);
	CHECK_EQ_U64(hist__quantile(&h, 0.5), 5);
	hist__clear(&h);
	hist__clear(&ref);
}

/* Merge of parts equals the whole, in every mode combination. */
static void test_merge(void)
{
	struct hist whole = { 0 }, parts[4] = { { 0 } }, sum = { 0 };

	for (int i = 0; i < 10000; i++) {
		uint64_t v = rnd() % 100000000;
		int p = i % 4;

		if (p == 3 && parts[3].count >= 2)
			p = 2;                   /* part 3 stays inline */
		if (p == 1 && parts[1].count >= 50)
			p = 0;                   /* part 1 stays a list */
		hist__add(&whole, v);
		hist__add(&parts[p], v);
	}
	CHECK(parts[3].counts == NULL && parts[3].entries == NULL);
	CHECK(parts[1].entries != NULL);
	CHECK(parts[0].counts != NULL);
	for (int p = 3; p >= 0; p--)
		CHECK_EQ_U64(hist__merge(&sum, &parts[p]), 0);
	CHECK_EQ_U64(sum.count, whole.count);
	CHECK_EQ_U64(sum.sum, whole.sum);
	CHECK_EQ_U64(sum.min, whole.min);
	CHECK_EQ_U64(sum.max, whole.max);
	for (double q = 0; q <= 1; q += 0.05)
		CHECK_EQ_U64(hist__quantile(&sum, q), hist__quantile(&whole, q));
	for (int p = 0; p < 4; p++)
		hist__clear(&parts[p]);
	hist__clear(&sum);
	hist__clear(&whole);
}

/* List mode's pending adds (appended unsorted, merged when the list fills
 * or is read): the buckets are those of the values, whenever they are read,
 * and the list grows as a sorted list would (8 entries, doubled when a new
 * bucket finds it full: the next power of two of the distinct buckets). */
static void test_pending(void)
{
	static const uint64_t spreads[] = { 3, 40, 1000, 100000, 100000000 };

	for (size_t s = 0; s < sizeof(spreads) / sizeof(spreads[0]); s++) {
		for (int read_every = 0; read_every <= 7; read_every += 7) {
			struct hist h = { 0 };
			static uint64_t v[400];
			static size_t idx[400];
			struct hist_bucket b[600];
			size_t n = 0, distinct = 0, want_cap = 8;

			for (int i = 0; i < 400; i++) {
				v[i] = 200 + rnd() % spreads[s];
				CHECK_EQ_U64(hist__add(&h, v[i]), 0);
				if (read_every && i % read_every == 0)
					(void)hist__quantile(&h, 0.5); /* a read merges */
			}
			CHECK(h.entries != NULL && h.counts == NULL);
			for (int i = 0; i < 400; i++)
				idx[i] = hist__index(v[i]);
			qsort(idx, 400, sizeof(idx[0]), cmp_size);
			n = hist__buckets(&h, b, 600);
			for (int i = 0; i < 400; i++)
				distinct += !i || idx[i] != idx[i - 1];
			CHECK_EQ_U64(n, distinct);
			for (size_t i = 0, k = 0; i < n && k < 400; i++) {
				uint64_t lo, hi, c = 0;

				hist__bounds(idx[k], &lo, &hi);
				CHECK_EQ_U64(b[i].low, lo);
				CHECK_EQ_U64(b[i].high, hi);
				for (size_t x = idx[k]; k < 400 && idx[k] == x; k++)
					c++;
				CHECK_EQ_U64(b[i].count, c);
			}
			while (want_cap < distinct)
				want_cap *= 2;
			CHECK_EQ_U64(hist__mem(&h), want_cap * sizeof(struct hist_entry));
			hist__clear(&h);
		}
	}
	/* pending adds merged into a histogram being merged from and into */
	struct hist a = { 0 }, c = { 0 }, whole = { 0 };

	for (int i = 0; i < 300; i++) {
		uint64_t x = 500 + rnd() % 50000;

		hist__add(i % 2 ? &a : &c, x);
		hist__add(&whole, x);
	}
	CHECK_EQ_U64(hist__merge(&c, &a), 0);
	for (double q = 0.01; q < 1; q += 0.07)
		CHECK_EQ_U64(hist__quantile(&c, q), hist__quantile(&whole, q));
	hist__clear(&a);
	hist__clear(&c);
	hist__clear(&whole);
}

/* Output buckets: non-empty, ordered, counts add up, at most max. */
static void test_buckets(void)
{
	struct hist h = { 0 };
	struct hist_bucket b[200];
	uint64_t total = 0;
	size_t n;

	for (int i = 0; i < 100000; i++)
		hist__add(&h, 1 + rnd() % 3600000000000ULL);
	n = hist__buckets(&h, b, 200);
	CHECK(n > 0 && n <= 200);
	for (size_t i = 0; i < n; i++) {
		CHECK(b[i].count > 0);
		CHECK(b[i].low <= b[i].high);
		if (i)
			CHECK(b[i].low > b[i - 1].high);
		total += b[i].count;
	}
	CHECK_EQ_U64(total, h.count);
	CHECK(b[0].low <= h.min && b[n - 1].high >= h.max);
	n = hist__buckets(&h, b, 64);             /* coarsest: one per power of two */
	CHECK(n <= 64);
	hist__clear(&h);
}

int main(void)
{
	RUN(test_layout);
	RUN(test_error_bound);
	RUN(test_empty_and_inline);
	RUN(test_modes);
	RUN(test_merge);
	RUN(test_pending);
	RUN(test_buckets);
	TEST_MAIN_END();
}
