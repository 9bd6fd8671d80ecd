/* Versions and version ranges (sym/semver.h): parsing, semver ordering,
 * formatting, range parse / format round trips, containment, intersection. */
#include <errno.h>
#include <string.h>

#include "harness.h"
#include "sym/semver.h"

static struct semver V(const char *s)
{
	struct semver v = { 0 };

	CHECK(semver_parse(s, &v) == 0);
	return v;
}

static void check_format(const char *s, const char *want)
{
	char buf[64];
	struct semver v = V(s);

	CHECK(semver_format(&v, buf, sizeof(buf)) == (int)strlen(want));
	CHECK_STR(buf, want);
}

static void test_parse(void)
{
	struct semver v;
	const char *end;

	CHECK(semver_parse("1.53.1", &v) == 0);
	CHECK_EQ_U64(v.major, 1);
	CHECK_EQ_U64(v.minor, 53);
	CHECK_EQ_U64(v.patch, 1);
	CHECK_EQ_U64(v.parts, 3);
	CHECK_STR(v.pre, "");
	CHECK(semver_parse("1.49", &v) == 0);
	CHECK_EQ_U64(v.parts, 2);
	CHECK_EQ_U64(v.patch, 0);
	CHECK(semver_parse("2", &v) == 0);
	CHECK_EQ_U64(v.parts, 1);
	CHECK(semver_parse("1.0.0-rc.1", &v) == 0);
	CHECK_STR(v.pre, "rc.1");
	CHECK(semver_parse("1.0.0-alpha-2.x+build.7", &v) == 0);   /* build metadata dropped */
	CHECK_STR(v.pre, "alpha-2.x");
	CHECK(semver_parse("0.0.0", &v) == 0);

	/* a prefix, and what follows it */
	CHECK(semver_parse_prefix("1.24.2/src/lib.rs", &v, &end) == 0);
	CHECK_STR(end, "/src/lib.rs");
	CHECK(semver_parse_prefix("1.2.x", &v, &end) == 0);
	CHECK_EQ_U64(v.parts, 2);
	CHECK_STR(end, ".x");

	static const char *const bad[] = {
		"", "x", "v1.2.3", "1.", ".1", "1..2", "01.2.3", "1.02.3", "1.2.03", "1.2.3-",
		"1.2.3-a..b", "1.2.3+", "1.2-rc.1", "1.2.3 ", "4294967295.0.0", "1.2.3.4",
		"1.2.3-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (semver_parse(bad[i], &v) != -EINVAL)
			fprintf(stderr, "accepted \"%s\"\n", bad[i]);
		CHECK(semver_parse(bad[i], &v) == -EINVAL);
	}
	CHECK(semver_parse(NULL, &v) == -EINVAL);
}

static void test_cmp(void)
{
	/* semver.org's example order, then numbers compared as numbers */
	static const char *const order[] = {
		"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
		"1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.9.0", "1.10.0", "1.24.2", "1.53.0",
		"1.53.1", "2.0.0",
	};
	size_t n = sizeof(order) / sizeof(order[0]);

	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < n; j++) {
			struct semver a = V(order[i]), b = V(order[j]);
			int c = semver_cmp(&a, &b);
			CHECK(i < j ? c < 0 : i > j ? c > 0 : c == 0);
		}
	}
	struct semver a = V("1.49"), b = V("1.49.0"), c = V("1");
	struct semver d = V("1.0.0");
	CHECK(semver_cmp(&a, &b) == 0);   /* missing parts are 0 */
	CHECK(semver_cmp(&c, &d) == 0);
}

static void test_format(void)
{
	char small[4];
	struct semver v = V("1.53.1");

	check_format("1.53.1", "1.53.1");
	check_format("1.49", "1.49");
	check_format("1", "1");
	check_format("1.0.0-rc.1", "1.0.0-rc.1");
	check_format("1.0.0-rc.1+b", "1.0.0-rc.1");
	CHECK(semver_format(&v, small, sizeof(small)) == 6);   /* truncated, terminated */
	CHECK_STR(small, "1.5");
}

static struct semver_range R(const char *s)
{
	struct semver_range r = { 0 };

	CHECK(semver_range_parse(s, &r) == 0);
	return r;
}

static void check_range(const char *text, const char *lo, const char *hi)
{
	struct semver_range r = R(text);
	char buf[96];

	CHECK(r.has_lo == (lo != NULL));
	CHECK(r.has_hi == (hi != NULL));
	if (lo) {
		struct semver v = V(lo);
		CHECK(semver_cmp(&r.lo, &v) == 0);
	}
	if (hi) {
		struct semver v = V(hi);
		CHECK(semver_cmp(&r.hi, &v) == 0);
	}
	/* round trip */
	CHECK(semver_range_format(&r, buf, sizeof(buf)) == (int)strlen(text));
	CHECK_STR(buf, text);
}

static void test_range_text(void)
{
	check_range("1.49 to 1.53", "1.49.0", "1.54.0");
	check_range("1.53.1", "1.53.1", "1.53.2");
	check_range("1.53.0", "1.53.0", "1.53.1");
	check_range("1.49", "1.49.0", "1.50.0");
	check_range("1.35 or later", "1.35.0", NULL);
	check_range("before 1.35", NULL, "1.35.0");
	check_range("any", NULL, NULL);
	check_range("1.24.2 to 1.53", "1.24.2", "1.54.0");
	check_range("1.24 to 1.52.3", "1.24.0", "1.52.4");
	check_range("1.2 to before 2.0", "1.2.0", "2.0.0");
	check_range("1.2 to before 2.0.0-rc.1", "1.2.0", "2.0.0-rc.1");
	check_range("1.0.0-rc.1", "1.0.0-rc.1", "1.0.0");

	struct semver_range r;
	static const char *const bad[] = {
		"", "1.49 to", "to 1.53", "1.49 - 1.53", "1.49 or newer", "before", "1.2 to 2.0.0-rc.1",
		"1.2 to before x", "anything",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(semver_range_parse(bad[i], &r) == -EINVAL);

	/* ranges built in code print the same way */
	char buf[64];
	struct semver v = V("1.24.2");
	r = semver_range_exact(&v);
	semver_range_format(&r, buf, sizeof(buf));
	CHECK_STR(buf, "1.24.2");
	r = (struct semver_range){ .has_lo = true, .lo = V("1.53.0"), .has_hi = true,
				   .hi = V("1.49.0") };
	semver_range_format(&r, buf, sizeof(buf));
	CHECK_STR(buf, "none");
}

static void test_range_ops(void)
{
	struct semver_range r = R("1.24 to 1.53");
	struct semver v;

	v = V("1.24.0");
	CHECK(semver_range_contains(&r, &v));
	v = V("1.53.9");
	CHECK(semver_range_contains(&r, &v));
	v = V("1.54.0");
	CHECK(!semver_range_contains(&r, &v));
	v = V("1.23.9");
	CHECK(!semver_range_contains(&r, &v));
	v = V("1.24.0-rc.1");   /* a pre-release of the lower bound is below it */
	CHECK(!semver_range_contains(&r, &v));
	CHECK(!semver_range_empty(&r));

	/* "since 1.49" and "until 1.51" (a fact gone in 1.51) */
	struct semver_range since = R("1.49 or later"), until = R("before 1.51");
	char buf[64];
	semver_range_intersect(&r, &since);
	semver_range_intersect(&r, &until);
	semver_range_format(&r, buf, sizeof(buf));
	CHECK_STR(buf, "1.49 to 1.50");
	struct semver_range any = semver_range_any();
	semver_range_intersect(&r, &any);
	semver_range_format(&r, buf, sizeof(buf));
	CHECK_STR(buf, "1.49 to 1.50");
	struct semver_range old = R("before 1.35");
	semver_range_intersect(&r, &old);
	CHECK(semver_range_empty(&r));
	semver_range_format(&r, buf, sizeof(buf));
	CHECK_STR(buf, "none");
	v = V("1.49.0");
	CHECK(!semver_range_contains(&r, &v));

	/* the unbounded range holds everything and is never empty */
	v = V("0.1.0");
	CHECK(semver_range_contains(&any, &v));
	CHECK(!semver_range_empty(&any));
}

int main(void)
{
	RUN(test_parse);
	RUN(test_cmp);
	RUN(test_format);
	RUN(test_range_text);
	RUN(test_range_ops);
	TEST_MAIN_END();
}
