/* `asyncscope report`: trace file -> analysis -> text, JSON or HTML.
 *
 * The file is read twice when the output has a timeline (JSON, HTML): pass 1
 * is the analysis; pass 2 reopens the file and feeds a timeline, which needs
 * the trace's start and end (known only after pass 1) for its buckets. The
 * text report has no timeline and reads the file once. Memory stays bounded
 * by the live tasks, the distinct wake pairs and --max-tasks rows of finished
 * tasks (the others are folded into groups by name and spawn location). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis/tasks.h"
#include "analysis/timeline.h"
#include "analysis/blocking.h"
#include "analysis/futures.h"
#include "analysis/usdt_counts.h"
#include "cli/commands.h"
#include "cli/opts.h"
#include "cli/steps.h"
#include "cli/progress.h"
#include "output/html.h"
#include "output/html_kernel.h"
#include "output/report.h"
#include "output/blocking_report.h"
#include "output/usdt_report.h"
#include "pipeline/source_file.h"

enum { R_FORMAT = 1, R_OUTPUT, R_HTML, R_PARTIAL, R_LONG_POLL, R_STALL, R_STARVE, R_MAX_TASKS };

static const struct cli_opt report_opts[] = {
	{ "format", 'f', CLI_CHOICE, R_FORMAT, "text|json|html",
	  "text (default), JSON (with per-task timelines), or one self-contained\n"
	  "HTML page (needs -o)" },
	{ "output", 'o', CLI_STRING, R_OUTPUT, "FILE", "write the report to FILE (default -: stdout)" },
	{ "html", 0, CLI_STRING, R_HTML, "FILE", "the same as --format html -o FILE" },
	{ "long-poll", 0, CLI_DURATION, R_LONG_POLL, NULL,
	  "a poll this long blocks its worker: listed in LONG POLLS (default 1ms)", 1 },
	{ "stall", 0, CLI_DURATION, R_STALL, NULL,
	  "a task idle this long after a Pending, never woken, is stalled\n(default 1s)", 1 },
	{ "starve", 0, CLI_DURATION, R_STARVE, NULL,
	  "a task woken but not polled for this long is starved (default 10ms)", 1 },
	{ "max-tasks", 0, CLI_COUNT, R_MAX_TASKS, NULL,
	  "finished tasks listed one by one, the busiest (default 10000, 0 all);\n"
	  "the others are summed per name and spawn location" },
	{ "partial", 0, CLI_FLAG, R_PARTIAL, NULL,
	  "report the events of a truncated trace (the recording did not\nfinish), marked as truncated" },
	{ 0 },
};

static const struct cli_opt *const tables[] = { report_opts, NULL };

const struct cli_command report_command = {
	.name = "report",
	.summary = "Reports the tasks of a trace (or CAT) file: tasks, workers, distributions, long "
		   "polls,\nstalled and starved tasks, wake edges.",
	.operands = "FILE",
	.tables = tables,
};

/* Reads every event of r into an, uc, bl and hk (pass 1; hk: the HTML page's
 * kernel-side sections, only with --html) or tl (pass 2). Returns 0,
 * or 1 (runtime failure, message printed). *truncated: the trace ends
 * without its trailer (accepted with partial); *cut: the end to use then.
 * Every event goes to both (the analysis counts USDT hits as events). */
static int drain(struct as_source *r, struct progress *pg, bool partial, struct analysis *an,
		 struct usdt_counts *uc, struct blocking *bl, struct html_kernel *hk,
		 struct futures *fu, struct timeline *tl, bool *truncated, struct as_trace_end *cut)
{
	struct as_event ev;
	uint64_t count = 0, last_ts = 0;
	int n;

	while ((n = as_source__next(r, &ev)) == 1) {
		int err = uc ? usdt_counts__add(uc, &ev) : 0;
		if (bl && !err)
			err = blocking__add(bl, &ev, ev.type == AS_EV_OFFCPU ?
					    as_source__stack(r, ev.stack) : NULL);
		if (hk && !err)
			err = html_kernel__add(hk, &ev, as_source__stack(r, ev.stack));
		if (fu && !err)
			err = futures__add(fu, &ev);
		if (!err)
			err = an ? analysis__add(an, &ev) : timeline__add(tl, &ev);
		if (err == -ENOMEM) {
			progress__end(pg);
			cli_error("out of memory after %" PRIu64 " events", count);
			return 1;
		}
		count++;
		if (ev.ts > last_ts)
			last_ts = ev.ts;
		progress__update(pg, r, count);
	}
	progress__end(pg);
	*truncated = false;
	if (n == -ENODATA && partial) {
		*truncated = true;
	} else if (n < 0) {
		cli_error("%s", as_source__error(r));
		return 1;
	}
	*cut = (struct as_trace_end){ .events = count, .end_ns = last_ts };
	return 0;
}

/* Writes the report of an in the chosen form to out, or with html the page
 * to the file html ("-": stdout). Returns 0 or -errno. */
static int write_report(const char *format, const char *html, FILE *out,
			const struct analysis *an, const struct as_trace_meta *meta,
			const struct as_trace_end *end, const struct report_opts *ro,
			struct blocking *bl, struct html_kernel *hk)
{
	char *json = NULL;
	size_t len = 0;
	FILE *mem;
	int err;

	if (!html)
		return !strcmp(format, "json") ? report_json(out, an, meta, end, ro)
					       : report_text(out, an, meta, end, ro);
	mem = open_memstream(&json, &len);
	if (!mem)
		return -errno;
	err = report_json(mem, an, meta, end, ro);
	if (fclose(mem) && !err)
		err = -EIO;
	if (err) {
		free(json);
		return err;
	}
	out = strcmp(html, "-") ? fopen(html, "w") : stdout;
	if (!out) {
		err = -errno;
		cli_error("cannot write %s: %s", html, strerror(errno));
		free(json);
		return err;
	}
	err = report_html_kernel(out, json, len, bl, hk);
	if (cli_close_output(out) && !err)
		err = -EIO;
	free(json);
	if (!err && strcmp(html, "-"))
		fprintf(stderr, "asyncscope: wrote %s\n", html);
	return err;
}

static int on_opt(void *ctx, const struct cli_opt *opt, const struct cli_val *v)
{
	struct report_args *a = ctx;

	switch (opt->key) {
	case R_FORMAT: a->format = v->str; break;
	case R_OUTPUT: a->output = v->str; break;
	case R_HTML: a->format = "html"; a->output = v->str; break;
	case R_PARTIAL: a->partial = true; break;
	case R_LONG_POLL: a->ao.long_poll_ns = v->num; break;
	case R_STALL: a->ao.stall_ns = v->num; break;
	case R_STARVE: a->ao.starve_ns = v->num; break;
	case R_MAX_TASKS:
		if (v->num > SIZE_MAX - 1) {
			cli_error("--max-tasks takes a number up to %zu, not '%s'", SIZE_MAX - 1, v->str);
			return 2;
		}
		a->ao.max_tasks = v->num ? (size_t)v->num : ANALYSIS_UNLIMITED;
		break;
	}
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct report_args a = { .format = "text", .output = NULL };
	int first, ret = cli_parse(&report_command, argc, argv, on_opt, &a, &first);

	if (ret >= 0)
		return ret;
	if (first + 1 != argc)
		return cli_usage_error(&report_command, first < argc ? "report reads one trace file"
				       : "report needs the trace FILE");
	if (!strcmp(a.format, "html") && !a.output)
		return cli_usage_error(&report_command, "--format html writes a page: give -o FILE "
				       "(-o - for stdout)");
	if (!a.output)
		a.output = "-";
	a.path = argv[first];
	return report_run(&a);
}

int report_run(const struct report_args *args)
{
	const char *format = args->format, *path = args->path;
	const char *html = !strcmp(format, "html") ? args->output : NULL;
	bool partial = args->partial, truncated = false, truncated2 = false, two_pass;
	struct as_source src = { 0 }, src2 = { 0 }, *r = &src, *r2 = &src2;
	struct analysis *an = NULL;
	struct usdt_counts *uc = NULL;
	struct blocking *bl = NULL;
	struct html_kernel *hk = NULL;
	struct futures *fu = NULL;
	struct timeline *tl = NULL;
	struct analysis_opts ao = args->ao;
	struct as_trace_end cut, cut2;
	const struct as_trace_end *end;
	const struct as_trace_meta *meta;
	struct progress pg;
	FILE *out = NULL;
	char err[1024] = "";
	size_t ntasks;
	int ret = 1;

	progress__init(&pg, "reading trace", path, PROGRESS_AUTO);
	two_pass = html || !strcmp(format, "json");

	/* Pass 1: the analysis. */
	if (source_open_file(r, path, err, sizeof(err))) {
		cli_error("%s", err);
		return 1;
	}
	meta = as_source__meta(r);
	an = analysis__new_opts(meta, &ao);
	uc = usdt_counts__new(meta);
	bl = blocking__new(meta);
	hk = html ? html_kernel__new(meta) : NULL;
	if (!an || !uc || (html && !hk)) {
		cli_error("out of memory");
		goto cleanup;
	}
	pg.what = two_pass ? "reading trace (pass 1 of 2)" : "reading trace";
	/* future frames: only in traces recorded with --futures / --probe */
	for (uint32_t i = 0; meta && meta->probes && i < meta->n_probes && !fu; i++)
		if (meta->probes[i].role == AS_ROLE_FUTURE && !(fu = futures__new(meta, NULL))) {
			cli_error("out of memory");
			goto cleanup;
		}
	if (drain(r, &pg, partial, an, uc, bl, hk, fu, NULL, &truncated, &cut))
		goto cleanup;
	if (truncated)
		cli_error("warning: %s", as_source__error(r));
	end = as_source__end(r);
	if (!end)
		end = &cut;
	if (analysis__finish(an, end) || (fu && futures__finish(fu, end->end_ns))) {
		cli_error("out of memory");
		goto cleanup;
	}

	/* Pass 2: the timeline, now that the trace's bounds are known. */
	if (two_pass) {
		if (source_open_file(r2, path, err, sizeof(err))) {
			cli_error("%s", err);
			goto cleanup;
		}
		tl = timeline__new(an, as_source__meta(r2), NULL);
		if (!tl) {
			cli_error("out of memory");
			goto cleanup;
		}
		pg.what = "reading trace (pass 2 of 2)";
		if (drain(r2, &pg, partial, NULL, NULL, NULL, NULL, NULL, tl, &truncated2, &cut2))
			goto cleanup;
		if (timeline__finish(tl, end)) {
			cli_error("out of memory");
			goto cleanup;
		}
	}

	/* USDT hit counts: in JSON (and so the HTML page's data), and as a
	 * section after the text report */
	usdt_counts__finish(uc);
	struct report_opts ro = { .truncated = truncated, .timeline = tl, .usdt = uc,
				  .blocking = bl && blocking__summary(bl)->count ? bl : NULL,
				  .futures = fu };
	if (!html && !(out = cli_open_output(args->output)))
		goto cleanup;
	ret = write_report(format, html, out, an, meta, end, &ro, bl, hk);
	if (!ret && !html && !strcmp(format, "text"))
		ret = usdt_report_text(out, uc);
	/* off-CPU inside polls (record --offcpu): also `asyncscope blocking` */
	if (!ret && !html && !strcmp(format, "text") && ro.blocking)
		ret = blocking_report_text(out, bl);
	if (out) {
		int e = cli_close_output(out);
		out = NULL;
		if (!ret)
			ret = e;
	}
	if (ret) {
		cli_error("writing the report: %s", strerror(-ret));
		ret = 1;
		goto cleanup;
	}
	analysis__tasks(an, &ntasks);
	if (ntasks == 0 && !usdt_counts__total(uc))
		cli_error("warning: the trace holds no task activity: the target ran no task "
			  "while it was recorded");
	ret = 0;
cleanup:
	if (out && out != stdout)
		fclose(out);
	timeline__free(tl);
	usdt_counts__free(uc);
	blocking__free(bl);
	html_kernel__free(hk);
	futures__free(fu);
	analysis__free(an);
	as_source__free(r);
	as_source__free(r2);
	return ret;
}
