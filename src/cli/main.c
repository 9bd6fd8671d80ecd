/* asyncscope entry point: the command table. */
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"

#define VERSION "0.1.0"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "record", cmd_record, "record [-o FILE] [--duration SEC] [--runtime NAME] [--buffer-size KIB] [--offcpu] [--sample HZ] (-p PID | -- CMD [ARGS...])" },
	{ "report", cmd_report, "report [--format text|json] [--html FILE] [--long-poll D] [--stall D] [--starve D] [--partial] FILE" },
	{ "export", cmd_export, "export --format perfetto|folded -o OUT FILE" },
	{ "trace", cmd_trace, "trace (-p PID | -- CMD [ARGS...]) [record options] -o report.html    record, then the HTML report" },
	{ "dump", cmd_dump, "dump -p PID [--format text|json]    async stack of every task, from memory" },
	{ "top", cmd_top, "top (-p PID | -- CMD [ARGS...]) [--interval SEC]    live view of the tasks (q quits)" },
	{ "blocking", cmd_blocking, "blocking [--folded] FILE    off-CPU time inside polls per task and cause (record --offcpu)" },
	{ "cpu", cmd_cpu, "cpu [--folded] FILE    CPU samples per task, or flame-graph stacks (record --sample HZ)" },
	{ "uring", cmd_uring, "uring FILE    io_uring submissions, completions and latency per task (record --uring)" },
	{ "events", cmd_events, "events FILE    print the decoded event stream of a trace" },
	{ "probes", cmd_probes, "probes [--runtime NAME] [--futures] [--probe REGEX] BINARY    list the probe points a binary offers" },
};

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("asyncscope: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_push_arg(const char ***v, size_t *n, const char *s)
{
	const char **nv = realloc(*v, (*n + 1) * sizeof(*nv));

	if (!nv) {
		cli_error("out of memory");
		return -ENOMEM;
	}
	nv[(*n)++] = s;
	*v = nv;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: asyncscope COMMAND [OPTIONS]\n\n"
		"Traces the tasks of async Rust programs (Tokio) with eBPF, no recompilation.\n\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  asyncscope %s\n", commands[i].help);
	fprintf(f, "\n  asyncscope --pid PID --output report.html   (same as trace)\n"
		"  asyncscope --version\n");
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
	/* `asyncscope --pid PID --output report.html`: the one-step form of trace */
	if (argv[1][0] == '-' && strcmp(argv[1], "-") &&
	    (!strcmp(argv[1], "--pid") || !strcmp(argv[1], "-p") || !strcmp(argv[1], "--output") ||
	     !strcmp(argv[1], "-o") || !strcmp(argv[1], "--duration") || !strcmp(argv[1], "--")))
		return cmd_trace(argc, argv);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	cli_error("unknown command '%s': run 'asyncscope --help' for the list", argv[1]);
	return 2;
}
