/* Records the BPF programs put in the ring buffer, and the knobs user space
 * sets before load. The only header shared by BPF and user space: fixed-width
 * types only; every record starts with struct raw_hdr whose type selects the
 * layout, and user space checks the size before reading further. */
#ifndef AS_BPF_EVENTS_H
#define AS_BPF_EVENTS_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define AS_RAW_ABI 1
#define AS_MAX_DEPTH 8         /* nested polls tracked per thread */
#define AS_LOC_FILE_MAX 192    /* spawn location file name bytes copied */
#define AS_COMM_LEN 16

enum raw_type {
	RAW_THREAD = 1,   /* struct raw_thread */
	RAW_POLL_BEGIN,   /* struct raw_event: task, arg = task id (0 unknown) */
	RAW_POLL_END,     /* struct raw_event: task, flags RAW_F_READY */
	RAW_WAKE,         /* struct raw_event: task, arg = waker task (0 none) */
	RAW_SPAWN,        /* struct raw_spawn */
	RAW_FREE,         /* struct raw_event: task */
	RAW_PARK,         /* struct raw_event */
	RAW_UNPARK,       /* struct raw_event */
	RAW_USDT,         /* struct raw_event: task polled on the thread (0 none),
	                     arg = raw 64-bit register of the first argument (0 unread) */
	RAW_OFFCPU,       /* struct raw_offcpu (record --offcpu) */
	RAW_SAMPLE,       /* struct raw_offcpu, dur_ns 0 (record --sample): a CPU sample */
	RAW_RUNQ,         /* struct raw_event (record --runq): h.ts = when the thread became
	                     runnable, arg = ns until it ran, task = polled then (0 none) */
	RAW_URING,        /* struct raw_event (record --uring): an io_uring request of the
	                     thread tid submitted while it polled task (0 none); without
	                     RAW_F_URING_DONE its submission, arg = opcode; with it its
	                     completion at h.ts, arg = ns since submission */
	RAW_SAMPLE_DWARF, /* struct raw_sample_dwarf (record --sample HZ --dwarf) */
	RAW_OFFCPU_DWARF, /* struct raw_sample_dwarf (record --offcpu --dwarf): an off-CPU
	                     interval, s laid out as RAW_OFFCPU, registers and stack
	                     copied at the switch-out */
	RAW_FUT_ENTER,    /* struct raw_event (record --futures / --probe): the thread entered
	                     a future's poll function (h.probe, role AS_ROLE_FUTURE); task =
	                     the task polled on the thread (0 none), arg = depth */
	RAW_FUT_EXIT,     /* struct raw_event: it returned; arg = depth | (__state + 1) << 32
	                     (0: not read); flags RAW_F_READY / RAW_F_PENDING / RAW_F_UNMATCHED */
	RAW_SPAWN_STACK,  /* struct raw_spawn_stack: a spawn seen where its &Location is
	                     not (h.probe, role AS_ROLE_SPAWN with AS_CF_STACK): user space
	                     finds the spawn's call site by unwinding the copied stack */
	RAW_TASK_NAME,    /* struct raw_spawn: a task's name given at its spawn (tokio's
	                     Builder::name, at get_span: h.probe, role AS_ROLE_SPAWN); file =
	                     the name, line | (u64)col << 32 = the task id */
};

#define RAW_F_READY 1      /* RAW_POLL_END, RAW_FUT_EXIT: Ready */
#define RAW_F_PENDING 128  /* RAW_FUT_EXIT: Pending */
#define RAW_F_UNMATCHED 2  /* poll return without a known entry (depth underflow) */
#define RAW_F_WAKE_IO 4    /* RAW_WAKE inside the I/O driver */
#define RAW_F_WAKE_TIMER 8 /* RAW_WAKE inside timer processing */
#define RAW_F_PREEMPTED 16 /* RAW_OFFCPU: switched out runnable (preempted or yielding), not blocked */
#define RAW_F_URING_DONE 32 /* RAW_URING: a completion */
#define RAW_F_URING_ERR 64  /* RAW_URING completion: the result was an error */
#define RAW_F_TASK_ID 2    /* RAW_SAMPLE*, RAW_OFFCPU* of profile mode: task is the runtime's
                              task id read from the thread's CONTEXT (0 none), not a header */
#define RAW_F_NO_ID 4      /* ... that id could not be read (task 0) */
#define RAW_F_RT_LOOP 8    /* ... that id is a worker's own (its loop, outside any user poll) */

/* Kinds of runtime context a thread can be in (cookie kind of ctx probes). */
#define AS_CTX_IO 1
#define AS_CTX_TIMER 2

/* Per-probe flags (cookie bits 48..55). */
#define AS_CF_TASK_ID 1   /* poll: read the task id through the header's vtable
                             (hdr_vtable_off, vtable_id_off_slot: Tokio only) */
#define AS_CF_INSIDE 2    /* ready: the register points inside the task, at
                             most AS_INSIDE_MAX bytes past the task pointer */
#define AS_INSIDE_MAX 0x40
#define AS_CF_ARG_REG 4   /* usdt: read the first argument's register, whose byte
                             offset in struct pt_regs is the cookie's reg field */
#define AS_CF_STACK 8     /* spawn: the register holds the new task; copy the
                             user stack (RAW_SPAWN_STACK) to find the call site */
#define AS_CF_NESTED 16   /* wake: a scheduler function a waker call reaches out
                             of line (PLAN_F_NESTED): the same wake reported again
                             (bpf/agg.bpf.c counts it once) */

/* The cookie attached to each uprobe: probe index in the plan, the
 * argument register that holds the task (0 rdi, 1 rsi, 2 rdx, 3 rcx), the
 * context kind (AS_CTX_*) and the flags (AS_CF_*). */
#define AS_COOKIE(idx, reg, kind) ((__u64)(idx) | ((__u64)(reg) << 32) | ((__u64)(kind) << 40))
#define AS_COOKIE_F(idx, reg, kind, flags) (AS_COOKIE(idx, reg, kind) | ((__u64)(flags) << 48))
#define AS_COOKIE_IDX(c) ((__u32)(c))
#define AS_COOKIE_REG(c) ((__u32)((c) >> 32) & 0xff)
#define AS_COOKIE_KIND(c) ((__u32)((c) >> 40) & 0xff)
#define AS_COOKIE_FLAGS(c) ((__u32)((c) >> 48) & 0xff)

/* Future probes' cookie: probe index, the register holding self (0 rdi,
 * 1 rsi), and the offset of the state machine's u8 __state plus one (0: not
 * a state machine; 24 bits). */
#define AS_FCOOKIE(idx, reg, state_off1) \
	((__u64)(idx) | ((__u64)(reg) << 32) | ((__u64)((state_off1) & 0xffffff) << 40))
#define AS_FCOOKIE_STATE1(c) ((__u32)((c) >> 40) & 0xffffff)
#define AS_FUT_MAX_DEPTH 64    /* nested future frames tracked per thread (a power of two) */

/* Where a future poll function that is not an async state machine leaves
 * the tag of the Poll it returns (map fut_rets, per probe index): kind 0
 * unknown, 1 in rax, 2 in rdx, 3 in memory at rax (sret), at byte off, size
 * bytes; the tag equal to pending means Pending, any other Ready. */
struct fut_ret {
	__u8 kind;
	__u8 size;
	__u16 off;
	__u32 pad;
	__u64 pending;
};

struct raw_hdr {
	__u8 type;
	__u8 flags;
	__u16 probe;
	__u32 tid;
	__u64 ts;
};

struct raw_event {
	struct raw_hdr h;
	__u64 task;
	__u64 arg;
};

struct raw_thread {
	struct raw_hdr h;
	char comm[AS_COMM_LEN];
};

struct raw_spawn {
	struct raw_hdr h;
	__u32 line;
	__u32 col;
	__u32 file_len;   /* bytes of file[] used (the name may be cut) */
	__u32 want_len;   /* the name's length in the target */
	__u64 file_ptr;   /* where the name is in the target: user space reads it
	                     when BPF could not (a page not yet faulted in) */
	__u64 ret;        /* RAW_SPAWN: the probed function's return address (who
	                     called it: a spawn, or the program itself), 0 unread */
	char file[AS_LOC_FILE_MAX];
};

#define AS_OFFCPU_FRAMES 64  /* frames kept per stack (kernel, user) */

/* A thread that went off CPU inside a poll, emitted when it runs again:
 * h.ts = when it was switched out, h.probe = 0. Stacks as bpf_get_stack
 * gives them (innermost first; user frames by frame-pointer walk). */
struct raw_offcpu {
	struct raw_hdr h;
	__u64 task;        /* task being polled on the thread */
	__u64 dur_ns;      /* off-CPU time */
	__u32 kbytes;      /* bytes of kstack[] filled */
	__u32 ubytes;      /* bytes of ustack[] filled */
	__u64 kstack[AS_OFFCPU_FRAMES];
	__u64 ustack[AS_OFFCPU_FRAMES];
};

/* RAW_SAMPLE shares struct raw_offcpu: h.ts = the sample's time, task = the
 * task polled on the thread (0 outside any poll), dur_ns = 0, stacks at
 * the sample. */

#define AS_USTACK_COPY 8192  /* bytes of user stack copied for DWARF unwinding */
#define AS_URET_MAX 8        /* pending uretprobe return addresses kept */
#define AS_UREGS 17          /* user registers, DWARF x86-64 order: rax, rdx, rcx,
                                rbx, rsi, rdi, rbp, rsp, r8..r15, rip */

/* A CPU sample (RAW_SAMPLE_DWARF) or an off-CPU interval (RAW_OFFCPU_DWARF,
 * registers and stack as they were at the switch-out) with what user space
 * needs to unwind the user stack by its call frame information: the user
 * registers and the top of the stack (s.ustack still holds the
 * frame-pointer walk). */
struct raw_sample_dwarf {
	struct raw_offcpu s;   /* s.h.type = RAW_SAMPLE_DWARF or RAW_OFFCPU_DWARF */
	__u64 regs[AS_UREGS];
	__u32 copy_len;        /* bytes of copy[] filled, from regs[7] (rsp) up */
	__u32 n_uret;          /* entries of uret_*[] filled */
	/* Pending uretprobes of the thread (asyncscope's own, on poll and park
	 * functions): each replaced the return address at stack slot
	 * uret_slot[i] by the uprobe trampoline; uret_orig[i] is the real one. */
	__u64 uret_slot[AS_URET_MAX];
	__u64 uret_orig[AS_URET_MAX];
	__u8 copy[AS_USTACK_COPY];
};

/* The user stack copied at a spawn (RAW_SPAWN_STACK): the program's call
 * of spawn is a few small frames up (512 bytes sufficed for every way to
 * spawn in tests/apps on 1.24 and 1.53), so a quarter of a sample's copy
 * keeps the record small when a server spawns in bursts. */
#define AS_SPAWN_COPY 2048

struct raw_spawn_stack {
	struct raw_hdr h;
	__u64 task;            /* the cookie's register: the new task (0 unknown) */
	__u64 regs[AS_UREGS];
	__u32 copy_len;        /* bytes of copy[] filled, from regs[7] (rsp) up */
	__u32 n_uret;
	__u64 uret_slot[AS_URET_MAX];
	__u64 uret_orig[AS_URET_MAX];
	__u8 copy[AS_SPAWN_COPY];
};

/* Counters in .bss, read by user space through the skeleton. */
struct raw_counters {
	__u64 lost;        /* ring-buffer reservations that failed */
	__u64 depth_overflow;  /* polls nested deeper than AS_MAX_DEPTH */
	__u64 no_thread_slot;  /* events dropped: the per-thread map was full */
	__u64 offcpu_dropped;  /* off-CPU intervals not kept (pending map full) */
	__u64 runq_dropped;    /* run-queue waits not followed (map full) */
	__u64 uring_dropped;   /* io_uring requests not followed (map full) */
	__u64 fut_depth_overflow; /* future frames nested deeper than AS_FUT_MAX_DEPTH */
	__u64 prog_misses;     /* user space only (no program writes it): runs of
	                          these programs the kernel skipped, their
	                          bpf_prog_info.recursion_misses summed */
};

_Static_assert(sizeof(struct raw_hdr) == 16, "raw_hdr layout");
_Static_assert(sizeof(struct raw_event) == 32, "raw_event layout");
_Static_assert(sizeof(struct raw_thread) == 32, "raw_thread layout");
_Static_assert(sizeof(struct raw_spawn) == 48 + AS_LOC_FILE_MAX, "raw_spawn layout");
_Static_assert(sizeof(struct raw_offcpu) == 40 + 16 * AS_OFFCPU_FRAMES, "raw_offcpu layout");
_Static_assert(sizeof(struct raw_sample_dwarf) == sizeof(struct raw_offcpu) + 8 * AS_UREGS + 8 +
	       16 * AS_URET_MAX + AS_USTACK_COPY,
	       "raw_sample_dwarf layout");
_Static_assert(sizeof(struct raw_spawn_stack) == 24 + 8 * AS_UREGS + 8 + 16 * AS_URET_MAX +
	       AS_SPAWN_COPY, "raw_spawn_stack layout");

/* In-kernel aggregation of task mode's poll-level figures (serve --tasks,
 * bpf/agg.bpf.c): no record per poll; per task group (the poll probe's root
 * future and the spawn call site) counters and log2 histograms in a
 * per-CPU hash map (agg_groups), per live task its state (agg_tasks), and
 * per-CPU totals (agg_totals), all read by user space at scrape time. */
#define AGG_BUCKETS 28            /* histogram buckets: see agg_bucket() */
#define AGG_BUCKET_MIN_LOG2 10    /* bucket 0: under 2^10 ns; bucket k (1..26):
                                     [2^(9+k), 2^(10+k)) ns; 27: 2^36 ns and over */
#define AGG_PROBE_NONE 0xffffffffu  /* agg_key.probe of the overflow group (map full) */

enum agg_wake_source {
	AGG_WAKE_TASK = 0,   /* from inside a poll */
	AGG_WAKE_IO,         /* the I/O driver */
	AGG_WAKE_TIMER,      /* the timer */
	AGG_WAKE_OTHER,      /* a thread outside any poll */
	AGG_WAKE__MAX,
};

/* A spawn call site: the &'static Location's fields, read at the spawn
 * (the file a &str in the target: user space reads its bytes). All 0:
 * unknown (the runtime gives none there). */
struct agg_site {
	__u64 file;          /* the file name's address in the target */
	__u32 file_len;
	__u32 line;
	__u32 col;
	__u32 pad;
};

/* A task group: the poll probe (its root future) and the spawn site. */
struct agg_key {
	struct agg_site site;
	__u32 probe;
	__u32 pad;
};

struct agg_group {
	__u64 polls;         /* polls ended (not a runtime poll: see nested) */
	__u64 poll_ns;       /* their durations, summed */
	__u64 ready;         /* of which returned Ready (the task completed) */
	__u64 long_polls;    /* of which lasted agg_long_poll_ns or more */
	__u64 nested;        /* polls that polled other tasks inside (a worker's own
	                        loop: the runtime's, not counted above) */
	__u64 spawned;       /* tasks spawned (counted at their first poll) */
	__u64 stalls;        /* idle intervals (Pending, no wake) of agg_stall_ns or
	                        more, counted when a wake ends them */
	__u64 sched_count;   /* runnable -> poll start delays measured */
	__u64 sched_ns;      /* their sum */
	__u64 wakes[AGG_WAKE__MAX];   /* wakes by source, not the spawn's schedule */
	__u64 poll_hist[AGG_BUCKETS];
	__u64 sched_hist[AGG_BUCKETS];
};

/* One live task, by header: from its spawn (or first sight) to its free. */
struct agg_task {
	struct agg_site site;   /* spawn site, zero unknown */
	__u64 woken_at;      /* runnable since (wake or spawn), 0 not runnable */
	__u64 idle_since;    /* its last poll returned Pending at, 0: not idle */
	__u32 probe;         /* the poll probe of its polls, AGG_PROBE_NONE before one */
	__u8 running;        /* a poll of it in progress */
	__u8 woken_in_poll;  /* woken while running: runnable from the poll's end */
	__u8 spawned;        /* its spawn was seen (not counted yet) */
	__u8 pad;
};

/* Totals (a per-CPU array of one). */
struct agg_totals {
	__u64 busy_ns;       /* time in polls that polled no other task (user polls) */
	__u64 leaf_polls;
	__u64 parked_ns;     /* workers' park -> unpark */
	__u64 parks;
	__u64 unmatched;     /* poll returns without a seen entry (begun before attaching) */
	__u64 tasks_full;    /* tasks not followed: agg_tasks was full */
	__u64 groups_full;   /* polls counted in the overflow group: agg_groups was full */
	__u64 depth_overflow;
	__u64 spawned;       /* spawns seen */
};

_Static_assert(sizeof(struct agg_site) == 24, "agg_site layout");
_Static_assert(sizeof(struct agg_key) == 32, "agg_key layout");
_Static_assert(sizeof(struct agg_group) == 8 * (13 + 2 * AGG_BUCKETS), "agg_group layout");
_Static_assert(sizeof(struct agg_task) == 48, "agg_task layout");
_Static_assert(sizeof(struct agg_totals) == 72, "agg_totals layout");

#endif
