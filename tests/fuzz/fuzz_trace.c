/* libFuzzer harness of the trace reader (src/trace/reader.c) and everything
 * that reads its events (fuzz_drive.h). A mutated trace would almost always
 * fail a checksum and stop in the framing, so the input is first made
 * self-consistent the way the writer would have written it: the magic, the
 * header crc, each chunk's sequence number and crc, and the trailer crc are
 * recomputed (docs/trace-format.md, "Header" and "Records after the
 * header"); everything else (versions, lengths, counts, payloads) is left
 * as the fuzzer made it. With FUZZ_TRACE_SAVE=FILE, replaying an input
 * also writes that trace to FILE (for asyncscope itself). Build and run:
 * `make fuzz`, `make fuzz-run` (README, "Fuzzing"). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzz_drive.h"
#include "trace/format.h"

/* Bytes of a chunk record's header (kind byte included) in a file of
 * format version: the crc is its last u32, over the bytes from the seq
 * field to the crc, then the payload. The one place that knows the chunk
 * framing's size. */
static size_t chunk_hdr_len(uint32_t version)
{
	(void)version;
	return FMT_CHUNK_HDR;
}

static uint32_t crc(uint32_t c, const uint8_t *p, size_t n)
{
	return (uint32_t)crc32(c, p, (uInt)n);
}

/* Recomputes the checksums of buf in place (see the file comment); stops
 * at the first record it cannot frame, leaving the rest as it is. */
static void fix_checksums(uint8_t *buf, size_t size)
{
	if (size < FMT_MAGIC_LEN)
		return;
	memcpy(buf, FMT_MAGIC, FMT_MAGIC_LEN);
	if (size < FMT_HDR_FIXED)
		return;
	uint32_t version = fmt_rd32(buf + FMT_MAGIC_LEN);
	uint64_t plen = fmt_rd32(buf + FMT_MAGIC_LEN + 4);
	if (FMT_HDR_FIXED + plen + 4 > size)
		return;
	/* version 3 on, the header crc also covers the version and length */
	uint32_t c = version >= 3 ? crc(0, buf + FMT_MAGIC_LEN, 8) : 0;
	fmt_le32(buf + FMT_HDR_FIXED + plen, crc(c, buf + FMT_HDR_FIXED, plen));

	size_t off = FMT_HDR_FIXED + plen + 4, hl = chunk_hdr_len(version);
	for (uint32_t seq = 0; off < size; seq++) {
		if (buf[off] == FMT_REC_CHUNK) {
			if (size - off < hl)
				return;
			uint64_t len = fmt_rd32(buf + off + 5);
			if (len > size - off - hl)
				return;
			fmt_le32(buf + off + 1, seq);
			c = crc(0, buf + off + 1, hl - 5);
			fmt_le32(buf + off + hl - 4, crc(c, buf + off + hl, len));
			off += hl + len;
		} else if (buf[off] == FMT_REC_END) {
			if (size - off < FMT_END_SIZE)
				return;
			fmt_le32(buf + off + FMT_END_SIZE - 4, crc(0, buf + off, FMT_END_SIZE - 4));
			return;
		} else {
			return;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	fix_checksums(buf, size);
	/* replaying an input: the trace as the harness reads it, for the CLI */
	const char *save = getenv("FUZZ_TRACE_SAVE");
	FILE *f = save && *save ? fopen(save, "w") : NULL;
	if (f) {
		fwrite(buf, 1, size, f);
		fclose(f);
	}
	fuzz_drive(buf, size);
	free(buf);
	return 0;
}
