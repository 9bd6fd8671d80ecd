/* Decoded trace events and trace metadata: the one vocabulary shared by the
 * recorder (which produces them from BPF records), the trace file writer and
 * reader (which store them), and the analysis (which consumes them).
 * Plain C, fixed-width types: no libbpf, no I/O here. */
#ifndef AS_TRACE_EVENT_H
#define AS_TRACE_EVENT_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

enum as_ev_type {
	AS_EV_THREAD = 1,  /* tid seen for the first time; str = thread name (comm) */
	AS_EV_POLL_BEGIN,  /* task = header; probe = poll probe index; other = tokio task id (0 unknown) */
	AS_EV_POLL_END,    /* task = header; flags & AS_POLL_READY: returned Ready */
	AS_EV_WAKE,        /* task = header scheduled; other = header of the task whose poll
	                      was running on tid when it woke (0: not inside a poll) */
	AS_EV_SPAWN,       /* spawn call site seen on tid: str = file, other = line << 32 | column;
	                      the next task first seen by a WAKE on the same tid is the spawned one;
	                      with flags AS_SPAWN_NAME (format version 8) a task's name instead:
	                      str = the name, other = its runtime task id */
	AS_EV_FREE,        /* task = header freed; the address may be reused by a new task */
	AS_EV_PARK,        /* worker tid parks (idle, blocked in the driver or a condvar) */
	AS_EV_UNPARK,      /* worker tid returns from parking */
	AS_EV_USDT,        /* a USDT probe fired on tid (format version 2): probe = its site
	                      (role AS_ROLE_USDT); task = the task being polled on tid (0 none);
	                      other = the first argument when it is a register or a constant
	                      (sign-extended from its size), else 0 */
	AS_EV_OFFCPU,      /* format version 3: thread tid was switched out at ts while it
	                      polled task (0 none), for other ns; stack = its stacks at the
	                      switch (struct as_stack, trace_reader__stack()), 0 none */
	AS_EV_SAMPLE,      /* format version 4: a CPU sample (record --sample) of thread tid at
	                      ts while it polled task (0: outside any poll); stack = its
	                      stacks then, as for AS_EV_OFFCPU, 0 none */
	AS_EV_RUNQ,        /* format version 5: thread tid became runnable at ts and waited
	                      other ns for a CPU (record --runq); task = the task it was
	                      polling then (0 none) */
	AS_EV_URING,       /* format version 6: an io_uring request submitted by thread tid
	                      while it polled task (0 none) (record --uring); flags &
	                      AS_URING_COMPLETE: its completion at ts, other = ns since
	                      submission; else its submission at ts, other = opcode */
	AS_EV_FUTURE_ENTER, /* format version 7: thread tid entered the poll function of a
	                      future (record --futures / --probe) at ts; probe = the function
	                      (role AS_ROLE_FUTURE); task = the task being polled on tid (0
	                      none); other = nesting depth of future frames on tid (0: the
	                      outermost) */
	AS_EV_FUTURE_EXIT,  /* format version 7: that function returned at ts; probe, task as
	                      for FUTURE_ENTER; flags AS_FUTURE_READY / AS_FUTURE_PENDING when
	                      known; other = depth | state << 32, see AS_FUT_* below */
	AS_EV__MAX,
};

enum as_ev_flags {
	AS_POLL_READY = 1, /* AS_EV_POLL_END: the poll completed the task (Ready or cancelled) */
	AS_WAKE_IO = 2,    /* AS_EV_WAKE: woken by the runtime's I/O driver */
	AS_WAKE_TIMER = 4, /* AS_EV_WAKE: woken by the runtime's timer */
	AS_OFFCPU_PREEMPTED = 8, /* AS_EV_OFFCPU: switched out runnable (preempted), not blocked */
	AS_URING_COMPLETE = 16,  /* AS_EV_URING: a completion, not a submission */
	AS_URING_ERROR = 32,     /* AS_EV_URING completion: the request failed */
	AS_FUTURE_READY = 1,     /* AS_EV_FUTURE_EXIT: the poll returned Ready */
	AS_FUTURE_PENDING = 64,  /* AS_EV_FUTURE_EXIT: the poll returned Pending */
	AS_SPAWN_NAME = 2,       /* AS_EV_SPAWN: a task's name (task::Builder::name) */
	AS_SPAWN_TASK = 4,       /* AS_EV_SPAWN with AS_SPAWN_NAME, in a profile trace (no
	                            probes, asyncscope profile): task = a task known by its
	                            runtime task id (the trace's key for it: samples and
	                            off-CPU intervals name it so), other = that id, str = its
	                            root future type (NULL: not named); again later when its
	                            name was found after it was first declared */
	AS_SPAWN_RUNTIME = 8,    /* ... with AS_SPAWN_TASK: the runtime's own task (a
	                            multi_thread worker's loop, its launch task) */
	AS_SPAWN_WAKERS = 16,    /* AS_EV_SPAWN (format version 12): no spawn but what the
	                            recorder read in the target's memory when the recording
	                            ended, of a task then idle (its last poll Pending, not
	                            woken since): task = its header, other = the references
	                            to it besides its runtime's task list's and its
	                            JoinHandle's, i.e. the wakers of it held (and any
	                            AbortHandle); 0: nothing can wake it again */
	AS_SPAWN_BEFORE = 32,    /* AS_EV_SPAWN (format version 13): no spawn but a task the
	                            recorder found in the target's memory (its runtime's task
	                            lists) when a recording of a running program ended, of
	                            which no event was recorded: idle (its last poll, before
	                            the recording, returned Pending) throughout the
	                            recording; task = its header, other = its runtime task
	                            id (0 unknown), str = its root future type (NULL
	                            unknown); an AS_SPAWN_WAKERS note of it may follow */
	AS_SPAWN_QUEUED = 64,    /* ... with AS_SPAWN_BEFORE: runnable (woken, waiting to be
	                            polled) throughout instead */
	AS_SPAWN_RUNNING = 128,  /* ... with AS_SPAWN_BEFORE: in one poll throughout instead,
	                            on thread tid (its poll began before the recording and
	                            had not returned when it ended) */
};

/* other of AS_EV_FUTURE_ENTER / AS_EV_FUTURE_EXIT: the depth in the low 32
 * bits; on exit, bits 32-47 hold the async state machine's `__state` byte
 * read at return plus one (0: not read). __state 0 Unresumed, 1 Returned
 * (Ready), 2 Panicked, n >= 3 suspended at its await point n - 3
 * (struct as_probe.await_lines[n - 3]). */
#define AS_FUT_DEPTH(other) ((uint32_t)(other))
#define AS_FUT_STATE(other) ((uint32_t)((other) >> 32) & 0xffffu)
#define AS_FUT_OTHER(depth, state) ((uint64_t)(uint32_t)(depth) | (uint64_t)((state) & 0xffffu) << 32)
/* The await point (0, 1, ...) a FUTURE_EXIT's state says the future is
 * suspended at, or -1. */
static inline int as_fut_await_point(uint64_t other)
{
	uint32_t s = AS_FUT_STATE(other);
	return s >= 4 ? (int)(s - 4) : -1;
}

/* One event. Strings (str) are borrowed: from the producer until the call
 * that takes the event returns, or from a trace reader until it is freed. */
struct as_event {
	uint8_t type;      /* enum as_ev_type */
	uint8_t flags;     /* enum as_ev_flags */
	uint16_t probe;    /* index into as_trace_meta.probes of the probe that fired */
	uint32_t tid;      /* thread id in the target */
	uint64_t ts;       /* CLOCK_MONOTONIC ns */
	uint64_t task;     /* task header address, 0 for thread-only events */
	uint64_t other;    /* per type, see enum as_ev_type */
	const char *str;   /* per type, NULL otherwise */
	uint32_t stack;    /* AS_EV_OFFCPU, AS_EV_SAMPLE: stack id (1, 2, ... in order of definition), 0 none;
	                      0 for every other type */
	uint32_t hint;     /* the source's own small number for task (the trace reader's
	                      task slot + 1), 0 none: a hint for a consumer that keeps tasks
	                      in an array, valid only with the same task (task_model
	                      checks it against the header); never an identity */
};

/* Frames kept per side (kernel, user) of an off-CPU stack. */
#define AS_STACK_MAX_FRAMES 64
/* Longest frame symbol stored in a trace (longer names are cut). */
#define AS_FRAME_SYM_MAX 255
/* Longest frame source file stored in a trace (format version 7; longer
 * paths keep their end). */
#define AS_FRAME_FILE_MAX 200

/* One frame: an address and its symbol, resolved when the trace was
 * recorded ("" when unknown). */
struct as_frame {
	uint64_t addr;
	const char *sym;
	const char *file;   /* format version 7: source file of the address (user
	                       frames with DWARF line info), NULL when unknown */
	uint32_t line;      /* its line, 0 when unknown */
};

/* A stack defined in a trace (format version 3): kernel frames, innermost
 * first, then user frames, innermost first. */
struct as_stack {
	uint32_t id;              /* 1, 2, ...: what AS_EV_OFFCPU's and AS_EV_SAMPLE's stack refer to */
	uint16_t n_kernel;        /* at most AS_STACK_MAX_FRAMES */
	uint16_t n_user;          /* at most AS_STACK_MAX_FRAMES */
	const struct as_frame *frames; /* n_kernel + n_user */
};

enum as_probe_role {
	AS_ROLE_POLL = 1,  /* task poll entry + return */
	AS_ROLE_READY,     /* entered only when the polled task completes */
	AS_ROLE_WAKE,      /* task becomes runnable (scheduled) */
	AS_ROLE_SPAWN,     /* spawn call site (&'static Location argument) */
	AS_ROLE_FREE,      /* task memory freed */
	AS_ROLE_PARK,      /* worker park entry + return */
	AS_ROLE_IO_DRIVER, /* entry + return: wakes inside come from the I/O driver */
	AS_ROLE_TIMER,     /* entry + return: wakes inside come from the timer */
	AS_ROLE_USDT,      /* a USDT site (format version 2): symbol "provider:name" */
	AS_ROLE_FUTURE,    /* format version 7: entry + return of a future's poll function
	                      (an async fn / async block body, an impl Future::poll, or a
	                      function matched by --probe) */
	AS_ROLE__MAX,
};

/* One probe point of the plan. */
struct as_probe {
	uint16_t role;       /* enum as_probe_role */
	uint8_t arg_reg;     /* argument register holding the task: 0 rdi, 1 rsi, 2 rdx, 3 rcx */
	uint8_t emulated;    /* 1: the instruction the probe sits on (its site: the entry, or
	                        past it, src/probe/site.h) is emulated by uprobes (cheap) */
	uint64_t addr;       /* virtual address in the target binary */
	char *symbol;        /* demangled symbol name, without hash */
	char *future;        /* AS_ROLE_POLL: the root future type this copy polls, or NULL;
	                        AS_ROLE_FUTURE: its readable name ("app::handler"), or NULL */
	/* format version 7, AS_ROLE_FUTURE (zero / NULL otherwise and when unknown): */
	char *src_file;      /* source file of the function (DWARF decl_file) */
	uint32_t src_line;   /* its line (the async fn's line) */
	uint32_t n_awaits;   /* await points of an async state machine */
	uint32_t *await_lines; /* [i]: line of await point i (its SuspendI variant) */
	char **await_types;  /* [i]: the future awaited there (readable type of its
	                        __awaitee, e.g. "tokio::time::Sleep"), or NULL; the
	                        array is NULL when none is known */
	/* Recording only (not stored in trace files): */
	int32_t state_off;   /* offset of the u8 __state in the state machine, -1 none */
	uint8_t self_reg;    /* argument register holding self: 0 rdi, 1 rsi (sret) */
	uint8_t ret_kind;    /* not a state machine: where the returned Poll's tag is:
	                        AS_RET_* (0: not known) */
	uint8_t ret_size;    /* its size in bytes (1, 2, 4, 8) */
	uint16_t ret_off;    /* its byte offset in the register, or in memory at rax */
	uint64_t ret_pending; /* the tag value that means Pending */
};

/* struct as_probe.ret_kind */
enum as_ret_kind {
	AS_RET_NONE = 0,
	AS_RET_RAX = 1,      /* Poll returned in rax:rdx, tag in rax */
	AS_RET_RDX = 2,      /* tag in rdx */
	AS_RET_MEM = 3,      /* Poll returned in memory, whose address is in rax at return */
};

/* What a trace file says about itself. */
struct as_trace_meta {
	uint32_t format_version;
	uint32_t pid;
	char *target;        /* path of the traced binary */
	char *build_id;      /* hex GNU build id, or "" */
	char *runtime;       /* runtime profile name, e.g. "tokio" */
	char *cmdline;       /* command line of the target, spaces between args */
	/* format version 8: which release of the runtime the recorder found
	 * and how ("tokio 1.53.1 (DWARF paths; profile 1.24 to 1.53, ...)"),
	 * NULL unknown */
	char *runtime_detail;
	/* format version 10: a flight recorder's snapshot (record/profile
	 * --flight), NULL / 0 in any other trace: what triggered it ("signal",
	 * "snapshot", "blocking", "busy"), what happened in words, when
	 * (CLOCK_MONOTONIC), the window and after-time asked, and the events of
	 * the snapshot's time range that had been evicted to stay within
	 * --flight-size (the range is then incomplete: not losses) */
	char *flight_trigger;
	char *flight_detail;
	uint64_t flight_trigger_ns, flight_window_ns, flight_after_ns, flight_evicted;
	/* format version 11: what the recorder took beside the probes (AS_REC_*
	 * bits, AS_REC_KNOWN with them), so that none of a kind reads as "none
	 * happened", not "not recorded"; 0 in older traces and in ones whose
	 * writer did not say (unknown) */
	uint32_t recorded;
	uint64_t clock_mono_ns;  /* CLOCK_MONOTONIC at recording start */
	uint64_t clock_real_ns;  /* CLOCK_REALTIME at the same instant */
	struct as_probe *probes;
	uint32_t n_probes;
};

/* as_trace_meta.recorded: what a recording took (format version 11). */
enum {
	AS_REC_KNOWN = 1,        /* the other bits say it (else unknown) */
	AS_REC_OFFCPU = 2,       /* off-CPU intervals (inside polls; profile: of tasks) */
	AS_REC_SAMPLE = 4,       /* CPU samples */
	AS_REC_RUNQ = 8,         /* run-queue waits */
	AS_REC_URING = 16,       /* io_uring requests */
};

/* Written when recording ends; a trace without it is truncated. */
struct as_trace_end {
	uint64_t events;     /* events written */
	uint64_t lost;       /* events lost in the kernel (ring buffer full) */
	uint64_t missed;     /* events the recorder could not decode or attribute */
	uint64_t end_ns;     /* CLOCK_MONOTONIC when recording stopped */
	/* In memory only (not in the trailer): set by pipeline_run() when the
	 * input ended before its trailer and --partial accepted it; events and
	 * end_ns are then the events read and the last timestamp. */
	uint8_t truncated;
	/* In memory only, with truncated: lost and missed are the cumulative
	 * counts the last complete chunk carried (format version 9), read by
	 * the recorder at counts_ns (CLOCK_MONOTONIC), a lower bound of the
	 * whole recording's; 0: the counts are unknown (an older trace). */
	uint8_t counts_lower_bound;
	uint64_t counts_ns;
};

/* A trace of `asyncscope profile`: a runtime's, without any probe (every
 * recording with a runtime has poll probes; a USDT-only one its USDT
 * sites): no polls, wakes or parks were recorded, only CPU samples and
 * off-CPU intervals of tasks known by id (AS_SPAWN_TASK). */
static inline int as_meta_profile(const struct as_trace_meta *m)
{
	return m && m->n_probes == 0 && m->runtime && m->runtime[0];
}

/* Lower-case name of a probe role ("poll", "future", ...), or NULL when
 * role is not one (src/trace/event.c). */
const char *as_role_name(unsigned role);
/* True when the trace's probes poll tasks but see no wake (record --lite):
 * wakes, scheduling delays and spawn sites were not recorded. */
bool as_meta_lite(const struct as_trace_meta *m);

#endif
