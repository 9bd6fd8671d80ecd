/* Run-queue delay of the target's threads (record --runq, or --offcpu):
 * from the moment a thread becomes runnable (sched_wakeup, sched_wakeup_new,
 * or switched out while still runnable, i.e. preempted) to the moment it
 * runs (sched_switch in), one RAW_RUNQ record per wait: h.ts = when it
 * became runnable, arg = the delay. Tells a worker the OS kept off a CPU
 * from a task the runtime kept waiting. Attached only on request: it runs
 * on every wakeup and context switch of the machine. */
#include "common.bpf.h"
#include <bpf/bpf_core_read.h>

/* tid -> when it became runnable */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} runq_start SEC(".maps");

static __always_inline void runnable(struct task_struct *p)
{
	if (BPF_CORE_READ(p, tgid) != targ_tgid)
		return;
	__u32 tid = BPF_CORE_READ(p, pid);
	__u64 now = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&runq_start, &tid, &now, BPF_ANY))
		__sync_fetch_and_add(&counters.runq_dropped, 1);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(runq_wakeup, struct task_struct *p)
{
	if (!bare_probes)
		runnable(p);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(runq_wakeup_new, struct task_struct *p)
{
	if (!bare_probes)
		runnable(p);
	return 0;
}

/* Kernels before 5.14 name the state field `state`. */
struct task_struct___pre514_rq {
	long state;
} __attribute__((preserve_access_index));

static __always_inline bool runnable_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state) == 0;
	return BPF_CORE_READ((struct task_struct___pre514_rq *)t, state) == 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(runq_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	if (bare_probes)
		return 0;
	/* preempted (or yielding): back in the run queue at once */
	if (runnable_state(prev))
		runnable(prev);
	if (BPF_CORE_READ(next, tgid) != targ_tgid)
		return 0;
	__u32 tid = BPF_CORE_READ(next, pid);
	__u64 *start = bpf_map_lookup_elem(&runq_start, &tid);
	if (!start)
		return 0;
	__u64 t0 = *start, now = bpf_ktime_get_ns();
	bpf_map_delete_elem(&runq_start, &tid);
	if (now < t0)
		return 0;
	struct raw_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&counters.lost, 1);
		return 0;
	}
	e->h.type = RAW_RUNQ;
	e->h.flags = 0;
	e->h.probe = 0;
	e->h.tid = tid;
	e->h.ts = t0;
	e->task = polled_task(thread_of(next));
	e->arg = now - t0;
	bpf_ringbuf_submit(e, submit_flags());
	return 0;
}
