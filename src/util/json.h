/* Small streaming JSON writer to a FILE*: the caller emits values in order,
 * the writer places commas, colons, indentation and string escapes, so the
 * output is valid JSON whatever the strings hold (control characters, quotes,
 * backslashes, invalid UTF-8 -> U+FFFD). Depends on stdio only. */
#ifndef AS_UTIL_JSON_H
#define AS_UTIL_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct json_writer;

/* Returns a writer on out (borrowed: must outlive the writer, which never
 * closes it), or NULL with errno set. pretty: newlines and two-space indents;
 * otherwise one line. */
struct json_writer *json_writer__new(FILE *out, bool pretty);
/* Frees w (NULL accepted); does not write anything. */
void json_writer__free(struct json_writer *w);

/* Structure. Inside an object every value must be preceded by json_writer__key().
 * Misuse (value without key, unbalanced end, nesting deeper than 64) is
 * recorded and reported by json_writer__finish(). */
void json_writer__begin_object(struct json_writer *w);
void json_writer__end_object(struct json_writer *w);
void json_writer__begin_array(struct json_writer *w);
void json_writer__end_array(struct json_writer *w);
void json_writer__key(struct json_writer *w, const char *key);

/* Values. json_writer__string(w, NULL) writes null. */
void json_writer__string(struct json_writer *w, const char *s);
void json_writer__string_len(struct json_writer *w, const char *s, size_t len);
void json_writer__u64(struct json_writer *w, uint64_t v);
void json_writer__i64(struct json_writer *w, int64_t v);
void json_writer__bool(struct json_writer *w, bool v);
void json_writer__null(struct json_writer *w);

/* Shorthands for a key followed by a value. */
void json_writer__kv_string(struct json_writer *w, const char *key, const char *s);
void json_writer__kv_u64(struct json_writer *w, const char *key, uint64_t v);
void json_writer__kv_bool(struct json_writer *w, const char *key, bool v);
/* key, then v when known, else null. */
void json_writer__kv_u64_or_null(struct json_writer *w, const char *key, bool known, uint64_t v);

/* Ends the document (a final newline), flushes, and returns 0, -EINVAL if the
 * calls did not form one complete JSON value, or -EIO on a write error. */
int json_writer__finish(struct json_writer *w);

#endif
