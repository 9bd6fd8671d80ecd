/* The identities of the task analysis (tasks_int.h): a task's (root future
 * name, spawn location), the key by which finished rows fold into groups
 * and wake edges merge. Its own file so that the analysis (tasks.c) and its
 * wake graph (tasks_edges.c) both use it without using each other. */
#include <errno.h>
#include <stdint.h>

#include "analysis/tasks_int.h"
#include "util/u64map.h"

static uint64_t ident_hash(const struct task_stats *st)
{
	uint64_t h = (uint64_t)(uintptr_t)st->name * 0x9e3779b97f4a7c15ULL;

	h = (h ^ (h >> 29) ^ (uint64_t)(uintptr_t)st->spawn_file) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 31) ^ ((uint64_t)st->spawn_line << 32 | st->spawn_col)) *
	    0x94d049bb133111ebULL;
	h ^= h >> 32;
	return h == 0 ? 1 : h == UINT64_MAX ? h - 1 : h; /* keys u64map reserves */
}

/* The identity (name, spawn location) of row st, index + 1 into a->idents,
 * added if new; 0 out of memory (a->err set). Names and files are interned:
 * equal strings are equal pointers. */
uint32_t ta_ident_get(struct analysis *a, const struct task_stats *st)
{
	uint64_t key = ident_hash(st), v = 0;
	struct task_group *g;

	if (u64map__get(&a->ident_of, key, &v))
		for (uint32_t i = (uint32_t)v; i; i = a->idents[i - 1].next) {
			g = &a->idents[i - 1].g;
			if (g->name == st->name && g->spawn_file == st->spawn_file &&
			    g->spawn_line == st->spawn_line && g->spawn_col == st->spawn_col)
				return i;
		}
	if (a->n_idents >= UINT32_MAX - 1 ||
	    ta_reserve((void **)&a->idents, &a->cap_idents, a->n_idents, sizeof(*a->idents)) ||
	    u64map__set(&a->ident_of, key, a->n_idents + 1)) {
		a->err = -ENOMEM;
		return 0;
	}
	a->idents[a->n_idents] = (struct ident){
		.g = { .name = st->name, .spawn_file = st->spawn_file,
		       .spawn_line = st->spawn_line, .spawn_col = st->spawn_col },
		.next = (uint32_t)v,
	};
	return (uint32_t)++a->n_idents;
}

uint32_t ta_live_ident(struct analysis *a, struct tlive *l)
{
	if (!l->ident)
		a->rinfo[l->idx].ident = l->ident = ta_ident_get(a, &a->tasks[l->idx]);
	return l->ident;
}
