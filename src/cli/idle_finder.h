/* The tasks a recording of a running program (record -p, trace -p) saw no
 * event of: parked before it began and idle all through it, runnable and
 * never polled, or in one poll all along, they are what a hang leaves
 * behind. When the recording ends, the runtime's task lists are walked in
 * the target's memory as dump does (dump/dump.h, no tracing moment; a
 * running task's thread from each thread's CONTEXT, dump/rt_context.h), and
 * each task idle, runnable or running there is handed to the session
 * (rec_session__before_task()), which writes it after the last events
 * unless an event of it came meanwhile (or it was seen before). Hooked into a recording through recorder_opts' on_session and
 * on_end (record/recorder.h); does nothing for a launched command (every
 * task of it was seen from its spawn). Never prints. */
#ifndef AS_CLI_IDLE_FINDER_H
#define AS_CLI_IDLE_FINDER_H

#include <stddef.h>

#include "record/recorder.h"

struct idle_finder;

/* A finder, not hooked yet. NULL and errno on failure. */
struct idle_finder *idle_finder__new(void);
/* Sets o's on_session, on_end and hook_ctx to f's (o must have none). */
void idle_finder__hook(struct idle_finder *f, struct recorder_opts *o);
/* The walk's outcome: tasks found in the lists (0 when none was made),
 * whether it failed, and why ("" none; borrowed until the free). */
void idle_finder__result(const struct idle_finder *f, size_t *found, bool *failed,
			 const char **err);
/* Accepts NULL. */
void idle_finder__free(struct idle_finder *f);

#endif
