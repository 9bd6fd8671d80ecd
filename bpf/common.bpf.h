/* State shared by the task and worker BPF programs: the settings user space
 * fills in before load, the ring buffer, per-thread poll stacks, counters.
 * Declared __weak so that every .bpf.c including it links into one object
 * (bpftool gen object) with a single copy of each map and variable. */
#ifndef AS_COMMON_BPF_H
#define AS_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "events.h"

/* Settings, filled in between open and load. */
const volatile __u32 targ_tgid __weak = 0;
/* Tokio header layout (from the runtime profile that has task ids): where
 * the vtable pointer sits in the header, and where the vtable keeps the
 * task id offset. Read only by poll probes whose cookie has AS_CF_TASK_ID:
 * other runtimes' tasks (async-task) have no id and another header. */
const volatile __u32 hdr_vtable_off __weak = 0;
const volatile __u32 vtable_id_off_slot __weak = 0;
/* Where a spawn's metadata keeps the task's name (&str: pointer, then
 * length; pointer 0: none), from the runtime profile (Tokio's SpawnMeta). */
const volatile __u32 spawn_meta_name_off __weak = 0;
/* Benchmarks only: every program returns at once, to measure the bare cost
 * of the probe points themselves. */
const volatile __u32 bare_probes __weak = 0;
/* The task ids read at a task's first poll are kept (task_ids) until its
 * free probe: set only when the plan has that runtime's free probe. */
const volatile __u32 cache_task_ids __weak = 0;
/* Wake the consumer once this many bytes wait in the ring buffer. */
const volatile __u64 wakeup_bytes __weak = 2 << 20;

struct raw_counters counters __weak = {};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps") __weak;

struct poll_stack {
	__u32 depth;
	__u16 named;       /* RAW_THREAD already sent for this thread */
	__u8 in_io;        /* nesting of I/O driver calls */
	__u8 in_timer;     /* nesting of timer processing calls */
	__u64 task[AS_MAX_DEPTH];
	__u8 ready[AS_MAX_DEPTH];
};

/* Per thread, in the kernel's task local storage: found from the task
 * itself (no hash lookup), freed with the thread. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct poll_stack);
} threads SEC(".maps") __weak;

/* Task header -> its Tokio id, from its first poll to its free. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __u64);
} task_ids SEC(".maps") __weak;

/* Future frames open per thread (bpf/futures.bpf.c, record --futures);
 * here so that the thread-exit program can drop a thread's entry. */
struct fut_stack {
	__u32 depth;
	__u32 pad;
	__u64 self[AS_FUT_MAX_DEPTH];   /* the state machine polled at each depth */
	__u64 sp[AS_FUT_MAX_DEPTH];     /* the stack pointer at its entry (its return
	                                   address slot): exits are matched by it */
	__u64 rdi[AS_FUT_MAX_DEPTH];    /* rdi at entry: where a Poll returned in
	                                   memory is written */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct fut_stack);
} fut_threads SEC(".maps") __weak;


/* The task being polled by the thread whose poll stack is st (NULL: none
 * known), or 0 outside any poll. */
static __always_inline __u64 polled_task(const struct poll_stack *st)
{
	__u32 d = st ? st->depth : 0;

	if (d == 0 || d > AS_MAX_DEPTH)
		return 0;
	return st->task[(d - 1) & (AS_MAX_DEPTH - 1)];
}

static __always_inline bool is_target(__u32 *tid)
{
	__u64 id = bpf_get_current_pid_tgid();

	if (bare_probes || (__u32)(id >> 32) != targ_tgid)
		return false;
	*tid = (__u32)id;
	return true;
}

static __always_inline __u64 arg_reg(struct pt_regs *ctx, __u32 reg)
{
	/* Load all four first: selecting the context field by a computed
	 * offset is rejected by the verifier ("dereference of modified ctx"). */
	__u64 r0 = PT_REGS_PARM1(ctx), r1 = PT_REGS_PARM2(ctx);
	__u64 r2 = PT_REGS_PARM3(ctx), r3 = PT_REGS_PARM4(ctx);

	asm volatile("" : "+r"(r0), "+r"(r1), "+r"(r2), "+r"(r3));
	switch (reg) {
	case 0: return r0;
	case 1: return r1;
	case 2: return r2;
	default: return r3;
	}
}

/* Wake the consumer only when a quarter of the buffer is used: it polls
 * every few ms anyway, and a wakeup per event costs more than the event. */
static __always_inline __u64 submit_flags(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > wakeup_bytes ?
	       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline void fill_hdr(struct raw_hdr *h, __u8 type, __u16 probe, __u32 tid)
{
	h->type = type;
	h->flags = 0;
	h->probe = probe;
	h->tid = tid;
	h->ts = bpf_ktime_get_ns();
}

/* A runtime driver's call entered (delta 1) or left (-1) on this thread:
 * the nesting of I/O-driver (kind AS_CTX_IO) or timer (AS_CTX_TIMER) calls
 * it is in, never below 0 (a return whose entry was before the attach). */
static __always_inline void driver_nest(__u32 kind, int delta, __u8 *in_io, __u8 *in_timer)
{
	__u8 *n = kind == AS_CTX_IO ? in_io : kind == AS_CTX_TIMER ? in_timer : NULL;

	if (n && (delta > 0 || *n))
		*n += delta;
}

/* The poll stack of thread t, NULL when it has none yet. */
static __always_inline struct poll_stack *thread_of(struct task_struct *t)
{
	return bpf_task_storage_get(&threads, t, 0, 0);
}

/* The current thread's poll stack, NULL when it has none yet. */
static __always_inline struct poll_stack *current_state(void)
{
	return thread_of(bpf_get_current_task_btf());
}

/* The current thread's (tid) poll stack, created on first use (zeroed);
 * the first time a thread is seen its name goes out as a RAW_THREAD
 * record. */
static __always_inline struct poll_stack *thread_state(__u32 tid)
{
	struct poll_stack *st = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), 0,
						     BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!st) {
		__sync_fetch_and_add(&counters.no_thread_slot, 1);
		return NULL;
	}
	if (st->named)
		return st;
	st->named = 1;
	struct raw_thread *t = bpf_ringbuf_reserve(&events, sizeof(*t), 0);
	if (t) {
		fill_hdr(&t->h, RAW_THREAD, 0, tid);
		bpf_get_current_comm(t->comm, sizeof(t->comm));
		bpf_ringbuf_submit(t, submit_flags());
	} else {
		__sync_fetch_and_add(&counters.lost, 1);
	}
	return st;
}

static __always_inline void emit(__u8 type, __u8 flags, __u16 probe, __u32 tid,
				 __u64 task, __u64 arg)
{
	struct raw_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		__sync_fetch_and_add(&counters.lost, 1);
		return;
	}
	fill_hdr(&e->h, type, probe, tid);
	e->h.flags = flags;
	e->task = task;
	e->arg = arg;
	bpf_ringbuf_submit(e, submit_flags());
}

#endif
