/* The merge heap of CAT / uftrace dump text: sections (0..n-1) keyed by the
 * timestamp of their next event; ties go to the lower section index. Used
 * to merge threads by time, by the reader (cat/reader.h) and by the writer
 * (cat/writer.h, which checks where the merge would differ from the trace's
 * own order and writes those steps down). Pure C, no dependency. */
#ifndef AS_CAT_HEAP_H
#define AS_CAT_HEAP_H

#include <stdint.h>

struct cat_heap {
	uint32_t *heap;   /* section indices */
	uint32_t *pos;    /* per section: its place in heap, UINT32_MAX when out */
	uint64_t *key;    /* per section: the timestamp */
	uint32_t n, cap;
};

/* Makes room for sections 0..n-1 (all out). Returns 0 or -ENOMEM. */
int cat_heap__init(struct cat_heap *h, uint32_t n);
/* Puts section s (not in the heap) in with timestamp ts. */
void cat_heap__push(struct cat_heap *h, uint32_t s, uint64_t ts);
/* Takes section s out (a no-op when it is out). */
void cat_heap__remove(struct cat_heap *h, uint32_t s);
/* The section with the earliest timestamp, or UINT32_MAX when empty. */
static inline uint32_t cat_heap__top(const struct cat_heap *h) { return h->n ? h->heap[0] : UINT32_MAX; }
/* Frees h's arrays and zeroes it; accepts a zeroed heap. */
void cat_heap__free(struct cat_heap *h);

#endif
