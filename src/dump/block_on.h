/* The future each thread blocked in a runtime's block_on drives (main's
 * async body under #[tokio::main]; a Runtime::block_on or Handle::block_on
 * on any thread), which is in no task list: the thread's registers from
 * the BPF task iterator (probe/threads.h), its stack unwound with CFI
 * through libdwfl (callee-saved registers recovered frame by frame), the
 * DWARF scopes at each frame's pc (inlined subroutines included: block_on
 * is generic and mostly inlined) searched for a block_on function of the
 * runtime's (by its name, runtime data kept in block_on.c's table), its
 * future variable's location evaluated at that pc (dump/frame_loc.h), the
 * future's chain walked as a task's (sym/async_stack.h).
 *
 * Where DWARF gives no location of the future at that pc ("location
 * optimized out": rustc keeps none for pin!'s copy in CachedParkThread::
 * block_on), the entry says so; the future is then looked for in the frame
 * itself: a future cannot move once polled, so the one copy of its type
 * in a Suspend state there is the live one (said as found by a frame
 * scan). A thread whose stack holds no block_on has no entry; one whose
 * block_on could not be read has one that says why. Internal to src/dump. */
#ifndef AS_DUMP_BLOCK_ON_H
#define AS_DUMP_BLOCK_ON_H

#include <stddef.h>

#include "dump/dump_int.h"

struct proc_thread;

/* Every thread of th[0..n) (NULL: read with the thread iterator here) that
 * is in a block_on: appended to c->res->block_ons. Returns 0 or -ENOMEM
 * (an unwinder that cannot start leaves the list empty). */
int dump_block_ons(struct ctx *c, const struct proc_thread *th, size_t n);

/* Frees what the entries own (the array too). */
void dump_block_ons__free(struct dump_block_on *b, size_t n);

#endif
