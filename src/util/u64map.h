/* Open-addressing hash map from non-zero uint64_t keys to uint64_t values
 * (store an index or a pointer cast). Key 0 is reserved. No I/O, no globals. */
#ifndef AS_UTIL_U64MAP_H
#define AS_UTIL_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct u64map {
	uint64_t *keys;   /* 0 empty, UINT64_MAX tombstone */
	uint64_t *vals;
	size_t cap;       /* power of two, or 0 before first insert */
	size_t len;       /* live entries */
	size_t used;      /* live + tombstones */
};

/* Zero-initialise a struct u64map to start; u64map__clear() frees it. */
void u64map__clear(struct u64map *m);
/* Returns true and sets *val when key is present. */
bool u64map__get(const struct u64map *m, uint64_t key, uint64_t *val);
/* Inserts or replaces; returns 0 or -ENOMEM (map unchanged). key must be
 * neither 0 nor UINT64_MAX (returns -EINVAL). */
int u64map__set(struct u64map *m, uint64_t key, uint64_t val);
/* Removes key; returns true if it was present. */
bool u64map__del(struct u64map *m, uint64_t key);

#endif
