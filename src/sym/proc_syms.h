/* Names of user-space code addresses of a live process: /proc/PID/maps
 * gives the mapped file and its offset, the file's ELF symbols (demangled,
 * src/sym/elf_image) the function. Files are opened on first use. No libbpf. */
#ifndef AS_SYM_PROC_SYMS_H
#define AS_SYM_PROC_SYMS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_syms;

/* For pid; maps_path NULL reads /proc/PID/maps (another path: a saved copy,
 * for tests). Returns NULL and sets errno (ENOMEM). The maps are read on
 * the first lookup, and again when an address is in none of them. */
struct proc_syms *proc_syms__new(pid_t pid, const char *maps_path);
/* Writes the name of the function containing addr into buf: its demangled
 * symbol; else "FILE+0xOFFSET" (FILE the base name of the mapping); else
 * "" (not mapped). Returns 1 for a symbol, 0 otherwise. */
int proc_syms__name(struct proc_syms *ps, uint64_t addr, char *buf, size_t len);
/* The source file (relative to its unit's compilation directory when
 * below it; the end of the path when longer than flen - 1) and line of the
 * code at addr, from the mapped file's DWARF line table (the innermost
 * inlined location). Returns 1 when found, else 0 with file "" and line 0. */
int proc_syms__line(struct proc_syms *ps, uint64_t addr, char *file, size_t flen, uint32_t *line);
/* One function inlined at an address (DWARF DW_TAG_inlined_subroutine). */
#define PROC_SYMS_INLINE_MAX 16
struct proc_sym_inline {
	char name[256];    /* demangled, hash removed */
	char file[201];    /* where the frame is (the next one in was called), "" unknown */
	uint32_t line;
	uint32_t col;      /* column there, 0 unknown */
};
/* The functions inlined at addr, innermost first (at most max, and at most
 * PROC_SYMS_INLINE_MAX deep), each at its file:line: the innermost at the
 * line table's, each other one at the call of the next one in. The function
 * addr is in (proc_syms__name()) contains them all; *call_file:*call_line
 * (may be NULL) is its own location: where it calls the outermost of them,
 * or with none inlined the line table's at addr ("" and 0 unknown), and
 * *call_col (may be NULL) its column (0 unknown). Returns how many (0:
 * none, or no DWARF). */
size_t proc_syms__inlined(struct proc_syms *ps, uint64_t addr, struct proc_sym_inline *out,
			  size_t max, char *call_file, size_t cflen, uint32_t *call_line,
			  uint32_t *call_col);
/* Lends ps the file at path already open elsewhere: its ELF image and its
 * DWARF (dw NULL: opened here on the first line lookup), used for the
 * mappings of path instead of opening the file again (the recorder opens
 * the target's binary once). Both borrowed until proc_syms__free(); set
 * before the first lookup. Returns 0 or -ENOMEM. */
struct elf_image;
struct Dwarf;
int proc_syms__lend(struct proc_syms *ps, const char *path, const struct elf_image *img,
		    struct Dwarf *dw);
/* Accepts NULL. */
/* Reads the process's mappings now (else at the first lookup): names
 * are then found after the process exited. */
void proc_syms__prime(struct proc_syms *ps);
void proc_syms__free(struct proc_syms *ps);

#endif
