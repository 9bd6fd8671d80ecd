/* Unit tests for src/analysis/samples.c, cbag.c and hist__add_u32(): every answer
 * of a sample buffer (percentiles, maximum, count, the merge into a
 * histogram, the values handed out) is the one a histogram fed the same
 * values gives, whatever the number of values (inline, grown, spilled into
 * the histogram), their spread (exact range, up to 2^32 and past it), the
 * quantiles asked and the merges between buffers; a bag of group-edge
 * delays answers as a histogram of their coarse values. */
#include <stdlib.h>

#include "analysis/cbag.h"
#include "analysis/samples.h"
#include "harness.h"

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* A value of one of several shapes: tiny (exact buckets), microseconds,
 * wide, 32-bit edge, past 32 bits, many equal. */
static uint64_t value(unsigned shape)
{
	switch (shape % 6) {
	case 0: return rnd() % 200;
	case 1: return 1000 + rnd() % 3000;
	case 2: return rnd() % 1000000000ULL;
	case 3: return UINT32_MAX - rnd() % 3;
	case 4: return (1ULL << 32) + rnd() % 1000000000000ULL;
	default: return 777;
	}
}

static void check_same(struct samples *s, struct hist *h)
{
	static const double qs[][3] = {
		{ 0.5, 0.99, 0 }, { 0.01, 0.5, 0.999 }, { 0, 0.5, 1 }, { 0.25, 0.75, 0.9 },
	};
	static const size_t nq[] = { 2, 3, 3, 3 };

	CHECK_EQ_U64(samples__count(s), h->count);
	CHECK_EQ_U64(samples__max(s), h->count ? h->max : 0);
	for (size_t i = 0; i < sizeof(nq) / sizeof(nq[0]); i++) {
		uint64_t a[3], b[3];

		samples__quantiles(s, qs[i], a, nq[i]);
		hist__quantiles(h, qs[i], b, nq[i]);
		for (size_t k = 0; k < nq[i]; k++)
			CHECK_EQ_U64(a[k], b[k]);
	}
}

struct collected {
	struct hist coarse;   /* what each value adds, at its bucket's low */
};

static void collect(void *ctx, uint64_t v, uint64_t n)
{
	struct collected *c = ctx;
	uint64_t lo, hi;

	hist__bounds(hist__index(v), &lo, &hi);
	CHECK_EQ_U64(hist__add_n(&c->coarse, lo, n), 0);
}

/* samples__each() hands out every value (or bucket) once: the same
 * multiset of buckets as the histogram's own buckets. */
static void check_each(struct samples *s, struct hist *h)
{
	struct collected c = { { 0 } };
	struct hist_bucket want[256], got[256];
	size_t nw, ng;

	samples__each(s, collect, &c);
	CHECK_EQ_U64(c.coarse.count, h->count);
	nw = hist__buckets(h, want, 256);
	ng = hist__buckets(&c.coarse, got, 256);
	CHECK_EQ_U64(ng, nw);
	for (size_t i = 0; i < nw && i < ng; i++) {
		CHECK_EQ_U64(got[i].low, want[i].low);
		CHECK_EQ_U64(got[i].count, want[i].count);
	}
	hist__clear(&c.coarse);
}

static void test_against_hist(void)
{
	static const unsigned sizes[] = { 0, 1, 2, 3, 4, 5, 7, 16, 17, 50, 99, 100, 101, 255, 256,
					  257, 600, 3000 };

	for (unsigned shape = 0; shape < 8; shape++)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			struct samples s = { 0 };
			struct hist h = { 0 };

			for (unsigned k = 0; k < sizes[i]; k++) {
				/* shapes 6 and 7 mix the others */
				uint64_t v = value(shape < 6 ? shape : (unsigned)rnd());

				CHECK_EQ_U64(samples__add(&s, v), 0);
				CHECK_EQ_U64(hist__add(&h, v), 0);
			}
			check_same(&s, &h);
			check_same(&s, &h);   /* answers again after the reordering */
			check_each(&s, &h);

			/* merged into a histogram, as hist__merge() of h */
			struct hist into_a = { 0 }, into_b = { 0 };

			for (int k = 0; k < 20; k++) {
				uint64_t v = value(k);

				hist__add(&into_a, v);
				hist__add(&into_b, v);
			}
			CHECK_EQ_U64(samples__merge_into(&into_a, &s), 0);
			CHECK_EQ_U64(hist__merge(&into_b, &h), 0);
			CHECK_EQ_U64(into_a.count, into_b.count);
			CHECK_EQ_U64(into_a.sum, into_b.sum);
			CHECK_EQ_U64(into_a.min, into_b.min);
			CHECK_EQ_U64(into_a.max, into_b.max);
			for (double q = 0.01; q < 1; q += 0.03)
				CHECK_EQ_U64(hist__quantile(&into_a, q), hist__quantile(&into_b, q));
			CHECK(samples__mem(&s) <= (SAMPLES_MAX + 4) * sizeof(uint32_t) +
			      sizeof(struct hist) + hist__mem(s.h ? s.h : &h));
			hist__clear(&into_a);
			hist__clear(&into_b);
			samples__clear(&s);
			CHECK_EQ_U64(samples__count(&s), 0);
			CHECK_EQ_U64(samples__mem(&s), 0);
			hist__clear(&h);
		}
}

/* Buffers merged into one another (runtime edges merged per kind). */
static void test_merge(void)
{
	static const unsigned sizes[] = { 0, 1, 2, 3, 40, 250, 300 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (size_t j = 0; j < sizeof(sizes) / sizeof(sizes[0]); j++) {
			struct samples a = { 0 }, b = { 0 };
			struct hist h = { 0 };

			for (unsigned k = 0; k < sizes[i]; k++) {
				uint64_t v = value((unsigned)rnd());

				samples__add(&a, v);
				hist__add(&h, v);
			}
			for (unsigned k = 0; k < sizes[j]; k++) {
				uint64_t v = value((unsigned)rnd());

				samples__add(&b, v);
				hist__add(&h, v);
			}
			CHECK_EQ_U64(samples__merge(&a, &b), 0);
			check_same(&a, &h);
			check_each(&a, &h);
			samples__clear(&a);
			samples__clear(&b);
			hist__clear(&h);
		}
}

/* hist__add_u32() is hist__add() of each value, in every mode of the
 * histogram it adds to (inline, list, dense; values inside and outside the
 * dense range). */
static void test_add_u32(void)
{
	static const unsigned sizes[] = { 1, 3, 5, 100, 2000 };

	for (unsigned shape = 0; shape < 4; shape++)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			struct hist a = { 0 }, b = { 0 };
			uint32_t *v = malloc(sizes[i] * sizeof(*v));

			CHECK(v != NULL);
			if (!v)
				return;
			/* a dense histogram first, for the later rounds */
			for (int round = 0; round < 3; round++) {
				for (unsigned k = 0; k < sizes[i]; k++)
					v[k] = (uint32_t)value(shape + (unsigned)round);
				CHECK_EQ_U64(hist__add_u32(&a, v, sizes[i]), 0);
				for (unsigned k = 0; k < sizes[i]; k++)
					hist__add(&b, v[k]);
				CHECK_EQ_U64(a.count, b.count);
				CHECK_EQ_U64(a.sum, b.sum);
				CHECK_EQ_U64(a.min, b.min);
				CHECK_EQ_U64(a.max, b.max);
				for (double q = 0.01; q < 1; q += 0.05)
					CHECK_EQ_U64(hist__quantile(&a, q), hist__quantile(&b, q));
			}
			free(v);
			hist__clear(&a);
			hist__clear(&b);
		}
}

/* The group-edge precision, written out: the middle of the value's step
 * of an eighth of its power of two, exact below 16. */
static uint64_t coarse_ref(uint64_t d)
{
	unsigned top;
	uint64_t step;

	if (d < 16)
		return d;
	top = 63 - (unsigned)__builtin_clzll(d);
	step = 1ULL << (top - 3);
	return (d & ~(step - 1)) + step / 2;
}

static void check_bag(const struct cbag *b, const struct hist *h)
{
	static const double qs[][3] = {
		{ 0.5, 0.99, 0 }, { 0.01, 0.5, 0.999 }, { 0, 0.5, 1 }, { 0.25, 0.75, 0.9 },
	};

	CHECK_EQ_U64(cbag__count(b), h->count);
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		uint64_t x[3], y[3];

		cbag__quantiles(b, qs[i], x, 3);
		hist__quantiles(h, qs[i], y, 3);
		for (size_t k = 0; k < 3; k++)
			CHECK_EQ_U64(x[k], y[k]);
	}
}

static void test_cbag(void)
{
	static const unsigned sizes[] = { 0, 1, 2, 3, 4, 5, 9, 10, 40, 1000 };

	for (uint64_t d = 0; d < 5000; d++)
		CHECK_EQ_U64(cbag_coarse(d), coarse_ref(d));
	for (int i = 0; i < 100000; i++) {
		uint64_t d = rnd() >> (rnd() % 64);

		CHECK_EQ_U64(cbag_coarse(d), coarse_ref(d));
	}
	for (unsigned shape = 0; shape < 8; shape++)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			struct cbag b = { 0 }, c = { 0 };
			struct hist h = { 0 };

			for (unsigned k = 0; k < sizes[i]; k++) {
				uint64_t v = shape < 6 ? value(shape) : rnd() >> (rnd() % 64);
				uint64_t n = 1 + (k % 3 == 0 ? rnd() % 5 : 0);

				/* half into a second bag, merged below */
				CHECK_EQ_U64(cbag__add(k % 2 ? &c : &b, v, n), 0);
				CHECK_EQ_U64(hist__add_n(&h, coarse_ref(v), n), 0);
			}
			CHECK_EQ_U64(cbag__merge(&b, &c), 0);
			check_bag(&b, &h);
			cbag__clear(&b);
			cbag__clear(&c);
			CHECK_EQ_U64(cbag__count(&b), 0);
			CHECK_EQ_U64(cbag__mem(&b), 0);
			hist__clear(&h);
		}
}

int main(void)
{
	RUN(test_cbag);
	RUN(test_against_hist);
	RUN(test_merge);
	RUN(test_add_u32);
	TEST_MAIN_END();
}
