/* CAT / uftrace dump lines (see cat/lines.h): the buffered line reader and
 * the one-line grammar. Nothing read is trusted: every number is bounded. */
#include "cat/lines.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cat/names.h"

int cat_line_reader__next(struct cat_line_reader *l, const char **s, size_t *n, uint64_t *start)
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

bool cat_parse_u64(const char **pp, const char *end, int base, uint64_t *v, size_t maxdig)
{
	const char *p = *pp;
	uint64_t x = 0;
	size_t k = 0;

	for (; p < end && k <= maxdig; p++, k++) {
		int d = cat_hexval(*p);
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

bool cat_starts(const char *s, const char *end, const char *lit)
{
	size_t n = strlen(lit);
	return (size_t)(end - s) >= n && !memcmp(s, lit, n);
}

/* A number after "TYPE: " of an args / retval value line: 0x hex or decimal. */
static void parse_value(const char *p, const char *end, struct cat_line *pl)
{
	const char *colon = memchr(p, ':', (size_t)(end - p));
	pl->numeric = false;
	if (!colon || colon + 1 >= end || colon[1] != ' ')
		return;
	p = colon + 2;
	bool hex = cat_starts(p, end, "0x");
	if (hex)
		p += 2;
	uint64_t v;
	if (cat_parse_u64(&p, end, hex ? 16 : 10, &v, hex ? 16 : 20) && p == end) {
		pl->val = v;
		pl->numeric = true;
	}
}

/* Classifies (and for records parses) one line. Returns NULL, or what is
 * wrong with a line that looks like a uftrace record but is not one. */
const char *cat_line_parse(const char *s, size_t n, struct cat_line *pl)
{
	const char *end = s + n, *p = s;

	memset(pl, 0, sizeof(*pl));
	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if (end == s) {
		pl->kind = CAT_LINE_BLANK;
		return NULL;
	}
	if (cat_starts(s, end, "# asyncscope ")) {
		pl->kind = CAT_LINE_OURS;
		return NULL;
	}
	if (cat_starts(s, end, "reading ") && end - s > 12 && !memcmp(end - 4, ".dat", 4)) {
		const char *q = s + 8;
		uint64_t tid;
		pl->kind = CAT_LINE_SECTION;
		pl->numeric = cat_parse_u64(&q, end - 4, 10, &tid, 10) && q == end - 4 && tid <= UINT32_MAX;
		pl->tid = (uint32_t)tid;
		return NULL;
	}
	if (cat_starts(s, end, "  args[")) {
		const char *q = s + 7;
		uint64_t i;
		pl->kind = CAT_LINE_OTHER;
		if (cat_parse_u64(&q, end, 10, &i, 4) && cat_starts(q, end, "] ")) {
			pl->kind = CAT_LINE_ARGVAL;
			pl->index = (uint32_t)i;
			parse_value(q + 2, end, pl);
		}
		return NULL;
	}
	if (cat_starts(s, end, "  retval ")) {
		pl->kind = CAT_LINE_RETVALVAL;
		parse_value(s + 9, end, pl);
		return NULL;
	}
	/* a record: "SEC.NSEC  TID: [TYPE] ..." */
	pl->kind = CAT_LINE_OTHER;
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
	if (p == t0 || !cat_starts(p, end, ": ["))
		return NULL;
	/* from here on it is a record */
	uint64_t sec, frac, tid;
	const char *x = s0;
	if (sd > 11 || !cat_parse_u64(&x, end, 10, &sec, 11))
		return "timestamp out of range";
	x = f0;
	if (fd > 9 || !cat_parse_u64(&x, end, 10, &frac, 9))
		return "more than 9 decimals in the timestamp";
	x = t0;
	if (!cat_parse_u64(&x, end, 10, &tid, 10) || tid > UINT32_MAX)
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
		pl->kind = tl == 5 ? CAT_LINE_ARGS : CAT_LINE_RETVAL;
		return NULL;
	}
	if (tl == 5 && !memcmp(p, "lost ", 5)) {
		const char *q = rest;
		uint64_t cnt = 1;
		if (cat_starts(q, end, ": ")) {
			q += 2;
			if (!cat_parse_u64(&q, end, 10, &cnt, 20))
				cnt = 1;
		}
		pl->kind = CAT_LINE_LOST;
		pl->addr = cnt;
		return NULL;
	}
	if (!(tl == 5 && (!memcmp(p, "entry", 5) || !memcmp(p, "exit ", 5))))
		return NULL;   /* [event], [data ], [time ], ...: ignored */
	pl->exit = p[1] == 'x';
	if (!cat_starts(rest, end, " "))
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
	if (!cat_parse_u64(&q, end, 10, &depth, 10) || q != end)
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
	if (!cat_parse_u64(&q, d - 1, 16, &pl->addr, 16) || q != d - 1)
		return "bad address (hexadecimal expected)";
	if (open == rest)
		return "empty function name";
	pl->name = rest;
	pl->name_len = (size_t)(open - rest);
	pl->kind = CAT_LINE_FUNC;
	return NULL;
}

bool cat_detect(const char *buf, size_t n)
{
	if (cat_starts(buf, buf + n, "# asyncscope cat ") ||
	    cat_starts(buf, buf + n, "uftrace file header:"))
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
		struct cat_line pl;
		cat_line_parse(p, (size_t)(nl - p), &pl);
		if (pl.kind == CAT_LINE_SECTION && pl.numeric)
			return true;
		if (pl.kind == CAT_LINE_FUNC)
			return false;
		p = nl + 1;
	}
	return false;
}

