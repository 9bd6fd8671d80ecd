/* The live tasks of async-executor based programs (async-std through
 * async-global-executor, smol, async-executor used directly), found
 * without a probe and read as dump reads Tokio's (dump.h):
 * - the ways in: the executors' statics (async-global-executor's
 *   GLOBAL_EXECUTOR, smol's GLOBAL: their ELF symbols, their layouts from
 *   DWARF; one table of facts with the versions they were checked on), each
 *   thread's async-global-executor LOCAL_EXECUTOR (a thread-local: the
 *   threads' thread pointers from the BPF task iterator), the tasks
 *   already known (polled while tracing, or the caller's), and last a
 *   scan of the heap for task headers (a user's Executor or LocalExecutor,
 *   reached from a task's schedule closure, which holds its State);
 * - each executor's list: State.active, a Slab<Waker> holding a waker of
 *   every live task (the waker's data is async-task's raw task), walked
 *   whole, every entry checked (a task of a known type) and counted against
 *   the slab's own count;
 * - each task: async-task's Header (state, vtable), its future at the
 *   offset its vtable's layout_info gives, of the type DWARF gives its
 *   RawTask<F, T, S>, walked with sym/async_stack.h; the executor's wrapper
 *   frames (the runtime profile's future wrappers) dropped, so that a chain
 *   starts at the task's own future, as a Tokio task's does.
 * async-task 4.3 gives tasks no id: a task is named by its number in order
 * of first sight (~N), its header address in the JSON, as everywhere.
 * Private to src/dump (uses dump_int.h's engine state); never prints. */
#ifndef AS_DUMP_ASYNC_EXEC_H
#define AS_DUMP_ASYNC_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sym/elf_image.h"
#include "trace/event.h"

struct ctx;
struct dump_result;
struct dump_task;
struct async_exec;

/* True when img runs async-task tasks (a RawTask::run copy). */
bool async_exec_present(const struct elf_image *img);

/* The task types (the plan's RawTask::run poll copies, probes[0..n), others
 * ignored; their types read from img's DWARF in one pass) and the layouts
 * DWARF (c->dt) gives. Returns NULL and sets errno:
 * ENOENT none of the probes is a RawTask::run copy, ENODATA DWARF does not
 * describe async-task's Header and TaskVTable (*why, static, says which),
 * ENOMEM. Borrows c until async_exec__free(). */
struct async_exec *async_exec__new(struct ctx *c, const struct elf_image *img,
				   const struct as_probe *probes, size_t n, const char **why);

/* Every executor found (the statics of img, the async-task tasks already in
 * c->res, then the heap), each one's slab walked into c->res: its tasks
 * added, a dump_list per executor. Returns the number of executors walked,
 * or -ENOMEM. */
int async_exec__discover(struct async_exec *ax, const struct elf_image *img);

/* True when the task at header is one of async-task's (its vtable's run is
 * a known copy), not a Tokio task; false for a NULL ax. */
bool async_exec_is_task(struct async_exec *ax, uint64_t header);

/* The tasks of r that are not async-task's (r->n for a NULL ax). */
size_t async_exec_others(struct async_exec *ax, const struct dump_result *r);

/* True when the task at header is an async-task task this dump found. */
bool async_exec__owns(const struct async_exec *ax, uint64_t header);

/* Reads t's state and await chain (up to attempts reads of a changing
 * task), as dump reads a Tokio task. 0 or -ENOMEM. */
int async_exec__sample(struct async_exec *ax, struct dump_task *t, int attempts);

void async_exec__free(struct async_exec *ax);

/* dump_run's step: when img runs async-task tasks, *ax made (discover with
 * async_exec__discover()); else *ax NULL. When the tasks cannot be read
 * (DWARF missing): an error if required (the program has no other runtime:
 * -ENODATA, the message and fix in err), else said in c->res->list_note.
 * Returns 0, or -errno with err. */
int async_exec_open(struct ctx *c, const struct elf_image *img, const struct as_probe *probes,
		    size_t n, bool required, struct async_exec **ax, char *err, size_t errlen);

/* A block_on future's chain that is an async-executor run() (smol's and
 * async-std's block_on of an executor's run): the executor's own loop and
 * frames dropped, the chain starting at the future it runs (the runtime
 * profiles' wrappers dropped too). 1 changed, 0 not, -ENOMEM. */
struct async_stack;
int async_exec_tidy_block_on(struct async_stack *s);

#endif
