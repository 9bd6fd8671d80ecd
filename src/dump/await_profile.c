/* The await profile (await_profile.h): chains interned in a string table,
 * their weights in arrays by the same index, (chain, task) pairs in a map
 * for the distinct task counts. */
#include "dump/await_profile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/fmt.h"
#include "util/strtab.h"
#include "util/u64map.h"

#define MAX_CHAIN 8192     /* bytes of one stack; deeper frames are cut */

struct await_profile {
	uint64_t interval_ns, samples;
	struct strtab chains;
	struct await_chain *rows;   /* by chain index */
	size_t cap;
	struct u64map pairs;        /* hash of (chain, task header) -> 1 */
	struct await_chain *sorted; /* await_profile__chains() */
};

struct await_profile *await_profile__new(uint64_t interval_ns)
{
	struct await_profile *p = calloc(1, sizeof(*p));

	if (p)
		p->interval_ns = interval_ns;
	return p;
}

uint64_t await_profile__samples(const struct await_profile *p)
{
	return p->samples;
}

/* Appends "sep text" to buf (len used of MAX_CHAIN), ';' in text made ','
 * (the folded format's separator). False when it no longer fits. */
static bool put(char *buf, size_t *len, const char *sep, const char *text)
{
	size_t n = strlen(sep) + strlen(text);

	if (*len + n + 1 > MAX_CHAIN)
		return false;
	memcpy(buf + *len, sep, strlen(sep));
	*len += strlen(sep);
	for (const char *c = text; *c; c++)
		buf[(*len)++] = *c == ';' ? ',' : *c;
	buf[*len] = '\0';
	return true;
}

static int count(struct await_profile *p, const char *stack, uint64_t header, uint64_t ns)
{
	uint32_t idx;
	int err;

	int added = strtab__intern(&p->chains, stack, strlen(stack), &idx);
	if (added < 0)
		return added;
	if (added) {
		if (idx >= p->cap) {
			size_t cap = p->cap ? p->cap * 2 : 64;
			struct await_chain *r = realloc(p->rows, cap * sizeof(*r));
			if (!r)
				return -ENOMEM;
			p->rows = r;
			p->cap = cap;
		}
		p->rows[idx] = (struct await_chain){ .stack = strtab__get(&p->chains, idx) };
	}
	struct await_chain *c = &p->rows[idx];
	c->ns += ns;
	c->task_samples++;
	uint64_t key = ((uint64_t)idx + 1) * 0x9E3779B97F4A7C15ull ^ header;
	if (!key)
		key = 1;
	if (!u64map__get(&p->pairs, key, NULL)) {
		if ((err = u64map__set(&p->pairs, key, 1)))
			return err;
		c->tasks++;
	}
	return 0;
}

/* The chain s below the stack so far (buf, len): its frames and what the
 * innermost awaits; an await macro's pending branches each a stack of its
 * own, ns split between them. */
static int add_chain(struct await_profile *p, char *buf, size_t len, const struct async_stack *s,
		     uint64_t header, uint64_t ns)
{
	char frame[1024];
	size_t pending = 0;

	for (size_t k = 0; k < s->n; k++) {
		const struct async_frame *f = &s->frames[k];
		if (f->file && f->line)
			snprintf(frame, sizeof(frame), "%s (%s:%u)", f->future, f->file, f->line);
		else
			snprintf(frame, sizeof(frame), "%s", f->future);
		if (!put(buf, &len, ";", frame))
			break;
	}
	for (size_t b = 0; b < s->n_branches; b++)
		pending += !strcmp(s->branches[b].state, "pending");
	if (!s->macro || !pending) {
		if (s->leaf)
			put(buf, &len, ";", s->leaf);
		else if (s->macro)
			put(buf, &len, ";", s->macro);
		return count(p, buf, header, ns);
	}
	uint64_t left = ns % pending;   /* shares that sum to ns: the first ones 1 ns more */

	for (size_t b = 0; b < s->n_branches; b++) {
		const struct async_branch *br = &s->branches[b];
		size_t l2 = len;
		int err;

		if (strcmp(br->state, "pending"))
			continue;
		snprintf(frame, sizeof(frame), "%s branch %zu", s->macro, b);
		put(buf, &l2, ";", frame);
		/* a share of the time each: the task waits on all of them */
		uint64_t share = ns / pending + (left ? 1 : 0);
		left -= left ? 1 : 0;
		if ((err = add_chain(p, buf, l2, &br->stack, header, share)))
			return err;
		buf[len] = '\0';
	}
	return 0;
}

int await_profile__add(struct await_profile *p, const struct dump_result *r)
{
	char *buf = malloc(MAX_CHAIN);
	int err = 0;

	if (!buf)
		return -ENOMEM;
	free(p->sorted);
	p->sorted = NULL;
	p->samples++;
	for (size_t i = 0; i < r->n && !err; i++) {
		const struct dump_task *t = &r->tasks[i];
		size_t len = 0;

		buf[0] = '\0';
		put(buf, &len, "", t->name ? t->name : "?");
		if (t->note) {
			char note[256];
			snprintf(note, sizeof(note), "(%s)", t->note);
			put(buf, &len, ";", note);
			err = count(p, buf, t->header, p->interval_ns);
		} else {
			err = add_chain(p, buf, len, &t->stack, t->header, p->interval_ns);
		}
	}
	/* the threads in a block_on: "block_on NAME" the root, its chain (or
	 * why there is none, as a task's note), one "task" per thread */
	for (size_t i = 0; i < r->n_block_ons && !err; i++) {
		const struct dump_block_on *b = &r->block_ons[i];
		uint64_t key = UINT64_C(1) << 63 | (uint64_t)b->tid;
		size_t len = 0;

		buf[0] = '\0';
		snprintf(buf, MAX_CHAIN, "block_on %s", b->name ? b->name : "?");
		len = strlen(buf);
		if (!b->located) {
			char note[256];
			snprintf(note, sizeof(note), "(%s)", b->note ? b->note : "not found");
			put(buf, &len, ";", note);
			err = count(p, buf, key, p->interval_ns);
		} else {
			err = add_chain(p, buf, len, &b->stack, key, p->interval_ns);
		}
	}
	free(buf);
	return err;
}

static int by_time(const void *a, const void *b)
{
	const struct await_chain *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? 1 : -1;
	return strcmp(x->stack, y->stack);
}

const struct await_chain *await_profile__chains(struct await_profile *p, size_t *n)
{
	*n = p->chains.n;
	if (!p->sorted && p->chains.n) {
		p->sorted = malloc(p->chains.n * sizeof(*p->sorted));
		if (!p->sorted) {
			*n = 0;
			return NULL;
		}
		memcpy(p->sorted, p->rows, p->chains.n * sizeof(*p->sorted));
		qsort(p->sorted, p->chains.n, sizeof(*p->sorted), by_time);
	}
	return p->sorted;
}

int await_profile__write_folded(struct await_profile *p, FILE *out)
{
	size_t n;
	const struct await_chain *c = await_profile__chains(p, &n);

	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s %" PRIu64 "\n", c[i].stack, c[i].ns);
	return ferror(out) ? -EIO : 0;
}

int await_profile__write_table(struct await_profile *p, FILE *out, size_t limit)
{
	size_t n;
	const struct await_chain *c = await_profile__chains(p, &n);
	char iv[FMT_DURATION_MAX], tm[FMT_DURATION_MAX];
	uint64_t all = 0;

	for (size_t i = 0; i < n; i++)
		all += c[i].ns;
	fprintf(out, "asyncscope await profile: %" PRIu64 " samples, one every %s, %zu chains\n",
		p->samples, fmt_duration(iv, sizeof(iv), p->interval_ns), n);
	fprintf(out, "%7s %7s %10s  %s\n", "TASKS", "SHARE", "TIME", "CHAIN (root; frames outermost first; awaited)");
	for (size_t i = 0; i < n && (!limit || i < limit); i++)
		fprintf(out, "%7" PRIu64 " %6.1f%% %10s  %s\n", c[i].tasks,
			all ? 100.0 * (double)c[i].ns / (double)all : 0.0,
			fmt_duration(tm, sizeof(tm), c[i].ns), c[i].stack);
	if (limit && n > limit)
		fprintf(out, "... and %zu more chains (all in --format folded)\n", n - limit);
	return ferror(out) ? -EIO : 0;
}

void await_profile__free(struct await_profile *p)
{
	if (!p)
		return;
	strtab__clear(&p->chains);
	u64map__clear(&p->pairs);
	free(p->rows);
	free(p->sorted);
	free(p);
}
