/* Worker thread probes: entering and leaving the runtime's park function. */
#include "common.bpf.h"
#include <bpf/bpf_core_read.h>

SEC("uprobe")
int park_enter(struct pt_regs *ctx)
{
	__u32 tid;

	if (!is_target(&tid))
		return 0;
	thread_state(tid);
	emit(RAW_PARK, 0, AS_COOKIE_IDX(bpf_get_attach_cookie(ctx)), tid, 0, 0);
	return 0;
}

SEC("uretprobe")
int park_exit(struct pt_regs *ctx)
{
	__u32 tid;

	if (!is_target(&tid))
		return 0;
	emit(RAW_UNPARK, 0, AS_COOKIE_IDX(bpf_get_attach_cookie(ctx)), tid, 0, 0);
	return 0;
}

/* Runtime driver context (I/O driver turn, timer processing): wakes made
 * inside are attributed to it. Entry and return adjust a per-thread count. */
static __always_inline int driver_ctx(struct pt_regs *ctx, int delta)
{
	__u32 kind = AS_COOKIE_KIND(bpf_get_attach_cookie(ctx));
	__u32 tid;

	if (!is_target(&tid))
		return 0;
	struct poll_stack *st = delta > 0 ? thread_state(tid) : current_state();
	if (!st)
		return 0;
	driver_nest(kind, delta, &st->in_io, &st->in_timer);
	return 0;
}

SEC("uprobe")
int driver_enter(struct pt_regs *ctx)
{
	return driver_ctx(ctx, 1);
}

SEC("uretprobe")
int driver_exit(struct pt_regs *ctx)
{
	return driver_ctx(ctx, -1);
}

/* A target thread exits: forget its poll stack, so thread churn (the
 * blocking pool) cannot fill the map, and a reused tid starts afresh. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(thread_exit, struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid);

	if (BPF_CORE_READ(p, tgid) != targ_tgid)
		return 0;
	bpf_map_delete_elem(&fut_threads, &tid);   /* its poll stack goes with the thread */
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
