/* Probe sites: where in a function a uprobe is attached. A uprobe whose
 * instruction the kernel single-steps out of line costs about 5x one it
 * emulates (measured on 6.18: ~5 us against ~1 us a hit), so an entry-only
 * probe whose first instruction is single-stepped (`sub $N, %rsp`,
 * `test %rsi, %rsi`, a `lea`) is moved, within the straight-line start of
 * the function, to the first instruction the kernel emulates, as long as
 * the instructions it passes keep what the probe's BPF program reads.
 * Instructions are decoded with Capstone. No libbpf, no ELF here: the
 * caller hands in the function's bytes. */
#ifndef AS_PROBE_SITE_H
#define AS_PROBE_SITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* x86-64 general registers in encoding order, as bits of site_needs.regs. */
enum site_reg {
	SITE_RAX, SITE_RCX, SITE_RDX, SITE_RBX, SITE_RSP, SITE_RBP, SITE_RSI, SITE_RDI,
	SITE_R8, SITE_R9, SITE_R10, SITE_R11, SITE_R12, SITE_R13, SITE_R14, SITE_R15,
};
#define SITE_REG_BIT(r) (1u << (r))

/* What the kernel does with a uprobe on an instruction (Linux 6.18,
 * arch/x86/kernel/uprobes.c, each class measured: see site.c). */
enum site_class {
	SITE_SSTEP = 0,   /* copied out of line and single-stepped: ~5 us a hit */
	SITE_EMULATED,    /* emulated in the trap handler (push reg, jmp/jcc/call rel,
	                     nop): ~1 us a hit */
	SITE_REJECTED,    /* the kernel refuses the probe (lock, cs/ds/es/ss prefix, int3, ...) */
};

/* Why a probe sits where it does. */
enum site_why {
	SITE_AT_ENTRY = 0,  /* not examined (USDT sites, future probes) */
	SITE_ENTRY_CHEAP,   /* the entry instruction is already emulated */
	SITE_MOVED,         /* moved past single-stepped instructions to an emulated one */
	SITE_ENTRY_RETURN,  /* a return probe is attached too: it takes the return
	                       address at the entry, so the entry stays */
	SITE_ENTRY_STACK,   /* the program unwinds the stack from the entry */
	SITE_ENTRY_STOPPED, /* no emulated instruction before one the probe may not pass */
	SITE_ENTRY_ASKED,   /* ASYNCSCOPE_ENTRY_SITES=1 keeps every probe at its entry */
};

/* What the entry program reads at the site: these registers (SITE_REG_BIT
 * bits) must hold their entry values there, and with stack, %rsp too
 * (the program reads the return address at [%rsp]). */
struct site_needs {
	uint32_t regs;
	bool stack;
};

/* Longest straight-line start examined, in instructions. */
#define SITE_MAX_SKIP 16

/* Where a probe sits: off bytes past the function's entry, why, and a
 * note for listings (the instructions passed, or what stopped the search). */
struct probe_site {
	uint32_t off;
	uint8_t why;       /* enum site_why */
	uint8_t skipped;   /* instructions passed */
	char note[120];
};

/* The class of the instruction at code (at most len bytes). */
enum site_class site_insn_class(const uint8_t *code, size_t len);

/* The instruction at code (at virtual address addr: branch targets are
 * shown as addresses) in AT&T syntax ("subq $0x18, %rsp"), at most n bytes
 * with its NUL, into buf; "?" when it does not decode. Returns buf. */
const char *site_insn_text(const uint8_t *code, size_t len, uint64_t addr, char *buf, size_t n);

/* Finds the site of an entry-only probe on the function whose bytes are
 * code[0..len) (len: the symbol's size): the entry when its instruction is
 * emulated, else the first emulated instruction reached by passing only
 * instructions that are not branches, are not the target of any direct
 * branch in the function (the probe then fires exactly once a call), write
 * none of needs->regs, keep %rsp when needs->stack, and store to memory
 * only on the stack (none when needs->stack); else the entry. A function
 * with an indirect jump that may go through a jump table (targets unknown)
 * or bytes Capstone cannot decode keeps its entry. Fills *out; returns 0,
 * or -ENOMEM / -EINVAL (Capstone could not start). */
int site_find(const uint8_t *code, size_t len, const struct site_needs *needs,
	      struct probe_site *out);

#endif
