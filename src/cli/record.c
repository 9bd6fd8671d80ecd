/* `asyncscope record`: argument parsing and the summary line; the work is
 * in src/record/recorder.c. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/commands.h"
#include "record/recorder.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static int parse_pid(const char *s, pid_t *pid)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v <= 0 || v > 0x3fffffff)
		return -EINVAL;
	*pid = (pid_t)v;
	return 0;
}

/* The recorder's notices, on stderr:
 * asyncscope: attached 9 probes (...) to pid 123 (...); recording to FILE, Ctrl-C to stop
 * asyncscope: warning: cannot read /proc/kallsyms (...): kernel frames will have no names
 * and the status line "\rasyncscope: 3 s, 1200 events, 4 tasks, 0 lost " (cleared at the end). */
static void render_notice(void *ctx, enum rec_notice_level level, const char *msg)
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

int cmd_record(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "duration", required_argument, NULL, 'd' },
		{ "pid", required_argument, NULL, 'p' },
		{ "runtime", required_argument, NULL, 'r' },
		{ "buffer-size", required_argument, NULL, 'b' },
		{ "usdt", required_argument, NULL, 'u' },
		{ "offcpu", no_argument, NULL, 'O' },
		{ "offcpu-min", required_argument, NULL, 'M' },
		{ "sample", required_argument, NULL, 'S' },
		{ "runq", no_argument, NULL, 'Q' },
		{ "uring", no_argument, NULL, 'U' },
		{ "dwarf", no_argument, NULL, 'D' },
		{ "futures", no_argument, NULL, 'F' },
		{ "probe", required_argument, NULL, 'P' },
		{ "probe-preset", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct recorder_opts o = { .output = "asyncscope.trace", .stop = &stop_requested,
				   .notice = render_notice };
	struct recorder_result res;
	const char **usdt = NULL, **pats = NULL;
	char err[1024] = "";
	int c, ret = 2;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:d:p:r:b:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o.output = optarg; break;
		case 'd': {
			char *end;
			o.duration = strtod(optarg, &end);
			if (*end || o.duration <= 0) {
				cli_error("--duration takes a positive number of seconds, not '%s'", optarg);
				goto out;
			}
			break;
		}
		case 'p':
			if (parse_pid(optarg, &o.pid)) {
				cli_error("-p takes a process id, not '%s'", optarg);
				goto out;
			}
			break;
		case 'r': o.runtime = optarg; break;
		case 'u': {
			const char *colon = strchr(optarg, ':');
			if (!colon || colon == optarg || !colon[1]) {
				cli_error("--usdt takes PROVIDER:NAME or PROVIDER:*, not '%s'", optarg);
				goto out;
			}
			if (cli_push_arg(&usdt, &o.n_usdt, optarg)) {
				ret = 1;
				goto out;
			}
			o.usdt = usdt;
			break;
		}
		case 'b': {
			char *end;
			unsigned long kib = strtoul(optarg, &end, 10);
			if (*end || kib < 4 || kib > (1ul << 20)) {
				cli_error("--buffer-size takes KiB from 4 to 1048576, not '%s'", optarg);
				goto out;
			}
			o.ringbuf_bytes = kib << 10;
			break;
		}
		case 'O': o.offcpu = true; break;
		case 'M': {
			char *end;
			unsigned long long us = strtoull(optarg, &end, 10);
			if (*end || !*optarg || us > 60000000ull) {
				cli_error("--offcpu-min takes microseconds from 0 to 60000000, not '%s'", optarg);
				goto out;
			}
			o.offcpu_min_ns = us ? us * 1000 : 1;
			break;
		}
		case 'Q': o.runq = true; break;
		case 'U': o.uring = true; break;
		case 'D': o.dwarf = true; break;
		case 'F': o.futures = true; break;
		case 'P':
			if (cli_push_arg(&pats, &o.n_probe_patterns, optarg)) {
				ret = 1;
				goto out;
			}
			o.probe_patterns = pats;
			break;
		case 'R':
			if (strcmp(optarg, "cat")) {
				cli_error("unknown --probe-preset '%s': the preset is 'cat' (CAT's four patterns)",
					  optarg);
				goto out;
			}
			o.probe_preset_cat = true;
			break;
		case 'S': {
			char *end;
			unsigned long hz = strtoul(optarg, &end, 10);
			if (*end || !*optarg || hz < 1 || hz > 100000) {
				cli_error("--sample takes samples per second from 1 to 100000, not '%s'", optarg);
				goto out;
			}
			o.sample_hz = (uint32_t)hz;
			break;
		}
		case 'h':
			printf("usage: asyncscope record [-o FILE] [--duration SEC] [--runtime NAME]\n"
			       "                         [--buffer-size KIB] [--usdt PROVIDER:NAME]...\n"
			       "                         [--offcpu [--offcpu-min US]] [--sample HZ] [--dwarf] [--runq] [--uring]\n"
			       "                         [--futures] [--probe REGEX]... [--probe-preset cat]\n"
			       "                         (-p PID | -- CMD [ARGS...])\n"
			       "  -o FILE          trace file (default asyncscope.trace)\n"
			       "  --duration SEC   stop after SEC seconds (a launched command is then ended)\n"
			       "  --runtime NAME   runtime profile (default: detected; known: tokio)\n"
			       "  --buffer-size K  BPF ring buffer in KiB (default 8192)\n"
			       "  --usdt P:N       also trace the binary's USDT probe P:N (P:* all of\n"
			       "                   provider P; repeatable); then no async runtime is needed\n"
			       "  --offcpu         also record when a thread blocks inside a poll (off CPU),\n"
			       "                   with kernel and user stacks (see asyncscope blocking)\n"
			       "  --offcpu-min US  shortest off-CPU interval kept (default 100)\n"
			       "  --sample HZ      also sample the target's CPU use HZ times a second per CPU,\n"
			       "                   with the task polled and the stacks (see asyncscope cpu)\n"
			       "  --dwarf          with --sample and --offcpu: unwind user stacks by their\n"
			       "                   DWARF call frame information (8 KiB of stack copied per\n"
			       "                   sample or switch), for builds without frame pointers\n"
			       "  --runq           also record how long the target's threads wait for a CPU\n"
			       "                   once runnable (implied by --offcpu; see asyncscope blocking)\n"
			       "  --uring          also record io_uring submissions (with the task polled)\n"
			       "                   and completions (see asyncscope uring)\n"
			       "  --futures        also trace the futures inside tasks: entry and return of the\n"
			       "                   out-of-line poll functions of the target's own async fns,\n"
			       "                   async blocks and impl Future::poll, with nesting depth,\n"
			       "                   Ready/Pending and the .await line (async flame graphs,\n"
			       "                   await chains: see report and export)\n"
			       "  --probe REGEX    also trace functions whose demangled name matches REGEX\n"
			       "                   (POSIX extended; repeatable), entry and return with depth\n"
			       "  --probe-preset cat  CAT's four patterns: every closure and Future::poll,\n"
			       "                   async-std's task poll closure, GenFuture::poll\n");
			ret = 0;
			goto out;
		default:
			goto out;
		}
	}
	if (optind < argc)
		o.argv = argv + optind;
	if (o.dwarf && !o.sample_hz && !o.offcpu) {
		cli_error("--dwarf unwinds the stacks of --sample HZ and --offcpu: give one of them too");
		goto out;
	}
	if (!o.pid == !o.argv) {
		cli_error("record needs either -p PID or -- CMD [ARGS...] (not both)");
		goto out;
	}
	o.progress = isatty(STDERR_FILENO);

	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (recorder_run(&o, &res, err, sizeof(err))) {
		cli_error("%s", err);
		ret = 1;
		goto out;
	}
	fprintf(stderr, "asyncscope: recorded %llu events, %llu tasks, %llu lost events, "
		"%llu missed -> %s (%.1f KiB, %.1f bytes/event)\n",
		(unsigned long long)res.events, (unsigned long long)res.tasks,
		(unsigned long long)res.lost, (unsigned long long)res.missed, o.output,
		(double)res.bytes / 1024.0, res.events ? (double)res.bytes / (double)res.events : 0.0);
	if (o.offcpu)
		fprintf(stderr, "asyncscope: %llu off-CPU intervals inside polls, %llu distinct stacks\n",
			(unsigned long long)res.offcpu, (unsigned long long)res.stacks);
	if (o.runq || o.offcpu)
		fprintf(stderr, "asyncscope: %llu run-queue waits\n", (unsigned long long)res.runq);
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
	if (o.dwarf && o.offcpu)
		print_unwind("off-CPU intervals", &res.unwind_offcpu);
	if (res.lost)
		fprintf(stderr, "asyncscope: warning: %llu events were lost (ring buffer full): "
			"the report marks the affected numbers as incomplete\n",
			(unsigned long long)res.lost);
	if (res.target_status >= 0 && WIFEXITED(res.target_status) && WEXITSTATUS(res.target_status))
		fprintf(stderr, "asyncscope: the target exited with status %d\n",
			WEXITSTATUS(res.target_status));
	ret = 0;
out:
	free(usdt);
	free(pats);
	return ret;
}
