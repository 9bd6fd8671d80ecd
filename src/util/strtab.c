/* strtab: strings in separately allocated copies (addresses stay valid when
 * the table grows), indexed by an FNV-1a open-addressing hash. */
#include "util/strtab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < len; i++) {
		h ^= (uint8_t)s[i];
		h *= 0x100000001b3ULL;
	}
	return h ^ (h >> 29);
}

void strtab__clear(struct strtab *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->n; i++)
		free(t->strs[i]);
	free(t->strs);
	free(t->lens);
	free(t->index);
	memset(t, 0, sizeof(*t));
}

bool strtab__find(const struct strtab *t, const char *s, size_t len, uint32_t *idx)
{
	if (!t->index_cap)
		return false;
	size_t mask = t->index_cap - 1;
	for (size_t i = hash(s, len) & mask;; i = (i + 1) & mask) {
		uint32_t v = t->index[i];
		if (!v)
			return false;
		v--;
		if (t->lens[v] == len && !memcmp(t->strs[v], s, len)) {
			*idx = v;
			return true;
		}
	}
}

static void index_put(uint32_t *index, size_t cap, uint64_t h, uint32_t v)
{
	size_t i = h & (cap - 1);
	while (index[i])
		i = (i + 1) & (cap - 1);
	index[i] = v + 1;
}

static int grow_index(struct strtab *t)
{
	size_t cap = t->index_cap ? t->index_cap * 2 : 64;
	uint32_t *index = calloc(cap, sizeof(*index));
	if (!index)
		return -ENOMEM;
	for (uint32_t v = 0; v < t->n; v++)
		index_put(index, cap, hash(t->strs[v], t->lens[v]), v);
	free(t->index);
	t->index = index;
	t->index_cap = cap;
	return 0;
}

int strtab__add(struct strtab *t, const char *s, size_t len, uint32_t *idx)
{
	if (len >= UINT32_MAX || t->n >= UINT32_MAX - 1)
		return -E2BIG;
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? (t->cap > UINT32_MAX / 2 ? UINT32_MAX - 1 : t->cap * 2) : 16;
		char **strs = realloc(t->strs, cap * sizeof(*strs));
		if (!strs)
			return -ENOMEM;
		t->strs = strs;
		uint32_t *lens = realloc(t->lens, cap * sizeof(*lens));
		if (!lens)
			return -ENOMEM;
		t->lens = lens;
		t->cap = cap;
	}
	if ((size_t)(t->n + 1) * 10 > t->index_cap * 7) {
		int err = grow_index(t);
		if (err)
			return err;
	}
	char *copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	if (len)
		memcpy(copy, s, len);
	copy[len] = '\0';
	t->strs[t->n] = copy;
	t->lens[t->n] = (uint32_t)len;
	index_put(t->index, t->index_cap, hash(copy, len), t->n);
	*idx = t->n++;
	return 0;
}

int strtab__intern(struct strtab *t, const char *s, size_t len, uint32_t *idx)
{
	int err;

	if (strtab__find(t, s, len, idx))
		return 0;
	err = strtab__add(t, s, len, idx);
	return err ? err : 1;
}

const char *strtab__get(const struct strtab *t, uint32_t idx)
{
	return idx < t->n ? t->strs[idx] : NULL;
}
