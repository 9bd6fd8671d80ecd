/* LEB128 varints and zigzag deltas, header-only: the integer coding of the
 * trace file format. Decoding is bounds-checked and never reads past `end`.
 * No allocation, no I/O, no globals. */
#ifndef AS_UTIL_VARINT_H
#define AS_UTIL_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define VARINT_MAX 10 /* bytes of the longest uint64_t varint */

/* Writes v at p (room for VARINT_MAX bytes); returns the bytes written. */
static inline size_t varint_put(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* Reads one varint from *p (not past end) into *v and advances *p.
 * Returns 0, or -1 when truncated or longer than 64 bits. */
static inline int varint_get(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	const uint8_t *q = *p;
	uint64_t x = 0;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		if (q >= end)
			return -1;
		uint8_t b = *q++;
		if (shift == 63 && b > 1)
			return -1;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			*p = q;
			return 0;
		}
	}
	return -1;
}

/* Zigzag maps the wrapping difference a - b (read as signed) to an unsigned
 * value that is small when |a - b| is small: 0, -1, 1, -2 -> 0, 1, 2, 3. */
static inline uint64_t zigzag_delta(uint64_t a, uint64_t b)
{
	uint64_t d = a - b;
	return (d << 1) ^ (0 - (d >> 63));
}

/* Inverse of zigzag_delta: returns a given z = zigzag_delta(a, b) and b. */
static inline uint64_t zigzag_apply(uint64_t b, uint64_t z)
{
	return b + ((z >> 1) ^ (0 - (z & 1)));
}

#endif
