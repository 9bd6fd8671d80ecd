/* The async stack dump of a live Tokio program, without stopping it and
 * without a probe: every runtime found through the runtime handle in each
 * thread's thread-local tokio CONTEXT (dump/rt_context.h; the threads'
 * thread pointers from a BPF task iterator, probe/threads.h), each
 * runtime's own list of the tasks it owns walked from its heads (every
 * shard of it since tokio 1.35, dump/task_lists.h). Only when no thread's
 * CONTEXT holds a handle, the tasks polled during a short recording (a live
 * recording session read as a source of events, no trace file; or any
 * source the caller gives), their lists walked; last, a task found in the
 * heap. Then, for each task, its root future read from the
 * process's memory and walked through its DWARF state machines
 * (sym/async_stack.h). Reads are checked against the task's state word and
 * the __state bytes read before and after, so a torn read is reported as
 * such, never as a stack. async-std's and smol's tasks (async-task) are
 * found through their async-executor executors instead (dump/async_exec.h)
 * and read the same way. Then the future of each thread blocked in a
 * block_on, from its stack frames (dump/block_on.h). Never prints on
 * stdout (the caller formats). */
#ifndef AS_DUMP_DUMP_H
#define AS_DUMP_DUMP_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pipeline/source.h"
#include "sym/async_stack.h"
#include "trace/event.h"

struct elf_image;
struct proc_threads;

struct dump_opts {
	pid_t pid;
	double duration;             /* seconds of tracing to find polled tasks (0.3) */
	int attempts;                /* reads of a task before giving up (5) */
	volatile sig_atomic_t *stop; /* ends the tracing moment early, or NULL */
	bool trace;                  /* find tasks by the tracing moment, not CONTEXT */
	/* A caller that dumps the same process again and again (dump --every)
	 * keeps its binary and DWARF open across the dumps, and their caches
	 * (type names, vtables, lines) with them: borrowed; NULL: opened and
	 * closed by each dump. */
	struct elf_image *img;
	struct dwarf_types *dt;
	struct proc_threads *threads;   /* the thread iterator, loaded (probe/threads.h) */
	/* A caller that already traces the target (top) gives the task headers
	 * it knows instead: no tracing moment; the task lists are walked from
	 * each thread's CONTEXT and from them (or from a task found in the heap
	 * when there are none). */
	bool no_trace;
	const uint64_t *headers;
	size_t n_headers;
	const struct as_probe *probes;   /* with no_trace: the probe plan (poll copies) */
	size_t n_probes;
	/* The tasks polled as this source of events saw them (borrowed,
	 * drained here; its meta gives the probe plan) instead of a
	 * recording: a trace of the target, later memory discovery. NULL:
	 * record o->duration seconds. */
	struct as_source *source;
};

/* A task of a JoinSet. */
struct dump_child {
	uint64_t header;
	uint64_t id;                 /* Tokio task id, 0 unread */
	size_t task;                 /* index + 1 into dump_result.tasks, 0: not among
	                                them (done: out of its runtime's list) */
	bool done;                   /* in the set's notified list: done, not yet joined */
};

/* A JoinSet a frame of a task holds (by value or by reference): its tasks,
 * the task's children. */
struct dump_join_set {
	size_t frame;                /* the frame of the task's stack that holds it */
	uint64_t addr;               /* the JoinSet in the target */
	struct dump_child *tasks;
	size_t n;
	bool cut;                    /* more than listed, or a link unreadable */
};

struct dump_task {
	uint64_t header;             /* task address in the target */
	uint64_t id;                 /* Tokio task id, 0 unknown */
	uint32_t seq;                /* 1, 2, ...: in order of first sight (the task's
	                                identity when it has no id) */
	char *name;                  /* root future, readable ("app::handler"), or NULL */
	const char *state;           /* "idle", "runnable", "running", "completed", "unreadable" */
	const char *note;            /* why there is no stack ("running, not sampled",
	                                "changed while reading", ...), NULL when stack holds one */
	bool seen;                   /* polled while tracing (else found in the task list) */
	struct async_stack stack;    /* outermost frame first */
	uint64_t wakes_at_ns;        /* parked on a timer (tokio::time::Sleep, ...): its
	                                deadline, CLOCK_MONOTONIC ns; 0 none */
	/* An idle Tokio task: the references to it that its runtime's task
	 * list and its JoinHandle do not account for, from its state word's
	 * reference count: the wakers of it that are held (by a timer, a
	 * channel, a socket's registration, ...), and any AbortHandle. 0: no
	 * waker of it exists, so nothing can wake it again (a lost wakeup).
	 * Meaningful only with wakers_known. */
	uint32_t wakers;
	bool wakers_known;
	bool sampled;                /* its chain read (dump_run's own bookkeeping) */
	struct dump_join_set *join_sets;   /* the JoinSets its frames hold */
	size_t n_join_sets;
	size_t list;                 /* index + 1 into dump_result.task_lists of the list
	                                it was found in, 0 none (a JoinSet's done child ...) */
	size_t parent;               /* index + 1 into dump_result.tasks of the task whose
	                                JoinSet holds this one, 0 none */
};

/* A thread blocked in a runtime's block_on (main's async body under
 * #[tokio::main], a Runtime::block_on or Handle::block_on on any thread):
 * the future it drives, in no task list, found in the thread's stack
 * (dump/block_on.h). */
struct dump_block_on {
	pid_t tid;
	char comm[17];
	const char *function;        /* the block_on it is in ("tokio::runtime::park::
	                                CachedParkThread::block_on", static) */
	char *name;                  /* its future, readable, or NULL unknown */
	uint64_t addr;               /* where the future is, 0 not found */
	const char *located;         /* "dwarf" (its variable's location at the pc),
	                                "frame_scan" (DWARF has none there: the one started
	                                future of its type in the frame), NULL not found */
	const char *note;            /* "location optimized out", ... (static): why no
	                                stack, or how it was found; NULL: by DWARF */
	struct async_stack stack;    /* outermost frame first */
};

/* How a task list was found. */
enum dump_via {
	DUMP_VIA_CONTEXT = 1,    /* a thread's thread-local tokio CONTEXT held its runtime's
	                            handle (no probe: read with a BPF task iterator) */
	DUMP_VIA_POLL,           /* from a task polled while tracing (or one the caller knew) */
	DUMP_VIA_HEAP,           /* from a task found by scanning the heap */
	DUMP_VIA_STATIC,         /* an executor held by a static of the program (its ELF
	                            symbol; async-std's and smol's global executors) */
	DUMP_VIA_TLS,            /* an executor held by a thread-local of a thread (its
	                            thread pointer read with a BPF task iterator;
	                            async-global-executor's LOCAL_EXECUTOR) */
	DUMP_VIA_OWNER,          /* a LocalSet the block_on future of a thread, or the
	                            future of a task, owns (by value or reference in its
	                            chain, or a RunUntil) */
};

struct dump_result;

/* One task list walked (an OwnedTasks: one per runtime; or an
 * async-executor Executor's slab of live tasks, dump/async_exec.h). */
struct dump_list {
	uint64_t addr;           /* the OwnedTasks in the target */
	uint64_t id;             /* its id (its tasks' owner id), 0 unread */
	const char *runtime;     /* "multi_thread", "current_thread", "local_set" (a
	                            LocalSet's LocalOwnedTasks), "executor" (an
	                            async-executor Executor or LocalExecutor: addr is
	                            its State), NULL unknown (static) */
	const char *source;      /* DUMP_VIA_STATIC, DUMP_VIA_TLS: the variable's name
	                            (static), else NULL */
	enum dump_via via;
	pid_t tid;               /* DUMP_VIA_CONTEXT: the first thread whose CONTEXT holds
	                            it; DUMP_VIA_TLS: the thread whose variable holds it;
	                            DUMP_VIA_OWNER: the thread whose block_on future owns it */
	char comm[17];           /* ... its name */
	uint64_t owner_task;     /* DUMP_VIA_OWNER: the task whose future owns it (its
	                            header), 0: a thread's block_on future */
	size_t threads;          /* threads whose CONTEXT holds its runtime */
	size_t shards;           /* 1 for one list (tokio < 1.35), 0 unreadable */
	size_t walked;           /* of which walked from head to tail */
	size_t tasks;            /* tasks found in it */
	bool complete;           /* every shard walked, each node checked */
	const char *note;        /* why not complete (static), or NULL */
};

/* "the thread-local CONTEXT of thread 4242 (tokio-runtime-w)", "a task
 * polled while tracing", "a task found by a heap scan", "the static
 * smol::spawn::spawn::GLOBAL", "the thread-local
 * async_global_executor::executor::LOCAL_EXECUTOR of thread 4242 (main)",
 * "the block_on future of thread 4242 (app) that owns it", "the future of
 * task #47 (app::worker) that owns it":
 * into buf, returned. */
const char *dump_via_text(const struct dump_result *r, const struct dump_list *l, char *buf,
			  size_t len);
/* The task whose future owns the LocalSet of list l (DUMP_VIA_OWNER
 * through a task), or NULL. */
const struct dump_task *dump_list_owner(const struct dump_result *r, const struct dump_list *l);
/* "context", "poll", "heap", "static", "thread_local". */
const char *dump_via_name(enum dump_via via);

struct dump_result {
	pid_t pid;
	char *target;                /* path of the executable */
	char *debug_note;            /* where its symbols and DWARF came from, when
	                                not from it (elf_image__debug_note()), or NULL */
	struct dump_task *tasks;     /* by Tokio id (unknown last) */
	size_t n;
	size_t seen;                 /* tasks polled while tracing */
	bool walk_cut;               /* a task list walk stopped at a guard (cycle,
	                                count, unreadable link): the set may be partial */
	/* Sharded task lists (tokio >= 1.35), walked shard by shard from their
	 * heads; all 0 / NULL for one list per runtime (tokio < 1.35). */
	size_t lists;                /* OwnedTasks walked (one per runtime found) */
	size_t lists_unread;         /* of which unreadable as a whole */
	size_t shards;               /* their shards */
	size_t shards_walked;        /* of which walked from head to tail */
	bool layout_unverified;      /* no DWARF for the list of a version that shards
	                                it: shards is Tokio's formula for the worker
	                                threads seen (0 unknown), shards_walked the
	                                shards of the tasks found (their links walked) */
	const char *list_note;       /* why the lists may be partial (static), or NULL */
	struct dump_list *task_lists;  /* every list walked from its heads, in order found */
	size_t n_task_lists;
	bool traced;                 /* a recording was made to find tasks (CONTEXT
	                                found no runtime) */
	const char *context_note;    /* why thread-local CONTEXT found no runtime (static),
	                                NULL when it did or was not tried */
	size_t context_threads;      /* threads read, whose CONTEXT held a handle */
	size_t context_unread;       /* threads whose CONTEXT could not be read (list_note
	                                then says a runtime may be missing) */
	size_t threads;
	/* The lists the program created (tokio's id counter) against those
	 * walked: the others hold no task any way in reached. */
	uint64_t lists_created;      /* 0 unknown (no counter symbol) */
	bool lists_counted;          /* lists_created was read */
	size_t lists_without_tasks;  /* created, not walked: dropped runtimes or empty
	                                LocalSets when the heap scan found none of their
	                                tasks (heap_scanned, not cut) */
	bool heap_scanned;           /* the heap was scanned for the lists nothing else reached */
	bool heap_scan_cut;          /* ... and the scan stopped at its byte budget */
	struct dump_block_on *block_ons;   /* threads in a block_on, by thread id */
	size_t n_block_ons;
	/* threads on a CPU through every read of them (about 90 ms): their
	 * stacks not read, so a block_on future one drives is not listed */
	struct dump_thread {
		pid_t tid;
		char comm[17];
	} *running;
	size_t n_running;
};

/* Dumps o->pid. Returns 0 with *res filled (free with dump_result__clear),
 * or -errno with a one-line lowercase message and the fix in err: no such
 * process (-ESRCH), not root (-EPERM), stripped or no debug info (-ENODATA),
 * neither a Tokio nor an async-task (async-std, smol) program (-ENOENT), or
 * the recorder's error. async-task tasks (no task id: ~N) are found through
 * their executors (dump/async_exec.h), in every mode. */
int dump_run(const struct dump_opts *o, struct dump_result *res, char *err, size_t errlen);

/* The task's identity as every output shows it: "#3" (the runtime's task
 * id) or, without one, "~5" (its number in order of first sight). Writes
 * into buf (24 bytes are enough), returns it. */
const char *dump_task_ident(const struct dump_task *t, char *buf, size_t len);
/* A JoinSet's task as every output names it: as dump_task_ident() when it
 * is among r's tasks, else "#id" from its header, "?" when unread. */
const char *dump_child_ident(const struct dump_result *r, const struct dump_child *ch, char *buf,
			     size_t len);

/* True when every task list found was walked to its ends (with sharded
 * lists, every shard of each, their layout from DWARF) and, when the
 * program's count of lists is known, each list it created that was not
 * walked was looked for in the whole heap, which holds no task of it. */
bool dump_list_complete(const struct dump_result *r);

/* NULL when dump_list_complete(r), else one line saying why not (in buf,
 * returned): "the task list changed while it was walked" (tokio < 1.35, as
 * before), or the note and "5 of 8 shards walked". */
const char *dump_list_status(const struct dump_result *r, char *buf, size_t len);

/* Frees what res owns and zeroes it; accepts a zeroed result. */
void dump_result__clear(struct dump_result *res);

#endif
