/* Future-level probes (record --futures, --probe): entry and return of the
 * poll functions of async fn / async block state machines, of impl
 * Future::poll functions, and of any function matched by name, with the
 * nesting depth of such frames per thread. At return, a state machine's u8
 * __state (offset from DWARF, in the cookie) says Ready (1 Returned) or
 * Pending (n >= 3: suspended at await point n - 3): the frame still owns
 * its memory when the uretprobe fires, before the caller runs on, so the
 * read is not racy the way a task's state word is. */
#include "common.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fut_stack);
} fut_zero SEC(".maps");

/* Per probe index: where the returned Poll's tag is (user space sizes the
 * map to the plan and fills it before attaching). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fut_ret);
} fut_rets SEC(".maps");

/* Ready / Pending from the Poll a non-state-machine poll function returns:
 * in rax or rdx, or in memory at the address rdi held at entry (a Poll
 * returned in memory: the callee need not leave that address in rax). */
static __always_inline __u8 ret_flags(struct pt_regs *ctx, __u32 idx, __u64 mem)
{
	struct fut_ret *fr = bpf_map_lookup_elem(&fut_rets, &idx);
	/* both loaded first: a context field picked by a computed offset is
	 * rejected ("dereference of modified ctx") */
	__u64 rax = PT_REGS_RC(ctx), rdx = ctx->dx, v = 0;

	asm volatile("" : "+r"(rax), "+r"(rdx));
	if (!fr || !fr->kind || fr->off > 4096)
		return 0;
	if (fr->kind == 3) {
		/* 8 bytes then masked: the tag is at most 8 and the rest of
		 * the returned value (or the caller's frame) follows it */
		if (!mem || bpf_probe_read_user(&v, 8, (void *)(mem + fr->off)))
			return 0;
	} else {
		__u64 r = fr->kind == 1 ? rax : rdx;
		if (fr->off >= 8)
			return 0;
		v = r >> (8 * (fr->off & 7));
	}
	if (fr->size < 8)
		v &= (1ull << (8 * (fr->size & 7))) - 1;
	return v == fr->pending ? RAW_F_PENDING : RAW_F_READY;
}

static __always_inline struct fut_stack *fut_state(__u32 tid)
{
	struct fut_stack *fs = bpf_map_lookup_elem(&fut_threads, &tid);
	__u32 zero = 0;

	if (fs)
		return fs;
	fs = bpf_map_lookup_elem(&fut_zero, &zero);
	if (!fs)
		return NULL;
	fs->depth = 0;
	if (bpf_map_update_elem(&fut_threads, &tid, fs, BPF_NOEXIST)) {
		__sync_fetch_and_add(&counters.no_thread_slot, 1);
		return NULL;
	}
	return bpf_map_lookup_elem(&fut_threads, &tid);
}

SEC("uprobe")
int future_enter(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 self = arg_reg(ctx, AS_COOKIE_REG(cookie));
	__u64 sp = PT_REGS_SP(ctx), rdi = PT_REGS_PARM1(ctx);
	__u32 tid;

	if (!is_target(&tid))
		return 0;
	struct poll_stack *st = thread_state(tid);   /* names the thread once */
	if (!st)
		return 0;
	struct fut_stack *fs = fut_state(tid);
	if (!fs)
		return 0;
	__u32 d = fs->depth;
	/* frames whose exit was never seen (entered before the return probe
	 * was attached, or left by unwinding) end where a call reuses their
	 * stack: an open frame at or below this entry's stack pointer is gone */
	for (int i = 0; i < AS_FUT_MAX_DEPTH; i++) {
		if (d == 0 || d > AS_FUT_MAX_DEPTH || fs->sp[(d - 1) & (AS_FUT_MAX_DEPTH - 1)] > sp)
			break;
		d--;
	}
	if (d < AS_FUT_MAX_DEPTH) {
		fs->self[d] = self;
		fs->sp[d] = sp;
		fs->rdi[d] = rdi;
	} else {
		__sync_fetch_and_add(&counters.fut_depth_overflow, 1);
	}
	fs->depth = d + 1;
	emit(RAW_FUT_ENTER, 0, AS_COOKIE_IDX(cookie), tid, polled_task(st), d);
	return 0;
}

SEC("uretprobe")
int future_exit(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 off1 = AS_FCOOKIE_STATE1(cookie);
	/* after the return: the entry's stack pointer plus the return address */
	__u64 sp = PT_REGS_SP(ctx) - 8;
	__u32 tid;

	if (!is_target(&tid))
		return 0;
	struct fut_stack *fs = bpf_map_lookup_elem(&fut_threads, &tid);
	__u64 task = polled_task(current_state());
	__u32 d = fs ? fs->depth : 0;
	if (fs && d > AS_FUT_MAX_DEPTH) {
		/* deeper than kept: nothing to match or read */
		fs->depth = d - 1;
		emit(RAW_FUT_EXIT, 0, AS_COOKIE_IDX(cookie), tid, task, d - 1);
		return 0;
	}
	/* frames inside this one whose exits were lost are gone too */
	for (int i = 0; fs && i < AS_FUT_MAX_DEPTH; i++) {
		if (d == 0 || fs->sp[(d - 1) & (AS_FUT_MAX_DEPTH - 1)] >= sp)
			break;
		d--;
	}
	if (!fs || d == 0 || fs->sp[(d - 1) & (AS_FUT_MAX_DEPTH - 1)] != sp) {
		/* entered before the probes were attached */
		if (fs)
			fs->depth = d;
		emit(RAW_FUT_EXIT, RAW_F_UNMATCHED, AS_COOKIE_IDX(cookie), tid, task, 0);
		return 0;
	}
	d--;
	fs->depth = d;
	__u64 state1 = 0;
	__u8 flags = 0;
	if (off1) {
		__u8 b = 0;
		if (!bpf_probe_read_user(&b, 1, (void *)(fs->self[d & (AS_FUT_MAX_DEPTH - 1)] + off1 - 1))) {
			state1 = (__u64)b + 1;
			flags = b == 1 ? RAW_F_READY : b >= 3 ? RAW_F_PENDING : 0;
		}
	} else {
		flags = ret_flags(ctx, AS_COOKIE_IDX(cookie), fs->rdi[d & (AS_FUT_MAX_DEPTH - 1)]);
	}
	emit(RAW_FUT_EXIT, flags, AS_COOKIE_IDX(cookie), tid, task, d | state1 << 32);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
