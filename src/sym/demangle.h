/* Rust (legacy and v0) and C++ symbol demangling through libiberty, and the
 * name normalisation used to match runtime functions whatever the mangling
 * scheme. Pure functions; no I/O. */
#ifndef AS_SYM_DEMANGLE_H
#define AS_SYM_DEMANGLE_H

/* Demangles `mangled` (a ".llvm.N" suffix is ignored) and removes a legacy
 * "::h<16 hex>" hash. Returns a malloc'd string the caller frees: the
 * demangled name, or a copy of the input when it is not mangled; NULL and
 * errno = ENOMEM on allocation failure. */
char *sym_demangle(const char *mangled);

/* Returns a malloc'd copy of a demangled name with every generic argument
 * list removed ("a::B<T, S>::f" -> "a::B::f", "f::<u8>" -> "f"), keeping
 * qualified-path brackets ("<impl X>", "<X as Y>") but stripping generics
 * inside them. NULL and errno = ENOMEM on failure. */
char *sym_strip_generics(const char *name);

/* Returns a malloc'd, readable form of a future type name taken from DWARF:
 * "app::main::{async_block#3}::{async_block_env#0}" -> "app::main::{async_block#3}::{async_block#0}",
 * "app::handler::{async_fn_env#0}" -> "app::handler", ", alloc::alloc::Global"
 * removed. NULL and errno = ENOMEM on failure. */
char *sym_pretty_future(const char *type_name);

#endif
