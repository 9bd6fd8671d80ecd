/* Off-CPU time inside polls (record --offcpu): when a thread of the target
 * is switched out while its poll stack is not empty, remember when, the
 * task polled, and its kernel and user stacks; when it is switched back in,
 * emit one RAW_OFFCPU record if it was away at least offcpu_min_ns (in
 * profile mode, no uprobes: while its CONTEXT names a task, task_ctx.bpf.h,
 * or its id could not be read). With
 * --dwarf the thread's user registers and the top of its user stack are
 * kept too, and the record is a RAW_OFFCPU_DWARF, unwound in user space.
 * Attached only with --offcpu: it runs on every context switch of the
 * machine, and returns at once for other processes. */
#include "common.bpf.h"
#include <bpf/bpf_core_read.h>
#include "ustack.bpf.h"
#include "task_ctx.bpf.h"

/* Shortest off-CPU interval emitted (record --offcpu-min). */
const volatile __u64 offcpu_min_ns = 100000;
/* record --offcpu --dwarf: keep registers and stack (offcpu_pending_dwarf
 * instead of offcpu_pending). */
const volatile __u32 offcpu_dwarf = 0;

/* What a switched-out thread left: the record to emit, minus its length.
 * The stacks can only be taken at the switch-out (the current task is
 * then the one leaving) and whether to emit is only known at the
 * switch-in, and a ring-buffer reservation cannot span two program runs:
 * so the stacks wait here, keyed by tid, and are copied into the record. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct raw_offcpu);
} offcpu_pending SEC(".maps");

/* The same with --dwarf, and the registers and stack copy (10 KiB an
 * entry, preallocated: fewer of them). An entry stays once made (h.ts 0:
 * nothing pending) so that each switch-out writes into it in place rather
 * than copying 10 KiB into the map; threads gone age out of the LRU. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct raw_sample_dwarf);
} offcpu_pending_dwarf SEC(".maps");

/* Scratch for building a pending entry (too large for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct raw_sample_dwarf);
} offcpu_scratch SEC(".maps");

/* The thread's entry in offcpu_pending_dwarf, made on first use. */
static __always_inline struct raw_sample_dwarf *pending_dwarf(__u32 tid)
{
	struct raw_sample_dwarf *d = bpf_map_lookup_elem(&offcpu_pending_dwarf, &tid);
	__u32 zero = 0;

	if (d)
		return d;
	d = bpf_map_lookup_elem(&offcpu_scratch, &zero);
	if (!d)
		return NULL;
	d->s.h.ts = 0;
	if (bpf_map_update_elem(&offcpu_pending_dwarf, &tid, d, BPF_NOEXIST))
		return NULL;
	return bpf_map_lookup_elem(&offcpu_pending_dwarf, &tid);
}

static __always_inline void switch_out(void *ctx, struct task_struct *prev, bool preempted)
{
	__u32 tid = BPF_CORE_READ(prev, pid), zero = 0;
	__u8 flags = preempted ? RAW_F_PREEMPTED : 0;
	__u64 task;

	if (prof_mode) {
		/* profile: inside a task when the thread's CONTEXT names one */
		flags |= RAW_F_TASK_ID;
		task = ctx_task_id(prev, &flags);
		if (!task && !(flags & RAW_F_NO_ID))
			return;
	} else {
		struct poll_stack *st = thread_of(prev);
		if (!st)
			return;
		__u32 depth = st->depth;
		if (depth == 0 || depth > AS_MAX_DEPTH)
			return;
		task = st->task[(depth - 1) & (AS_MAX_DEPTH - 1)];
	}
	struct raw_sample_dwarf *d = offcpu_dwarf ? pending_dwarf(tid) :
				     bpf_map_lookup_elem(&offcpu_scratch, &zero);
	if (!d) {
		__sync_fetch_and_add(&counters.offcpu_dropped, 1);
		return;
	}
	struct raw_offcpu *p = &d->s;
	p->h.type = offcpu_dwarf ? RAW_OFFCPU_DWARF : RAW_OFFCPU;
	p->h.flags = flags;
	p->h.probe = 0;
	p->h.tid = tid;
	p->h.ts = bpf_ktime_get_ns();
	p->task = task;
	p->dur_ns = 0;
	/* prev is the current task here: its stacks are the ones at the switch;
	 * none for a worker in its own loop (profile: the runtime's, parked or
	 * between polls, counted apart, never by stack), the dearest part */
	bool loop = flags & RAW_F_RT_LOOP;
	long k = loop ? 0 : bpf_get_stack(ctx, p->kstack, sizeof(p->kstack), 0);
	long u = loop ? 0 : bpf_get_stack(ctx, p->ustack, sizeof(p->ustack), BPF_F_USER_STACK);
	p->kbytes = k > 0 ? (__u32)k : 0;
	p->ubytes = u > 0 ? (__u32)u : 0;
	if (offcpu_dwarf && loop) {
		__builtin_memset(d->regs, 0, sizeof(d->regs));   /* nothing to unwind */
		d->copy_len = 0;
		d->n_uret = 0;
		return;
	}
	if (offcpu_dwarf) {
		copy_user(d);
		return;
	}
	if (bpf_map_update_elem(&offcpu_pending, &tid, p, BPF_ANY))
		__sync_fetch_and_add(&counters.offcpu_dropped, 1);
}

/* With --dwarf: the whole entry goes out as it is (one copy), and stays. */
static __always_inline void switch_in_dwarf(__u32 tid)
{
	struct raw_sample_dwarf *d = bpf_map_lookup_elem(&offcpu_pending_dwarf, &tid);

	if (!d)
		return;
	__u64 now = bpf_ktime_get_ns(), ts = d->s.h.ts;
	if (ts && now - ts >= offcpu_min_ns) {
		d->s.dur_ns = now - ts;
		if (bpf_ringbuf_output(&events, d, sizeof(*d), submit_flags()))
			__sync_fetch_and_add(&counters.lost, 1);
	}
	d->s.h.ts = 0;
}

static __always_inline void switch_in(struct task_struct *next)
{
	__u32 tid = BPF_CORE_READ(next, pid);

	if (offcpu_dwarf) {
		switch_in_dwarf(tid);
		return;
	}
	struct raw_offcpu *p = bpf_map_lookup_elem(&offcpu_pending, &tid);
	if (!p)
		return;
	__u64 now = bpf_ktime_get_ns();
	if (p->h.ts && now - p->h.ts >= offcpu_min_ns) {
		struct raw_offcpu *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
		if (e) {
			bpf_probe_read_kernel(e, sizeof(*e), p);
			e->dur_ns = now - p->h.ts;
			bpf_ringbuf_submit(e, submit_flags());
		} else {
			__sync_fetch_and_add(&counters.lost, 1);
		}
	}
	bpf_map_delete_elem(&offcpu_pending, &tid);
}

/* Kernels before 5.14 name the state field `state`. */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

/* Runnable when switched out: preempted, or it called schedule() while
 * runnable (e.g. on the way back to user space with a reschedule due), so
 * it waited for a CPU rather than for an event. */
static __always_inline bool still_runnable(struct task_struct *prev)
{
	if (bpf_core_field_exists(prev->__state))
		return BPF_CORE_READ(prev, __state) == 0;
	return BPF_CORE_READ((struct task_struct___pre514 *)prev, state) == 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	if (bare_probes)
		return 0;
	if (BPF_CORE_READ(prev, tgid) == targ_tgid)
		switch_out(ctx, prev, preempt || still_runnable(prev));
	if (BPF_CORE_READ(next, tgid) == targ_tgid)
		switch_in(next);
	return 0;
}
