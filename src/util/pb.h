/* pb: a tiny protocol-buffers wire-format writer into a growable buffer of
 * its own: varints, fixed64, length-delimited bytes and nested messages.
 * Written by hand because the one schema we write, Perfetto's trace
 * (output/perfetto_pb.c), is 18,000 lines of which we use some 40 fields:
 * generated code (protobuf-c) would be far bigger than the writer.
 *
 * Nested messages use a reserved length: pb_open() writes the tag and one
 * length byte, pb_close() fills it in, and in the rare case the body is 128
 * bytes or more moves the body up to make room for the longer varint.
 * Offsets, not pointers, name open messages, so the buffer may grow while
 * they are open. Errors are sticky (b->err, -ENOMEM): callers check once at
 * the end. No I/O, no globals. */
#ifndef AS_UTIL_PB_H
#define AS_UTIL_PB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Wire types */
#define PB_VARINT 0
#define PB_I64 1
#define PB_LEN 2

struct pb {
	uint8_t *buf;   /* cap bytes, len used; owned */
	size_t len, cap;
	int err;        /* 0, or -ENOMEM after a failed growth (writes then drop) */
};

/* Zero-initialise a struct pb to start; pb__free() frees its buffer. */
void pb__free(struct pb *b);
/* Makes room for n more bytes; returns 0 or -ENOMEM (also kept in b->err). */
int pb__grow(struct pb *b, size_t n);
/* pb_close() of a body of 128 bytes or more (or after an error). */
void pb__close_long(struct pb *b, size_t at);

/* Bytes of v as a varint (1 .. 10). */
static inline unsigned pb_varint_len(uint64_t v)
{
	unsigned n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Writes v at w (room for 10 bytes); returns the byte after it. For writers
 * that reserve room for a whole record with pb_room() first. */
static inline uint8_t *pb_put_varint(uint8_t *w, uint64_t v)
{
	while (v >= 0x80) {
		*w++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*w++ = (uint8_t)v;
	return w;
}

/* Room for n bytes at b->buf + b->len, or NULL (b->err set). */
static inline uint8_t *pb_room(struct pb *b, size_t n)
{
	if (__builtin_expect(b->cap - b->len < n, 0) && pb__grow(b, n))
		return NULL;
	return b->buf + b->len;
}

static inline void pb_raw_varint(struct pb *b, uint64_t v)
{
	uint8_t *p = pb_room(b, 10);

	if (!p)
		return;
	b->len += (size_t)(pb_put_varint(p, v) - p);
}

static inline void pb_tag(struct pb *b, uint32_t field, unsigned wire)
{
	pb_raw_varint(b, (uint64_t)field << 3 | wire);
}

/* uint32/uint64/bool/enum field; int32/int64 too when v >= 0 (a negative
 * int64 is its two's complement, ten bytes: pb_int()). */
static inline void pb_uint(struct pb *b, uint32_t field, uint64_t v)
{
	pb_tag(b, field, PB_VARINT);
	pb_raw_varint(b, v);
}

static inline void pb_int(struct pb *b, uint32_t field, int64_t v)
{
	pb_uint(b, field, (uint64_t)v);
}

/* fixed64 field, little-endian. */
static inline void pb_fixed64(struct pb *b, uint32_t field, uint64_t v)
{
	uint8_t *p;

	pb_tag(b, field, PB_I64);
	if (!(p = pb_room(b, 8)))
		return;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, &v, 8);   /* one store, not eight */
#else
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
#endif
	b->len += 8;
}

/* bytes or string field of n bytes at s. */
static inline void pb_bytes(struct pb *b, uint32_t field, const void *s, size_t n)
{
	uint8_t *p;

	pb_tag(b, field, PB_LEN);
	pb_raw_varint(b, n);
	if (!(p = pb_room(b, n)))
		return;
	if (n)
		memcpy(p, s, n);
	b->len += n;
}

static inline void pb_str(struct pb *b, uint32_t field, const char *s)
{
	pb_bytes(b, field, s ? s : "", s ? strlen(s) : 0);
}

/* Opens a nested message (or packed field) `field`; returns the offset to
 * give pb_close() once its body is written. */
static inline size_t pb_open(struct pb *b, uint32_t field)
{
	uint8_t *p;

	pb_tag(b, field, PB_LEN);
	if (!(p = pb_room(b, 1)))
		return b->len;
	*p = 0;
	return b->len++;
}

/* Ends the nested message opened at `at` (pb_open()'s result): fills in its
 * length. */
static inline void pb_close(struct pb *b, size_t at)
{
	size_t body = b->len - at - 1;

	if (__builtin_expect(!b->err && at < b->len && body < 0x80, 1))
		b->buf[at] = (uint8_t)body;
	else
		pb__close_long(b, at);
}

#endif
