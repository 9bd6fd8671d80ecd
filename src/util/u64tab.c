/* u64tab: see u64tab.h; the algorithm is util/u64map.c's, slot for slot. */
#include "util/u64tab.h"

#include <errno.h>
#include <stdlib.h>

void u64tab__clear(struct u64tab *t)
{
	if (!t)
		return;
	free(t->s);
	t->s = NULL;
	t->cap = t->len = t->used = 0;
}

static int grow(struct u64tab *t)
{
	size_t cap = t->cap ? t->cap * 2 : 64;
	struct u64tab_slot *s;

	/* Only tombstones: rehash at the same size. */
	if (t->cap && t->len * 10 < t->cap * 4)
		cap = t->cap;
	s = calloc(cap, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		uint64_t k = t->s[i].key;

		if (k == 0 || k == U64TAB_TOMB)
			continue;
		size_t j = u64tab__slot_of(k, cap);

		while (s[j].key)
			j = (j + 1) & (cap - 1);
		s[j] = t->s[i];
	}
	free(t->s);
	t->s = s;
	t->cap = cap;
	t->used = t->len;
	return 0;
}

int u64tab__set(struct u64tab *t, uint64_t key, uint64_t val)
{
	size_t tomb = SIZE_MAX;

	if (key == 0 || key == U64TAB_TOMB)
		return -EINVAL;
	if ((t->used + 1) * 10 > t->cap * 7) {
		int err = grow(t);

		if (err)
			return err;
	}
	for (size_t i = u64tab__slot_of(key, t->cap);; i = (i + 1) & (t->cap - 1)) {
		if (t->s[i].key == key) {
			t->s[i].val = val;
			return 0;
		}
		if (t->s[i].key == U64TAB_TOMB && tomb == SIZE_MAX)
			tomb = i;
		if (t->s[i].key == 0) {
			if (tomb != SIZE_MAX)
				i = tomb;
			else
				t->used++;
			t->s[i].key = key;
			t->s[i].val = val;
			t->len++;
			return 0;
		}
	}
}

bool u64tab__del(struct u64tab *t, uint64_t key)
{
	if (!t->cap || key == 0 || key == U64TAB_TOMB)
		return false;
	for (size_t i = u64tab__slot_of(key, t->cap);; i = (i + 1) & (t->cap - 1)) {
		if (t->s[i].key == key) {
			t->s[i].key = U64TAB_TOMB;
			t->len--;
			return true;
		}
		if (t->s[i].key == 0)
			return false;
	}
}

bool u64tab__del_shift(struct u64tab *t, uint64_t key)
{
	size_t mask = t->cap - 1, i, j;

	if (!t->cap || key == 0 || key == U64TAB_TOMB)
		return false;
	for (i = u64tab__slot_of(key, t->cap);; i = (i + 1) & mask) {
		if (t->s[i].key == key)
			break;
		if (t->s[i].key == 0)
			return false;
	}
	/* i is the gap: an entry further in the run moves into it unless its
	 * home slot lies cyclically in (i, j] (it would then be found no more) */
	for (j = (i + 1) & mask;; j = (j + 1) & mask) {
		uint64_t k = t->s[j].key;
		size_t home;

		if (k == 0)
			break;
		home = u64tab__slot_of(k, t->cap);
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			t->s[i] = t->s[j];
			i = j;
		}
	}
	t->s[i].key = 0;
	t->s[i].val = 0;
	t->len--;
	t->used--;
	return true;
}
