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
	fputc('\n', w->out);
	for (int i = 0; i < w->depth; i++)
		fputs("  ", w->out);
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
		fputc(',', w->out);
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
	fputc(c, w->out);
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
	fputc(c, w->out);
	after_value(w);
}

void json_writer__begin_object(struct json_writer *w) { begin(w, IN_OBJECT, '{'); }
void json_writer__end_object(struct json_writer *w) { end(w, IN_OBJECT, '}'); }
void json_writer__begin_array(struct json_writer *w) { begin(w, IN_ARRAY, '['); }
void json_writer__end_array(struct json_writer *w) { end(w, IN_ARRAY, ']'); }

static void write_escaped(FILE *out, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', out);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t len;

		switch (c) {
		case '"': fputs("\\\"", out); i++; continue;
		case '\\': fputs("\\\\", out); i++; continue;
		case '\b': fputs("\\b", out); i++; continue;
		case '\f': fputs("\\f", out); i++; continue;
		case '\n': fputs("\\n", out); i++; continue;
		case '\r': fputs("\\r", out); i++; continue;
		case '\t': fputs("\\t", out); i++; continue;
		default: break;
		}
		if (c < 0x20 || c == 0x7f) {
			fprintf(out, "\\u%04x", c);
			i++;
			continue;
		}
		len = fmt_utf8_len(str + i, n - i);
		if (!len) {
			fputs("\\ufffd", out); /* one replacement per invalid byte */
			i++;
			continue;
		}
		fwrite(s + i, 1, len, out);
		i += len;
	}
	fputc('"', out);
}

void json_writer__key(struct json_writer *w, const char *key)
{
	if (w->err)
		return;
	if (!key || w->depth == 0 || w->kind[w->depth - 1] != IN_OBJECT || w->have_key) {
		w->err = true;
		return;
	}
	if (w->nonempty[w->depth - 1])
		fputc(',', w->out);
	w->nonempty[w->depth - 1] = true;
	newline(w);
	write_escaped(w->out, key, strlen(key));
	fputs(w->pretty ? ": " : ":", w->out);
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
	fprintf(w->out, "%" PRIu64, v);
	after_value(w);
}

void json_writer__i64(struct json_writer *w, int64_t v)
{
	if (!before_value(w))
		return;
	fprintf(w->out, "%" PRId64, v);
	after_value(w);
}

void json_writer__bool(struct json_writer *w, bool v)
{
	if (!before_value(w))
		return;
	fputs(v ? "true" : "false", w->out);
	after_value(w);
}

void json_writer__null(struct json_writer *w)
{
	if (!before_value(w))
		return;
	fputs("null", w->out);
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

void json_writer__kv_bool(struct json_writer *w, const char *key, bool v)
{
	json_writer__key(w, key);
	json_writer__bool(w, v);
}

int json_writer__finish(struct json_writer *w)
{
	if (w->err || w->depth || !w->done)
		return -EINVAL;
	fputc('\n', w->out);
	if (fflush(w->out) || ferror(w->out))
		return -EIO;
	return 0;
}
