/* CAT / uftrace dump text: which function lines stand for which events.
 *
 * Two sets of rules, both the module's own data:
 * - the per-thread call-stack rules that turn a thread's function lines into
 *   events, given each function's probe role. The writer (cat/writer.h) runs
 *   them on the lines it writes, so that what the reader derives is known
 *   and only the differences are written out (as `[args ]` lines);
 * - for a file with no asyncscope header (CAT's dumped_data.txt, any uftrace
 *   dump), the role of a function from its name alone: the runtime functions
 *   that poll a task, complete it and park a worker (the names of the
 *   runtime profiles of probe/profile.c, kept here as CAT's own table; a unit
 *   test checks that the two agree), plus CAT's future patterns.
 *
 * Pure C: depends on trace/event.h and sym/demangle.h; never prints. Not on
 * probe/. Grammar: docs/cat-format.md. */
#ifndef AS_CAT_RULES_H
#define AS_CAT_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/event.h"

/* Deepest call nesting followed per thread (deeper is an error). */
#define CAT_DEPTH_MAX 65536u

/* ---- Per-thread call stacks ---- */

struct cat_frame {
	uint32_t probe;   /* the function (index into the probes), or UINT32_MAX */
	uint16_t role;    /* its enum as_probe_role, 0 for a function with none */
	uint64_t addr;    /* the address in its line */
};

struct cat_state {
	struct cat_frame *frames;  /* open calls, outermost first */
	uint32_t n, cap;
	uint32_t futures;          /* open AS_ROLE_FUTURE frames */
	bool ready;                /* an AS_ROLE_READY call since the last poll line */
};

/* Applies one line to st: the entry (exit false) or exit of function probe
 * (role role, 0 none) with address addr. An exit closes the innermost open
 * call of the same probe and address and every call inside it, and stands
 * for what that call's role says (the role it was entered with); with none
 * open it closes nothing. When the line stands for an event, returns 1 and
 * sets ev's type, flags, probe, task and other as derived (ts, tid, str and
 * stack are left alone): POLL entry -> POLL_BEGIN (task addr, other 0), exit
 * -> POLL_END (task addr, Ready when a READY call came since the last poll
 * line); WAKE entry -> WAKE (task addr, other the innermost open poll's
 * address, flags IO inside an IO_DRIVER call, else TIMER inside a TIMER
 * call); SPAWN entry -> SPAWN (other addr: the spawn location id); FREE
 * entry -> FREE (task addr); PARK entry -> PARK, exit -> UNPARK; USDT entry
 * -> USDT (other addr, task the innermost open poll's); FUTURE entry ->
 * FUTURE_ENTER (other the open future frames before it), exit ->
 * FUTURE_EXIT (other the open future frames after it), both with task the
 * innermost open poll's. Returns 0 for a line that stands for no event,
 * -ENOMEM, or -E2BIG past CAT_DEPTH_MAX open calls. */
int cat_state__apply(struct cat_state *st, bool exit, uint16_t role, uint32_t probe,
		     uint64_t addr, struct as_event *ev);
/* Open calls, the depth that uftrace would print for the next entry. */
static inline uint32_t cat_state__depth(const struct cat_state *st) { return st->n; }
/* Frees st's frames and zeroes it; st may be reused. */
void cat_state__clear(struct cat_state *st);

/* ---- Functions of a file without asyncscope's header ---- */

/* A runtime function CAT's logs show, by name. */
struct cat_runtime_fn {
	uint16_t role;        /* AS_ROLE_POLL, AS_ROLE_READY or AS_ROLE_PARK */
	bool glob;            /* name is a glob ('*' any text) on the whole Rust
	                         name; else it equals the name without generics */
	bool inner;           /* a poll function entered by another poll function
	                         for the same task (the same poll seen twice) */
	const char *runtime;  /* "tokio", "async-std" */
	const char *name;
};

/* The table, in matching order (the first match wins); *n its length. */
const struct cat_runtime_fn *cat_rules_runtime_fns(size_t *n);

/* What a function stands for, from its name alone. */
struct cat_role {
	uint16_t role;        /* AS_ROLE_POLL, READY, PARK, FUTURE, or 0: nothing */
	bool inner_poll;      /* see struct cat_runtime_fn */
	const char *runtime;  /* the runtime whose function it is (static), or NULL */
};

/* Classifies a function by its Rust name (rust, see cat_unspell()) and its
 * uftrace spelling (spelled, cat_spell() of rust: CAT's patterns are on
 * that): the runtime table first, then CAT's future patterns (names holding
 * "::_{{closure}}" or "as core..future..future..Future>::poll"). Returns 0
 * with *out, or -ENOMEM. */
int cat_rules_classify(const char *rust, const char *spelled, struct cat_role *out);

/* A readable future name for a function of such a file: the Rust name
 * without its trailing "::{{closure}}" components ("app::handler"), as a
 * malloc'd *out; *out NULL when there is nothing to strip. Returns 0 or
 * -ENOMEM. */
int cat_rules_future_name(const char *rust, char **out);

#endif
