/* DWARF unwinding of user stacks copied by BPF (record --dwarf, for CPU
 * samples and for off-CPU intervals at their switch-out):
 * from a thread's registers and a copy of the top of its stack, walk the
 * frames with the call frame information (.eh_frame / .debug_frame) of the
 * process's mapped files through libdw (a Dwfl session with custom thread
 * callbacks that read memory from the copy), as `perf --call-graph dwarf`
 * does, so that release builds without frame pointers get whole stacks.
 * x86-64 only. One session per process; modules reported from
 * /proc/PID/maps on first use and again when an address is in none of
 * them. No libbpf. */
#ifndef AS_SYM_DWARF_UNWIND_H
#define AS_SYM_DWARF_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Registers in DWARF x86-64 order: rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp,
 * r8..r15, rip (the return address column). */
#define DWARF_UNWIND_NREGS 17

struct dwarf_unwind;

/* For pid. NULL and errno on failure. */
struct dwarf_unwind *dwarf_unwind__new(pid_t pid);
/* Stack words to read differently from the copy: the return addresses a
 * uretprobe replaced by its trampoline (slot: where on the stack, orig:
 * the real address). */
struct dwarf_unwind_fix {
	const uint64_t *slot, *orig;
	int n;
};

/* Walks the user stack of thread tid: regs at the sample (or where the
 * thread entered the kernel before it was switched out), stack = len
 * bytes copied from regs[7] (rsp) upwards, fix (NULL: none) applied over
 * it. Writes at most max program
 * counters, innermost first (the first is rip, later ones return
 * addresses), into pcs. Returns how many (at least 1 when rip is not 0). */
int dwarf_unwind__stack(struct dwarf_unwind *u, uint32_t tid, const uint64_t *regs,
			const uint8_t *stack, size_t len, const struct dwarf_unwind_fix *fix,
			uint64_t *pcs, int max);
/* Reports the process's modules now (else at the first walk), so that
 * stacks copied before it exited still unwind after. */
void dwarf_unwind__prime(struct dwarf_unwind *u);
/* Accepts NULL. */
void dwarf_unwind__free(struct dwarf_unwind *u);

#endif
