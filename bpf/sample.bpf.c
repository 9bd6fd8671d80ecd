/* CPU samples of the target (record --sample HZ): a perf_event program
 * attached to a CPU-clock event on every CPU; for a thread of the target
 * it emits one RAW_SAMPLE with the task polled on the thread (0 outside
 * any poll) and the kernel and user stacks; in profile mode (no uprobes)
 * the task running there by the thread's CONTEXT (task_ctx.bpf.h). Loaded
 * only with --sample: it
 * runs HZ times a second on every CPU and returns at once for other
 * processes. */
#include "common.bpf.h"
#include <bpf/bpf_core_read.h>
#include "ustack.bpf.h"
#include "task_ctx.bpf.h"

/* record --dwarf: also copy the user registers and the top of the user
 * stack (struct raw_sample_dwarf), for unwinding in user space. */
const volatile __u32 sample_dwarf = 0;

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
	if (prof_mode) {
		/* profile: no poll stack, the task from the thread's CONTEXT */
		e->h.flags = RAW_F_TASK_ID;
		e->task = ctx_task_id(bpf_get_current_task_btf(), &e->h.flags);
	} else {
		e->task = polled_task(current_state());
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
