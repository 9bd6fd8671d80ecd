/* async-task's facts that need no process: its state word said as dump
 * says a task's state, and a chain's leading wrapper frames dropped
 * (async_task.h). Pure C: depends on sym/demangle and util/glob only. */
#include "dump/async_task.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sym/demangle.h"
#include "util/glob.h"

const char *async_task_state_name(uint64_t s, const char **note)
{
	*note = NULL;
	if (s & ASYNC_TASK_RUNNING) {
		*note = "running, not sampled";
		return "running";
	}
	if (s & (ASYNC_TASK_COMPLETED | ASYNC_TASK_CLOSED)) {
		*note = s & ASYNC_TASK_CLOSED ? "completed or cancelled, future dropped"
					      : "completed, output not yet taken";
		return "completed";
	}
	return s & ASYNC_TASK_SCHEDULED ? "runnable" : "idle";
}

static void frame_release(struct async_frame *f)
{
	free(f->type);
	free(f->future);
	free(f->state);
	free(f->file);
	free(f->via);
}

size_t async_task_drop_wrappers(struct async_stack *s, const char *const *patterns, size_t n)
{
	size_t drop = 0;

	while (drop + 1 < s->n && s->frames[drop].type) {
		char *base = sym_strip_generics(s->frames[drop].type);
		bool hit = false;
		for (size_t i = 0; base && i < n && !hit; i++)
			hit = glob_match(patterns[i], base);
		free(base);
		if (!hit)
			break;
		drop++;
	}
	for (size_t i = 0; i < drop; i++)
		frame_release(&s->frames[i]);
	if (drop)
		memmove(s->frames, s->frames + drop, (s->n - drop) * sizeof(*s->frames));
	s->n -= drop;
	return drop;
}
