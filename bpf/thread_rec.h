/* The record the thread iterator (threads.bpf.c) writes for each thread of
 * the target, read by src/probe/threads.c. Shared by BPF and user space,
 * apart from events.h: this program is a skeleton of its own (dump loads it
 * alone, never the probes), and its records are never stored in a trace. */
#ifndef AS_BPF_THREAD_REC_H
#define AS_BPF_THREAD_REC_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define AS_THREAD_COMM 16
#define AS_THREAD_NGPR 17

struct as_thread_rec {
	__u32 tid;
	__u32 flags;           /* AS_THREAD_F_* */
	__u64 fsbase;          /* the thread pointer (x86-64 FS base): its TLS */
	__u64 ip, sp, bp;      /* user registers as last saved (the thread is off CPU
	                          or in the kernel), 0 when unknown */
	char comm[AS_THREAD_COMM];
	/* every general-purpose user register as last saved, in DWARF x86-64
	 * order (rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8..r15, rip: the
	 * order of sym/dwarf_unwind.h): a thread parked in a syscall keeps its
	 * callee-saved ones (rbx, rbp, r12-r15) there, which unwinding its
	 * stack with CFI needs (dump's block_on futures) */
	__u64 gpr[AS_THREAD_NGPR];
	/* its context switches so far (voluntary and not): unchanged between
	 * two reads, the thread did not run in between (the reader's stack
	 * copy is the one these registers belong to) */
	__u64 switches;
};

#define AS_THREAD_F_REGS 1     /* ip, sp, bp and gpr read */
#define AS_THREAD_F_ONCPU 2    /* on a CPU when read: the registers are stale */

#ifndef __bpf__
_Static_assert(sizeof(struct as_thread_rec) == 64 + 8 * AS_THREAD_NGPR, "as_thread_rec layout");
#endif

#endif
