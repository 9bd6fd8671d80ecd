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

#endif
