/* A poll copy's root future when neither DWARF nor its own symbol names it
 * (legacy symbol mangling, debug = false: "tokio::runtime::task::raw::poll"
 * without generic arguments): found in the names of the functions the copy
 * calls, directly or through the runtime's own functions (breadth first, a
 * few levels): a runtime type that carries the future (the profile's
 * carriers, in drop glue names: "drop_in_place<...core::Cell<app::handler::
 * {{closure}}, ...>>"), else the one function of the program's own code
 * reached first (the future's poll: "app::handler::{{closure}}"). Names
 * shared by identical functions folded into one address, and ties, give
 * no answer rather than a wrong one. No libbpf, no DWARF. */
#ifndef AS_PROBE_FUTURE_NAMES_H
#define AS_PROBE_FUTURE_NAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "probe/profile.h"
#include "sym/elf_image.h"

struct callee_namer;

/* A namer over img (borrowed; its symbols sorted by address, as
 * elf_image__open() leaves them), which remembers each function's callees
 * across copies. NULL and errno = ENOMEM. */
struct callee_namer *callee_namer__new(const struct elf_image *img);

/* How callee_namer__future() found a name. */
enum callee_found {
	CALLEE_NONE = 0,
	CALLEE_CARRIER,   /* a carrier type's argument */
	CALLEE_FUNCTION,  /* the program's function reached first */
};

/* The future type (as the names spell it, not yet made readable) of the
 * poll copy at addr of profile prof: 0 with *out malloc'd (caller frees)
 * and *how, or *out NULL and CALLEE_NONE when nothing names it; -ENOMEM.
 * *endless: a carrier's name matches prof's endless_polls, even where
 * identical code folding left the name ambiguous (the copy runs a
 * worker's loop). */
int callee_namer__future(struct callee_namer *cn, const struct runtime_profile *prof,
			 uint64_t addr, char **out, enum callee_found *how, bool *endless);

void callee_namer__free(struct callee_namer *cn);

/* The generic argument nth (0 first) of the first occurrence of type
 * (a path, "a::B") followed by its argument list in name, trimmed, as a
 * malloc'd string; NULL when there is none (or ENOMEM). A type preceded by
 * an identifier character or ':' is another one ("xa::B", "c::a::B"). */
char *future_carrier_arg(const char *name, const char *type, unsigned nth);

#endif
