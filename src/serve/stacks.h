/* serve's stack store: the stacks of CPU samples and off-CPU intervals as
 * the recording names them, copied (frames and interned strings), each
 * once, by id (1, 2, ...), for the pprof windows; with each its blocking
 * culprit's row in the registry. Bounded: at most STACKS_MAX stacks and
 * STACKS_MAX_BYTES of frames; past it a stack is not kept (counted) and
 * serve__* carries its culprit alone (STACKS_CULPRIT_ONLY). The store is
 * emptied when full and no window holds its ids. Pure C, no I/O, no
 * locking. */
#ifndef AS_SERVE_STACKS_H
#define AS_SERVE_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/event.h"
#include "util/strtab.h"
#include "util/u64map.h"

#define STACKS_MAX 8192
#define STACKS_MAX_BYTES (16u << 20)
/* An id with this bit is no stack: its low bits are a culprit row + 1. */
#define STACKS_CULPRIT_ONLY 0x80000000u

struct kept_stack {
	struct as_stack st;          /* frames owned, strings the store's */
	int culprit;                 /* registry culprit row, -1 none */
	uint64_t hash;
};

struct stack_store {
	struct kept_stack **s;       /* s[id - 1] */
	size_t n, cap;
	size_t bytes;
	uint64_t dropped;            /* stacks not kept (full) */
	uint64_t resets;
	struct strtab strs;
	struct u64map by_hash;       /* hash -> id (first of that hash) */
};

/* The id of st (a copy kept when new), with culprit its culprit row; 0
 * when the store is full (then nothing is kept: the caller may use
 * STACKS_CULPRIT_ONLY | (culprit + 1)). -ENOMEM as 0 too. */
uint32_t stack_store__add(struct stack_store *ss, const struct as_stack *st, int culprit);
/* The stack of id, NULL none (0, culprit-only, unknown). */
const struct kept_stack *stack_store__get(const struct stack_store *ss, uint32_t id);
/* The culprit row of id (kept or culprit-only), -1 none. */
int stack_store__culprit(const struct stack_store *ss, uint32_t id);
/* Full (the next new stack would not be kept). */
bool stack_store__full(const struct stack_store *ss);
/* Empties the store (ids given so far mean nothing after). */
void stack_store__reset(struct stack_store *ss);
void stack_store__clear(struct stack_store *ss);

#endif
