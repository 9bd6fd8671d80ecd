/* Semantic versions and half-open version ranges (see semver.h). Pure C. */
#include "sym/semver.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_ident(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}

/* A number without leading zeros, below UINT32_MAX (so that the next
 * version is always representable). */
static int parse_num(const char **s, uint32_t *out)
{
	const char *p = *s;
	uint64_t v = 0;

	if (!is_digit(*p) || (p[0] == '0' && is_digit(p[1])))
		return -EINVAL;
	while (is_digit(*p)) {
		v = v * 10 + (uint64_t)(*p++ - '0');
		if (v >= UINT32_MAX)
			return -EINVAL;
	}
	*out = (uint32_t)v;
	*s = p;
	return 0;
}

/* Dot-separated non-empty identifiers of [0-9A-Za-z-]; returns their end,
 * or NULL. */
static const char *idents_end(const char *p)
{
	for (;;) {
		if (!is_ident(*p))
			return NULL;
		while (is_ident(*p))
			p++;
		if (*p != '.' || !is_ident(p[1]))
			return p;
		p++;
	}
}

int semver_parse_prefix(const char *s, struct semver *v, const char **end)
{
	struct semver out = { 0 };
	uint32_t *nums[3] = { &out.major, &out.minor, &out.patch };
	const char *p = s;

	if (!s)
		return -EINVAL;
	for (int i = 0; i < 3; i++) {
		if (i) {
			if (*p != '.' || !is_digit(p[1]))
				break;
			p++;
		}
		if (parse_num(&p, nums[i]))
			return -EINVAL;
		out.parts = (uint8_t)(i + 1);
	}
	if (!out.parts)
		return -EINVAL;
	if (out.parts == 3 && *p == '-') {
		const char *e = idents_end(p + 1);
		if (!e)
			return -EINVAL;
		if ((size_t)(e - p - 1) >= sizeof(out.pre))
			return -EINVAL;
		memcpy(out.pre, p + 1, (size_t)(e - p - 1));
		p = e;
	}
	if (out.parts == 3 && *p == '+') {
		const char *e = idents_end(p + 1);
		if (!e)
			return -EINVAL;
		p = e;
	}
	*v = out;
	if (end)
		*end = p;
	return 0;
}

int semver_parse(const char *s, struct semver *v)
{
	const char *end;
	struct semver out;

	if (semver_parse_prefix(s, &out, &end) || *end)
		return -EINVAL;
	*v = out;
	return 0;
}

static bool numeric_ident(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!is_digit(s[i]))
			return false;
	return len > 0;
}

static int cmp_pre(const char *a, const char *b)
{
	/* a release orders after its pre-releases */
	if (!*a || !*b)
		return !*a - !*b;
	while (*a && *b) {
		size_t la = strcspn(a, "."), lb = strcspn(b, ".");
		bool na = numeric_ident(a, la), nb = numeric_ident(b, lb);
		int c;
		if (na && nb)
			c = la != lb ? (la < lb ? -1 : 1) : memcmp(a, b, la);   /* no leading zeros */
		else if (na || nb)
			c = na ? -1 : 1;
		else {
			c = memcmp(a, b, la < lb ? la : lb);
			if (!c && la != lb)
				c = la < lb ? -1 : 1;
		}
		if (c)
			return c < 0 ? -1 : 1;
		a += la + (a[la] == '.');
		b += lb + (b[lb] == '.');
	}
	return !!*a - !!*b;
}

int semver_cmp(const struct semver *a, const struct semver *b)
{
	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	if (a->minor != b->minor)
		return a->minor < b->minor ? -1 : 1;
	if (a->patch != b->patch)
		return a->patch < b->patch ? -1 : 1;
	return cmp_pre(a->pre, b->pre);
}

int semver_format(const struct semver *v, char *buf, size_t n)
{
	if (v->parts == 1 && !v->pre[0])
		return snprintf(buf, n, "%u", v->major);
	if (v->parts == 2 && !v->pre[0])
		return snprintf(buf, n, "%u.%u", v->major, v->minor);
	return snprintf(buf, n, "%u.%u.%u%s%s", v->major, v->minor, v->patch, v->pre[0] ? "-" : "",
			v->pre);
}

struct semver_range semver_range_any(void)
{
	return (struct semver_range){ 0 };
}

/* The first version after every version v stands for at its precision. */
static struct semver successor(const struct semver *v)
{
	struct semver s = { .major = v->major, .minor = v->minor, .patch = v->patch, .parts = 3 };

	if (v->pre[0])
		return s;   /* the release of a pre-release (see semver.h) */
	if (v->parts == 1)
		s = (struct semver){ .major = v->major + 1, .parts = 3 };
	else if (v->parts == 2)
		s = (struct semver){ .major = v->major, .minor = v->minor + 1, .parts = 3 };
	else
		s.patch++;
	return s;
}

struct semver_range semver_range_exact(const struct semver *v)
{
	struct semver_range r = { .has_lo = true, .has_hi = true, .lo = *v };

	r.hi = successor(v);
	return r;
}

bool semver_range_contains(const struct semver_range *r, const struct semver *v)
{
	return (!r->has_lo || semver_cmp(&r->lo, v) <= 0) &&
	       (!r->has_hi || semver_cmp(v, &r->hi) < 0);
}

bool semver_range_empty(const struct semver_range *r)
{
	return r->has_lo && r->has_hi && semver_cmp(&r->lo, &r->hi) >= 0;
}

void semver_range_intersect(struct semver_range *r, const struct semver_range *other)
{
	if (other->has_lo && (!r->has_lo || semver_cmp(&other->lo, &r->lo) > 0)) {
		r->lo = other->lo;
		r->has_lo = true;
	}
	if (other->has_hi && (!r->has_hi || semver_cmp(&other->hi, &r->hi) < 0)) {
		r->hi = other->hi;
		r->has_hi = true;
	}
}

int semver_range_parse(const char *s, struct semver_range *r)
{
	struct semver_range out = { 0 };
	struct semver a, b;
	const char *p;

	if (!s)
		return -EINVAL;
	if (!strcmp(s, "any")) {
		*r = out;
		return 0;
	}
	if (!strncmp(s, "before ", 7)) {
		if (semver_parse(s + 7, &b))
			return -EINVAL;
		out.has_hi = true;
		out.hi = b;
		*r = out;
		return 0;
	}
	if (semver_parse_prefix(s, &a, &p))
		return -EINVAL;
	if (!*p) {
		*r = semver_range_exact(&a);
		return 0;
	}
	out.has_lo = true;
	out.lo = a;
	if (!strcmp(p, " or later")) {
		*r = out;
		return 0;
	}
	if (strncmp(p, " to ", 4))
		return -EINVAL;
	p += 4;
	out.has_hi = true;
	if (!strncmp(p, "before ", 7)) {
		if (semver_parse(p + 7, &b))
			return -EINVAL;
		out.hi = b;
	} else {
		/* an inclusive upper bound: every version it stands for */
		if (semver_parse(p, &b) || b.pre[0])
			return -EINVAL;
		out.hi = successor(&b);
	}
	*r = out;
	return 0;
}

/* A lower bound for people: "1.49" for 1.49.0, else in full. */
static int lo_text(const struct semver *v, char *buf, size_t n)
{
	struct semver s = *v;

	s.parts = (!s.pre[0] && !s.patch) ? 2 : 3;
	return semver_format(&s, buf, n);
}

/* The last version below an upper bound, as text, when it has one at some
 * precision: X.Y.0 -> "X.(Y-1)", X.Y.Z -> "X.Y.(Z-1)". */
static bool hi_inclusive_text(const struct semver *hi, char *buf, size_t n)
{
	struct semver s = *hi;

	if (s.pre[0] || (!s.minor && !s.patch))
		return false;
	if (s.patch) {
		s.patch--;
		s.parts = 3;
	} else {
		s.minor--;
		s.parts = 2;
	}
	semver_format(&s, buf, n);
	return true;
}

int semver_range_format(const struct semver_range *r, char *buf, size_t n)
{
	char lo[64], hi[64];

	if (!r->has_lo && !r->has_hi)
		return snprintf(buf, n, "any");
	if (semver_range_empty(r))
		return snprintf(buf, n, "none");
	if (!r->has_hi) {
		lo_text(&r->lo, lo, sizeof(lo));
		return snprintf(buf, n, "%s or later", lo);
	}
	if (!r->has_lo) {
		lo_text(&r->hi, hi, sizeof(hi));
		return snprintf(buf, n, "before %s", hi);
	}
	/* exactly one pre-release: up to its release */
	if (r->lo.pre[0] && !r->hi.pre[0] && r->lo.major == r->hi.major &&
	    r->lo.minor == r->hi.minor && r->lo.patch == r->hi.patch) {
		struct semver s = r->lo;
		s.parts = 3;
		return semver_format(&s, buf, n);
	}
	lo_text(&r->lo, lo, sizeof(lo));
	if (!hi_inclusive_text(&r->hi, hi, sizeof(hi))) {
		char b[64];
		lo_text(&r->hi, b, sizeof(b));
		return snprintf(buf, n, "%s to before %s", lo, b);
	}
	/* [1.53.1, 1.53.2) and [1.49.0, 1.50.0): one version at its precision */
	struct semver_range exact = semver_range_exact(&r->lo);
	if (!strcmp(lo, hi) || (!semver_cmp(&exact.hi, &r->hi) && !r->lo.pre[0])) {
		struct semver s = r->lo;
		s.parts = 3;
		return strcmp(lo, hi) ? semver_format(&s, buf, n) : snprintf(buf, n, "%s", lo);
	}
	return snprintf(buf, n, "%s to %s", lo, hi);
}
