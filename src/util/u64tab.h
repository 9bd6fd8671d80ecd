/* u64tab: util/u64map.h's hash map (non-zero uint64_t keys to uint64_t
 * values, linear probing with tombstones, grown at 70%) with each key next
 * to its value: a lookup reads one cache line, not two, and the hot lookup
 * is inline. The same hash, probing and growth as u64map, so that a table
 * holds its entries in the same slots as a u64map fed the same calls
 * (iterating in slot order gives the same order). Key 0 is reserved, and
 * UINT64_MAX (a tombstone). No I/O, no globals. */
#ifndef AS_UTIL_U64TAB_H
#define AS_UTIL_U64TAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct u64tab_slot {
	uint64_t key;     /* 0 empty, UINT64_MAX tombstone */
	uint64_t val;
};

struct u64tab {
	struct u64tab_slot *s;
	size_t cap;       /* power of two, or 0 before first insert */
	size_t len;       /* live entries */
	size_t used;      /* live + tombstones */
};

#define U64TAB_TOMB UINT64_MAX

static inline size_t u64tab__slot_of(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

/* Returns true and sets *val (may be NULL) when key is present. */
static inline bool u64tab__get(const struct u64tab *t, uint64_t key, uint64_t *val)
{
	if (!t->cap || key == 0 || key == U64TAB_TOMB)
		return false;
	for (size_t i = u64tab__slot_of(key, t->cap);; i = (i + 1) & (t->cap - 1)) {
		if (t->s[i].key == key) {
			if (val)
				*val = t->s[i].val;
			return true;
		}
		if (t->s[i].key == 0)
			return false;
	}
}

/* A hint that key is about to be looked up: its first slot is fetched. */
static inline void u64tab__prefetch(const struct u64tab *t, uint64_t key)
{
	if (t->cap)
		__builtin_prefetch(&t->s[u64tab__slot_of(key, t->cap)]);
}

/* Whether slot i (< cap) holds an entry: for walks in slot order. */
static inline bool u64tab__live(const struct u64tab *t, size_t i)
{
	return t->s[i].key != 0 && t->s[i].key != U64TAB_TOMB;
}

/* Inserts or replaces; returns 0 or -ENOMEM (table unchanged). key must be
 * neither 0 nor UINT64_MAX (returns -EINVAL). */
int u64tab__set(struct u64tab *t, uint64_t key, uint64_t val);
/* Removes key; returns true if it was present. */
bool u64tab__del(struct u64tab *t, uint64_t key);
/* The same without a tombstone: the entries after key in its run move back
 * to close the gap (lookups stay short however many come and go). A table
 * that uses it uses no u64tab__del(); its slot order is not u64map's. */
bool u64tab__del_shift(struct u64tab *t, uint64_t key);
/* Frees the table; zero-initialised is empty. */
void u64tab__clear(struct u64tab *t);

#endif
