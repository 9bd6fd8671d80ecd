/* async-task 4.3's task facts that need no process (unit-tested): its
 * state word (state.rs) said as dump says a task's state, and the leading
 * frames of a chain that are an executor's own wrapper futures (the runtime
 * profiles' future wrappers) dropped. Pure C, no I/O; owns nothing it is
 * given. */
#ifndef AS_DUMP_ASYNC_TASK_H
#define AS_DUMP_ASYNC_TASK_H

#include <stddef.h>
#include <stdint.h>

#include "sym/async_stack.h"

/* state.rs: flags in the low byte, the reference count above */
#define ASYNC_TASK_SCHEDULED UINT64_C(0x1)
#define ASYNC_TASK_RUNNING   UINT64_C(0x2)
#define ASYNC_TASK_COMPLETED UINT64_C(0x4)
#define ASYNC_TASK_CLOSED    UINT64_C(0x8)
#define ASYNC_TASK_REFERENCE UINT64_C(0x100)

/* "running", "completed", "runnable" or "idle"; *note (static) why no
 * chain is read ("running, not sampled", ...), or NULL when one is. */
const char *async_task_state_name(uint64_t state, const char **note);

/* Drops the leading frames of s whose type, without its generic
 * arguments, matches one of the glob patterns[0..n), keeping at least one
 * frame (their strings freed). Returns how many were dropped. */
size_t async_task_drop_wrappers(struct async_stack *s, const char *const *patterns, size_t n);

/* An executor's own loop raced against the future it runs (async-
 * executor's run(): future.or(loop)): in s's innermost frame's branches,
 * those whose chain starts with a frame matching one of loops[0..n) are
 * dropped; when one branch is left, its chain is spliced into s (its
 * frames after s's, the combinator named in the frame's via). Returns 1
 * when spliced, 0 not, -ENOMEM. */
int async_task_drop_loops(struct async_stack *s, const char *const *loops, size_t n);

/* Whether type (generics aside) matches one of the glob patterns[0..n). */
bool async_task_drop_wrappers_match(const char *type, const char *const *patterns, size_t n);

#endif
