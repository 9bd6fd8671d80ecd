/* serve's pprof windows: each GET /debug/pprof/profile?seconds=N (or
 * offcpu) opens a window on the one stream of events; every CPU sample
 * (or blocking interval inside a task) whose time falls in it is added,
 * by (stack, task row); when it is over, its profile is encoded (gzip'd
 * pprof, profile.proto) with the task as a label of each sample and as
 * the root frame of its stack (as export --format pprof roots them). At most WINDOWS_MAX windows at once, each
 * of at most WINDOW_MAX_ENTRIES (stack, task) pairs (past it the samples
 * go to one entry without a stack: counted, said in the profile's
 * comments). Pure C, no I/O, no locking. */
#ifndef AS_SERVE_WINDOW_H
#define AS_SERVE_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "serve/http.h"
#include "serve/registry.h"
#include "serve/stacks.h"
#include "util/u64map.h"

#define WINDOWS_MAX 16
#define WINDOW_MAX_ENTRIES 16384

struct window_entry {
	uint32_t stack;              /* stack store id, 0 none */
	uint32_t task;               /* registry task row */
	uint64_t count;              /* samples, or blocking intervals */
	uint64_t ns;                 /* their CPU time (samples x period) or off-CPU time */
};

struct window {
	int64_t id;
	enum http_window_kind kind;
	uint64_t start_ns, end_ns;   /* CLOCK_MONOTONIC */
	uint64_t period_ns;          /* a sample period (CPU) */
	struct http_request *req;
	bool over;                   /* end passed: resumed, waiting to be taken */
	struct window_entry *e;
	size_t n, cap;
	uint64_t folded;             /* samples past WINDOW_MAX_ENTRIES (in an entry without
	                                stack) */
	struct u64map idx;           /* stack << 32 | task -> entry + 1 */
};

/* A new window; NULL on failure. */
struct window *window__new(int64_t id, enum http_window_kind kind, uint64_t start_ns,
			   uint64_t seconds, uint64_t period_ns, struct http_request *req);
/* Adds count and ns to (stack, task). Returns 0 or -ENOMEM. */
int window__add(struct window *w, uint32_t stack, uint32_t task, uint64_t count, uint64_t ns);
/* The gzip'd pprof of w into *buf (malloc'd) of *len; stacks and reg give
 * frames and task names; comment lines say what the profile holds.
 * Returns 0 or -errno. */
int window__encode(const struct window *w, const struct stack_store *stacks,
		   const struct registry *reg, const char *target, uint64_t real_start_ns,
		   uint8_t **buf, size_t *len);
void window__free(struct window *w);

#endif
