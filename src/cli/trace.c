/* `asyncscope trace`: record, then write the HTML report, in one step. The
 * trace file is kept next to the report (report.html -> report.trace) for
 * `report` and `export`. Also reached as `asyncscope --pid PID --output F`. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"

#define TRACE_USAGE "usage: asyncscope trace (-p PID | -- CMD [ARGS...]) [--duration SEC] " \
	"[--runtime NAME] [--buffer-size KIB]\n" \
	"                        [--futures] [--probe REGEX]... [--probe-preset cat] [--offcpu] " \
	"[--offcpu-min US]\n" \
	"                        [--sample HZ] [--dwarf] [--runq] [--uring] [--usdt P:N]... " \
	"-o report.html\n" \
	"  the options of record (see asyncscope record --help), then the HTML report"

/* report.html -> report.trace; anything else gets ".trace" appended. */
static char *trace_path_for(const char *html)
{
	size_t n = strlen(html);
	char *p = malloc(n + 7);

	if (!p)
		return NULL;
	if (n > 5 && !strcmp(html + n - 5, ".html"))
		n -= 5;
	memcpy(p, html, n);
	strcpy(p + n, ".trace");
	return p;
}

/* Options passed on to record as they are: their spelling on the command
 * line (getopt's long name is the part after "--"), whether they take a
 * value, and getopt's value for them. */
static const struct pass_opt {
	const char *flag;
	int has_arg;
	int val;
} pass_opts[] = {
	{ "--duration", required_argument, 'd' },
	{ "--runtime", required_argument, 'r' },
	{ "--buffer-size", required_argument, 'b' },
	{ "--futures", no_argument, 'F' },
	{ "--probe", required_argument, 'P' },
	{ "--probe-preset", required_argument, 'R' },
	{ "--offcpu", no_argument, 'O' },
	{ "--offcpu-min", required_argument, 'M' },
	{ "--sample", required_argument, 'S' },
	{ "--dwarf", no_argument, 'D' },
	{ "--runq", no_argument, 'Q' },
	{ "--uring", no_argument, 'U' },
	{ "--usdt", required_argument, 'u' },
};
#define N_PASS (sizeof(pass_opts) / sizeof(pass_opts[0]))

int cmd_trace(int argc, char **argv)
{
	struct option longopts[N_PASS + 4] = {
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
	};
	const char *html = "asyncscope-report.html";
	const char **rec = NULL;
	char *trace = NULL;
	size_t n_rec = 0;
	int c, ret = 1, idx;

	for (size_t k = 0; k < N_PASS; k++)
		longopts[3 + k] = (struct option){ pass_opts[k].flag + 2, pass_opts[k].has_arg, NULL,
						   pass_opts[k].val };
	if (cli_push_arg(&rec, &n_rec, "record"))
		return 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:d:p:r:b:h", longopts, &idx)) != -1) {
		size_t k = 0;
		while (k < N_PASS && pass_opts[k].val != c)
			k++;
		if (k < N_PASS) {
			if (cli_push_arg(&rec, &n_rec, pass_opts[k].flag) ||
			    (pass_opts[k].has_arg && cli_push_arg(&rec, &n_rec, optarg)))
				goto out;
			continue;
		}
		switch (c) {
		case 'o': html = optarg; break;
		case 'p':
			if (cli_push_arg(&rec, &n_rec, "-p") || cli_push_arg(&rec, &n_rec, optarg))
				goto out;
			break;
		case 'h': printf("%s\n", TRACE_USAGE); ret = 0; goto out;
		default: ret = 2; goto out;
		}
	}
	trace = trace_path_for(html);
	if (!trace) {
		cli_error("out of memory");
		goto out;
	}
	if (cli_push_arg(&rec, &n_rec, "-o") || cli_push_arg(&rec, &n_rec, trace))
		goto out;
	/* the command to launch goes through unchanged */
	if (optind < argc && cli_push_arg(&rec, &n_rec, "--"))
		goto out;
	for (int k = optind; k < argc; k++)
		if (cli_push_arg(&rec, &n_rec, argv[k]))
			goto out;
	if (cli_push_arg(&rec, &n_rec, NULL))
		goto out;
	ret = cmd_record((int)n_rec - 1, (char **)rec);
	if (ret == 0) {
		char *rep_argv[] = { "report", "--html", (char *)html, trace, NULL };
		ret = cmd_report(4, rep_argv);
		if (ret == 0)
			fprintf(stderr, "asyncscope: open %s in a browser; the trace is %s "
				"(asyncscope report / export)\n", html, trace);
	}
out:
	free(rec);
	free(trace);
	return ret;
}
