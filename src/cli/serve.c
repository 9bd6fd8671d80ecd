/* `asyncscope serve (-p PID | --name COMM)`: a long-running agent. It
 * records the target as `profile` does (CPU samples and off-CPU intervals
 * attributed to the task each thread's CONTEXT names, no probe; with
 * --tasks the task probes too, counting in the kernel: record/agg.h), with
 * no trace file: each event goes into bounded metrics (serve/registry.h)
 * and into the pprof windows open (serve/window.h), served over HTTP
 * (serve/http.h): /metrics in Prometheus' text format, /debug/pprof/profile
 * and /debug/pprof/offcpu as gzip'd pprof. The recording is the recorder's
 * own loop (recorder_run(): its hooks on_event, on_stack, on_tick), its
 * tasks named by profile's namer (cli/task_namer.h); the HTTP server runs
 * on its own thread, and one lock guards what both touch.
 *
 * With --name the agent follows the target across restarts: when it exits,
 * /proc is scanned every second for the next process of that name; every
 * counter goes on from where it was (no pid label anywhere), and
 * asyncscope_target_restarts_total counts the processes attached after the
 * first. Several processes of that name: the oldest (earliest start, then
 * lowest pid) is followed, and the choice said once. The agent never stops
 * or launches a target. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "serve/culprit.h"
#include "cli/commands.h"
#include "cli/record_opts.h"
#include "cli/steps.h"
#include "cli/task_namer.h"
#include "probe/profile.h"
#include "record/agg.h"
#include "record/recorder.h"
#include "serve/expo.h"
#include "serve/http.h"
#include "serve/registry.h"
#include "serve/stacks.h"
#include "serve/window.h"
#include "util/clock.h"
#include "util/glob.h"
#include "util/strtab.h"
#include "util/u64map.h"

#define NS_PER_S 1000000000ull
#define NS_PER_MS 1000000ull
#define SERVE_LISTEN "127.0.0.1:9947"
/* profile mode's task ids mapped to their rows: past this many, the map
 * and the session's own are emptied (ids of live tasks are named again) */
#define SERVE_MAX_IDS (1u << 18)
/* a window is over once its end is this far behind (the ring buffer is
 * read every 100 ms: its events are in) */
#define WINDOW_DRAIN_NS (250 * NS_PER_MS)
#define VERSION "0.1.0"

enum {
	SO_NAME = 4000, SO_LISTEN, SO_TASKS, SO_SAMPLE, SO_OFFCPU_MIN, SO_MAX_GROUPS, SO_LONG_POLL,
	SO_STALL, SO_DWARF,
};

static const struct cli_opt serve_opts[] = {
	{ "name", 0, CLI_STRING, SO_NAME, "COMM",
	  "follow the process named COMM (its /proc comm, or its executable's base\n"
	  "name) across restarts; several: the oldest", 0, 0, true },
	{ "listen", 0, CLI_STRING, SO_LISTEN, "ADDR:PORT",
	  "where to serve HTTP (default " SERVE_LISTEN ", loopback only; :PORT\n"
	  "for every address, port 0 for any free one)", 0, 0, false },
	{ "tasks", 0, CLI_FLAG, SO_TASKS, NULL,
	  "also attach the task probes (task mode's cost), counting polls, poll\n"
	  "durations, scheduling delays, wakes, stalls and parks in the kernel", 0, 0, false },
	{ "sample", 0, CLI_RATE, SO_SAMPLE, NULL,
	  "CPU samples per second per CPU (99 or 99Hz, up to 10000; default 99)", 1, 10000,
	  false },
	{ "offcpu-min", 0, CLI_DURATION, SO_OFFCPU_MIN, NULL,
	  "shortest off-CPU interval counted, up to 1s (default 100us)", 1000, NS_PER_S, false },
	{ "max-groups", 0, CLI_COUNT, SO_MAX_GROUPS, NULL,
	  "label values per label set (tasks, task groups, culprits), 1 to 10000\n"
	  "(default 100); past it they are summed as 'other'", 1, 10000, false },
	{ "long-poll", 0, CLI_DURATION, SO_LONG_POLL, NULL,
	  "with --tasks: a poll at least this long is counted long (default 1ms)", 1000,
	  60 * NS_PER_S, false },
	{ "stall", 0, CLI_DURATION, SO_STALL, NULL,
	  "with --tasks: a task idle (no wake) this long is stalled (default 1s)", NS_PER_MS,
	  3600 * NS_PER_S, false },
	{ "dwarf", 0, CLI_FLAG, SO_DWARF, NULL,
	  "unwind user stacks by their DWARF call frame information (builds\n"
	  "without frame pointers; 8 KiB copied per sample or switch)", 0, 0, false },
	{ 0 },
};

static const struct cli_opt *const tables[] = { record_target_opts, serve_opts, NULL };

const struct cli_command serve_command = {
	.name = "serve",
	.summary = "A long-running agent: Prometheus metrics on /metrics and pprof profiles\n"
		   "(CPU, off-CPU) on /debug/pprof/ of a running async Rust program, from\n"
		   "CPU samples and off-CPU intervals per task (no probes; --tasks adds the\n"
		   "task probes, counting in the kernel). Never stops or launches the target.",
	.operands = "(-p PID | --name COMM)",
	.tables = tables,
	.notes = "Labels are bounded: at most --max-groups values per label set, the rest\n"
		 "summed as 'other'; so is memory (README: serve). Endpoints: /metrics,\n"
		 "/debug/pprof/profile?seconds=N, /debug/pprof/offcpu?seconds=N.",
};

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

struct serve_args {
	struct record_args rec;
	const char *name;
	const char *listen;
	bool tasks, dwarf;
	uint32_t sample_hz;
	uint64_t offcpu_min_ns, long_poll_ns, stall_ns;
	size_t max_groups;
	const char *tasks_opt;       /* the first --tasks-only option given */
};

struct agent {
	pthread_mutex_t lock;
	const struct serve_args *args;
	struct registry *reg;
	struct stack_store stacks;
	struct http_server *http;
	/* the namer's hooks, called from ours */
	struct recorder_opts namer_hooks;
	struct task_namer *namer;
	uint64_t period_ns;
	/* the current session */
	struct rec_session *s;
	pid_t pid;
	bool up;
	uint64_t attaches;
	struct rec_agg *agg;
	struct u64map site_names;    /* spawn site file address -> names index + 1 */
	struct strtab names;
	struct u64map task_row;      /* profile task id -> task row + 1 */
	bool forget;                 /* task_row over SERVE_MAX_IDS: empty both at the tick */
	/* counts over every session */
	uint64_t lost_base, missed_base, lost_cur, missed_cur;
	uint64_t samples, offcpu_intervals, busy_est_ns;
	uint64_t target_cpu_base, target_cpu_cur, last_cpu_read;
	bool by_task, offcpu;
	uint64_t no_memory;          /* records not counted: out of memory */
	/* pprof windows */
	struct window *win[WINDOWS_MAX];
	size_t n_win;
	int64_t next_win;
	const char *target;          /* for the profiles' comments */
	char target_buf[PATH_MAX];
	double start_real_s;
};

/* ---- the recording's side (the recorder's thread) ---- */

static uint64_t target_cpu_ns(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long ut, st;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	/* after the comm: state ppid pgrp session tty tpgid flags minflt cminflt
	 * majflt cmajflt utime stime */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
			 &st) != 2)
		return 0;
	return (uint64_t)(ut + st) * (NS_PER_S / (uint64_t)sysconf(_SC_CLK_TCK));
}

/* A task of the runtime's own by its root future: a multi_thread worker's
 * loop runs in the poll of the task worker::launch spawned (the runtime
 * profiles' endless_polls), named by the task lists like any task. */
static bool runtime_future(const char *name)
{
	static const char *const runtimes[] = { "tokio", "async-std", "smol", "async-executor" };

	for (size_t i = 0; name && i < sizeof(runtimes) / sizeof(runtimes[0]); i++) {
		const struct runtime_profile *p = profile_find(runtimes[i]);
		if (p && p->endless_polls && glob_match(p->endless_polls, name))
			return true;
	}
	return false;
}

/* The row of profile task id (0: none). */
static uint32_t row_of(struct agent *a, uint64_t id)
{
	uint64_t v;

	if (!id || id == UINT64_MAX)
		return REG_TASK_NONE;
	return u64map__get(&a->task_row, id, &v) ? (uint32_t)(v - 1) : REG_TASK_UNKNOWN;
}

/* The stack's culprit row, made at its first blocking interval. */
static int culprit_row(struct agent *a, uint32_t stack)
{
	struct kept_stack *k = (struct kept_stack *)stack_store__get(&a->stacks, stack);
	const char *kernel, *user, *file;
	uint32_t line;
	char src[512] = "";

	if (k && k->culprit >= 0)
		return k->culprit;
	culprit_of(k ? &k->st : NULL, &kernel, &user, &file, &line);
	if (file)
		snprintf(src, sizeof(src), "%s:%u", file, line);
	int row = registry__culprit(a->reg, kernel, user, src);
	if (k && row >= 0)
		k->culprit = row;
	return row;
}

static void windows_add(struct agent *a, enum http_window_kind kind, const struct as_event *ev,
			uint32_t row, uint64_t ns)
{
	for (size_t i = 0; i < a->n_win; i++) {
		struct window *w = a->win[i];
		uint64_t from = ev->ts, to = ev->ts + ns;
		if (w->kind != kind || w->over)
			continue;
		if (kind == HTTP_WINDOW_CPU) {
			if (ev->ts < w->start_ns || ev->ts >= w->end_ns)
				continue;
		} else {
			/* the part of the interval inside the window */
			from = from > w->start_ns ? from : w->start_ns;
			to = to < w->end_ns ? to : w->end_ns;
			if (to <= from)
				continue;
			ns = to - from;
		}
		if (window__add(w, ev->stack & STACKS_CULPRIT_ONLY ? 0 : ev->stack, row, 1, ns))
			a->no_memory++;
	}
}

static void on_event(void *ctx, const struct as_event *ev)
{
	struct agent *a = ctx;
	uint32_t row;

	pthread_mutex_lock(&a->lock);
	switch (ev->type) {
	case AS_EV_SPAWN: {
		if (!(ev->flags & AS_SPAWN_TASK) || !ev->task || ev->task == UINT64_MAX)
			break;
		int r = ev->flags & AS_SPAWN_RUNTIME || runtime_future(ev->str) ? REG_TASK_RUNTIME :
			registry__task(a->reg, ev->str);
		if (r < 0 || u64map__set(&a->task_row, ev->task, (uint64_t)r + 1))
			a->no_memory++;
		if (a->task_row.len > SERVE_MAX_IDS)
			a->forget = true;
		break;
	}
	case AS_EV_SAMPLE:
		row = row_of(a, ev->task);
		a->samples++;
		a->reg->tasks[row].samples++;
		if (row != REG_TASK_RUNTIME && row != REG_TASK_NONE)
			a->busy_est_ns += a->period_ns;
		windows_add(a, HTTP_WINDOW_CPU, ev, row, a->period_ns);
		break;
	case AS_EV_OFFCPU:
		row = row_of(a, ev->task);
		a->offcpu_intervals++;
		if (row == REG_TASK_RUNTIME)
			break;   /* a worker's own loop (parked): the runtime's, not a task's */
		a->busy_est_ns += ev->other;
		if (ev->flags & AS_OFFCPU_PREEMPTED) {
			a->reg->tasks[row].preempted_ns += ev->other;
			break;
		}
		a->reg->tasks[row].blocked_ns += ev->other;
		a->reg->tasks[row].blocked++;
		int c = culprit_row(a, ev->stack);
		if (c >= 0) {
			a->reg->culprits[c].ns += ev->other;
			a->reg->culprits[c].count++;
		} else {
			a->no_memory++;
		}
		windows_add(a, HTTP_WINDOW_OFFCPU, ev, row, ev->other);
		break;
	default:
		break;
	}
	pthread_mutex_unlock(&a->lock);
}

static uint32_t on_stack(void *ctx, const struct as_stack *st)
{
	struct agent *a = ctx;
	uint32_t id;

	pthread_mutex_lock(&a->lock);
	/* full and no window holds its ids: emptied, kept afresh */
	if (stack_store__full(&a->stacks) && !a->n_win)
		stack_store__reset(&a->stacks);
	id = stack_store__add(&a->stacks, st, -1);
	pthread_mutex_unlock(&a->lock);
	return id;
}

/* The file name of spawn site s ("" unknown), cached per session. */
static const char *site_file(struct agent *a, const struct agg_site *s)
{
	uint64_t v;
	uint32_t idx;
	char buf[512];

	if (!s->file)
		return "";
	if (u64map__get(&a->site_names, s->file, &v))
		return strtab__get(&a->names, (uint32_t)v - 1);
	if (rec_agg__site_file(a->agg, s, buf, sizeof(buf)))
		snprintf(buf, sizeof(buf), "?");
	size_t len = strlen(buf);
	if (strtab__intern(&a->names, buf, len, &idx) < 0 ||
	    u64map__set(&a->site_names, s->file, (uint64_t)idx + 1))
		return "?";
	return strtab__get(&a->names, idx);
}

/* The aggregation read now into the registry's current figures. Locked. */
static int agg_apply(struct agent *a, bool tasks)
{
	struct rec_agg_read rd;
	int e;

	if (!a->agg)
		return 0;
	e = rec_agg__read(a->agg, tasks, clock_ns(CLOCK_MONOTONIC), a->args->stall_ns, &rd);
	if (e)
		return e;
	registry__agg_begin(a->reg);
	a->reg->agg_cur = rd.tot;
	for (size_t i = 0; i < rd.n; i++) {
		const struct rec_agg_group *g = &rd.groups[i];
		char spawn[640] = "";
		int row = 0;
		if (g->probe != AGG_PROBE_NONE) {
			if (g->site.file)
				snprintf(spawn, sizeof(spawn), "%s:%u:%u", site_file(a, &g->site),
					 g->site.line, g->site.col);
			row = registry__group(a->reg, g->future, spawn);
			if (row < 0) {
				row = 0;
				a->no_memory++;
			}
		}
		agg_group__add(&a->reg->groups[row].cur, &g->v);
		a->reg->groups[row].live += g->live;
		a->reg->groups[row].stalled += g->stalled;
	}
	rec_agg_read__clear(&rd);
	return 0;
}

static void h_session(void *ctx, struct rec_session *s)
{
	struct agent *a = ctx;

	pthread_mutex_lock(&a->lock);
	a->s = s;
	a->pid = rec_session__pid(s);
	a->up = true;
	a->attaches++;
	a->lost_cur = a->missed_cur = 0;
	a->target_cpu_cur = target_cpu_ns(a->pid);
	a->last_cpu_read = clock_ns(CLOCK_MONOTONIC);
	u64map__clear(&a->site_names);
	u64map__clear(&a->task_row);
	if (a->args->tasks && rec_session__agg(s, &a->agg))
		a->agg = NULL;
	a->offcpu = a->offcpu || rec_session__profile_offcpu(s);
	a->by_task = a->offcpu;
	pthread_mutex_unlock(&a->lock);
	if (a->namer_hooks.on_session)
		a->namer_hooks.on_session(a->namer_hooks.hook_ctx, s);
}

static void h_unknown(void *ctx, uint64_t id)
{
	struct agent *a = ctx;

	if (a->namer_hooks.on_unknown_task)
		a->namer_hooks.on_unknown_task(a->namer_hooks.hook_ctx, id);
}

static void h_tick(void *ctx, uint64_t now)
{
	struct agent *a = ctx;
	bool forget;

	if (a->namer_hooks.on_hook_tick)
		a->namer_hooks.on_hook_tick(a->namer_hooks.hook_ctx, now);
	pthread_mutex_lock(&a->lock);
	if (now - a->last_cpu_read >= NS_PER_S) {
		uint64_t c = target_cpu_ns(a->pid);
		if (c > a->target_cpu_cur)
			a->target_cpu_cur = c;
		a->last_cpu_read = now;
	}
	forget = a->forget;
	if (forget) {
		u64map__clear(&a->task_row);
		a->forget = false;
	}
	pthread_mutex_unlock(&a->lock);
	if (forget && a->s)
		rec_session__forget_tasks(a->s);
}

static void h_end(void *ctx)
{
	struct agent *a = ctx;

	if (a->namer_hooks.on_end)
		a->namer_hooks.on_end(a->namer_hooks.hook_ctx);
	pthread_mutex_lock(&a->lock);
	/* the last figures of the aggregation join the base: counters go on
	 * from there with the next process */
	if (a->agg && agg_apply(a, false))
		a->no_memory++;
	registry__agg_fold(a->reg);
	rec_agg__free(a->agg);
	a->agg = NULL;
	uint64_t c = target_cpu_ns(a->pid);
	if (c > a->target_cpu_cur)
		a->target_cpu_cur = c;
	a->target_cpu_base += a->target_cpu_cur;
	a->target_cpu_cur = 0;
	a->up = false;
	a->s = NULL;
	pthread_mutex_unlock(&a->lock);
}

/* Windows whose end passed: over, their requests resumed. Locked. */
static void windows_close(struct agent *a, uint64_t now)
{
	for (size_t i = 0; i < a->n_win; i++) {
		struct window *w = a->win[i];
		if (!w->over && now >= w->end_ns + WINDOW_DRAIN_NS) {
			w->over = true;
			http_server__resume(a->http, w->req);
		}
	}
}

static int on_tick(void *ctx, uint64_t now, uint64_t lost, uint64_t missed)
{
	struct agent *a = ctx;

	pthread_mutex_lock(&a->lock);
	a->lost_cur = lost;
	a->missed_cur = missed;
	windows_close(a, now);
	pthread_mutex_unlock(&a->lock);
	return 0;
}

/* ---- the HTTP side (the server's thread) ---- */

static void self_stats(struct expo_state *st)
{
	struct timespec ts;
	struct rlimit rl;
	unsigned long long size = 0, res = 0;
	FILE *f;
	DIR *d;

	if (!clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		st->self_cpu_ns = (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
	if ((f = fopen("/proc/self/statm", "re"))) {
		if (fscanf(f, "%llu %llu", &size, &res) != 2)
			size = res = 0;
		fclose(f);
	}
	st->self_vsize = size * (uint64_t)sysconf(_SC_PAGESIZE);
	st->self_rss = res * (uint64_t)sysconf(_SC_PAGESIZE);
	if ((d = opendir("/proc/self/fd"))) {
		struct dirent *e;
		while ((e = readdir(d)))
			st->self_open_fds += e->d_name[0] != '.';
		closedir(d);
		st->self_open_fds--;   /* the directory's own */
	}
	if (!getrlimit(RLIMIT_NOFILE, &rl))
		st->self_max_fds = rl.rlim_cur;
}

static int h_metrics(void *ctx, char **body, size_t *len)
{
	struct agent *a = ctx;
	struct expo_state st = { 0 };
	FILE *f;
	int e;

	self_stats(&st);
	f = open_memstream(body, len);
	if (!f)
		return -errno;
	pthread_mutex_lock(&a->lock);
	if (a->up && a->agg && agg_apply(a, true))
		a->no_memory++;
	if (a->up) {
		uint64_t c = target_cpu_ns(a->pid);
		if (c > a->target_cpu_cur)
			a->target_cpu_cur = c;
	}
	struct agg_totals t;
	registry__totals_sum(a->reg, &t);
	st.reg = a->reg;
	st.version = VERSION;
	st.tasks = a->args->tasks;
	st.offcpu = a->offcpu;
	st.by_task = a->by_task;
	st.sample_hz = a->args->sample_hz;
	st.offcpu_min_ns = a->args->offcpu_min_ns;
	st.long_poll_ns = a->args->long_poll_ns;
	st.stall_ns = a->args->stall_ns;
	st.samples = a->samples;
	st.offcpu_intervals = a->offcpu_intervals;
	st.lost = a->lost_base + a->lost_cur;
	st.missed = a->missed_base + a->missed_cur + a->no_memory + t.depth_overflow;
	st.busy_est_ns = a->busy_est_ns;
	st.attaches = a->attaches;
	st.up = a->up;
	st.follow = a->args->name != NULL;
	st.target_cpu_known = a->attaches > 0;
	st.target_cpu_ns = a->target_cpu_base + a->target_cpu_cur;
	st.stacks_dropped = a->stacks.dropped;
	st.self_start_s = a->start_real_s;
	e = expo_write(f, &st);
	pthread_mutex_unlock(&a->lock);
	if (fclose(f) && !e)
		e = -EIO;
	if (e) {
		free(*body);
		*body = NULL;
	}
	return e;
}

static int64_t h_window_open(void *ctx, enum http_window_kind kind, uint64_t seconds,
			     struct http_request *req)
{
	struct agent *a = ctx;
	int64_t id;

	pthread_mutex_lock(&a->lock);
	if (stop_requested) {
		id = -ECANCELED;
	} else if (kind == HTTP_WINDOW_OFFCPU && a->attaches && !a->offcpu) {
		id = -ENOTSUP;
	} else if (a->n_win >= WINDOWS_MAX) {
		id = -EBUSY;
	} else {
		id = ++a->next_win;
		struct window *w = window__new(id, kind, clock_ns(CLOCK_MONOTONIC), seconds,
					       a->period_ns, req);
		if (w)
			a->win[a->n_win++] = w;
		else
			id = -ENOMEM;
	}
	pthread_mutex_unlock(&a->lock);
	return id;
}

/* Window id removed from the list (locked): it, or NULL. */
static struct window *window_remove(struct agent *a, int64_t id)
{
	for (size_t i = 0; i < a->n_win; i++) {
		if (a->win[i]->id != id)
			continue;
		struct window *w = a->win[i];
		a->win[i] = a->win[--a->n_win];
		return w;
	}
	return NULL;
}

static int h_window_take(void *ctx, int64_t id, char **body, size_t *len)
{
	struct agent *a = ctx;
	uint8_t *buf = NULL;
	int e;

	pthread_mutex_lock(&a->lock);
	struct window *w = window_remove(a, id);
	if (!w || stop_requested) {
		pthread_mutex_unlock(&a->lock);
		window__free(w);
		return -ECANCELED;
	}
	/* the start in wall-clock time: now less the time since */
	uint64_t mono = clock_ns(CLOCK_MONOTONIC), real = clock_ns(CLOCK_REALTIME);
	e = window__encode(w, &a->stacks, a->reg, a->target, real - (mono - w->start_ns), &buf, len);
	pthread_mutex_unlock(&a->lock);
	window__free(w);
	*body = (char *)buf;
	return e;
}

static void h_window_cancel(void *ctx, int64_t id)
{
	struct agent *a = ctx;

	pthread_mutex_lock(&a->lock);
	struct window *w = window_remove(a, id);
	pthread_mutex_unlock(&a->lock);
	window__free(w);
}

/* ---- finding the target ---- */

/* Process pid's start (clock ticks since boot) and whether it is a zombie
 * or gone. */
static bool proc_start(pid_t pid, unsigned long long *start)
{
	char path[64], buf[1024], state;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return false;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	/* state, then 18 fields to starttime (the 22nd) */
	if (!p || sscanf(p + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
			 "%*d %*d %*d %llu", &state, start) != 2)
		return false;
	return state != 'Z' && state != 'X';
}

/* Whether process pid is named name: its comm (the kernel keeps 15
 * bytes), or its executable's base name. */
static bool named(pid_t pid, const char *name)
{
	char path[64], buf[PATH_MAX];
	FILE *f;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if ((f = fopen(path, "re"))) {
		bool same = false;
		if (fgets(buf, sizeof(buf), f)) {
			buf[strcspn(buf, "\n")] = '\0';
			same = !strcmp(buf, name) || (strlen(name) > 15 && !strncmp(buf, name, 15) &&
						      strlen(buf) == 15);
		}
		fclose(f);
		if (same)
			return true;
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	const char *base = strrchr(buf, '/');
	base = base ? base + 1 : buf;
	/* a replaced executable reads "path (deleted)" */
	size_t bl = strlen(base), nl = strlen(name);
	return !strcmp(base, name) || (bl == nl + 10 && !strncmp(base, name, nl) &&
				       !strcmp(base + nl, " (deleted)"));
}

/* A process not to try again (it failed to attach): pid and start. */
struct rejected {
	pid_t pid;
	unsigned long long start;
};

/* The process to follow among those named name: the oldest. Says once
 * when several match. 0 none. */
static pid_t find_named(const char *name, const struct rejected *rej, size_t n_rej)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t best = 0, self = getpid(), others[8];
	unsigned long long best_start = 0;
	size_t n = 0, n_others = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char *end;
		long v = strtol(e->d_name, &end, 10);
		unsigned long long start;
		if (*end || v <= 0 || (pid_t)v == self || !named((pid_t)v, name) ||
		    !proc_start((pid_t)v, &start))
			continue;
		bool skip = false;
		for (size_t i = 0; i < n_rej; i++)
			skip |= rej[i].pid == (pid_t)v && rej[i].start == start;
		if (skip)
			continue;
		n++;
		if (!best || start < best_start || (start == best_start && v < best)) {
			if (best && n_others < 8)
				others[n_others++] = best;
			best = (pid_t)v;
			best_start = start;
		} else if (n_others < 8) {
			others[n_others++] = (pid_t)v;
		}
	}
	closedir(d);
	if (n > 1) {
		char list[128] = "";
		size_t o = 0;
		for (size_t i = 0; i < n_others && o < sizeof(list) - 16; i++)
			o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%d", i ? ", " : "",
					      (int)others[i]);
		fprintf(stderr, "asyncscope: %zu processes named %s: following the oldest, pid %d "
			"(the first started); not watched: %s%s\n", n, name, (int)best, list,
			n - 1 > n_others ? ", ..." : "");
	}
	return best;
}

/* ---- the command ---- */

static int on_opt(void *ctx, const struct cli_opt *opt, const struct cli_val *v)
{
	struct serve_args *s = ctx;

	switch (opt->key) {
	case SO_NAME:
		if (!*v->str) {
			cli_error("--name takes a process name, not ''");
			return 2;
		}
		s->name = v->str;
		return 0;
	case SO_LISTEN: s->listen = v->str; return 0;
	case SO_TASKS: s->tasks = true; return 0;
	case SO_SAMPLE: s->sample_hz = (uint32_t)v->num; return 0;
	case SO_OFFCPU_MIN: s->offcpu_min_ns = v->num; return 0;
	case SO_MAX_GROUPS: s->max_groups = (size_t)v->num; return 0;
	case SO_LONG_POLL:
	case SO_STALL:
		if (opt->key == SO_LONG_POLL)
			s->long_poll_ns = v->num;
		else
			s->stall_ns = v->num;
		if (!s->tasks_opt)
			s->tasks_opt = opt->name;
		return 0;
	case SO_DWARF: s->dwarf = true; return 0;
	default:
		return record_args__set(&s->rec, opt, v);
	}
}

/* Sleeps up to ns between two targets, waking early on a stop; windows
 * still end meanwhile (with no target, nothing is in them). */
static void nap(struct agent *a, uint64_t ns)
{
	struct timespec ts = { 0, 100 * NS_PER_MS };

	for (uint64_t t = 0; t < ns && !stop_requested; t += 100 * NS_PER_MS) {
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&a->lock);
		windows_close(a, clock_ns(CLOCK_MONOTONIC));
		pthread_mutex_unlock(&a->lock);
	}
}

int cmd_serve(int argc, char **argv)
{
	struct serve_args sa = { .listen = SERVE_LISTEN, .sample_hz = 99, .offcpu_min_ns = 100000,
				 .long_poll_ns = 1000000, .stall_ns = NS_PER_S };
	struct agent a = { .args = &sa };
	struct rejected rej[64];
	size_t n_rej = 0;
	int first, ret = 1;
	char err[1024];

	ret = cli_parse(&serve_command, argc, argv, on_opt, &sa, &first);
	if (ret >= 0)
		goto out_args;
	ret = 2;
	if (first < argc) {
		cli_usage_error(&serve_command, "serve takes no operand, not '%s': it attaches to a "
				"running process (-p PID or --name COMM) and never launches one",
				argv[first]);
		goto out_args;
	}
	if (!sa.rec.o.pid == !sa.name) {
		cli_usage_error(&serve_command, sa.name ? "serve takes -p PID or --name COMM, not both" :
				"serve needs -p PID (one process) or --name COMM (that name, "
				"across restarts)");
		goto out_args;
	}
	if (sa.tasks_opt && !sa.tasks) {
		cli_error("--%s is a task-mode option: give --tasks too (serve --tasks --%s ...)",
			  sa.tasks_opt, sa.tasks_opt);
		goto out_args;
	}
	if (http_listen_check(sa.listen, err, sizeof(err))) {
		cli_error("%s", err);
		goto out_args;
	}
	if (sa.rec.o.pid && kill(sa.rec.o.pid, 0) && errno == ESRCH) {
		cli_error("no process %d: give the pid of a running program (or --name COMM to wait "
			  "for one)", (int)sa.rec.o.pid);
		ret = 1;
		goto out_args;
	}
	ret = 1;
	pthread_mutex_init(&a.lock, NULL);
	a.reg = registry__new(sa.max_groups);
	a.namer = task_namer__new();
	if (!a.reg || !a.namer) {
		cli_error("out of memory");
		goto out;
	}
	a.period_ns = NS_PER_S / sa.sample_hz;
	a.start_real_s = (double)clock_ns(CLOCK_REALTIME) / 1e9;

	struct sigaction sg = { .sa_handler = on_stop };
	static const int stops[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
		sigaction(stops[i], &sg, NULL);
	signal(SIGPIPE, SIG_IGN);

	struct http_handlers hh = { .metrics = h_metrics, .window_open = h_window_open,
				    .window_take = h_window_take, .window_cancel = h_window_cancel,
				    .ctx = &a };
	if (http_server__start(sa.listen, &hh, &a.http, err, sizeof(err))) {
		cli_error("%s", err);
		goto out;
	}
	/* asyncscope: serving http://127.0.0.1:9947/metrics and /debug/pprof/{profile,offcpu};
	 *   profile mode (no probes): CPU samples at 99 Hz, off-CPU intervals over 100 us;
	 *   labels capped at 100 values a set */
	fprintf(stderr, "asyncscope: serving http://%s/metrics and /debug/pprof/{profile,offcpu}; "
		"%s: CPU samples at %u Hz, off-CPU intervals over %.0f us%s; labels capped at %zu "
		"values a set\n", http_server__address(a.http),
		sa.tasks ? "task mode" : "profile mode (no probes)", sa.sample_hz,
		(double)sa.offcpu_min_ns / 1e3, sa.tasks ? ", task probes counting in the kernel" : "",
		a.reg->cap);
	if (sa.name)
		fprintf(stderr, "asyncscope: following processes named %s across restarts\n", sa.name);

	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
	uint64_t deadline = sa.rec.o.duration > 0 ? t0 + (uint64_t)(sa.rec.o.duration * 1e9) : 0;
	bool waiting_said = false;
	ret = 0;
	while (!stop_requested && (!deadline || clock_ns(CLOCK_MONOTONIC) < deadline)) {
		pid_t pid = sa.rec.o.pid;
		if (sa.name) {
			pid = find_named(sa.name, rej, n_rej);
			if (!pid) {
				if (!waiting_said)
					fprintf(stderr, "asyncscope: waiting for a process named %s\n", sa.name);
				waiting_said = true;
				nap(&a, NS_PER_S);
				continue;
			}
		}
		waiting_said = false;
		struct recorder_opts o = { .pid = pid, .runtime = sa.rec.o.runtime,
					   .ringbuf_bytes = sa.rec.o.ringbuf_bytes, .profile = true,
					   .sample_hz = sa.sample_hz, .offcpu = true,
					   .offcpu_min_ns = sa.offcpu_min_ns, .dwarf = sa.dwarf,
					   .agg = sa.tasks, .agg_long_poll_ns = sa.long_poll_ns,
					   .agg_stall_ns = sa.stall_ns, .on_event = on_event,
					   .on_stack = on_stack, .on_tick = on_tick, .ctx = &a,
					   .stop = &stop_requested, .notice = record_notice };
		if (deadline) {
			uint64_t now = clock_ns(CLOCK_MONOTONIC);
			o.duration = now < deadline ? (double)(deadline - now) / 1e9 : 0.001;
		}
		struct recorder_opts nh = { 0 };
		task_namer__hook(a.namer, &nh);
		a.namer_hooks = nh;
		o.on_session = h_session;
		o.on_unknown_task = h_unknown;
		o.on_hook_tick = h_tick;
		o.on_end = h_end;
		o.hook_ctx = &a;
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
		ssize_t pl = readlink(path, a.target_buf, sizeof(a.target_buf) - 1);
		a.target_buf[pl > 0 ? pl : 0] = '\0';
		a.target = a.target_buf;
		unsigned long long start = 0;
		proc_start(pid, &start);

		struct recorder_result res;
		int failed = recorder_run(&o, &res, err, sizeof(err));
		pthread_mutex_lock(&a.lock);
		if (res.started) {
			a.lost_base += res.lost;
			a.missed_base += res.missed;
			a.lost_cur = a.missed_cur = 0;
		}
		pthread_mutex_unlock(&a.lock);
		if (failed && !res.started) {
			if (!sa.name) {
				cli_error("%s", err);
				ret = 1;
				break;
			}
			/* not a program asyncscope can follow: not tried again */
			fprintf(stderr, "asyncscope: pid %d (named %s) not followed: %s\n", (int)pid,
				sa.name, err);
			if (n_rej == sizeof(rej) / sizeof(rej[0])) {
				memmove(rej, rej + 1, (n_rej - 1) * sizeof(*rej));
				n_rej--;
			}
			rej[n_rej++] = (struct rejected){ pid, start };
			nap(&a, NS_PER_S);
			continue;
		}
		if (failed)
			cli_error("%s", err);
		if (stop_requested || (deadline && clock_ns(CLOCK_MONOTONIC) >= deadline))
			break;
		if (!sa.name) {
			fprintf(stderr, "asyncscope: pid %d exited: serve stops (--name COMM follows "
				"a program across restarts)\n", (int)pid);
			break;
		}
		fprintf(stderr, "asyncscope: pid %d exited; counters go on with the next process "
			"named %s\n", (int)pid, sa.name);
	}
	/* every window still open is answered (503), then the server stops */
	stop_requested = 1;
	pthread_mutex_lock(&a.lock);
	for (size_t i = 0; i < a.n_win; i++)
		if (!a.win[i]->over) {
			a.win[i]->over = true;
			http_server__resume(a.http, a.win[i]->req);
		}
	pthread_mutex_unlock(&a.lock);
	uint64_t ok, cerr, serr;
	http_server__counts(a.http, &ok, &cerr, &serr);
	http_server__stop(a.http);
	/* asyncscope: serve stopped: 2 processes attached, 1234 CPU samples, ... */
	fprintf(stderr, "asyncscope: serve stopped: %" PRIu64 " processes attached, %" PRIu64 " CPU "
		"samples, %" PRIu64 " off-CPU intervals, %" PRIu64 " lost, %" PRIu64 " missed; %"
		PRIu64 " requests answered (%" PRIu64 " 4xx, %" PRIu64 " 5xx)\n", a.attaches,
		a.samples, a.offcpu_intervals, a.lost_base, a.missed_base + a.no_memory,
		ok + cerr + serr, cerr, serr);
out:
	for (size_t i = 0; i < a.n_win; i++)
		window__free(a.win[i]);
	task_namer__free(a.namer);
	registry__free(a.reg);
	stack_store__clear(&a.stacks);
	u64map__clear(&a.site_names);
	u64map__clear(&a.task_row);
	strtab__clear(&a.names);
	pthread_mutex_destroy(&a.lock);
out_args:
	record_args__free(&sa.rec);
	return ret;
}
