/* Trace reader: checks the header, then loads one CRC-checked chunk at a time
 * and decodes its events against the decoder state model of trace/format.h.
 * Nothing read from the file is trusted. Depends on zlib (crc32) and util/. */
#include "trace/reader.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "trace/format.h"
#include "trace/writer.h"
#include "util/strtab.h"
#include "util/varint.h"

_Static_assert(TRACE_READER_HEAD_LEN == FMT_HDR_FIXED, "the head is the fixed header");

struct trace_reader {
	FILE *f;
	char *path;
	struct as_trace_meta meta;
	struct as_trace_end end;
	bool done;            /* trailer read */
	int err;              /* sticky -errno */
	char msg[512];
	uint8_t *buf;         /* payload of the current chunk */
	size_t cap, len, pos;
	uint32_t chunk_count; /* events the chunk header announces */
	uint32_t chunk_seen;  /* events decoded from it */
	uint32_t seq;         /* number of the next chunk */
	uint64_t chunk_off;   /* file offset of the current chunk */
	uint64_t off;         /* file offset of the next unread byte */
	uint64_t events;
	uint64_t lost, missed, counts_ns; /* the last counts record (version 9) */
	bool have_counts;
	struct fmt_state st;
	struct strtab strs;
	struct as_stack *stacks;   /* defined stacks, index id - 1; frames owned */
	uint32_t n_stacks, cap_stacks;
};

/* ---- header ---- */

struct rd {
	const uint8_t *p, *end;
	bool bad;             /* short or malformed */
	bool oom;
};

static const uint8_t *rd_take(struct rd *c, size_t n)
{
	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return NULL;
	}
	const uint8_t *p = c->p;
	c->p += n;
	return p;
}

static uint8_t rd_u8(struct rd *c) { const uint8_t *p = rd_take(c, 1); return p ? *p : 0; }
static uint16_t rd_u16(struct rd *c) { const uint8_t *p = rd_take(c, 2); return p ? fmt_rd16(p) : 0; }
static uint32_t rd_u32(struct rd *c) { const uint8_t *p = rd_take(c, 4); return p ? fmt_rd32(p) : 0; }
static uint64_t rd_u64(struct rd *c) { const uint8_t *p = rd_take(c, 8); return p ? fmt_rd64(p) : 0; }

/* Returns an owned string; absent gives "" (or NULL with keep_null). */
static char *rd_str(struct rd *c, bool keep_null)
{
	uint32_t n = rd_u32(c);
	const uint8_t *p = NULL;
	if (c->bad)
		return NULL;
	if (n == FMT_STR_ABSENT) {
		if (keep_null)
			return NULL;
		n = 0;
	} else if (!(p = rd_take(c, n))) {
		return NULL;
	}
	char *s = malloc((size_t)n + 1);
	if (!s) {
		c->oom = c->bad = true;
		return NULL;
	}
	if (n)
		memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

void trace_meta__clear(struct as_trace_meta *m)
{
	free(m->target);
	free(m->build_id);
	free(m->runtime);
	free(m->cmdline);
	free(m->runtime_detail);
	free(m->flight_trigger);
	free(m->flight_detail);
	for (uint32_t i = 0; m->probes && i < m->n_probes; i++) {
		free(m->probes[i].symbol);
		free(m->probes[i].future);
		free(m->probes[i].src_file);
		free(m->probes[i].await_lines);
		for (uint32_t k = 0; m->probes[i].await_types && k < m->probes[i].n_awaits; k++)
			free(m->probes[i].await_types[k]);
		free(m->probes[i].await_types);
	}
	free(m->probes);
	memset(m, 0, sizeof(*m));
}

/* Parses the header payload into m; returns NULL or the reason it is bad. */
static const char *parse_meta(struct as_trace_meta *m, const uint8_t *p, size_t n,
			      uint32_t version, bool *oom)
{
	struct rd c = { .p = p, .end = p + n };
	const char *why = "malformed header fields";

	m->pid = rd_u32(&c);
	m->clock_mono_ns = rd_u64(&c);
	m->clock_real_ns = rd_u64(&c);
	m->target = rd_str(&c, false);
	m->build_id = rd_str(&c, false);
	m->runtime = rd_str(&c, false);
	m->cmdline = rd_str(&c, false);
	uint32_t np = rd_u32(&c);
	if (c.bad)
		goto out;
	/* each probe takes at least 20 bytes */
	if (np > 65536 || np > (size_t)(c.end - c.p) / 20) {
		why = "impossible probe count";
		goto out;
	}
	if (np) {
		m->probes = calloc(np, sizeof(*m->probes));
		if (!m->probes) {
			c.oom = true;
			goto out;
		}
	}
	m->n_probes = np;
	for (uint32_t i = 0; i < np && !c.bad; i++) {
		struct as_probe *pr = &m->probes[i];
		pr->role = rd_u16(&c);
		pr->arg_reg = rd_u8(&c);
		pr->emulated = rd_u8(&c);
		pr->addr = rd_u64(&c);
		pr->symbol = rd_str(&c, false);
		pr->future = rd_str(&c, true);
		pr->state_off = -1;
		if (version >= 7) {
			pr->src_file = rd_str(&c, true);
			pr->src_line = rd_u32(&c);
			uint32_t na = rd_u32(&c);
			if (!c.bad && (na > FMT_MAX_AWAITS || na > (size_t)(c.end - c.p) / 8)) {
				why = "impossible await line count";
				goto out;
			}
			if (!c.bad && na) {
				pr->await_lines = malloc(na * sizeof(*pr->await_lines));
				if (!pr->await_lines) {
					c.oom = true;
					goto out;
				}
				pr->await_types = calloc(na, sizeof(*pr->await_types));
				if (!pr->await_types) {
					c.oom = true;
					goto out;
				}
				pr->n_awaits = na;
				for (uint32_t k = 0; k < na && !c.bad; k++) {
					pr->await_lines[k] = rd_u32(&c);
					pr->await_types[k] = rd_str(&c, true);
				}
			}
		}
		if (!c.bad && (pr->role < 1 || pr->role >= fmt_role_max(version))) {
			why = "unknown probe role";
			goto out;
		}
	}
	if (!c.bad && version >= 8)
		m->runtime_detail = rd_str(&c, true);
	if (!c.bad && version >= 10 && (m->flight_trigger = rd_str(&c, true))) {
		m->flight_detail = rd_str(&c, true);
		m->flight_trigger_ns = rd_u64(&c);
		m->flight_window_ns = rd_u64(&c);
		m->flight_after_ns = rd_u64(&c);
		m->flight_evicted = rd_u64(&c);
	}
	if (!c.bad && version >= 11)
		m->recorded = rd_u32(&c);
	if (c.bad)
		goto out;
	if (c.p != c.end) {
		why = "bytes after the header fields";
		goto out;
	}
	return NULL;
out:
	*oom = c.oom;
	return c.oom ? "out of memory" : why;
}

static void set_msg(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_msg(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

bool trace_reader__is_trace(const void *head, size_t n)
{
	/* a prefix of the magic too: such a file is a cut trace */
	return !memcmp(head, FMT_MAGIC, n < FMT_MAGIC_LEN ? n : FMT_MAGIC_LEN);
}

struct trace_reader *trace_reader__open(const char *path, char *err, size_t errlen)
{
	uint8_t head[TRACE_READER_HEAD_LEN];
	FILE *f;
	size_t n;

	set_msg(err, errlen, "%s", "");
	f = fopen(path, "rbe");
	if (!f) {
		int eno = errno;

		set_msg(err, errlen, "cannot open %s: %s: check the path and that you may read it",
			path, strerror(eno));
		errno = eno;
		return NULL;
	}
	n = fread(head, 1, sizeof(head), f);
	if (n < sizeof(head) && ferror(f)) {
		fclose(f);
		set_msg(err, errlen, "cannot read %s: input/output error", path);
		errno = EIO;
		return NULL;
	}
	if (!trace_reader__is_trace(head, n)) {
		fclose(f);
		set_msg(err, errlen, "%s is not an asyncscope trace (bad magic): give a file "
			"written by asyncscope record", path);
		errno = EINVAL;
		return NULL;
	}
	return trace_reader__fopen(f, head, n, path, err, errlen);
}

struct trace_reader *trace_reader__fopen(FILE *f, const void *head, size_t n, const char *path,
					 char *err, size_t errlen)
{
	struct trace_reader *r = NULL;
	uint8_t fixed[FMT_HDR_FIXED];
	uint8_t *payload = NULL;
	int eno = EBADMSG;
	const char *why = NULL;
	bool oom = false;

	set_msg(err, errlen, "%s", "");
	if (n > sizeof(fixed)) {   /* the bytes past the fixed header would be lost */
		fclose(f);
		set_msg(err, errlen, "cannot read %s: invalid argument", path);
		errno = EINVAL;
		return NULL;
	}
	memcpy(fixed, head, n);
	r = calloc(1, sizeof(*r));
	if (!r || !(r->path = strdup(path))) {
		fclose(f);
		eno = ENOMEM;
		set_msg(err, errlen, "cannot read %s: out of memory", path);
		goto cleanup;
	}
	fmt_state_init(&r->st);
	r->f = f;
	if (n == 0) {
		why = "the file is empty";
		goto corrupt;
	}
	if (n < FMT_MAGIC_LEN + 4) {
		why = "the file ends inside the header";
		goto corrupt;
	}
	uint32_t version = fmt_rd32(fixed + FMT_MAGIC_LEN);
	if (version < AS_TRACE_FORMAT_MIN_VERSION || version > AS_TRACE_FORMAT_VERSION) {
		eno = EPROTONOSUPPORT;
		set_msg(err, errlen, "%s has trace format version %u but this asyncscope reads "
			"versions %d to %d only: it was written by %s asyncscope, read it with that "
			"version%s", path, version, AS_TRACE_FORMAT_MIN_VERSION, AS_TRACE_FORMAT_VERSION,
			version > AS_TRACE_FORMAT_VERSION ? "a newer" : "an older",
			version > AS_TRACE_FORMAT_VERSION ? " or upgrade" : " or record it again");
		goto cleanup;
	}
	if (n < sizeof(fixed)) {
		why = "the file ends inside the header";
		goto corrupt;
	}
	uint32_t plen = fmt_rd32(fixed + FMT_MAGIC_LEN + 4);
	if (plen > FMT_HDR_MAX) {
		why = "impossible header length";
		goto corrupt;
	}
	payload = malloc((size_t)plen + 4);
	if (!payload) {
		eno = ENOMEM;
		set_msg(err, errlen, "cannot read %s: out of memory", path);
		goto cleanup;
	}
	if (fread(payload, 1, (size_t)plen + 4, r->f) != (size_t)plen + 4) {
		why = "the file ends inside the header";
		goto corrupt;
	}
	/* version 3 on, the checksum also covers the version and length, so that
	 * a damaged version cannot pass for an older one */
	uint32_t crc = version >= 3 ? (uint32_t)crc32(0, fixed + FMT_MAGIC_LEN, 8) : 0;
	if ((uint32_t)crc32(crc, payload, plen) != fmt_rd32(payload + plen)) {
		why = "header checksum mismatch";
		goto corrupt;
	}
	why = parse_meta(&r->meta, payload, plen, version, &oom);
	if (oom) {
		eno = ENOMEM;
		set_msg(err, errlen, "cannot read %s: out of memory", path);
		goto cleanup;
	}
	if (why)
		goto corrupt;
	r->meta.format_version = version;
	r->off = FMT_HDR_FIXED + (uint64_t)plen + 4;
	free(payload);
	return r;
corrupt:
	eno = EBADMSG;
	set_msg(err, errlen, "%s has a corrupt header (%s): the file is damaged or is not a "
		"finished recording, record it again", path, why);
cleanup:
	free(payload);
	trace_reader__free(r);
	errno = eno;
	return NULL;
}

/* ---- events ---- */

static int fail(struct trace_reader *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct trace_reader *r, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	r->err = err;
	return err;
}

static int truncated(struct trace_reader *r)
{
	if (ferror(r->f))
		return fail(r, -EIO, "cannot read %s at offset %llu: input/output error",
			    r->path, (unsigned long long)r->off);
	return fail(r, -ENODATA, "%s is truncated after %llu events (the recording did not "
		    "finish): rerun the report with --partial to use them",
		    r->path, (unsigned long long)r->events);
}

static int malformed(struct trace_reader *r, const char *what)
{
	return fail(r, -EBADMSG, "%s is corrupt: chunk %u at offset %llu has a malformed "
		    "event record (%s): use the %llu events before it with --partial",
		    r->path, r->seq - 1, (unsigned long long)r->chunk_off, what,
		    (unsigned long long)r->events);
}

/* Loads the next record: returns 1 after loading a chunk, 0 after a valid
 * trailer at the end of the file, or a negative error. */
static int read_record(struct trace_reader *r)
{
	uint8_t h[FMT_END_SIZE];
	int kind = getc(r->f);

	if (kind == EOF)
		return truncated(r);
	h[0] = (uint8_t)kind;
	if (kind == FMT_REC_CHUNK) {
		if (fread(h + 1, 1, FMT_CHUNK_HDR - 1, r->f) != FMT_CHUNK_HDR - 1)
			return truncated(r);
		uint32_t seq = fmt_rd32(h + 1), len = fmt_rd32(h + 5), count = fmt_rd32(h + 9);
		if (seq != r->seq || len > FMT_CHUNK_MAX)
			return fail(r, -EBADMSG, "%s is corrupt: chunk %u at offset %llu has a bad "
				    "header: use the %llu events before it with --partial", r->path,
				    r->seq, (unsigned long long)r->off, (unsigned long long)r->events);
		if (len > r->cap) {
			size_t cap = r->cap ? r->cap : 4096;
			while (cap < len)
				cap *= 2;
			uint8_t *b = realloc(r->buf, cap);
			if (!b)
				return fail(r, -ENOMEM, "cannot read %s: out of memory", r->path);
			r->buf = b;
			r->cap = cap;
		}
		if (fread(r->buf, 1, len, r->f) != len)
			return truncated(r);
		uint32_t crc = (uint32_t)crc32(0, h + 1, 12);
		crc = (uint32_t)crc32(crc, r->buf, len);
		if (crc != fmt_rd32(h + 13))
			return fail(r, -EBADMSG, "%s is corrupt: chunk %u at offset %llu fails its "
				    "checksum: use the %llu events before it with --partial", r->path,
				    r->seq, (unsigned long long)r->off, (unsigned long long)r->events);
		r->len = len;
		r->pos = 0;
		r->chunk_count = count;
		r->chunk_seen = 0;
		r->chunk_off = r->off;
		r->off += FMT_CHUNK_HDR + (uint64_t)len;
		r->seq++;
		return 1;
	}
	if (kind == FMT_REC_END) {
		if (fread(h + 1, 1, FMT_END_SIZE - 1, r->f) != FMT_END_SIZE - 1)
			return truncated(r);
		if ((uint32_t)crc32(0, h, 33) != fmt_rd32(h + 33))
			return fail(r, -EBADMSG, "%s is corrupt: the trailer at offset %llu fails its "
				    "checksum: use its %llu events with --partial", r->path,
				    (unsigned long long)r->off, (unsigned long long)r->events);
		uint64_t events = fmt_rd64(h + 1);
		if (events != r->events)
			return fail(r, -EBADMSG, "%s is corrupt: its trailer counts %llu events but "
				    "it holds %llu", r->path, (unsigned long long)events,
				    (unsigned long long)r->events);
		r->off += FMT_END_SIZE;
		if (getc(r->f) != EOF)
			return fail(r, -EBADMSG, "%s is corrupt: bytes follow the trailer at offset "
				    "%llu: use its %llu events with --partial", r->path,
				    (unsigned long long)r->off, (unsigned long long)r->events);
		r->end.events = events;
		r->end.lost = fmt_rd64(h + 9);
		r->end.missed = fmt_rd64(h + 17);
		r->end.end_ns = fmt_rd64(h + 25);
		r->done = true;
		return 0;
	}
	return fail(r, -EBADMSG, "%s is corrupt: unknown record at offset %llu: use the %llu "
		    "events before it with --partial", r->path, (unsigned long long)r->off,
		    (unsigned long long)r->events);
}

/* Reads a string ref at *pp into *str (NULL for FMT_STR_NULL): 0 or the
 * error already recorded. */
static int get_str(struct trace_reader *r, const uint8_t **pp, const uint8_t *end, const char **str)
{
	const uint8_t *p = *pp;
	uint64_t v;
	int err;

	*str = NULL;
	if (varint_get(&p, end, &v))
		return malformed(r, "bad string reference");
	if (v == FMT_STR_NEW) {
		uint64_t n;
		uint32_t idx;
		if (varint_get(&p, end, &n) || n > FMT_MAX_STR || n > (uint64_t)(end - p))
			return malformed(r, "bad string length");
		err = strtab__add(&r->strs, (const char *)p, (size_t)n, &idx);
		if (err == -ENOMEM)
			return fail(r, -ENOMEM, "cannot read %s: out of memory", r->path);
		if (err)
			return malformed(r, "too many strings");
		p += n;
		*str = strtab__get(&r->strs, idx);
	} else if (v != FMT_STR_NULL) {
		if (v - FMT_STR_IDX0 >= r->strs.n)
			return malformed(r, "undefined string");
		*str = strtab__get(&r->strs, (uint32_t)(v - FMT_STR_IDX0));
	}
	*pp = p;
	return 0;
}

/* Decodes a stack definition (after its kind byte at *pp): 0 or an error. */
static int decode_stack(struct trace_reader *r, const uint8_t **pp, const uint8_t *end)
{
	const uint8_t *p = *pp;
	uint64_t nk, nu, v, prev = 0;
	int err;

	if (r->meta.format_version < 3)
		return malformed(r, "stack definition before version 3");
	if (varint_get(&p, end, &nk) || varint_get(&p, end, &nu) ||
	    nk > AS_STACK_MAX_FRAMES || nu > AS_STACK_MAX_FRAMES)
		return malformed(r, "bad stack frame count");
	if (r->n_stacks >= FMT_MAX_STACKS)
		return malformed(r, "too many stacks");
	if (r->n_stacks == r->cap_stacks) {
		uint32_t cap = r->cap_stacks ? r->cap_stacks * 2 : 64;
		struct as_stack *s = realloc(r->stacks, cap * sizeof(*s));
		if (!s)
			return fail(r, -ENOMEM, "cannot read %s: out of memory", r->path);
		r->stacks = s;
		r->cap_stacks = cap;
	}
	uint32_t n = (uint32_t)(nk + nu);
	struct as_frame *f = calloc(n ? n : 1, sizeof(*f));
	if (!f)
		return fail(r, -ENOMEM, "cannot read %s: out of memory", r->path);
	for (uint32_t i = 0; i < n; i++) {
		if (varint_get(&p, end, &v)) {
			free(f);
			return malformed(r, "bad stack frame address");
		}
		f[i].addr = prev = zigzag_apply(prev, v);
		if ((err = get_str(r, &p, end, &f[i].sym))) {
			free(f);
			return err;
		}
		if (!f[i].sym)
			f[i].sym = "";
		if (r->meta.format_version >= 7) {
			if ((err = get_str(r, &p, end, &f[i].file))) {
				free(f);
				return err;
			}
			if (varint_get(&p, end, &v) || v > UINT32_MAX) {
				free(f);
				return malformed(r, "bad stack frame line");
			}
			f[i].line = (uint32_t)v;
		}
	}
	r->stacks[r->n_stacks] = (struct as_stack){
		.id = r->n_stacks + 1, .n_kernel = (uint16_t)nk, .n_user = (uint16_t)nu, .frames = f,
	};
	r->n_stacks++;
	*pp = p;
	return 0;
}

/* varint_get() out of line: the rare long varints. */
static __attribute__((noinline)) int varint_slow(const uint8_t **pp, const uint8_t *end,
						  uint64_t *v)
{
	return varint_get(pp, end, v);
}

/* varint_get() with the cases of one to three bytes inline: most fields of
 * an event are small deltas. */
static inline __attribute__((always_inline)) int rd_varint(const uint8_t **pp,
							    const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;

	uint64_t x;

	if (__builtin_expect(end - p >= 3, 1)) {
		if (p[0] < 0x80) {
			*v = p[0];
			*pp = p + 1;
			return 0;
		}
		x = (uint64_t)(p[0] & 0x7f) | (uint64_t)(p[1] & 0x7f) << 7;
		if (p[1] < 0x80) {
			*v = x;
			*pp = p + 2;
			return 0;
		}
		if (p[2] < 0x80) {
			*v = x | (uint64_t)p[2] << 14;
			*pp = p + 3;
			return 0;
		}
	}
	return varint_slow(pp, end, v);
}

/* A control record (type 0) whose first byte h was read, at *pp: 0 with *pp
 * past it, or a negative error. */
static __attribute__((noinline)) int decode_control(struct trace_reader *r, uint8_t h,
						    const uint8_t **pp, const uint8_t *end)
{
	const uint8_t *p = *pp;
	int err;

	if (h == FMT_CTL_STACK) {
		if ((err = decode_stack(r, &p, end)))
			return err;
	} else if (h == FMT_CTL_RESET) {
		fmt_tasks_reset(&r->st);
	} else if (h == FMT_CTL_COUNTS && r->meta.format_version >= 9) {
		uint64_t lost, missed, ns;
		if (rd_varint(&p, end, &lost) || rd_varint(&p, end, &missed) ||
		    rd_varint(&p, end, &ns))
			return malformed(r, "bad loss counts");
		if (p != end)
			return malformed(r, "loss counts before the end of the chunk");
		r->lost = lost;
		r->missed = missed;
		r->counts_ns = ns;
		r->have_counts = true;
	} else {
		return malformed(r, "unknown control record");
	}
	*pp = p;
	return 0;
}

/* The decoder state a run of events keeps in locals (struct of them, whose
 * fields stay in registers once decode_one() is inlined). */
struct dstate {
	const uint8_t *p, *end;
	uint64_t prev_ts;
	uint32_t cur_thread;
	uint32_t left;            /* events the chunk header still announces */
};

/* The rare parts of an event record, out of line (decode_one() is copied
 * for each common header): 0 with the field read and *pp past it, or a
 * negative error (recorded). */
static __attribute__((noinline)) int new_thread(struct trace_reader *r, const uint8_t **pp,
						 const uint8_t *end, uint32_t *thread)
{
	uint64_t tid;
	int err;

	if (rd_varint(pp, end, &tid) || tid > UINT32_MAX)
		return malformed(r, "bad thread id");
	err = fmt_thread_add(&r->st, (uint32_t)tid, thread);
	if (err == -ENOMEM)
		return fail(r, -ENOMEM, "cannot read %s: out of memory", r->path);
	return err ? malformed(r, "too many threads") : 0;
}

static __attribute__((noinline)) int new_task(struct trace_reader *r, const uint8_t **pp,
					       const uint8_t *end, uint32_t *slot)
{
	uint64_t v, addr;
	int err;

	if (rd_varint(pp, end, &v))
		return malformed(r, "bad task address");
	addr = zigzag_apply(r->st.prev_new_task, v);
	if (!addr)
		return malformed(r, "task 0 defined");
	err = fmt_task_new(&r->st, addr, slot);
	if (err == -ENOMEM)
		return fail(r, -ENOMEM, "cannot read %s: out of memory", r->path);
	return err ? malformed(r, "too many live tasks") : 0;
}

static __attribute__((noinline)) int future_probe(struct trace_reader *r, uint16_t probe)
{
	if (probe >= r->meta.n_probes || r->meta.probes[probe].role != AS_ROLE_FUTURE)
		return malformed(r, "future event of a probe that is not a future function");
	return 0;
}

static __attribute__((noinline)) int stack_ref(struct trace_reader *r, const uint8_t **pp,
					       const uint8_t *end, uint32_t *stack)
{
	uint64_t v;

	if (rd_varint(pp, end, &v) || v > r->n_stacks)
		return malformed(r, "undefined stack");
	*stack = (uint32_t)v;
	return 0;
}

/* Decodes one event record whose header byte h was read (type not 0) into
 * *ev and applies it to the state: 0, or a negative error (recorded). Always
 * inlined, in decode_run()'s switch with h a constant for the common
 * headers: each such copy has no test of h left. */
static inline __attribute__((always_inline)) int decode_one(struct trace_reader *restrict r,
							     struct dstate *restrict d,
							     const uint8_t h,
							     struct as_event *restrict ev)
{
	struct fmt_state *restrict st = &r->st;
	const uint8_t *p = d->p, *const end = d->end;
	const uint8_t type = h & 0x0f;
	uint64_t v;
	int err;

#define BAD(what) do { d->p = p; return malformed(r, what); } while (0)
	if (type >= fmt_ev_max(r->meta.format_version))
		BAD("unknown event type");
	uint8_t x = 0;
	if (h & FMT_H_EXT) {
		if (p >= end)
			BAD("cut record");
		x = *p++;
		if (x & ~FMT_X_MASK)
			BAD("unknown extension bits");
	}

	uint32_t thread = d->cur_thread;
	if (h & FMT_H_THREAD) {
		if (rd_varint(&p, end, &v))
			BAD("bad thread reference");
		if (v == FMT_THREAD_NEW) {
			if ((err = new_thread(r, &p, end, &thread)))
				return err;
		} else {
			if (v - 1 >= st->n_threads)
				BAD("undefined thread");
			thread = (uint32_t)(v - 1);
		}
	} else if (thread == FMT_NONE) {
		BAD("event without a thread");
	}
	struct fmt_thread *th = &st->threads[thread];

	if (rd_varint(&p, end, &v))
		BAD("bad timestamp");
	uint64_t ts = zigzag_apply(d->prev_ts, v);

	uint32_t slot;
	if (h & FMT_H_TASK) {
		if (rd_varint(&p, end, &v))
			BAD("bad task reference");
		if (v == FMT_TASK_NONE) {
			slot = FMT_NONE;
		} else if (v == FMT_TASK_NEW) {
			if ((err = new_task(r, &p, end, &slot)))
				return err;
		} else if (v == FMT_TASK_CUR) {
			slot = fmt_cur_slot(st, thread);
		} else {
			v -= FMT_TASK_SLOT0;
			if (v >= st->n_slots || !st->slots[v].live)
				BAD("undefined task");
			slot = (uint32_t)v;
		}
	} else {
		slot = fmt_default_task(st, thread, type);
	}
	struct fmt_slot *s = slot == FMT_NONE ? NULL : &st->slots[slot];

	uint64_t other;
	if (h & FMT_H_OTHER) {
		if (rd_varint(&p, end, &v))
			BAD("bad other field");
		other = zigzag_apply(st->last_other[type], v);
	} else if (type == AS_EV_POLL_BEGIN) {
		other = s ? s->tokio : 0;
	} else if (type == AS_EV_WAKE) {
		other = fmt_slot_addr(st, fmt_cur_slot(st, thread));
	} else {
		other = 0;
	}

	uint16_t probe;
	if (x & FMT_X_PROBE) {
		if (rd_varint(&p, end, &v) || v > UINT16_MAX)
			BAD("bad probe");
		probe = (uint16_t)v;
	} else if ((type == AS_EV_POLL_BEGIN || type == AS_EV_POLL_END) && s) {
		probe = s->probe;
	} else {
		probe = st->last_probe[type];
	}
	if (type == AS_EV_POLL_BEGIN && probe >= r->meta.n_probes)
		BAD("undefined probe");
	if (fmt_is_future(type) && (err = future_probe(r, probe)))
		return err;

	uint8_t flags = 0;
	if (x & FMT_X_FLAGS) {
		if (p >= end)
			BAD("cut record");
		flags = *p++;
	}

	const char *str = NULL;
	if ((x & FMT_X_STR) && (err = get_str(r, &p, end, &str)))
		return err;

	uint32_t stack = 0;
	if (fmt_has_stack(type) && (err = stack_ref(r, &p, end, &stack)))
		return err;

	if (!d->left)
		BAD("more events than its header says");
	d->left--;
	*ev = (struct as_event){
		.type = type, .flags = flags, .probe = probe, .tid = th->tid,
		.ts = ts, .task = s ? s->addr : 0, .other = other, .str = str,
		.stack = stack, .hint = s ? slot + 1 : 0,
	};
	r->events++;
	/* fmt_apply() */
	d->prev_ts = ts;
	d->cur_thread = thread;
	st->last_other[type] = other;
	st->last_probe[type] = probe;
	if (type == AS_EV_POLL_BEGIN) {
		th->cur_slot = slot;
		th->cur_gen = s ? s->gen : 0;
	} else if (type == AS_EV_POLL_END) {
		th->cur_slot = FMT_NONE;
	}
	if (s) {
		if (type == AS_EV_POLL_BEGIN)
			s->tokio = other;
		if (type == AS_EV_POLL_BEGIN || type == AS_EV_POLL_END)
			s->probe = probe;
		if (type == AS_EV_FREE) {
			s->live = 0;
			s->gen++;
			st->free_slots[st->n_free++] = slot;
			st->live--;
		}
	}
#undef BAD
	d->p = p;
	return 0;
}

/* The header bytes the writer gives the commonest events (a poll's end on
 * the same thread; a poll's begin and a wake of a task by slot, on the same
 * thread or not, with an other or not; a park, an unpark): each gets a
 * copy of decode_one() of its own (9 of 10 events in a server's trace). */
#define COMMON_HEADERS(X) \
	X(0x03) X(0x22) X(0x32) X(0x24) X(0xe4) X(0x07) X(0x08)

/* Decodes the records of the current chunk from r->pos into out[0 ..
 * max): returns how many events, at the chunk's end or at max, or after
 * an error, which goes to *errp (0 otherwise). The hot loop of every
 * command that reads a trace: the decoder state lives in locals while the
 * run lasts (restrict: the events written never alias it), the rules are
 * those of trace/format.h's helpers, each check as before; one branch on
 * the header byte picks a decoder made for it. */
static size_t decode_run(struct trace_reader *restrict r, struct as_event *restrict out,
			 size_t max, int *errp)
{
	struct fmt_state *restrict st = &r->st;
	struct dstate d = {
		.p = r->buf + r->pos, .end = r->buf + r->len, .prev_ts = st->prev_ts,
		.cur_thread = st->cur_thread, .left = r->chunk_count - r->chunk_seen,
	};
	size_t n = 0;
	int err = 0;

	while (n < max && d.p < d.end) {
		uint8_t h = *d.p++;

		switch (h) {
#define CASE(H) case H: err = decode_one(r, &d, H, &out[n]); break;
		COMMON_HEADERS(CASE)
#undef CASE
		default:
			if (__builtin_expect(!(h & 0x0f), 0)) {   /* a control record */
				st->prev_ts = d.prev_ts;
				st->cur_thread = d.cur_thread;
				err = decode_control(r, h, &d.p, d.end);
				if (err)
					goto out;
				continue;
			}
			err = decode_one(r, &d, h, &out[n]);
			break;
		}
		if (err)
			goto out;
		n++;
	}
out:
	st->prev_ts = d.prev_ts;
	st->cur_thread = d.cur_thread;
	r->chunk_seen = r->chunk_count - d.left;
	r->pos = (size_t)(d.p - r->buf);
	*errp = err;
	return n;
}

int trace_reader__next_batch(struct trace_reader *r, struct as_event *ev, size_t max)
{
	size_t n = 0;
	int err;

	if (r->err)
		return r->err;
	if (r->done)
		return 0;
	if (max > INT_MAX)
		max = INT_MAX;
	while (n < max) {
		if (r->pos < r->len) {
			n += decode_run(r, ev + n, max - n, &err);
			if (err)   /* sticky: the next call returns it */
				return n ? (int)n : err;
			continue;
		}
		if (r->chunk_seen != r->chunk_count) {
			err = malformed(r, "fewer events than its header says");
			return n ? (int)n : err;
		}
		err = read_record(r);
		if (err <= 0)   /* the end (0, r->done) or an error (sticky) */
			return n ? (int)n : err;
	}
	return (int)n;
}

int trace_reader__next(struct trace_reader *r, struct as_event *ev)
{
	return trace_reader__next_batch(r, ev, 1);
}

const char *trace_reader__error(const struct trace_reader *r)
{
	return r->err ? r->msg : "";
}

const struct as_trace_meta *trace_reader__meta(const struct trace_reader *r)
{
	return &r->meta;
}

const struct as_trace_end *trace_reader__end(const struct trace_reader *r)
{
	return r->done && !r->err ? &r->end : NULL;
}

int trace_reader__counts(const struct trace_reader *r, struct as_trace_end *out)
{
	if (!r->have_counts)
		return 0;
	out->lost = r->lost;
	out->missed = r->missed;
	out->counts_ns = r->counts_ns;
	return 1;
}

uint64_t trace_reader__events(const struct trace_reader *r)
{
	return r->events;
}

const struct as_stack *trace_reader__stack(const struct trace_reader *r, uint32_t id)
{
	return id && id <= r->n_stacks ? &r->stacks[id - 1] : NULL;
}

uint64_t trace_reader__offset(const struct trace_reader *r)
{
	return r->off;
}

void trace_reader__free(struct trace_reader *r)
{
	if (!r)
		return;
	if (r->f)
		fclose(r->f);
	free(r->path);
	trace_meta__clear(&r->meta);
	free(r->buf);
	fmt_state_free(&r->st);
	strtab__clear(&r->strs);
	for (uint32_t i = 0; i < r->n_stacks; i++)
		free((void *)r->stacks[i].frames);
	free(r->stacks);
	free(r);
}
