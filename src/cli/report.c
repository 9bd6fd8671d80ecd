/* `asyncscope report`: trace file -> analysis -> text or JSON. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "analysis/tasks.h"
#include "cli/commands.h"
#include "output/report.h"
#include "trace/reader.h"

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "partial", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *format = "text";
	bool partial = false;
	struct trace_reader *r = NULL;
	struct analysis *an = NULL;
	char err[1024] = "";
	int c, ret = 1;

	optind = 1;
	while ((c = getopt_long(argc, argv, "f:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': format = optarg; break;
		case 'P': partial = true; break;
		case 'h':
			printf("usage: asyncscope report [--format text|json] [--partial] FILE\n");
			return 0;
		default:
			return 2;
		}
	}
	if (strcmp(format, "text") && strcmp(format, "json")) {
		cli_error("unknown format '%s': use --format text or --format json", format);
		return 2;
	}
	if (optind + 1 != argc) {
		cli_error("usage: asyncscope report [--format text|json] [--partial] FILE");
		return 2;
	}
	r = trace_reader__open(argv[optind], err, sizeof(err));
	if (!r) {
		cli_error("%s", err);
		return 1;
	}
	const struct as_trace_meta *meta = trace_reader__meta(r);
	an = analysis__new(meta);
	if (!an) {
		cli_error("out of memory");
		goto cleanup;
	}
	struct as_event ev;
	int n;
	uint64_t count = 0, last_ts = 0;
	bool truncated = false;
	while ((n = trace_reader__next(r, &ev)) == 1) {
		if (analysis__add(an, &ev) == -ENOMEM) {
			cli_error("out of memory after %llu events", (unsigned long long)count);
			goto cleanup;
		}
		count++;
		if (ev.ts > last_ts)
			last_ts = ev.ts;
	}
	if (n == -ENODATA && partial) {
		truncated = true;
		cli_error("warning: %s", trace_reader__error(r));
	} else if (n < 0) {
		cli_error("%s", trace_reader__error(r));
		goto cleanup;
	}
	const struct as_trace_end *end = trace_reader__end(r);
	struct as_trace_end cut = { .events = count, .end_ns = last_ts };
	if (analysis__finish(an, end ? end : &cut)) {
		cli_error("out of memory");
		goto cleanup;
	}
	struct report_opts ro = { .truncated = truncated };
	ret = !strcmp(format, "json") ? report_json(stdout, an, meta, end ? end : &cut, &ro)
				      : report_text(stdout, an, meta, end ? end : &cut, &ro);
	if (ret) {
		cli_error("writing the report: %s", strerror(-ret));
		ret = 1;
		goto cleanup;
	}
	size_t ntasks;
	analysis__tasks(an, &ntasks);
	if (ntasks == 0)
		cli_error("warning: the trace holds no task activity: the target ran no task "
			  "while it was recorded");
	ret = 0;
cleanup:
	analysis__free(an);
	trace_reader__free(r);
	return ret;
}
