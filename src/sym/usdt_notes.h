/* USDT probe sites (SystemTap SDT notes) of an ELF binary: each
 * `.note.stapsdt` note gives a provider, a name, the site's address, its
 * semaphore's address (0 if none) and an argument spec such as
 * "-4@%eax 8@$3 -8@-24(%rbp)". Addresses are adjusted by `.stapsdt.base`
 * (a prelinked binary moved its sections after the notes were written).
 * Also the x86-64 argument spec parser and how to turn a register's value
 * into the argument's value. libelf only; no libbpf, never prints. */
#ifndef AS_SYM_USDT_NOTES_H
#define AS_SYM_USDT_NOTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum usdt_arg_kind {
	USDT_ARG_NONE = 0,   /* the probe has no argument */
	USDT_ARG_REG,        /* a register: %rax, %eax, %al, %ah, %r8d, ... */
	USDT_ARG_CONST,      /* an immediate: $42, $-1, $0x10 */
	USDT_ARG_OTHER,      /* memory or anything else: not read (value 0) */
};

/* One argument, as its spec says. */
struct usdt_arg {
	uint8_t kind;        /* enum usdt_arg_kind */
	int8_t size;         /* bytes (1, 2, 4, 8); negative: signed; 0: not given (8) */
	uint8_t reg_off;     /* USDT_ARG_REG: byte offset of the register in the
	                        kernel's x86-64 struct pt_regs */
	uint8_t shift;       /* USDT_ARG_REG: 8 for %ah, %bh, %ch, %dh; else 0 */
	int64_t value;       /* USDT_ARG_CONST: the constant */
};

struct usdt_site {
	char *provider;      /* owned by the notes */
	char *name;
	char *args;          /* the whole argument spec, "" when none */
	uint64_t addr;       /* virtual address of the site (a nop) */
	uint64_t sema;       /* virtual address of the u16 semaphore, 0 if none */
	struct usdt_arg arg0; /* the first argument */
};

struct usdt_notes {
	struct usdt_site *sites;  /* in note order */
	size_t n;
};

/* Reads the USDT notes of path: an empty set (n 0) when it has none.
 * Returns NULL and sets errno: ENOENT/EACCES from open, ENOEXEC when it is
 * not a 64-bit ELF file, EBADMSG for a malformed note section, ENOMEM.
 * Free with usdt_notes__free(). */
struct usdt_notes *usdt_notes__read(const char *path);
/* The same from an open ELF file (borrowed: not closed, read with libelf,
 * e.g. elf_image__fd()), so the binary is not opened again. */
struct usdt_notes *usdt_notes__read_fd(int fd);

/* Parses the content of a `.note.stapsdt` section (64-bit notes, host byte
 * order) and appends its stapsdt notes to out. base_addr is the address of
 * the `.stapsdt.base` section, 0 if the binary has none (no adjustment).
 * Other notes in the buffer are skipped. Returns 0, -EBADMSG (a note runs
 * past the buffer, or its strings are not terminated) or -ENOMEM. */
int usdt_notes__parse(struct usdt_notes *out, const void *buf, size_t len, uint64_t base_addr);

/* Frees the sites and their strings (not out itself: for a struct the
 * caller owns, e.g. filled by usdt_notes__parse()). */
void usdt_notes__clear(struct usdt_notes *notes);
/* Clears and frees; accepts NULL. */
void usdt_notes__free(struct usdt_notes *notes);

/* Parses the first argument of an argument spec. Returns 0 (out->kind is
 * USDT_ARG_NONE for an empty spec, USDT_ARG_OTHER for an operand that is
 * neither a register nor a constant), or -EINVAL for a bad size or an
 * unknown register. */
int usdt_arg_parse(const char *spec, struct usdt_arg *out);

/* The argument's value from the register's raw 64-bit content (ignored for
 * a constant): shifted, cut to its size and sign-extended when signed.
 * USDT_ARG_NONE and USDT_ARG_OTHER give 0. */
uint64_t usdt_arg_value(const struct usdt_arg *a, uint64_t raw);

/* Does "provider:name" or "provider:*" select site? */
bool usdt_match(const char *pattern, const struct usdt_site *site);

#endif
