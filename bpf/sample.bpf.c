/* CPU samples of the target (record --sample HZ): a perf_event program
 * attached to a CPU-clock event on every CPU; for a thread of the target
 * it emits one RAW_SAMPLE with the task polled on the thread (0 outside
 * any poll) and the kernel and user stacks. Loaded only with --sample: it
 * runs HZ times a second on every CPU and returns at once for other
 * processes. */
#include "common.bpf.h"
#include <bpf/bpf_core_read.h>

/* record --dwarf: also copy the user registers and the top of the user
 * stack (struct raw_sample_dwarf), for unwinding in user space. */
const volatile __u32 sample_dwarf = 0;

/* The user registers and as much of the stack above rsp as is mapped, up
 * to AS_USTACK_COPY bytes (the top of the main thread's stack may be
 * closer than that: smaller copies are tried in turn). */
static __always_inline void copy_user(struct raw_sample_dwarf *d)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(task);

	d->regs[0] = BPF_CORE_READ(r, ax);
	d->regs[1] = BPF_CORE_READ(r, dx);
	d->regs[2] = BPF_CORE_READ(r, cx);
	d->regs[3] = BPF_CORE_READ(r, bx);
	d->regs[4] = BPF_CORE_READ(r, si);
	d->regs[5] = BPF_CORE_READ(r, di);
	d->regs[6] = BPF_CORE_READ(r, bp);
	d->regs[7] = BPF_CORE_READ(r, sp);
	d->regs[8] = BPF_CORE_READ(r, r8);
	d->regs[9] = BPF_CORE_READ(r, r9);
	d->regs[10] = BPF_CORE_READ(r, r10);
	d->regs[11] = BPF_CORE_READ(r, r11);
	d->regs[12] = BPF_CORE_READ(r, r12);
	d->regs[13] = BPF_CORE_READ(r, r13);
	d->regs[14] = BPF_CORE_READ(r, r14);
	d->regs[15] = BPF_CORE_READ(r, r15);
	d->regs[16] = BPF_CORE_READ(r, ip);
	/* the real return addresses behind the uretprobe trampolines */
	struct return_instance *ri = BPF_CORE_READ(task, utask, return_instances);
	__u32 n = 0;
	for (int i = 0; i < AS_URET_MAX && ri; i++) {
		d->uret_slot[i] = BPF_CORE_READ(ri, stack);
		d->uret_orig[i] = BPF_CORE_READ(ri, orig_ret_vaddr);
		ri = BPF_CORE_READ(ri, next);
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

SEC("perf_event")
int cpu_sample(struct bpf_perf_event_data *ctx)
{
	struct raw_sample_dwarf *d = NULL;
	struct raw_offcpu *e;
	__u32 tid;

	if (!is_target(&tid))
		return 0;
	if (sample_dwarf) {
		d = bpf_ringbuf_reserve(&events, sizeof(*d), 0);
		e = d ? &d->s : NULL;
	} else {
		e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	}
	if (!e) {
		__sync_fetch_and_add(&counters.lost, 1);
		return 0;
	}
	fill_hdr(&e->h, d ? RAW_SAMPLE_DWARF : RAW_SAMPLE, 0, tid);
	e->task = 0;
	struct poll_stack *st = bpf_map_lookup_elem(&threads, &tid);
	if (st) {
		__u32 depth = st->depth;
		if (depth > 0 && depth <= AS_MAX_DEPTH)
			e->task = st->task[(depth - 1) & (AS_MAX_DEPTH - 1)];
	}
	e->dur_ns = 0;
	long k = bpf_get_stack(ctx, e->kstack, sizeof(e->kstack), 0);
	long u = bpf_get_stack(ctx, e->ustack, sizeof(e->ustack), BPF_F_USER_STACK);
	e->kbytes = k > 0 ? (__u32)k : 0;
	e->ubytes = u > 0 ? (__u32)u : 0;
	if (d)
		copy_user(d);
	bpf_ringbuf_submit(e, submit_flags());
	return 0;
}
