/* `asyncscope trace`: record, then write the HTML report, in one step. The
 * trace file is kept next to the report (report.html -> report.trace) for
 * `report` and `export`. Also reached as `asyncscope --pid PID --output F`. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"

#define TRACE_USAGE "usage: asyncscope trace (-p PID | -- CMD [ARGS...]) [--duration SEC] " \
	"[--runtime NAME] [--buffer-size KIB] -o report.html"

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

int cmd_trace(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "duration", required_argument, NULL, 'd' },
		{ "pid", required_argument, NULL, 'p' },
		{ "runtime", required_argument, NULL, 'r' },
		{ "buffer-size", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *html = "asyncscope-report.html";
	char *rec_argv[16 + 1] = { "record" };
	int rec_argc = 1, c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:d:p:r:b:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': html = optarg; break;
		case 'd': rec_argv[rec_argc++] = "--duration"; rec_argv[rec_argc++] = optarg; break;
		case 'p': rec_argv[rec_argc++] = "-p"; rec_argv[rec_argc++] = optarg; break;
		case 'r': rec_argv[rec_argc++] = "--runtime"; rec_argv[rec_argc++] = optarg; break;
		case 'b': rec_argv[rec_argc++] = "--buffer-size"; rec_argv[rec_argc++] = optarg; break;
		case 'h': printf("%s\n", TRACE_USAGE); return 0;
		default: return 2;
		}
	}
	char *trace = trace_path_for(html);
	if (!trace) {
		cli_error("out of memory");
		return 1;
	}
	rec_argv[rec_argc++] = "-o";
	rec_argv[rec_argc++] = trace;
	/* the command to launch goes through unchanged */
	int n_cmd = argc - optind;
	char **all = calloc((size_t)(rec_argc + n_cmd + 2), sizeof(*all));
	if (!all) {
		free(trace);
		cli_error("out of memory");
		return 1;
	}
	memcpy(all, rec_argv, (size_t)rec_argc * sizeof(*all));
	if (n_cmd > 0) {
		all[rec_argc++] = "--";
		memcpy(all + rec_argc, argv + optind, (size_t)n_cmd * sizeof(*all));
		rec_argc += n_cmd;
	}
	ret = cmd_record(rec_argc, all);
	if (ret == 0) {
		char *rep_argv[] = { "report", "--html", (char *)html, trace, NULL };
		ret = cmd_report(4, rep_argv);
		if (ret == 0)
			fprintf(stderr, "asyncscope: open %s in a browser; the trace is %s "
				"(asyncscope report / export)\n", html, trace);
	}
	free(all);
	free(trace);
	return ret;
}
