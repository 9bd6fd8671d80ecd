/* The flight recorder's ring (flight.h). Each event is one record in a
 * byte ring, delta-coded against the record before it:
 *   u8 len | u8 type | u8 mask | varint zigzag(ts - prev ts)
 *   [varint tid] [u8 flags] [varint probe] [varint task] [varint other]
 *   [varint string index + 1] [varint stack id]
 * (mask: which of the bracketed fields follow; tid only when it differs
 * from the record before). The decoder state at the head (the ts and tid
 * of the last evicted record) is kept, so that the oldest record decodes
 * after every eviction; 9 to 20 bytes an event in practice.
 * State (threads' and tasks' names, stacks, strings) lives in tables
 * beside the ring; see flight.h for the rule. */
#include "record/flight.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/writer.h"
#include "util/strtab.h"
#include "util/u64map.h"
#include "util/varint.h"

#define REC_MAX 64          /* longest record: 3 + 7 varints + a flags byte */
#define MIN_LIMIT (64u << 10)
#define BUCKETS 4096        /* seconds of size evictions remembered (the window's max) */
#define NS 1000000000ull

enum {
	M_FLAGS = 1, M_PROBE = 2, M_TASK = 4, M_OTHER = 8, M_STR = 16, M_STACK = 32, M_TID = 64,
};

struct fl_frame {
	uint64_t addr;
	uint32_t sym, file;   /* string index + 1, 0 none */
	uint32_t line;
};

struct fl_stack {
	uint64_t hash;
	uint16_t n_kernel, n_user;
	struct fl_frame frames[];
};

/* A task's name or declaration kept outside the ring (an evicted
 * AS_EV_SPAWN with AS_SPAWN_NAME). */
struct fl_name {
	uint64_t task, other;
	uint32_t tid, str;    /* str: string index + 1 */
	uint16_t probe;
	uint8_t flags;
	bool live;
};

struct flight {
	uint8_t *buf;
	uint64_t cap, limit, window;
	uint64_t head, used, n;            /* first record's offset, bytes, records */
	uint64_t head_ts, head_tid;        /* decoder state before the first record */
	uint64_t tail_ts, tail_tid;        /* ... after the last */
	uint64_t first_ts;                 /* ts of the first record (n > 0) */
	uint64_t last_ts;
	struct strtab strs;
	uint64_t str_bytes;
	struct u64map threads;             /* tid + 1 -> string index + 1 (0: no name) */
	struct fl_name *names;
	size_t n_names, cap_names, live_names;
	struct u64map names_task, names_id; /* AS_SPAWN_TASK by task, else by the task id
	                                       (other) -> index + 1 in names */
	struct fl_stack **stk;             /* stk[id - 1], NULL once pruned */
	uint32_t n_stk, cap_stk;
	uint64_t live_stacks, stack_bytes;
	struct u64map stk_by_hash;         /* hash -> id */
	uint64_t state_at_prune;
	struct { uint64_t sec, n; } evb[BUCKETS]; /* size evictions by second of ts */
	struct flight_stats st;
};

static uint64_t state_count(const struct flight *f)
{
	return f->threads.len + f->live_names + f->live_stacks;
}

static uint64_t state_bytes(const struct flight *f)
{
	return f->str_bytes + f->stack_bytes + f->threads.cap * 16 + f->cap_names * sizeof(*f->names) +
	       (f->names_task.cap + f->names_id.cap + f->stk_by_hash.cap) * 16 +
	       (uint64_t)f->cap_stk * sizeof(*f->stk);
}

struct flight *flight__new(uint64_t limit, uint64_t window_ns)
{
	struct flight *f;

	if (limit < MIN_LIMIT) {
		errno = EINVAL;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->limit = limit;
	f->cap = limit - limit / 8;   /* an eighth for the state */
	f->window = window_ns;
	f->buf = malloc(f->cap);      /* pages are only touched as the ring fills */
	if (!f->buf) {
		free(f);
		errno = ENOMEM;
		return NULL;
	}
	return f;
}

void flight__free(struct flight *f)
{
	if (!f)
		return;
	free(f->buf);
	strtab__clear(&f->strs);
	u64map__clear(&f->threads);
	free(f->names);
	u64map__clear(&f->names_task);
	u64map__clear(&f->names_id);
	for (uint32_t i = 0; i < f->n_stk; i++)
		free(f->stk[i]);
	free(f->stk);
	u64map__clear(&f->stk_by_hash);
	free(f);
}

/* string index + 1 of s (interned), 0 for NULL; -ENOMEM as (uint32_t)-1 */
static int intern(struct flight *f, const char *s, uint32_t *out)
{
	uint32_t idx;
	size_t len;

	*out = 0;
	if (!s)
		return 0;
	len = strlen(s);
	int added = strtab__intern(&f->strs, s, len, &idx);
	if (added < 0)
		return added;
	if (added)
		f->str_bytes += len + 1 + 24;
	*out = idx + 1;
	return 0;
}

static const char *str_of(const struct flight *f, uint32_t ref)
{
	return ref ? strtab__get(&f->strs, ref - 1) : NULL;
}

static void ring_put(struct flight *f, uint64_t pos, const uint8_t *p, size_t n)
{
	size_t first = (size_t)(f->cap - pos) < n ? (size_t)(f->cap - pos) : n;

	memcpy(f->buf + pos, p, first);
	if (first < n)
		memcpy(f->buf, p + first, n - first);
}

static void ring_get(const struct flight *f, uint64_t pos, uint8_t *p, size_t n)
{
	size_t first = (size_t)(f->cap - pos) < n ? (size_t)(f->cap - pos) : n;

	memcpy(p, f->buf + pos, first);
	if (first < n)
		memcpy(p + first, f->buf, n - first);
}

/* Decodes the record at pos against (*ts, *tid), which it advances; its
 * length. */
static size_t decode_at(const struct flight *f, uint64_t pos, uint64_t *ts, uint64_t *tid,
			struct as_event *ev)
{
	uint8_t r[REC_MAX];
	const uint8_t *p = r + 3, *end;
	uint64_t v = 0;
	size_t len;

	ring_get(f, pos, r, 1);
	len = r[0];
	ring_get(f, pos, r, len);
	end = r + len;
	memset(ev, 0, sizeof(*ev));
	ev->type = r[1];
	uint8_t m = r[2];
	varint_get(&p, end, &v);
	ev->ts = *ts = zigzag_apply(*ts, v);
	if (m & M_TID) {
		varint_get(&p, end, &v);
		*tid = v;
	}
	ev->tid = (uint32_t)*tid;
	if (m & M_FLAGS)
		ev->flags = *p++;
	if (m & M_PROBE && !varint_get(&p, end, &v))
		ev->probe = (uint16_t)v;
	if (m & M_TASK)
		varint_get(&p, end, &ev->task);
	if (m & M_OTHER)
		varint_get(&p, end, &ev->other);
	if (m & M_STR && !varint_get(&p, end, &v))
		ev->str = str_of(f, (uint32_t)v);
	if (m & M_STACK && !varint_get(&p, end, &v))
		ev->stack = (uint32_t)v;
	return len;
}

static bool is_name(const struct as_event *ev)
{
	return ev->type == AS_EV_SPAWN && (ev->flags & AS_SPAWN_NAME);
}

static bool is_state(const struct as_event *ev)
{
	return ev->type == AS_EV_THREAD || is_name(ev);
}

/* The state an evicted record leaves behind. */
static void keep_state(struct flight *f, const struct as_event *ev)
{
	uint32_t sref = 0;

	if (!is_state(ev))
		return;
	if (intern(f, ev->str, &sref))   /* already interned: cannot fail */
		return;
	if (ev->type == AS_EV_THREAD) {
		if (u64map__set(&f->threads, (uint64_t)ev->tid + 1, sref))
			f->st.refused++;
		return;
	}
	bool by_task = (ev->flags & AS_SPAWN_TASK) != 0;
	struct u64map *m = by_task ? &f->names_task : &f->names_id;
	uint64_t key = by_task ? ev->task : ev->other, v;
	if (!key || key == UINT64_MAX)
		return;
	struct fl_name nm = { .task = ev->task, .other = ev->other, .tid = ev->tid, .str = sref,
			      .probe = ev->probe, .flags = ev->flags, .live = true };
	if (u64map__get(m, key, &v)) {
		f->names[v - 1] = nm;
		return;
	}
	if (f->n_names == f->cap_names) {
		size_t cap = f->cap_names ? f->cap_names * 2 : 64;
		struct fl_name *n = realloc(f->names, cap * sizeof(*n));
		if (!n) {
			f->st.refused++;
			return;
		}
		f->names = n;
		f->cap_names = cap;
	}
	f->names[f->n_names] = nm;
	if (u64map__set(m, key, f->n_names + 1)) {
		f->st.refused++;
		return;
	}
	f->n_names++;
	f->live_names++;
}

/* Evicts the first record; its event in *ev. */
static void evict(struct flight *f, struct as_event *ev, bool for_size)
{
	size_t len = decode_at(f, f->head, &f->head_ts, &f->head_tid, ev);

	f->head = (f->head + len) % f->cap;
	f->used -= len;
	f->n--;
	keep_state(f, ev);
	if (for_size) {
		uint64_t sec = ev->ts / NS;
		f->st.evicted_size++;
		if (f->evb[sec % BUCKETS].sec != sec)
			f->evb[sec % BUCKETS].sec = sec, f->evb[sec % BUCKETS].n = 0;
		f->evb[sec % BUCKETS].n++;
	} else {
		f->st.evicted_age++;
	}
	if (f->n) {
		uint64_t ts = f->head_ts, tid = f->head_tid;
		struct as_event next;
		decode_at(f, f->head, &ts, &tid, &next);
		f->first_ts = next.ts;
	}
}

int flight__push(struct flight *f, const struct as_event *ev)
{
	uint8_t r[REC_MAX], *p = r + 3, m = 0;
	uint32_t sref = 0;
	int err;

	if (ev->stack && (ev->stack > f->n_stk || !f->stk[ev->stack - 1])) {
		f->st.refused++;
		return -EINVAL;
	}
	if ((err = intern(f, ev->str, &sref))) {
		f->st.refused++;
		return err;
	}
	p += varint_put(p, zigzag_delta(ev->ts, f->tail_ts));
	if (ev->tid != f->tail_tid || !f->st.pushed) {
		m |= M_TID;
		p += varint_put(p, ev->tid);
	}
	if (ev->flags) {
		m |= M_FLAGS;
		*p++ = ev->flags;
	}
	if (ev->probe) {
		m |= M_PROBE;
		p += varint_put(p, ev->probe);
	}
	if (ev->task) {
		m |= M_TASK;
		p += varint_put(p, ev->task);
	}
	if (ev->other) {
		m |= M_OTHER;
		p += varint_put(p, ev->other);
	}
	if (sref) {
		m |= M_STR;
		p += varint_put(p, sref);
	}
	if (ev->stack) {
		m |= M_STACK;
		p += varint_put(p, ev->stack);
	}
	size_t len = (size_t)(p - r);
	r[0] = (uint8_t)len;
	r[1] = ev->type;
	r[2] = m;
	while (f->n && f->used + len > f->cap) {
		struct as_event old;
		evict(f, &old, true);
	}
	uint64_t tail = (f->head + f->used) % f->cap;
	ring_put(f, tail, r, len);
	f->used += len;
	if (!f->n++)
		f->first_ts = ev->ts;
	f->tail_ts = ev->ts;
	f->tail_tid = ev->tid;
	f->last_ts = ev->ts;
	f->st.pushed++;
	return 0;
}

static uint64_t hash_stack(const struct as_stack *st)
{
	uint64_t h = 1469598103934665603ull;
	h = (h ^ st->n_kernel) * 1099511628211ull;
	h = (h ^ st->n_user) * 1099511628211ull;
	for (uint32_t i = 0; i < (uint32_t)st->n_kernel + st->n_user; i++)
		h = (h ^ st->frames[i].addr) * 1099511628211ull;
	return h && h != UINT64_MAX ? h : 1;
}

static bool same(const struct fl_stack *k, const struct as_stack *st)
{
	if (k->n_kernel != st->n_kernel || k->n_user != st->n_user)
		return false;
	for (uint32_t i = 0; i < (uint32_t)st->n_kernel + st->n_user; i++)
		if (k->frames[i].addr != st->frames[i].addr)
			return false;
	return true;
}

int flight__stack(struct flight *f, const struct as_stack *st, uint32_t *id)
{
	uint32_t n = (uint32_t)st->n_kernel + st->n_user;
	uint64_t h = hash_stack(st), v;
	struct fl_stack *k;
	int err;

	*id = 0;
	if (st->n_kernel > AS_STACK_MAX_FRAMES || st->n_user > AS_STACK_MAX_FRAMES ||
	    (n && !st->frames))
		return -EINVAL;
	if (u64map__get(&f->stk_by_hash, h, &v) && f->stk[v - 1] && same(f->stk[v - 1], st)) {
		*id = (uint32_t)v;
		return 0;
	}
	if (f->n_stk == f->cap_stk) {
		uint32_t cap = f->cap_stk ? f->cap_stk * 2 : 64;
		struct fl_stack **s = realloc(f->stk, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		f->stk = s;
		f->cap_stk = cap;
	}
	k = calloc(1, sizeof(*k) + n * sizeof(k->frames[0]));
	if (!k)
		return -ENOMEM;
	k->hash = h;
	k->n_kernel = st->n_kernel;
	k->n_user = st->n_user;
	for (uint32_t i = 0; i < n; i++) {
		k->frames[i].addr = st->frames[i].addr;
		k->frames[i].line = st->frames[i].line;
		if ((err = intern(f, st->frames[i].sym, &k->frames[i].sym)) ||
		    (err = intern(f, st->frames[i].file, &k->frames[i].file))) {
			free(k);
			return err;
		}
	}
	f->stk[f->n_stk++] = k;
	/* a collision keeps the first in the map: the new one is kept again
	 * when seen again (bytes, not correctness) */
	if (!u64map__get(&f->stk_by_hash, h, NULL))
		(void)u64map__set(&f->stk_by_hash, h, f->n_stk);   /* no memory: not deduplicated */
	f->live_stacks++;
	f->stack_bytes += sizeof(*k) + n * sizeof(k->frames[0]) + 16;
	*id = f->n_stk;
	return 0;
}

/* What the ring's events refer to: tids + 1, tasks, task ids, stacks. */
struct refs {
	struct u64map tids, tasks, ids, stacks;
	bool failed;
};

static void ref(struct refs *r, struct u64map *m, uint64_t key)
{
	if (key && key != UINT64_MAX && u64map__set(m, key, 1))
		r->failed = true;
}

static void note_refs(struct refs *r, const struct as_event *ev)
{
	ref(r, &r->tids, (uint64_t)ev->tid + 1);
	ref(r, &r->tasks, ev->task);
	if (ev->type == AS_EV_POLL_BEGIN)
		ref(r, &r->ids, ev->other);   /* a task mode name applies at a poll of that id */
	if (ev->stack)
		ref(r, &r->stacks, ev->stack);
}

static void refs_clear(struct refs *r)
{
	u64map__clear(&r->tids);
	u64map__clear(&r->tasks);
	u64map__clear(&r->ids);
	u64map__clear(&r->stacks);
}

/* Calls fn for each record in ring order. */
static void each(const struct flight *f, void (*fn)(void *, const struct as_event *), void *ctx)
{
	uint64_t pos = f->head, ts = f->head_ts, tid = f->head_tid;
	struct as_event ev;

	for (uint64_t i = 0; i < f->n; i++) {
		pos = (pos + decode_at(f, pos, &ts, &tid, &ev)) % f->cap;
		fn(ctx, &ev);
	}
}

static void collect_all(void *ctx, const struct as_event *ev)
{
	note_refs(ctx, ev);
}

static bool name_wanted(const struct fl_name *nm, const struct refs *r)
{
	if (nm->flags & AS_SPAWN_TASK)
		return u64map__get(&r->tasks, nm->task, NULL);
	return u64map__get(&r->ids, nm->other, NULL);
}

uint64_t flight__prune(struct flight *f)
{
	struct refs r = { 0 };
	uint64_t dropped = 0;
	size_t j = 0;

	each(f, collect_all, &r);
	if (r.failed)
		goto out;   /* no memory: keep everything */
	for (size_t i = 0; i < f->threads.cap; i++) {
		uint64_t k = f->threads.keys[i];
		if (k && k != UINT64_MAX && !u64map__get(&r.tids, k, NULL)) {
			u64map__del(&f->threads, k);
			dropped++;
		}
	}
	/* names: compacted, their maps rebuilt */
	u64map__clear(&f->names_task);
	u64map__clear(&f->names_id);
	for (size_t i = 0; i < f->n_names; i++) {
		struct fl_name *nm = &f->names[i];
		if (!name_wanted(nm, &r)) {
			dropped++;
			continue;
		}
		bool by_task = (nm->flags & AS_SPAWN_TASK) != 0;
		f->names[j] = *nm;
		if (u64map__set(by_task ? &f->names_task : &f->names_id, by_task ? nm->task : nm->other,
				j + 1))
			f->st.refused++;
		j++;
	}
	f->n_names = f->live_names = j;
	for (uint32_t id = 1; id <= f->n_stk; id++) {
		struct fl_stack *k = f->stk[id - 1];
		uint64_t v;
		if (!k || u64map__get(&r.stacks, id, NULL))
			continue;
		if (u64map__get(&f->stk_by_hash, k->hash, &v) && v == id)
			u64map__del(&f->stk_by_hash, k->hash);
		f->stack_bytes -= sizeof(*k) + ((size_t)k->n_kernel + k->n_user) * sizeof(k->frames[0]) + 16;
		free(k);
		f->stk[id - 1] = NULL;
		f->live_stacks--;
		dropped++;
	}
out:
	refs_clear(&r);
	f->state_at_prune = state_count(f);
	return dropped;
}

void flight__expire(struct flight *f, uint64_t now_ns, uint64_t hold_ns)
{
	uint64_t cut = f->window && now_ns > f->window ? now_ns - f->window : 0;
	struct as_event ev;

	if (hold_ns && hold_ns < cut)
		cut = hold_ns;
	while (f->n && f->first_ts < cut)
		evict(f, &ev, false);
	if (state_count(f) > 2 * f->state_at_prune + 64)
		flight__prune(f);
}

void flight__stats(const struct flight *f, struct flight_stats *st)
{
	*st = f->st;
	st->events = f->n;
	st->ring_bytes = f->used;
	st->ring_cap = f->cap;
	st->state_bytes = state_bytes(f);
	st->state_records = f->threads.len + f->live_names;
	st->stacks = f->live_stacks;
	st->oldest_ns = f->n ? f->first_ts : 0;
	st->newest_ns = f->n ? f->last_ts : 0;
}

/* the writing of a snapshot */
struct wctx {
	struct flight *f;
	struct trace_writer *w;
	struct refs r;
	struct u64map stack_ids;   /* flight id -> file id */
	uint64_t from, to;
	uint64_t start;            /* the first event's ts of the range (state records
	                              are stamped so, the header's clock too) */
	int err;
	struct flight_written *out;
	bool state_pass;
};

static bool in_range(const struct wctx *c, const struct as_event *ev)
{
	return ev->ts <= c->to && (ev->ts >= c->from || is_state(ev));
}

static void collect_range(void *ctx, const struct as_event *ev)
{
	struct wctx *c = ctx;

	if (in_range(c, ev) && !is_state(ev)) {
		note_refs(&c->r, ev);
		if (ev->ts >= c->from && (!c->start || ev->ts < c->start))
			c->start = ev->ts;
	}
}

/* Writes ev; a state record (before the range's start) at the start, and
 * not in the range's first and last ts. */
static int put(struct wctx *c, struct as_event *ev)
{
	bool state = ev->ts <= c->start && is_state(ev);

	if (ev->ts < c->start)
		ev->ts = c->start;
	if (ev->stack) {
		const struct fl_stack *k = c->f->stk[ev->stack - 1];
		uint64_t v;
		if (u64map__get(&c->stack_ids, ev->stack, &v)) {
			ev->stack = (uint32_t)v;
		} else {
			uint32_t n = (uint32_t)k->n_kernel + k->n_user, id;
			struct as_frame *fr = calloc(n ? n : 1, sizeof(*fr));
			if (!fr)
				return -ENOMEM;
			for (uint32_t i = 0; i < n; i++)
				fr[i] = (struct as_frame){ .addr = k->frames[i].addr,
							   .sym = str_of(c->f, k->frames[i].sym),
							   .file = str_of(c->f, k->frames[i].file),
							   .line = k->frames[i].line };
			struct as_stack st = { .n_kernel = k->n_kernel, .n_user = k->n_user, .frames = fr };
			int err = trace_writer__stack(c->w, &st, &id);
			free(fr);
			if (err)
				return err;
			if (u64map__set(&c->stack_ids, ev->stack, id))
				return -ENOMEM;
			ev->stack = id;
		}
	}
	int err = trace_writer__write(c->w, ev);
	if (err)
		return err;
	c->out->events++;
	if (state)
		return 0;
	if (!c->out->first_ns || ev->ts < c->out->first_ns)
		c->out->first_ns = ev->ts;
	if (ev->ts > c->out->last_ns)
		c->out->last_ns = ev->ts;
	return 0;
}

static void write_one(void *ctx, const struct as_event *e)
{
	struct wctx *c = ctx;
	struct as_event ev = *e;

	if (c->err || !in_range(c, &ev))
		return;
	if (ev.ts < c->start)
		c->out->state++;
	c->err = put(c, &ev);
}

int flight__write(struct flight *f, const struct as_trace_meta *meta, const char *path,
		  uint64_t from_ns, uint64_t to_ns, uint64_t lost, uint64_t missed,
		  struct flight_written *out)
{
	struct as_trace_meta m = *meta;
	struct wctx c = { .f = f, .from = from_ns, .to = to_ns, .out = out };
	char tmp[4096];
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (snprintf(tmp, sizeof(tmp), "%s.part", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	for (uint64_t sec = from_ns / NS; sec <= to_ns / NS && sec - from_ns / NS < BUCKETS; sec++)
		if (f->evb[sec % BUCKETS].sec == sec)
			out->evicted_size += f->evb[sec % BUCKETS].n;
	if (m.flight_trigger)
		m.flight_evicted = out->evicted_size;   /* the range is incomplete by that much */
	each(f, collect_range, &c);
	if (c.r.failed) {
		err = -ENOMEM;
		goto fail;
	}
	if (!c.start)
		c.start = from_ns;
	/* the header's clocks at the range's first event (report's times count
	 * from it): the window's start unless evicted for size, or before the
	 * recording */
	if (meta->clock_mono_ns && c.start > meta->clock_mono_ns) {
		m.clock_real_ns = meta->clock_real_ns + (c.start - meta->clock_mono_ns);
		m.clock_mono_ns = c.start;
	}
	c.w = trace_writer__new(tmp, &m);
	if (!c.w) {
		err = -errno;
		refs_clear(&c.r);
		unlink(tmp);
		return err;
	}
	/* state first: thread names, then task names, of what the range refers to */
	for (size_t i = 0; !err && i < f->threads.cap; i++) {
		uint64_t k = f->threads.keys[i];
		if (!k || k == UINT64_MAX || !u64map__get(&c.r.tids, k, NULL))
			continue;
		struct as_event ev = { .type = AS_EV_THREAD, .tid = (uint32_t)(k - 1), .ts = c.start,
				       .str = str_of(f, (uint32_t)f->threads.vals[i]) };
		if (!ev.str)
			ev.str = "";
		err = put(&c, &ev);
		out->state++;
	}
	for (size_t i = 0; !err && i < f->n_names; i++) {
		const struct fl_name *nm = &f->names[i];
		if (!name_wanted(nm, &c.r))
			continue;
		struct as_event ev = { .type = AS_EV_SPAWN, .flags = nm->flags, .tid = nm->tid,
				       .ts = c.start, .task = nm->task, .other = nm->other,
				       .probe = nm->probe, .str = str_of(f, nm->str) };
		err = put(&c, &ev);
		out->state++;
	}
	if (err)
		goto fail;
	each(f, write_one, &c);
	if ((err = c.err))
		goto fail;
	struct as_trace_end end = { .lost = lost, .missed = missed, .end_ns = to_ns };
	trace_writer__counts(c.w, lost, missed, to_ns);
	err = trace_writer__finish(c.w, &end);
	out->bytes = trace_writer__bytes(c.w);
	trace_writer__free(c.w);
	c.w = NULL;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	refs_clear(&c.r);
	u64map__clear(&c.stack_ids);
	return err;
fail:
	trace_writer__free(c.w);
	unlink(tmp);
	refs_clear(&c.r);
	u64map__clear(&c.stack_ids);
	return err;
}
