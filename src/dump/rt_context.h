/* Tokio's thread-local CONTEXT, read in another process without a probe:
 * where each thread's copy of it is (the ELF TLS symbol, the executable's
 * PT_TLS segment and the thread's thread pointer), what DWARF says of its
 * layout, and the runtime handle it holds (scheduler::Handle: the Arc of a
 * multi_thread or current_thread Handle, set on every thread that entered a
 * runtime: its workers, its blocking-pool threads, the thread in block_on).
 * The symbol patterns and field paths are data (one table, by the Tokio
 * versions they were checked on). Reads go through a mem_read_fn; knows
 * nothing of processes or BPF. Never prints. */
#ifndef AS_DUMP_RT_CONTEXT_H
#define AS_DUMP_RT_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dump/task_lists.h"
#include "sym/dwarf_types.h"

struct rt_context;

/* Finds CONTEXT in the executable at path (its ELF TLS symbol and PT_TLS,
 * glibc's x86-64 static TLS for the executable) and its layout in dt.
 * Returns NULL and sets errno: ENOENT no CONTEXT symbol (not a Tokio
 * program with a runtime, or stripped), ENODATA its DWARF does not describe
 * it, ENOMEM. *why (static) says which. */
struct rt_context *rt_context__open(struct dwarf_types *dt, const char *path, const char **why);
void rt_context__free(struct rt_context *rc);

/* The address of CONTEXT's storage in the thread whose thread pointer is
 * fsbase. */
uint64_t rt_context__addr(const struct rt_context *rc, uint64_t fsbase);

/* A runtime handle a thread's CONTEXT holds. */
struct rt_handle {
	uint64_t arc;            /* ArcInner<Handle> in the target (the Arc's pointer) */
	const char *kind;        /* "multi_thread", "current_thread" (the variant, static) */
	int list;                /* its OwnedTasks: 1 sharded, 0 one list, < 0 not described */
	struct owned_layout layout; /* where (owned_off from the ArcInner) */
};

/* Reads the CONTEXT of the thread with thread pointer fsbase. Returns 1
 * with *h, 0 when it holds no handle (the thread never entered a runtime,
 * or left it; or its CONTEXT is not alive: a thread that never touched it),
 * or < 0: -EFAULT unreadable, -EBUSY the handle was being set (its RefCell
 * borrowed mutably), -EPROTO it does not look like one. */
int rt_context__handle(struct rt_context *rc, uint64_t fsbase, mem_read_fn read, void *rctx,
		       struct rt_handle *h);

/* Where a thread's current task id is (Context.current_task_id, a
 * Cell<Option<task::Id>>), laid out for a reader that runs none of this
 * code (profile's BPF programs, bpf/profile.bpf.c, mirror
 * rt_task_id_read()). What it holds: the task being polled on the thread,
 * or the task whose future is being dropped (possibly inside another
 * task's poll); on a multi_thread worker between polls, the worker's own
 * launch task (its loop runs inside a blocking task's poll); None outside
 * any task (a thread directly in block_on, a blocking-pool thread between
 * tasks). Offsets from CONTEXT's storage, which is at fsbase + tp_off. */
struct rt_task_id_loc {
	int64_t tp_off;           /* the storage from the thread pointer (below it) */
	uint32_t state_off;       /* the storage's state (std's thread_local) ... */
	uint32_t state_size;      /* ... its bytes, 0: no state to check */
	uint64_t state_alive;     /* ... its value while the storage is alive */
	uint32_t tag_off;         /* the Option's discriminant (the id itself when the
	                             Option is a niche: 1.53's NonZeroU64) ... */
	uint32_t tag_size;        /* ... its bytes (1 to 8) ... */
	uint64_t tag_none;        /* ... its value for None */
	uint32_t id_off;          /* the id, a u64, when Some */
	/* The worker's own loop (its launch task's id held, outside any user
	 * poll): Context.runtime Entered and Context.budget unconstrained
	 * (a worker polls every task inside coop::budget; a spawn_blocking
	 * thread is not Entered). loop_rt_size 0: not described. */
	uint32_t loop_rt_off;       /* Context.runtime's discriminant ... */
	uint32_t loop_rt_size;      /* ... its bytes (0: no loop test) ... */
	uint64_t loop_rt_outside;   /* ... its value for NotEntered */
	uint32_t loop_budget_off;   /* Context.budget's Option<u8> discriminant ... */
	uint32_t loop_budget_size;  /* ... its bytes ... */
	uint64_t loop_budget_none;  /* ... its value for None (unconstrained) */
};

/* 0 with *loc, or -ENODATA when DWARF does not describe current_task_id
 * (or its storage's state) in the shapes checked (tokio 1.24.2, 1.53.1). */
int rt_context__task_id_loc(const struct rt_context *rc, struct rt_task_id_loc *loc);

/* Reads, as loc says, the current task id of the thread whose thread
 * pointer is fsbase: 1 with *id, 0 (*id 0) None or the storage not alive,
 * -EFAULT unreadable. */
int rt_task_id_read(const struct rt_task_id_loc *loc, uint64_t fsbase, mem_read_fn read,
		    void *rctx, uint64_t *id);

/* Whether the thread whose thread pointer is fsbase runs its worker's own
 * loop, as loc's loop_* say (the BPF reader's test): 1 yes, 0 no (or not
 * described), -EFAULT unreadable. */
int rt_task_in_loop(const struct rt_task_id_loc *loc, uint64_t fsbase, mem_read_fn read,
		    void *rctx);

#endif
