/* asyncscope entry point: the command table, and the top-level help made
 * from each command's description (cli/opts.h). */
#include <stdio.h>
#include <stdbool.h>
#include <string.h>

#include "cli/commands.h"

#define VERSION "0.1.0"

static const struct {
	const struct cli_command *cmd;
	int (*fn)(int argc, char **argv);
	const char *line;   /* one line for asyncscope --help */
} commands[] = {
	{ &record_command, cmd_record, "record a running (-p PID) or launched (-- CMD) program to a trace file" },
	{ &report_command, cmd_report, "the report of a trace: text, JSON or one HTML page" },
	{ &profile_command, cmd_profile, "CPU and off-CPU time per task without probes (samples, sched_switch)" },
	{ &serve_command, cmd_serve, "an agent: Prometheus /metrics and pprof over HTTP, per task, long-running" },
	{ &snapshot_command, cmd_snapshot, "asks a flight recorder (record/profile --flight) for a snapshot now" },
	{ &trace_command, cmd_trace, "record, then write the HTML report, in one step" },
	{ &top_command, cmd_top, "live view of the tasks of a running or launched program (q quits)" },
	{ &dump_command, cmd_dump, "the async stack of every task of a running program, from memory" },
	{ &export_command, cmd_export, "a trace as Perfetto JSON, folded stacks or CAT text" },
	{ &blocking_command, cmd_blocking, "off-CPU time inside polls per task and cause, run-queue delay" },
	{ &cpu_command, cmd_cpu, "CPU samples per task, or task-aware flame-graph stacks" },
	{ &uring_command, cmd_uring, "io_uring submissions, completions and latency per task" },
	{ &events_command, cmd_events, "the decoded event stream of a trace, one line per event" },
	{ &probes_command, cmd_probes, "the probe points (runtimes, futures, USDT) a binary offers" },
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: asyncscope COMMAND [OPTIONS] [ARGS]\n\n"
		"Traces the tasks of async Rust programs (Tokio, async-std, smol) with eBPF, no\n"
		"recompilation.\n\n"
		"commands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-10s %s\n", commands[i].cmd->name, commands[i].line);
	fprintf(f, "\n  asyncscope COMMAND --help        the options of one command\n"
		"  asyncscope -p PID -o report.html the same as trace\n"
		"  asyncscope --version\n");
}

/* Whether arg opens the one-step form of trace (`asyncscope -p PID -o
 * report.html`, `asyncscope --duration 5s -o r.html -- ./server`): the
 * target and output options, and the launch separator. */
static bool is_trace_form(const char *arg)
{
	static const char *const opens[] = { "-p", "--pid", "-o", "--output", "-d", "--duration",
					     "--" };

	for (size_t i = 0; i < sizeof(opens) / sizeof(opens[0]); i++) {
		size_t n = strlen(opens[i]);

		if (!strcmp(arg, opens[i]) || (n > 2 && !strncmp(arg, opens[i], n) && arg[n] == '=') ||
		    (n == 2 && opens[i][1] != '-' && !strncmp(arg, opens[i], 2) && arg[2]))
			return true;
	}
	return false;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("asyncscope %s\n", VERSION);
		return 0;
	}
	/* `asyncscope --pid PID --output report.html`: the one-step form of
	 * trace, which then reads every argument as its own */
	if (is_trace_form(argv[1]))
		return cmd_trace(argc, argv);
	if (argv[1][0] == '-') {
		cli_error("unknown option '%s' before any command: give a command first "
			  "(asyncscope --help lists them), or -p PID -o report.html for trace", argv[1]);
		usage(stderr);
		return 2;
	}
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (!strcmp(argv[1], commands[i].cmd->name))
			return commands[i].fn(argc - 1, argv + 1);
	cli_error("unknown command '%s': run 'asyncscope --help' for the list", argv[1]);
	return 2;
}
