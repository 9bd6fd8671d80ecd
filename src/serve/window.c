/* serve's pprof windows (window.h): accumulation; the encoding is in
 * serve/window_pprof.c. */
#include "serve/window.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct window *window__new(int64_t id, enum http_window_kind kind, uint64_t start_ns,
			   uint64_t seconds, uint64_t period_ns, struct http_request *req)
{
	struct window *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->id = id;
	w->kind = kind;
	w->start_ns = start_ns;
	w->end_ns = start_ns + seconds * 1000000000ull;
	w->period_ns = period_ns;
	w->req = req;
	return w;
}

int window__add(struct window *w, uint32_t stack, uint32_t task, uint64_t count, uint64_t ns)
{
	uint64_t key = ((uint64_t)stack << 32 | task) + 1, v;

	if (key == UINT64_MAX)
		key = 1;
	if (!u64map__get(&w->idx, key, &v)) {
		if (w->n >= WINDOW_MAX_ENTRIES) {
			/* full: one entry without a stack takes the rest */
			w->folded += count;
			stack = 0;
			key = (uint64_t)task + 1;
			if (u64map__get(&w->idx, key, &v))
				goto add;
		}
		if (w->n == w->cap) {
			size_t cap = w->cap ? w->cap * 2 : 64;
			struct window_entry *e = realloc(w->e, cap * sizeof(*e));
			if (!e)
				return -ENOMEM;
			w->e = e;
			w->cap = cap;
		}
		if (u64map__set(&w->idx, key, w->n + 1))
			return -ENOMEM;
		w->e[w->n] = (struct window_entry){ .stack = stack, .task = task };
		v = ++w->n;
	}
add:
	w->e[v - 1].count += count;
	w->e[v - 1].ns += ns;
	return 0;
}

void window__free(struct window *w)
{
	if (!w)
		return;
	free(w->e);
	u64map__clear(&w->idx);
	free(w);
}
