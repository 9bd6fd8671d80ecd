/* Probe sites (probe/site.c) on the real first bytes of the functions the
 * runtime profiles probe, copied from the test programs (tests/apps:
 * Debian's tokio 1.24.2; tests/apps-tokio153: tokio 1.53.1; rustc 1.95,
 * release), and the kernel's instruction classes on the forms measured
 * on Linux 6.18 (site.c's header). */
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "probe/site.h"

/* apps/target/release/pollbench: _ZN5tokio7runtime4task5waker11wake_by_ref17hac8befd1936ff74fE at 0x48360, 170 bytes */
static const uint8_t wake_by_ref_124[] = {
	0x48, 0x83, 0xec, 0x18, 0x48, 0x8b, 0x07, 0x48, 0x8d, 0x4c, 0x24, 0x08,
	0x48, 0x8d, 0x54, 0x24, 0x10, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x2e,
	0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00, 0xa8, 0x06, 0x74, 0x1c,
	0x31, 0xf6, 0x49, 0x89, 0xc9, 0x45, 0x31, 0xc0, 0x4d, 0x89, 0x01, 0x83,
	0x7c, 0x24, 0x08, 0x01, 0x74, 0x3a, 0xeb, 0x44, 0x0f, 0x1f, 0x84, 0x00,
	0x00, 0x00, 0x00, 0x00, 0xa8, 0x01, 0x40, 0x0f, 0x94, 0xc6, 0x75, 0x0b,
	0x48, 0x85, 0xc0, 0x78, 0x44, 0x4c, 0x8d, 0x40, 0x44, 0xeb, 0x07, 0x49,
	0x89, 0xc0, 0x49, 0x83, 0xc8, 0x04, 0x48, 0xc7, 0x44, 0x24, 0x08, 0x01,
	0x00, 0x00, 0x00, 0x49, 0x89, 0xd1, 0x4d, 0x89, 0x01, 0x83, 0x7c, 0x24,
	0x08, 0x01, 0x75, 0x0c, 0x4c, 0x8b, 0x44, 0x24, 0x10, 0xf0, 0x4c, 0x0f,
	0xb1, 0x07, 0x75, 0xa4, 0x40, 0x84, 0xf6, 0x74, 0x0b, 0x48, 0x8b, 0x47,
	0x10, 0x48, 0x83, 0xc4, 0x18, 0xff, 0x60, 0x08, 0x48, 0x83, 0xc4, 0x18,
	0xc3, 0x48, 0x8d, 0x3d, 0x64, 0xb7, 0xfc, 0xff, 0x48, 0x8d, 0x15, 0x39,
	0xe2, 0x04, 0x00, 0xbe, 0x2f, 0x00, 0x00, 0x00, 0xff, 0x15, 0xa6, 0x11,
	0x05, 0x00,
};
/* apps/target/release/pollbench: _ZN5tokio7runtime9scheduler12multi_thread6worker73_$LT$impl$u20$tokio..runtime..scheduler. at 0x32b50, 60 bytes */
static const uint8_t schedule_task_124[] = {
	0x48, 0x83, 0xec, 0x28, 0x48, 0x89, 0x7c, 0x24, 0x08, 0x88, 0x54, 0x24,
	0x07, 0x48, 0x8d, 0x44, 0x24, 0x08, 0x48, 0x89, 0x44, 0x24, 0x10, 0x48,
	0x89, 0x74, 0x24, 0x18, 0x48, 0x8d, 0x44, 0x24, 0x07, 0x48, 0x89, 0x44,
	0x24, 0x20, 0x48, 0x8b, 0x3d, 0xe3, 0x6b, 0x06, 0x00, 0x48, 0x8d, 0x74,
	0x24, 0x10, 0xe8, 0x19, 0x4e, 0x00, 0x00, 0x48, 0x83, 0xc4, 0x28, 0xc3,
};
/* apps-tokio153/target/release/pollbench: _ZN5tokio7runtime9scheduler12multi_thread6worker73_$LT$impl$u20$tokio..runtime..scheduler. at 0x3c3a0, 56 bytes */
static const uint8_t schedule_option_153[] = {
	0x48, 0x85, 0xf6, 0x74, 0x32, 0x48, 0x83, 0xec, 0x28, 0xc6, 0x44, 0x24,
	0x0f, 0x00, 0x48, 0x89, 0x7c, 0x24, 0x10, 0x48, 0x89, 0x74, 0x24, 0x18,
	0x48, 0x8d, 0x44, 0x24, 0x0f, 0x48, 0x89, 0x44, 0x24, 0x20, 0x48, 0x8d,
	0x35, 0xef, 0xc6, 0x05, 0x00, 0x48, 0x8d, 0x7c, 0x24, 0x10, 0xe8, 0xcd,
	0xf8, 0x00, 0x00, 0x48, 0x83, 0xc4, 0x28, 0xc3,
};
/* apps-tokio153/target/release/pollbench: _ZN5tokio7runtime9scheduler14current_thread134_$LT$impl$u20$tokio..runtime..task..Schedule at 0x346e0, 12 bytes */
static const uint8_t ct_schedule_153[] = {
	0x48, 0x8d, 0x15, 0x49, 0x3f, 0x06, 0x00, 0xe9, 0x64, 0x78, 0x01, 0x00,
};
/* apps-tokio153/target/release/local_set: _ZN5tokio4task5local6Shared8schedule17h0af589e932e82d54E at 0x54a40, 18 bytes */
static const uint8_t local_schedule_153[] = {
	0x48, 0x89, 0xf2, 0x48, 0x89, 0xfe, 0x48, 0x8d, 0x3d, 0x33, 0x94, 0x04,
	0x00, 0xe9, 0x5e, 0x38, 0xff, 0xff,
};
/* apps-tokio153/target/release/mixed: _ZN10async_task3raw24RawTask$LT$F$C$T$C$S$GT$11wake_by_ref17h9562dbf1730c94a9E at 0x35840, 100 bytes */
static const uint8_t at_wake_by_ref[] = {
	0x48, 0x8b, 0x4f, 0x08, 0xf6, 0xc1, 0x0c, 0x74, 0x01, 0xc3, 0x48, 0x89,
	0xfe, 0xeb, 0x29, 0x90, 0x48, 0x8d, 0x81, 0x01, 0x01, 0x00, 0x00, 0x48,
	0x89, 0xca, 0x48, 0x83, 0xca, 0x01, 0xf6, 0xc1, 0x02, 0x48, 0x0f, 0x44,
	0xd0, 0x48, 0x89, 0xc8, 0xf0, 0x48, 0x0f, 0xb1, 0x56, 0x08, 0x74, 0x1a,
	0x48, 0x89, 0xc1, 0xf6, 0xc1, 0x0c, 0x75, 0xd1, 0xf6, 0xc1, 0x01, 0x74,
	0xd3, 0x48, 0x89, 0xc8, 0xf0, 0x48, 0x0f, 0xb1, 0x4e, 0x08, 0x75, 0xe8,
	0xeb, 0xbf, 0xf6, 0xc1, 0x02, 0x75, 0xba, 0x48, 0x85, 0xc9, 0x78, 0x09,
	0x48, 0x8b, 0x7e, 0x20, 0xe9, 0x43, 0x09, 0x00, 0x00, 0x50, 0xff, 0x15,
	0x1c, 0x63, 0x08, 0x00,
};

static const struct site_needs rdi = { SITE_REG_BIT(SITE_RDI), false };
static const struct site_needs rsi = { SITE_REG_BIT(SITE_RSI), false };

/* The kernel's classes: emulated only for its own nops, branches without
 * a 66 prefix, push reg; refused for lock and cs/ds/es/ss prefixes. */
static void test_classes(void)
{
	static const struct { uint8_t b[12]; size_t n; enum site_class c; } t[] = {
		{ { 0x53 }, 1, SITE_EMULATED },                           /* push %rbx */
		{ { 0x41, 0x56 }, 2, SITE_EMULATED },                     /* push %r14 */
		{ { 0x48, 0x50 }, 2, SITE_SSTEP },                        /* rex.w push: not 41 */
		{ { 0xe9, 1, 2, 3, 4 }, 5, SITE_EMULATED },               /* jmp rel32 */
		{ { 0xe8, 1, 2, 3, 4 }, 5, SITE_EMULATED },               /* call rel32 */
		{ { 0x74, 0x32 }, 2, SITE_EMULATED },                     /* je rel8 */
		{ { 0x0f, 0x84, 1, 0, 0, 0 }, 6, SITE_EMULATED },         /* je rel32 */
		{ { 0x66, 0xe9, 1, 0 }, 4, SITE_SSTEP },                  /* jmpw: 66 refused for branches */
		{ { 0x90 }, 1, SITE_EMULATED },
		{ { 0x66, 0x90 }, 2, SITE_EMULATED },
		{ { 0x0f, 0x1f, 0x40, 0x00 }, 4, SITE_EMULATED },         /* x86_nops[4] */
		{ { 0x0f, 0x1f, 0x40, 0x01 }, 4, SITE_SSTEP },            /* a nop, not the kernel's */
		{ { 0x0f, 0x1f, 0x44, 0, 0 }, 5, SITE_EMULATED },
		{ { 0x66, 0x0f, 0x1f, 0x44, 0, 0 }, 6, SITE_EMULATED },
		{ { 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0 }, 8, SITE_EMULATED },
		{ { 0x66, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0 }, 9, SITE_SSTEP },  /* past ASM_NOP_MAX */
		{ { 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0 }, 10, SITE_REJECTED },  /* cs nopw */
		{ { 0xf3, 0x0f, 0x1e, 0xfa }, 4, SITE_SSTEP },            /* endbr64 */
		{ { 0x48, 0x83, 0xec, 0x18 }, 4, SITE_SSTEP },            /* sub $0x18,%rsp */
		{ { 0x48, 0x85, 0xf6 }, 3, SITE_SSTEP },                  /* test %rsi,%rsi */
		{ { 0xf0, 0x48, 0xff, 0x05, 0x10, 0, 0, 0 }, 8, SITE_REJECTED },  /* lock incq */
		{ { 0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0 }, 9, SITE_SSTEP },  /* fs: is allowed */
		{ { 0xcc }, 1, SITE_REJECTED },                           /* int3 */
		{ { 0x0f, 0x05 }, 2, SITE_REJECTED },                     /* syscall */
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		enum site_class c = site_insn_class(t[i].b, t[i].n);
		if (c != t[i].c)
			fprintf(stderr, "class of case %zu: %d, expected %d\n", i, c, t[i].c);
		CHECK(c == t[i].c);
	}
	char buf[64];
	CHECK_STR(site_insn_text(schedule_option_153, sizeof(schedule_option_153), 0x3c3a0, buf, sizeof(buf)),
		  "testq %rsi, %rsi");
	CHECK_STR(site_insn_text(schedule_option_153 + 3, 2, 0x3c3a3, buf, sizeof(buf)), "je 0x3c3d7");
	CHECK_STR(site_insn_text((const uint8_t *)"\xcc", 0, 0, buf, sizeof(buf)), "?");
}

/* 1.53's multi-thread schedule: `test %rsi,%rsi; je` -> the je, the
 * task (rsi) intact; 1.53's current-thread schedule: `lea ..,%rdx; jmp`
 * -> the jmp, but not for a probe reading rdx. */
static void test_moved_153(void)
{
	struct probe_site s;

	CHECK(site_find(schedule_option_153, sizeof(schedule_option_153), &rsi, &s) == 0);
	CHECK_EQ_U64(s.off, 3);
	CHECK(s.why == SITE_MOVED);
	CHECK_EQ_U64(s.skipped, 1);
	CHECK_STR(s.note, "testq %rsi, %rsi");

	CHECK(site_find(ct_schedule_153, sizeof(ct_schedule_153), &rsi, &s) == 0);
	CHECK_EQ_U64(s.off, 7);
	CHECK(s.why == SITE_MOVED);

	const struct site_needs rdx = { SITE_REG_BIT(SITE_RDX), false };
	CHECK(site_find(ct_schedule_153, sizeof(ct_schedule_153), &rdx, &s) == 0);
	CHECK_EQ_U64(s.off, 0);
	CHECK(s.why == SITE_ENTRY_STOPPED);
	CHECK(strstr(s.note, "at +0x0 writes %rdx") != NULL);
}

/* async-task's wake_by_ref: `mov 8(%rdi),%rcx; test $0xc,%cl; je` -> the
 * je (two passed); a probe reading rcx stays. */
static void test_moved_async_task(void)
{
	struct probe_site s;

	CHECK(site_find(at_wake_by_ref, sizeof(at_wake_by_ref), &rdi, &s) == 0);
	CHECK_EQ_U64(s.off, 7);
	CHECK_EQ_U64(s.skipped, 2);
	CHECK_STR(s.note, "movq 8(%rdi), %rcx; testb $0xc, %cl");

	const struct site_needs rcx = { SITE_REG_BIT(SITE_RCX), false };
	CHECK(site_find(at_wake_by_ref, sizeof(at_wake_by_ref), &rcx, &s) == 0);
	CHECK_EQ_U64(s.off, 0);
	CHECK(strstr(s.note, "writes %rcx") != NULL);
}

/* What stays at the entry: 1.24's wake_by_ref (its CAS loop jumps back to
 * +0x20 before any emulated instruction), 1.24's schedule_task (rsi is
 * rewritten before the call, the first emulated instruction), LocalSet's
 * schedule (moves the task out of rsi at once). */
static void test_kept(void)
{
	struct probe_site s;

	CHECK(site_find(wake_by_ref_124, sizeof(wake_by_ref_124), &rdi, &s) == 0);
	CHECK_EQ_U64(s.off, 0);
	CHECK(s.why == SITE_ENTRY_STOPPED);
	CHECK_STR(s.note, "testb $6, %al at +0x20 is a branch target");

	CHECK(site_find(schedule_task_124, sizeof(schedule_task_124), &rsi, &s) == 0);
	CHECK_EQ_U64(s.off, 0);
	CHECK_STR(s.note, "leaq 0x10(%rsp), %rsi at +0x2d writes %rsi");
	/* reading rdi instead, it stops earlier: the load of the scoped key */
	CHECK(site_find(schedule_task_124, sizeof(schedule_task_124), &rdi, &s) == 0);
	CHECK(strstr(s.note, "at +0x26 writes %rdi") != NULL);

	CHECK(site_find(local_schedule_153, sizeof(local_schedule_153), &rsi, &s) == 0);
	CHECK_EQ_U64(s.off, 0);
	CHECK_STR(s.note, "movq %rdi, %rsi at +0x3 writes %rsi");
}

/* The rules on small made-up functions: the stack, stores, loops, jump
 * tables, a cheap entry, bytes that do not decode. */
static void test_rules(void)
{
	struct probe_site s;
	/* sub $0x18,%rsp; push %rbx; ret */
	static const uint8_t sub_push[] = { 0x48, 0x83, 0xec, 0x18, 0x53, 0xc3 };
	const struct site_needs stack = { SITE_REG_BIT(SITE_RDI), true };

	CHECK(site_find(sub_push, sizeof(sub_push), &rdi, &s) == 0);
	CHECK_EQ_U64(s.off, 4);
	CHECK(site_find(sub_push, sizeof(sub_push), &stack, &s) == 0);
	CHECK_EQ_U64(s.off, 0);
	CHECK(strstr(s.note, "moves %rsp") != NULL);

	/* mov %rdi,8(%rsp) (a spill: passed); mov %rsi,(%rdi) (stops); push */
	static const uint8_t stores[] = { 0x48, 0x89, 0x7c, 0x24, 0x08, 0x53, 0xc3 };
	static const uint8_t store_heap[] = { 0x48, 0x89, 0x37, 0x53, 0xc3 };
	CHECK(site_find(stores, sizeof(stores), &rdi, &s) == 0);
	CHECK_EQ_U64(s.off, 5);
	CHECK(site_find(stores, sizeof(stores), &stack, &s) == 0);
	CHECK_EQ_U64(s.off, 0);
	CHECK(site_find(store_heap, sizeof(store_heap), &rdi, &s) == 0);
	CHECK_EQ_U64(s.off, 0);
	CHECK(strstr(s.note, "stores to memory") != NULL);

	/* test %rsi,%rsi; mov %rdi,%rax; push %rbx; jne -6 (back to +3): the
	 * push is inside a loop, probing it would fire on every round */
	static const uint8_t loop[] = { 0x48, 0x85, 0xf6, 0x48, 0x89, 0xf8, 0x53, 0x75, 0xfa, 0xc3 };
	CHECK(site_find(loop, sizeof(loop), &rsi, &s) == 0);
	CHECK_EQ_U64(s.off, 0);
	CHECK(strstr(s.note, "at +0x3 is a branch target") != NULL);

	/* mov %rdi,%rax; push %rbx; jmp *%rax: where that jumps is unknown */
	static const uint8_t table[] = { 0x48, 0x89, 0xf8, 0x53, 0xff, 0xe0 };
	CHECK(site_find(table, sizeof(table), &rsi, &s) == 0);
	CHECK_EQ_U64(s.off, 0);
	CHECK(strstr(s.note, "may jump anywhere") != NULL);
	/* a tail call through a vtable slot (jmp *8(%rax)) leaves the function */
	static const uint8_t vcall[] = { 0x48, 0x89, 0xf8, 0x53, 0xff, 0x60, 0x08 };
	CHECK(site_find(vcall, sizeof(vcall), &rsi, &s) == 0);
	CHECK_EQ_U64(s.off, 3);

	/* a call passes nothing: it is the site or it stops */
	static const uint8_t cheap[] = { 0x41, 0x57, 0xc3 };
	CHECK(site_find(cheap, sizeof(cheap), &rdi, &s) == 0);
	CHECK(s.why == SITE_ENTRY_CHEAP);
	CHECK_EQ_U64(s.off, 0);

	/* test %rsi,%rsi; then a byte that is no instruction */
	static const uint8_t bad[] = { 0x48, 0x85, 0xf6, 0x06 };
	CHECK(site_find(bad, sizeof(bad), &rsi, &s) == 0);
	CHECK_EQ_U64(s.off, 0);
	CHECK(strstr(s.note, "do not decode") != NULL);
	CHECK(site_find(bad, 0, &rsi, &s) == 0);
	CHECK(s.why == SITE_ENTRY_STOPPED);
}

int main(void)
{
	RUN(test_classes);
	RUN(test_moved_153);
	RUN(test_moved_async_task);
	RUN(test_kept);
	RUN(test_rules);
	TEST_MAIN_END();
}
