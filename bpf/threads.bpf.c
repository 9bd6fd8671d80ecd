/* Thread iterator (SEC("iter/task")): for each thread of one process, its
 * thread pointer (task->thread.fsbase, where its thread-local variables are)
 * and its saved user registers (all of them: unwinding a parked thread's
 * stack needs its callee-saved ones), written to the iterator's seq_file. Loaded
 * alone by src/probe/threads.c, as its own skeleton (threads.skel.h): it
 * attaches no probe and reads nothing the thread does not already hold. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "thread_rec.h"

char LICENSE[] SEC("license") = "GPL";

/* The process whose threads are written (the link's pid option already
 * limits the walk to it; this guards a kernel that ignores the option). */
const volatile __u32 targ_tgid = 0;

SEC("iter/task")
int thread_regs(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *task = ctx->task;
	struct as_thread_rec r = {};
	struct pt_regs *regs;

	if (!task || task->tgid != targ_tgid)
		return 0;
	r.tid = task->pid;
	r.fsbase = BPF_CORE_READ(task, thread.fsbase);
	/* on a CPU now: its saved user registers are those of its last entry
	 * into the kernel, not where it is (the reader tries again) */
	if (BPF_CORE_READ(task, on_cpu))
		r.flags |= AS_THREAD_F_ONCPU;
	r.switches = BPF_CORE_READ(task, nvcsw) + BPF_CORE_READ(task, nivcsw);
	__builtin_memcpy(r.comm, task->comm, sizeof(r.comm));
	/* kernel threads have no user registers */
	if (!(task->flags & 0x00200000 /* PF_KTHREAD */)) {
		regs = (struct pt_regs *)bpf_task_pt_regs(task);
		if (regs) {
			r.ip = BPF_CORE_READ(regs, ip);
			r.sp = BPF_CORE_READ(regs, sp);
			r.bp = BPF_CORE_READ(regs, bp);
			/* DWARF x86-64 register order (thread_rec.h) */
			r.gpr[0] = BPF_CORE_READ(regs, ax);
			r.gpr[1] = BPF_CORE_READ(regs, dx);
			r.gpr[2] = BPF_CORE_READ(regs, cx);
			r.gpr[3] = BPF_CORE_READ(regs, bx);
			r.gpr[4] = BPF_CORE_READ(regs, si);
			r.gpr[5] = BPF_CORE_READ(regs, di);
			r.gpr[6] = r.bp;
			r.gpr[7] = r.sp;
			r.gpr[8] = BPF_CORE_READ(regs, r8);
			r.gpr[9] = BPF_CORE_READ(regs, r9);
			r.gpr[10] = BPF_CORE_READ(regs, r10);
			r.gpr[11] = BPF_CORE_READ(regs, r11);
			r.gpr[12] = BPF_CORE_READ(regs, r12);
			r.gpr[13] = BPF_CORE_READ(regs, r13);
			r.gpr[14] = BPF_CORE_READ(regs, r14);
			r.gpr[15] = BPF_CORE_READ(regs, r15);
			r.gpr[16] = r.ip;
			r.flags |= AS_THREAD_F_REGS;
		}
	}
	bpf_seq_write(seq, &r, sizeof(r));
	return 0;
}
