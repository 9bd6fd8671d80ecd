/* The naming of profile mode's task ids (task_namer.h). */
#include "cli/task_namer.h"

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
#include "sym/dwarf_types.h"
#include "sym/elf_image.h"
#include "util/clock.h"

#define NS_PER_S 1000000000ull
/* Unnamed task ids seen: the task lists walked again, at most this often
 * (a walk reads every task: about 0.04 ms of CPU a task, 0.4% of a CPU for
 * 1000 tasks at this pace). */
#define DISCOVER_EVERY_NS TASK_NAMER_EVERY_NS
/* A walk that names none of them (ids of tasks gone, or of spawn_blocking
 * tasks, in no list): the next waits twice as long, up to this. */
#define DISCOVER_MAX_NS TASK_NAMER_MAX_NS
/* ... and looked at this often. */
#define CHECK_EVERY_NS (NS_PER_S / 4)

/* The naming of task ids, across the recording. */
struct task_namer {
	struct rec_session *s;
	pid_t pid;
	struct elf_image *img;        /* the target's binary and DWARF, opened at the */
	struct dwarf_types *dt;       /* first walk (a launched command has exec'd then) */
	struct proc_threads *threads; /* the thread iterator, kept loaded */
	struct probe_plan *plan;      /* the runtime's probe points, never attached */
	struct rt_context *rc;        /* each thread's CONTEXT (runtime tasks) */
	struct rt_task_id_loc loc;
	bool opened;
	uint64_t last_walk, last_check;
	uint64_t every;               /* the pause before the next walk (backed off) */
	size_t walks, failed;
	size_t walks_before;          /* of the sessions before this one */
	char err[512];                /* the last walk's failure */
};

static int raw_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return procmem_read_raw(*(const pid_t *)ctx, addr, buf, len);
}

static bool in_lists(const struct dump_result *r, uint64_t id)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->tasks[i].id == id)
			return true;
	return false;
}

/* The threads' current task ids, read before the lists are walked. */
struct held {
	uint64_t id;
	bool in_loop;
};

/* Each thread's current task id, and whether it runs its worker's own loop
 * (rt_task_in_loop(): the test the BPF programs make at every record). */
static struct held *read_held(struct task_namer *nm, size_t *n)
{
	struct proc_thread *th = NULL;
	struct held *h = NULL;
	size_t nt = 0;
	char err[256];

	*n = 0;
	if (!nm->rc || !nm->threads || proc_threads__read_open(nm->threads, &th, &nt, err, sizeof(err)))
		return NULL;
	h = calloc(nt ? nt : 1, sizeof(*h));
	for (size_t i = 0; h && i < nt; i++) {
		uint64_t id;
		if (rt_task_id_read(&nm->loc, th[i].fsbase, raw_read, &nm->pid, &id) != 1)
			continue;
		h[(*n)++] = (struct held){ .id = id, .in_loop = rt_task_in_loop(&nm->loc, th[i].fsbase,
									 raw_read, &nm->pid) == 1 };
	}
	free(th);
	return h;
}

/* A worker's own loop runs inside the poll of a blocking task (its launch
 * task), in no task list: an id held in a worker's loop and in no list is
 * the runtime's (one in a list: a user task dropped outside its poll). */
static void runtime_tasks(struct task_namer *nm, const struct held *h, size_t n,
			  const struct dump_result *r)
{
	for (size_t i = 0; i < n; i++)
		if (h[i].in_loop && !in_lists(r, h[i].id))
			rec_session__name_task(nm->s, h[i].id, NULL, true);
}

/* Walks the task lists; names every task found (by id), and the runtime's
 * own. */
/* How many ids seen are still unnamed. */
static size_t n_unnamed(struct task_namer *nm)
{
	size_t n;
	uint64_t *ids = rec_session__unnamed(nm->s, &n);

	free(ids);
	return n;
}

static bool unnamed(struct task_namer *nm)
{
	return n_unnamed(nm) > 0;
}

static void walk(struct task_namer *nm, uint64_t now)
{
	size_t before = n_unnamed(nm);
	struct dump_result r;
	char err[512] = "";

	nm->last_walk = now;
	if (!nm->opened) {
		char exe[64];
		nm->opened = true;
		snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)nm->pid);
		nm->img = elf_image__open(exe);
		nm->dt = nm->img ? dwarf_types__open_fd(elf_image__dwarf_fd(nm->img)) : NULL;
		nm->threads = proc_threads__open(nm->pid, err, sizeof(err));
		/* the poll copies (never attached): they say each task's root future */
		nm->plan = nm->img ? probe_plan__build(nm->img, NULL, 0, err, sizeof(err)) : NULL;
		const char *why;
		nm->rc = nm->dt ? rt_context__open(nm->dt, exe, &why) : NULL;
		if (nm->rc && rt_context__task_id_loc(nm->rc, &nm->loc)) {
			rt_context__free(nm->rc);
			nm->rc = NULL;
		}
	}
	size_t n_held;
	struct held *held = read_held(nm, &n_held);
	/* no tracing moment (it would attach probes): CONTEXT and the heap only */
	struct dump_opts o = { .pid = nm->pid, .attempts = 1, .no_trace = true, .img = nm->img,
			       .dt = nm->dt, .threads = nm->threads,
			       .probes = nm->plan ? nm->plan->probes : NULL,
			       .n_probes = nm->plan ? nm->plan->n : 0 };
	nm->walks++;
	if (dump_run(&o, &r, err, sizeof(err))) {
		nm->failed++;
		snprintf(nm->err, sizeof(nm->err), "%s", err);
		free(held);
		nm->every = nm->every * 2 < DISCOVER_MAX_NS ? nm->every * 2 : DISCOVER_MAX_NS;
		return;
	}
	for (size_t i = 0; i < r.n; i++)
		if (r.tasks[i].id && rec_session__name_task(nm->s, r.tasks[i].id, r.tasks[i].name,
							    false))
			break;   /* out of memory: the rest unnamed */
	runtime_tasks(nm, held, n_held, &r);
	free(held);
	dump_result__clear(&r);
	/* named none of them: they are in no list; ask less often */
	nm->every = n_unnamed(nm) < before ? DISCOVER_EVERY_NS :
		    nm->every * 2 < DISCOVER_MAX_NS ? nm->every * 2 : DISCOVER_MAX_NS;
}

/* What the walks opened of the target, closed (its end, or another one). */
static void close_target(struct task_namer *nm)
{
	proc_threads__close(nm->threads);
	rt_context__free(nm->rc);
	probe_plan__free(nm->plan);
	dwarf_types__free(nm->dt);
	elf_image__free(nm->img);
	nm->threads = NULL;
	nm->rc = NULL;
	nm->plan = NULL;
	nm->dt = NULL;
	nm->img = NULL;
	nm->opened = false;
}

static void on_session(void *ctx, struct rec_session *s)
{
	struct task_namer *nm = ctx;

	/* a session of another process (serve --name, after a restart): what
	 * was opened of the old one is no use, and the pacing starts afresh */
	if (nm->s && nm->pid != rec_session__pid(s)) {
		close_target(nm);
		nm->walks_before += nm->walks;
		nm->walks = 0;
		nm->every = DISCOVER_EVERY_NS;
		nm->last_walk = nm->last_check = 0;
	}
	nm->s = s;
	nm->pid = rec_session__pid(s);
}

static void on_tick(void *ctx, uint64_t now)
{
	struct task_namer *nm = ctx;

	if (now - nm->last_check < CHECK_EVERY_NS)
		return;
	nm->last_check = now;
	if ((!nm->walks || now - nm->last_walk >= nm->every) && unnamed(nm))
		walk(nm, now);
}

static void on_unknown(void *ctx, uint64_t id)
{
	struct task_namer *nm = ctx;
	uint64_t now = clock_ns(CLOCK_MONOTONIC);

	(void)id;
	if (!nm->walks || now - nm->last_walk >= nm->every)
		walk(nm, now);
}

static void on_end(void *ctx)
{
	struct task_namer *nm = ctx;

	/* a target that exited has no lists left to read: its ids stay unnamed */
	if (nm->s && unnamed(nm) && !(kill(nm->pid, 0) && errno == ESRCH))
		walk(nm, clock_ns(CLOCK_MONOTONIC));
}

struct task_namer *task_namer__new(void)
{
	struct task_namer *nm = calloc(1, sizeof(*nm));

	if (nm)
		nm->every = DISCOVER_EVERY_NS;
	return nm;
}

void task_namer__hook(struct task_namer *nm, struct recorder_opts *o)
{
	o->on_session = on_session;
	o->on_hook_tick = on_tick;
	o->on_unknown_task = on_unknown;
	o->on_end = on_end;
	o->hook_ctx = nm;
}

void task_namer__walks(const struct task_namer *nm, size_t *walks, size_t *failed,
		       const char **err)
{
	*walks = nm->walks + nm->walks_before;
	*failed = nm->failed;
	*err = nm->err;
}

void task_namer__free(struct task_namer *nm)
{
	if (!nm)
		return;
	close_target(nm);
	free(nm);
}
