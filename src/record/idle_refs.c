/* idle_refs: the idle tasks at the end of a recording and the wakers of
 * each held (see idle_refs.h). */
#include "record/idle_refs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "probe/profile.h"

#define GEN_SHIFT 16

int rec_idle__note(struct rec_idle *x, const struct as_event *ev)
{
	if (__builtin_expect(x->before_of.len != 0, 0) && ev->task &&
	    ev->type != AS_EV_SPAWN && ev->type != AS_EV_THREAD)
		u64map__del(&x->before_of, ev->task);   /* seen after all */
	switch (ev->type) {
	case AS_EV_POLL_END:
		if (!(ev->flags & AS_POLL_READY))
			return u64map__set(&x->idle, ev->task, ++x->gen << GEN_SHIFT | ev->probe);
		__attribute__((fallthrough));   /* done */
	case AS_EV_POLL_BEGIN:
	case AS_EV_WAKE:
	case AS_EV_FREE:
		if (x->idle.len)
			u64map__del(&x->idle, ev->task);
		return 0;
	default:
		return 0;
	}
}

static const struct task_state_layout *layout_of(const struct probe_plan *plan, uint16_t probe)
{
	if (probe >= plan->n || plan->owner[probe] >= plan->n_profiles)
		return NULL;
	return plan->profiles[plan->owner[probe]]->task_state;
}

/* Reads up to BATCH words at once (process_vm_readv stops at the first
 * address it cannot read: the rest are read again after it). */
#define BATCH 512

struct pending {
	uint64_t header, gen;
	const struct task_state_layout *l;
};

/* The state words of p[0 .. n) into the reads: what cannot be read is
 * counted unread. */
static void read_batch(struct rec_idle *x, pid_t pid, const struct pending *p, size_t n)
{
	uint64_t words[BATCH];
	struct iovec local[BATCH], remote[BATCH];
	size_t at = 0;

	while (at < n) {
		size_t k = n - at;

		for (size_t i = 0; i < k; i++) {
			local[i] = (struct iovec){ .iov_base = &words[i], .iov_len = sizeof(words[i]) };
			remote[i] = (struct iovec){
				.iov_base = (void *)(uintptr_t)(p[at + i].header + p[at + i].l->off),
				.iov_len = sizeof(words[i]) };
		}
		ssize_t got = process_vm_readv(pid, local, (unsigned long)k, remote,
					       (unsigned long)k, 0);
		size_t ok = got > 0 ? (size_t)got / sizeof(words[0]) : 0;

		for (size_t i = 0; i < ok; i++) {
			uint32_t wakers;

			/* a task woken or running by now: its events say so after */
			if (task_state_wakers(p[at + i].l, words[i], &wakers))
				x->reads[x->n_reads++] = (struct idle_read){
					.header = p[at + i].header, .gen = p[at + i].gen,
					.wakers = wakers,
				};
		}
		if (ok < k)
			x->unread++;   /* the word after them: gone (freed, the target gone) */
		at += ok < k ? ok + 1 : ok;
	}
}

int rec_idle__read(struct rec_idle *x, pid_t pid, const struct probe_plan *plan)
{
	const struct u64map *m = &x->idle;
	struct pending p[BATCH];
	size_t n = 0;

	free(x->reads);
	x->reads = NULL;
	x->n_reads = 0;
	if (!m->len)
		return 0;
	if (!(x->reads = malloc(m->len * sizeof(*x->reads))))
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++) {
		uint64_t h = m->keys[i];
		const struct task_state_layout *l;

		if (h == 0 || h == UINT64_MAX || !(l = layout_of(plan, (uint16_t)m->vals[i])))
			continue;
		p[n++] = (struct pending){ .header = h, .gen = m->vals[i] >> GEN_SHIFT, .l = l };
		if (n == BATCH) {
			read_batch(x, pid, p, n);
			n = 0;
		}
	}
	read_batch(x, pid, p, n);
	return 0;
}

int rec_idle__before(struct rec_idle *x, const struct idle_before *b)
{
	uint64_t v;

	if (!b->header || b->header == UINT64_MAX || (b->running && !b->tid) ||
	    u64map__get(&x->idle, b->header, &v) || u64map__get(&x->before_of, b->header, &v))
		return 0;   /* followed through its events, or found already */
	if (x->n_before == x->cap_before) {
		size_t cap = x->cap_before ? x->cap_before * 2 : 64;
		struct idle_before *p = realloc(x->before, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		x->before = p;
		x->cap_before = cap;
	}
	struct idle_before *d = &x->before[x->n_before];

	*d = *b;
	d->name = NULL;
	if ((b->name && !(d->name = strdup(b->name))) ||
	    u64map__set(&x->before_of, b->header, x->n_before + 1)) {
		free(d->name);
		return -ENOMEM;
	}
	x->n_before++;
	return 0;
}

void rec_idle__emit(struct rec_idle *x, uint64_t ts, uint32_t tid,
		    void (*emit)(void *ctx, const struct as_event *ev), void *ctx,
		    struct idle_emitted *out)
{
	*out = (struct idle_emitted){ 0 };
	for (size_t i = 0; i < x->n_reads; i++) {
		const struct idle_read *r = &x->reads[i];
		uint64_t v;

		if (!u64map__get(&x->idle, r->header, &v) || v >> GEN_SHIFT != r->gen)
			continue;
		struct as_event ev = { .type = AS_EV_SPAWN, .flags = AS_SPAWN_WAKERS, .tid = tid,
				       .ts = ts, .task = r->header, .other = r->wakers };

		emit(ctx, &ev);
		out->notes++;
		out->no_waker += !r->wakers;
	}
	for (size_t i = 0; i < x->n_before; i++) {
		const struct idle_before *b = &x->before[i];
		uint64_t v;

		if (!u64map__get(&x->before_of, b->header, &v) || v != i + 1)
			continue;   /* an event of it came after the walk */
		if (b->running && b->comm[0])   /* its thread, named (again) */
			emit(ctx, &(struct as_event){ .type = AS_EV_THREAD, .ts = ts, .tid = b->tid,
						      .str = b->comm });
		emit(ctx, &(struct as_event){ .type = AS_EV_SPAWN, .ts = ts,
					      .tid = b->running ? b->tid : tid,
					      .flags = AS_SPAWN_BEFORE |
						       (b->queued ? AS_SPAWN_QUEUED : 0) |
						       (b->running ? AS_SPAWN_RUNNING : 0),
					      .task = b->header, .other = b->id, .str = b->name });
		if (b->queued || b->running) {
			out->before_queued += b->queued;
			out->before_running += b->running;
			continue;
		}
		out->before_idle++;
		if (!b->wakers_known)
			continue;
		emit(ctx, &(struct as_event){ .type = AS_EV_SPAWN, .flags = AS_SPAWN_WAKERS,
					      .tid = tid, .ts = ts, .task = b->header,
					      .other = b->wakers });
		out->before_no_waker += !b->wakers;
	}
}

void rec_idle__free(struct rec_idle *x)
{
	u64map__clear(&x->idle);
	free(x->reads);
	for (size_t i = 0; i < x->n_before; i++)
		free(x->before[i].name);
	free(x->before);
	u64map__clear(&x->before_of);
	*x = (struct rec_idle){ 0 };
}
