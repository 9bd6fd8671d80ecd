/* A per-binary memo of DWARF lookups kept across runs: what a lookup found
 * (a DIE offset, a name) under the lookup's own key, for one ELF file. A
 * one-shot `dump` otherwise walks the same compilation units again on every
 * run (a type's qualified name costs a walk from its unit's root).
 *
 * The file is <dir>/<build id>.<kind>, dir the first of $ASYNCSCOPE_CACHE_DIR
 * (empty: no file), $XDG_CACHE_HOME/asyncscope, /var/cache/asyncscope for
 * root, $HOME/.cache/asyncscope. It is trusted only when it names the same
 * build id, file size and modification time as the binary, and is owned by
 * the user running and writable by no one else; anything else (no build id,
 * no usable directory, a stale or foreign file) leaves a memo that lasts
 * for this process only, so lookups are computed as without one. Written
 * whole (a temporary file renamed over it) by dwarf_memo__save() when
 * something was added. libelf only; never prints. */
#ifndef AS_SYM_DWARF_MEMO_H
#define AS_SYM_DWARF_MEMO_H

#include <stdbool.h>
#include <stddef.h>

struct Elf;
struct dwarf_memo;

/* The memo of the ELF file elf, open at fd (both borrowed for the call),
 * for lookups of one kind ("types", "subprograms": a part of the file's
 * name, letters only). Returns NULL and sets errno only on ENOMEM. */
struct dwarf_memo *dwarf_memo__open(struct Elf *elf, int fd, const char *kind);
/* The value remembered under key: true and *val (borrowed until
 * dwarf_memo__free()), or false. NULL m: false. */
bool dwarf_memo__get(const struct dwarf_memo *m, const char *key, const char **val);
/* Remembers val under key (both copied; neither may hold a tab or a
 * newline: -EINVAL). Returns 0 or -errno; NULL m: 0. */
int dwarf_memo__put(struct dwarf_memo *m, const char *key, const char *val);
/* Writes the file when something was put since it was read. Returns 0
 * (also when there is no file to write) or -errno. */
int dwarf_memo__save(struct dwarf_memo *m);
/* The file's path, or NULL when the memo lasts for this process only. */
const char *dwarf_memo__path(const struct dwarf_memo *m);
/* Frees m (NULL ok) without saving. */
void dwarf_memo__free(struct dwarf_memo *m);

#endif
