/* CAT / uftrace name spelling and header value escaping (see cat/names.h).
 * Pure C; depends on trace/event.h for the role names. */
#include "cat/names.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "trace/event.h"

/* ---- uftrace's spelling of Rust names ---- */

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

/* ---- header values ---- */

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

int cat_hexval(char c)
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
		int hi = i + 2 < n ? cat_hexval(s[i + 1]) : -1;
		int lo = i + 2 < n ? cat_hexval(s[i + 2]) : -1;
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
