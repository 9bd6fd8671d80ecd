/* async-task's facts that need no process: its state word said as dump
 * says a task's state, and a chain's leading wrapper frames dropped
 * (async_task.h). Pure C: depends on sym/demangle, sym/dwarf_names' name
 * helper and util/glob only. */
#include "dump/async_task.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
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

static bool wrapper(const char *type, const char *const *patterns, size_t n);

bool async_task_drop_wrappers_match(const char *type, const char *const *patterns, size_t n)
{
	return wrapper(type, patterns, n);
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

static void branch_release(struct async_branch *b)
{
	free(b->state);
	async_stack__clear(&b->stack);
}

int async_task_drop_loops(struct async_stack *s, const char *const *loops, size_t n)
{
	size_t keep = 0;

	if (!s->macro || !s->n || !s->n_branches)
		return 0;
	for (size_t i = 0; i < s->n_branches; i++) {
		struct async_branch *b = &s->branches[i];
		if (b->stack.n && wrapper(b->stack.frames[0].type, loops, n))
			branch_release(b);
		else
			s->branches[keep++] = *b;
	}
	s->n_branches = keep;
	if (keep != 1 || strcmp(s->branches[0].state, "pending"))
		return 0;
	/* one future left: its chain is s's own from here */
	struct async_stack *in = &s->branches[0].stack;
	struct async_frame *f = realloc(s->frames, (s->n + in->n) * sizeof(*f));
	struct async_frame *last;
	char *via = NULL;

	if (!f)
		return -ENOMEM;
	s->frames = f;
	last = &s->frames[s->n - 1];
	if (asprintf(&via, "%s%s%s%s%s", last->via ? last->via : "", last->via ? " > " : "",
		     s->macro, in->via ? " > " : "", in->via ? in->via : "") < 0)
		return -ENOMEM;
	free(last->via);
	last->via = via;
	memcpy(s->frames + s->n, in->frames, in->n * sizeof(*f));
	s->n += in->n;
	free(in->frames);
	in->frames = NULL;
	in->n = 0;
	free(s->macro);
	free(s->leaf);
	free(s->leaf_type);
	s->macro = in->macro;
	s->leaf = in->leaf;
	s->leaf_type = in->leaf_type;
	s->leaf_addr = in->leaf_addr;
	s->leaf_die = in->leaf_die;
	in->macro = in->leaf = in->leaf_type = NULL;
	struct async_branch *old = s->branches;
	s->branches = in->branches;
	s->n_branches = in->n_branches;
	in->branches = NULL;
	in->n_branches = 0;
	s->truncated |= in->truncated;
	if (!s->error)
		s->error = in->error;
	/* the timers and combinators it passed, kept for what is read of them */
	if (in->n_passed) {
		struct async_passed *p = realloc(s->passed, (s->n_passed + in->n_passed) * sizeof(*p));
		if (p) {
			memcpy(p + s->n_passed, in->passed, in->n_passed * sizeof(*p));
			s->passed = p;
			s->n_passed += in->n_passed;
		}
	}
	branch_release(&old[0]);
	free(old);
	return 1;
}
