/* Thread iterator (SEC("iter/task")): for each thread of one process, its
 * thread pointer (task->thread.fsbase, where its thread-local variables are)
 * and its saved user registers, written to the iterator's seq_file. Loaded
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
	__builtin_memcpy(r.comm, task->comm, sizeof(r.comm));
	/* kernel threads have no user registers */
	if (!(task->flags & 0x00200000 /* PF_KTHREAD */)) {
		regs = (struct pt_regs *)bpf_task_pt_regs(task);
		if (regs) {
			r.ip = BPF_CORE_READ(regs, ip);
			r.sp = BPF_CORE_READ(regs, sp);
			r.bp = BPF_CORE_READ(regs, bp);
			r.flags |= AS_THREAD_F_REGS;
		}
	}
	bpf_seq_write(seq, &r, sizeof(r));
	return 0;
}
