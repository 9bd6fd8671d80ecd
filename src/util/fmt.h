/* Human-readable formatting for the outputs: durations such as "850 ns",
 * "1.23 ms", "200.1 ms", "3.00 s"; UTF-8 validation for escaping. Pure C,
 * no I/O, no globals. */
#ifndef AS_UTIL_FMT_H
#define AS_UTIL_FMT_H

#include <stddef.h>
#include <stdint.h>

/* Longest string fmt_duration() writes, with its NUL ("18446744073.7 s"). */
#define FMT_DURATION_MAX 24

/* Writes ns as a duration with three or four significant digits into buf
 * (caller-owned, size n; truncated if too small) and returns buf. Below 1 us
 * the value is exact ("850 ns"); from 1 us: "1.23 us", "12.3 us", "200.1 ms",
 * "3.00 s", "754.2 s" (seconds are the largest unit). */
char *fmt_duration(char *buf, size_t n, uint64_t ns);

/* Length (1-4) of the valid UTF-8 sequence at the start of the n > 0 bytes at
 * s, or 0 if they do not start with one (bad lead or continuation byte,
 * overlong form, surrogate, beyond U+10FFFF, truncated). */
size_t fmt_utf8_len(const char *s, size_t n);

/* "s" for a count other than 1, "" for 1: "1 interval", "2 intervals". */
static inline const char *fmt_plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

#endif
