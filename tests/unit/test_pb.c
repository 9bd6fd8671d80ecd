/* util/pb.h, the protobuf writer: its bytes equal protoc's for the same
 * message (the golden below), nested lengths of every varint size are right
 * and the bodies intact, the buffer grows from nothing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "util/pb.h"
#include "util/varint.h"

/* protoc --proto_path=../shared/perfetto --encode=perfetto.protos.Trace \
 *     perfetto_trace.proto < golden.txt, golden.txt being (N: "ab" x 100):
 *   packet { timestamp: 0 trusted_packet_sequence_id: 1 }
 *   packet { timestamp: 127 }
 *   packet { timestamp: 128 }
 *   packet { timestamp: 300 }
 *   packet { timestamp: 18446744073709551615 }
 *   packet { track_event { type: TYPE_COUNTER track_uuid: 5 counter_value: -1 } sequence_flags: 2 }
 *   packet { track_event { flow_ids: 72623859790382856 } }
 *   packet { interned_data { event_names { iid: 1 name: "N" } } sequence_flags: 3 }
 *   packet { track_descriptor { uuid: 9 thread { pid: 12 tid: 13 thread_name: "w" } } }
 *   packet { first_packet_on_sequence: true }
 * split around the 200 bytes of N. */
static const char golden_head[] =
	"\x0a\x04\x40\x00\x50\x01\x0a\x02\x40\x7f\x0a\x03\x40\x80\x01\x0a\x03\x40"
	"\xac\x02\x0a\x0b\x40\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x0a\x14\x5a"
	"\x10\x48\x04\x58\x05\xf0\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x68"
	"\x02\x0a\x0c\x5a\x0a\xf9\x02\x08\x07\x06\x05\x04\x03\x02\x01\x0a\xd5\x01"
	"\x62\xd0\x01\x12\xcd\x01\x08\x01\x12\xc8\x01";
static const char golden_tail[] =
	"\x68\x03\x0a\x0e\xe2\x03\x0b\x08\x09\x22\x07\x08\x0c\x10\x0d\x2a\x01\x77"
	"\x0a\x03\xb8\x05\x01";

static void test_golden(void)
{
	struct pb b = { 0 };
	char name[201], want[512];
	size_t pk, te, in, en, td, th, n = 0;

	for (int i = 0; i < 200; i++)
		name[i] = i % 2 ? 'b' : 'a';
	name[200] = '\0';
	/* fields in number order, as protoc writes them */
	pk = pb_open(&b, 1);
	pb_uint(&b, 8, 0);
	pb_uint(&b, 10, 1);
	pb_close(&b, pk);
	const uint64_t ts[] = { 127, 128, 300, UINT64_MAX };
	for (int i = 0; i < 4; i++) {
		pk = pb_open(&b, 1);
		pb_uint(&b, 8, ts[i]);
		pb_close(&b, pk);
	}
	pk = pb_open(&b, 1);
	te = pb_open(&b, 11);
	pb_uint(&b, 9, 4);
	pb_uint(&b, 11, 5);
	pb_int(&b, 30, -1);
	pb_close(&b, te);
	pb_uint(&b, 13, 2);
	pb_close(&b, pk);
	pk = pb_open(&b, 1);
	te = pb_open(&b, 11);
	pb_fixed64(&b, 47, 0x0102030405060708ULL);
	pb_close(&b, te);
	pb_close(&b, pk);
	pk = pb_open(&b, 1);       /* 213-byte packet, 208-byte interned_data: two-byte lengths */
	in = pb_open(&b, 12);
	en = pb_open(&b, 2);
	pb_uint(&b, 1, 1);
	pb_str(&b, 2, name);
	pb_close(&b, en);
	pb_close(&b, in);
	pb_uint(&b, 13, 3);
	pb_close(&b, pk);
	pk = pb_open(&b, 1);
	td = pb_open(&b, 60);
	pb_uint(&b, 1, 9);
	th = pb_open(&b, 4);
	pb_uint(&b, 1, 12);
	pb_uint(&b, 2, 13);
	pb_str(&b, 5, "w");
	pb_close(&b, th);
	pb_close(&b, td);
	pb_close(&b, pk);
	pk = pb_open(&b, 1);
	pb_uint(&b, 87, 1);
	pb_close(&b, pk);

	memcpy(want, golden_head, sizeof(golden_head) - 1);
	n = sizeof(golden_head) - 1;
	memcpy(want + n, name, 200);
	n += 200;
	memcpy(want + n, golden_tail, sizeof(golden_tail) - 1);
	n += sizeof(golden_tail) - 1;
	CHECK_EQ_U64(b.err, 0);
	CHECK_EQ_U64(b.len, n);
	CHECK(b.len == n && !memcmp(b.buf, want, n));
	for (size_t i = 0; i < n && i < b.len; i++)
		if (b.buf[i] != (uint8_t)want[i]) {
			fprintf(stderr, "first difference at byte %zu: %02x, protoc %02x\n", i,
				b.buf[i], (uint8_t)want[i]);
			break;
		}
	pb__free(&b);
}

/* A message of body n (a bytes field of n - 3.. bytes inside, so that the
 * body is exactly n) nested in another: both lengths read back right. */
static void nested_of(size_t n)
{
	struct pb b = { 0 };
	char *payload = malloc(n + 1);
	const uint8_t *p, *end;
	uint64_t tag, len, ilen, v;
	size_t outer, inner, plen;

	CHECK(payload != NULL);
	if (!payload)
		return;
	memset(payload, 'x', n);
	/* body = tag (1) + len varint + payload: the largest plen that fits n
	 * (n itself when some plen gives exactly n) */
	for (plen = n - 2; plen && 1 + pb_varint_len(plen) + plen > n; plen--)
		;
	outer = pb_open(&b, 1);
	pb_uint(&b, 2, 42);
	inner = pb_open(&b, 3);
	pb_bytes(&b, 4, payload, plen);
	pb_close(&b, inner);
	pb_uint(&b, 5, 7);
	pb_close(&b, outer);
	CHECK_EQ_U64(b.err, 0);
	p = b.buf;
	end = b.buf + b.len;
	CHECK(!varint_get(&p, end, &tag) && tag == (1 << 3 | 2));
	CHECK(!varint_get(&p, end, &len) && len == (uint64_t)(end - p));
	CHECK(!varint_get(&p, end, &tag) && tag == (2 << 3));
	CHECK(!varint_get(&p, end, &v) && v == 42);
	CHECK(!varint_get(&p, end, &tag) && tag == (3 << 3 | 2));
	CHECK(!varint_get(&p, end, &ilen));
	CHECK_EQ_U64(ilen, 1 + pb_varint_len(plen) + plen);
	CHECK(!varint_get(&p, end, &tag) && tag == (4 << 3 | 2));
	CHECK(!varint_get(&p, end, &len) && len == plen);
	CHECK(p + plen <= end && !memcmp(p, payload, plen));
	p += plen;
	CHECK(!varint_get(&p, end, &tag) && tag == (5 << 3));
	CHECK(!varint_get(&p, end, &v) && v == 7);
	CHECK(p == end);
	free(payload);
	pb__free(&b);
}

static void test_nested_lengths(void)
{
	/* around each varint size of the length: 1, 2, 3 and 4 bytes */
	const size_t sizes[] = { 3, 127, 128, 129, 300, 16383, 16384, 16385,
				 (1 << 21) - 1, 1 << 21, (1 << 21) + 5 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		nested_of(sizes[i]);
}

static void test_varint_lengths(void)
{
	struct pb b = { 0 };
	const uint64_t vs[] = { 0, 1, 127, 128, 16383, 16384, (1ULL << 35) - 1, 1ULL << 63,
				UINT64_MAX };

	for (size_t i = 0; i < sizeof(vs) / sizeof(vs[0]); i++) {
		const uint8_t *p;
		uint64_t v;

		b.len = 0;
		pb_raw_varint(&b, vs[i]);
		CHECK_EQ_U64(b.len, pb_varint_len(vs[i]));
		p = b.buf;
		CHECK(!varint_get(&p, b.buf + b.len, &v) && v == vs[i]);
	}
	CHECK_EQ_U64(pb_varint_len(UINT64_MAX), 10);
	pb__free(&b);
}

/* Growth from an empty buffer keeps every byte; after pb__free() it is
 * empty again and usable. */
static void test_grow(void)
{
	struct pb b = { 0 };

	for (unsigned i = 0; i < 100000; i++)
		pb_uint(&b, 1, i);
	CHECK_EQ_U64(b.err, 0);
	const uint8_t *p = b.buf, *end = b.buf + b.len;
	unsigned bad = 0;

	for (unsigned i = 0; i < 100000; i++) {
		uint64_t tag, v;

		if (varint_get(&p, end, &tag) || tag != 8 || varint_get(&p, end, &v) || v != i)
			bad++;
	}
	CHECK_EQ_U64(bad, 0);
	CHECK(p == end);
	pb__free(&b);
	CHECK(b.buf == NULL && b.len == 0);
	pb_str(&b, 2, "again");
	CHECK_EQ_U64(b.len, 7);
	pb__free(&b);
	pb__free(NULL);
}

/* A failed growth is sticky: the error stays, no later growth happens, a
 * close leaves the length alone (the caller drops the output). */
static void test_sticky_error(void)
{
	struct pb b = { 0 };
	size_t at;

	pb_uint(&b, 1, 5);
	b.err = -ENOMEM;
	at = pb_open(&b, 2);
	pb_uint(&b, 1, 1);
	pb_close(&b, at);
	CHECK_EQ_U64(b.err, (uint64_t)-ENOMEM);
	CHECK_EQ_U64(b.buf[at], 0);
	CHECK_EQ_U64(pb__grow(&b, 1 << 20), (uint64_t)-ENOMEM);
	pb__free(&b);
}

int main(void)
{
	RUN(test_golden);
	RUN(test_nested_lengths);
	RUN(test_varint_lengths);
	RUN(test_grow);
	RUN(test_sticky_error);
	TEST_MAIN_END();
}
