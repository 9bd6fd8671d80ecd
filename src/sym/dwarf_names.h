/* Names of generic function instances from DWARF (libdw): for a function
 * address, the DW_AT_name of its subprogram, e.g.
 * "poll<app::main::{async_block#3}::{async_block_env#0}, alloc::sync::Arc<..>>",
 * from which the root future type of a task poll copy is read. The names
 * found are kept across runs in the binary's memo (sym/dwarf_memo.h). */
#ifndef AS_SYM_DWARF_NAMES_H
#define AS_SYM_DWARF_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* Fills names[i] with a malloc'd subprogram name for addrs[i], or NULL when
 * DWARF does not describe that address, from the ELF file open on fd
 * (borrowed, not closed: elf_image__dwarf_fd(), dwarf_types__fd()). Returns
 * 0, or -errno when the file cannot be read or has no DWARF (names all NULL
 * then). Caller frees names. */
int dwarf_subprogram_names_fd(int fd, const uint64_t *addrs, size_t n, char **names);

/* The first generic argument of a name such as "poll<A<x, y>, B>" ("A<x, y>"),
 * or of a v0 path "a::poll::<A, B>". Returns a malloc'd string, or NULL
 * (errno ENOENT when there is none, ENOMEM). */
char *sym_first_generic_arg(const char *name);

#endif
