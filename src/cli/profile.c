/* `asyncscope profile`: record's probe-free mode (no uprobe at all): CPU
 * samples and off-CPU intervals of the target, each attributed to the
 * Tokio task the thread's CONTEXT names then (recorder_opts.profile;
 * bpf/task_ctx.bpf.h), into a trace that report, blocking, cpu and the
 * exports read. Tasks are named by id from the runtime's task lists, walked
 * in memory as dump does (dump/dump.h, never its tracing moment): when
 * attached and whenever unnamed ids were seen (at most every
 * DISCOVER_EVERY_NS, backed off to DISCOVER_MAX_NS while walks name none
 * of them), and at the end. The recording itself, its options'
 * parsing and its summary are record's (cli/record_opts.h, record_run()). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/flight.h"
#include "cli/record_opts.h"
#include "cli/steps.h"
#include "dump/dump.h"
#include "dump/procmem.h"
#include "dump/rt_context.h"
#include "probe/plan.h"
#include "probe/threads.h"
#include "record/recorder.h"
#include "sym/dwarf_types.h"
#include "sym/elf_image.h"
#include "util/clock.h"

#define NS_PER_S 1000000000ull
/* Unnamed task ids seen: the task lists walked again, at most this often
 * (a walk reads every task: about 0.04 ms of CPU a task, 0.4% of a CPU for
 * 1000 tasks at this pace). */
#define DISCOVER_EVERY_NS (5 * NS_PER_S)
/* A walk that names none of them (ids of tasks gone, or of spawn_blocking
 * tasks, in no list): the next waits twice as long, up to this. */
#define DISCOVER_MAX_NS (80 * NS_PER_S)
/* ... and looked at this often. */
#define CHECK_EVERY_NS (NS_PER_S / 4)

enum { PO_OUTPUT = 'o', PO_SAMPLE = 2000, PO_OFFCPU_MIN, PO_NO_OFFCPU, PO_DWARF };

static const struct cli_opt profile_opts[] = {
	{ "output", 'o', CLI_STRING, PO_OUTPUT, "FILE", "the trace file (default asyncscope.trace); with --flight, the\n"
	  "directory of the snapshots (default .)" },
	{ "sample", 0, CLI_RATE, PO_SAMPLE, NULL,
	  "CPU samples per second per CPU (99 or 99Hz, up to 100000; default\n"
	  "99)", 1, 100000, false },
	{ "offcpu-min", 0, CLI_DURATION, PO_OFFCPU_MIN, NULL,
	  "shortest off-CPU interval of a task kept, up to 60s (default 100us)", 0,
	  60 * NS_PER_S, false },
	{ "no-offcpu", 0, CLI_FLAG, PO_NO_OFFCPU, NULL,
	  "CPU samples only: no off-CPU intervals (no sched_switch program)", 0, 0, false },
	{ "dwarf", 0, CLI_FLAG, PO_DWARF, NULL,
	  "unwind user stacks by their DWARF call frame information (8 KiB of\n"
	  "stack copied per sample or switch), for builds without frame pointers",
	  0, 0, false },
	{ 0 },
};

static const struct cli_opt *const tables[] = { profile_opts, record_target_opts, flight_opts,
						  NULL };

const struct cli_command profile_command = {
	.name = "profile",
	.summary = "Profiles an async Rust program without probes: CPU samples and off-CPU\n"
		   "intervals per Tokio task (read from each thread's CONTEXT), into a trace\n"
		   "file for cpu, blocking, report and export.",
	.operands = RECORD_OPERANDS,
	.tables = tables,
	.notes = "No uprobe is attached: polls, wakes and parks are not recorded (report says\n"
		 "so); tasks are named from the runtime's task lists, read from memory.",
	.stop_at_operand = true,
};

/* The naming of task ids, across the recording. */
struct namer {
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
static struct held *read_held(struct namer *nm, size_t *n)
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
static void runtime_tasks(struct namer *nm, const struct held *h, size_t n,
			  const struct dump_result *r)
{
	for (size_t i = 0; i < n; i++)
		if (h[i].in_loop && !in_lists(r, h[i].id))
			rec_session__name_task(nm->s, h[i].id, NULL, true);
}

/* Walks the task lists; names every task found (by id), and the runtime's
 * own. */
/* How many ids seen are still unnamed. */
static size_t n_unnamed(struct namer *nm)
{
	size_t n;
	uint64_t *ids = rec_session__unnamed(nm->s, &n);

	free(ids);
	return n;
}

static bool unnamed(struct namer *nm)
{
	return n_unnamed(nm) > 0;
}

static void walk(struct namer *nm, uint64_t now)
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

static void on_session(void *ctx, struct rec_session *s)
{
	struct namer *nm = ctx;

	nm->s = s;
	nm->pid = rec_session__pid(s);
}

static void on_tick(void *ctx, uint64_t now)
{
	struct namer *nm = ctx;

	if (now - nm->last_check < CHECK_EVERY_NS)
		return;
	nm->last_check = now;
	if ((!nm->walks || now - nm->last_walk >= nm->every) && unnamed(nm))
		walk(nm, now);
}

static void on_unknown(void *ctx, uint64_t id)
{
	struct namer *nm = ctx;
	uint64_t now = clock_ns(CLOCK_MONOTONIC);

	(void)id;
	if (!nm->walks || now - nm->last_walk >= nm->every)
		walk(nm, now);
}

static void on_end(void *ctx)
{
	struct namer *nm = ctx;

	/* a target that exited has no lists left to read: its ids stay unnamed */
	if (nm->s && unnamed(nm) && !(kill(nm->pid, 0) && errno == ESRCH))
		walk(nm, clock_ns(CLOCK_MONOTONIC));
}

/* profile's arguments, and the flight recorder's */
struct profile_cli {
	struct record_args a;
	struct flight_args f;
	const char *output;          /* -o as given, NULL none */
};

static int on_opt(void *ctx, const struct cli_opt *opt, const struct cli_val *v)
{
	struct profile_cli *c = ctx;
	struct record_args *a = &c->a;

	switch (opt->key) {
	case PO_OUTPUT: c->output = a->o.output = v->str; return 0;
	case PO_SAMPLE: a->o.sample_hz = (uint32_t)v->num; return 0;
	case PO_OFFCPU_MIN: a->o.offcpu_min_ns = v->num ? v->num : 1; return 0;
	case PO_NO_OFFCPU: a->o.offcpu = false; return 0;
	case PO_DWARF: a->o.dwarf = true; return 0;
	default: {
		int ret = flight_args__set(&c->f, opt, v);
		return ret >= 0 ? ret : record_args__set(a, opt, v);
	}
	}
}

int cmd_profile(int argc, char **argv)
{
	struct profile_cli c = { .a = { .o = { .output = "asyncscope.trace", .profile = true,
					       .sample_hz = 99, .offcpu = true } } };
	struct record_args *a = &c.a;
	struct namer nm = { .every = DISCOVER_EVERY_NS };
	int first, ret;

	flight_args__init(&c.f);
	ret = cli_parse(&profile_command, argc, argv, on_opt, &c, &first);
	if (ret < 0 && !(ret = flight_args__finish(&c.f, "profile")) &&
	    !(ret = record_args__finish(a, &profile_command, argc, argv, first))) {
		if (c.f.blocking_ns && !a->o.offcpu) {
			cli_error("--trigger-blocking watches off-CPU intervals: drop --no-offcpu");
			ret = 2;
			goto out;
		}
		a->o.on_session = on_session;
		a->o.on_hook_tick = on_tick;
		a->o.on_unknown_task = on_unknown;
		a->o.on_end = on_end;
		a->o.hook_ctx = &nm;
		ret = c.f.window_ns ? flight_run(&a->o, &c.f, c.output ? c.output : ".", true) :
				      record_run(&a->o);
		if (nm.failed)
			cli_error("warning: %zu of %zu walks of the task lists failed (%s): "
				  "their tasks' ids are not named", nm.failed, nm.walks, nm.err);
	}
out:
	proc_threads__close(nm.threads);
	rt_context__free(nm.rc);
	probe_plan__free(nm.plan);
	dwarf_types__free(nm.dt);
	elf_image__free(nm.img);
	record_args__free(a);
	return ret;
}
