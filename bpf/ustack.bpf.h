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
 * to AS_USTACK_COPY bytes (the top of the main thread's stack may be
 * closer than that: smaller copies are tried in turn), of the current
 * task. The registers are those saved on entry to the kernel (system
 * call, interrupt or fault), i.e. where user code stopped. The task, its
 * pt_regs and return instances are BTF pointers, read by direct loads
 * (faults read as 0) rather than BPF_CORE_READ: a helper call per field
 * (25 of them) cost about 2 us a call (sched_switch with record --offcpu
 * --dwarf on a switch-heavy program, BPF run-time stats). */
static __always_inline void copy_user(struct raw_sample_dwarf *d)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(task);

	d->regs[0] = r->ax;
	d->regs[1] = r->dx;
	d->regs[2] = r->cx;
	d->regs[3] = r->bx;
	d->regs[4] = r->si;
	d->regs[5] = r->di;
	d->regs[6] = r->bp;
	d->regs[7] = r->sp;
	d->regs[8] = r->r8;
	d->regs[9] = r->r9;
	d->regs[10] = r->r10;
	d->regs[11] = r->r11;
	d->regs[12] = r->r12;
	d->regs[13] = r->r13;
	d->regs[14] = r->r14;
	d->regs[15] = r->r15;
	d->regs[16] = r->ip;
	/* the real return addresses behind the uretprobe trampolines */
	struct return_instance *ri = task->utask ? task->utask->return_instances : NULL;
	__u32 n = 0;
	for (int i = 0; i < AS_URET_MAX && ri; i++) {
		d->uret_slot[i] = ri->stack;
		d->uret_orig[i] = ri->orig_ret_vaddr;
		ri = ri->next;
		n = i + 1;
	}
	d->n_uret = n;
	const void *sp = (const void *)d->regs[7];
	if (!bpf_probe_read_user(d->copy, AS_USTACK_COPY, sp))
		d->copy_len = AS_USTACK_COPY;
	else if (!bpf_probe_read_user(d->copy, AS_USTACK_COPY / 2, sp))
		d->copy_len = AS_USTACK_COPY / 2;
	else if (!bpf_probe_read_user(d->copy, AS_USTACK_COPY / 4, sp))
		d->copy_len = AS_USTACK_COPY / 4;
	else if (!bpf_probe_read_user(d->copy, AS_USTACK_COPY / 8, sp))
		d->copy_len = AS_USTACK_COPY / 8;
	else
		d->copy_len = 0;
}

#endif
