/* json_check(): a recursive-descent JSON checker (see json_check.h). It
 * builds nothing; nesting is bounded so that a deep document cannot
 * overflow the stack (the writers nest a few levels). */
#include "json_check.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define MAX_DEPTH 256

struct jc {
	const unsigned char *p, *end, *start;
	const char *err;
};

static bool fail(struct jc *c, const char *what)
{
	if (!c->err)
		c->err = what;
	return false;
}

static void ws(struct jc *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

static bool lit(struct jc *c, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, s, n))
		return fail(c, "bad literal");
	c->p += n;
	return true;
}

/* One UTF-8 sequence at c->p (its first byte >= 0x80): shortest form, no
 * surrogates, at most U+10FFFF. */
static bool utf8(struct jc *c)
{
	unsigned char b = *c->p;
	size_t n = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
	uint32_t cp;

	if (!n || (size_t)(c->end - c->p) < n)
		return fail(c, "invalid UTF-8");
	cp = b & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((c->p[i] & 0xc0) != 0x80)
			return fail(c, "invalid UTF-8");
		cp = cp << 6 | (c->p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return fail(c, "invalid UTF-8");
	c->p += n;
	return true;
}

static bool hex4(struct jc *c, uint32_t *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++, c->p++) {
		unsigned char h = c->p < c->end ? *c->p : 0;
		int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 :
			h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;

		if (d < 0)
			return fail(c, "bad \\u escape");
		*v = *v << 4 | (uint32_t)d;
	}
	return true;
}

static bool string(struct jc *c)
{
	c->p++;   /* the opening quote */
	while (c->p < c->end) {
		unsigned char b = *c->p;

		if (b == '"') {
			c->p++;
			return true;
		}
		if (b < 0x20)
			return fail(c, "control character in a string");
		if (b >= 0x80) {
			if (!utf8(c))
				return false;
			continue;
		}
		c->p++;
		if (b != '\\')
			continue;
		if (c->p >= c->end)
			break;
		b = *c->p++;
		if (b == 'u') {
			uint32_t v, lo;

			if (!hex4(c, &v))
				return false;
			if (v >= 0xdc00 && v <= 0xdfff)
				return fail(c, "lone low surrogate");
			if (v >= 0xd800 && v <= 0xdbff) {   /* a pair: \uD8xx\uDCxx */
				if (c->end - c->p < 2 || c->p[0] != '\\' || c->p[1] != 'u')
					return fail(c, "lone high surrogate");
				c->p += 2;
				if (!hex4(c, &lo))
					return false;
				if (lo < 0xdc00 || lo > 0xdfff)
					return fail(c, "lone high surrogate");
			}
		} else if (!strchr("\"\\/bfnrt", b) || !b) {
			c->p--;
			return fail(c, "bad escape");
		}
	}
	return fail(c, "unterminated string");
}

static bool digits(struct jc *c)
{
	const unsigned char *s = c->p;

	while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
		c->p++;
	return c->p > s || fail(c, "bad number");
}

static bool number(struct jc *c)
{
	if (*c->p == '-')
		c->p++;
	if (c->p < c->end && *c->p == '0')
		c->p++;
	else if (!digits(c))
		return false;
	if (c->p < c->end && *c->p == '.') {
		c->p++;
		if (!digits(c))
			return false;
	}
	if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
		c->p++;
		if (c->p < c->end && (*c->p == '+' || *c->p == '-'))
			c->p++;
		if (!digits(c))
			return false;
	}
	return true;
}

static bool value(struct jc *c, int depth)
{
	ws(c);
	if (c->p >= c->end)
		return fail(c, "value expected");
	if (depth > MAX_DEPTH)
		return fail(c, "nested too deep");
	switch (*c->p) {
	case '"': return string(c);
	case 't': return lit(c, "true");
	case 'f': return lit(c, "false");
	case 'n': return lit(c, "null");
	case '[':
	case '{': {
		bool obj = *c->p == '{';
		char close = obj ? '}' : ']';

		c->p++;
		ws(c);
		if (c->p < c->end && *c->p == close) {
			c->p++;
			return true;
		}
		for (;;) {
			if (obj) {
				ws(c);
				if (c->p >= c->end || *c->p != '"')
					return fail(c, "key expected");
				if (!string(c))
					return false;
				ws(c);
				if (c->p >= c->end || *c->p != ':')
					return fail(c, "':' expected");
				c->p++;
			}
			if (!value(c, depth + 1))
				return false;
			ws(c);
			if (c->p < c->end && *c->p == ',') {
				c->p++;
				continue;
			}
			if (c->p < c->end && *c->p == close) {
				c->p++;
				return true;
			}
			return fail(c, obj ? "',' or '}' expected" : "',' or ']' expected");
		}
	}
	default:
		if (*c->p == '-' || (*c->p >= '0' && *c->p <= '9'))
			return number(c);
		return fail(c, "value expected");
	}
}

const char *json_check(const char *buf, size_t len, size_t *off)
{
	struct jc c = { .p = (const unsigned char *)buf, .end = (const unsigned char *)buf + len,
			.start = (const unsigned char *)buf };

	if (value(&c, 0)) {
		ws(&c);
		if (c.p != c.end)
			fail(&c, "bytes after the document");
	}
	if (off)
		*off = (size_t)(c.p - c.start);
	return c.err;
}
