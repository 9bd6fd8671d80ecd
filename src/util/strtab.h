/* String table: an append-only array of owned, NUL-terminated strings with
 * stable addresses and a hash index for interning. Index i is the i-th string
 * added. Strings may hold NUL bytes when added with an explicit length (the
 * index compares whole byte strings). No I/O, no globals. */
#ifndef AS_UTIL_STRTAB_H
#define AS_UTIL_STRTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strtab {
	char **strs;      /* owned copies, each NUL-terminated */
	uint32_t *lens;
	uint32_t n, cap;
	uint32_t *index;  /* hash slots: 0 empty, else string index + 1 */
	size_t index_cap; /* power of two, or 0 */
};

/* Zero-initialise a struct strtab to start; strtab__clear() frees it all. */
void strtab__clear(struct strtab *t);
/* Returns true and sets *idx when the len bytes at s are in the table. */
bool strtab__find(const struct strtab *t, const char *s, size_t len, uint32_t *idx);
/* Appends a copy of the len bytes at s (no dedup: see strtab__find) and sets
 * *idx. Returns 0, -ENOMEM or -E2BIG (len or count beyond UINT32_MAX - 1). */
int strtab__add(struct strtab *t, const char *s, size_t len, uint32_t *idx);
/* The index of the len bytes at s, added when not in the table yet (find or
 * add). Returns 1 when it added them, 0 when they were there, or -ENOMEM or
 * -E2BIG as strtab__add(). */
int strtab__intern(struct strtab *t, const char *s, size_t len, uint32_t *idx);
/* The string at idx, or NULL if idx >= count. Borrowed until strtab__clear(). */
const char *strtab__get(const struct strtab *t, uint32_t idx);

#endif
