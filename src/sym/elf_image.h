/* An ELF executable as asyncscope needs it: its function symbols
 * (demangled), build id, loadable segments (for virtual address to file
 * offset translation) and the first bytes of a function. libelf only. */
#ifndef AS_SYM_ELF_IMAGE_H
#define AS_SYM_ELF_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_sym {
	uint64_t addr;
	uint64_t size;
	char *name;   /* demangled, hash removed (owned by the image) */
	char *norm;   /* name without generic arguments (owned by the image) */
};

struct elf_load {
	uint64_t vaddr, memsz, offset, filesz;
	bool exec;
};

struct elf_image {
	char *path;
	char build_id[41];     /* hex, "" if none */
	bool has_symtab;       /* a .symtab section (not stripped) */
	bool has_debug_info;   /* a .debug_info section */
	struct elf_sym *syms;  /* function symbols, sorted by address */
	size_t n_syms;
	struct elf_load loads[16];
	size_t n_loads;
	int read_fd1;          /* private: the file, kept open from elf_image__open()
	                          for elf_image__read() and elf_image__fd() (fd + 1) */
	/* A stripped binary's separate debug file (sym/debuginfo.h), when its
	 * symbols or DWARF came from there: its path (NULL none), how it was
	 * found (enum debuginfo_how), whether the DWARF is there, and the
	 * file kept open (fd + 1); or why a named one was refused. */
	char *debug_path;
	int debug_how;
	bool debug_syms, debug_dwarf;
	int debug_fd1;
	char debug_refused[512];
	/* The file as the user knows it: a /proc/PID/exe path's link target
	 * (" (deleted)" kept), else path. */
	char *name;
	/* The DWARF was split (split-debuginfo = "packed" / "unpacked") and
	 * libdw cannot reach its split units (has_debug_info is then false):
	 * the first .dwo it names, and the .dwp package beside the binary
	 * ("" none found). */
	bool dwarf_split;
	char split_dwo[256], split_dwp[512];
};

/* Opens path as a 64-bit ELF file for reading: *fd and *elf (close with
 * elf_end() and close()) and the section-name string table index. Returns 0,
 * or -errno (open's, or -ENOEXEC when it is not a 64-bit ELF file); on
 * failure *fd is -1 and *elf NULL. */
struct Elf;
int elf_open64(const char *path, int *fd, struct Elf **elf, size_t *shstrndx);

/* One symbol of a .symtab, as elf_symbols_each() gives it: its raw
 * (mangled) name, value, size and type (STT_*). */
struct elf_symbol {
	const char *name;
	uint64_t value, size;
	unsigned type;
};

/* Calls fn(sym, arg) for every symbol of path's .symtab until fn returns
 * non-zero, and returns that; 0 when every symbol was seen, -ENOENT when
 * path cannot be read as ELF. With tls_off, *tls_off is where the
 * thread-local block starts below the thread pointer (x86-64 variant II:
 * PT_TLS's size rounded up to its alignment, as the loader lays it out),
 * UINT64_MAX when the file has no PT_TLS. */
int elf_symbols_each(const char *path, int (*fn)(const struct elf_symbol *sym, void *arg),
		     void *arg, uint64_t *tls_off);

/* Opens and indexes path. Returns NULL and sets errno: ENOENT/EACCES from
 * open, ENOEXEC when it is not a 64-bit ELF file, ENOMEM. */
struct elf_image *elf_image__open(const char *path);
/* The same with own_only: a shared library a stack passes through: its
 * own DWARF only, no debug file looked for by libdwfl or debuginfod (a
 * distribution's debug files are large, and the target's are what
 * count); but when it has no .symtab, the full symbol table of its debug
 * file installed by build id under /usr/lib/debug/.build-id/ (symbols
 * only, its build id checked), so that internal functions are named. */
struct elf_image *elf_image__open_own(const char *path, bool own_only);
/* File offset of a virtual address (what uprobes attach to): 0 or -ENOENT
 * when no executable segment maps it. */
int elf_image__file_offset(const struct elf_image *img, uint64_t vaddr, uint64_t *off);
/* File offset of a virtual address in any loadable segment, executable or
 * not (a USDT semaphore lives in .data / .probes): 0 or -ENOENT. */
int elf_image__any_file_offset(const struct elf_image *img, uint64_t vaddr, uint64_t *off);
/* Copies up to len bytes of file content at vaddr; returns bytes read or
 * -errno. The file is opened on the first call and kept open until
 * elf_image__free(). */
int elf_image__read(const struct elf_image *img, uint64_t vaddr, void *buf, size_t len);
/* The image's open file (owned by img: read it with pread(), never close
 * it), so that whoever reads more of the binary opens it no second time;
 * -1 for NULL. */
int elf_image__fd(const struct elf_image *img);
/* The open file that holds img's DWARF: its debug file's when the DWARF is
 * there, else the binary's (owned by img); -1 for NULL. */
int elf_image__dwarf_fd(const struct elf_image *img);
/* One line on where img's symbols and DWARF are from, when not from the
 * binary itself ("symbols and DWARF from F (.gnu_debuglink)"), or why a
 * named debug file was refused; NULL when there is nothing to say. */
const char *elf_image__debug_note(const struct elf_image *img, char *buf, size_t len);
/* Why img has no DWARF to read, and the fix, in one phrase for a message
 * ("X has no DWARF and no debug file was found (...): build with ..."),
 * into buf; NULL when it has DWARF. */
const char *elf_image__no_dwarf_why(const struct elf_image *img, char *buf, size_t len);
void elf_image__free(struct elf_image *img);

/* 1 when the x86-64 instruction at code is one uprobes emulate (push reg,
 * jmp, call rel32, nop), 0 when it is single-stepped (about 15x dearer). */
int insn_emulated(const uint8_t *code, size_t len);
/* 0 when the kernel refuses a uprobe on the x86-64 instruction at code
 * (ENOTSUPP when the probe is installed): a lock prefix or a segment
 * override prefix before the opcode, or int3 / int n / syscall-like
 * instructions uprobes cannot single-step; 1 otherwise. */
int insn_probeable(const uint8_t *code, size_t len);

/* A short description of the x86-64 instruction at code for listings:
 * "push %rbx", "jmp rel32", "call rel32", "nop", "endbr64", "sub $imm,%rsp",
 * else its first bytes in hex ("48 89 f8"). Writes into buf, returns it. */
const char *insn_describe(const uint8_t *code, size_t len, char *buf, size_t n);

#endif
