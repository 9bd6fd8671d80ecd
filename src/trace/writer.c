/* Trace writer: encodes events against the decoder state model of
 * trace/format.h into a chunk buffer, and writes each full chunk with its
 * length, event count and crc32. Depends on zlib (crc32) and util/ only. */
#include "trace/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "trace/format.h"
#include "util/strtab.h"
#include "util/u64map.h"
#include "util/varint.h"

#define BUF_SIZE (FMT_CHUNK_HDR + FMT_CHUNK_TARGET + FMT_EV_MAX_FIXED + FMT_MAX_STR + \
		  FMT_CTL_COUNTS_MAX)
_Static_assert(FMT_STACK_MAX_BYTES <= FMT_EV_MAX_FIXED + FMT_MAX_STR, "a stack fits the buffer");

/* A stack already defined, kept for deduplication: its counts and
 * addresses (kernel then user). */
struct known_stack {
	uint16_t n_kernel, n_user;
	uint64_t *addrs;
};

struct trace_writer {
	int fd;
	int err;              /* sticky -errno */
	bool io_failed;       /* a write failed: the file may end in a partial chunk */
	bool salvaged;        /* ... and finish cut it there and wrote the trailer */
	bool finished;
	uint32_t n_probes;
	uint32_t version;     /* format version written */
	uint8_t *buf;         /* chunk header room, then the pending payload */
	size_t len;           /* pending payload bytes */
	uint32_t count;       /* pending events */
	uint32_t seq;         /* next chunk number */
	uint64_t written;     /* bytes in the file */
	uint64_t events;
	uint64_t events_written; /* events in the chunks written whole */
	uint64_t lost, missed, counts_ns; /* trace_writer__counts() */
	bool counts_set, counts_dirty;    /* given at all; changed since the last chunk */
	struct fmt_state st;
	struct u64map threads; /* tid + 1 -> thread index */
	struct u64map tasks;   /* task address -> slot (UINT64_MAX: max_slot) */
	uint32_t max_slot;
	struct strtab strs;
	struct u64map stack_hash; /* hash of counts and addresses -> stack id */
	struct known_stack *stacks; /* index id - 1 */
	uint32_t n_stacks, cap_stacks;
};

/* Growable buffer for the header. */
struct hbuf {
	uint8_t *p;
	size_t len, cap;
	int err;
};

static uint8_t *hb_room(struct hbuf *b, size_t n)
{
	if (b->err)
		return NULL;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n)
			cap *= 2;
		uint8_t *p = realloc(b->p, cap);
		if (!p) {
			b->err = -ENOMEM;
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	uint8_t *p = b->p + b->len;
	b->len += n;
	return p;
}

static void hb_u8(struct hbuf *b, uint8_t v) { uint8_t *p = hb_room(b, 1); if (p) *p = v; }
static void hb_u16(struct hbuf *b, uint16_t v) { uint8_t *p = hb_room(b, 2); if (p) fmt_le16(p, v); }
static void hb_u32(struct hbuf *b, uint32_t v) { uint8_t *p = hb_room(b, 4); if (p) fmt_le32(p, v); }
static void hb_u64(struct hbuf *b, uint64_t v) { uint8_t *p = hb_room(b, 8); if (p) fmt_le64(p, v); }

static void hb_str(struct hbuf *b, const char *s)
{
	if (!s) {
		hb_u32(b, FMT_STR_ABSENT);
		return;
	}
	size_t n = strlen(s);
	if (n >= FMT_HDR_MAX) {
		b->err = -EINVAL;
		return;
	}
	hb_u32(b, (uint32_t)n);
	uint8_t *p = hb_room(b, n);
	if (p && n)
		memcpy(p, s, n);
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			return -EIO;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static int write_header(struct trace_writer *w, const struct as_trace_meta *meta)
{
	struct hbuf b = { 0 };
	int err;

	uint8_t *fixed = hb_room(&b, FMT_HDR_FIXED);
	if (fixed)
		memcpy(fixed, FMT_MAGIC, FMT_MAGIC_LEN);
	hb_u32(&b, meta->pid);
	hb_u64(&b, meta->clock_mono_ns);
	hb_u64(&b, meta->clock_real_ns);
	hb_str(&b, meta->target);
	hb_str(&b, meta->build_id);
	hb_str(&b, meta->runtime);
	hb_str(&b, meta->cmdline);
	hb_u32(&b, meta->n_probes);
	for (uint32_t i = 0; i < meta->n_probes; i++) {
		const struct as_probe *p = &meta->probes[i];
		hb_u16(&b, p->role);
		hb_u8(&b, p->arg_reg);
		hb_u8(&b, p->emulated);
		hb_u64(&b, p->addr);
		hb_str(&b, p->symbol);
		hb_str(&b, p->future);
		if (w->version < 7)
			continue;
		/* version 7: source location and await lines */
		uint32_t na = p->await_lines && p->n_awaits < FMT_MAX_AWAITS ? p->n_awaits :
			      p->await_lines ? FMT_MAX_AWAITS : 0;
		hb_str(&b, p->src_file);
		hb_u32(&b, p->src_line);
		hb_u32(&b, na);
		for (uint32_t k = 0; k < na; k++) {
			hb_u32(&b, p->await_lines[k]);
			hb_str(&b, p->await_types ? p->await_types[k] : NULL);
		}
	}
	/* version 8: the runtime's release, after the probes */
	if (w->version >= 8)
		hb_str(&b, meta->runtime_detail);
	/* version 10: the flight recorder's trigger (NULL: not a snapshot) */
	if (w->version >= 10) {
		hb_str(&b, meta->flight_trigger);
		if (meta->flight_trigger) {
			hb_str(&b, meta->flight_detail);
			hb_u64(&b, meta->flight_trigger_ns);
			hb_u64(&b, meta->flight_window_ns);
			hb_u64(&b, meta->flight_after_ns);
			hb_u64(&b, meta->flight_evicted);
		}
	}
	/* version 11: what the recorder took beside the probes */
	if (w->version >= 11)
		hb_u32(&b, meta->recorded);
	err = b.err;
	if (!err && b.len - FMT_HDR_FIXED > FMT_HDR_MAX)
		err = -EINVAL;
	if (err)
		goto cleanup;
	size_t plen = b.len - FMT_HDR_FIXED;
	fmt_le32(b.p + FMT_MAGIC_LEN, w->version);
	fmt_le32(b.p + FMT_MAGIC_LEN + 4, (uint32_t)plen);
	/* version 3 on: the checksum covers the version and length fields too */
	uint32_t crc = w->version >= 3 ? (uint32_t)crc32(0, b.p + FMT_MAGIC_LEN, 8) : 0;
	crc = (uint32_t)crc32(crc, b.p + FMT_HDR_FIXED, (uInt)plen);
	hb_u32(&b, crc);
	if ((err = b.err))
		goto cleanup;
	err = write_all(w->fd, b.p, b.len);
	if (!err)
		w->written += b.len;
cleanup:
	free(b.p);
	return err;
}

struct trace_writer *trace_writer__new(const char *path, const struct as_trace_meta *meta)
{
	return trace_writer__new_version(path, meta, AS_TRACE_FORMAT_VERSION);
}

/* The writer on fd (owned: closed on failure too). */
static struct trace_writer *new_on(int fd, const struct as_trace_meta *meta, uint32_t version)
{
	struct trace_writer *w = NULL;
	int err = -EINVAL;

	if (version < AS_TRACE_FORMAT_MIN_VERSION || version > AS_TRACE_FORMAT_VERSION)
		goto cleanup;
	if (!meta || meta->n_probes > 65536 || (meta->n_probes && !meta->probes))
		goto cleanup;
	for (uint32_t i = 0; i < meta->n_probes; i++)
		if (meta->probes[i].role < 1 || meta->probes[i].role >= AS_ROLE__MAX)
			goto cleanup;
	err = -ENOMEM;
	w = calloc(1, sizeof(*w));
	if (!w)
		goto cleanup;
	w->fd = -1;
	w->max_slot = FMT_NONE;
	fmt_state_init(&w->st);
	w->n_probes = meta->n_probes;
	w->version = version;
	w->buf = malloc(BUF_SIZE);
	if (!w->buf)
		goto cleanup;
	w->fd = fd;
	fd = -1;
	err = write_header(w, meta);
	if (err)
		goto cleanup;
	return w;
cleanup:
	if (fd >= 0)
		close(fd);
	trace_writer__free(w);
	errno = -err;
	return NULL;
}

struct trace_writer *trace_writer__new_version(const char *path, const struct as_trace_meta *meta,
					       uint32_t version)
{
	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return NULL;
	return new_on(fd, meta, version);
}

struct trace_writer *trace_writer__new_fd(int fd, const struct as_trace_meta *meta)
{
	if (fd < 0) {
		errno = EBADF;
		return NULL;
	}
	return new_on(fd, meta, AS_TRACE_FORMAT_VERSION);
}

/* Appends the counts record to the pending chunk (version 9). */
static void put_counts(struct trace_writer *w)
{
	uint8_t *p = w->buf + FMT_CHUNK_HDR + w->len;

	*p++ = FMT_CTL_COUNTS;
	p += varint_put(p, w->lost);
	p += varint_put(p, w->missed);
	p += varint_put(p, w->counts_ns);
	w->len = (size_t)(p - (w->buf + FMT_CHUNK_HDR));
	w->counts_dirty = false;
}

static int flush_chunk(struct trace_writer *w)
{
	if (!w->len && !w->counts_dirty)
		return 0;
	if (w->counts_set && w->version >= 9)
		put_counts(w);
	if (!w->len)
		return 0;
	uint8_t *h = w->buf;
	h[0] = FMT_REC_CHUNK;
	fmt_le32(h + 1, w->seq);
	fmt_le32(h + 5, (uint32_t)w->len);
	fmt_le32(h + 9, w->count);
	uint32_t crc = (uint32_t)crc32(0, h + 1, 12);
	crc = (uint32_t)crc32(crc, h + FMT_CHUNK_HDR, (uInt)w->len);
	fmt_le32(h + 13, crc);
	int err = write_all(w->fd, h, FMT_CHUNK_HDR + w->len);
	if (err) {
		w->io_failed = true;
		return err;
	}
	w->written += FMT_CHUNK_HDR + w->len;
	w->events_written += w->count;
	w->seq++;
	w->len = 0;
	w->count = 0;
	return 0;
}

void trace_writer__counts(struct trace_writer *w, uint64_t lost, uint64_t missed, uint64_t ns)
{
	if (!w->counts_set || lost != w->lost || missed != w->missed)
		w->counts_dirty = true;
	w->lost = lost;
	w->missed = missed;
	w->counts_ns = ns;
	w->counts_set = true;
}

int trace_writer__flush(struct trace_writer *w)
{
	if (w->finished)
		return -EINVAL;
	if (w->err)
		return w->err;
	int err = flush_chunk(w);
	if (err)
		w->err = err;
	return err;
}

static bool task_lookup(const struct trace_writer *w, uint64_t addr, uint32_t *slot)
{
	uint64_t v;
	if (addr == UINT64_MAX) {
		*slot = w->max_slot;
		return w->max_slot != FMT_NONE;
	}
	if (!u64map__get(&w->tasks, addr, &v))
		return false;
	*slot = (uint32_t)v;
	return true;
}

static int task_remember(struct trace_writer *w, uint64_t addr, uint32_t slot)
{
	if (addr == UINT64_MAX) {
		w->max_slot = slot;
		return 0;
	}
	return u64map__set(&w->tasks, addr, slot);
}

static void task_forget(struct trace_writer *w, uint64_t addr)
{
	if (addr == UINT64_MAX)
		w->max_slot = FMT_NONE;
	else
		u64map__del(&w->tasks, addr);
}

/* Writes a string ref to s (NULL: FMT_STR_NULL) at *p, defining s if new. */
static int put_str(struct trace_writer *w, uint8_t **pp, const char *s)
{
	uint8_t *p = *pp;
	uint32_t idx;
	int err;

	if (!s) {
		p += varint_put(p, FMT_STR_NULL);
	} else {
		size_t n = strlen(s);
		if (strtab__find(&w->strs, s, n, &idx)) {
			p += varint_put(p, (uint64_t)idx + FMT_STR_IDX0);
		} else {
			if ((err = strtab__add(&w->strs, s, n, &idx)))
				return err;
			p += varint_put(p, FMT_STR_NEW);
			p += varint_put(p, n);
			memcpy(p, s, n);
			p += n;
		}
	}
	*pp = p;
	return 0;
}

/* Encodes ev at the end of the pending payload; the caller made room. */
static int encode(struct trace_writer *w, const struct as_event *ev)
{
	struct fmt_state *st = &w->st;
	uint8_t type = ev->type;
	uint8_t *out = w->buf + FMT_CHUNK_HDR + w->len;
	uint8_t *p = out;
	uint64_t v;
	int err;

	/* Resolve the thread. */
	uint32_t thread;
	bool new_thread = false;
	if (u64map__get(&w->threads, (uint64_t)ev->tid + 1, &v)) {
		thread = (uint32_t)v;
	} else {
		if ((err = fmt_thread_add(st, ev->tid, &thread)))
			return err;
		if ((err = u64map__set(&w->threads, (uint64_t)ev->tid + 1, thread)))
			return err; /* state now differs from the file: sticky */
		new_thread = true;
	}

	/* Resolve the task: a new one may need a reset of the slot table first,
	 * written as a control record before this event. */
	uint32_t slot = FMT_NONE;
	bool new_task = false;
	if (ev->task && !task_lookup(w, ev->task, &slot)) {
		if (st->live >= FMT_MAX_TASKS) {
			*p++ = FMT_CTL_RESET;
			fmt_tasks_reset(st);
			u64map__clear(&w->tasks);
			w->max_slot = FMT_NONE;
		}
		uint64_t prev = st->prev_new_task;
		if ((err = fmt_task_new(st, ev->task, &slot)))
			return err;
		if ((err = task_remember(w, ev->task, slot)))
			return err;
		st->prev_new_task = prev; /* restored: the delta below needs it */
		new_task = true;
	}

	uint8_t h = type;
	uint8_t x = 0;
	uint32_t cur = fmt_cur_slot(st, thread);
	bool task_default = !new_task && slot == fmt_default_task(st, thread, type);
	uint64_t other_default = fmt_default_other(st, thread, slot, type);
	uint16_t probe_default = fmt_default_probe(st, slot, type);
	/* A brand-new slot reports its defaults too: the reader creates it
	 * before it computes them, as here. */

	if (new_thread || thread != st->cur_thread)
		h |= FMT_H_THREAD;
	if (!task_default)
		h |= FMT_H_TASK;
	if (ev->other != other_default)
		h |= FMT_H_OTHER;
	if (ev->probe != probe_default)
		x |= FMT_X_PROBE;
	if (ev->flags)
		x |= FMT_X_FLAGS;
	if (ev->str)
		x |= FMT_X_STR;
	if (x)
		h |= FMT_H_EXT;

	*p++ = h;
	if (x)
		*p++ = x;
	if (h & FMT_H_THREAD) {
		if (new_thread) {
			p += varint_put(p, FMT_THREAD_NEW);
			p += varint_put(p, ev->tid);
		} else {
			p += varint_put(p, (uint64_t)thread + 1);
		}
	}
	p += varint_put(p, zigzag_delta(ev->ts, st->prev_ts));
	if (h & FMT_H_TASK) {
		if (new_task) {
			p += varint_put(p, FMT_TASK_NEW);
			p += varint_put(p, zigzag_delta(ev->task, st->prev_new_task));
			st->prev_new_task = ev->task;
		} else if (!ev->task) {
			p += varint_put(p, FMT_TASK_NONE);
		} else if (slot == cur) {
			p += varint_put(p, FMT_TASK_CUR);
		} else {
			p += varint_put(p, (uint64_t)slot + FMT_TASK_SLOT0);
		}
	}
	if (h & FMT_H_OTHER)
		p += varint_put(p, zigzag_delta(ev->other, st->last_other[type]));
	if (x & FMT_X_PROBE)
		p += varint_put(p, ev->probe);
	if (x & FMT_X_FLAGS)
		*p++ = ev->flags;
	if (x & FMT_X_STR) {
		if ((err = put_str(w, &p, ev->str)))
			return err;
	}
	if (fmt_has_stack(type))
		p += varint_put(p, ev->stack);

	uint64_t freed = ev->type == AS_EV_FREE && slot != FMT_NONE ? ev->task : 0;
	fmt_apply(st, thread, slot, ev);
	if (freed)
		task_forget(w, freed);
	w->len = (size_t)(p - (w->buf + FMT_CHUNK_HDR));
	return 0;
}

int trace_writer__write(struct trace_writer *w, const struct as_event *ev)
{
	if (w->finished)
		return -EINVAL;
	if (w->err)
		return w->err;
	if (ev->type < 1 || ev->type >= AS_EV__MAX)
		return -EINVAL;
	if ((ev->type == AS_EV_POLL_BEGIN || fmt_is_future(ev->type)) && ev->probe >= w->n_probes)
		return -EINVAL;
	if (fmt_has_stack(ev->type) && ev->stack > w->n_stacks)
		return -EINVAL;
	size_t slen = ev->str ? strlen(ev->str) : 0;
	if (slen > FMT_MAX_STR)
		return -EINVAL;
	if (w->len && w->len + FMT_EV_MAX_FIXED + slen > FMT_CHUNK_TARGET) {
		int err = flush_chunk(w);
		if (err)
			return (w->err = err);
	}
	size_t start = w->len;
	int err = encode(w, ev);
	if (err) {
		/* Tables may be half-updated: keep the complete events before this
		 * one (free() flushes them) and refuse anything more. */
		w->len = start;
		return (w->err = err);
	}
	w->count++;
	w->events++;
	return 0;
}

static uint64_t stack_hash(const struct as_stack *s)
{
	uint64_t h = 1469598103934665603ull;
	h = (h ^ s->n_kernel) * 1099511628211ull;
	h = (h ^ s->n_user) * 1099511628211ull;
	for (uint32_t i = 0; i < (uint32_t)s->n_kernel + s->n_user; i++)
		h = (h ^ s->frames[i].addr) * 1099511628211ull;
	return h && h != UINT64_MAX ? h : 1;   /* not keys of a u64map */
}

static bool same_stack(const struct known_stack *k, const struct as_stack *s)
{
	if (k->n_kernel != s->n_kernel || k->n_user != s->n_user)
		return false;
	for (uint32_t i = 0; i < (uint32_t)s->n_kernel + s->n_user; i++)
		if (k->addrs[i] != s->frames[i].addr)
			return false;
	return true;
}

int trace_writer__stack(struct trace_writer *w, const struct as_stack *s, uint32_t *id)
{
	uint32_t n = (uint32_t)s->n_kernel + s->n_user;
	uint64_t v;
	int err;

	if (w->finished)
		return -EINVAL;
	if (w->err)
		return w->err;
	if (s->n_kernel > AS_STACK_MAX_FRAMES || s->n_user > AS_STACK_MAX_FRAMES || (n && !s->frames))
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++)
		if ((s->frames[i].sym && strlen(s->frames[i].sym) > AS_FRAME_SYM_MAX) ||
		    (s->frames[i].file && strlen(s->frames[i].file) > AS_FRAME_FILE_MAX))
			return -EINVAL;
	uint64_t h = stack_hash(s);
	if (u64map__get(&w->stack_hash, h, &v) && same_stack(&w->stacks[v - 1], s)) {
		*id = (uint32_t)v;
		return 0;
	}
	if (w->n_stacks >= FMT_MAX_STACKS)
		return -ENOSPC;
	if (w->n_stacks == w->cap_stacks) {
		uint32_t cap = w->cap_stacks ? w->cap_stacks * 2 : 64;
		struct known_stack *k = realloc(w->stacks, cap * sizeof(*k));
		if (!k)
			return (w->err = -ENOMEM);
		w->stacks = k;
		w->cap_stacks = cap;
	}
	struct known_stack *k = &w->stacks[w->n_stacks];
	k->n_kernel = s->n_kernel;
	k->n_user = s->n_user;
	k->addrs = malloc((n ? n : 1) * sizeof(*k->addrs));
	if (!k->addrs)
		return (w->err = -ENOMEM);
	for (uint32_t i = 0; i < n; i++)
		k->addrs[i] = s->frames[i].addr;
	w->n_stacks++;
	/* a collision keeps the first stack in the map: the new one is only
	 * defined again when seen again, which costs bytes, not correctness */
	if (!u64map__get(&w->stack_hash, h, NULL) &&
	    (err = u64map__set(&w->stack_hash, h, w->n_stacks)))
		return (w->err = err);

	if (w->len && w->len + FMT_STACK_MAX_BYTES > FMT_CHUNK_TARGET) {
		if ((err = flush_chunk(w)))
			return (w->err = err);
	}
	uint8_t *p = w->buf + FMT_CHUNK_HDR + w->len;
	uint64_t prev = 0;
	*p++ = FMT_CTL_STACK;
	p += varint_put(p, s->n_kernel);
	p += varint_put(p, s->n_user);
	for (uint32_t i = 0; i < n; i++) {
		p += varint_put(p, zigzag_delta(s->frames[i].addr, prev));
		prev = s->frames[i].addr;
		if ((err = put_str(w, &p, s->frames[i].sym && *s->frames[i].sym ? s->frames[i].sym : NULL)))
			return (w->err = err); /* the string table now differs from the file */
		if (w->version < 7)
			continue;
		/* version 7: file:line */
		const char *file = s->frames[i].file && *s->frames[i].file ? s->frames[i].file : NULL;
		if ((err = put_str(w, &p, file)))
			return (w->err = err);
		p += varint_put(p, file ? s->frames[i].line : 0);
	}
	w->len = (size_t)(p - (w->buf + FMT_CHUNK_HDR));
	*id = w->n_stacks;
	return 0;
}

uint32_t trace_writer__stacks(const struct trace_writer *w)
{
	return w->n_stacks;
}

int trace_writer__finish(struct trace_writer *w, const struct as_trace_end *end)
{
	if (w->finished)
		return -EINVAL;
	int err = w->err;
	if (!err)
		err = flush_chunk(w);
	int first = err;
	if (err && w->io_failed) {
		/* a full disk (or an I/O error): the file ends after its last
		 * whole chunk, with the trailer saying so much (a failed chunk
		 * freed at least the blocks it got, and the trailer is 37 bytes) */
		if (ftruncate(w->fd, (off_t)w->written) || lseek(w->fd, 0, SEEK_END) < 0) {
			err = -errno;
		} else {
			err = 0;
			w->events = w->events_written;   /* what the file holds */
			w->len = 0;
		}
	}
	if (err) {
		w->err = first ? first : err;
		return w->err;
	}
	uint8_t t[FMT_END_SIZE];
	t[0] = FMT_REC_END;
	fmt_le64(t + 1, w->events_written);
	fmt_le64(t + 9, end->lost);
	fmt_le64(t + 17, end->missed);
	fmt_le64(t + 25, end->end_ns);
	fmt_le32(t + 33, (uint32_t)crc32(0, t, 33));
	err = write_all(w->fd, t, sizeof(t));
	w->finished = true;
	w->io_failed = err != 0;
	if (!err)
		w->written += sizeof(t);
	if (close(w->fd) && !err)
		err = -errno;
	w->fd = -1;
	if (!err && first)
		w->salvaged = true;   /* complete up to the failure */
	if (err || first)
		w->err = first ? first : err;
	return w->err;
}

bool trace_writer__salvaged(const struct trace_writer *w)
{
	return w && w->salvaged;
}

uint64_t trace_writer__bytes(const struct trace_writer *w)
{
	return w->written + w->len;
}

uint64_t trace_writer__events(const struct trace_writer *w)
{
	return w->events;
}

void trace_writer__free(struct trace_writer *w)
{
	if (!w)
		return;
	if (!w->finished && !w->io_failed && w->fd >= 0)
		flush_chunk(w); /* best effort; a half-encoded event was dropped */
	if (w->fd >= 0)
		close(w->fd);
	free(w->buf);
	fmt_state_free(&w->st);
	u64map__clear(&w->threads);
	u64map__clear(&w->tasks);
	strtab__clear(&w->strs);
	u64map__clear(&w->stack_hash);
	for (uint32_t i = 0; i < w->n_stacks; i++)
		free(w->stacks[i].addrs);
	free(w->stacks);
	free(w);
}
