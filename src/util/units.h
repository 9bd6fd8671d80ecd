/* Numbers with units on the command line: durations ("500us", "5ms", "1.5s",
 * "1m"), sizes ("64K", "16M", "1G": binary multiples), rates ("99", "99Hz")
 * and bare counts. A duration or a size without its unit is refused: a bare
 * "5" could mean any unit. Exact integer arithmetic (no strtod: "nan",
 * "inf", "1e30s", hex and signs are not numbers here). Pure C, no I/O, no
 * globals; the CLI (src/cli/opts.c) turns the errors into messages. */
#ifndef AS_UTIL_UNITS_H
#define AS_UTIL_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Each returns 0 and sets *out, or:
 *   -EINVAL  not a value of that kind (garbage, a sign, no digits, unknown
 *            unit, a duration or size without its unit);
 *   -ERANGE  well formed but over UINT64_MAX in the base unit.
 * *out is left alone on error. */

/* DIGITS[.DIGITS]UNIT, UNIT one of ns us ms s m h -> nanoseconds (a fraction
 * below 1 ns is dropped). */
int units_parse_duration(const char *s, uint64_t *ns);
/* DIGITS[.DIGITS]UNIT, UNIT one of B K KiB M MiB G GiB T TiB (any case;
 * K = 1024 bytes) -> bytes (a fraction of a byte is dropped). */
int units_parse_size(const char *s, uint64_t *bytes);
/* DIGITS or DIGITSHz (any case) -> events per second. */
int units_parse_rate(const char *s, uint64_t *hz);
/* DIGITS -> the number. */
int units_parse_count(const char *s, uint64_t *n);

/* Writes ns as the shortest exact duration this grammar reads back ("1ns",
 * "100us", "1s", "90s", "1h") into buf (size n, truncated if too small);
 * returns buf. */
char *units_fmt_duration(char *buf, size_t n, uint64_t ns);
/* The same for a size in bytes ("4K", "1G", "1536" -> "1536B"). */
char *units_fmt_size(char *buf, size_t n, uint64_t bytes);

#endif
