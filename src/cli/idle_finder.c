/* The tasks a recording of a running program saw no event of
 * (idle_finder.h). */
#include "cli/idle_finder.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump/dump.h"
#include "dump/procmem.h"
#include "dump/rt_context.h"
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

static int raw_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return procmem_read_raw(*(const pid_t *)ctx, addr, buf, len);
}

/* A thread and the task id its CONTEXT holds: the task it polls. */
struct polling {
	uint64_t id;
	pid_t tid;
	char comm[17];
};

/* The task id each thread of pid polls now (rt_context.h), where the
 * runtime's CONTEXT is described; *n of them (0: none known). */
static struct polling *read_polling(pid_t pid, struct dwarf_types *dt, const char *exe,
				    struct proc_threads *threads, size_t *n)
{
	struct rt_task_id_loc loc;
	struct proc_thread *th = NULL;
	struct polling *p = NULL;
	const char *why;
	size_t nt = 0;
	char err[256];
	struct rt_context *rc = dt ? rt_context__open(dt, exe, &why) : NULL;

	*n = 0;
	if (rc && !rt_context__task_id_loc(rc, &loc) &&
	    !proc_threads__read_open(threads, &th, &nt, err, sizeof(err)) &&
	    (p = calloc(nt ? nt : 1, sizeof(*p)))) {
		for (size_t i = 0; i < nt; i++) {
			uint64_t id;

			if (rt_task_id_read(&loc, th[i].fsbase, raw_read, &pid, &id) != 1 || !id)
				continue;
			p[*n] = (struct polling){ .id = id, .tid = th[i].tid };
			snprintf(p[*n].comm, sizeof(p[*n].comm), "%s", th[i].comm);
			(*n)++;
		}
	}
	free(th);
	rt_context__free(rc);
	return p;
}

/* The thread that polls task id, NULL unknown (or two do: one drops it). */
static const struct polling *polled_on(const struct polling *p, size_t n, uint64_t id)
{
	const struct polling *on = NULL;

	for (size_t i = 0; id && i < n; i++)
		if (p[i].id == id) {
			if (on)
				return NULL;
			on = &p[i];
		}
	return on;
}

/* Whether pid has exited: gone, or a zombie its parent has not reaped
 * yet (an attached target's parent is not the recorder). */
static bool exited(pid_t pid)
{
	char path[64], buf[256];
	FILE *f;
	size_t n;

	if (kill(pid, 0) && errno == ESRCH)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return true;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* "pid (comm) S ...": the state after the last ')' */
	const char *p = strrchr(buf, ')');

	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

static void on_session(void *ctx, struct rec_session *s)
{
	((struct idle_finder *)ctx)->s = s;
}

/* Walks the task lists once; hands each idle, runnable or running task
 * over (a running one with the thread that polls it). */
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
	if (exited(pid))
		return;   /* no lists left to read, nothing hangs */
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
		f->failed = !exited(pid);   /* one that exited meanwhile: nothing to say */
		snprintf(f->err, sizeof(f->err), "%s", err[0] ? err : "cannot open its binary");
	} else {
		/* the thread a running task is polled on: its CONTEXT's task id */
		size_t np;
		struct polling *p = read_polling(pid, dt, exe, threads, &np);

		f->found = r.n;
		for (size_t i = 0; i < r.n; i++) {
			const struct dump_task *t = &r.tasks[i];
			bool idle = t->state && !strcmp(t->state, "idle");
			bool queued = t->state && !strcmp(t->state, "runnable");
			bool running = t->state && !strcmp(t->state, "running");
			const struct polling *on = running ? polled_on(p, np, t->id) : NULL;
			struct idle_before b = {
				.header = t->header, .id = t->id, .name = t->name, .queued = queued,
				.running = running, .tid = on ? (uint32_t)on->tid : 0,
				.wakers_known = idle && t->wakers_known, .wakers = t->wakers,
			};

			if (on)
				memcpy(b.comm, on->comm, sizeof(b.comm));
			if ((idle || queued || running) && rec_session__before_task(f->s, &b))
				break;   /* out of memory: no notes */
		}
		free(p);
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
