/* Rust types from DWARF (libdw) for reading values out of another process's
 * memory: one session per binary, batch lookup of structure types by
 * qualified name, members and their offsets, sizes, qualified names of any
 * type DIE, and the active variant of a Rust enum (or async state machine)
 * read through a memory-read callback. What the lookups by name find (and
 * the qualified names) are kept across runs in a per-binary memo file
 * (sym/dwarf_memo.h: read at open, written by dwarf_types__free()); no
 * other I/O beyond the ELF file; never prints; knows nothing of Tokio. */
#ifndef AS_SYM_DWARF_TYPES_H
#define AS_SYM_DWARF_TYPES_H

#include <elfutils/libdw.h>
#include <stddef.h>
#include <stdint.h>

/* Reads len bytes of the target at addr into buf. Returns 0, or -errno
 * (-EFAULT: not mapped). The walkers never read more than they were asked
 * to by DWARF sizes, bounded by the callers. */
typedef int (*mem_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

struct dwarf_types;

/* Opens path's DWARF. Returns NULL and sets errno: from open, ENODATA when
 * the file has no DWARF, ENOMEM. */
struct dwarf_types *dwarf_types__open(const char *path);
/* The same on an ELF file already open (borrowed; e.g. elf_image__fd()):
 * the session reads it through a duplicate descriptor of its own, so the
 * binary is not opened again. */
struct dwarf_types *dwarf_types__open_fd(int fd);
/* Writes the memo when the session added to it, then frees dt (NULL ok). */
void dwarf_types__free(struct dwarf_types *dt);
/* The libdw handle, borrowed until dwarf_types__free(). */
Dwarf *dwarf_types__dwarf(const struct dwarf_types *dt);
/* The open file dt reads (a binary, or a stripped one's debug file; owned
 * by dt), for other readers of the same DWARF; -1 for NULL. */
int dwarf_types__fd(const struct dwarf_types *dt);

/* One pass over every compilation unit: for each qualified name names[i]
 * ("tokio::runtime::task::core::Cell<a::f::{async_fn_env#0}, S>"), the
 * first defining structure, union or enumeration DIE. Only namespaces and
 * types on the path of a wanted name are entered, so the pass costs little
 * memory and time. found[i] = 1 and dies[i] set when found. Returns the
 * number found, or -errno. */
int dwarf_types__find(struct dwarf_types *dt, const char *const *names, size_t n,
		      Dwarf_Die *dies, int *found);

/* The same, with names[i] written and compared without generic arguments
 * ("tokio::runtime::task::list::OwnedTasks" finds the first instantiation
 * "OwnedTasks<alloc::sync::Arc<...>>"; a name starting with '<', as in
 * "<impl X>", is kept whole). */
int dwarf_types__find_norm(struct dwarf_types *dt, const char *const *names, size_t n,
			   Dwarf_Die *dies, int *found);

/* A DIE the caller remembered in an earlier run under its own key (in the
 * memo, apart from the session's own keys): 1 with *out, 0 when remembered
 * as absent, -ENOENT when not remembered (look it up, then remember it). */
int dwarf_types__recall(struct dwarf_types *dt, const char *key, Dwarf_Die *out);
/* Remembers die (NULL: absent) under key for later runs. */
void dwarf_types__remember(struct dwarf_types *dt, const char *key, Dwarf_Die *die);

/* A string the caller keeps under its own key in the memo (apart from the
 * session's own keys and recall()'s): 1 with *val (borrowed until
 * dwarf_types__free), 0 not kept. */
int dwarf_types__memo_get(struct dwarf_types *dt, const char *key, const char **val);
/* Keeps val under key for later runs (a cache: failures are ignored). */
void dwarf_types__memo_put(struct dwarf_types *dt, const char *key, const char *val);

/* The qualified name of a type DIE ("a::f::{async_fn_env#0}"; base types
 * and pointers keep their DW_AT_name, e.g. "u8", "&mut a::B"), cached per
 * DIE. Borrowed until dwarf_types__free(); NULL when unnamed or on ENOMEM. */
const char *dwarf_types__name(struct dwarf_types *dt, Dwarf_Die *type);

/* The directory the DIE's compilation unit was compiled in, or NULL. */
const char *dwarf_types__comp_dir(Dwarf_Die *die);

/* The concrete type behind a trait object whose vtable is at vaddr (a
 * virtual address of the binary): rustc describes each vtable as a variable
 * "<T as Trait>::{vtable}" whose type's DW_AT_containing_type is T. The
 * index is built on the first call. Returns 0 with *out, -ENOENT. */
int dwarf_types__vtable_type(struct dwarf_types *dt, uint64_t vaddr, Dwarf_Die *out);

/* The subprogram that is the body of the async fn or block whose state
 * machine is sm ("a::f::{async_fn_env#0}" -> the subprogram "a::f::
 * {async_fn#0}", often in another unit), found by the same pass as the
 * vtables (and remembered for later runs). Returns 0 with *out, -ENOENT,
 * -ENOMEM. */
int dwarf_types__async_body(struct dwarf_types *dt, Dwarf_Die *sm, Dwarf_Die *out);

/* The smallest line L, lo < L < hi, that the line tables of the binary
 * give to code of file (a path as DW_AT_decl_file names it), 0 when none
 * (results cached). For where in a function a macro was invoked: its
 * expansion's own spans point into the macro's crate. */
unsigned dwarf_types__first_line(struct dwarf_types *dt, const char *file, unsigned lo,
				 unsigned hi);

/* DW_AT_byte_size of a type (typedefs and qualifiers peeled), or -1. */
int64_t dwt_byte_size(Dwarf_Die *type);

/* Finds the data member `name` of a structure: *member its DIE, *off its
 * byte offset, *type its type (may be NULL). Returns 0 or -ENOENT. */
int dwt_member(Dwarf_Die *st, const char *name, Dwarf_Die *member, uint64_t *off,
	       Dwarf_Die *type);

/* Finds a data member `name` anywhere below st through nested members
 * (depth <= 8), summing offsets: "prev" inside Pointers { inner: UnsafeCell {
 * value: PointersInner { prev, .. } } }. Returns 0 or -ENOENT. */
int dwt_member_deep(Dwarf_Die *st, const char *name, uint64_t *off, Dwarf_Die *type);

/* The structure's only data member (a wrapper such as UnsafeCell<T>):
 * *off its offset, *type its type. Returns 0, or -ENOENT when it has none
 * or several. */
int dwt_only_member(Dwarf_Die *st, uint64_t *off, Dwarf_Die *type);

/* True when the structure has a DW_TAG_variant_part (a Rust enum with
 * data, or a generator / async state machine). */
int dwt_has_variants(Dwarf_Die *st);

/* The active variant of a Rust enum or state machine at addr.
 * rustc encodes the discriminant as a member of the variant_part (tag or
 * niche); each variant has DW_AT_discr_value, and the dataful variant of a
 * niche layout has none (it is the default). */
struct dwt_variant {
	Dwarf_Die member;       /* the variant's member: DW_AT_name "Running", "3", ... */
	Dwarf_Die type;         /* its type: "Running<T>", "Suspend0", ... */
	uint64_t offset;        /* of the member within the enum */
	uint64_t discr;         /* the discriminant value read */
	uint64_t discr_addr;    /* where it was read (0: no discriminant) */
	unsigned discr_size;    /* bytes (1, 2, 4, 8) */
};

/* Reads the discriminant and picks the variant. Returns 0, -ENOENT when the
 * type has no variant_part or no variant matches, -EPROTO on an unsupported
 * encoding, or the read callback's error. */
int dwt_read_variant(Dwarf_Die *st, uint64_t addr, mem_read_fn read, void *ctx,
		     struct dwt_variant *v);

#endif
