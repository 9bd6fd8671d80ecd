/* CAT / uftrace dump text traces: name spelling, header escaping, the
 * per-thread call-stack rules, the merge heap, and the reader.
 *
 * The reader checks the whole file at open (one pass: the header, the
 * sections' bounds, every line; probes are made up from the names of a file
 * that has no asyncscope header), then merges the sections by timestamp with
 * one buffered cursor per section, reading with pread(): memory is bounded
 * by the sections, the probes and the header tables, never by the events.
 * Grammar: docs/cat-format.md. Never prints; no libbpf. */
#include "trace/cat.h"
#include "trace/reader.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe/profile.h"
#include "sym/demangle.h"
#include "trace/writer.h"
#include "util/strtab.h"
#include "util/u64map.h"

/* ---- Names ---- */

static bool closes_angle(const char *s, size_t i)
{
	return s[i] == '>' && !(i > 0 && s[i - 1] == '-');
}

char *cat_spell(const char *name)
{
	size_t n = strlen(name), o = 0;
	/* at most one '_' per top-level component: n + n / 2 + 2 is enough */
	char *out = malloc(n + n / 2 + 2);
	int depth = 0;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (depth == 0 && (c == '<' || c == '{') &&
		    (i == 0 || (i >= 2 && name[i - 1] == ':' && name[i - 2] == ':')))
			out[o++] = '_';
		if (depth > 0 && c == ':' && name[i + 1] == ':') {
			out[o++] = '.';
			out[o++] = '.';
			i++;
			continue;
		}
		if (c == '<')
			depth++;
		else if (closes_angle(name, i) && depth > 0)
			depth--;
		out[o++] = c;
	}
	out[o] = '\0';
	return out;
}

char *cat_unspell(const char *name)
{
	size_t n = strlen(name), o = 0;
	char *out = malloc(n + n / 2 + 1);   /* ".." -> "::" keeps the length */
	int depth = 0;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (depth == 0 && c == '_' && (name[i + 1] == '<' || name[i + 1] == '{') &&
		    (i == 0 || (i >= 2 && name[i - 1] == ':' && name[i - 2] == ':')))
			continue;
		if (depth > 0 && c == '.' && name[i + 1] == '.') {
			out[o++] = ':';
			out[o++] = ':';
			i++;
			continue;
		}
		if (c == '<')
			depth++;
		else if (closes_angle(name, i) && depth > 0)
			depth--;
		out[o++] = c;
	}
	out[o] = '\0';
	return out;
}

/* ---- Header values ---- */

static bool forbidden_at(const char *s)
{
	return !strncmp(s, "entry", 5) || !strncmp(s, "exit", 4) || !strncmp(s, "reading", 7);
}

int cat_escape(FILE *out, const char *s)
{
	for (const char *p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;
		int rc = c <= ' ' || c >= 0x7f || c == '%' || c == ',' || forbidden_at(p)
			 ? fprintf(out, "%%%02X", c) : putc(c, out);
		if (rc < 0)
			return -EIO;
	}
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int cat_unescape(const char *s, size_t n, char **out)
{
	char *d = malloc(n + 1);
	size_t o = 0;

	*out = NULL;
	if (!d)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '%') {
			d[o++] = s[i];
			continue;
		}
		int hi = i + 2 < n ? hexval(s[i + 1]) : -1;
		int lo = i + 2 < n ? hexval(s[i + 2]) : -1;
		if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
			free(d);
			return -EINVAL;
		}
		d[o++] = (char)(hi << 4 | lo);
		i += 2;
	}
	d[o] = '\0';
	*out = d;
	return 0;
}


const char *cat_role_name(unsigned role)
{
	const char *n = as_role_name(role);
	return n ? n : "none";
}

unsigned cat_role_parse(const char *s, size_t n)
{
	for (unsigned i = 1; i < AS_ROLE__MAX; i++)
		if (as_role_name(i) && strlen(as_role_name(i)) == n && !memcmp(as_role_name(i), s, n))
			return i;
	return 0;
}

/* ---- Per-thread call stacks ---- */

static uint64_t innermost(const struct cat_state *st, uint16_t role)
{
	for (uint32_t i = st->n; i-- > 0;)
		if (st->frames[i].role == role)
			return st->frames[i].addr;
	return 0;
}

static bool inside(const struct cat_state *st, uint16_t role)
{
	for (uint32_t i = 0; i < st->n; i++)
		if (st->frames[i].role == role)
			return true;
	return false;
}

int cat_state__apply(struct cat_state *st, bool exit, uint16_t role, uint32_t probe,
		     uint64_t addr, struct as_event *ev)
{
	int has = 0;

	ev->type = 0;
	ev->flags = 0;
	ev->probe = (uint16_t)probe;
	ev->task = 0;
	ev->other = 0;
	if (!exit) {
		has = 1;
		switch (role) {
		case AS_ROLE_POLL:
			ev->type = AS_EV_POLL_BEGIN;
			ev->task = addr;
			st->ready = false;
			break;
		case AS_ROLE_READY:
			st->ready = true;
			has = 0;
			break;
		case AS_ROLE_WAKE:
			ev->type = AS_EV_WAKE;
			ev->task = addr;
			ev->other = innermost(st, AS_ROLE_POLL);
			ev->flags = inside(st, AS_ROLE_IO_DRIVER) ? AS_WAKE_IO
				    : inside(st, AS_ROLE_TIMER) ? AS_WAKE_TIMER : 0;
			break;
		case AS_ROLE_SPAWN:
			ev->type = AS_EV_SPAWN;
			ev->other = addr;
			break;
		case AS_ROLE_FREE:
			ev->type = AS_EV_FREE;
			ev->task = addr;
			break;
		case AS_ROLE_PARK:
			ev->type = AS_EV_PARK;
			break;
		case AS_ROLE_USDT:
			ev->type = AS_EV_USDT;
			ev->other = addr;
			ev->task = innermost(st, AS_ROLE_POLL);
			break;
		case AS_ROLE_FUTURE:
			ev->type = AS_EV_FUTURE_ENTER;
			ev->other = st->futures;
			ev->task = innermost(st, AS_ROLE_POLL);
			break;
		default:
			has = 0;
			break;
		}
		if (st->n >= CAT_DEPTH_MAX)
			return -E2BIG;
		if (st->n == st->cap) {
			uint32_t cap = st->cap ? st->cap * 2 : 16;
			struct cat_frame *f = realloc(st->frames, cap * sizeof(*f));
			if (!f)
				return -ENOMEM;
			st->frames = f;
			st->cap = cap;
		}
		st->frames[st->n++] = (struct cat_frame){ .probe = probe, .role = role, .addr = addr };
		if (role == AS_ROLE_FUTURE)
			st->futures++;
		return has;
	}
	for (uint32_t i = st->n; i-- > 0;) {
		if (st->frames[i].probe != probe || st->frames[i].addr != addr)
			continue;
		role = st->frames[i].role;   /* the call ends as it began */
		while (st->n > i)
			if (st->frames[--st->n].role == AS_ROLE_FUTURE)
				st->futures--;
		break;
	}
	switch (role) {
	case AS_ROLE_POLL:
		ev->type = AS_EV_POLL_END;
		ev->task = addr;
		ev->flags = st->ready ? AS_POLL_READY : 0;
		st->ready = false;
		return 1;
	case AS_ROLE_PARK:
		ev->type = AS_EV_UNPARK;
		return 1;
	case AS_ROLE_FUTURE:
		ev->type = AS_EV_FUTURE_EXIT;
		ev->other = st->futures;
		ev->task = innermost(st, AS_ROLE_POLL);
		return 1;
	default:
		return 0;
	}
}

void cat_state__clear(struct cat_state *st)
{
	free(st->frames);
	memset(st, 0, sizeof(*st));
}

/* ---- Merge heap ---- */

int cat_heap__init(struct cat_heap *h, uint32_t n)
{
	memset(h, 0, sizeof(*h));
	h->heap = malloc((n ? n : 1) * sizeof(*h->heap));
	h->pos = malloc((n ? n : 1) * sizeof(*h->pos));
	h->key = calloc(n ? n : 1, sizeof(*h->key));
	if (!h->heap || !h->pos || !h->key) {
		cat_heap__free(h);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		h->pos[i] = UINT32_MAX;
	h->cap = n;
	return 0;
}

static bool before(const struct cat_heap *h, uint32_t a, uint32_t b)
{
	return h->key[a] < h->key[b] || (h->key[a] == h->key[b] && a < b);
}

static void place(struct cat_heap *h, uint32_t i, uint32_t s)
{
	h->heap[i] = s;
	h->pos[s] = i;
}

static void sift_up(struct cat_heap *h, uint32_t i)
{
	uint32_t s = h->heap[i];
	while (i > 0) {
		uint32_t p = (i - 1) / 2;
		if (!before(h, s, h->heap[p]))
			break;
		place(h, i, h->heap[p]);
		i = p;
	}
	place(h, i, s);
}

static void sift_down(struct cat_heap *h, uint32_t i)
{
	uint32_t s = h->heap[i];
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && before(h, h->heap[c + 1], h->heap[c]))
			c++;
		if (!before(h, h->heap[c], s))
			break;
		place(h, i, h->heap[c]);
		i = c;
	}
	place(h, i, s);
}

void cat_heap__push(struct cat_heap *h, uint32_t s, uint64_t ts)
{
	if (s >= h->cap || h->pos[s] != UINT32_MAX)
		return;
	h->key[s] = ts;
	place(h, h->n++, s);
	sift_up(h, h->n - 1);
}

void cat_heap__remove(struct cat_heap *h, uint32_t s)
{
	if (s >= h->cap || h->pos[s] == UINT32_MAX)
		return;
	uint32_t i = h->pos[s];
	h->pos[s] = UINT32_MAX;
	if (--h->n == i)
		return;
	uint32_t moved = h->heap[h->n];
	place(h, i, moved);
	sift_down(h, i);
	sift_up(h, h->pos[moved]);
}

void cat_heap__free(struct cat_heap *h)
{
	free(h->heap);
	free(h->pos);
	free(h->key);
	memset(h, 0, sizeof(*h));
}

/* ---- Lines ---- */

/* A buffered line reader over [off, end) of a file, with pread(). */
struct lrd {
	int fd;
	uint64_t off;        /* file offset of buf[0] */
	uint64_t end;
	char *buf;
	size_t cap, len, pos;
	bool eof;
};

/* Returns 1 with a line (without its '\n' and a '\r' before it), 0 at the
 * end, -E2BIG for a line longer than CAT_LINE_MAX, -ENOMEM or -EIO.
 * *start: its file offset. */
static int lrd_next(struct lrd *l, const char **s, size_t *n, uint64_t *start)
{
	size_t scanned = l->pos;

	for (;;) {
		char *nl = l->len > scanned ? memchr(l->buf + scanned, '\n', l->len - scanned) : NULL;
		if (nl || (l->eof && l->pos < l->len)) {
			size_t e = nl ? (size_t)(nl - l->buf) : l->len;
			*s = l->buf + l->pos;
			*start = l->off + l->pos;
			*n = e - l->pos;
			if (*n > CAT_LINE_MAX)
				return -E2BIG;
			if (*n && (*s)[*n - 1] == '\r')
				(*n)--;
			l->pos = nl ? e + 1 : e;
			return 1;
		}
		if (l->eof)
			return 0;
		scanned = l->len - l->pos;
		if (l->pos) {
			memmove(l->buf, l->buf + l->pos, l->len - l->pos);
			l->off += l->pos;
			l->len -= l->pos;
			l->pos = 0;
		}
		if (l->len == l->cap) {
			if (l->cap > CAT_LINE_MAX)
				return -E2BIG;
			size_t cap = l->cap ? l->cap * 2 : 8192;
			char *b = realloc(l->buf, cap);
			if (!b)
				return -ENOMEM;
			l->buf = b;
			l->cap = cap;
		}
		uint64_t at = l->off + l->len;
		size_t want = l->cap - l->len;
		if (at >= l->end) {
			l->eof = true;
			continue;
		}
		if (want > l->end - at)
			want = (size_t)(l->end - at);
		ssize_t got = pread(l->fd, l->buf + l->len, want, (off_t)at);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -EIO;
		}
		if (got == 0)
			l->eof = true;
		l->len += (size_t)got;
	}
}

enum pl_kind {
	PL_BLANK,
	PL_OURS,       /* "# asyncscope ..." */
	PL_SECTION,    /* "reading X.dat" */
	PL_FUNC,       /* [entry] / [exit ] */
	PL_ARGS,       /* [args ] length = N */
	PL_RETVAL,     /* [retval] length = N */
	PL_ARGVAL,     /* "  args[i] TYPE: VALUE" */
	PL_RETVALVAL,  /* "  retval TYPE: VALUE" */
	PL_LOST,       /* [lost ] */
	PL_OTHER,      /* anything else: ignored, counted */
};

struct pline {
	enum pl_kind kind;
	bool exit;
	bool numeric;        /* PL_SECTION: X is a thread id; PL_*VAL: a number */
	uint64_t ts;
	uint32_t tid;
	const char *name;    /* PL_FUNC (not NUL-terminated) */
	size_t name_len;
	uint64_t addr;       /* PL_FUNC; PL_LOST: the count */
	uint32_t index;      /* PL_ARGVAL */
	uint64_t val;        /* PL_ARGVAL, PL_RETVALVAL */
};

static bool parse_u64(const char **pp, const char *end, int base, uint64_t *v, size_t maxdig)
{
	const char *p = *pp;
	uint64_t x = 0;
	size_t k = 0;

	for (; p < end && k <= maxdig; p++, k++) {
		int d = hexval(*p);
		if (d < 0 || d >= base)
			break;
		if (x > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return false;
		x = x * (uint64_t)base + (uint64_t)d;
	}
	if (!k || k > maxdig)
		return false;
	*pp = p;
	*v = x;
	return true;
}

static bool starts(const char *s, const char *end, const char *lit)
{
	size_t n = strlen(lit);
	return (size_t)(end - s) >= n && !memcmp(s, lit, n);
}

/* A number after "TYPE: " of an args / retval value line: 0x hex or decimal. */
static void parse_value(const char *p, const char *end, struct pline *pl)
{
	const char *colon = memchr(p, ':', (size_t)(end - p));
	pl->numeric = false;
	if (!colon || colon + 1 >= end || colon[1] != ' ')
		return;
	p = colon + 2;
	bool hex = starts(p, end, "0x");
	if (hex)
		p += 2;
	uint64_t v;
	if (parse_u64(&p, end, hex ? 16 : 10, &v, hex ? 16 : 20) && p == end) {
		pl->val = v;
		pl->numeric = true;
	}
}

/* Classifies (and for records parses) one line. Returns NULL, or what is
 * wrong with a line that looks like a uftrace record but is not one. */
static const char *parse_line(const char *s, size_t n, struct pline *pl)
{
	const char *end = s + n, *p = s;

	memset(pl, 0, sizeof(*pl));
	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if (end == s) {
		pl->kind = PL_BLANK;
		return NULL;
	}
	if (starts(s, end, "# asyncscope ")) {
		pl->kind = PL_OURS;
		return NULL;
	}
	if (starts(s, end, "reading ") && end - s > 12 && !memcmp(end - 4, ".dat", 4)) {
		const char *q = s + 8;
		uint64_t tid;
		pl->kind = PL_SECTION;
		pl->numeric = parse_u64(&q, end - 4, 10, &tid, 10) && q == end - 4 && tid <= UINT32_MAX;
		pl->tid = (uint32_t)tid;
		return NULL;
	}
	if (starts(s, end, "  args[")) {
		const char *q = s + 7;
		uint64_t i;
		pl->kind = PL_OTHER;
		if (parse_u64(&q, end, 10, &i, 4) && starts(q, end, "] ")) {
			pl->kind = PL_ARGVAL;
			pl->index = (uint32_t)i;
			parse_value(q + 2, end, pl);
		}
		return NULL;
	}
	if (starts(s, end, "  retval ")) {
		pl->kind = PL_RETVALVAL;
		parse_value(s + 9, end, pl);
		return NULL;
	}
	/* a record: "SEC.NSEC  TID: [TYPE] ..." */
	pl->kind = PL_OTHER;
	while (p < end && *p == ' ')
		p++;
	/* the shape first: digits '.' digits spaces digits ": [" */
	const char *s0 = p, *f0, *t0;
	while (p < end && isdigit((unsigned char)*p))
		p++;
	size_t sd = (size_t)(p - s0);
	if (!sd || p >= end || *p != '.')
		return NULL;
	f0 = ++p;
	while (p < end && isdigit((unsigned char)*p))
		p++;
	size_t fd = (size_t)(p - f0);
	if (!fd || p >= end || *p != ' ')
		return NULL;
	while (p < end && *p == ' ')
		p++;
	t0 = p;
	while (p < end && isdigit((unsigned char)*p))
		p++;
	if (p == t0 || !starts(p, end, ": ["))
		return NULL;
	/* from here on it is a record */
	uint64_t sec, frac, tid;
	const char *x = s0;
	if (sd > 11 || !parse_u64(&x, end, 10, &sec, 11))
		return "timestamp out of range";
	x = f0;
	if (fd > 9 || !parse_u64(&x, end, 10, &frac, 9))
		return "more than 9 decimals in the timestamp";
	x = t0;
	if (!parse_u64(&x, end, 10, &tid, 10) || tid > UINT32_MAX)
		return "thread id out of range";
	p += 3;
	for (; fd < 9; fd++)
		frac *= 10;
	if (sec > (UINT64_MAX - frac) / 1000000000ull)
		return "timestamp out of range";
	pl->ts = sec * 1000000000ull + frac;
	pl->tid = (uint32_t)tid;
	const char *rb = memchr(p, ']', (size_t)(end - p));
	if (!rb)
		return "no ']' after the record type";
	size_t tl = (size_t)(rb - p);
	const char *rest = rb + 1;
	if ((tl == 5 && !memcmp(p, "args ", 5)) || (tl == 6 && !memcmp(p, "retval", 6))) {
		pl->kind = tl == 5 ? PL_ARGS : PL_RETVAL;
		return NULL;
	}
	if (tl == 5 && !memcmp(p, "lost ", 5)) {
		const char *q = rest;
		uint64_t cnt = 1;
		if (starts(q, end, ": ")) {
			q += 2;
			if (!parse_u64(&q, end, 10, &cnt, 20))
				cnt = 1;
		}
		pl->kind = PL_LOST;
		pl->addr = cnt;
		return NULL;
	}
	if (!(tl == 5 && (!memcmp(p, "entry", 5) || !memcmp(p, "exit ", 5))))
		return NULL;   /* [event], [data ], [time ], ...: ignored */
	pl->exit = p[1] == 'x';
	if (!starts(rest, end, " "))
		return "no space after the record type";
	rest++;
	/* NAME(ADDR) depth: N, the name may hold '(' and spaces */
	const char *d = NULL;
	for (const char *q = end - 8; q >= rest; q--)
		if (!memcmp(q, " depth: ", 8)) {
			d = q;
			break;
		}
	if (!d)
		return "no ' depth: N' at the end";
	const char *q = d + 8;
	uint64_t depth;
	if (!parse_u64(&q, end, 10, &depth, 10) || q != end)
		return "bad depth";
	if (d == rest || d[-1] != ')')
		return "no '(address)' before the depth";
	const char *open = NULL;
	for (const char *x = d - 2; x >= rest; x--)
		if (*x == '(') {
			open = x;
			break;
		}
	if (!open)
		return "no '(address)' before the depth";
	q = open + 1;
	if (!parse_u64(&q, d - 1, 16, &pl->addr, 16) || q != d - 1)
		return "bad address (hexadecimal expected)";
	if (open == rest)
		return "empty function name";
	pl->name = rest;
	pl->name_len = (size_t)(open - rest);
	pl->kind = PL_FUNC;
	return NULL;
}

/* ---- Reader ---- */

struct section {
	uint64_t start, end;  /* byte offsets: its first line, past its last */
	uint64_t line;        /* line number of its first line */
	uint32_t tid;
	int32_t thread;       /* its header thread entry (first section of the tid), or -1 */
};

struct hdr_thread {
	uint32_t tid;
	struct as_event ev;   /* the THREAD event (str owned) */
	bool used;
};

struct spawn_loc {
	char *file;
	uint32_t line, col;
};

struct task_run {
	uint64_t id, polls;
	uint32_t next;        /* next run of the same address, UINT32_MAX none */
};

struct order_hint {
	uint64_t step, count; /* events step .. step + count - 1 */
	uint32_t section;
	uint64_t line;        /* its header line */
};

/* Per-name facts of a file with no asyncscope header. */
struct fname {
	uint16_t role;        /* 0: stands for nothing */
	uint8_t inner_poll;   /* a poll function entered by another one for the same task */
	char *rust;           /* the Rust spelling (owned) */
};

/* What turns one section's lines into events: the call stacks and the event
 * being completed (args / retval lines may follow its line). */
struct proc {
	uint32_t tid;
	struct cat_state st;
	bool pending;
	struct as_event ev;
	uint64_t ev_line;
	bool overridden;      /* its fields came from an args block */
	int blk;              /* 0, PL_ARGS or PL_RETVAL: a block being read */
	uint64_t blk_line;
	uint32_t nargs;
	uint64_t args[4];
	bool have_ret;
	uint64_t ret;
	bool index_pass;      /* the open's check: also names the foreign polls */
};

struct cursor {
	struct lrd l;
	uint64_t line;        /* number of the next line */
	struct proc pr;
	bool thread_pending;
	bool have;            /* head holds the next event */
	bool head_overridden;
	struct as_event head;
	bool done;
};

struct cat_reader {
	FILE *f;
	int fd;
	char *path;
	uint64_t size;
	bool own;
	struct as_trace_meta meta;
	uint32_t cap_probes;
	struct as_trace_end end;
	bool have_end, truncated_mark;
	uint64_t hdr_events;  /* events the header announces */
	uint64_t counted;     /* events the sections hold (open's count) */
	struct cat_stats stats;
	uint64_t unknown_in_sections;
	struct section *secs;
	uint32_t n_secs, cap_secs;
	struct hdr_thread *threads;
	uint32_t n_threads, cap_threads;
	struct spawn_loc *spawns;
	uint32_t n_spawns, cap_spawns;
	struct task_run *runs;
	uint32_t n_runs, cap_runs;
	struct u64map run_head;   /* address -> first unused run + 1 */
	struct u64map run_tail;   /* address -> last run + 1 (open only) */
	struct order_hint *hints;
	size_t n_hints, cap_hints, next_hint;
	struct strtab names;      /* line names */
	uint32_t *name_probe;     /* own: per name, its probe */
	struct fname *fnames;     /* foreign: per name */
	uint32_t cap_names;
	struct strtab keys;       /* foreign: "name\0addr" -> probe */
	uint64_t min_ts, max_ts;
	/* merging */
	struct cursor *curs;
	struct cat_heap heap;
	uint64_t events;
	uint64_t consumed;
	int err;
	bool started, done;
	char msg[512];
	char errmsg[512];         /* open: what went wrong */
};

static int oom(void) { return -ENOMEM; }

static int rfail(struct cat_reader *r, int err, uint64_t line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Records a one-line message "PATH: line N: WHAT" (line 0: no line). */
static int rfail(struct cat_reader *r, int err, uint64_t line, const char *fmt, ...)
{
	char what[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (err == -ENOMEM)
		snprintf(r->errmsg, sizeof(r->errmsg), "cannot read %s: out of memory", r->path);
	else if (err == -EIO)
		snprintf(r->errmsg, sizeof(r->errmsg), "cannot read %s: input/output error", r->path);
	else if (line)
		snprintf(r->errmsg, sizeof(r->errmsg), "%s: line %" PRIu64 ": %s", r->path, line, what);
	else
		snprintf(r->errmsg, sizeof(r->errmsg), "%s: %s", r->path, what);
	return err;
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	uint32_t c = *cap ? *cap : 8;
	while (c < need) {
		if (c > UINT32_MAX / 2)
			return -ENOMEM;
		c *= 2;
	}
	void *q = realloc(*p, (size_t)c * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

static struct as_probe *new_probe(struct cat_reader *r)
{
	if (r->meta.n_probes >= 65536 ||
	    grow((void **)&r->meta.probes, &r->cap_probes, r->meta.n_probes + 1,
		 sizeof(*r->meta.probes)))
		return NULL;
	struct as_probe *p = &r->meta.probes[r->meta.n_probes++];
	memset(p, 0, sizeof(*p));
	return p;
}

/* ---- the header (a file written by asyncscope) ---- */

struct kv {
	const char *k, *v;
	size_t kl, vl;
};

#define KV_MAX 24

/* Splits "kw k=v k=v" (after "# asyncscope "); returns the pairs found. */
static size_t split_kv(const char *s, const char *end, const char **kw, size_t *kwl,
		       struct kv *kv)
{
	size_t n = 0;
	const char *p = s;

	while (p < end && *p != ' ')
		p++;
	*kw = s;
	*kwl = (size_t)(p - s);
	while (p < end && n < KV_MAX) {
		while (p < end && *p == ' ')
			p++;
		const char *t = p;
		while (p < end && *p != ' ')
			p++;
		if (p == t)
			break;
		const char *eq = memchr(t, '=', (size_t)(p - t));
		if (!eq)
			continue;
		kv[n++] = (struct kv){ .k = t, .kl = (size_t)(eq - t), .v = eq + 1,
				       .vl = (size_t)(p - eq - 1) };
	}
	return n;
}

static const struct kv *find_kv(const struct kv *kv, size_t n, const char *k)
{
	size_t kl = strlen(k);
	for (size_t i = 0; i < n; i++)
		if (kv[i].kl == kl && !memcmp(kv[i].k, k, kl))
			return &kv[i];
	return NULL;
}

/* Numeric value of key k: 0 when absent; -EINVAL when malformed or above max. */
static int kv_num(const struct kv *kv, size_t n, const char *k, uint64_t max, uint64_t *v)
{
	const struct kv *e = find_kv(kv, n, k);
	*v = 0;
	if (!e)
		return 0;
	const char *p = e->v, *end = e->v + e->vl;
	bool hex = starts(p, end, "0x");
	if (hex)
		p += 2;
	if (!parse_u64(&p, end, hex ? 16 : 10, v, hex ? 16 : 20) || p != end || *v > max)
		return -EINVAL;
	return 0;
}

/* String value of key k: *out NULL when absent. */
static int kv_str(const struct kv *kv, size_t n, const char *k, char **out)
{
	const struct kv *e = find_kv(kv, n, k);
	*out = NULL;
	return e ? cat_unescape(e->v, e->vl, out) : 0;
}

#define NUM(key, max, dst) do { uint64_t v_; if (kv_num(kv, n, key, max, &v_)) { \
	bad = key; goto bad; } dst = v_; } while (0)
#define STR(key, dst) do { int e_ = kv_str(kv, n, key, &dst); if (e_ == -ENOMEM) return oom(); \
	if (e_) { bad = key; goto bad; } } while (0)

static int name_map(struct cat_reader *r, const char *name, uint32_t probe, uint64_t line)
{
	uint32_t idx;
	size_t len = strlen(name);

	if (strtab__find(&r->names, name, len, &idx))
		return rfail(r, -EBADMSG, line, "two probes have the line name '%s'", name);
	int err = strtab__add(&r->names, name, len, &idx);
	if (err)
		return err == -ENOMEM ? oom() : rfail(r, -EBADMSG, line, "too many names");
	if (grow((void **)&r->name_probe, &r->cap_names, idx + 1, sizeof(*r->name_probe)))
		return oom();
	r->name_probe[idx] = probe;
	return 0;
}

static int header_probe(struct cat_reader *r, const struct kv *kv, size_t n, uint64_t line)
{
	const char *bad = NULL;
	char *role = NULL, *name = NULL, *awaits = NULL;
	const struct kv *types;
	uint64_t index;
	int err = -EBADMSG;

	NUM("index", 65535, index);
	if (index != r->meta.n_probes)
		return rfail(r, -EBADMSG, line, "probe %" PRIu64 " out of order (probe %u expected)",
			     index, r->meta.n_probes);
	struct as_probe *p = new_probe(r);
	if (!p)
		return oom();
	STR("role", role);
	p->role = role ? (uint16_t)cat_role_parse(role, strlen(role)) : 0;
	free(role);
	role = NULL;
	if (!p->role) {
		bad = "role";
		goto bad;
	}
	NUM("arg_reg", 255, p->arg_reg);
	NUM("emulated", 255, p->emulated);
	NUM("addr", UINT64_MAX, p->addr);
	NUM("src_line", UINT32_MAX, p->src_line);
	p->state_off = -1;   /* recording only, as in trace files */
	STR("symbol", p->symbol);
	STR("future", p->future);
	STR("src_file", p->src_file);
	STR("name", name);
	STR("awaits", awaits);
	if (!p->symbol && !(p->symbol = strdup("")))
		goto nomem;
	if (!name) {
		bad = "name";
		goto bad;
	}
	if (awaits && *awaits) {
		uint32_t cnt = 1;
		for (const char *c = awaits; *c; c++)
			cnt += *c == ',';
		p->await_lines = calloc(cnt, sizeof(*p->await_lines));
		if (!p->await_lines)
			goto nomem;
		const char *c = awaits, *e = awaits + strlen(awaits);
		for (uint32_t i = 0; i < cnt; i++) {
			uint64_t v;
			if (!parse_u64(&c, e, 10, &v, 10) || v > UINT32_MAX ||
			    (i + 1 < cnt ? *c != ',' : c != e)) {
				bad = "awaits";
				goto bad;
			}
			p->await_lines[i] = (uint32_t)v;
			c++;
		}
		p->n_awaits = cnt;
	}
	free(awaits);
	awaits = NULL;
	/* the awaited futures' types: one escaped value per await point, ""
	 * for one not known */
	if ((types = find_kv(kv, n, "await_types"))) {
		const char *c = types->v, *e = types->v + types->vl;
		if (!p->n_awaits) {
			bad = "await_types";
			goto bad;
		}
		if (!(p->await_types = calloc(p->n_awaits, sizeof(*p->await_types))))
			goto nomem;
		for (uint32_t i = 0; i < p->n_awaits; i++) {
			const char *comma = memchr(c, ',', (size_t)(e - c));
			const char *ve = comma ? comma : e;
			if ((i + 1 < p->n_awaits) != (comma != NULL)) {
				bad = "await_types";
				goto bad;
			}
			if (ve > c) {
				int ue = cat_unescape(c, (size_t)(ve - c), &p->await_types[i]);
				if (ue == -ENOMEM)
					goto nomem;
				if (ue) {
					bad = "await_types";
					goto bad;
				}
			}
			c = ve + 1;
		}
	}
	err = name_map(r, name, (uint32_t)index, line);
	free(name);
	return err;
nomem:
	err = -ENOMEM;
	bad = NULL;
bad:
	free(role);
	free(name);
	free(awaits);
	if (err == -ENOMEM)
		return oom();
	return rfail(r, -EBADMSG, line, "bad '%s' in a probe line", bad);
}

static int header_line(struct cat_reader *r, const char *s, const char *end, uint64_t line)
{
	struct kv kv[KV_MAX];
	const char *kw, *bad = NULL;
	size_t kwl;
	size_t n = split_kv(s, end, &kw, &kwl, kv);

#define IS(w) (kwl == strlen(w) && !memcmp(kw, w, kwl))
	if (IS("cat")) {
		uint64_t v;
		NUM("version", UINT32_MAX, v);
		if (v != CAT_VERSION)
			return rfail(r, -EBADMSG, line, "asyncscope CAT header version %" PRIu64
				     " (this asyncscope reads version %d)", v, CAT_VERSION);
		NUM("format_version", UINT32_MAX, r->meta.format_version);
		return 0;
	}
	if (IS("meta")) {
		char *s2 = NULL;
		const char *keys[] = { "target", "build_id", "runtime", "cmdline" };
		char **dst[] = { &r->meta.target, &r->meta.build_id, &r->meta.runtime, &r->meta.cmdline };
		for (size_t i = 0; i < 4; i++) {
			STR(keys[i], s2);
			if (s2) {
				free(*dst[i]);
				*dst[i] = s2;
			}
		}
		if (find_kv(kv, n, "pid"))
			NUM("pid", UINT32_MAX, r->meta.pid);
		if (find_kv(kv, n, "clock_mono_ns"))
			NUM("clock_mono_ns", UINT64_MAX, r->meta.clock_mono_ns);
		if (find_kv(kv, n, "clock_real_ns"))
			NUM("clock_real_ns", UINT64_MAX, r->meta.clock_real_ns);
		return 0;
	}
	if (IS("probe"))
		return header_probe(r, kv, n, line);
	if (IS("thread")) {
		struct hdr_thread t = { .ev = { .type = AS_EV_THREAD } };
		char *comm = NULL;
		NUM("tid", UINT32_MAX, t.tid);
		NUM("ts", UINT64_MAX, t.ev.ts);
		NUM("task", UINT64_MAX, t.ev.task);
		NUM("other", UINT64_MAX, t.ev.other);
		NUM("flags", 255, t.ev.flags);
		NUM("probe", 65535, t.ev.probe);
		STR("comm", comm);
		t.ev.tid = t.tid;
		t.ev.str = comm;
		for (uint32_t i = 0; i < r->n_threads; i++)
			if (r->threads[i].tid == t.tid) {
				free(comm);
				return rfail(r, -EBADMSG, line, "thread %u listed twice", t.tid);
			}
		if (grow((void **)&r->threads, &r->cap_threads, r->n_threads + 1, sizeof(t))) {
			free(comm);
			return oom();
		}
		r->threads[r->n_threads++] = t;
		return 0;
	}
	if (IS("spawn")) {
		struct spawn_loc sl = { 0 };
		uint64_t id;
		NUM("id", UINT32_MAX, id);
		NUM("line", UINT32_MAX, sl.line);
		NUM("col", UINT32_MAX, sl.col);
		if (id != (uint64_t)r->n_spawns + 1)
			return rfail(r, -EBADMSG, line, "spawn location %" PRIu64 " out of order "
				     "(%u expected)", id, r->n_spawns + 1);
		STR("file", sl.file);
		if (!sl.file && !(sl.file = strdup("")))
			return oom();
		if (grow((void **)&r->spawns, &r->cap_spawns, r->n_spawns + 1, sizeof(sl))) {
			free(sl.file);
			return oom();
		}
		r->spawns[r->n_spawns++] = sl;
		return 0;
	}
	if (IS("taskid")) {
		uint64_t addr, prev;
		struct task_run run = { .next = UINT32_MAX };
		NUM("addr", UINT64_MAX, addr);
		NUM("id", UINT64_MAX, run.id);
		NUM("polls", UINT64_MAX, run.polls);
		if (!addr || addr == UINT64_MAX || !run.polls) {
			bad = addr ? "polls" : "addr";
			goto bad;
		}
		if (r->n_runs == UINT32_MAX - 1 ||
		    grow((void **)&r->runs, &r->cap_runs, r->n_runs + 1, sizeof(run)))
			return oom();
		uint32_t idx = r->n_runs++;
		r->runs[idx] = run;
		if (u64map__get(&r->run_tail, addr, &prev))
			r->runs[prev - 1].next = idx;
		else if (u64map__set(&r->run_head, addr, (uint64_t)idx + 1))
			return oom();
		if (u64map__set(&r->run_tail, addr, (uint64_t)idx + 1))
			return oom();
		return 0;
	}
	if (IS("order")) {
		struct order_hint h;
		NUM("step", UINT64_MAX, h.step);
		NUM("section", UINT32_MAX, h.section);
		h.count = 1;
		if (find_kv(kv, n, "count"))
			NUM("count", UINT64_MAX - h.step, h.count);
		h.line = line;
		if (!h.count)
			return rfail(r, -EBADMSG, line, "order hint of 0 steps");
		if (r->n_hints && h.step < r->hints[r->n_hints - 1].step + r->hints[r->n_hints - 1].count)
			return rfail(r, -EBADMSG, line, "order steps must increase");
		if (r->n_hints == r->cap_hints) {
			size_t cap = r->cap_hints ? r->cap_hints * 2 : 64;
			struct order_hint *q = realloc(r->hints, cap * sizeof(*q));
			if (!q)
				return oom();
			r->hints = q;
			r->cap_hints = cap;
		}
		r->hints[r->n_hints++] = h;
		return 0;
	}
	if (IS("end")) {
		NUM("events", UINT64_MAX, r->hdr_events);
		NUM("lost", UINT64_MAX, r->end.lost);
		NUM("missed", UINT64_MAX, r->end.missed);
		NUM("end_ns", UINT64_MAX, r->end.end_ns);
		r->have_end = true;
		return 0;
	}
	if (IS("truncated")) {
		NUM("events", UINT64_MAX, r->hdr_events);
		r->truncated_mark = true;
		return 0;
	}
	return 0;   /* "note" and keywords of later versions */
#undef IS
bad:
	return rfail(r, -EBADMSG, line, "bad '%s' in an asyncscope header line", bad);
}

/* ---- names of a file without our header ---- */

/* Poll functions named as in probe/profile.c's tables, plus the functions
 * a uftrace log shows around them: Tokio's Harness::poll (entered by
 * raw::poll through a jump) and async-std's SupportTaskLocals poll closure,
 * which CAT's logs start from (inside async_task's RawTask::run). */
static const char *const inner_polls[] = {
	"tokio::runtime::task::harness::Harness::poll",
	"<tokio::runtime::task::harness::Harness>::poll",
	"<async_std::task::builder::SupportTaskLocals as core::future::future::Future>::poll::{{closure}}",
};


/* The role of a function of a foreign file, from its name alone: task polls,
 * completion and parking by the runtime profiles, futures by CAT's
 * patterns; 0 for the rest. *inner: an inner poll function. *runtime: the
 * profile that named it. */
static uint16_t foreign_role(const char *rust, const char *spelled, bool *inner,
			     const char **runtime)
{
	static const uint16_t roles[] = { AS_ROLE_POLL, AS_ROLE_READY, AS_ROLE_PARK };
	char *norm = sym_strip_generics(rust);
	uint16_t role = 0;

	*inner = false;
	*runtime = NULL;
	if (!norm)
		return UINT16_MAX;
	for (size_t i = 0; i < sizeof(inner_polls) / sizeof(inner_polls[0]) && !role; i++)
		if (!strcmp(norm, inner_polls[i])) {
			role = AS_ROLE_POLL;
			*inner = true;
			*runtime = i < 2 ? "tokio" : "async-std";
		}
	for (size_t k = 0; k < sizeof(roles) / sizeof(roles[0]) && !role; k++)
		for (size_t i = 0; profiles[i] && !role; i++)
			for (size_t j = 0; j < profiles[i]->n_points && !role; j++) {
				const struct profile_point *pt = &profiles[i]->points[j];
				if (pt->role == roles[k] && profile_point_matches(pt, rust, norm)) {
					role = roles[k];
					*runtime = profiles[i]->name;
				}
			}
	free(norm);
	if (!role && (strstr(spelled, "::_{{closure}}") ||
		      strstr(spelled, "as core..future..future..Future>::poll")))
		role = AS_ROLE_FUTURE;
	return role;
}

/* A readable future name for a function of a foreign file: the Rust name
 * without its trailing "::{{closure}}" components ("app::handler"). NULL
 * when there is nothing to strip. */
static int future_name(const char *rust, char **out)
{
	size_t n = strlen(rust);
	const char *tail = "::{{closure}}";
	size_t tl = strlen(tail), k = n;

	while (k > tl && !memcmp(rust + k - tl, tail, tl))
		k -= tl;
	*out = NULL;
	if (k < n && !(*out = strndup(rust, k)))
		return -ENOMEM;
	return 0;
}

/* The probe of a function line: its index, its role (via *role); UINT32_MAX
 * with *role 0 for a function that stands for nothing. */
static int line_probe(struct cat_reader *r, const struct pline *pl, uint64_t line,
		      uint32_t *probe, uint16_t *role)
{
	uint32_t idx;
	int err;

	*probe = UINT32_MAX;
	*role = 0;
	if (!strtab__find(&r->names, pl->name, pl->name_len, &idx)) {
		if (r->own)
			return rfail(r, -EBADMSG, line, "function '%.*s' is not in the header's probe table",
				     (int)(pl->name_len > 200 ? 200 : pl->name_len), pl->name);
		err = strtab__add(&r->names, pl->name, pl->name_len, &idx);
		if (err)
			return err == -ENOMEM ? oom() : rfail(r, -EBADMSG, line, "too many names");
		if (grow((void **)&r->fnames, &r->cap_names, idx + 1, sizeof(*r->fnames)))
			return oom();
		struct fname *fn = &r->fnames[idx];
		memset(fn, 0, sizeof(*fn));
		char *rust = cat_unspell(strtab__get(&r->names, idx));
		char *spelled = rust ? cat_spell(rust) : NULL;
		bool inner = false;
		const char *rt = NULL;
		uint16_t ro = spelled ? foreign_role(rust, spelled, &inner, &rt) : UINT16_MAX;
		free(spelled);
		if (ro == UINT16_MAX) {
			free(rust);
			return oom();
		}
		fn->rust = rust;
		fn->role = ro;
		fn->inner_poll = inner;
		if (rt && (!r->meta.runtime || !strstr(r->meta.runtime, rt))) {
			size_t ol = r->meta.runtime ? strlen(r->meta.runtime) : 0;
			char *nrt = malloc(ol + strlen(rt) + 2);
			if (!nrt)
				return oom();
			sprintf(nrt, "%s%s%s", ol ? r->meta.runtime : "", ol ? "+" : "", rt);
			free(r->meta.runtime);
			r->meta.runtime = nrt;
		}
	}
	if (r->own) {
		*probe = r->name_probe[idx];
		*role = r->meta.probes[*probe].role;
		return 0;
	}
	const struct fname *fn = &r->fnames[idx];
	if (!fn->role)
		return 0;
	/* one probe per distinct name and address */
	char key[16];
	uint64_t a = pl->addr;
	memcpy(key, &idx, 4);
	memcpy(key + 4, &a, 8);
	uint32_t k;
	if (!strtab__find(&r->keys, key, 12, &k)) {
		struct as_probe *p = new_probe(r);
		if (!p)
			return r->meta.n_probes >= 65536
			       ? rfail(r, -EBADMSG, line, "more than 65536 distinct functions")
			       : oom();
		p->role = fn->role;
		p->addr = pl->addr;
		p->state_off = -1;
		p->symbol = strdup(fn->rust);
		if (!p->symbol)
			return oom();
		if (fn->role == AS_ROLE_FUTURE && future_name(fn->rust, &p->future))
			return oom();
		err = strtab__add(&r->keys, key, 12, &k);
		if (err)
			return oom();
	}
	*probe = k;
	*role = fn->role;
	return 0;
}

/* ---- sections ---- */

static void proc_init(struct proc *pr, uint32_t tid, bool index_pass)
{
	memset(pr, 0, sizeof(*pr));
	pr->tid = tid;
	pr->index_pass = index_pass;
}

/* Completes the pending event with its args / retval block. */
static int finish_pending(struct cat_reader *r, struct proc *pr, struct as_event *out)
{
	struct as_event *ev = &pr->ev;

	if (!pr->pending)
		return 0;
	pr->pending = false;
	if (r->own && pr->have_ret && ev->type == AS_EV_FUTURE_EXIT) {
		ev->flags = (uint8_t)pr->ret;
		ev->other = AS_FUT_OTHER(AS_FUT_DEPTH(ev->other), pr->ret >> 8);
	}
	pr->overridden = false;
	if (r->own && pr->blk_line) {
		if (pr->nargs != 4)
			return rfail(r, -EBADMSG, pr->blk_line, "an [args ] record needs 4 values "
				     "(task, other, flags, probe), it has %u", pr->nargs);
		if (pr->args[2] > 255 || pr->args[3] > 65535)
			return rfail(r, -EBADMSG, pr->blk_line, "flags or probe out of range in "
				     "an [args ] record");
		ev->task = pr->args[0];
		ev->other = pr->args[1];
		ev->flags = (uint8_t)pr->args[2];
		ev->probe = (uint16_t)pr->args[3];
		pr->overridden = true;
		if (ev->type == AS_EV_POLL_BEGIN && ev->probe >= r->meta.n_probes)
			return rfail(r, -EBADMSG, pr->blk_line, "poll probe %u is not in the header",
				     ev->probe);
	}
	pr->have_ret = false;
	pr->blk_line = 0;
	pr->nargs = 0;
	*out = *ev;
	return 1;
}

/* Feeds one line of a section. Returns 1 with an event completed by it (the
 * one before it), 0, or a negative error (message recorded). */
static int proc_feed(struct cat_reader *r, struct proc *pr, const struct pline *pl,
		     uint64_t line, struct as_event *out)
{
	int rc = 0, err;

	switch (pl->kind) {
	case PL_ARGS:
	case PL_RETVAL:
		if (pl->tid != pr->tid)
			return rfail(r, -EBADMSG, line, "thread %u in the section of thread %u",
				     pl->tid, pr->tid);
		if (!r->own || !pr->pending)
			return 0;
		if ((pl->kind == PL_ARGS && pr->blk_line) || (pl->kind == PL_RETVAL && pr->have_ret))
			return rfail(r, -EBADMSG, line, "a second %s record for one event",
				     pl->kind == PL_ARGS ? "[args ]" : "[retval]");
		pr->blk = pl->kind;
		if (pl->kind == PL_ARGS)
			pr->blk_line = line;
		return 0;
	case PL_ARGVAL:
		if (!r->own || !pr->pending || pr->blk != PL_ARGS)
			return 0;
		if (!pl->numeric || pl->index != pr->nargs || pr->nargs >= 4)
			return rfail(r, -EBADMSG, line, "bad args value (args[%u] expected, as a number)",
				     pr->nargs);
		pr->args[pr->nargs++] = pl->val;
		return 0;
	case PL_RETVALVAL:
		if (!r->own || !pr->pending || pr->blk != PL_RETVAL)
			return 0;
		if (!pl->numeric || pr->have_ret)
			return rfail(r, -EBADMSG, line, "bad retval value (one number expected)");
		pr->ret = pl->val;
		pr->have_ret = true;
		return 0;
	case PL_BLANK:
		return 0;
	default:
		break;
	}
	pr->blk = 0;
	if ((rc = finish_pending(r, pr, out)) < 0)
		return rc;
	if (pl->kind == PL_LOST) {
		if (pr->index_pass) {
			r->stats.lost_lines++;
			r->end.lost += r->own ? 0 : pl->addr;
		}
		return rc;
	}
	if (pl->kind != PL_FUNC) {
		if (pr->index_pass) {
			r->stats.unknown_lines++;
			r->unknown_in_sections++;
		}
		return rc;
	}
	if (pl->tid != pr->tid)
		return rfail(r, -EBADMSG, line, "thread %u in the section of thread %u", pl->tid, pr->tid);
	uint32_t probe;
	uint16_t role;
	if ((err = line_probe(r, pl, line, &probe, &role)))
		return err;
	if (pr->index_pass) {
		r->stats.function_lines++;
		if (!role)
			r->stats.skipped_functions++;
		if (pl->ts < r->min_ts)
			r->min_ts = pl->ts;
		if (pl->ts > r->max_ts)
			r->max_ts = pl->ts;
	}
	/* a foreign file: a poll function entered right inside another one is
	 * the same task's poll seen twice (raw::poll -> Harness::poll) */
	if (!r->own && !pl->exit && role == AS_ROLE_POLL && pr->st.n &&
	    pr->st.frames[pr->st.n - 1].role == AS_ROLE_POLL) {
		uint32_t idx;
		if (strtab__find(&r->names, pl->name, pl->name_len, &idx) && r->fnames[idx].inner_poll)
			role = 0;
	}
	struct as_event ev;
	int has = cat_state__apply(&pr->st, pl->exit, role, probe, pl->addr, &ev);
	if (has == -E2BIG)
		return rfail(r, -EBADMSG, line, "calls nested deeper than %u", CAT_DEPTH_MAX);
	if (has < 0)
		return oom();
	/* a foreign file: name a task poll by the first closure it runs */
	if (pr->index_pass && !r->own && has && ev.type == AS_EV_FUTURE_ENTER && ev.task) {
		for (uint32_t i = pr->st.n - 1; i-- > 0;) {
			if (pr->st.frames[i].role != AS_ROLE_POLL)
				continue;
			struct as_probe *pp = &r->meta.probes[pr->st.frames[i].probe];
			const struct as_probe *fp = &r->meta.probes[probe];
			if (!pp->future && fp->future && !(pp->future = strdup(fp->future)))
				return oom();
			break;
		}
	}
	if (!has)
		return rc;
	ev.ts = pl->ts;
	ev.tid = pr->tid;
	ev.str = NULL;
	ev.stack = 0;
	if (ev.type == AS_EV_SPAWN) {
		if (!r->own || !ev.other || ev.other > r->n_spawns)
			return rfail(r, -EBADMSG, line, "spawn location %" PRIu64 " is not in the header",
				     ev.other);
		const struct spawn_loc *sl = &r->spawns[ev.other - 1];
		ev.str = sl->file;
		ev.other = (uint64_t)sl->line << 32 | sl->col;
	}
	pr->pending = true;
	pr->ev = ev;
	pr->ev_line = line;
	return rc;
}

/* ---- open ---- */

static int add_section(struct cat_reader *r, uint32_t tid, uint64_t start, uint64_t line)
{
	if (r->n_secs == UINT32_MAX - 1 ||
	    grow((void **)&r->secs, &r->cap_secs, r->n_secs + 1, sizeof(*r->secs)))
		return oom();
	int32_t th = -1;
	for (uint32_t i = 0; i < r->n_threads; i++)
		if (r->threads[i].tid == tid && !r->threads[i].used) {
			r->threads[i].used = true;
			th = (int32_t)i;
			r->counted++;
			break;
		}
	r->secs[r->n_secs++] = (struct section){ .start = start, .end = start, .line = line,
						 .tid = tid, .thread = th };
	return 0;
}

/* Whether the first bytes are a CAT / uftrace dump: text, starting with our
 * header or uftrace's, or with a `reading N.dat` line among the first ones. */
static bool detect(const char *buf, size_t n)
{
	if (starts(buf, buf + n, "# asyncscope cat ") || starts(buf, buf + n, "uftrace file header:"))
		return true;
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '\0' || ((unsigned char)buf[i] < 0x20 && buf[i] != '\n' &&
				       buf[i] != '\t' && buf[i] != '\r'))
			return false;
	const char *p = buf, *end = buf + n;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
		struct pline pl;
		parse_line(p, (size_t)(nl - p), &pl);
		if (pl.kind == PL_SECTION && pl.numeric)
			return true;
		if (pl.kind == PL_FUNC)
			return false;
		p = nl + 1;
	}
	return false;
}

/* Makes a seekable file of f: f itself, or a temporary copy of head and the
 * rest of f (a pipe). Returns the FILE to use, NULL with errno. */
static FILE *seekable(FILE *f, const void *head, size_t head_len)
{
	int fd = fileno(f);
	if (fd >= 0 && lseek(fd, 0, SEEK_CUR) >= 0)
		return f;
	FILE *t = tmpfile();
	if (!t)
		return NULL;
	char buf[65536];
	size_t n;
	if (head_len && fwrite(head, 1, head_len, t) != head_len)
		goto fail;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		if (fwrite(buf, 1, n, t) != n)
			goto fail;
	if (ferror(f) || fflush(t)) {
		errno = EIO;
		goto fail;
	}
	return t;
fail:
	fclose(t);
	return NULL;
}

static int index_file(struct cat_reader *r)
{
	struct lrd l = { .fd = r->fd, .end = r->size };
	struct proc pr;
	const char *s;
	size_t n;
	uint64_t start, line = 0;
	bool in_sec = false, numeric = false;
	struct as_event ev;
	int rc;

	proc_init(&pr, 0, true);
	r->min_ts = UINT64_MAX;
	while ((rc = lrd_next(&l, &s, &n, &start)) == 1) {
		struct pline pl;
		line++;
		r->stats.lines++;
		if (memchr(s, '\0', n)) {
			rc = rfail(r, -EBADMSG, line, "binary data (a NUL byte): not a text trace");
			goto out;
		}
		const char *why = parse_line(s, n, &pl);
		if (why) {
			rc = rfail(r, -EBADMSG, line, "malformed uftrace record: %s", why);
			goto out;
		}
		if (pl.kind == PL_SECTION) {
			if (in_sec && numeric) {
				if ((rc = finish_pending(r, &pr, &ev)) < 0)
					goto out;
				r->counted += (uint64_t)rc;
				r->secs[r->n_secs - 1].end = start;
			}
			cat_state__clear(&pr.st);
			proc_init(&pr, pl.tid, true);
			in_sec = true;
			numeric = pl.numeric;
			r->stats.sections++;
			if (numeric && (rc = add_section(r, pl.tid, l.off + l.pos, line + 1)))
				goto out;
			continue;
		}
		if (pl.kind == PL_OURS) {
			if (line == 1 && starts(s, s + n, "# asyncscope cat "))
				r->own = true;
			if (in_sec) {
				rc = rfail(r, -EBADMSG, line, "asyncscope header line after the first "
					   "'reading' line");
				goto out;
			}
			if (!r->own) {
				rc = rfail(r, -EBADMSG, line, "asyncscope header line without the "
					   "'# asyncscope cat' first line");
				goto out;
			}
			r->stats.header_lines++;
			if ((rc = header_line(r, s + 13, s + n, line)))
				goto out;
			continue;
		}
		if (!in_sec) {
			if (pl.kind == PL_FUNC || pl.kind == PL_ARGS || pl.kind == PL_RETVAL ||
			    pl.kind == PL_LOST) {
				rc = rfail(r, -EBADMSG, line, "a uftrace record before the first "
					   "'reading <tid>.dat' line");
				goto out;
			}
			if (pl.kind != PL_BLANK)
				r->stats.header_lines++;
			continue;
		}
		if (!numeric) {
			if (pl.kind != PL_BLANK)
				r->stats.unknown_lines++;
			continue;
		}
		if ((rc = proc_feed(r, &pr, &pl, line, &ev)) < 0)
			goto out;
		r->counted += (uint64_t)rc;
	}
	if (rc == -E2BIG) {
		rc = rfail(r, -EBADMSG, line + 1, "line longer than %u bytes", CAT_LINE_MAX);
		goto out;
	}
	if (rc < 0) {
		rc = rfail(r, rc, line, "read error");
		goto out;
	}
	if (in_sec && numeric) {
		if ((rc = finish_pending(r, &pr, &ev)) < 0)
			goto out;
		r->counted += (uint64_t)rc;
		r->secs[r->n_secs - 1].end = r->size;
	}
	rc = 0;
out:
	cat_state__clear(&pr.st);
	free(l.buf);
	return rc;
}

static int build_meta(struct cat_reader *r)
{
	struct as_trace_meta *m = &r->meta;
	char **strs[] = { &m->target, &m->build_id, &m->runtime, &m->cmdline };

	if (!r->own) {
		m->format_version = AS_TRACE_FORMAT_VERSION;
		m->pid = r->n_secs ? r->secs[0].tid : 0;
		m->clock_mono_ns = r->min_ts == UINT64_MAX ? 0 : r->min_ts;
		if (!m->runtime && !(m->runtime = strdup("uftrace")))
			return oom();
		r->end.end_ns = r->max_ts;
		r->end.missed = r->unknown_in_sections;
		r->hdr_events = r->counted;
		r->have_end = true;
	} else {
		if (!r->have_end && !r->truncated_mark)
			return rfail(r, -EBADMSG, 0, "the asyncscope header has no 'end' or "
				     "'truncated' line: the file is damaged");
		for (size_t i = 0; i < r->n_hints; i++)
			if (r->hints[i].section >= r->n_secs)
				return rfail(r, -EBADMSG, r->hints[i].line, "order hint names section %u "
					     "but the file has %u", r->hints[i].section, r->n_secs);
		if (r->counted > r->hdr_events)
			return rfail(r, -EBADMSG, 0, "its sections hold %" PRIu64 " events but its "
				     "header counts %" PRIu64 ": lines were added or edited",
				     r->counted, r->hdr_events);
		r->end.missed += r->unknown_in_sections;
	}
	for (size_t i = 0; i < 4; i++)
		if (!*strs[i] && !(*strs[i] = strdup("")))
			return oom();
	return 0;
}

int cat_reader__open(FILE *f, const void *head, size_t head_len, const char *path,
		     struct cat_reader **out, char *err, size_t errlen)
{
	struct cat_reader *r = NULL;
	char probe_buf[65536];
	FILE *g;
	int rc;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	g = seekable(f, head, head_len);
	if (!g) {
		int e = errno ? errno : EIO;
		if (err && errlen)
			snprintf(err, errlen, "cannot read %s: %s", path, strerror(e));
		fclose(f);
		return -e;
	}
	ssize_t got = pread(fileno(g), probe_buf, sizeof(probe_buf), 0);
	if (got <= 0 || !detect(probe_buf, (size_t)got)) {
		if (g != f)
			fclose(g);
		return 0;
	}
	if (g != f)
		fclose(f);
	r = calloc(1, sizeof(*r));
	if (!r || !(r->path = strdup(path))) {
		free(r);
		fclose(g);
		if (err && errlen)
			snprintf(err, errlen, "cannot read %s: out of memory", path);
		return -ENOMEM;
	}
	r->f = g;
	r->fd = fileno(g);
	struct stat sb;
	if (fstat(r->fd, &sb)) {
		rc = rfail(r, -EIO, 0, "stat");
		goto fail;
	}
	r->size = (uint64_t)sb.st_size;
	if ((rc = index_file(r)) || (rc = build_meta(r)))
		goto fail;
	r->stats.asyncscope = r->own;
	if (!r->own && (!r->meta.target || !*r->meta.target)) {
		/* a foreign log names no binary: say where the events come from */
		char *t = NULL;
		if (asprintf(&t, "(uftrace dump %s)", path) < 0) {
			rc = rfail(r, -ENOMEM, 0, "meta");
			goto fail;
		}
		free(r->meta.target);
		r->meta.target = t;
	}
	/* the merge: one cursor per section */
	r->curs = calloc(r->n_secs ? r->n_secs : 1, sizeof(*r->curs));
	if (!r->curs || cat_heap__init(&r->heap, r->n_secs)) {
		rc = rfail(r, -ENOMEM, 0, "merge");
		goto fail;
	}
	for (uint32_t i = 0; i < r->n_secs; i++) {
		struct cursor *c = &r->curs[i];
		c->l = (struct lrd){ .fd = r->fd, .off = r->secs[i].start, .end = r->secs[i].end };
		c->line = r->secs[i].line;
		proc_init(&c->pr, r->secs[i].tid, false);
		c->thread_pending = r->secs[i].thread >= 0;
	}
	r->consumed = r->n_secs ? r->secs[0].start : r->size;
	*out = r;
	return 1;
fail:
	if (err && errlen)
		snprintf(err, errlen, "%s", r->errmsg);
	cat_reader__free(r);
	return rc < 0 ? rc : -EBADMSG;
}

/* ---- merge ---- */

/* Loads the next event of section i into its head. Returns 0 (head loaded
 * or the section done) or a negative error. */
static int advance(struct cat_reader *r, uint32_t i)
{
	struct cursor *c = &r->curs[i];
	const char *s;
	size_t n;
	uint64_t start;
	int rc;

	c->have = false;
	if (c->done)
		return 0;
	if (c->thread_pending) {
		c->thread_pending = false;
		c->head = r->threads[r->secs[i].thread].ev;
		c->head_overridden = false;
		c->have = true;
		return 0;
	}
	for (;;) {
		rc = lrd_next(&c->l, &s, &n, &start);
		if (rc < 0)
			return rfail(r, rc == -E2BIG ? -EBADMSG : rc, c->line, "read error");
		if (rc == 0) {
			c->done = true;
			rc = finish_pending(r, &c->pr, &c->head);
			if (rc < 0)
				return rc;
			c->have = rc == 1;
			c->head_overridden = c->pr.overridden;
			cat_state__clear(&c->pr.st);
			free(c->l.buf);
			c->l.buf = NULL;
			return 0;
		}
		r->consumed += n + 1;
		struct pline pl;
		const char *why = parse_line(s, n, &pl);
		uint64_t line = c->line++;
		if (why)
			return rfail(r, -EBADMSG, line, "malformed uftrace record: %s", why);
		rc = proc_feed(r, &c->pr, &pl, line, &c->head);
		if (rc < 0)
			return rc;
		if (rc == 1) {
			c->head_overridden = c->pr.overridden;
			c->have = true;
			return 0;
		}
	}
}

static int merge_fail(struct cat_reader *r, int err)
{
	snprintf(r->msg, sizeof(r->msg), "%s", r->errmsg);
	r->err = err;
	return err;
}

int cat_reader__next(struct cat_reader *r, struct as_event *ev)
{
	int rc;

	if (r->err)
		return r->err;
	if (r->done)
		return 0;
	if (!r->started) {
		/* first call: load every head */
		r->started = true;
		for (uint32_t i = 0; i < r->n_secs; i++) {
			if ((rc = advance(r, i)))
				return merge_fail(r, rc);
			if (r->curs[i].have)
				cat_heap__push(&r->heap, i, r->curs[i].head.ts);
		}
	}
	uint32_t s = cat_heap__top(&r->heap);
	if (r->next_hint < r->n_hints && r->hints[r->next_hint].step <= r->events) {
		const struct order_hint *oh = &r->hints[r->next_hint];
		if (r->events + 1 >= oh->step + oh->count)
			r->next_hint++;
		s = oh->section;
		if (!r->curs[s].have) {
			rfail(r, -EBADMSG, oh->line, "order hint at step %" PRIu64 " names section %u, "
			      "which has no event left", r->events, s);
			return merge_fail(r, -EBADMSG);
		}
	}
	if (s == UINT32_MAX) {
		if (r->events != r->hdr_events || r->truncated_mark) {
			r->err = -ENODATA;
			if (r->truncated_mark)
				snprintf(r->msg, sizeof(r->msg), "%s is truncated after %" PRIu64
					 " events (the recording did not finish): rerun with "
					 "--partial to use them", r->path, r->events);
			else
				snprintf(r->msg, sizeof(r->msg), "%s is truncated after %" PRIu64
					 " of the %" PRIu64 " events its header counts (lines were "
					 "cut or removed): rerun with --partial to use them", r->path,
					 r->events, r->hdr_events);
			return r->err;
		}
		r->end.events = r->events;
		r->done = true;
		return 0;
	}
	*ev = r->curs[s].head;
	bool overridden = r->curs[s].head_overridden;
	cat_heap__remove(&r->heap, s);
	/* the header's task ids, consumed in merge order */
	if (r->own && ev->type == AS_EV_POLL_BEGIN && ev->task && ev->task != UINT64_MAX) {
		uint64_t h;
		uint64_t id = 0;
		if (u64map__get(&r->run_head, ev->task, &h) && h) {
			struct task_run *run = &r->runs[h - 1];
			id = run->id;
			if (--run->polls == 0 &&
			    u64map__set(&r->run_head, ev->task,
					run->next == UINT32_MAX ? 0 : (uint64_t)run->next + 1)) {
				rfail(r, -ENOMEM, 0, "oom");
				return merge_fail(r, -ENOMEM);
			}
		}
		if (!overridden)
			ev->other = id;
	}
	if ((rc = advance(r, s)))
		return merge_fail(r, rc);
	if (r->curs[s].have)
		cat_heap__push(&r->heap, s, r->curs[s].head.ts);
	r->events++;
	return 1;
}

const struct as_trace_meta *cat_reader__meta(const struct cat_reader *r)
{
	return &r->meta;
}

const char *cat_reader__error(const struct cat_reader *r)
{
	return r->err ? r->msg : "";
}

const struct as_trace_end *cat_reader__end(const struct cat_reader *r)
{
	return r->done && !r->err ? &r->end : NULL;
}

uint64_t cat_reader__events(const struct cat_reader *r)
{
	return r->events;
}

uint64_t cat_reader__offset(const struct cat_reader *r)
{
	return r->consumed;
}

const struct cat_stats *cat_reader__stats(const struct cat_reader *r)
{
	return &r->stats;
}

void cat_reader__free(struct cat_reader *r)
{
	if (!r)
		return;
	if (r->f)
		fclose(r->f);
	free(r->path);
	trace_meta__clear(&r->meta);
	free(r->secs);
	for (uint32_t i = 0; i < r->n_threads; i++)
		free((char *)r->threads[i].ev.str);
	free(r->threads);
	for (uint32_t i = 0; i < r->n_spawns; i++)
		free(r->spawns[i].file);
	free(r->spawns);
	free(r->runs);
	u64map__clear(&r->run_head);
	u64map__clear(&r->run_tail);
	free(r->hints);
	for (uint32_t i = 0; r->fnames && i < r->names.n; i++)
		free(r->fnames[i].rust);
	free(r->fnames);
	strtab__clear(&r->names);
	free(r->name_probe);
	strtab__clear(&r->keys);
	for (uint32_t i = 0; r->curs && i < r->n_secs; i++) {
		free(r->curs[i].l.buf);
		cat_state__clear(&r->curs[i].pr.st);
	}
	free(r->curs);
	cat_heap__free(&r->heap);
	free(r);
}
