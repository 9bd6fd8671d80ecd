/* Tiny unit-test harness: each tests/unit/test_*.c is one binary whose main()
 * calls RUN(fn) for each test; the last line it prints is "N passed, N failed"
 * and it exits non-zero on any failure. */
#ifndef AS_TEST_HARNESS_H
#define AS_TEST_HARNESS_H

#include <stdio.h>
#include <string.h>

static int th_failed_checks;
static int th_passed, th_failed;

#define CHECK(cond) do { if (!(cond)) { \
	fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
	th_failed_checks++; } } while (0)
#define CHECK_EQ_U64(a, b) do { unsigned long long a_ = (a), b_ = (b); if (a_ != b_) { \
	fprintf(stderr, "%s:%d: %s == %llu, expected %llu\n", __FILE__, __LINE__, #a, a_, b_); \
	th_failed_checks++; } } while (0)
#define CHECK_STR(a, b) do { const char *a_ = (a), *b_ = (b); \
	if (!a_ || !b_ || strcmp(a_, b_)) { \
	fprintf(stderr, "%s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, \
		a_ ? a_ : "(null)", b_ ? b_ : "(null)"); th_failed_checks++; } } while (0)

#define RUN(fn) do { int before_ = th_failed_checks; fn(); \
	if (th_failed_checks == before_) { th_passed++; } \
	else { th_failed++; fprintf(stderr, "FAIL %s\n", #fn); } } while (0)

#define TEST_MAIN_END() do { printf("%d passed, %d failed\n", th_passed, th_failed); \
	return th_failed ? 1 : 0; } while (0)

#endif
