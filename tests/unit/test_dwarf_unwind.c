/* DWARF unwinding over a copied stack (sym/dwarf_unwind): this test
 * unwinds its own stack from registers and a copy of its top, as the
 * recorder does with what BPF copied from a sampled thread; the return
 * address behind a (pretend) uretprobe trampoline comes from the fix-ups. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "harness.h"
#include "sym/dwarf_unwind.h"

#define COPY 2048

static uint64_t regs[DWARF_UNWIND_NREGS];
static uint8_t copy[COPY];

/* Takes this function's registers and the top of the stack. */
__attribute__((noinline)) static void snapshot(void)
{
	uint64_t sp, bp, ip;

	__asm__ volatile("mov %%rsp, %0\n\tmov %%rbp, %1\n\tlea 0(%%rip), %2"
			 : "=r"(sp), "=r"(bp), "=r"(ip));
	memset(regs, 0, sizeof(regs));
	regs[6] = bp;
	regs[7] = sp;
	regs[16] = ip;
	memcpy(copy, (const void *)sp, COPY);
}

__attribute__((noinline)) static void outer(void)
{
	snapshot();
	__asm__ volatile("" ::: "memory");
}

static void test_unwind_self(void)
{
	struct dwarf_unwind *u = dwarf_unwind__new(getpid());
	uint64_t pcs[64];
	uint32_t tid = (uint32_t)syscall(SYS_gettid);

	CHECK(u != NULL);
	if (!u)
		return;
	outer();
	int n = dwarf_unwind__stack(u, tid, regs, copy, COPY, NULL, pcs, 64);
	/* snapshot, outer, test_unwind_self, then the harness and main */
	CHECK(n >= 4);
	if (n >= 1)
		CHECK_EQ_U64(pcs[0], regs[16]);
	/* the return address into outer, replaced as a uretprobe would: the
	 * fix-up gives it back */
	if (n >= 2) {
		/* built with frame pointers: the return address sits above the saved rbp */
		uint64_t real = pcs[1], fake = 0x7fffffffe000ull, slot = regs[6] + 8, v = 0;
		if (slot > regs[7] && slot - regs[7] + 8 <= COPY) {
			memcpy(&v, copy + (slot - regs[7]), 8);
			memcpy(copy + (slot - regs[7]), &fake, 8);
		}
		CHECK_EQ_U64(v, real);
		int m = dwarf_unwind__stack(u, tid, regs, copy, COPY, NULL, pcs, 64);
		/* the trampoline in place of the caller (libdw may go on past it by
		 * frame pointers, which this test binary has) */
		CHECK(m >= 2);
		if (m >= 2)
			CHECK_EQ_U64(pcs[1], fake);
		struct dwarf_unwind_fix fix = { .slot = &slot, .orig = &real, .n = 1 };
		m = dwarf_unwind__stack(u, tid, regs, copy, COPY, &fix, pcs, 64);
		CHECK_EQ_U64(m, n);
		CHECK_EQ_U64(pcs[1], real);
	}
	/* nothing to unwind */
	uint64_t zero[DWARF_UNWIND_NREGS] = { 0 };
	CHECK_EQ_U64(dwarf_unwind__stack(u, tid, zero, copy, COPY, NULL, pcs, 64), 0);
	dwarf_unwind__free(u);
	dwarf_unwind__free(NULL);
}

int main(void)
{
	RUN(test_unwind_self);
	TEST_MAIN_END();
}
