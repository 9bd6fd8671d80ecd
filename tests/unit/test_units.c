/* Unit tests for util/units: durations and sizes with their unit, rates,
 * counts; bare numbers, nan, inf, signs, exponents and overflow refused. */
#include <errno.h>
#include <stdint.h>

#include "harness.h"
#include "util/units.h"

static uint64_t dur(const char *s, int want)
{
	uint64_t v = 12345;
	int err = units_parse_duration(s, &v);

	CHECK_EQ_U64((uint64_t)(int64_t)err, (uint64_t)(int64_t)want);
	if (err)
		CHECK_EQ_U64(v, 12345);   /* left alone on error */
	return v;
}

static void test_duration_units(void)
{
	CHECK_EQ_U64(dur("1ns", 0), 1);
	CHECK_EQ_U64(dur("500us", 0), 500000);
	CHECK_EQ_U64(dur("5ms", 0), 5000000);
	CHECK_EQ_U64(dur("2s", 0), 2000000000ull);
	CHECK_EQ_U64(dur("1m", 0), 60000000000ull);
	CHECK_EQ_U64(dur("1h", 0), 3600000000000ull);
	CHECK_EQ_U64(dur("1.5s", 0), 1500000000ull);
	CHECK_EQ_U64(dur("0.3s", 0), 300000000ull);
	CHECK_EQ_U64(dur("0.0000000015s", 0), 1);   /* below 1 ns: dropped */
	CHECK_EQ_U64(dur("0s", 0), 0);
	CHECK_EQ_U64(dur("007ms", 0), 7000000);
	/* the largest that fits, and one more */
	CHECK_EQ_U64(dur("18446744073709551615ns", 0), UINT64_MAX);
	dur("18446744073709551616ns", -ERANGE);
	dur("18446744074s", -ERANGE);
	dur("99999999999999999999s", -ERANGE);
	dur("5124096h", -ERANGE);
}

static void test_duration_refused(void)
{
	static const char *const bad[] = {
		"5", "0", "1.5", "", "s", "ms", ".5s", "5.s", "-1s", "+1s", " 1s", "1s ", "1 s",
		"nan", "inf", "nans", "infs", "1e3s", "1e30s", "0x10s", "1S", "1sec", "1mss", "1µs",
		"1.5.5s", "5d",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		dur(bad[i], -EINVAL);
	uint64_t v = 7;
	CHECK(units_parse_duration(NULL, &v) == -EINVAL && v == 7);
}

static void test_sizes(void)
{
	uint64_t v = 0;

	CHECK(units_parse_size("64K", &v) == 0 && v == 65536);
	CHECK(units_parse_size("64k", &v) == 0 && v == 65536);
	CHECK(units_parse_size("16M", &v) == 0 && v == 16ull << 20);
	CHECK(units_parse_size("16MiB", &v) == 0 && v == 16ull << 20);
	CHECK(units_parse_size("1G", &v) == 0 && v == 1ull << 30);
	CHECK(units_parse_size("1.5K", &v) == 0 && v == 1536);
	CHECK(units_parse_size("100B", &v) == 0 && v == 100);
	CHECK(units_parse_size("16777216T", &v) == -ERANGE);
	v = 9;
	CHECK(units_parse_size("8", &v) == -EINVAL && v == 9);
	CHECK(units_parse_size("8Q", &v) == -EINVAL);
	CHECK(units_parse_size("nanK", &v) == -EINVAL);
	CHECK(units_parse_size("-4K", &v) == -EINVAL);
	CHECK(units_parse_size("1e3K", &v) == -EINVAL);
	CHECK(v == 9);
}

static void test_rates_and_counts(void)
{
	uint64_t v = 0;

	CHECK(units_parse_rate("99", &v) == 0 && v == 99);
	CHECK(units_parse_rate("99Hz", &v) == 0 && v == 99);
	CHECK(units_parse_rate("999hz", &v) == 0 && v == 999);
	CHECK(units_parse_rate("99.5Hz", &v) == -EINVAL);
	CHECK(units_parse_rate("x", &v) == -EINVAL);
	CHECK(units_parse_rate("99kHz", &v) == -EINVAL);
	CHECK(units_parse_count("10000", &v) == 0 && v == 10000);
	CHECK(units_parse_count("0", &v) == 0 && v == 0);
	CHECK(units_parse_count("1.5", &v) == -EINVAL);
	CHECK(units_parse_count("-1", &v) == -EINVAL);
	CHECK(units_parse_count("10ms", &v) == -EINVAL);
	CHECK(units_parse_count("18446744073709551616", &v) == -ERANGE);
}

/* the bounds the help and the errors print read back as the same value */
static void test_format_round_trip(void)
{
	static const uint64_t ns[] = { 1, 999, 1000, 100000, 1500000, 1000000000ull,
				       60000000000ull, 90000000000ull, 3600000000000ull,
				       UINT64_MAX };
	static const uint64_t bytes[] = { 1, 1536, 4096, 8ull << 20, 1ull << 30, 3ull << 40 };
	char buf[64];
	uint64_t v;

	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		units_fmt_duration(buf, sizeof(buf), ns[i]);
		CHECK(units_parse_duration(buf, &v) == 0 && v == ns[i]);
	}
	for (size_t i = 0; i < sizeof(bytes) / sizeof(bytes[0]); i++) {
		units_fmt_size(buf, sizeof(buf), bytes[i]);
		CHECK(units_parse_size(buf, &v) == 0 && v == bytes[i]);
	}
	CHECK_STR(units_fmt_duration(buf, sizeof(buf), 100000), "100us");
	CHECK_STR(units_fmt_duration(buf, sizeof(buf), 90000000000ull), "90s");
	CHECK_STR(units_fmt_duration(buf, sizeof(buf), 3600000000000ull), "1h");
	CHECK_STR(units_fmt_duration(buf, sizeof(buf), 0), "0s");
	CHECK_STR(units_fmt_size(buf, sizeof(buf), 4096), "4K");
	CHECK_STR(units_fmt_size(buf, sizeof(buf), 1ull << 30), "1G");
	CHECK_STR(units_fmt_size(buf, sizeof(buf), 1536), "1536B");
}

int main(void)
{
	RUN(test_duration_units);
	RUN(test_duration_refused);
	RUN(test_sizes);
	RUN(test_rates_and_counts);
	RUN(test_format_round_trip);
	TEST_MAIN_END();
}
