/* Worker thread probes: entering and leaving the runtime's park function. */
#include "common.bpf.h"

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

char LICENSE[] SEC("license") = "Dual BSD/GPL";
