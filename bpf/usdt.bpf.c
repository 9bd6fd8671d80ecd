/* USDT probe sites: one uprobe per site (the site is a nop, emulated). Each
 * hit reports the task being polled on the thread, from the poll stack the
 * task probes keep, and the raw register holding the first argument when
 * the site's argument spec names one (user space applies its size and
 * sign, or substitutes a constant). */
#include "common.bpf.h"

SEC("uprobe")
int usdt_hit(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 task = 0, arg = 0;
	__u32 tid;

	if (!is_target(&tid))
		return 0;
	task = polled_task(thread_state(tid));
	if (AS_COOKIE_FLAGS(cookie) & AS_CF_ARG_REG) {
		__u32 off = AS_COOKIE_REG(cookie);
		/* a context field at a computed offset cannot be loaded directly
		 * ("dereference of modified ctx"): copy it, as libbpf's usdt.bpf.h */
		if (off <= sizeof(struct pt_regs) - sizeof(__u64))
			bpf_probe_read_kernel(&arg, sizeof(arg), (void *)ctx + off);
	}
	emit(RAW_USDT, 0, AS_COOKIE_IDX(cookie), tid, task, arg);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
