/* perfetto: Chrome trace-event JSON (see perfetto.h for what it holds). The
 * poll tracker of output/folded.h follows the tasks; this file turns what it
 * reports into trace events, one JSON object per line, formatted into a
 * buffer of its own with hand-rolled number formatting and handed to the
 * FILE in 64 KiB writes (a 10M-event trace gives tens of millions of
 * objects, 3 GB). Strings are escaped once and cached by name id.
 * Pure C: no libbpf, no reader; writes only to the FILE* given. */
#include "output/perfetto.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/futures.h"
#include "analysis/task_model.h"
#include "output/folded.h"
#include "util/fmt.h"
#include "util/task_id.h"
#include "util/u64map.h"

/* Sample (one object a line):
 *   {"ph":"X","pid":12407,"tid":12409,"ts":3182.726,"dur":5.099,"name":"chain::producer",
 *    "cat":"poll","args":{"task":5,"tokio_id":5,"outcome":"Pending",
 *    "spawned_at":"src/bin/chain.rs:43:17","header":"0x56327f1d7580"}}
 *   {"ph":"s","pid":12407,"tid":12409,"ts":3182.731,"id":7,"name":"wake","cat":"wake"}
 *   {"ph":"f","bp":"e","pid":12407,"tid":12409,"ts":3182.739,"id":7,"name":"wake","cat":"wake"}
 *   {"ph":"C","pid":12407,"ts":3182.726,"name":"runnable tasks","args":{"tasks":1}}
 */

struct perfetto {
	FILE *out;
	char *buf;              /* PERFETTO_BUF bytes, len of them pending */
	size_t len;
	struct ptrack *pt;
	uint32_t pid;
	char *target, *cmdline, *runtime, *build_id;   /* copies of meta's, for metadata */
	uint64_t base;          /* ts origin, ns */
	bool have_base;
	uint64_t clock_mono;
	uint64_t last_ts;
	bool first;             /* no event written yet: no comma */
	char **esc_names;       /* by name_id: escaped future name (NULL: not yet) */
	size_t n_esc_names;
	char **esc_files;       /* by spawn_id */
	size_t n_esc_files;
	uint64_t runnable_shown, parked_shown;
	bool counters_shown;
	uint64_t events, slices, flows, flow_id;
	struct futures *fu;     /* future frames (record --futures), NULL without */
	struct task_model *model; /* what the tracker and fu observe */
	bool own_model;
	struct u64map named;    /* tid + 1 -> 1: its thread_name written */
	char **esc_fns, **esc_fn_files; /* by function: escaped name, source file */
	size_t n_esc_fns, n_esc_fn_files;
	uint64_t future_slices;
	/* begin_ev()'s `","pid":PID,"tid":` for the target's pid and for
	 * PERFETTO_TASKS_PID, formatted once */
	char pid_pre[2][40];
	uint8_t pid_pre_len[2];
	bool finished;
	int err;                /* sticky -errno of the callback */
};

/* ---- writing ---- */

/* Output goes through a buffer of our own, PERFETTO_BUF bytes (L2-sized:
 * the kernel copies it into the page cache fastest in such chunks), handed
 * to the FILE with one fwrite() when full: no stdio call per field. */
#define PERFETTO_BUF (64 * 1024)

static __attribute__((noinline)) void flush(struct perfetto *p)
{
	if (p->len && fwrite_unlocked(p->buf, 1, p->len, p->out) != p->len && !p->err)
		p->err = -EIO;
	p->len = 0;
}

/* Room for n more bytes in the buffer (n <= PERFETTO_BUF). */
static inline char *room(struct perfetto *p, size_t n)
{
	if (__builtin_expect(p->len + n > PERFETTO_BUF, 0))
		flush(p);
	return p->buf + p->len;
}

static __attribute__((noinline)) void put_big(struct perfetto *p, const char *s, size_t n)
{
	flush(p);
	if (fwrite_unlocked(s, 1, n, p->out) != n && !p->err)
		p->err = -EIO;
}

/* Inline, so that a literal's copy is a few moves of a known size. */
static inline __attribute__((always_inline)) void put_n(struct perfetto *p, const char *s,
							size_t n)
{
	if (__builtin_expect(n > PERFETTO_BUF, 0)) {
		put_big(p, s, n);
		return;
	}
	memcpy(room(p, n), s, n);
	p->len += n;
}

/* Inline: strlen() of a literal is then a constant. */
static inline __attribute__((always_inline)) void put(struct perfetto *p, const char *s)
{
	put_n(p, s, strlen(s));
}

/* A string literal: its length known at compile time. */
#define PUT(p, lit) put_n((p), "" lit, sizeof(lit) - 1)

static inline void put_c(struct perfetto *p, char c)
{
	*room(p, 1) = c;
	p->len++;
}

static const char digits2[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static const uint64_t pow10_u64[20] = {
	1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
	100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
	10000000000000ULL, 100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
	100000000000000000ULL, 1000000000000000000ULL, 10000000000000000000ULL,
};

/* Decimal digits of v (1 .. 20). */
static inline unsigned ndigits(uint64_t v)
{
	/* about log10 from the bit length, then one comparison; v | 1: 0 has
	 * one digit (10^t is even, so v | 1 compares as v does for t > 0) */
	unsigned t = ((64u - (unsigned)__builtin_clzll(v | 1)) * 1233u) >> 12;

	return t + 1 - ((v | 1) < pow10_u64[t]);
}

/* The two digits of v < 100 as the 16-bit word that holds them in memory. */
static inline uint64_t pair(uint32_t v)
{
	uint16_t w;

	memcpy(&w, digits2 + 2 * v, 2);
	return w;
}

/* v < 10^8 as 8 decimal digits (leading zeros), in memory order in one
 * 64-bit word: two halves of four digits, each two pairs from the table, in
 * 32-bit arithmetic, put together in a register (bytes stored one pair at a
 * time and read back as a word would stall the read: no store forwarding
 * from four stores to one load). */
static inline uint64_t digits8(uint32_t v)
{
	uint32_t hi = v / 10000, lo = v % 10000;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return pair(hi / 100) | pair(hi % 100) << 16 | pair(lo / 100) << 32 |
	       pair(lo % 100) << 48;
#else
	return pair(hi / 100) << 48 | pair(hi % 100) << 32 | pair(lo / 100) << 16 |
	       pair(lo % 100);
#endif
}

/* The last n (1 .. 8) of the 8 digits of w (digits8()), stored at dst as
 * one 8-byte move: the digits, then 8 - n bytes that the next write covers
 * (room() is asked for more than the digits). */
static inline void put8_tail(char *dst, uint64_t w, unsigned n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	w = n == 8 ? w : w >> (8 * (8 - n));
#else
	w = n == 8 ? w : w << (8 * (8 - n));
#endif
	memcpy(dst, &w, 8);
}

/* v in decimal at dst, n = ndigits(v) of them: up to 4 digits from pairs,
 * up to 16 by blocks of eight (32-bit arithmetic, independent pairs rather
 * than a chain of 64-bit divisions), larger values two digits at a time. May
 * write up to 8 bytes past dst + n (room() keeps that spare). */
static inline void fmt_u64(char *dst, uint64_t v, unsigned n)
{
	if (n <= 2) {
		if (n == 2)
			memcpy(dst, digits2 + 2 * v, 2);
		else
			dst[0] = (char)('0' + v);
		return;
	}
	if (n <= 4) {
		/* "0000" then the pairs; the zeros shifted out by put8_tail() */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		uint64_t w = 0x30303030ULL | pair((uint32_t)v / 100) << 32 |
			     pair((uint32_t)v % 100) << 48;
#else
		uint64_t w = 0x3030303000000000ULL | pair((uint32_t)v / 100) << 16 |
			     pair((uint32_t)v % 100);
#endif
		put8_tail(dst, w, n);
		return;
	}
	if (n <= 8) {
		put8_tail(dst, digits8((uint32_t)v), n);
		return;
	}
	if (n <= 16) {
		put8_tail(dst, digits8((uint32_t)(v / 100000000)), n - 8);
		uint64_t w = digits8((uint32_t)(v % 100000000));

		memcpy(dst + n - 8, &w, 8);
		return;
	}
	char *s = dst + n;

	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);

		v /= 100;
		s -= 2;
		memcpy(s, digits2 + 2 * r, 2);
	}
	if (v >= 10)
		memcpy(s - 2, digits2 + 2 * v, 2);
	else
		s[-1] = (char)('0' + v);
}

/* Integers go straight into the buffer. */
static inline void put_u64(struct perfetto *p, uint64_t v)
{
	unsigned n = ndigits(v);

	fmt_u64(room(p, 20), v, n);
	p->len += n;
}

static void put_hex(struct perfetto *p, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char b[20];
	int i = sizeof(b);

	do
		b[--i] = digits[v & 15];
	while (v >>= 4);
	b[--i] = 'x';
	b[--i] = '0';
	put_n(p, b + i, sizeof(b) - i);
}

/* ns as microseconds with three decimals: 1234567 -> 1234.567. */
static inline void put_us(struct perfetto *p, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)(-(ns + 1)) + 1 : (uint64_t)ns, q = a / 1000;
	unsigned frac = (unsigned)(a % 1000), n = ndigits(q);
	char *d = room(p, 26);

	if (ns < 0)
		*d++ = '-';
	fmt_u64(d, q, n);
	d += n;
	d[0] = '.';
	memcpy(d + 1, digits2 + 2 * (frac / 10), 2);
	d[3] = (char)('0' + frac % 10);
	p->len += (ns < 0) + n + 4;
}

/* A timestamp as put_us() writes it: relative to base. */
static inline void put_ts(struct perfetto *p, uint64_t ts)
{
	put_us(p, (int64_t)(ts - p->base));
}

/* ---- writing through a cursor: the hot objects ----
 * An object is written at a cursor into room asked for once (its size
 * bound, strings' lengths included), and the buffer's length set once at
 * its end, instead of a check and an update of the length for each of its
 * some twenty pieces. A bound past W_MAX (a name of tens of KiB) takes the
 * piece-by-piece writers above. Writers may store up to 40 bytes past what
 * they write (whole words): W_SLACK of room more. */
#define W_SLACK 48
#define W_MAX (PERFETTO_BUF / 2)

static inline char *w_room(struct perfetto *p, size_t n)
{
	return room(p, n + W_SLACK);
}

static inline void w_end(struct perfetto *p, char *d)
{
	p->len = (size_t)(d - p->buf);
}

#define WLIT(d, lit) ((d) = (char *)memcpy((d), "" lit, sizeof(lit) - 1) + sizeof(lit) - 1)

static inline char *w_mem(char *d, const char *s, size_t n)
{
	memcpy(d, s, n);
	return d + n;
}

static inline char *w_u64(char *d, uint64_t v)
{
	unsigned n = ndigits(v);

	fmt_u64(d, v, n);
	return d + n;
}

static inline char *w_us(char *d, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)(-(ns + 1)) + 1 : (uint64_t)ns, q = a / 1000;
	unsigned frac = (unsigned)(a % 1000), n = ndigits(q);

	if (ns < 0)
		*d++ = '-';
	fmt_u64(d, q, n);
	d += n;
	d[0] = '.';
	memcpy(d + 1, digits2 + 2 * (frac / 10), 2);
	d[3] = (char)('0' + frac % 10);
	return d + 4;
}

static inline char *w_ts(const struct perfetto *p, char *d, uint64_t ts)
{
	return w_us(d, (int64_t)(ts - p->base));
}

static inline char *w_hex(char *d, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char b[20];
	int i = sizeof(b);

	do
		b[--i] = digits[v & 15];
	while (v >>= 4);
	b[--i] = 'x';
	b[--i] = '0';
	return w_mem(d, b + i, sizeof(b) - i);
}

/* Returns a malloc'd JSON string body for s (no quotes): escapes quotes,
 * backslashes and control characters, invalid UTF-8 -> U+FFFD. NULL on ENOMEM. */
static char *escape(const char *s)
{
	size_t n = strlen(s), o = 0;
	char *r = malloc(n * 6 + 1);

	if (!r)
		return NULL;
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\') {
			r[o++] = '\\';
			r[o++] = (char)c;
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			o += (size_t)sprintf(r + o, "\\u%04x", c);
			i++;
		} else if (c < 0x80) {
			r[o++] = (char)c;
			i++;
		} else {
			size_t len = fmt_utf8_len(s + i, n - i);

			if (!len) {
				memcpy(r + o, "\\ufffd", 6);
				o += 6;
				i++;
			} else {
				memcpy(r + o, s + i, len);
				o += len;
				i += len;
			}
		}
	}
	r[o] = '\0';
	return r;
}

static void put_str(struct perfetto *p, const char *s)
{
	char *e = escape(s ? s : "");

	put_c(p, '"');
	if (e)
		put(p, e);
	else
		p->err = -ENOMEM;
	put_c(p, '"');
	free(e);
}

/* The cached escaped string of id in (*cache, *n), escaping s on first use. */
static const char *cached(struct perfetto *p, char ***cache, size_t *n, uint32_t id,
			  const char *s)
{
	if (id >= *n) {
		size_t nn = *n ? *n : 16;
		char **c;

		while (nn <= id)
			nn *= 2;
		c = realloc(*cache, nn * sizeof(*c));
		if (!c) {
			p->err = -ENOMEM;
			return "";
		}
		memset(c + *n, 0, (nn - *n) * sizeof(*c));
		*cache = c;
		*n = nn;
	}
	if (!(*cache)[id] && !((*cache)[id] = escape(s))) {
		p->err = -ENOMEM;
		return "";
	}
	return (*cache)[id];
}

static const char *task_name(struct perfetto *p, const struct ptrack_task *t)
{
	if (!t->name)
		return "unknown";
	return cached(p, &p->esc_names, &p->n_esc_names, t->name_id, t->name);
}

/* Starts one trace event object: separator, phase, pid, tid. */
static inline __attribute__((always_inline)) void begin_ev(struct perfetto *p, char ph,
							    uint32_t pid, uint64_t tid)
{
	if (p->first)
		PUT(p, "\n{\"ph\":\"");
	else
		PUT(p, ",\n{\"ph\":\"");
	p->first = false;
	put_c(p, ph);
	int k = pid == p->pid ? 0 : pid == PERFETTO_TASKS_PID ? 1 : -1;

	if (k >= 0) {
		memcpy(room(p, sizeof(p->pid_pre[k])), p->pid_pre[k], sizeof(p->pid_pre[k]));
		p->len += p->pid_pre_len[k];
	} else {
		PUT(p, "\",\"pid\":");
		put_u64(p, pid);
		PUT(p, ",\"tid\":");
	}
	put_u64(p, tid);
}

/* A complete slice ("X") from..to; name is already escaped. Leaves the object
 * open for args: the caller ends it with "}" or ",\"args\":{...}}". */
static inline __attribute__((always_inline)) void slice(struct perfetto *p, uint32_t pid,
							 uint64_t tid, uint64_t from, uint64_t to,
							 const char *name, const char *cat)
{
	begin_ev(p, 'X', pid, tid);
	PUT(p, ",\"ts\":");
	put_ts(p, from);
	PUT(p, ",\"dur\":");
	put_us(p, (int64_t)(to - from));
	PUT(p, ",\"name\":\"");
	put(p, name);
	PUT(p, "\",\"cat\":\"");
	put(p, cat);
	PUT(p, "\"");
}

/* begin_ev() at cursor d. */
static inline __attribute__((always_inline)) char *w_begin(struct perfetto *p, char *d,
							    char ph, uint32_t pid, uint64_t tid)
{
	if (p->first)
		WLIT(d, "\n{\"ph\":\"");
	else
		WLIT(d, ",\n{\"ph\":\"");
	p->first = false;
	*d++ = ph;
	int k = pid == p->pid ? 0 : pid == PERFETTO_TASKS_PID ? 1 : -1;

	if (k >= 0) {
		memcpy(d, p->pid_pre[k], sizeof(p->pid_pre[k]));
		d += p->pid_pre_len[k];
	} else {
		WLIT(d, "\",\"pid\":");
		d = w_u64(d, pid);
		WLIT(d, ",\"tid\":");
	}
	return w_u64(d, tid);
}

/* slice() at cursor d: name (already escaped, nlen bytes) and cat. */
static inline __attribute__((always_inline)) char *w_slice(struct perfetto *p, char *d,
							    uint32_t pid, uint64_t tid,
							    uint64_t from, uint64_t to,
							    const char *name, size_t nlen,
							    const char *cat, size_t clen)
{
	d = w_begin(p, d, 'X', pid, tid);
	WLIT(d, ",\"ts\":");
	d = w_ts(p, d, from);
	WLIT(d, ",\"dur\":");
	d = w_us(d, (int64_t)(to - from));
	WLIT(d, ",\"name\":\"");
	d = w_mem(d, name, nlen);
	WLIT(d, "\",\"cat\":\"");
	d = w_mem(d, cat, clen);
	*d++ = '"';
	return d;
}

/* The bound of one line's text beside its strings (a name, a file): its
 * fixed parts, its args' keys and numbers (20 digits each at most, a time
 * 25): a poll slice's, the longest, comes to some 370. */
#define W_LINE 400

static uint64_t task_tid(uint64_t seq)
{
	return PERFETTO_TASKS_PID + seq;
}

static void meta_name(struct perfetto *p, uint32_t pid, uint64_t tid, const char *what,
		      const char *name)
{
	begin_ev(p, 'M', pid, tid);
	PUT(p, ",\"name\":\"");
	put(p, what);
	PUT(p, "\",\"args\":{\"name\":");
	put_str(p, name);
	PUT(p, "}}");
}

static void meta_sort(struct perfetto *p, uint32_t pid, uint64_t tid, const char *what,
		      uint64_t index)
{
	begin_ev(p, 'M', pid, tid);
	PUT(p, ",\"name\":\"");
	put(p, what);
	PUT(p, "\",\"args\":{\"sort_index\":");
	put_u64(p, index);
	PUT(p, "}}");
}

static const char *outcome(enum ptrack_end how)
{
	switch (how) {
	case PTRACK_READY: return "Ready";
	case PTRACK_PENDING: return "Pending";
	case PTRACK_CUT: return "cut short";
	case PTRACK_TRACE_END: return "running at end";
	}
	return "?";
}

/* The wake that made the task runnable -> this poll: a flow, its start on the
 * waker's poll slice or on a 1 ns "wake" slice written here. */
static void flow(struct perfetto *p, const struct ptrack_poll *poll)
{
	const struct ptrack_wake *w = &poll->wake;
	uint64_t id = ++p->flow_id;
	/* the wake slice, the start and the end: some 400 bytes at most */
	char *d = w_room(p, 3 * W_LINE);

	if (!w->in_user_poll) {
		if (w->spawn)
			d = w_slice(p, d, p->pid, w->tid, w->ts, w->ts + 1, "spawn", 5, "wake", 4);
		else
			d = w_slice(p, d, p->pid, w->tid, w->ts, w->ts + 1, "wake", 4, "wake", 4);
		WLIT(d, ",\"args\":{\"task\":");
		d = w_u64(d, poll->task.seq);
		WLIT(d, ",\"by\":\"");
		if (w->spawn)
			WLIT(d, "spawn");
		else if (w->flags & AS_WAKE_IO)
			WLIT(d, "io driver");
		else if (w->flags & AS_WAKE_TIMER)
			WLIT(d, "timer");
		else
			WLIT(d, "runtime");
		WLIT(d, "\"}}");
	}
	d = w_begin(p, d, 's', p->pid, w->tid);
	WLIT(d, ",\"ts\":");
	d = w_ts(p, d, w->ts);
	WLIT(d, ",\"id\":");
	d = w_u64(d, id);
	if (w->spawn)
		WLIT(d, ",\"name\":\"spawn\",\"cat\":\"wake\"}");
	else
		WLIT(d, ",\"name\":\"wake\",\"cat\":\"wake\"}");
	d = w_begin(p, d, 'f', p->pid, poll->tid);
	WLIT(d, ",\"bp\":\"e\",\"ts\":");
	d = w_ts(p, d, poll->begin);
	WLIT(d, ",\"id\":");
	d = w_u64(d, id);
	if (w->spawn)
		WLIT(d, ",\"name\":\"spawn\",\"cat\":\"wake\"}");
	else
		WLIT(d, ",\"name\":\"wake\",\"cat\":\"wake\"}");
	w_end(p, d);
	p->flows++;
}

/* on_poll() piece by piece: for names too long for one object's room. */
static void on_poll_long(struct perfetto *p, const struct ptrack_poll *poll, const char *name)
{
	/* the task's own track: every poll, runtime workers' included */
	slice(p, PERFETTO_TASKS_PID, task_tid(poll->task.seq), poll->begin, poll->end,
	      "running", "task");
	PUT(p, ",\"args\":{\"thread\":");
	put_u64(p, poll->tid);
	PUT(p, "}}");
	if (!poll->user)
		return;
	slice(p, p->pid, poll->tid, poll->begin, poll->end, name, "poll");
	PUT(p, ",\"args\":{\"task\":");
	put_u64(p, poll->task.seq);
	if (poll->task.tokio_id) {
		PUT(p, ",\"tokio_id\":");
		put_u64(p, poll->task.tokio_id);
	}
	PUT(p, ",\"outcome\":\"");
	put(p, outcome(poll->how));
	PUT(p, "\"");
	if (poll->task.spawn_file) {
		PUT(p, ",\"spawned_at\":\"");
		put(p, cached(p, &p->esc_files, &p->n_esc_files, poll->task.spawn_id,
			      poll->task.spawn_file));
		put_c(p, ':');
		put_u64(p, poll->task.spawn_line);
		put_c(p, ':');
		put_u64(p, poll->task.spawn_col);
		PUT(p, "\"");
	}
	PUT(p, ",\"header\":\"");
	put_hex(p, poll->task.header);
	PUT(p, "\"}}");
	p->slices++;
	if (poll->has_wake)
		flow(p, poll);
}

static void on_poll(struct perfetto *p, const struct ptrack_poll *poll)
{
	const char *name = task_name(p, &poll->task);
	const char *file = poll->user && poll->task.spawn_file
			   ? cached(p, &p->esc_files, &p->n_esc_files, poll->task.spawn_id,
				    poll->task.spawn_file) : NULL;
	size_t nlen = strlen(name), flen = file ? strlen(file) : 0;
	char *d;

	if (nlen + flen > W_MAX) {   /* names of tens of KiB: piece by piece */
		on_poll_long(p, poll, name);
		return;
	}
	d = w_room(p, 2 * W_LINE + nlen + flen);
	/* the task's own track: every poll, runtime workers' included */
	d = w_slice(p, d, PERFETTO_TASKS_PID, task_tid(poll->task.seq), poll->begin, poll->end,
		    "running", 7, "task", 4);
	WLIT(d, ",\"args\":{\"thread\":");
	d = w_u64(d, poll->tid);
	WLIT(d, "}}");
	if (!poll->user) {
		w_end(p, d);
		return;
	}
	d = w_slice(p, d, p->pid, poll->tid, poll->begin, poll->end, name, nlen, "poll", 4);
	WLIT(d, ",\"args\":{\"task\":");
	d = w_u64(d, poll->task.seq);
	if (poll->task.tokio_id) {
		WLIT(d, ",\"tokio_id\":");
		d = w_u64(d, poll->task.tokio_id);
	}
	switch (poll->how) {
	case PTRACK_READY: WLIT(d, ",\"outcome\":\"Ready\""); break;
	case PTRACK_PENDING: WLIT(d, ",\"outcome\":\"Pending\""); break;
	case PTRACK_CUT: WLIT(d, ",\"outcome\":\"cut short\""); break;
	case PTRACK_TRACE_END: WLIT(d, ",\"outcome\":\"running at end\""); break;
	default: WLIT(d, ",\"outcome\":\"?\""); break;
	}
	if (file) {
		WLIT(d, ",\"spawned_at\":\"");
		d = w_mem(d, file, flen);
		*d++ = ':';
		d = w_u64(d, poll->task.spawn_line);
		*d++ = ':';
		d = w_u64(d, poll->task.spawn_col);
		*d++ = '"';
	}
	WLIT(d, ",\"header\":\"");
	d = w_hex(d, poll->task.header);
	WLIT(d, "\"}}");
	w_end(p, d);
	p->slices++;
	/* after the slice, so that a viewer sorting by time (stable) has the
	 * slice open when it binds the flow end to it */
	if (poll->has_wake)
		flow(p, poll);
}

/* A future frame (record --futures): a slice on its thread's track, nested
 * inside the poll slice that ran it (and inside its parent frame):
 *   {"ph":"X","pid":12407,"tid":12409,"ts":3182.730,"dur":2.101,"name":"app::level1",
 *    "cat":"future","args":{"task":5,"outcome":"Pending","fn":"src/main.rs:20",
 *    "await":"src/main.rs:22","awaiting":"tokio::time::sleep::Sleep","depth":1}}
 */
static void on_future(void *ctx, const struct futures_frame *fr)
{
	struct perfetto *p = ctx;

	slice(p, p->pid, fr->tid, fr->begin, fr->end,
	      cached(p, &p->esc_fns, &p->n_esc_fns, fr->fn, fr->name), "future");
	PUT(p, ",\"args\":{");
	if (fr->task) {
		PUT(p, "\"task\":");
		put_u64(p, fr->task);
		PUT(p, ",");
	}
	PUT(p, "\"outcome\":\"");
	put(p, futures_outcome__str(fr->outcome));
	PUT(p, "\"");
	if (fr->file || fr->line) {
		const char *file = fr->file ? cached(p, &p->esc_fn_files, &p->n_esc_fn_files,
						     fr->fn, fr->file) : "?";

		PUT(p, ",\"fn\":\"");
		put(p, file);
		put_c(p, ':');
		put_u64(p, fr->line);
		PUT(p, "\"");
		if (fr->await_line) {
			PUT(p, ",\"await\":\"");
			put(p, file);
			put_c(p, ':');
			put_u64(p, fr->await_line);
			PUT(p, "\"");
		}
		if (fr->awaitee) {
			PUT(p, ",\"awaiting\":");
			put_str(p, fr->awaitee);
		}
	}
	PUT(p, ",\"depth\":");
	put_u64(p, fr->depth);
	PUT(p, "}}");
	p->future_slices++;
}

static int on_out(void *ctx, const struct ptrack_out *o)
{
	struct perfetto *p = ctx;
	char buf[64];

	switch (o->type) {
	case PTRACK_POLL:
		on_poll(p, o->poll);
		break;
	case PTRACK_SCHEDULED:
	case PTRACK_IDLE:
		if (o->to == o->from)
			break;
	{
		char *d = w_room(p, W_LINE);

		if (o->type == PTRACK_IDLE)
			d = w_slice(p, d, PERFETTO_TASKS_PID, task_tid(o->task->seq), o->from,
				    o->to, "idle", 4, "task", 4);
		else
			d = w_slice(p, d, PERFETTO_TASKS_PID, task_tid(o->task->seq), o->from,
				    o->to, "scheduled", 9, "task", 4);
		*d++ = '}';
		w_end(p, d);
		break;
	}
	case PTRACK_PARKED: {
		char *d = w_room(p, W_LINE);

		d = w_slice(p, d, p->pid, o->tid, o->from, o->to, "parked", 6, "park", 4);
		*d++ = '}';
		w_end(p, d);
		break;
	}
	case PTRACK_TASK_GONE: {
		const char *name = o->task->name ? o->task->name : "unknown";
		size_t len = strlen(name);
		char *label = malloc(len + 48);

		if (!label)
			return -ENOMEM;
		char id[TASK_ID_MAX];

		/* the track is named as every output names a task (#3, ~7) */
		snprintf(buf, sizeof(buf), "task %s ",
			 task_id_format(id, sizeof(id), o->task->tokio_id, o->task->seq, 0));
		memcpy(label, buf, strlen(buf));
		memcpy(label + strlen(buf), name, len + 1);
		meta_name(p, PERFETTO_TASKS_PID, task_tid(o->task->seq), "thread_name", label);
		meta_sort(p, PERFETTO_TASKS_PID, task_tid(o->task->seq), "thread_sort_index",
			  o->task->seq);
		free(label);
		break;
	}
	}
	if (p->err)
		return p->err;
	return ferror(p->out) ? -EIO : 0;
}

static struct perfetto *perfetto_new(FILE *out, struct task_model *m, bool own,
				      const struct as_trace_meta *meta)
{
	struct perfetto *p = calloc(1, sizeof(*p));
	char *label = NULL;

	if (!p) {
		if (own)
			task_model__free(m);
		return NULL;
	}
	p->out = out;
	p->buf = malloc(PERFETTO_BUF);
	if (!p->buf)
		goto fail;
	p->first = true;
	p->pid = meta ? meta->pid : 0;
	for (int k = 0; k < 2; k++)
		p->pid_pre_len[k] = (uint8_t)snprintf(p->pid_pre[k], sizeof(p->pid_pre[k]),
						      "\",\"pid\":%" PRIu32 ",\"tid\":",
						      k ? (uint32_t)PERFETTO_TASKS_PID : p->pid);
	p->clock_mono = meta ? meta->clock_mono_ns : 0;
	p->model = m;
	p->own_model = own;
	p->pt = ptrack__new_on(m, meta, on_out, p);
	if (!p->pt)
		goto fail;
	for (uint32_t i = 0; meta && meta->probes && i < meta->n_probes; i++)
		if (meta->probes[i].role == AS_ROLE_FUTURE) {
			struct futures_observer obs = { .ctx = p, .frame = on_future };

			p->fu = futures__new_on(m, meta,
						&(struct futures_opts){ .observer = &obs });
			if (!p->fu)
				goto fail;
			break;
		}
	if (!(p->target = strdup(meta && meta->target ? meta->target : "")) ||
	    !(p->cmdline = strdup(meta && meta->cmdline ? meta->cmdline : "")) ||
	    !(p->runtime = strdup(meta && meta->runtime ? meta->runtime : "")) ||
	    !(p->build_id = strdup(meta && meta->build_id ? meta->build_id : "")))
		goto fail;
	const char *target = meta && meta->target && *meta->target ? meta->target : "target";

	if (asprintf(&label, "%s pid %" PRIu32, target, p->pid) < 0) {
		label = NULL;
		goto fail;
	}
	PUT(p, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
	meta_name(p, p->pid, 0, "process_name", label);
	meta_sort(p, p->pid, 0, "process_sort_index", 0);
	meta_name(p, PERFETTO_TASKS_PID, 0, "process_name", "tasks");
	meta_sort(p, PERFETTO_TASKS_PID, 0, "process_sort_index", 1);
	free(label);
	if (p->err || ferror(out)) {
		errno = p->err ? -p->err : EIO;
		perfetto__free(p);
		return NULL;
	}
	return p;
fail:
	free(label);
	perfetto__free(p);
	errno = ENOMEM;
	return NULL;
}

struct perfetto *perfetto__new(FILE *out, const struct as_trace_meta *meta)
{
	struct task_model *m = task_model__new(meta);

	return m ? perfetto_new(out, m, true, meta) : NULL;
}

struct perfetto *perfetto__new_on(FILE *out, struct task_model *m,
				  const struct as_trace_meta *meta)
{
	if (!m) {
		errno = EINVAL;
		return NULL;
	}
	return perfetto_new(out, m, false, meta);
}

/* Counter values after an event, written when they change. */
static void counters(struct perfetto *p, uint64_t ts)
{
	uint64_t runnable = ptrack__runnable(p->pt), parked = ptrack__parked(p->pt);
	bool r = !p->counters_shown || runnable != p->runnable_shown;
	bool k = !p->counters_shown || parked != p->parked_shown;
	char *d;

	p->counters_shown = true;
	if (!r && !k)
		return;
	d = w_room(p, 2 * W_LINE);
	if (r) {
		d = w_begin(p, d, 'C', p->pid, 0);
		WLIT(d, ",\"ts\":");
		d = w_ts(p, d, ts);
		WLIT(d, ",\"name\":\"runnable tasks\",\"args\":{\"tasks\":");
		d = w_u64(d, runnable);
		WLIT(d, "}}");
		p->runnable_shown = runnable;
	}
	if (k) {
		d = w_begin(p, d, 'C', p->pid, 0);
		WLIT(d, ",\"ts\":");
		d = w_ts(p, d, ts);
		WLIT(d, ",\"name\":\"parked workers\",\"args\":{\"workers\":");
		d = w_u64(d, parked);
		WLIT(d, "}}");
		p->parked_shown = parked;
	}
	w_end(p, d);
}

int perfetto__add(struct perfetto *p, const struct as_event *ev)
{
	int err;

	if (!p || !ev || p->finished)
		return -EINVAL;
	if (!p->have_base) {
		p->base = p->clock_mono && p->clock_mono <= ev->ts ? p->clock_mono : ev->ts;
		p->have_base = true;
	}
	if (ev->ts > p->last_ts)
		p->last_ts = ev->ts;
	p->events++;
	/* a thread's first name, as the model keeps it */
	if (ev->type == AS_EV_THREAD && ev->str && !u64map__get(&p->named, (uint64_t)ev->tid + 1, NULL)) {
		if (u64map__set(&p->named, (uint64_t)ev->tid + 1, 1))
			return -ENOMEM;
		meta_name(p, p->pid, ev->tid, "thread_name", ev->str);
	}
	if (p->own_model && (err = task_model__add(p->model, ev)))
		return err;
	if ((err = ptrack__add(p->pt, ev)))
		return err;
	if (p->fu && (err = futures__add(p->fu, ev)))
		return err;
	counters(p, ev->ts);
	if (p->err)
		return p->err;
	return ferror(p->out) ? -EIO : 0;
}

static void instant(struct perfetto *p, uint64_t ts, const char *name)
{
	begin_ev(p, 'i', p->pid, 0);
	PUT(p, ",\"s\":\"g\",\"ts\":");
	put_ts(p, ts);
	PUT(p, ",\"name\":");
	put_str(p, name);
	PUT(p, "}");
}

static void kv_str(struct perfetto *p, const char *key, const char *v)
{
	PUT(p, ",\"");
	put(p, key);
	PUT(p, "\":");
	put_str(p, v);
}

static void kv_u64(struct perfetto *p, const char *key, uint64_t v)
{
	PUT(p, ",\"");
	put(p, key);
	PUT(p, "\":");
	put_u64(p, v);
}

int perfetto__finish(struct perfetto *p, const struct as_trace_end *end, bool truncated)
{
	uint64_t end_ns, lost = end ? end->lost : 0, missed = end ? end->missed : 0;
	char msg[96];
	int err;

	if (!p || p->finished)
		return -EINVAL;
	p->finished = true;
	end_ns = end && end->end_ns ? end->end_ns : p->last_ts;
	if (!p->have_base) {
		p->base = p->clock_mono && p->clock_mono <= end_ns ? p->clock_mono : end_ns;
		p->have_base = true;
	}
	if (end_ns < p->last_ts)
		end_ns = p->last_ts;
	if (p->own_model && (err = task_model__finish(p->model, end_ns)))
		return err;
	if ((err = ptrack__finish(p->pt, end_ns)))
		return err;
	if (p->fu && (err = futures__finish(p->fu, end_ns)))
		return err;
	counters(p, end_ns);
	/* a truncated trace: a lower bound from its last complete chunk, or unknown */
	bool known = !truncated || (end && end->counts_lower_bound);
	const char *least = truncated ? "at least " : "";

	if (lost && known) {
		snprintf(msg, sizeof(msg), "lost %s%" PRIu64 " events", least, lost);
		instant(p, end_ns, msg);
	}
	if (missed && known) {
		snprintf(msg, sizeof(msg), "missed %s%" PRIu64 " events (not decoded)", least, missed);
		instant(p, end_ns, msg);
	}
	if (truncated)
		instant(p, end_ns, known ? "trace truncated: the recording stops here" :
			"trace truncated: the recording stops here; lost and missed events unknown");
	PUT(p, "\n],\"metadata\":{\"producer\":\"asyncscope\"");
	kv_str(p, "target", p->target);
	kv_u64(p, "pid", p->pid);
	kv_str(p, "cmdline", p->cmdline);
	kv_str(p, "runtime", p->runtime);
	kv_str(p, "build_id", p->build_id);
	kv_u64(p, "clock_mono_ns", p->base);
	kv_u64(p, "events", p->events);
	if (known) {
		kv_u64(p, "lost_events", lost);
		kv_u64(p, "missed_events", missed);
	} else {
		PUT(p, ",\"lost_events\":null,\"missed_events\":null");
	}
	kv_str(p, "loss_counts", !truncated ? "exact" : known ? "lower_bound" : "unknown");
	PUT(p, ",\"truncated\":");
	put(p, truncated ? "true" : "false");
	kv_u64(p, "poll_slices", p->slices);
	kv_u64(p, "flows", p->flows);
	if (p->fu) {
		const struct futures_summary *fs = futures__summary(p->fu);

		kv_u64(p, "future_slices", p->future_slices);
		kv_u64(p, "future_exits_lost", fs->exits_lost);
		kv_u64(p, "future_entries_lost", fs->entries_lost);
		kv_u64(p, "future_unmatched_exits", fs->unmatched_exits);
	}
	kv_str(p, "worker_task_polls", "on the tasks process tracks only");
	kv_u64(p, "tasks_pid", PERFETTO_TASKS_PID);
	PUT(p, "}}\n");
	flush(p);
	if (p->err)
		return p->err;
	if (fflush(p->out) || ferror(p->out))
		return -EIO;
	return 0;
}

uint64_t perfetto__slices(const struct perfetto *p)
{
	return p ? p->slices : 0;
}

uint64_t perfetto__flows(const struct perfetto *p)
{
	return p ? p->flows : 0;
}

uint64_t perfetto__future_slices(const struct perfetto *p)
{
	return p ? p->future_slices : 0;
}

void perfetto__free(struct perfetto *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_esc_names; i++)
		free(p->esc_names[i]);
	free(p->esc_names);
	for (size_t i = 0; i < p->n_esc_files; i++)
		free(p->esc_files[i]);
	free(p->esc_files);
	for (size_t i = 0; i < p->n_esc_fns; i++)
		free(p->esc_fns[i]);
	free(p->esc_fns);
	for (size_t i = 0; i < p->n_esc_fn_files; i++)
		free(p->esc_fn_files[i]);
	free(p->esc_fn_files);
	futures__free(p->fu);
	ptrack__free(p->pt);
	if (p->own_model)
		task_model__free(p->model);
	u64map__clear(&p->named);
	free(p->target);
	free(p->cmdline);
	free(p->runtime);
	free(p->build_id);
	free(p->buf);
	free(p);
}

/* ------------------------------------------------------------------ sink */

static int sink_add(void *impl, const struct as_event *ev, const struct as_stack *stack)
{
	(void)stack;
	return perfetto__add(impl, ev);
}

static int sink_finish(void *impl, const struct as_trace_end *end)
{
	struct perfetto *p = impl;

	return perfetto__finish(p, end, end && end->truncated);
}

static const struct as_sink_ops sink_ops = {
	.name = "perfetto-json", .add = sink_add, .finish = sink_finish, .free = NULL,
};

struct as_sink perfetto__sink(struct perfetto *p)
{
	return (struct as_sink){ .ops = &sink_ops, .impl = p };
}

