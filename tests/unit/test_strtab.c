/* Unit tests for util/strtab: find, add and intern (find or add) on byte
 * strings, indexes in order of addition, addresses that stay put while the
 * table and its hash index grow, strings with NUL bytes inside. */
#include <stdint.h>
#include <stdlib.h>

#include "harness.h"
#include "util/strtab.h"

static void test_intern_finds_or_adds(void)
{
	struct strtab t = { 0 };
	uint32_t a = 99, b = 99, c = 99;

	CHECK(!strtab__find(&t, "x", 1, &a));   /* empty: no index yet */
	CHECK_EQ_U64(a, 99);
	CHECK_EQ_U64(strtab__intern(&t, "alpha", 5, &a), 1);
	CHECK_EQ_U64(strtab__intern(&t, "beta", 4, &b), 1);
	CHECK_EQ_U64(a, 0);
	CHECK_EQ_U64(b, 1);
	/* again: found, the same index, nothing added */
	CHECK_EQ_U64(strtab__intern(&t, "alpha", 5, &c), 0);
	CHECK_EQ_U64(c, 0);
	CHECK_EQ_U64(t.n, 2);
	/* a prefix is another string */
	CHECK_EQ_U64(strtab__intern(&t, "alph", 4, &c), 1);
	CHECK_EQ_U64(c, 2);
	CHECK_STR(strtab__get(&t, 2), "alph");
	CHECK(strtab__get(&t, 3) == NULL);
	strtab__clear(&t);
	CHECK_EQ_U64(t.n, 0);
	strtab__clear(NULL);
}

static void test_nul_bytes_inside(void)
{
	struct strtab t = { 0 };
	uint32_t a, b, c;

	CHECK_EQ_U64(strtab__intern(&t, "a\0b", 3, &a), 1);
	CHECK_EQ_U64(strtab__intern(&t, "a\0c", 3, &b), 1);
	CHECK_EQ_U64(strtab__intern(&t, "a", 1, &c), 1);
	CHECK(a != b && b != c && a != c);
	CHECK(strtab__find(&t, "a\0c", 3, &c) && c == b);
	CHECK_EQ_U64(t.lens[a], 3);
	CHECK(!memcmp(strtab__get(&t, a), "a\0b", 4));   /* NUL-terminated copy */
	strtab__clear(&t);
}

static void test_growth_keeps_addresses(void)
{
	struct strtab t = { 0 };
	const char *first[64];
	char buf[32];
	uint32_t idx;

	for (uint32_t i = 0; i < 5000; i++) {
		int n = snprintf(buf, sizeof(buf), "s%u", i);
		CHECK_EQ_U64(strtab__intern(&t, buf, (size_t)n, &idx), 1);
		CHECK_EQ_U64(idx, i);
		if (i < 64)
			first[i] = strtab__get(&t, i);
	}
	/* every one found at its index after the index grew many times, and
	 * the first ones' copies where they were */
	for (uint32_t i = 0; i < 5000; i++) {
		int n = snprintf(buf, sizeof(buf), "s%u", i);
		CHECK(strtab__find(&t, buf, (size_t)n, &idx) && idx == i);
		CHECK_EQ_U64(strtab__intern(&t, buf, (size_t)n, &idx), 0);
	}
	for (uint32_t i = 0; i < 64; i++)
		CHECK(strtab__get(&t, i) == first[i]);
	CHECK_EQ_U64(t.n, 5000);
	CHECK(t.index_cap >= 5000 * 10 / 7);
	strtab__clear(&t);
}

int main(void)
{
	RUN(test_intern_finds_or_adds);
	RUN(test_nul_bytes_inside);
	RUN(test_growth_keeps_addresses);
	TEST_MAIN_END();
}
