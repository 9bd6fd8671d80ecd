/* The tasks a recording of a running program saw no event of
 * (idle_finder.h). */
#include "cli/idle_finder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump/dump.h"
#include "probe/plan.h"
#include "probe/threads.h"
#include "record/idle_refs.h"
#include "sym/dwarf_types.h"
#include "sym/elf_image.h"

struct idle_finder {
	struct rec_session *s;
	size_t found;
	bool walked, failed;
	char err[512];
};

static void on_session(void *ctx, struct rec_session *s)
{
	((struct idle_finder *)ctx)->s = s;
}

/* Walks the task lists once; hands each idle or runnable task over. */
static void on_end(void *ctx)
{
	struct idle_finder *f = ctx;
	struct elf_image *img = NULL;
	struct dwarf_types *dt = NULL;
	struct proc_threads *threads = NULL;
	struct probe_plan *plan = NULL;
	struct dump_result r;
	char exe[64], err[512] = "";
	pid_t pid;

	if (!f->s || f->walked || !rec_session__attached(f->s))
		return;
	f->walked = true;
	pid = rec_session__pid(f->s);
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	img = elf_image__open(exe);
	dt = img ? dwarf_types__open_fd(elf_image__dwarf_fd(img)) : NULL;
	threads = proc_threads__open(pid, err, sizeof(err));
	/* the poll copies (never attached): they say each task's root future */
	plan = img ? probe_plan__build(img, NULL, 0, err, sizeof(err)) : NULL;
	struct dump_opts o = { .pid = pid, .attempts = 1, .no_trace = true, .img = img, .dt = dt,
			       .threads = threads, .probes = plan ? plan->probes : NULL,
			       .n_probes = plan ? plan->n : 0 };

	if (!img || !threads || dump_run(&o, &r, err, sizeof(err))) {
		f->failed = true;
		snprintf(f->err, sizeof(f->err), "%s", err[0] ? err : "cannot open its binary");
	} else {
		f->found = r.n;
		for (size_t i = 0; i < r.n; i++) {
			const struct dump_task *t = &r.tasks[i];
			bool idle = t->state && !strcmp(t->state, "idle");
			bool queued = t->state && !strcmp(t->state, "runnable");

			if ((idle || queued) &&
			    rec_session__before_task(f->s, &(struct idle_before){
				    .header = t->header, .id = t->id, .name = t->name,
				    .queued = queued, .wakers_known = idle && t->wakers_known,
				    .wakers = t->wakers }))
				break;   /* out of memory: no notes */
		}
		dump_result__clear(&r);
	}
	probe_plan__free(plan);
	proc_threads__close(threads);
	dwarf_types__free(dt);
	elf_image__free(img);
}

struct idle_finder *idle_finder__new(void)
{
	return calloc(1, sizeof(struct idle_finder));
}

void idle_finder__hook(struct idle_finder *f, struct recorder_opts *o)
{
	o->on_session = on_session;
	o->on_end = on_end;
	o->hook_ctx = f;
}

void idle_finder__result(const struct idle_finder *f, size_t *found, bool *failed,
			 const char **err)
{
	*found = f->found;
	*failed = f->failed;
	*err = f->err;
}

void idle_finder__free(struct idle_finder *f)
{
	free(f);
}
