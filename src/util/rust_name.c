/* Display forms of Rust names (see rust_name.h). Depends on libc only. */
#include "util/rust_name.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ELLIPSIS "..."
#define LEFT_CUT "...::"

int rust_name_width(const char *s)
{
	int w = 0;

	for (; s && *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || (unsigned char)c >= 0x80;
}

/* "{word#N}" or "{word_env#N}" at s: sets the word's length (without
 * "_env"), whether it had "_env", and the length of the whole; false when
 * s is something else. */
static bool braced_item(const char *s, size_t *word, bool *env, size_t *len)
{
	size_t i = 1, w;

	if (s[0] != '{')
		return false;
	while (islower((unsigned char)s[i]) || s[i] == '_')
		i++;
	w = i - 1;
	if (!w || s[i] != '#' || !isdigit((unsigned char)s[i + 1]))
		return false;
	i++;
	while (isdigit((unsigned char)s[i]))
		i++;
	if (s[i] != '}')
		return false;
	*env = w > 4 && !memcmp(s + 1 + w - 4, "_env", 4);
	*word = *env ? w - 4 : w;
	*len = i + 1;
	return true;
}

/* Legacy "{{word}}" at s (word: letters, digits, '_', '.', '-'): its
 * length, 0 when s is not one. */
static size_t legacy_item(const char *s)
{
	size_t i = 2;

	if (s[0] != '{' || s[1] != '{')
		return 0;
	while (isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.' || s[i] == '-')
		i++;
	return i > 2 && s[i] == '}' && s[i + 1] == '}' ? i + 2 : 0;
}

/* The rewrites of both forms, from s into o (room for strlen(s) + 1). */
static void rewrite(const char *s, char *o)
{
	static const char global[] = ", alloc::alloc::Global";
	size_t k = 0, word, len;
	bool env;

	for (size_t i = 0; s[i];) {
		size_t lg = legacy_item(s + i);

		if (lg) {
			o[k++] = '{';
			memcpy(o + k, s + i + 2, lg - 4);
			k += lg - 4;
			o[k++] = '}';
			i += lg;
			continue;
		}
		if (braced_item(s + i, &word, &env, &len)) {
			/* a fn's body ({async_fn_env#0}, {async_fn#0}, a gen fn's):
			 * the fn itself, named by the segment before */
			if (word >= 3 && !memcmp(s + i + 1 + word - 3, "_fn", 3)) {
				if (k >= 2 && o[k - 1] == ':' && o[k - 2] == ':')
					k -= 2;
				else if (s[i + len] == ':' && s[i + len + 1] == ':')
					len += 2;   /* the first segment: its "::" goes */
				i += len;
				continue;
			}
			o[k++] = '{';
			memcpy(o + k, s + i + 1, word);
			k += word;
			/* "#N}" after the word (and "_env") */
			size_t rest = len - 1 - word - (env ? 4 : 0);
			memcpy(o + k, s + i + len - rest, rest);
			k += rest;
			i += len;
			continue;
		}
		if (!strncmp(s + i, global, sizeof(global) - 1)) {
			i += sizeof(global) - 1;
			continue;
		}
		o[k++] = s[i++];
	}
	o[k] = '\0';
}

struct cbuf {
	char *s;
	size_t len;
};

static void put(struct cbuf *o, const char *s, size_t n)
{
	memcpy(o->s + o->len, s, n);
	o->len += n;
}

/* The index of the '>' closing the '<' at s[i] ("->" is no bracket), or n. */
static size_t closing(const char *s, size_t n, size_t i)
{
	int depth = 0;

	for (; i < n; i++) {
		if (s[i] == '<')
			depth++;
		else if (s[i] == '>' && !(i > 0 && s[i - 1] == '-') && --depth == 0)
			return i;
	}
	return n;
}

/* Copies s[0..n) into o with generic argument lists collapsed ("<..>", a
 * turbofish "::<..>" dropped); a qualified bracket ("<X as Y>", "<impl X>")
 * stays, its paths reduced to their last named segment (leaf). */
static void collapse(const char *s, size_t n, struct cbuf *o, bool leaf)
{
	size_t path_start = o->len;

	for (size_t i = 0; i < n;) {
		char c = s[i];

		if (c == '<') {
			size_t j = closing(s, n, i);
			char prev = o->len ? o->s[o->len - 1] : '\0';
			bool turbofish = o->len >= 2 && prev == ':' && o->s[o->len - 2] == ':';

			if (turbofish) {
				o->len -= 2;
			} else if (ident_char(prev) || prev == '}' || prev == '>' || prev == ')' ||
				   prev == ']') {
				put(o, "<..>", 4);
			} else {
				put(o, "<", 1);
				collapse(s + i + 1, j - i - 1, o, true);
				if (j < n)
					put(o, ">", 1);
			}
			i = j < n ? j + 1 : n;
			continue;
		}
		if (leaf && c == ':' && i + 2 < n && s[i + 1] == ':') {
			/* a named segment follows: the path so far goes, but for
			 * a qualified bracket heading it ("<Conn<..>>::serve") */
			if (s[i + 2] != '{' && !(o->len > path_start && o->s[path_start] == '<'))
				o->len = path_start;
			else
				put(o, "::", 2);
			i += 2;
			continue;
		}
		put(o, &c, 1);
		i++;
		if (leaf && strchr(" &*([,;", c))
			path_start = o->len;
	}
}

/* Start offsets of the top-level "::"-separated segments of s into starts
 * (at most max); returns their number. */
static size_t segments(const char *s, size_t *starts, size_t max)
{
	size_t n = 0;
	int depth = 0;

	starts[n++] = 0;
	for (size_t i = 0; s[i]; i++) {
		char c = s[i];

		if (c == '<' || c == '(' || c == '[' || c == '{')
			depth++;
		else if ((c == '>' && !(i > 0 && s[i - 1] == '-')) || c == ')' || c == ']' ||
			 c == '}')
			depth -= depth > 0;
		else if (!depth && c == ':' && s[i + 1] == ':' && s[i + 2] && n < max) {
			starts[n++] = i + 2;
			i++;
		}
	}
	return n;
}

static void shorten(const char *r, char *s, int width);

/* A wrapper of one type, "a::b::Wrap<T>" (BlockingTask<F>, Instrumented<F>):
 * the wrapper's last segment and T shortened inside it, which is what
 * tells such tasks apart ("BlockingTask<...::main::{closure#1}>"). Returns
 * false when r is no such name (several arguments, a qualified bracket,
 * text after the '>') or on allocation failure. */
static bool shorten_wrapper(const char *r, char *s, int width)
{
	size_t n = strlen(r), lt = 0, leaf = 0;
	int depth = 0;

	for (size_t i = 0; i < n && !lt; i++) {
		if (r[i] == '{' || r[i] == '(' || r[i] == '[')
			depth++;
		else if (r[i] == '}' || r[i] == ')' || r[i] == ']')
			depth -= depth > 0;
		else if (!depth && r[i] == ':' && r[i + 1] == ':')
			leaf = i + 2;
		else if (!depth && r[i] == '<')
			lt = i;
	}
	/* lt - 1 a ':': a turbofish ("drop_in_place::<T>"), a function's */
	if (!lt || r[lt - 1] == ':' || closing(r, n, lt) != n - 1)
		return false;
	depth = 0;
	for (size_t i = lt + 1; i < n - 1; i++) {
		if (r[i] == '<' || r[i] == '(' || r[i] == '[' || r[i] == '{')
			depth++;
		else if ((r[i] == '>' && r[i - 1] != '-') || r[i] == ')' || r[i] == ']' ||
			 r[i] == '}')
			depth -= depth > 0;
		else if (!depth && r[i] == ',')
			return false;
	}
	size_t inner_len = n - lt - 2;
	char *inner = malloc(inner_len + 1), *out = malloc(2 * inner_len + 16);
	int room = width - (int)(lt - leaf) - 2;

	if (!inner || !out) {
		free(inner);
		free(out);
		return false;
	}
	memcpy(inner, r + lt + 1, inner_len);
	inner[inner_len] = '\0';
	shorten(inner, out, room > 16 ? room : 16);
	memcpy(s, r + leaf, lt - leaf);
	sprintf(s + (lt - leaf), "<%s>", out);
	free(inner);
	free(out);
	return true;
}

/* The short form of the rewritten name r (s: room for 2 * strlen(r) + 16). */
static void shorten(const char *r, char *s, int width)
{
	struct cbuf o = { s, 0 };
	size_t starts[256], n, last_named = 0;

	if (rust_name_width(r) <= width) {
		strcpy(s, r);
		return;
	}
	if (shorten_wrapper(r, s, width))
		return;
	collapse(r, strlen(r), &o, false);
	s[o.len] = '\0';
	if (rust_name_width(s) <= width)
		return;
	n = segments(s, starts, sizeof(starts) / sizeof(starts[0]));
	for (size_t i = 0; i < n; i++)
		if (s[starts[i]] != '{')
			last_named = i;
	/* at least from the last named segment, and the qualified bracket it
	 * belongs to ("<Checksum as Future>::poll") */
	if (last_named && s[starts[last_named - 1]] == '<')
		last_named--;
	size_t keep = last_named;

	for (size_t i = 1; i < last_named; i++)
		if ((int)strlen(LEFT_CUT) + rust_name_width(s + starts[i]) <= width) {
			keep = i;
			break;
		}
	if (keep) {
		size_t len = strlen(s + starts[keep]);

		memmove(s + strlen(LEFT_CUT), s + starts[keep], len + 1);
		memcpy(s, LEFT_CUT, strlen(LEFT_CUT));
	}
	/* a single segment far too wide (a name that is no path): its end
	 * goes, the only cut left */
	int hard = 2 * width + 16;

	if (rust_name_width(s) > hard) {
		size_t b = 0;
		int w = 0;

		for (; s[b]; b++)
			if (((unsigned char)s[b] & 0xc0) != 0x80 && w++ == hard - 3)
				break;
		strcpy(s + b, ELLIPSIS);
	}
}

char *rust_name_display(const char *name, int width, bool wide)
{
	size_t n;
	char *r, *s;

	if (!name)
		return NULL;
	n = strlen(name);
	r = malloc(n + 1);
	if (!r)
		return NULL;
	rewrite(name, r);
	if (wide)
		return r;
	s = malloc(2 * n + 16);
	if (!s) {
		free(r);
		return NULL;
	}
	shorten(r, s, width > 0 ? width : RUST_NAME_WIDTH);
	free(r);
	return s;
}

char *rust_name_format(char *buf, size_t n, const char *name, int width, bool wide)
{
	char *d;
	size_t len;

	if (!n)
		return buf;
	buf[0] = '\0';
	if (!name)
		return buf;
	d = rust_name_display(name, width, wide);
	len = strlen(d ? d : name);
	if (len < n) {
		memcpy(buf, d ? d : name, len + 1);
	} else if (n > 4) {
		/* cut at a character boundary, then "..." */
		size_t b = n - 4;

		while (b && ((unsigned char)(d ? d : name)[b] & 0xc0) == 0x80)
			b--;
		memcpy(buf, d ? d : name, b);
		memcpy(buf + b, ELLIPSIS, 4);
	} else {
		memcpy(buf, d ? d : name, n - 1);
		buf[n - 1] = '\0';
	}
	free(d);
	return buf;
}
