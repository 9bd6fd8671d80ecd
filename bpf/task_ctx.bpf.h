/* Profile mode (asyncscope profile): the task running on a thread read
 * from Tokio's thread-local CONTEXT (Context.current_task_id) instead of
 * from a poll stack kept by uprobes; no uprobe is attached then. The
 * layout is user space's (dump/rt_context.h, struct rt_task_id_loc: the
 * storage from the thread pointer, its state, the Option's tag and the
 * id), set before load; this mirrors rt_task_id_read(). Included by the
 * CPU-sample and sched_switch programs (sample.bpf.c, offcpu.bpf.c).
 * BPF only. */
#ifndef AS_TASK_CTX_BPF_H
#define AS_TASK_CTX_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include "events.h"

/* 1: profile mode (records carry runtime task ids: RAW_F_TASK_ID);
 * prof_ctx 0 there: the runtime has no such thread-local (async-std,
 * smol) and every record has task 0 (attributed to its thread). */
const volatile __u32 prof_mode __weak = 0;
const volatile __u32 prof_ctx __weak = 0;
const volatile __s64 prof_tp_off __weak = 0;
const volatile __u32 prof_state_off __weak = 0;
const volatile __u32 prof_state_size __weak = 0;   /* 0: no state to check */
const volatile __u64 prof_state_alive __weak = 0;
const volatile __u32 prof_tag_off __weak = 0;
const volatile __u32 prof_tag_size __weak = 8;
const volatile __u64 prof_tag_none __weak = 0;
const volatile __u32 prof_id_off __weak = 0;
/* The worker-loop test (rt_task_in_loop()): size 0, none. */
const volatile __u32 prof_loop_rt_off __weak = 0;
const volatile __u32 prof_loop_rt_size __weak = 0;
const volatile __u64 prof_loop_rt_outside __weak = 0;
const volatile __u32 prof_loop_budget_off __weak = 0;
const volatile __u32 prof_loop_budget_size __weak = 1;
const volatile __u64 prof_loop_budget_none __weak = 0;

static __always_inline __u64 size_mask(__u32 size)
{
	return size >= 8 ? ~0ull : (1ull << (size * 8)) - 1;
}

/* The current task id of task (the current one: its user memory is the
 * one mapped), 0 for none; *flags |= RAW_F_NO_ID when it could not be
 * read, and RAW_F_RT_LOOP when the id is a worker's own. Eight bytes are
 * read for the state, the tag and the loop test whatever their size (one
 * helper call each; masked): they lie inside the storage. */
static __always_inline __u64 ctx_task_id(struct task_struct *task, __u8 *flags)
{
	__u64 fs, base, v = 0;

	if (!prof_ctx)
		return 0;
	fs = BPF_CORE_READ(task, thread.fsbase);
	if (!fs)
		return 0;   /* no thread pointer yet (the dynamic loader at exec): no task */
	base = fs + (__u64)prof_tp_off;
	if (prof_state_size) {
		if (bpf_probe_read_user(&v, sizeof(v), (const void *)(base + prof_state_off))) {
			*flags |= RAW_F_NO_ID;
			return 0;
		}
		if ((v & size_mask(prof_state_size)) != prof_state_alive)
			return 0;   /* CONTEXT never touched on this thread, or gone: no task */
	}
	if (bpf_probe_read_user(&v, sizeof(v), (const void *)(base + prof_tag_off))) {
		*flags |= RAW_F_NO_ID;
		return 0;
	}
	if ((v & size_mask(prof_tag_size)) == prof_tag_none)
		return 0;
	if (prof_id_off != prof_tag_off &&
	    bpf_probe_read_user(&v, sizeof(v), (const void *)(base + prof_id_off))) {
		*flags |= RAW_F_NO_ID;
		return 0;
	}
	if (v && prof_loop_rt_size) {
		/* a worker between user polls holds its launch task's id: the
		 * runtime's (Entered, and no coop budget: every user poll runs
		 * inside one) */
		__u64 rt = 0, budget = 0;
		if (!bpf_probe_read_user(&rt, sizeof(rt), (const void *)(base + prof_loop_rt_off)) &&
		    !bpf_probe_read_user(&budget, sizeof(budget),
					 (const void *)(base + prof_loop_budget_off)) &&
		    (rt & size_mask(prof_loop_rt_size)) != prof_loop_rt_outside &&
		    (budget & size_mask(prof_loop_budget_size)) == prof_loop_budget_none)
			*flags |= RAW_F_RT_LOOP;
	}
	return v;
}

#endif
