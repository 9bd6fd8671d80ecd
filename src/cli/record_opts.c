/* The options of a recording (see record_opts.h). */
#include "cli/record_opts.h"
#include "sym/debuginfo.h"

#include <stdlib.h>
#include <string.h>

enum {
	RO_DURATION = 1000, RO_PID, RO_RUNTIME, RO_BUFFER, RO_USDT, RO_OFFCPU, RO_OFFCPU_MIN,
	RO_SAMPLE, RO_RUNQ, RO_URING, RO_DWARF, RO_FUTURES, RO_LITE, RO_PROBE, RO_PRESET,
	RO_DEBUG_FILE, RO_NO_OFFCPU,
};

#define NS_PER_S 1000000000ull

const struct cli_opt record_target_opts[] = {
	{ "pid", 'p', CLI_PID, RO_PID, NULL, "attach to the running process PID", 0, 0, true },
	{ "duration", 'd', CLI_DURATION, RO_DURATION, NULL,
	  "stop after DURATION (a launched command is then ended); default: at\n"
	  "Ctrl-C or when the target exits", 1, 0, false },
	{ "runtime", 'r', CLI_STRING, RO_RUNTIME, "NAME[+NAME]",
	  "runtime profile: tokio, async-std, smol, async-executor, several\n"
	  "joined by '+' (default: detected from the binary's symbols)", 0, 0, false },
	{ "buffer-size", 'b', CLI_SIZE, RO_BUFFER, NULL,
	  "BPF ring buffer, from 4K to 1G (default 8M)", 4ull << 10, 1ull << 30, false },
	DEBUG_FILE_OPT(RO_DEBUG_FILE),
	{ 0 },
};

const struct cli_opt record_event_opts[] = {
	{ "usdt", 0, CLI_LIST, RO_USDT, "PROVIDER:NAME",
	  "also trace the binary's USDT probe PROVIDER:NAME (PROVIDER:* all of\n"
	  "a provider; repeatable); then no async runtime is needed", 0, 0, false },
	{ "no-offcpu", 0, CLI_FLAG, RO_NO_OFFCPU, NULL,
	  "do not record when a thread blocks inside a poll (off CPU, with\n"
	  "kernel and user stacks: on by default but with --lite; they name\n"
	  "the blocking call, see asyncscope blocking)", 0, 0, false },
	{ "offcpu", 0, CLI_FLAG, RO_OFFCPU, NULL,
	  "off-CPU intervals (the default) and the run-queue waits of --runq;\n"
	  "with --lite, off-CPU intervals too", 0, 0, false },
	{ "offcpu-min", 0, CLI_DURATION, RO_OFFCPU_MIN, NULL,
	  "shortest off-CPU interval kept, up to 60s (default 100us)", 0, 60 * NS_PER_S, false },
	{ "sample", 0, CLI_RATE, RO_SAMPLE, NULL,
	  "also sample the target's CPU use HZ times a second per CPU (99 or\n"
	  "99Hz, up to 100000), with the task polled and the stacks (see\n"
	  "asyncscope cpu)", 1, 100000, false },
	{ "dwarf", 0, CLI_FLAG, RO_DWARF, NULL,
	  "with --sample and --offcpu: unwind user stacks by their DWARF call\n"
	  "frame information (8 KiB of stack copied per sample or switch),\n"
	  "for builds without frame pointers", 0, 0, false },
	{ "runq", 0, CLI_FLAG, RO_RUNQ, NULL,
	  "also record how long the target's threads wait for a CPU once\n"
	  "runnable (implied by an explicit --offcpu; see asyncscope blocking)", 0, 0, false },
	{ "uring", 0, CLI_FLAG, RO_URING, NULL,
	  "also record io_uring submissions (with the task polled) and\n"
	  "completions (see asyncscope uring)", 0, 0, false },
	{ "futures", 0, CLI_FLAG, RO_FUTURES, NULL,
	  "also trace the futures inside tasks: entry and return of the\n"
	  "out-of-line poll functions of the target's own async fns, async\n"
	  "blocks and impl Future::poll, with nesting depth, Ready/Pending and\n"
	  "the .await line (async flame graphs, await chains: see report and\n"
	  "export)", 0, 0, false },
	{ "lite", 0, CLI_FLAG, RO_LITE, NULL,
	  "polls and busy time only, at the least cost: the poll entry and\n"
	  "return (and completion, free) probes, no wake, spawn, park or driver\n"
	  "probes (no scheduling delays, wakers or spawn sites), no off-CPU\n"
	  "intervals unless --offcpu", 0, 0, false },
	{ "probe", 0, CLI_LIST, RO_PROBE, "REGEX",
	  "also trace functions whose demangled name matches REGEX (POSIX\n"
	  "extended; repeatable), entry and return with depth", 0, 0, false },
	{ "probe-preset", 0, CLI_STRING, RO_PRESET, "cat",
	  "CAT's four patterns: every closure and Future::poll, async-std's\n"
	  "task poll closure, GenFuture::poll", 0, 0, false },
	{ 0 },
};

int record_args__set(struct record_args *a, const struct cli_opt *opt, const struct cli_val *v)
{
	struct recorder_opts *o = &a->o;

	switch (opt->key) {
	case RO_DURATION: o->duration = (double)v->num / 1e9; break;
	case RO_PID: o->pid = (pid_t)v->num; break;
	case RO_RUNTIME: o->runtime = v->str; break;
	case RO_DEBUG_FILE: debuginfo_set_file(v->str); break;
	case RO_BUFFER: o->ringbuf_bytes = (size_t)v->num; break;
	case RO_USDT: {
		const char *colon = strchr(v->str, ':');
		if (!colon || colon == v->str || !colon[1]) {
			cli_error("--usdt takes PROVIDER:NAME or PROVIDER:*, not '%s'", v->str);
			return 2;
		}
		if (cli_push_arg(&a->usdt, &o->n_usdt, v->str))
			return 1;
		o->usdt = a->usdt;
		break;
	}
	case RO_OFFCPU:
		/* as before it was the default: the run-queue waits too */
		o->offcpu = o->runq = true;
		a->offcpu_given = true;
		break;
	case RO_NO_OFFCPU: a->no_offcpu = true; break;
	case RO_OFFCPU_MIN: o->offcpu_min_ns = v->num ? v->num : 1; break;
	case RO_SAMPLE: o->sample_hz = (uint32_t)v->num; break;
	case RO_RUNQ: o->runq = true; break;
	case RO_URING: o->uring = true; break;
	case RO_DWARF: o->dwarf = true; break;
	case RO_FUTURES: o->futures = true; break;
	case RO_LITE: o->lite = true; break;
	case RO_PROBE:
		if (cli_push_arg(&a->pats, &o->n_probe_patterns, v->str))
			return 1;
		o->probe_patterns = a->pats;
		break;
	case RO_PRESET:
		if (strcmp(v->str, "cat")) {
			cli_error("unknown --probe-preset '%s': the preset is 'cat' (CAT's four patterns)",
				  v->str);
			return 2;
		}
		o->probe_preset_cat = true;
		break;
	default:
		return -1;
	}
	return 0;
}

int record_args__finish(struct record_args *a, const struct cli_command *cmd, int argc,
			char **argv, int first)
{
	struct recorder_opts *o = &a->o;

	bool events = false;   /* a command with record's event options: record, trace */

	for (size_t t = 0; cmd->tables && cmd->tables[t]; t++)
		events |= cmd->tables[t] == record_event_opts;
	if (first < argc)
		o->argv = argv + first;
	if (a->offcpu_given && a->no_offcpu) {
		cli_error("--offcpu and --no-offcpu contradict each other: give one");
		return 2;
	}
	/* off-CPU intervals by default, but at --lite's least cost */
	if (events && !a->no_offcpu && !a->offcpu_given && !o->lite)
		o->offcpu = o->offcpu_default = true;
	if (o->dwarf && !o->sample_hz && !o->offcpu) {
		cli_error("--dwarf unwinds the stacks of --sample HZ and of off-CPU intervals: give "
			  "--sample HZ too, or drop %s", a->no_offcpu ? "--no-offcpu" : "--lite");
		return 2;
	}
	if (!o->pid && !o->argv)
		return cli_usage_error(cmd, "%s needs either -p PID to attach to a running process "
				       "or -- CMD [ARGS...] to launch one", cmd->name);
	if (o->pid && o->argv && first > 0 && strcmp(argv[first - 1], "--"))
		return cli_usage_error(cmd, "%s -p PID takes no operand, not '%s' (a command to "
				       "launch goes after --, without -p)", cmd->name, argv[first]);
	if (o->pid && o->argv)
		return cli_usage_error(cmd, "%s takes -p PID or -- CMD [ARGS...], not both",
				       cmd->name);
	return 0;
}

void record_args__free(struct record_args *a)
{
	free(a->usdt);
	free(a->pats);
	a->usdt = a->pats = NULL;
}
