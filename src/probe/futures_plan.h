/* Planning future-level probes (record --futures, --probe REGEX,
 * --probe-preset cat): which functions of a binary are the poll functions
 * of futures, and what BPF needs to know of each: the register holding
 * self, the offset of an async state machine's u8 __state, and for the
 * analysis the source file and line and the line of each await point.
 * Symbols from the ELF image; everything else from DWARF (libdw) when the
 * binary has it. No libbpf here; never prints. */
#ifndef AS_PROBE_FUTURES_PLAN_H
#define AS_PROBE_FUTURES_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "probe/plan.h"

struct dwarf_types;

/* Future probes planned at most (each is an entry and a return probe). */
#define FUTURES_PLAN_MAX_DEFAULT 2048

struct futures_opts {
	/* The out-of-line poll functions of async fn and async block state
	 * machines and the impl Future::poll functions of the target's own
	 * crates (not std, not the runtime, not other dependencies). */
	bool futures;
	/* Any function whose demangled name (hash removed) matches one of these
	 * POSIX extended regular expressions. */
	const char *const *patterns;
	size_t n_patterns;
	/* CAT's four patterns (async-std task poll closure, GenFuture::poll,
	 * every closure, every Future::poll). */
	bool preset_cat;
	size_t max_probes;   /* 0: FUTURES_PLAN_MAX_DEFAULT */
	/* The binary's DWARF when the caller has it open (borrowed: the
	 * binary is opened once per recording), NULL: opened here from
	 * img->path when needed. */
	struct dwarf_types *dt;
};

struct futures_plan_stats {
	size_t planned;         /* probes added */
	size_t state_machines;  /* of which async state machines (Ready/Pending known) */
	size_t poll_returns;    /* of which others returning a Poll whose tag is known */
	size_t with_source;     /* of which with a source file and line */
	size_t over_max;        /* selected but not planned: past max_probes */
	size_t unprobeable;     /* selected but not planned: the kernel refuses a
	                           uprobe on their first instruction (lock prefix...) */
	bool dwarf;             /* the binary had DWARF */
	bool no_dwarf;          /* --futures asked for without DWARF: off (only
	                           --probe patterns planned) */
	bool unwinds;           /* the binary unwinds on panic (panic = "unwind"): a
	                           panic through a probed frame aborts it (the
	                           uretprobe's return address has no unwind info) */
};

/* The readable name of a future's poll function from its demangled symbol
 * and, when known, its DWARF subprogram name ("{async_fn#0}",
 * "{async_block#1}", NULL): "app::handler::{{closure}}" -> "app::handler",
 * "app::f::{{closure}}::{{closure}}" + "{async_block#0}" ->
 * "app::f::{async_block#0}", "<app::Tick as core::future::future::Future>::poll"
 * -> "<app::Tick as Future>::poll". Returns a malloc'd string or NULL. */
char *futures_readable_name(const char *symbol, const char *die_name);

/* The crate of a demangled name: its first path segment ("app" of
 * "app::f::{{closure}}", "app" of "<app::T as core::future::future::Future>::poll").
 * Writes at most len - 1 bytes to out; returns out. */
char *futures_crate_of(const char *name, char *out, size_t len);

/* Appends the future probes of img selected by o to plan (role
 * AS_ROLE_FUTURE, owner PLAN_OWNER_NONE). Returns the number added (0 is
 * not an error for --futures alone), or -errno with a one-line message in
 * err: a bad regular expression, a pattern matching nothing, ENOMEM.
 * stats may be NULL. */
int futures_plan_add(struct probe_plan *plan, const struct elf_image *img,
		     const struct futures_opts *o, struct futures_plan_stats *stats,
		     char *err, size_t errlen);

#endif
