/* serve's metrics state (registry.h). */
#include "serve/registry.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void agg_group__add(struct agg_group *a, const struct agg_group *b)
{
	uint64_t *x = (uint64_t *)a;
	const uint64_t *y = (const uint64_t *)b;

	for (size_t i = 0; i < sizeof(*a) / sizeof(uint64_t); i++)
		x[i] += y[i];
}

void agg_totals__add(struct agg_totals *a, const struct agg_totals *b)
{
	uint64_t *x = (uint64_t *)a;
	const uint64_t *y = (const uint64_t *)b;

	for (size_t i = 0; i < sizeof(*a) / sizeof(uint64_t); i++)
		x[i] += y[i];
}

/* FNV-1a over the strings, a 0x1f between them; never 0 or UINT64_MAX */
static uint64_t hash_strs(const char *const *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		for (const char *p = s[i]; *p; p++)
			h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
		h = (h ^ 0x1f) * 0x100000001b3ull;
	}
	return h == 0 || h == UINT64_MAX ? 1 : h;
}

static const char *intern(struct registry *r, const char *s)
{
	uint32_t idx;
	size_t len = strlen(s);

	if (strtab__intern(&r->strs, s, len, &idx) < 0)
		return NULL;
	return strtab__get(&r->strs, idx);
}

struct registry *registry__new(size_t cap)
{
	struct registry *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->cap = cap ? cap : REG_CAP_DEFAULT;
	r->tasks = calloc(REG_TASK__FIXED + r->cap, sizeof(*r->tasks));
	r->culprits = calloc(1 + r->cap, sizeof(*r->culprits));
	r->groups = calloc(1 + r->cap, sizeof(*r->groups));
	if (!r->tasks || !r->culprits || !r->groups)
		goto fail;
	static const char *const fixed[REG_TASK__FIXED] = {
		[REG_TASK_OTHER] = "other", [REG_TASK_RUNTIME] = "runtime", [REG_TASK_NONE] = "none",
		[REG_TASK_UNKNOWN] = "unknown",
	};
	for (size_t i = 0; i < REG_TASK__FIXED; i++)
		if (!(r->tasks[i].name = intern(r, fixed[i])))
			goto fail;
	r->n_tasks = REG_TASK__FIXED;
	r->culprits[0].kernel = r->culprits[0].user = intern(r, "other");
	r->culprits[0].src = intern(r, "");
	r->groups[0].task = r->culprits[0].kernel;
	r->groups[0].spawn = r->culprits[0].src;
	if (!r->culprits[0].kernel || !r->culprits[0].src)
		goto fail;
	r->n_culprits = r->n_groups = 1;
	return r;
fail:
	registry__free(r);
	errno = ENOMEM;
	return NULL;
}

void registry__free(struct registry *r)
{
	if (!r)
		return;
	free(r->tasks);
	free(r->culprits);
	free(r->groups);
	strtab__clear(&r->strs);
	u64map__clear(&r->task_idx);
	u64map__clear(&r->culprit_idx);
	u64map__clear(&r->group_idx);
	free(r);
}

int registry__task(struct registry *r, const char *name)
{
	uint64_t h, v;

	if (!name)
		return REG_TASK_UNKNOWN;
	h = hash_strs(&name, 1);
	if (u64map__get(&r->task_idx, h, &v) && !strcmp(r->tasks[v - 1].name, name))
		return (int)(v - 1);
	for (size_t i = REG_TASK__FIXED; i < r->n_tasks; i++)
		if (!strcmp(r->tasks[i].name, name))
			return (int)i;
	if (r->n_tasks - REG_TASK__FIXED >= r->cap) {
		r->tasks_over++;
		return REG_TASK_OTHER;
	}
	const char *s = intern(r, name);
	if (!s || (!u64map__get(&r->task_idx, h, NULL) && u64map__set(&r->task_idx, h, r->n_tasks + 1)))
		return -ENOMEM;
	r->tasks[r->n_tasks] = (struct reg_task){ .name = s };
	return (int)r->n_tasks++;
}

int registry__culprit(struct registry *r, const char *kernel, const char *user, const char *src)
{
	const char *k[3] = { kernel ? kernel : "", user ? user : "", src ? src : "" };
	uint64_t h = hash_strs(k, 3), v;

	if (u64map__get(&r->culprit_idx, h, &v)) {
		const struct reg_culprit *c = &r->culprits[v - 1];
		if (!strcmp(c->kernel, k[0]) && !strcmp(c->user, k[1]) && !strcmp(c->src, k[2]))
			return (int)(v - 1);
	}
	for (size_t i = 1; i < r->n_culprits; i++) {
		const struct reg_culprit *c = &r->culprits[i];
		if (!strcmp(c->kernel, k[0]) && !strcmp(c->user, k[1]) && !strcmp(c->src, k[2]))
			return (int)i;
	}
	if (r->n_culprits - 1 >= r->cap) {
		r->culprits_over++;
		return 0;
	}
	struct reg_culprit c = { .kernel = intern(r, k[0]), .user = intern(r, k[1]),
				 .src = intern(r, k[2]) };
	if (!c.kernel || !c.user || !c.src ||
	    (!u64map__get(&r->culprit_idx, h, NULL) &&
	     u64map__set(&r->culprit_idx, h, r->n_culprits + 1)))
		return -ENOMEM;
	r->culprits[r->n_culprits] = c;
	return (int)r->n_culprits++;
}

int registry__group(struct registry *r, const char *task, const char *spawn)
{
	const char *k[2] = { task ? task : "unknown", spawn ? spawn : "" };
	uint64_t h = hash_strs(k, 2), v;

	if (u64map__get(&r->group_idx, h, &v)) {
		const struct reg_group *g = &r->groups[v - 1];
		if (!strcmp(g->task, k[0]) && !strcmp(g->spawn, k[1]))
			return (int)(v - 1);
	}
	for (size_t i = 1; i < r->n_groups; i++)
		if (!strcmp(r->groups[i].task, k[0]) && !strcmp(r->groups[i].spawn, k[1]))
			return (int)i;
	if (r->n_groups - 1 >= r->cap) {
		r->groups_over++;
		return 0;
	}
	struct reg_group g = { .task = intern(r, k[0]), .spawn = intern(r, k[1]) };
	if (!g.task || !g.spawn ||
	    (!u64map__get(&r->group_idx, h, NULL) && u64map__set(&r->group_idx, h, r->n_groups + 1)))
		return -ENOMEM;
	r->groups[r->n_groups] = g;
	return (int)r->n_groups++;
}

void registry__agg_begin(struct registry *r)
{
	for (size_t i = 0; i < r->n_groups; i++) {
		memset(&r->groups[i].cur, 0, sizeof(r->groups[i].cur));
		r->groups[i].live = r->groups[i].stalled = 0;
	}
	memset(&r->agg_cur, 0, sizeof(r->agg_cur));
}

void registry__agg_fold(struct registry *r)
{
	for (size_t i = 0; i < r->n_groups; i++) {
		agg_group__add(&r->groups[i].base, &r->groups[i].cur);
		memset(&r->groups[i].cur, 0, sizeof(r->groups[i].cur));
		r->groups[i].live = r->groups[i].stalled = 0;
	}
	agg_totals__add(&r->agg_base, &r->agg_cur);
	memset(&r->agg_cur, 0, sizeof(r->agg_cur));
}

void registry__group_sum(const struct registry *r, size_t g, struct agg_group *out)
{
	*out = r->groups[g].base;
	agg_group__add(out, &r->groups[g].cur);
}

void registry__totals_sum(const struct registry *r, struct agg_totals *out)
{
	*out = r->agg_base;
	agg_totals__add(out, &r->agg_cur);
}
