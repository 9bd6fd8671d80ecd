/* The merge heap (see cat/heap.h): a binary heap of section indices with
 * each section's place, so that a section can be taken out anywhere. */
#include "cat/heap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int cat_heap__init(struct cat_heap *h, uint32_t n)
{
	memset(h, 0, sizeof(*h));
	h->heap = malloc((n ? n : 1) * sizeof(*h->heap));
	h->pos = malloc((n ? n : 1) * sizeof(*h->pos));
	h->key = calloc(n ? n : 1, sizeof(*h->key));
	if (!h->heap || !h->pos || !h->key) {
		cat_heap__free(h);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		h->pos[i] = UINT32_MAX;
	h->cap = n;
	return 0;
}

static bool before(const struct cat_heap *h, uint32_t a, uint32_t b)
{
	return h->key[a] < h->key[b] || (h->key[a] == h->key[b] && a < b);
}

static void place(struct cat_heap *h, uint32_t i, uint32_t s)
{
	h->heap[i] = s;
	h->pos[s] = i;
}

static void sift_up(struct cat_heap *h, uint32_t i)
{
	uint32_t s = h->heap[i];
	while (i > 0) {
		uint32_t p = (i - 1) / 2;
		if (!before(h, s, h->heap[p]))
			break;
		place(h, i, h->heap[p]);
		i = p;
	}
	place(h, i, s);
}

static void sift_down(struct cat_heap *h, uint32_t i)
{
	uint32_t s = h->heap[i];
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && before(h, h->heap[c + 1], h->heap[c]))
			c++;
		if (!before(h, h->heap[c], s))
			break;
		place(h, i, h->heap[c]);
		i = c;
	}
	place(h, i, s);
}

void cat_heap__push(struct cat_heap *h, uint32_t s, uint64_t ts)
{
	if (s >= h->cap || h->pos[s] != UINT32_MAX)
		return;
	h->key[s] = ts;
	place(h, h->n++, s);
	sift_up(h, h->n - 1);
}

void cat_heap__remove(struct cat_heap *h, uint32_t s)
{
	if (s >= h->cap || h->pos[s] == UINT32_MAX)
		return;
	uint32_t i = h->pos[s];
	h->pos[s] = UINT32_MAX;
	if (--h->n == i)
		return;
	uint32_t moved = h->heap[h->n];
	place(h, i, moved);
	sift_down(h, i);
	sift_up(h, h->pos[moved]);
}

void cat_heap__free(struct cat_heap *h)
{
	free(h->heap);
	free(h->pos);
	free(h->key);
	memset(h, 0, sizeof(*h));
}
