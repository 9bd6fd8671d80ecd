/* Recording: launch or find the target, plan and attach probes, stream the
 * BPF ring buffer into a trace file (or to a live consumer) until told to
 * stop, the duration ends, or the target exits. The public face of
 * src/record: recorder_run() for a whole recording, or a session
 * (rec_session__open) read as a source of decoded events (pipeline/source.h)
 * for live consumers (top, dump). Never prints: every notice goes to
 * recorder_opts.notice, which the caller renders (or drops).
 *
 * Inside src/record, by concern: launch.c (the target: find, launch, plan
 * the probes, the binary opened once), decode.c (raw BPF records -> events,
 * one switch), fixup.c (runtime fix-ups: nested wakes, frees held until the
 * poll ends), stacks.c (naming and DWARF unwinding of stacks), stats.c
 * (counters and the result), session.c (the poll loop and the live source),
 * notice.c (formatting notices). */
#ifndef AS_RECORD_RECORDER_H
#define AS_RECORD_RECORDER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pipeline/source.h"
#include "trace/event.h"

struct idle_before;   /* record/idle_refs.h */

/* How a notice is meant; the text never has the "asyncscope: " prefix nor
 * a newline. record renders INFO and ERROR as "asyncscope: MSG\n", WARNING
 * as "asyncscope: warning: MSG\n", PROGRESS as "\rasyncscope: MSG" (an
 * empty MSG: clear the status line, "\r\033[K"), all on stderr. */
enum rec_notice_level {
	REC_NOTICE_INFO,       /* the "attached ..." line (not with quiet) */
	REC_NOTICE_WARNING,    /* something works less well than asked */
	REC_NOTICE_ERROR,      /* the launched command could not be run */
	REC_NOTICE_PROGRESS,   /* the status line (with progress), once a second */
};

struct rec_session;

struct recorder_opts {
	const char *output;          /* trace file path (in messages; created unless output_fd) */
	int output_fd;               /* > 0: the trace is written to this open file instead,
	                                which the session owns from then on (closed, also
	                                when the recording fails) */
	double duration;             /* seconds; 0 = until stopped or the target exits */
	pid_t pid;                   /* attach to this process, or */
	char *const *argv;           /* launch this command (NULL-terminated) */
	const char *runtime;         /* profile name, NULL = detect */
	/* USDT probes to attach, "provider:name" or "provider:*" (n_usdt of
	 * them); with any, a binary without an async runtime is accepted */
	const char *const *usdt;
	size_t n_usdt;
	size_t ringbuf_bytes;        /* BPF ring buffer size, 0 = default */
	/* Off-CPU intervals inside polls (sched_switch), at least offcpu_min_ns
	 * long, with their kernel and user stacks, named at record time from
	 * /proc/kallsyms and the target's ELF symbols; offcpu_default: on by
	 * default rather than asked for, so left off where no poll is traced
	 * (USDT probes alone) */
	bool offcpu;
	bool offcpu_default;
	uint64_t offcpu_min_ns;
	/* CPU samples of the target, sample_hz a second per CPU (0 none), each
	 * with the task polled on the thread and its stacks (named as above) */
	uint32_t sample_hz;
	/* with sample_hz and offcpu: unwind user stacks by their DWARF call
	 * frame information (copied registers and top of stack), keeping the
	 * frame-pointer walk where it finds more frames */
	bool dwarf;
	/* Run-queue waits of the target's threads (record --runq, and an
	 * explicit --offcpu; not the default off-CPU intervals) */
	bool runq;
	/* io_uring submissions (with the task polled) and completions */
	bool uring;
	/* Future-level tracing: the poll functions of the target's own async
	 * fns / blocks and impl Future::poll (futures), functions matching
	 * POSIX extended regexes on demangled names (probe_patterns), CAT's
	 * four patterns (probe_preset_cat); entry and return with depth */
	bool futures;
	/* Polls and busy time only (record --lite): the poll entry and return,
	 * completion and free probes, none of wake, spawn, park or drivers */
	bool lite;
	const char *const *probe_patterns;
	size_t n_probe_patterns;
	bool probe_preset_cat;
	/* Profile mode (asyncscope profile): no uprobe at all; CPU samples
	 * (sample_hz) and off-CPU intervals (offcpu: while the thread is in a
	 * task) carry the runtime task id the thread's CONTEXT holds then
	 * (where dump/rt_context.h finds it in the binary's DWARF; without it,
	 * or for a runtime without such a thread-local, every record has task
	 * 0, its thread's, and a warning says so). The trace has no probes; each task id is declared at its first
	 * record (AS_EV_SPAWN with AS_SPAWN_TASK), named as
	 * rec_session__name_task() said. */
	bool profile;
	/* serve --tasks: with profile, the task probes attached too, their
	 * programs aggregating in the kernel (bpf/agg.bpf.c; no record per
	 * poll, read through rec_session__agg(), record/agg.h): polls of at
	 * least agg_long_poll_ns are long, idle times of at least agg_stall_ns
	 * stalls */
	bool agg;
	uint64_t agg_long_poll_ns, agg_stall_ns;
	/* Hooks for a caller of recorder_run() that needs the session (profile
	 * names tasks through them), each may be NULL, with hook_ctx: on_session
	 * once attached, before the recording runs (a launched command not
	 * exec'd yet); on_unknown_task at the first record of a task id never
	 * named (profile: before it is declared, so that names found then
	 * declare it named); on_hook_tick at least every 20 ms while it runs
	 * (100 ms in profile mode, whose ring buffer is read that often); on_end
	 * once it stops, before a launched command is ended and the trace
	 * finished (what it adds still goes in). */
	void (*on_session)(void *hook_ctx, struct rec_session *s);
	void (*on_unknown_task)(void *hook_ctx, uint64_t id);
	void (*on_hook_tick)(void *hook_ctx, uint64_t now_ns);
	void (*on_end)(void *hook_ctx);
	void *hook_ctx;
	bool progress;               /* a live status line on stderr */
	bool quiet;                  /* no "attached" line (a full-screen caller) */
	const char *child_stdio;     /* launched command's stdout and stderr go here
	                                (e.g. /dev/null under a full-screen view) */
	/* Live consumers: on_start once attached; every event as it is
	 * decoded (on_event; a consumer may instead read the session as a
	 * source, rec_session__source(), as top and dump do); a tick at least
	 * every 20 ms while the ring buffer is polled; on_tick returning
	 * non-zero stops the recording. With output NULL no trace file is
	 * written. */
	void (*on_start)(void *ctx, const struct as_trace_meta *meta); /* after attaching;
	                                          meta valid until the session is freed */
	void (*on_event)(void *ctx, const struct as_event *ev);
	/* Without a trace file (output NULL) and not read as a source: the
	 * stack of an off-CPU interval or sample, named, before its event
	 * (st and its strings lent for the call); returns the id its event's
	 * stack field is to hold, 0 for none (the flight recorder's ring keeps
	 * the stacks so). NULL: such events have stack 0. */
	uint32_t (*on_stack)(void *ctx, const struct as_stack *st);
	int (*on_tick)(void *ctx, uint64_t now_ns, uint64_t lost, uint64_t missed);
	/* once the recording runs (attached, a launched command exec'd): the
	 * point past which a failure no longer undoes it (record puts its
	 * trace file in place here) */
	void (*on_running)(void *ctx);
	void *ctx;
	volatile sig_atomic_t *stop; /* set by the caller's signal handler */
	/* Every notice, msg borrowed for the call; NULL drops them all. */
	void (*notice)(void *ctx, enum rec_notice_level level, const char *msg);
	void *notice_ctx;
};

/* User stacks unwound by DWARF (record --dwarf), of one kind of record. */
struct recorder_unwind {
	uint64_t stacks;             /* stacks unwound */
	uint64_t frames;             /* user frames kept over them: DWARF's, or the
	                                frame-pointer walk's where that found more */
	uint64_t fp_frames;          /* user frames of the frame-pointer walk alone */
	uint64_t fp_kept;            /* stacks whose frame-pointer walk was kept */
	uint32_t median, fp_median;  /* median user frames per stack, kept and by
	                                frame pointers alone */
};

struct recorder_result {
	uint64_t events;
	uint64_t tasks;              /* distinct task identities seen */
	uint64_t lost;               /* lost in the kernel (ring buffer full) */
	uint64_t missed;             /* malformed or unattributable records */
	uint64_t offcpu;             /* off-CPU intervals recorded */
	bool offcpu_on;              /* off-CPU intervals were taken (opts.offcpu, in
	                                a recording that traces polls, or profile's) */
	uint64_t samples;            /* CPU samples recorded (--sample) */
	/* --dwarf: how deep the user stacks of samples and of off-CPU
	 * intervals came out */
	struct recorder_unwind unwind_samples, unwind_offcpu;
	uint64_t runq;               /* run-queue waits recorded (--runq) */
	/* tasks idle at the end whose wakers held were read (AS_SPAWN_WAKERS),
	 * and of them those with none */
	uint64_t idle_notes, idle_no_waker;
	/* a running program's (-p) tasks of which no event was recorded,
	 * found in its memory at the end (rec_session__before_task()): idle,
	 * of them with no waker, runnable, in a poll */
	uint64_t before_idle, before_no_waker, before_queued, before_running;
	/* spawns whose call site came from an unwound stack (Tokio 1.53's
	 * bind_inner), and those whose site could not be found */
	uint64_t spawn_sites, spawn_sites_unknown;
	uint64_t uring_submitted, uring_completed; /* io_uring requests (--uring) */
	/* future-level tracing: probes planned, of which async state machines
	 * and with source lines; future polls recorded */
	size_t future_probes, future_state_machines, future_with_source, future_over_max;
	bool future_dwarf;
	uint64_t future_polls;
	uint64_t stacks;             /* distinct stacks stored (off-CPU and samples) */
	/* profile mode: task ids declared, of which never named and runtime
	 * tasks; records whose task id could not be read (task 0) */
	uint64_t profile_tasks, profile_unnamed, profile_runtime, profile_no_id;
	bool profile_offcpu;         /* profile: off-CPU intervals were taken (a task id
	                                to read: tokio with its CONTEXT described) */
	uint64_t bytes;              /* trace file size */
	int target_status;           /* launched target: wait status, else -1 */
	bool target_stopped;         /* ... stopped by the end of the recording */
	bool started;                /* the recording ran (its counts are valid even
	                                when it ended in an error) */
};

/* Runs one recording. Returns 0, or -errno with a one-line message and fix
 * in err. Progress and the "attached" line go to o->notice. */
int recorder_run(const struct recorder_opts *o, struct recorder_result *res,
		 char *err, size_t errlen);

/* A recording session, for a live consumer. */
struct rec_session;

/* Finds or launches the target, plans and attaches the probes, opens the
 * trace file (o->output, or none), calls o->on_start and lets a launched
 * command run: recording has begun. o is borrowed until the session is
 * freed. Returns 0 with *out, or -errno with a one-line message and fix in
 * err (then nothing is left running). */
int rec_session__open(const struct recorder_opts *o, struct rec_session **out,
		      char *err, size_t errlen);

/* The session as a source (pipeline/source.h): next() returns each event
 * as the ring buffer delivers it (also given to o->on_event and written to
 * the trace file when there is one), polling the buffer every 20 ms while
 * none is waiting (o->on_tick called then); it returns 0 once the recording
 * ends (o->stop set, the duration over, on_tick non-zero, the target
 * gone): the trace file is then finished and end() answers. An error
 * reading the ring buffer or finishing the file: -errno, error() says what
 * (the recording has ended too). meta() is the trace header. stack()
 * gives the stacks of off-CPU intervals and samples (named at record time;
 * the trace file's ids when there is one). Every ev->str and stack is lent
 * until the session is freed. offset()/size() are NULL. The source's free() frees the session (do not call
 * rec_session__free() then). */
void rec_session__source(struct rec_session *s, struct as_source *src);

/* Records until the end, without a consumer of next() (o->on_event still
 * gets every event). Returns 0 or -errno (rec_session__error() says what). */
int rec_session__run(struct rec_session *s);

/* Profile mode: the task of runtime task id `id` is named name (copied;
 * NULL none) and is the runtime's own when runtime (a worker's loop). It
 * is declared in the trace with that at its first record, or at once when
 * it was declared unnamed before. Returns 0 or -ENOMEM. */
int rec_session__name_task(struct rec_session *s, uint64_t id, const char *name, bool runtime);

/* Profile mode: forgets every task id declared and named so far (a
 * long-running caller bounding its memory): ids seen again are declared
 * again, and named by the hooks as for a new one. */
void rec_session__forget_tasks(struct rec_session *s);

/* Profile mode: off-CPU intervals are taken (a task id to read: tokio
 * with its CONTEXT described); known once attached. */
bool rec_session__profile_offcpu(const struct rec_session *s);

/* Task mode with a trace file: a task found in the target's memory when
 * the recording ends (from on_end), idle, runnable (b->queued) or in a poll
 * (b->running) there, of which no event was recorded. Written after the
 * last events (an AS_SPAWN_BEFORE note: the task idle, runnable or in one
 * poll throughout) unless an event of it comes first. 0, or -ENOMEM;
 * ignored (0) otherwise, for a task seen in the recording, and for a
 * runnable one with lite (no wake recorded: it may have been woken while
 * it recorded). */
int rec_session__before_task(struct rec_session *s, const struct idle_before *b);

/* Whether the session was attached to a running program (-p), not
 * launched. */
bool rec_session__attached(const struct rec_session *s);

/* The target's process id (the launched command's once launched). */
pid_t rec_session__pid(const struct rec_session *s);

/* Profile mode: the task ids declared without a name so far, in a new
 * array (caller frees) of *n; NULL with *n 0 when none (or no memory). */
uint64_t *rec_session__unnamed(const struct rec_session *s, size_t *n);

/* After the end: the counts of the recording. */
void rec_session__result(const struct rec_session *s, struct recorder_result *res);

/* The message of the error that ended the session, "" none. */
const char *rec_session__error(const struct rec_session *s);

/* Stops recording if it has not ended (a launched command is ended, the
 * trace file finished), detaches and frees. Accepts NULL. */
void rec_session__free(struct rec_session *s);

#endif
