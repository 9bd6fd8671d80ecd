/* A task of async-task read as dump reads a Tokio task (async_exec.h):
 * its state word, its future at the offset its vtable's layout_info gives,
 * walked with sym/async_stack.h from one near-instant copy of the task,
 * checked against the state word and the __state bytes read again; the
 * executor's wrapper frames dropped (async_task.h), a timer's deadline
 * read. Depends on the dump engine's state (dump_int.h) and the runtime
 * profiles' wrapper tables (data). Never prints. */
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dump/async_exec.h"
#include "dump/async_exec_int.h"
#include "dump/async_task.h"
#include "dump/dump_int.h"
#include "probe/profile.h"
#include "sym/demangle.h"

#define MAX_TASK_SNAP  (1u << 20)   /* a task read in one piece up to this size */
#define RETRY_NS       2000000L     /* between attempts at a busy task */

static void pause_briefly(void)
{
	struct timespec ts = { 0, RETRY_NS };

	nanosleep(&ts, NULL);
}

/* The executors' own wrapper futures (the runtime profiles' tables). */
static size_t wrapper_patterns(const char **out, size_t max)
{
	static const char *const names[] = { "async-std", "smol", "async-executor" };
	size_t n = 0;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct runtime_profile *p = profile_find(names[i]);
		for (size_t w = 0; p && w < p->n_wrappers && n < max; w++) {
			bool dup = false;
			for (size_t k = 0; k < n && !dup; k++)
				dup = !strcmp(out[k], p->wrappers[w].pattern);
			if (!dup)
				out[n++] = p->wrappers[w].pattern;
		}
	}
	return n;
}

/* async-executor 1.5's run() (Executor's and LocalExecutor's): the
 * frames of a block_on's future that are the executor's, and its own loop
 * raced against the future it runs (future.or(async { loop { .. } })). */
static const char *const run_frames[] = {
	"async_executor::{impl#*}::run::{async_fn_env#0}",
};
static const char *const run_loops[] = {
	"async_executor::{impl#*}::run::{async_fn#0}::{async_block_env#0}",
};

/* The future F of a frame "...::run::{async_fn_env#0}<T, F>", or NULL. */
static char *run_future(const char *type)
{
	const char *p = strstr(type, "::run::{async_fn_env#0}<"), *c;
	int depth = 0;

	if (!p)
		return NULL;
	p = strchr(p, '<') + 1;
	for (c = p; *c; c++) {
		if (*c == '<' || *c == '(')
			depth++;
		else if (*c == '>' || *c == ')')
			depth--;
		else if (*c == ',' && !depth)
			break;
	}
	if (*c != ',')
		return NULL;
	c += 1 + (c[1] == ' ');
	size_t len = strlen(c);
	return len > 1 ? strndup(c, len - 1) : NULL;   /* without the closing '>' */
}

int async_exec_tidy_block_on(struct async_stack *s)
{
	const char *pats[20];
	size_t n = wrapper_patterns(pats, 16), k;
	int r = async_task_drop_loops(s, run_loops, sizeof(run_loops) / sizeof(run_loops[0]));

	if (r < 0)
		return r;
	/* the future run is no async fn (pending()): the walk went through
	 * the race into the loop, the only state machine: the chain is that
	 * future alone */
	for (k = 1; !r && k < s->n; k++)
		if (async_task_drop_wrappers_match(s->frames[k].type, run_loops,
						   sizeof(run_loops) / sizeof(run_loops[0])))
			break;
	if (!r && k < s->n) {
		char *fut = run_future(s->frames[k - 1].type), *pretty;
		if (!fut || !(pretty = sym_pretty_future(fut))) {
			free(fut);
			return fut ? -ENOMEM : 0;
		}
		async_stack__clear(s);
		s->leaf_type = fut;
		s->leaf = pretty;
		return 1;
	}
	for (size_t i = 0; i < sizeof(run_frames) / sizeof(run_frames[0]); i++)
		pats[n++] = run_frames[i];
	if (r)
		async_task_drop_wrappers(s, pats, n);
	return r;
}

/* One attempt: 1 done, 0 retry, < 0 ENOMEM. */
static int sample_once(struct async_exec *ax, struct dump_task *t, struct ax_vt *v,
		       const struct ax_copy *cp)
{
	struct ctx *c = ax->c;
	uint64_t s1, s2;
	const char *note;
	int err, ok;

	if (ax_rd64(ax, t->header + ax->hdr_state, &s1)) {
		t->state = "unreadable";
		t->note = "task memory unreadable (freed?)";
		return 1;
	}
	t->state = async_task_state_name(s1, &note);
	t->note = note;
	if (note)
		return !(s1 & ASYNC_TASK_RUNNING);
	if (!ax->snap && !(ax->snap = malloc(MAX_TASK_SNAP)))
		return -ENOMEM;
	c->pm.snap = NULL;
	if (v->size <= MAX_TASK_SNAP && procmem_read_raw(c->pid, t->header, ax->snap, v->size) == 0) {
		c->pm.snap = ax->snap;
		c->pm.snap_addr = t->header;
		c->pm.snap_len = v->size;
	}
	err = async_stack_walk_dyn(c->dt, (Dwarf_Die *)&cp->fut, t->header + v->off_f, procmem_read,
				   &c->pm, c->bias, &t->stack);
	c->pm.snap = NULL;   /* the checks read the live process */
	if (err == -ENOMEM)
		return err;
	if (err) {
		t->note = "task future not described by DWARF";
		return 1;
	}
	ok = ax_rd64(ax, t->header + ax->hdr_state, &s2) == 0 && s2 == s1 &&
	     async_stack_verify(&t->stack, procmem_read, &c->pm) == 1;
	if (ok) {
		const char *pats[16];
		async_task_drop_wrappers(&t->stack, pats, wrapper_patterns(pats, 16));
		t->note = NULL;
		dump_read_deadline(ax->c, t);
		return 1;
	}
	async_stack__clear(&t->stack);
	t->note = "changed while reading";
	return 0;
}

int async_exec__sample(struct async_exec *ax, struct dump_task *t, int attempts)
{
	struct ax_vt *v = ax_task_vt(ax, t->header);
	const struct ax_copy *cp = v ? &ax->copies[v->copy - 1] : NULL;

	if (!v) {
		t->state = "unreadable";
		t->note = "task memory unreadable (freed?)";
		return 0;
	}
	if (!t->name && cp->future && !(t->name = strdup(cp->future)))
		return -ENOMEM;
	if (!cp->typed || !v->layout) {
		uint64_t s = 0;
		const char *note;
		ax_rd64(ax, t->header + ax->hdr_state, &s);
		t->state = async_task_state_name(s, &note);
		t->note = note ? note : !cp->typed ? "no DWARF type for this task's future"
					: "the task's layout_info is unreadable";
		return 0;
	}
	for (int i = 0; i < attempts; i++) {
		if (i)
			pause_briefly();
		int r = sample_once(ax, t, v, cp);
		if (r)
			return r < 0 ? r : 0;
	}
	return 0;
}
