/* The naming of profile mode's task ids (runtime task ids read from each
 * thread's CONTEXT) by walking the runtime's task lists in the target's
 * memory, as dump does (dump/dump.h, never its tracing moment): once
 * attached and whenever unnamed ids were seen (at most every
 * TASK_NAMER_EVERY_NS, backed off up to TASK_NAMER_MAX_NS while walks name
 * none of them), and at the end. Hooked into a recording through
 * recorder_opts' on_session / on_hook_tick / on_unknown_task / on_end
 * (record/recorder.h), it names each id it finds with
 * rec_session__name_task(). Used by profile (and its flight recorder) and
 * serve; follows a new session of another process (serve --name) by
 * reopening what it read of the old one. Never prints. */
#ifndef AS_CLI_TASK_NAMER_H
#define AS_CLI_TASK_NAMER_H

#include <stddef.h>
#include <stdint.h>

#include "record/recorder.h"

#define TASK_NAMER_EVERY_NS (5 * 1000000000ull)
#define TASK_NAMER_MAX_NS (80 * 1000000000ull)

struct task_namer;

/* A namer, not hooked yet. NULL and errno on failure. */
struct task_namer *task_namer__new(void);
/* Sets o's session hooks (on_session, on_hook_tick, on_unknown_task,
 * on_end, hook_ctx) to nm's; the recording then borrows nm. */
void task_namer__hook(struct task_namer *nm, struct recorder_opts *o);
/* Walks made, of which failed, and the last failure's message ("" none;
 * borrowed until the next walk or the free). */
void task_namer__walks(const struct task_namer *nm, size_t *walks, size_t *failed,
		       const char **err);
/* Accepts NULL. */
void task_namer__free(struct task_namer *nm);

#endif
