/* serve's stack store (stacks.h). */
#include "serve/stacks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* FNV-1a over the counts and addresses; never 0 or UINT64_MAX */
static uint64_t stack_hash(const struct as_stack *st)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t n = (size_t)st->n_kernel + st->n_user;

	h = (h ^ ((uint64_t)st->n_kernel << 16 | st->n_user)) * 0x100000001b3ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ st->frames[i].addr) * 0x100000001b3ull;
	return h == 0 || h == UINT64_MAX ? 1 : h;
}

static bool same(const struct as_stack *a, const struct as_stack *b)
{
	size_t n = (size_t)a->n_kernel + a->n_user;

	if (a->n_kernel != b->n_kernel || a->n_user != b->n_user)
		return false;
	for (size_t i = 0; i < n; i++)
		if (a->frames[i].addr != b->frames[i].addr)
			return false;
	return true;
}

static const char *intern(struct stack_store *ss, const char *s)
{
	uint32_t idx;
	size_t len;

	if (!s)
		return NULL;
	len = strlen(s);
	int added = strtab__intern(&ss->strs, s, len, &idx);
	if (added < 0)
		return NULL;
	if (added)
		ss->bytes += len + 1;
	return strtab__get(&ss->strs, idx);
}

bool stack_store__full(const struct stack_store *ss)
{
	return ss->n >= STACKS_MAX || ss->bytes >= STACKS_MAX_BYTES;
}

uint32_t stack_store__add(struct stack_store *ss, const struct as_stack *st, int culprit)
{
	uint64_t h = stack_hash(st), v;
	size_t n = (size_t)st->n_kernel + st->n_user;

	if (u64map__get(&ss->by_hash, h, &v) && same(&ss->s[v - 1]->st, st))
		return (uint32_t)v;
	for (size_t i = 0; i < ss->n && u64map__get(&ss->by_hash, h, NULL); i++)
		if (ss->s[i]->hash == h && same(&ss->s[i]->st, st))
			return (uint32_t)i + 1;   /* a collision of hashes: the scan is rare */
	if (stack_store__full(ss)) {
		ss->dropped++;
		return 0;
	}
	if (ss->n == ss->cap) {
		size_t cap = ss->cap ? ss->cap * 2 : 256;
		struct kept_stack **k = realloc(ss->s, cap * sizeof(*k));
		if (!k)
			return 0;
		ss->s = k;
		ss->cap = cap;
	}
	struct kept_stack *k = calloc(1, sizeof(*k) + n * sizeof(struct as_frame));
	if (!k)
		return 0;
	struct as_frame *f = (struct as_frame *)(k + 1);
	for (size_t i = 0; i < n; i++) {
		f[i] = st->frames[i];
		f[i].sym = intern(ss, st->frames[i].sym ? st->frames[i].sym : "");
		f[i].file = intern(ss, st->frames[i].file);
		if (!f[i].sym || (st->frames[i].file && !f[i].file)) {
			free(k);
			return 0;
		}
	}
	k->st = (struct as_stack){ .id = (uint32_t)ss->n + 1, .n_kernel = st->n_kernel,
				   .n_user = st->n_user, .frames = f };
	k->culprit = culprit;
	k->hash = h;
	if (!u64map__get(&ss->by_hash, h, NULL) && u64map__set(&ss->by_hash, h, ss->n + 1)) {
		free(k);
		return 0;
	}
	ss->s[ss->n++] = k;
	ss->bytes += sizeof(*k) + n * sizeof(struct as_frame);
	return (uint32_t)ss->n;
}

const struct kept_stack *stack_store__get(const struct stack_store *ss, uint32_t id)
{
	if (!id || (id & STACKS_CULPRIT_ONLY) || id > ss->n)
		return NULL;
	return ss->s[id - 1];
}

int stack_store__culprit(const struct stack_store *ss, uint32_t id)
{
	const struct kept_stack *k;

	if (id & STACKS_CULPRIT_ONLY)
		return (int)(id & ~STACKS_CULPRIT_ONLY) - 1;
	k = stack_store__get(ss, id);
	return k ? k->culprit : -1;
}

void stack_store__reset(struct stack_store *ss)
{
	for (size_t i = 0; i < ss->n; i++)
		free(ss->s[i]);
	ss->n = 0;
	ss->bytes = 0;
	ss->resets++;
	u64map__clear(&ss->by_hash);
	strtab__clear(&ss->strs);
}

void stack_store__clear(struct stack_store *ss)
{
	stack_store__reset(ss);
	free(ss->s);
	ss->s = NULL;
	ss->cap = 0;
}
