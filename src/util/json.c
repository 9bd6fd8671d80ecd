/* json: streaming JSON writer. Keeps a small stack of open containers and
 * whether each already holds an element; errors are sticky and reported once
 * by json_writer__finish(). No allocation besides the writer itself. */
#include "util/json.h"
#include "util/fmt.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

enum { IN_ARRAY, IN_OBJECT };

struct json_writer {
	FILE *out;
	bool pretty;
	bool err;          /* misuse seen */
	bool done;         /* one complete top-level value written */
	bool have_key;     /* inside an object: key written, value expected */
	int depth;
	unsigned char kind[MAX_DEPTH];
	bool nonempty[MAX_DEPTH];
};

struct json_writer *json_writer__new(FILE *out, bool pretty)
{
	struct json_writer *w;

	if (!out) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->out = out;
	w->pretty = pretty;
	return w;
}

void json_writer__free(struct json_writer *w)
{
	free(w);
}

static void newline(struct json_writer *w)
{
	if (!w->pretty)
		return;
	putc_unlocked('\n', w->out);
	for (int i = 0; i < w->depth; i++) {
		putc_unlocked(' ', w->out);
		putc_unlocked(' ', w->out);
	}
}

/* Called before any value: separators inside arrays, key check in objects. */
static bool before_value(struct json_writer *w)
{
	if (w->err)
		return false;
	if (w->depth == 0) {
		if (w->done) {
			w->err = true;
			return false;
		}
		return true;
	}
	if (w->kind[w->depth - 1] == IN_OBJECT) {
		if (!w->have_key) {
			w->err = true;
			return false;
		}
		w->have_key = false;
		return true;
	}
	if (w->nonempty[w->depth - 1])
		putc_unlocked(',', w->out);
	w->nonempty[w->depth - 1] = true;
	newline(w);
	return true;
}

static void after_value(struct json_writer *w)
{
	if (w->depth == 0)
		w->done = true;
}

static void begin(struct json_writer *w, int kind, char c)
{
	if (!before_value(w))
		return;
	if (w->depth == MAX_DEPTH) {
		w->err = true;
		return;
	}
	putc_unlocked(c, w->out);
	w->kind[w->depth] = (unsigned char)kind;
	w->nonempty[w->depth] = false;
	w->depth++;
}

static void end(struct json_writer *w, int kind, char c)
{
	if (w->err)
		return;
	if (w->depth == 0 || w->kind[w->depth - 1] != kind || w->have_key) {
		w->err = true;
		return;
	}
	w->depth--;
	if (w->nonempty[w->depth])
		newline(w);
	putc_unlocked(c, w->out);
	after_value(w);
}

void json_writer__begin_object(struct json_writer *w) { begin(w, IN_OBJECT, '{'); }
void json_writer__end_object(struct json_writer *w) { end(w, IN_OBJECT, '}'); }
void json_writer__begin_array(struct json_writer *w) { begin(w, IN_ARRAY, '['); }
void json_writer__end_array(struct json_writer *w) { end(w, IN_ARRAY, ']'); }

/* n bytes at s: short ones a putc each (a macro into the buffer), longer
 * ones one fwrite (a call costs more than a few bytes' copy). */
static inline void write_run(FILE *out, const unsigned char *s, size_t n)
{
	if (n > 16) {
		fwrite_unlocked(s, 1, n, out);
		return;
	}
	for (size_t i = 0; i < n; i++)
		putc_unlocked(s[i], out);
}

/* Bytes written as they are: printable ASCII but quote and backslash. */
static const unsigned char plain[256] = {
	[0x20 ... 0x21] = 1, [0x23 ... 0x5b] = 1, [0x5d ... 0x7e] = 1,   /* not '"' 0x22, '\\' 0x5c */
};

/* Writes str[0 .. n) as a JSON string: runs of plain bytes and valid UTF-8
 * sequences as they are (unlocked stdio: a report writes millions of
 * strings), the others escaped. */
static void write_escaped(FILE *out, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;

	putc_unlocked('"', out);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		const char *esc;
		size_t len, run = i;

		while (i < n && plain[s[i]])
			i++;
		if (i > run) {
			write_run(out, s + run, i - run);
			continue;
		}
		if (c >= 0x80 && (len = fmt_utf8_len(str + i, n - i))) {
			write_run(out, s + i, len);
			i += len;
			continue;
		}
		switch (c) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\b': esc = "\\b"; break;
		case '\f': esc = "\\f"; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		case '\t': esc = "\\t"; break;
		default: esc = NULL; break;
		}
		if (esc)
			fputs_unlocked(esc, out);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputs_unlocked("\\ufffd", out); /* one replacement per invalid byte */
		i++;
	}
	putc_unlocked('"', out);
}

/* v in decimal, without printf. */
static void write_u64(FILE *out, uint64_t v)
{
	char b[24];
	int i = sizeof(b);

	do
		b[--i] = (char)('0' + v % 10);
	while (v /= 10);
	write_run(out, (const unsigned char *)b + i, sizeof(b) - (size_t)i);
}

void json_writer__key(struct json_writer *w, const char *key)
{
	if (w->err)
		return;
	if (!key || w->depth == 0 || w->kind[w->depth - 1] != IN_OBJECT || w->have_key) {
		w->err = true;
		return;
	}
	size_t n = strlen(key), i;

	/* a short plain key (the usual case): separator, indentation, the
	 * quoted key and the colon composed here, then one write */
	for (i = 0; i < n && n <= 64 && plain[(unsigned char)key[i]]; i++)
		;
	if (i == n && n <= 64 && w->depth <= 32) {
		char b[1 + 1 + 64 + 2 + 64 + 2], *p = b;

		if (w->nonempty[w->depth - 1])
			*p++ = ',';
		if (w->pretty) {
			*p++ = '\n';
			memset(p, ' ', 2 * (size_t)w->depth);
			p += 2 * w->depth;
		}
		*p++ = '"';
		memcpy(p, key, n);
		p += n;
		*p++ = '"';
		*p++ = ':';
		if (w->pretty)
			*p++ = ' ';
		w->nonempty[w->depth - 1] = true;
		fwrite_unlocked(b, 1, (size_t)(p - b), w->out);
		w->have_key = true;
		return;
	}
	if (w->nonempty[w->depth - 1])
		putc_unlocked(',', w->out);
	w->nonempty[w->depth - 1] = true;
	newline(w);
	write_escaped(w->out, key, n);
	putc_unlocked(':', w->out);
	if (w->pretty)
		putc_unlocked(' ', w->out);
	w->have_key = true;
}

void json_writer__string_len(struct json_writer *w, const char *s, size_t len)
{
	if (!s) {
		json_writer__null(w);
		return;
	}
	if (!before_value(w))
		return;
	write_escaped(w->out, s, len);
	after_value(w);
}

void json_writer__string(struct json_writer *w, const char *s)
{
	json_writer__string_len(w, s, s ? strlen(s) : 0);
}

void json_writer__u64(struct json_writer *w, uint64_t v)
{
	if (!before_value(w))
		return;
	write_u64(w->out, v);
	after_value(w);
}

void json_writer__i64(struct json_writer *w, int64_t v)
{
	if (!before_value(w))
		return;
	if (v < 0) {
		putc_unlocked('-', w->out);
		write_u64(w->out, (uint64_t)(-(v + 1)) + 1);
	} else {
		write_u64(w->out, (uint64_t)v);
	}
	after_value(w);
}

void json_writer__bool(struct json_writer *w, bool v)
{
	if (!before_value(w))
		return;
	fputs_unlocked(v ? "true" : "false", w->out);
	after_value(w);
}

void json_writer__null(struct json_writer *w)
{
	if (!before_value(w))
		return;
	fputs_unlocked("null", w->out);
	after_value(w);
}

void json_writer__kv_string(struct json_writer *w, const char *key, const char *s)
{
	json_writer__key(w, key);
	json_writer__string(w, s);
}

void json_writer__kv_u64(struct json_writer *w, const char *key, uint64_t v)
{
	json_writer__key(w, key);
	json_writer__u64(w, v);
}

void json_writer__kv_u64_or_null(struct json_writer *w, const char *key, bool known, uint64_t v)
{
	json_writer__key(w, key);
	if (known)
		json_writer__u64(w, v);
	else
		json_writer__null(w);
}

void json_writer__kv_bool(struct json_writer *w, const char *key, bool v)
{
	json_writer__key(w, key);
	json_writer__bool(w, v);
}

int json_writer__finish(struct json_writer *w)
{
	if (w->err || w->depth || !w->done)
		return -EINVAL;
	putc_unlocked('\n', w->out);
	if (fflush(w->out) || ferror(w->out))
		return -EIO;
	return 0;
}
