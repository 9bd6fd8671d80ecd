/* A strict JSON checker (RFC 8259, UTF-8 only) for the fuzz harnesses: the
 * JSON outputs promise valid JSON whatever the strings of a trace hold
 * (util/json.h). Fuzzing code only. */
#ifndef AS_FUZZ_JSON_CHECK_H
#define AS_FUZZ_JSON_CHECK_H

#include <stddef.h>

/* Whether buf (len bytes, not NUL-terminated) is one JSON value, with
 * white space around it only. On failure *off (may be NULL) is the offset
 * of the first byte the checker could not take and the return value
 * says what was wrong there; NULL when the document is valid. */
const char *json_check(const char *buf, size_t len, size_t *off);

#endif
