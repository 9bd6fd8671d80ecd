/* `asyncscope record`: its options (cli/record_opts.h: shared with trace and
 * top) and record_run(), the recording step with its summary lines, which
 * trace also runs; the work is in src/record/recorder.c. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/flight.h"
#include "cli/idle_finder.h"
#include "cli/record_opts.h"
#include "cli/steps.h"
#include "record/recorder.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* The recorder's notices, on stderr:
 * asyncscope: attached 9 probes (...) to pid 123 (...); recording to FILE, Ctrl-C to stop
 * asyncscope: warning: cannot read /proc/kallsyms (...): kernel frames will have no names
 * and the status line "\rasyncscope: 3 s, 1200 events, 4 tasks, 0 lost " (cleared at the end). */
void record_notice(void *ctx, enum rec_notice_level level, const char *msg)
{
	(void)ctx;
	switch (level) {
	case REC_NOTICE_WARNING:
		fprintf(stderr, "asyncscope: warning: %s\n", msg);
		break;
	case REC_NOTICE_PROGRESS:
		if (msg[0])
			fprintf(stderr, "\rasyncscope: %s", msg);
		else
			fprintf(stderr, "\r\033[K");
		break;
	default:
		fprintf(stderr, "asyncscope: %s\n", msg);
		break;
	}
}

/* asyncscope: DWARF unwinding: 20 off-CPU intervals, 17.0 user frames on average
 *   (frame pointers alone: 2.0), median 17 (2), frame pointers kept for 0 */
static void print_unwind(const char *what, const struct recorder_unwind *u)
{
	double n = u->stacks ? (double)u->stacks : 1.0;

	fprintf(stderr, "asyncscope: DWARF unwinding: %llu %s, %.1f user frames on average "
		"(frame pointers alone: %.1f), median %u (%u), frame pointers kept for %llu\n",
		(unsigned long long)u->stacks, what, (double)u->frames / n, (double)u->fp_frames / n,
		u->median, u->fp_median, (unsigned long long)u->fp_kept);
}

static const struct cli_opt output_opts[] = {
	{ "output", 'o', CLI_STRING, 'o', "FILE", "the trace file (default asyncscope.trace); with --flight, the\n"
	  "directory of the snapshots (default .)" },
	{ 0 },
};

static const struct cli_opt *const tables[] = { output_opts, record_target_opts,
						  record_event_opts, flight_opts, NULL };

const struct cli_command record_command = {
	.name = "record",
	.summary = "Records the tasks of an async Rust program (Tokio, async-std, smol) into a "
		   "trace file,\n"
		   "until Ctrl-C, --duration or the target's exit.",
	.operands = RECORD_OPERANDS,
	.tables = tables,
	.stop_at_operand = true,
};

/* record's arguments, and the flight recorder's */
struct record_cli {
	struct record_args a;
	struct flight_args f;
	const char *output;          /* -o as given, NULL none */
};

static int on_opt(void *ctx, const struct cli_opt *opt, const struct cli_val *v)
{
	struct record_cli *c = ctx;

	if (opt->key == 'o') {
		c->output = c->a.o.output = v->str;
		return 0;
	}
	int ret = flight_args__set(&c->f, opt, v);
	return ret >= 0 ? ret : record_args__set(&c->a, opt, v);
}

int cmd_record(int argc, char **argv)
{
	struct record_cli c = { .a = { .o = { .output = "asyncscope.trace" } } };
	int first, ret;

	flight_args__init(&c.f);
	ret = cli_parse(&record_command, argc, argv, on_opt, &c, &first);
	if (ret < 0 && !(ret = flight_args__finish(&c.f, "record")) &&
	    !(ret = record_args__finish(&c.a, &record_command, argc, argv, first))) {
		if (c.f.blocking_ns && c.a.no_offcpu) {
			cli_error("--trigger-blocking watches off-CPU intervals: drop --no-offcpu");
			record_args__free(&c.a);
			return 2;
		}
		if (c.f.blocking_ns)
			c.a.o.offcpu = true;   /* the blocking trigger watches off-CPU intervals */
		ret = c.f.window_ns ? flight_run(&c.a.o, &c.f, c.output ? c.output : ".", false) :
				      record_run(&c.a.o);
	}
	record_args__free(&c.a);
	return ret;
}

/* The recording runs: its trace file goes in place (until then an existing
 * file of that name is left as it was; from then on a killed recorder
 * leaves the trace so far there). */
static bool running;

static void on_running(void *ctx)
{
	int err = cli_commit_output(ctx);

	running = true;
	if (err)
		cli_error("warning: cannot put the trace in place yet: %s (trying again at the end)",
			  strerror(-err));
}

int record_run(const struct recorder_opts *opts)
{
	struct recorder_opts o = *opts;
	struct idle_finder *finder = NULL;
	struct recorder_result res;
	char err[1024] = "";
	int ret = 2, fd, failed = 1;
	FILE *out = NULL;

	memset(&res, 0, sizeof(res));

	if (o.output) {
		/* a temporary file beside it, renamed once the recording runs */
		out = cli_open_output_fd(o.output, &fd);
		if (!out)
			return 1;
		o.output_fd = fd;
		o.on_running = on_running;
		o.ctx = out;
	}
	o.stop = &stop_requested;
	o.notice = record_notice;
	o.progress = isatty(STDERR_FILENO);
	/* a running program's tasks parked before the recording: found in its
	 * memory at the end (a hang's are; no event of them comes) */
	if (o.pid > 0 && o.output && !o.profile && !o.on_session && !o.on_end &&
	    (finder = idle_finder__new()))
		idle_finder__hook(finder, &o);

	/* every way a user or a session stops a recorder ends it cleanly: the
	 * summary, the trailer, a launched target stopped (an SSH drop sends
	 * SIGHUP; a closed pipe on stderr, SIGPIPE) */
	struct sigaction sa = { .sa_handler = on_signal };
	static const int stops[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE };
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
		sigaction(stops[i], &sa, NULL);

	failed = recorder_run(&o, &res, err, sizeof(err));
	if (failed && !res.started) {
		cli_error("%s", err);
		ret = 1;
		goto out;
	}
	/* a recording that ran has its summary, even when an error ended it */
	fprintf(stderr, "asyncscope: recorded %llu events, %llu tasks, %llu lost events, "
		"%llu missed -> %s (%.1f KiB, %.1f bytes/event)\n",
		(unsigned long long)res.events, (unsigned long long)res.tasks,
		(unsigned long long)res.lost, (unsigned long long)res.missed, o.output,
		(double)res.bytes / 1024.0, res.events ? (double)res.bytes / (double)res.events : 0.0);
	if (o.profile)
		/* asyncscope: 12 task ids seen: 8 named from the task lists, 2 the runtime's own
		 *   (its workers' loops), 2 not named (not in the lists when read: ...) */
		fprintf(stderr, "asyncscope: %llu task ids seen: %llu named from the task lists, %llu "
			"the runtime's own (its workers' loops), %llu not named%s\n",
			(unsigned long long)res.profile_tasks,
			(unsigned long long)(res.profile_tasks - res.profile_unnamed - res.profile_runtime),
			(unsigned long long)res.profile_runtime, (unsigned long long)res.profile_unnamed,
			res.profile_unnamed ? " (in no task list when read: a spawn_blocking task, or "
			"one that lived between two reads)" : "");
	if (o.profile && res.profile_no_id)
		fprintf(stderr, "asyncscope: warning: %llu samples and off-CPU intervals whose thread's "
			"task id could not be read count as outside any task\n",
			(unsigned long long)res.profile_no_id);
	if (res.offcpu_on)
		fprintf(stderr, "asyncscope: %llu off-CPU intervals %s, %llu distinct stacks%s\n",
			(unsigned long long)res.offcpu, o.profile ? "of tasks" : "inside polls",
			(unsigned long long)res.stacks, o.offcpu_default ?
			" (--no-offcpu leaves them out)" : "");
	if (res.idle_no_waker)
		fprintf(stderr, "asyncscope: %llu of %llu tasks idle at the end held no waker: nothing "
			"can wake %s again (the report's lost_waker finding)\n",
			(unsigned long long)res.idle_no_waker, (unsigned long long)res.idle_notes,
			res.idle_no_waker == 1 ? "it" : "them");
	if (res.before_idle || res.before_queued || res.before_running) {
		char nw[96] = "";

		if (res.before_no_waker)
			snprintf(nw, sizeof(nw), " (%llu holding no waker: nothing can wake %s again)",
				 (unsigned long long)res.before_no_waker,
				 res.before_no_waker == 1 ? "it" : "them");
		fprintf(stderr, "asyncscope: %llu tasks of which no event was recorded, found in the "
			"program's memory at the end: %llu idle since before the recording%s, %llu "
			"runnable and never polled, %llu in one poll all along\n",
			(unsigned long long)(res.before_idle + res.before_queued + res.before_running),
			(unsigned long long)res.before_idle, nw, (unsigned long long)res.before_queued,
			(unsigned long long)res.before_running);
	}
	if (finder) {
		size_t found;
		bool ffail;
		const char *ferr;

		idle_finder__result(finder, &found, &ffail, &ferr);
		if (ffail)
			fprintf(stderr, "asyncscope: warning: the tasks idle since before the recording "
				"are not known (the program's task lists could not be read: %s)\n",
				ferr);
	}
	if (!o.profile && o.runq)
		fprintf(stderr, "asyncscope: %llu run-queue waits\n", (unsigned long long)res.runq);
	if (res.spawn_sites_unknown)
		fprintf(stderr, "asyncscope: warning: %llu of %llu spawns have no call site (their "
			"stacks did not unwind to the program's code): SPAWNED AT shows '-' for them\n",
			(unsigned long long)res.spawn_sites_unknown,
			(unsigned long long)(res.spawn_sites + res.spawn_sites_unknown));
	if (res.future_probes)
		fprintf(stderr, "asyncscope: %llu future polls from %zu future probes (%zu async state "
			"machines with Ready/Pending, %zu with source lines%s)\n",
			(unsigned long long)res.future_polls, res.future_probes, res.future_state_machines,
			res.future_with_source, res.future_dwarf ? "" : "; no DWARF: build with debug = true");
	if (o.uring)
		fprintf(stderr, "asyncscope: %llu io_uring submissions, %llu completions\n",
			(unsigned long long)res.uring_submitted, (unsigned long long)res.uring_completed);
	if (o.sample_hz)
		fprintf(stderr, "asyncscope: %llu CPU samples, %llu distinct stacks\n",
			(unsigned long long)res.samples, (unsigned long long)res.stacks);
	if (o.dwarf && o.sample_hz)
		print_unwind("samples", &res.unwind_samples);
	if (o.dwarf && res.offcpu_on)
		print_unwind("off-CPU intervals", &res.unwind_offcpu);
	if (res.lost)
		fprintf(stderr, "asyncscope: warning: %llu events were lost (ring buffer full): "
			"the report marks the affected numbers as incomplete\n",
			(unsigned long long)res.lost);
	if (res.target_status >= 0 && WIFEXITED(res.target_status) && WEXITSTATUS(res.target_status))
		fprintf(stderr, "asyncscope: the target exited with status %d\n",
			WEXITSTATUS(res.target_status));
	else if (res.target_status >= 0 && WIFSIGNALED(res.target_status) && !res.target_stopped)
		fprintf(stderr, "asyncscope: the target was killed by signal %d (%s)%s\n",
			WTERMSIG(res.target_status), strsignal(WTERMSIG(res.target_status)),
			WCOREDUMP(res.target_status) ? ", core dumped" : "");
	if (failed) {
		cli_error("%s", err);
		ret = 1;
		goto out;
	}
	ret = 0;
out:
	idle_finder__free(finder);
	if (out) {
		/* the writer closed its descriptor; a recording that never ran
		 * (a launched command that could not be run included) leaves an
		 * existing file of that name untouched */
		int cerr = 0;

		if (running)
			cerr = cli_close_output(out);
		else
			cli_discard_output(out);
		if (cerr && !ret) {
			cli_error("cannot put the trace in place as %s: %s", o.output, strerror(-cerr));
			ret = 1;
		}
	}
	return ret;
}
