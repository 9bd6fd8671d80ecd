/* The async backtrace of a future in another process's memory, from DWARF:
 * an async fn or async block is a state machine (a structure whose
 * variant_part is keyed by `__state`); its variant says where it is
 * (Unresumed, Returned, Panicked, or SuspendN at the line of its .await)
 * and a SuspendN variant holds the future it awaits in `__awaitee`, which
 * is walked in turn. The first future that is not a state machine (a
 * combinator, a hand-written future, tokio::time::Sleep, ...) ends the
 * chain as its leaf, unless it is a combinator of futures: the futures
 * among its members (state machines; through enum variants, Pin<P>, boxed
 * trait objects, boxed slices and Vecs; a MaybeDone or a FuturesUnordered
 * taken whole), those not yet started left out when others are: one is
 * walked through (Timeout, Fuse, Map ...), several are its branches
 * (futures' Select, JoinAll ...). What is awaited through a reference
 * (Pin<&mut F>, &mut F, Box<F>, Box<dyn Future>) is the future behind it.
 * Reads go through a callback, so the walk is tested on synthetic memory;
 * knows nothing of Tokio; never prints. */
#ifndef AS_SYM_ASYNC_STACK_H
#define AS_SYM_ASYNC_STACK_H

#include <stddef.h>
#include <stdint.h>

#include "sym/dwarf_types.h"

#define ASYNC_STACK_MAX_DEPTH 64

struct async_frame {
	char *type;          /* DWARF type name: "app::f::{async_fn_env#0}" */
	char *future;        /* readable: "app::f" (sym_pretty_future) */
	char *state;         /* "Unresumed", "Suspend0", "Returned", "Panicked" */
	char *file;          /* source of the variant (relative to the unit's
	                        compilation directory when below it), or NULL */
	unsigned line;       /* SuspendN: the line of the .await; 0 unknown */
	uint64_t addr;       /* of the state machine in the target */
	Dwarf_Die variant;   /* its active variant's type (what it holds at this
	                        state: the locals live across the await), valid
	                        while the DWARF is open */
	uint64_t variant_addr;  /* where that variant is in the target */
	uint64_t discr_addr; /* its __state, as read */
	uint64_t discr;
	unsigned discr_size;
	char *via;           /* the combinators it awaits through to the next
	                        frame, outermost first ("tokio::time::timeout::
	                        Timeout > futures_util::...::Fuse"), or NULL */
};

struct async_branch;

/* A future the walk went through that is no state machine (a combinator,
 * the leaf, a wrapper of the root): where it is, for what a caller reads
 * in it (a timer's deadline). */
struct async_passed {
	Dwarf_Die type;
	uint64_t addr;
};

struct async_stack {
	struct async_frame *frames;  /* outermost first, innermost last */
	size_t n;
	char *via;           /* the combinators the root future itself is walked
	                        through to the first frame (a task spawned as
	                        fut.map(..)), as async_frame's via, or NULL */
	/* The innermost frame (or the root, with no frame) awaits several
	 * futures at once: an await macro (tokio::select!, tokio::join! /
	 * try_join!, futures::join! / select!), recognised by the crate of
	 * the future it polls, never by a line; a FuturesUnordered; or a
	 * combinator of several futures (futures' Select, JoinAll, ...: its
	 * type's name without generics). Its name, and each branch with its
	 * own chain. NULL / 0 otherwise. */
	char *macro;
	struct async_branch *branches;
	size_t n_branches;
	char *leaf;          /* readable name of the awaited future that ends the
	                        chain (innermost SuspendN's __awaitee), or NULL */
	char *leaf_type;     /* its DWARF type name, or NULL */
	uint64_t leaf_addr;  /* where it is in the target (with leaf_type), 0 none */
	Dwarf_Die leaf_die;  /* its type (with leaf_addr), valid while the DWARF is open */
	struct async_passed *passed;  /* the combinators walked through (and
	                                 the one of several futures), outermost
	                                 first; branches have their own */
	size_t n_passed;
	int truncated;       /* stopped at ASYNC_STACK_MAX_DEPTH */
	int error;           /* 0, or the -errno that stopped the walk early
	                        (a read failed, an unexpected layout) */
};

/* A branch of an await macro: "pending" with its chain, "done" (a join!
 * branch whose output is kept until all are, a futures::select! branch
 * whose Fuse ended), "gone" (taken), or "disabled" (a tokio::select!
 * branch that completed or failed its pattern). */
struct async_branch {
	char *state;
	struct async_stack stack;
};

/* Walks the future of type `type` at addr. Fills *out (cleared first; the
 * caller releases it with async_stack__clear()). Returns 0 when a chain was
 * read (out->error may still say why it stopped early), -ENOMEM, or -ENOENT
 * when type is not a structure. */
int async_stack_walk(struct dwarf_types *dt, Dwarf_Die *type, uint64_t addr,
		     mem_read_fn read, void *ctx, struct async_stack *out);
/* As async_stack_walk(), and a trait object (Box<dyn Future>, Pin<Box<dyn
 * Future>>, &mut dyn Future) is followed to the concrete future behind it:
 * its vtable's address less bias (the executable's load bias) names the
 * vtable rustc describes in DWARF, whose containing type is the future's. */
int async_stack_walk_dyn(struct dwarf_types *dt, Dwarf_Die *type, uint64_t addr,
			 mem_read_fn read, void *ctx, uint64_t bias, struct async_stack *out);

/* Re-reads every frame's __state and returns 1 when all are unchanged, 0 when
 * one changed (the walk saw a torn state), or the read error (< 0). */
int async_stack_verify(const struct async_stack *s, mem_read_fn read, void *ctx);

/* Frees what the stack owns and zeroes it; accepts a zeroed stack. */
void async_stack__clear(struct async_stack *s);

/* path relative to dir when below it ("/w/app/src/main.rs", "/w/app" ->
 * "src/main.rs"), else path itself. Returns a malloc'd string or NULL. */
char *async_stack_rel_path(const char *path, const char *dir);

#endif
