/* Copying what user space needs to unwind the current thread's user stack
 * by its call frame information (record --dwarf): shared by the CPU-sample
 * program (the sampled thread) and the sched_switch program (the thread
 * switched out, which is still current there). BPF only. */
#ifndef AS_USTACK_BPF_H
#define AS_USTACK_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "events.h"

/* The user registers and as much of the stack above rsp as is mapped, up
 * to sizeof(d->copy) bytes (the top of the main thread's stack may be
 * closer than that: smaller copies are tried in turn), of the current
 * task, into *d: a struct raw_sample_dwarf or raw_spawn_stack (the same
 * field names). The registers are those saved on entry to the kernel
 * (system call, interrupt, fault or the uprobe's trap), i.e. where user
 * code stopped. The task, its pt_regs and return instances are BTF
 * pointers, read by direct loads (faults read as 0) rather than
 * BPF_CORE_READ: a helper call per field (25 of them) cost about 2 us a
 * call (sched_switch with record --offcpu --dwarf on a switch-heavy
 * program, BPF run-time stats). */
#define COPY_USER(d) do {							\
	struct task_struct *task_ = bpf_get_current_task_btf();		\
	struct pt_regs *r_ = (struct pt_regs *)bpf_task_pt_regs(task_);	\
	(d)->regs[0] = r_->ax;							\
	(d)->regs[1] = r_->dx;							\
	(d)->regs[2] = r_->cx;							\
	(d)->regs[3] = r_->bx;							\
	(d)->regs[4] = r_->si;							\
	(d)->regs[5] = r_->di;							\
	(d)->regs[6] = r_->bp;							\
	(d)->regs[7] = r_->sp;							\
	(d)->regs[8] = r_->r8;							\
	(d)->regs[9] = r_->r9;							\
	(d)->regs[10] = r_->r10;						\
	(d)->regs[11] = r_->r11;						\
	(d)->regs[12] = r_->r12;						\
	(d)->regs[13] = r_->r13;						\
	(d)->regs[14] = r_->r14;						\
	(d)->regs[15] = r_->r15;						\
	(d)->regs[16] = r_->ip;							\
	/* the real return addresses behind the uretprobe trampolines */	\
	struct return_instance *ri_ = task_->utask ? task_->utask->return_instances : NULL; \
	__u32 nu_ = 0;								\
	for (int i_ = 0; i_ < AS_URET_MAX && ri_; i_++) {			\
		(d)->uret_slot[i_] = ri_->stack;				\
		(d)->uret_orig[i_] = ri_->orig_ret_vaddr;			\
		ri_ = ri_->next;						\
		nu_ = i_ + 1;							\
	}									\
	(d)->n_uret = nu_;							\
	const void *sp_ = (const void *)(d)->regs[7];				\
	if (!bpf_probe_read_user((d)->copy, sizeof((d)->copy), sp_))		\
		(d)->copy_len = sizeof((d)->copy);				\
	else if (!bpf_probe_read_user((d)->copy, sizeof((d)->copy) / 2, sp_))	\
		(d)->copy_len = sizeof((d)->copy) / 2;				\
	else if (!bpf_probe_read_user((d)->copy, sizeof((d)->copy) / 4, sp_))	\
		(d)->copy_len = sizeof((d)->copy) / 4;				\
	else if (!bpf_probe_read_user((d)->copy, sizeof((d)->copy) / 8, sp_))	\
		(d)->copy_len = sizeof((d)->copy) / 8;				\
	else									\
		(d)->copy_len = 0;						\
} while (0)

static __always_inline void copy_user(struct raw_sample_dwarf *d)
{
	COPY_USER(d);
}

#endif
