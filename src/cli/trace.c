/* `asyncscope trace`: record, then write the HTML report, in one step. The
 * trace file is kept next to the report (report.html -> report.trace) for
 * `report` and `export`. Also reached as `asyncscope --pid PID --output F`.
 * Takes record's options from record's tables (cli/record_opts.h) and runs
 * the two steps as functions (cli/steps.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/record_opts.h"
#include "cli/steps.h"

static const struct cli_opt output_opts[] = {
	{ "output", 'o', CLI_STRING, 'o', "FILE",
	  "the HTML report (default asyncscope-report.html); the trace is\n"
	  "written beside it (report.html -> report.trace)" },
	{ 0 },
};

static const struct cli_opt *const tables[] = { output_opts, record_target_opts,
						  record_event_opts, NULL };

const struct cli_command trace_command = {
	.name = "trace",
	.summary = "Records like record (the same options), then writes the HTML report.",
	.operands = RECORD_OPERANDS,
	.tables = tables,
	.stop_at_operand = true,
};

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

struct trace_args {
	struct record_args rec;
	const char *html;
};

static int on_opt(void *ctx, const struct cli_opt *opt, const struct cli_val *v)
{
	struct trace_args *t = ctx;

	if (opt->key == 'o') {
		t->html = v->str;
		return 0;
	}
	return record_args__set(&t->rec, opt, v);
}

int cmd_trace(int argc, char **argv)
{
	struct trace_args t = { .html = "asyncscope-report.html" };
	char *trace = NULL;
	int first, ret = cli_parse(&trace_command, argc, argv, on_opt, &t, &first);

	if (ret >= 0)
		goto out;
	ret = record_args__finish(&t.rec, &trace_command, argc, argv, first);
	if (ret)
		goto out;
	trace = trace_path_for(t.html);
	if (!trace) {
		cli_error("out of memory");
		ret = 1;
		goto out;
	}
	t.rec.o.output = trace;
	ret = record_run(&t.rec.o);
	if (ret == 0) {
		struct report_args ra = { .path = trace, .format = "html", .output = t.html };
		ret = report_run(&ra);
		if (ret == 0)
			fprintf(stderr, "asyncscope: open %s in a browser; the trace is %s "
				"(asyncscope report / export)\n", t.html, trace);
	}
out:
	record_args__free(&t.rec);
	free(trace);
	return ret;
}
