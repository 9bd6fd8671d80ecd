/* u64map: linear probing with tombstones, grown at 70% occupancy. */
#include "util/u64map.h"

#include <errno.h>
#include <stdlib.h>

#define TOMB UINT64_MAX

static size_t slot_of(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

void u64map__clear(struct u64map *m)
{
	if (!m)
		return;
	free(m->keys);
	free(m->vals);
	m->keys = m->vals = NULL;
	m->cap = m->len = m->used = 0;
}

bool u64map__get(const struct u64map *m, uint64_t key, uint64_t *val)
{
	if (!m->cap || key == 0 || key == TOMB)
		return false;
	for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			if (val)
				*val = m->vals[i];
			return true;
		}
		if (m->keys[i] == 0)
			return false;
	}
}

static int grow(struct u64map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	/* Only tombstones: rehash at the same size. */
	if (m->cap && m->len * 10 < m->cap * 4)
		cap = m->cap;
	uint64_t *keys = calloc(cap, sizeof(*keys));
	uint64_t *vals = calloc(cap, sizeof(*vals));
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		uint64_t k = m->keys[i];
		if (k == 0 || k == TOMB)
			continue;
		size_t j = slot_of(k, cap);
		while (keys[j])
			j = (j + 1) & (cap - 1);
		keys[j] = k;
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	m->used = m->len;
	return 0;
}

int u64map__set(struct u64map *m, uint64_t key, uint64_t val)
{
	if (key == 0 || key == TOMB)
		return -EINVAL;
	if ((m->used + 1) * 10 > m->cap * 7) {
		int err = grow(m);
		if (err)
			return err;
	}
	size_t tomb = SIZE_MAX;
	for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			m->vals[i] = val;
			return 0;
		}
		if (m->keys[i] == TOMB && tomb == SIZE_MAX)
			tomb = i;
		if (m->keys[i] == 0) {
			if (tomb != SIZE_MAX)
				i = tomb;
			else
				m->used++;
			m->keys[i] = key;
			m->vals[i] = val;
			m->len++;
			return 0;
		}
	}
}

bool u64map__del(struct u64map *m, uint64_t key)
{
	if (!m->cap || key == 0 || key == TOMB)
		return false;
	for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			m->keys[i] = TOMB;
			m->len--;
			return true;
		}
		if (m->keys[i] == 0)
			return false;
	}
}
