/* async-task's facts that need no process: its state word said as dump
 * says a task's state, and a chain's leading wrapper frames dropped
 * (async_task.h). Pure C: depends on sym/demangle, sym/dwarf_names' name
 * helper and util/glob only. */
#include "dump/async_task.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sym/demangle.h"
#include "sym/dwarf_names.h"
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

static bool wrapper(const char *type, const char *const *patterns, size_t n)
{
	char *base = type ? sym_strip_generics(type) : NULL;
	bool hit = false;

	for (size_t i = 0; base && i < n && !hit; i++)
		hit = glob_match(patterns[i], base);
	free(base);
	return hit;
}

size_t async_task_drop_wrappers(struct async_stack *s, const char *const *patterns, size_t n)
{
	size_t drop = 0, all = 0;

	while (all < s->n && wrapper(s->frames[all].type, patterns, n))
		all++;
	if (all == s->n && s->leaf && !s->macro && !s->n_branches) {
		/* nothing but wrappers, around a future that is no async fn
		 * (SupportTaskLocals<Task<T>>): the chain is that future alone */
		while (s->leaf_type && wrapper(s->leaf_type, patterns, n)) {
			char *in = sym_first_generic_arg(s->leaf_type), *pretty;
			if (!in || !(pretty = sym_pretty_future(in))) {
				free(in);
				break;
			}
			free(s->leaf_type);
			free(s->leaf);
			s->leaf_type = in;
			s->leaf = pretty;
			s->leaf_addr = 0;   /* its DIE is not known: nothing read in it */
		}
		drop = all;
	} else {
		/* the leading wrappers, at least one frame kept */
		drop = all < s->n ? all : s->n ? s->n - 1 : 0;
	}
	for (size_t i = 0; i < drop; i++)
		frame_release(&s->frames[i]);
	if (drop)
		memmove(s->frames, s->frames + drop, (s->n - drop) * sizeof(*s->frames));
	s->n -= drop;
	return drop;
}
