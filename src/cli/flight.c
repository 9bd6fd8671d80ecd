/* The flight recorder's run (cli/flight.h): every event of the recording
 * goes into the ring (record/flight.h) instead of a file; a trigger marks
 * its moment T, and at T + --after the events from T - --flight on are
 * written as asyncscope-PID-TIME-TRIGGER.trace in the -o directory, the
 * trigger in the file's header.
 *
 * Triggers:
 *   signal    SIGUSR1 to the recorder
 *   snapshot  `asyncscope snapshot PID` on the recorder's socket (the
 *             abstract unix socket @asyncscope-flight-PID; a client of
 *             another user than root, the recorder's or the target's is
 *             refused)
 *   blocking  an off-CPU interval inside a poll (task mode) or of a task
 *             (profile mode; not the runtime's own: a worker parked in its
 *             loop) of at least --trigger-blocking, not preempted
 *   busy      task mode: a poll of at least --trigger-busy (its end); profile
 *             mode: CPU samples of one task on one thread, one after the
 *             other with no sample of another task (or of none, or the
 *             runtime's own) on that thread, no off-CPU interval of it but
 *             preemptions, and no gap over 2.5 sample periods beyond the
 *             time it was preempted in between, whose first and last are at
 *             least --trigger-busy apart, the preempted time not counted
 * A trigger within --cooldown of the last one, or while one waits out its
 * --after, is ignored (counted; a socket client is told why). */
#include "cli/flight.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/steps.h"
#include "record/flight.h"
#include "util/clock.h"
#include "util/strtab.h"
#include "util/u64map.h"

#define NS_PER_S 1000000000ull
#define NS_PER_MS 1000000ull
#define MAX_CLIENTS 16
#define LOSS_SECS 4096

enum {
	FO_FLIGHT = 3000, FO_SIZE, FO_BLOCKING, FO_BUSY, FO_COOLDOWN, FO_MAX, FO_AFTER,
};

const struct cli_opt flight_opts[] = {
	{ "flight", 0, CLI_DURATION, FO_FLIGHT, NULL,
	  "flight recorder: record always, keep the last DURATION (1s to 1h) in\n"
	  "memory, write it as -o DIR/asyncscope-PID-TIME-TRIGGER.trace when\n"
	  "triggered (SIGUSR1, asyncscope snapshot PID, --trigger-*)", NS_PER_S, 3600 * NS_PER_S,
	  false },
	{ "flight-size", 0, CLI_SIZE, FO_SIZE, NULL,
	  "memory for the kept events and their state, 1M to 16G (default 64M);\n"
	  "older events are evicted (counted) past it", 1ull << 20, 16ull << 30, false },
	{ "trigger-blocking", 0, CLI_DURATION, FO_BLOCKING, NULL,
	  "with --flight: snapshot when a task blocks (off CPU, not preempted)\n"
	  "inside a poll for at least DURATION (record: implies --offcpu)", 1000, 3600 * NS_PER_S,
	  false },
	{ "trigger-busy", 0, CLI_DURATION, FO_BUSY, NULL,
	  "with --flight: snapshot when a task stays on CPU for DURATION (record:\n"
	  "a poll that long; profile: its consecutive samples on one thread)", 1000000,
	  3600 * NS_PER_S, false },
	{ "cooldown", 0, CLI_DURATION, FO_COOLDOWN, NULL,
	  "with --flight: ignore triggers for DURATION after one (default 30s)", 0,
	  24 * 3600 * NS_PER_S, false },
	{ "max-snapshots", 0, CLI_COUNT, FO_MAX, NULL,
	  "with --flight: stop after N snapshots (default 10)", 1, 1000000, false },
	{ "after", 0, CLI_DURATION, FO_AFTER, NULL,
	  "with --flight: keep recording DURATION after a trigger before writing\n"
	  "(default 2s, up to 1m)", 0, 60 * NS_PER_S, false },
	{ 0 },
};

void flight_args__init(struct flight_args *f)
{
	*f = (struct flight_args){ .size = 64ull << 20, .cooldown_ns = 30 * NS_PER_S,
				   .max_snapshots = 10, .after_ns = 2 * NS_PER_S };
}

int flight_args__set(struct flight_args *f, const struct cli_opt *opt, const struct cli_val *v)
{
	switch (opt->key) {
	case FO_FLIGHT: f->window_ns = v->num; return 0;
	case FO_SIZE: f->size = v->num; break;
	case FO_BLOCKING: f->blocking_ns = v->num; break;
	case FO_BUSY: f->busy_ns = v->num; break;
	case FO_COOLDOWN: f->cooldown_ns = v->num; break;
	case FO_MAX: f->max_snapshots = v->num; break;
	case FO_AFTER: f->after_ns = v->num; break;
	default: return -1;
	}
	if (!f->other_opt)
		f->other_opt = opt->name;
	return 0;
}

int flight_args__finish(struct flight_args *f, const char *cmd)
{
	if (!f->window_ns && f->other_opt) {
		cli_error("--%s is a flight recorder option: give --flight DURATION too (e.g. %s "
			  "--flight 30s --%s ...)", f->other_opt, cmd, f->other_opt);
		return 2;
	}
	return 0;
}

void flight_socket_addr(pid_t pid, struct sockaddr_un *sa, socklen_t *len)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	int n = snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "asyncscope-flight-%d", (int)pid);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static volatile sig_atomic_t stop_requested, usr1, usr1_pid;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	usr1 = 1;
	usr1_pid = si ? si->si_pid : 0;
}

/* A thread's current poll (task mode) or run of samples (profile mode). */
struct run {
	uint64_t task, first, last;
	uint64_t preempted, gap_preempted;  /* profile: ns preempted in the run, since its last sample */
	uint16_t probe;
	bool fired, in_poll, parked;
};

struct fr {
	const struct flight_args *a;
	const struct recorder_opts *o;
	const char *dir;
	bool profile;
	struct flight *ring;
	struct as_trace_meta meta;      /* the session's, shallow (valid while it runs) */
	bool have_meta;
	pid_t pid;
	int sock;
	uid_t target_uid;
	/* per thread */
	struct u64map run_of;           /* tid + 1 -> index + 1 in runs */
	struct run *runs;
	size_t n_runs, cap_runs;
	struct u64map runtime_tasks;    /* profile: the runtime's own task ids */
	struct u64map name_of;          /* profile: task id -> names index + 1 */
	struct strtab names;
	uint64_t period_ns;             /* profile: a sample period */
	/* the pending snapshot */
	bool pending;
	char kind[16], detail[256];
	uint64_t trig_ns, due_ns;
	int clients[MAX_CLIENTS];
	size_t n_clients;
	/* the snapshot being written (by a child process) */
	struct job {
		bool active;
		pid_t pid;
		int fd;                 /* the child's result, -1 none */
		char path[4096], kind[16], detail[256];
		uint64_t trig, to, lost;
		int clients[MAX_CLIENTS];
		size_t n_clients;
	} job;
	/* counts */
	uint64_t stack_errors;
	uint64_t last_trig, written, ignored_cooldown, ignored_pending, failed;
	uint64_t lost, missed;
	struct { uint64_t sec, lost, missed; } loss[LOSS_SECS];
	bool stop;                      /* the last snapshot: end the recording */
	/* the caller's hooks (profile's task namer), called from ours */
	struct recorder_opts hooks;
	int err;
	char errmsg[512];
};

static struct run *run_get(struct fr *r, uint32_t tid)
{
	uint64_t v;

	if (u64map__get(&r->run_of, (uint64_t)tid + 1, &v))
		return &r->runs[v - 1];
	if (r->n_runs == r->cap_runs) {
		size_t cap = r->cap_runs ? r->cap_runs * 2 : 64;
		struct run *n = realloc(r->runs, cap * sizeof(*n));
		if (!n)
			return NULL;
		r->runs = n;
		r->cap_runs = cap;
	}
	if (u64map__set(&r->run_of, (uint64_t)tid + 1, r->n_runs + 1))
		return NULL;
	r->runs[r->n_runs] = (struct run){ 0 };
	return &r->runs[r->n_runs++];
}

static void reply(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply(int fd, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0 && write(fd, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1) < 0)
		return;   /* the client left: nothing to tell */
}

/* A trigger at ts (CLOCK_MONOTONIC); client: a socket to answer once the
 * snapshot is written (-1 none). Returns true when it starts a snapshot. */
static bool trigger(struct fr *r, const char *kind, uint64_t ts, int client, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static bool trigger(struct fr *r, const char *kind, uint64_t ts, int client, const char *fmt, ...)
{
	va_list ap;
	char detail[256];

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	if (r->pending) {
		/* the one waiting covers this moment too: a client gets its file */
		r->ignored_pending++;
		if (client >= 0 && r->n_clients < MAX_CLIENTS) {
			r->clients[r->n_clients++] = client;
		} else if (client >= 0) {
			reply(client, "refused too many clients waiting\n");
			close(client);
		}
		return false;
	}
	if (r->last_trig && ts < r->last_trig + r->a->cooldown_ns) {
		double left = (double)(r->last_trig + r->a->cooldown_ns - ts) / 1e9;
		r->ignored_cooldown++;
		if (client >= 0) {
			reply(client, "refused cool-down: the last snapshot's trigger was %.1f s ago, "
			      "%.1f s left of --cooldown\n", (double)(ts - r->last_trig) / 1e9, left);
			close(client);
		} else if (r->ignored_cooldown == 1 || !strcmp(kind, "signal")) {
			fprintf(stderr, "asyncscope: trigger %s ignored: cool-down, %.1f s left (%s)\n",
				kind, left, detail);
		}
		return false;
	}
	r->pending = true;
	r->last_trig = ts;
	snprintf(r->kind, sizeof(r->kind), "%s", kind);
	snprintf(r->detail, sizeof(r->detail), "%s", detail);
	r->trig_ns = ts;
	r->due_ns = ts + r->a->after_ns;
	if (client >= 0)
		r->clients[r->n_clients++] = client;
	fprintf(stderr, "asyncscope: trigger %s: %s; writing the snapshot in %.1f s\n", kind, detail,
		(double)r->a->after_ns / 1e9);
	return true;
}

/* "asyncscope-1234-20261201T223015Z-blocking.trace", or -2, -3 ... before
 * .trace when that exists */
static void snapshot_path(const struct fr *r, char *buf, size_t n)
{
	uint64_t real = r->meta.clock_real_ns + (r->trig_ns - r->meta.clock_mono_ns);
	time_t t = (time_t)(real / NS_PER_S);
	struct tm tm;
	char when[32];
	struct stat sb;

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(buf, n, "%s/asyncscope-%d-%s-%s.trace", r->dir, (int)r->pid, when, r->kind);
	for (int k = 2; !stat(buf, &sb) && k < 1000; k++)
		snprintf(buf, n, "%s/asyncscope-%d-%s-%s-%d.trace", r->dir, (int)r->pid, when, r->kind, k);
}

/* The loss counts at the second of ts (the recording's start when not
 * kept). */
static void loss_at(const struct fr *r, uint64_t ts, uint64_t *lost, uint64_t *missed)
{
	uint64_t sec = ts / NS_PER_S;

	*lost = *missed = 0;
	if (r->loss[sec % LOSS_SECS].sec == sec) {
		*lost = r->loss[sec % LOSS_SECS].lost;
		*missed = r->loss[sec % LOSS_SECS].missed;
	}
}

/* What a snapshot's writing gave (sent by the child that wrote it). */
struct job_result {
	int err;
	uint64_t took_ns;
	struct flight_written wr;
};

/* The snapshot written: said, its clients told, the limit checked. */
static void finish_snapshot(struct fr *r, const struct job_result *res)
{
	struct job *j = &r->job;
	const struct flight_written *wr = &res->wr;

	j->active = false;
	if (res->err) {
		r->failed++;
		fprintf(stderr, "asyncscope: cannot write the snapshot %s: %s\n", j->path,
			strerror(-res->err));
		for (size_t i = 0; i < j->n_clients; i++) {
			reply(j->clients[i], "failed %s: %s\n", j->path, strerror(-res->err));
			close(j->clients[i]);
		}
		j->n_clients = 0;
		return;
	}
	r->written++;
	/* asyncscope: snapshot ./asyncscope-1234-...-blocking.trace: 5123 events (4 state
	 *   records), span 3.02 s (1.00 s before the trigger, 2.00 s after), trigger blocking
	 *   (...); written in 0.01 s */
	fprintf(stderr, "asyncscope: snapshot %s: %" PRIu64 " events (%" PRIu64 " state records), "
		"span %.2f s (%.2f s before the trigger, %.2f s after), trigger %s (%s)", j->path,
		wr->events, wr->state, wr->events ? (double)(wr->last_ns - wr->first_ns) / 1e9 : 0.0,
		wr->events && j->trig > wr->first_ns ? (double)(j->trig - wr->first_ns) / 1e9 : 0.0,
		(double)(j->to - j->trig) / 1e9, j->kind, j->detail);
	if (wr->evicted_size)
		fprintf(stderr, "; %" PRIu64 " events of the window evicted for --flight-size %.0f MiB "
			"(not lost)", wr->evicted_size, (double)r->a->size / 1048576.0);
	if (j->lost)
		fprintf(stderr, "; %" PRIu64 " events lost (BPF ring buffer full)", j->lost);
	fprintf(stderr, "; written in %.2f s\n", (double)res->took_ns / 1e9);
	for (size_t i = 0; i < j->n_clients; i++) {
		reply(j->clients[i], "written %s %" PRIu64 " %" PRIu64 "\n", j->path, wr->events,
		      wr->last_ns - wr->first_ns);
		close(j->clients[i]);
	}
	j->n_clients = 0;
	if (r->written >= r->a->max_snapshots) {
		fprintf(stderr, "asyncscope: %" PRIu64 " snapshots written (--max-snapshots): stopping\n",
			r->written);
		r->stop = true;
	}
}

/* The pending snapshot, due: written by a child process (fork: the ring
 * as it is now, copy-on-write), so that the recorder goes on draining the
 * BPF ring buffer meanwhile (writing 4 M events takes seconds, long enough
 * to lose events); in this process when sync (the recording ends) or when
 * fork fails. */
static void write_snapshot(struct fr *r, uint64_t now, bool sync)
{
	struct job *j = &r->job;
	uint64_t from = r->trig_ns > r->a->window_ns ? r->trig_ns - r->a->window_ns : 0;
	uint64_t lost0, missed0;
	struct job_result res = { 0 };
	int p[2] = { -1, -1 };

	r->pending = false;
	*j = (struct job){ .active = true, .fd = -1, .trig = r->trig_ns,
			   .to = now < r->due_ns ? now : r->due_ns };
	snprintf(j->kind, sizeof(j->kind), "%s", r->kind);
	snprintf(j->detail, sizeof(j->detail), "%s", r->detail);
	memcpy(j->clients, r->clients, r->n_clients * sizeof(r->clients[0]));
	j->n_clients = r->n_clients;
	r->n_clients = 0;
	snapshot_path(r, j->path, sizeof(j->path));
	loss_at(r, from, &lost0, &missed0);
	j->lost = r->lost - lost0;
	struct as_trace_meta m = r->meta;
	m.flight_trigger = j->kind;
	m.flight_detail = j->detail;
	m.flight_trigger_ns = j->trig;
	m.flight_window_ns = r->a->window_ns;
	m.flight_after_ns = r->a->after_ns;
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
	pid_t pid = -1;
	if (!sync && !pipe2(p, O_CLOEXEC))
		pid = fork();
	if (pid == 0) {
		/* the child: nothing of the recorder's but the ring (no BPF
		 * descriptor kept open: the probes go with the recorder) */
		close_range(3, (unsigned)p[1] - 1, 0);
		close_range((unsigned)p[1] + 1, ~0u, 0);
		res.err = flight__write(r->ring, &m, j->path, from, j->to, j->lost, r->missed - missed0,
					&res.wr);
		res.took_ns = clock_ns(CLOCK_MONOTONIC) - t0;
		ssize_t k = write(p[1], &res, sizeof(res));
		_exit(k == (ssize_t)sizeof(res) ? 0 : 1);
	}
	if (pid > 0) {
		close(p[1]);
		j->pid = pid;
		j->fd = p[0];
		return;
	}
	if (p[0] >= 0) {
		close(p[0]);
		close(p[1]);
	}
	res.err = flight__write(r->ring, &m, j->path, from, j->to, j->lost, r->missed - missed0,
				&res.wr);
	res.took_ns = clock_ns(CLOCK_MONOTONIC) - t0;
	finish_snapshot(r, &res);
}

/* The child writing a snapshot: done? (block: wait for it) */
static void poll_job(struct fr *r, bool block)
{
	struct job *j = &r->job;
	struct job_result res = { .err = -EIO };
	struct pollfd pfd = { .fd = j->fd, .events = POLLIN };
	int status;

	if (!j->active || j->fd < 0)
		return;
	if (!block && poll(&pfd, 1, 0) <= 0)
		return;
	ssize_t k;
	while ((k = read(j->fd, &res, sizeof(res))) < 0 && errno == EINTR)
		;
	if (k != (ssize_t)sizeof(res))
		res = (struct job_result){ .err = -EIO };   /* the child died: said as a failure */
	close(j->fd);
	j->fd = -1;
	while (waitpid(j->pid, &status, 0) < 0 && errno == EINTR)
		;
	finish_snapshot(r, &res);
}

/* The name of the task a trigger names: task mode, the root future its
 * poll probe polls; profile mode, its declaration's; "?" unknown. */
static const char *task_name(const struct fr *r, const struct run *run, uint64_t task)
{
	uint64_t v;

	if (!r->profile)
		return run && run->in_poll && run->task == task && run->probe < r->meta.n_probes &&
		       r->meta.probes[run->probe].future ? r->meta.probes[run->probe].future : "?";
	if (u64map__get(&r->name_of, task, &v))
		return strtab__get(&r->names, (uint32_t)v - 1);
	return "?";
}

/* "task #12 NAME" (profile: the runtime's id) or "task 0x55... NAME" */
static const char *task_label(const struct fr *r, const struct run *run, uint64_t task, char *buf,
			      size_t n)
{
	snprintf(buf, n, r->profile ? "task #%" PRIu64 " %s" : "task 0x%" PRIx64 " %s", task,
		 task_name(r, run, task));
	return buf;
}

static void learn_name(struct fr *r, const struct as_event *ev)
{
	uint32_t idx;
	size_t len;

	if (!ev->str || !*ev->str || !ev->task || ev->task == UINT64_MAX)
		return;
	if (r->name_of.len >= (1u << 16))
		u64map__clear(&r->name_of);   /* bounded: older ids' names forgotten ("?") */
	len = strlen(ev->str);
	if (strtab__intern(&r->names, ev->str, len, &idx) >= 0)
		(void)u64map__set(&r->name_of, ev->task, (uint64_t)idx + 1);
}

static void on_event(void *ctx, const struct as_event *ev)
{
	struct fr *r = ctx;
	struct run *run;
	char lbl[320];

	if (flight__push(r->ring, ev) == -ENOMEM && !r->err) {
		r->err = -ENOMEM;
		snprintf(r->errmsg, sizeof(r->errmsg), "flight recorder: out of memory");
	}
	switch (ev->type) {
	case AS_EV_SPAWN:
		if ((ev->flags & AS_SPAWN_TASK) && (ev->flags & AS_SPAWN_RUNTIME) && ev->task)
			(void)u64map__set(&r->runtime_tasks, ev->task, 1);
		if (ev->flags & AS_SPAWN_TASK)
			learn_name(r, ev);
		break;
	case AS_EV_PARK:
	case AS_EV_UNPARK:
		if ((run = run_get(r, ev->tid)))
			run->parked = ev->type == AS_EV_PARK;
		break;
	case AS_EV_OFFCPU:
		run = run_get(r, ev->tid);
		if (r->profile && run && run->task && run->task == ev->task &&
		    (ev->flags & AS_OFFCPU_PREEMPTED))
			run->gap_preempted += ev->other;   /* still in its poll, not on CPU */
		else if (r->profile && run)
			run->task = 0;   /* blocked: the run of samples ends */
		/* not a worker parked in the runtime (task mode: between PARK and
		 * UNPARK; profile mode: the runtime's own task) */
		if (!r->a->blocking_ns || !ev->task || ev->task == UINT64_MAX ||
		    (ev->flags & AS_OFFCPU_PREEMPTED) || ev->other < r->a->blocking_ns ||
		    (run && run->parked) || u64map__get(&r->runtime_tasks, ev->task, NULL))
			break;
		/* at the interval's end, when it is known */
		trigger(r, "blocking", ev->ts + ev->other, -1, "%s off CPU %.1f ms inside a poll on "
			"thread %u", task_label(r, run, ev->task, lbl, sizeof(lbl)),
			(double)ev->other / 1e6, ev->tid);
		break;
	case AS_EV_POLL_BEGIN:
		if ((run = run_get(r, ev->tid))) {
			run->task = ev->task;
			run->first = ev->ts;
			run->probe = ev->probe;
			run->in_poll = true;
		}
		break;
	case AS_EV_POLL_END:
		if (!(run = run_get(r, ev->tid)) || !run->in_poll || run->task != ev->task)
			break;
		if (r->a->busy_ns && ev->ts - run->first >= r->a->busy_ns) {
			trigger(r, "busy", ev->ts, -1, "a poll of %s took %.1f ms on thread %u",
				task_label(r, run, ev->task, lbl, sizeof(lbl)),
				(double)(ev->ts - run->first) / 1e6, ev->tid);
		}
		run->in_poll = false;
		break;
	case AS_EV_SAMPLE:
		if (!r->a->busy_ns || !r->profile || !(run = run_get(r, ev->tid)))
			break;
		if (!ev->task || ev->task == UINT64_MAX || u64map__get(&r->runtime_tasks, ev->task, NULL)) {
			run->task = 0;
			break;
		}
		/* a gap longer than 2.5 sample periods beyond the time the thread
		 * was preempted: it was off CPU unseen, or ran something else */
		if (run->task != ev->task || ev->ts < run->last ||
		    ev->ts - run->last > r->period_ns * 5 / 2 + run->gap_preempted) {
			*run = (struct run){ .task = ev->task, .first = ev->ts, .last = ev->ts };
			break;
		}
		run->last = ev->ts;
		run->preempted += run->gap_preempted;
		run->gap_preempted = 0;
		uint64_t on_cpu = run->last - run->first - (run->preempted < run->last - run->first ?
							       run->preempted : run->last - run->first);
		if (!run->fired && on_cpu >= r->a->busy_ns) {
			run->fired = true;
			trigger(r, "busy", ev->ts, -1, "%s on CPU for %.1f ms of consecutive samples on "
				"thread %u, not counting %.1f ms preempted in between",
				task_label(r, run, ev->task, lbl, sizeof(lbl)), (double)on_cpu / 1e6, ev->tid,
				(double)run->preempted / 1e6);
		}
		break;
	default:
		break;
	}
}

static uint32_t on_stack(void *ctx, const struct as_stack *st)
{
	struct fr *r = ctx;
	uint32_t id = 0;

	if (flight__stack(r->ring, st, &id)) {
		r->stack_errors++;   /* its event goes in without its stack: said at the end */
		return 0;
	}
	return id;
}

static int listen_on(struct fr *r, pid_t pid)
{
	struct sockaddr_un sa;
	socklen_t len;
	struct stat sb;
	char proc[64];

	r->pid = pid;
	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	r->target_uid = stat(proc, &sb) ? 0 : sb.st_uid;
	r->sock = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (r->sock < 0)
		return -errno;
	flight_socket_addr(pid, &sa, &len);
	if (bind(r->sock, (struct sockaddr *)&sa, len) || listen(r->sock, 8)) {
		int e = -errno;
		close(r->sock);
		r->sock = -1;
		return e;
	}
	return 0;
}

static void on_start(void *ctx, const struct as_trace_meta *meta)
{
	struct fr *r = ctx;

	r->meta = *meta;
	r->have_meta = true;
	if (r->sock < 0 && !r->err) {
		int e = listen_on(r, (pid_t)meta->pid);
		if (e) {
			r->err = e;
			snprintf(r->errmsg, sizeof(r->errmsg), "cannot listen on @asyncscope-flight-%u: "
				 "%s%s", meta->pid, strerror(-e), e == -EADDRINUSE ?
				 " (another flight recorder of that pid runs)" : "");
		}
	}
}

/* One client: "snapshot\n" from root, our user or the target's. */
static void serve(struct fr *r, uint64_t now)
{
	for (int k = 0; k < 4; k++) {
		int c = accept4(r->sock, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			return;
		struct ucred cr;
		socklen_t cl = sizeof(cr);
		char req[64] = "";
		struct pollfd pfd = { .fd = c, .events = POLLIN };
		if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &cl) ||
		    (cr.uid != 0 && cr.uid != geteuid() && cr.uid != r->target_uid)) {
			reply(c, "refused: user %u may not snapshot pid %d\n", (unsigned)cr.uid, (int)r->pid);
			close(c);
			continue;
		}
		/* the client writes at once: wait for it 100 ms at most */
		if (poll(&pfd, 1, 100) <= 0 || read(c, req, sizeof(req) - 1) <= 0 ||
		    strncmp(req, "snapshot", 8)) {
			reply(c, "refused: unknown request\n");
			close(c);
			continue;
		}
		trigger(r, "snapshot", now, c, "asyncscope snapshot from pid %d", (int)cr.pid);
	}
}

static int on_tick(void *ctx, uint64_t now, uint64_t lost, uint64_t missed)
{
	struct fr *r = ctx;
	uint64_t sec = now / NS_PER_S;

	if (r->err)
		return 1;
	r->lost = lost;
	r->missed = missed;
	if (r->loss[sec % LOSS_SECS].sec != sec)
		r->loss[sec % LOSS_SECS] = (typeof(r->loss[0])){ sec, lost, missed };
	if (usr1) {
		usr1 = 0;
		trigger(r, "signal", now, -1, "SIGUSR1 from pid %d", (int)usr1_pid);
	}
	if (r->sock >= 0)
		serve(r, now);
	poll_job(r, false);
	if (r->pending && now >= r->due_ns && !r->job.active)
		write_snapshot(r, now, false);
	flight__expire(r->ring, now, r->pending && r->trig_ns > r->a->window_ns ?
				     r->trig_ns - r->a->window_ns : 0);
	return r->stop && !r->job.active;
}

/* The caller's hooks, passed on; at the end, before the session (and the
 * meta the snapshot's header copies) is gone, a pending snapshot is
 * written with what came after its trigger. */
static void h_session(void *ctx, struct rec_session *s)
{
	struct fr *r = ctx;

	if (r->hooks.on_session)
		r->hooks.on_session(r->hooks.hook_ctx, s);
}

static void h_unknown(void *ctx, uint64_t id)
{
	struct fr *r = ctx;

	if (r->hooks.on_unknown_task)
		r->hooks.on_unknown_task(r->hooks.hook_ctx, id);
}

static void h_tick(void *ctx, uint64_t now)
{
	struct fr *r = ctx;

	if (r->hooks.on_hook_tick)
		r->hooks.on_hook_tick(r->hooks.hook_ctx, now);
}

static void h_end(void *ctx)
{
	struct fr *r = ctx;

	if (r->hooks.on_end)
		r->hooks.on_end(r->hooks.hook_ctx);
	poll_job(r, true);   /* the one being written, finished */
	if (r->pending && r->have_meta) {
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		fprintf(stderr, "asyncscope: the recording ends %.1f s after the trigger: writing its "
			"snapshot now\n", (double)(now - r->trig_ns) / 1e9);
		write_snapshot(r, now, true);
	}
}

int flight_run(const struct recorder_opts *opts, const struct flight_args *a, const char *dir,
	       bool profile)
{
	struct recorder_opts o = *opts;
	struct recorder_result res;
	struct fr r = { .a = a, .o = &o, .dir = dir, .profile = profile, .sock = -1 };
	char err[1024] = "";
	struct stat sb;
	int ret = 1;

	if (stat(dir, &sb) || !S_ISDIR(sb.st_mode)) {
		int e = stat(dir, &sb) ? errno : ENOTDIR;
		cli_error("-o %s: %s (with --flight, -o names the directory the snapshots go to)", dir,
			  strerror(e));
		return 1;
	}
	if (access(dir, W_OK | X_OK)) {
		cli_error("-o %s: cannot write there: %s", dir, strerror(errno));
		return 1;
	}
	r.ring = flight__new(a->size, a->window_ns);
	if (!r.ring) {
		cli_error("flight recorder: cannot allocate --flight-size %.0f MiB: %s",
			  (double)a->size / 1048576.0, strerror(errno));
		return 1;
	}
	r.period_ns = o.sample_hz ? NS_PER_S / o.sample_hz : 10 * NS_PER_MS;
	if (o.pid) {
		int e = listen_on(&r, o.pid);
		if (e) {
			cli_error("cannot listen on @asyncscope-flight-%d: %s%s", (int)o.pid, strerror(-e),
				  e == -EADDRINUSE ? " (another flight recorder of that pid runs: one at "
				  "a time)" : "");
			goto out;
		}
	}
	r.hooks = o;
	o.on_session = h_session;
	o.on_unknown_task = h_unknown;
	o.on_hook_tick = h_tick;
	o.on_end = h_end;
	o.hook_ctx = &r;
	o.output = NULL;
	o.output_fd = 0;
	o.ctx = &r;
	o.on_start = on_start;
	o.on_event = on_event;
	o.on_stack = on_stack;
	o.on_tick = on_tick;
	o.stop = &stop_requested;
	o.notice = record_notice;
	o.progress = false;

	struct sigaction sa = { .sa_handler = on_stop };
	static const int stops[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE };
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
		sigaction(stops[i], &sa, NULL);
	struct sigaction su = { .sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO | SA_RESTART };
	sigaction(SIGUSR1, &su, NULL);

	fprintf(stderr, "asyncscope: flight recorder: the last %.1f s kept in %.0f MiB; snapshots "
		"into %s on SIGUSR1 (pid %d), asyncscope snapshot PID%s%s; cool-down %.1f s, at most %"
		PRIu64 ", %.1f s after each trigger\n", (double)a->window_ns / 1e9,
		(double)a->size / 1048576.0, dir, (int)getpid(),
		a->blocking_ns ? ", blocking in a poll over --trigger-blocking" : "",
		a->busy_ns ? ", on CPU over --trigger-busy" : "", (double)a->cooldown_ns / 1e9,
		a->max_snapshots, (double)a->after_ns / 1e9);
	int failed = recorder_run(&o, &res, err, sizeof(err));
	if (failed && !res.started) {
		cli_error("%s", err);
		goto out;
	}
	struct flight_stats st;
	flight__stats(r.ring, &st);
	/* asyncscope: flight recorder stopped: 1 snapshots written, 0 triggers ignored
	 *   (cool-down 0, one pending 0); 51234 events seen, 40000 evicted (39000 older than the
	 *   window, 1000 for --flight-size), 0 lost, 0 missed; ring 2.1 of 56.0 MiB, state 0.1 MiB */
	fprintf(stderr, "asyncscope: flight recorder stopped: %" PRIu64 " snapshots written, %"
		PRIu64 " triggers ignored (cool-down %" PRIu64 ", one pending %" PRIu64 "); %" PRIu64
		" events seen, %" PRIu64 " evicted (%" PRIu64 " older than the window, %" PRIu64 " for "
		"--flight-size), %" PRIu64 " lost, %" PRIu64 " missed; ring %.1f of %.1f MiB, state "
		"%.1f MiB (%" PRIu64 " names, %" PRIu64 " stacks)\n", r.written,
		r.ignored_cooldown + r.ignored_pending, r.ignored_cooldown, r.ignored_pending,
		st.pushed, st.evicted_age + st.evicted_size, st.evicted_age, st.evicted_size, res.lost,
		res.missed, (double)st.ring_bytes / 1048576.0, (double)st.ring_cap / 1048576.0,
		(double)st.state_bytes / 1048576.0, st.state_records, st.stacks);
	if (res.lost)
		fprintf(stderr, "asyncscope: warning: %" PRIu64 " events were lost (BPF ring buffer "
			"full): the snapshots say how many of theirs\n", res.lost);
	if (r.stack_errors || st.refused)
		fprintf(stderr, "asyncscope: warning: the ring kept %" PRIu64 " stacks without their "
			"frames and refused %" PRIu64 " events (out of memory)\n", r.stack_errors,
			st.refused);
	if (failed || r.err) {
		cli_error("%s", failed ? err : r.errmsg);
		goto out;
	}
	ret = r.failed ? 1 : 0;
out:
	if (r.sock >= 0)
		close(r.sock);
	for (size_t i = 0; i < r.n_clients; i++)
		close(r.clients[i]);
	poll_job(&r, true);
	u64map__clear(&r.run_of);
	u64map__clear(&r.runtime_tasks);
	u64map__clear(&r.name_of);
	strtab__clear(&r.names);
	free(r.runs);
	flight__free(r.ring);
	return ret;
}
