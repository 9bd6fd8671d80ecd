/* `asyncscope report`: trace file -> analysis -> text, JSON or HTML.
 *
 * The file is read twice when the output has a timeline (JSON, HTML): pass 1
 * is the analysis; pass 2 reopens the file and feeds a timeline (JSON) or
 * the HTML page's zoomable timeline and task details (analysis/zoom.h),
 * which need the trace's start and end (known only after pass 1) for their
 * buckets and the first pass's rows to pick the tasks they detail. The
 * text report has no timeline and reads the file once. Memory stays bounded
 * by --max-live-tasks live tasks, the distinct wake pairs and --max-tasks
 * rows of finished tasks (the others, and the least recently active live
 * tasks past --max-live-tasks, are folded into groups by name and spawn
 * location). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis/cpu_samples.h"
#include "analysis/runq.h"
#include "analysis/task_model.h"
#include "analysis/tasks.h"
#include "analysis/uring.h"
#include "analysis/timeline.h"
#include "analysis/zoom.h"
#include "analysis/blocking.h"
#include "analysis/findings.h"
#include "analysis/futures.h"
#include "analysis/usdt_counts.h"
#include "cli/commands.h"
#include "cli/opts.h"
#include "cli/steps.h"
#include "cli/progress.h"
#include "output/html.h"
#include "output/report.h"
#include "output/blocking_report.h"
#include "output/cpu_report.h"
#include "output/usdt_report.h"
#include "output/view.h"
#include "pipeline/source_file.h"

enum { R_FORMAT = 1, R_OUTPUT, R_HTML, R_PARTIAL, R_LONG_POLL, R_STALL, R_STARVE, R_MAX_TASKS,
       R_MAX_LIVE_TASKS };

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
	{ "max-live-tasks", 0, CLI_COUNT, R_MAX_LIVE_TASKS, NULL,
	  "tasks followed at once (default 20000, 0 no limit): past it the\n"
	  "least recently active live tasks are summed the same way" },
	{ "partial", 0, CLI_FLAG, R_PARTIAL, NULL,
	  "report the events of a truncated trace (the recording did not\nfinish), marked as truncated" },
	{ 0 },
};

static const struct cli_opt *const tables[] = { report_opts, cli_color_opts, cli_wide_opts,
						  cli_limit_opts, NULL };

const struct cli_command report_command = {
	.name = "report",
	.summary = "Reports the tasks of a trace (or CAT) file: what is wrong first (blocking calls,\n"
		   "long polls, never-woken, starved and self-waking tasks, lost events), then tasks,\n"
		   "workers, distributions, long polls, stalled and starved tasks, wake edges.",
	.operands = "FILE",
	.tables = tables,
};

/* Writes the report of an in the chosen form to out, or with html the page
 * to the file html ("-": stdout). Returns 0 or -errno. */
static int write_report(const char *format, const char *html, FILE *out,
			const struct analysis *an, const struct as_trace_meta *meta,
			const struct as_trace_end *end, const struct report_opts *ro,
			const struct html_inputs *hin)
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
	out = cli_open_output(html);
	if (!out) {
		free(json);
		return -ECANCELED;   /* cli_open_output() said why: nothing to add */
	}
	err = report_html_write(out, json, len, hin);
	if (err) {
		err = cli_write_errno(err);   /* -ENOSPC when its file system is full */
		if (out != stdout)
			fclose(out);   /* not put in place */
	} else {
		err = cli_close_output(out);
	}
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
	case R_MAX_LIVE_TASKS:
		if (v->num > SIZE_MAX - 1) {
			cli_error("--max-live-tasks takes a number up to %zu, not '%s'", SIZE_MAX - 1,
				  v->str);
			return 2;
		}
		a->ao.max_live_tasks = v->num ? (size_t)v->num : ANALYSIS_UNLIMITED;
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

/* Whether the trace was recorded with future probes (--futures / --probe). */
static bool has_futures(const struct as_trace_meta *meta)
{
	for (uint32_t i = 0; meta && meta->probes && i < meta->n_probes; i++)
		if (meta->probes[i].role == AS_ROLE_FUTURE)
			return true;
	return false;
}

/* Pass 1 is one task model observed by the task analysis, the futures
 * analysis (traces with future probes), the off-CPU analysis, the USDT
 * counts and, for the HTML page, the CPU-sample and io_uring analyses (the
 * run-queue analysis, beside them, follows threads alone). Pass 2 (JSON, HTML) is the same input again into a
 * timeline (JSON) or the page's zoom pass (HTML), which need pass 1's bounds for their buckets. */
int report_run(const struct report_args *args)
{
	const char *format = args->format, *path = args->path;
	const char *html = !strcmp(format, "html") ? args->output : NULL;
	bool two_pass = html || !strcmp(format, "json");
	struct as_source src = { 0 }, src2 = { 0 }, *r = &src, *r2 = &src2;
	struct task_model *m = NULL;
	struct analysis *an = NULL;
	struct usdt_counts *uc = NULL;
	struct blocking *bl = NULL;
	struct futures *fu = NULL;
	struct timeline *tl = NULL;
	struct zoom *zm = NULL;
	struct findings *fi = NULL;
	struct html_inputs hin = { 0 };
	struct pipeline_result res, res2;
	const struct as_trace_meta *meta;
	struct as_sink sinks[8];
	size_t n = 0;
	FILE *out = NULL;
	char err[1024] = "";
	size_t ntasks;
	int ret = 1;

	if (source_open_file(r, path, err, sizeof(err))) {
		cli_error("%s", err);
		return 1;
	}
	cli_note_input(path);
	meta = as_source__meta(r);
	m = task_model__new(meta);
	an = m ? analysis__new_on(m, meta, &args->ao) : NULL;
	uc = m ? usdt_counts__new_on(m, meta) : NULL;
	bl = m ? blocking__new_on(m, meta) : NULL;
	bool with_futures = has_futures(meta);

	fu = m && with_futures ? futures__new_on(m, meta, NULL) : NULL;
	bool profile = as_meta_profile(meta);   /* asyncscope profile: its samples in text too */

	if (html || profile)
		hin.cpu = m ? cpu_samples__new_on(m, meta) : NULL;
	if (html) {
		hin.runq = runq__new();
		hin.uring = m ? uring__new_on(m, meta) : NULL;
	}
	if (!an || !uc || !bl || (with_futures && !fu) || ((html || profile) && !hin.cpu) ||
	    (html && (!hin.runq || !hin.uring))) {
		cli_error("out of memory");
		goto cleanup;
	}
	/* the model first: its observers (an, fu, bl, uc and the HTML page's
	 * CPU-sample and io_uring analyses) see each event through it */
	sinks[n++] = task_model__sink(m);
	sinks[n++] = analysis__sink(an);
	if (fu)
		sinks[n++] = futures__sink(fu);
	sinks[n++] = blocking__sink(bl);
	/* USDT hit counts: nothing to count in a trace without USDT probes */
	size_t n_usdt;

	usdt_counts__probes(uc, &n_usdt);
	if (n_usdt)
		sinks[n++] = usdt_counts__sink(uc);
	if (html || profile)
		sinks[n++] = cpu_samples__sink(hin.cpu);
	if (html) {
		sinks[n++] = runq__sink(hin.runq);
		sinks[n++] = uring__sink(hin.uring);
	}
	if (cli_run(r, &(struct cli_run_opts){ .path = path, .partial = args->partial,
		    .what = two_pass ? "reading trace (pass 1 of 2)" : "reading trace" },
		    sinks, n, &res))
		goto cleanup;
	if (res.corrupt)
		;   /* said by cli_run() */
	else if (res.truncated && res.end.counts_lower_bound)
		cli_error("warning: %s is truncated after %llu events (the recording did not finish): "
			  "the report covers them; at least %llu events were lost and %llu missed",
			  path, (unsigned long long)res.events, (unsigned long long)res.end.lost,
			  (unsigned long long)res.end.missed);
	else if (res.truncated)
		cli_error("warning: %s is truncated after %llu events (the recording did not finish): "
			  "the report covers them, its lost and missed events unknown", path,
			  (unsigned long long)res.events);
	usdt_counts__finish(uc);   /* its sink's finish, or nothing fed */

	if (two_pass) {
		if (source_open_file(r2, path, err, sizeof(err))) {
			cli_error("%s", err);
			goto cleanup;
		}
		/* JSON: the timeline; HTML: the page's zoomable timeline and task
		 * details instead (the page draws its timeline from them), the
		 * tasks blocking in polls detailed after the busiest */
		if (html) {
			size_t nb;
			const struct blocking_task *bt = blocking__tasks(bl, &nb);
			uint64_t extra[100];
			size_t ne = 0;

			for (size_t i = 0; bt && i < nb && ne < sizeof(extra) / sizeof(extra[0]); i++)
				if (bt[i].seq)
					extra[ne++] = bt[i].seq;
			zm = zoom__new(an, as_source__meta(r2),
				       &(struct zoom_opts){ .extra = extra, .n_extra = ne });
		} else {
			tl = timeline__new(an, as_source__meta(r2), NULL);
		}
		if (!tl && !zm) {
			cli_error("out of memory");
			goto cleanup;
		}
		struct as_sink tsink = zm ? zoom__sink(zm) : timeline__sink(tl);

		/* the same input: it ends where pass 1 did (the same trailer, or
		 * the same cut) */
		if (cli_run(r2, &(struct cli_run_opts){ .path = path, .partial = args->partial,
			    .what = "reading trace (pass 2 of 2)" }, &tsink, 1, &res2))
			goto cleanup;
	}
	hin.blocking = bl;
	hin.zoom = zm;
	/* what is wrong, from every analysis of pass 1 (the off-CPU one even
	 * without intervals in polls: its parked ones say the data is there) */
	fi = findings__new(&(struct findings_input){ .analysis = an, .blocking = bl, .futures = fu,
						     .meta = meta, .end = &res.end,
						     .truncated = res.truncated,
						     .wide = cli_view()->wide });
	if (!fi) {
		cli_error("out of memory");
		goto cleanup;
	}
	struct report_opts ro = { .truncated = res.truncated, .timeline = tl, .usdt = uc,
				  .blocking = blocking__summary(bl)->count ? bl : NULL,
				  .futures = fu, .findings = fi };
	if (!html && !(out = cli_open_output(args->output)))
		goto cleanup;
	struct text_view tv = { .color = out && cli_color(out), .wide = cli_view()->wide,
				.limit = cli_view()->limit };

	ro.view = &tv;
	ret = write_report(format, html, out, an, meta, &res.end, &ro, &hin);
	if (!ret && !html && !strcmp(format, "text"))
		ret = usdt_report_text(out, uc);
	/* a profile's CPU samples: also `asyncscope cpu` */
	if (!ret && !html && !strcmp(format, "text") && profile) {
		fputc('\n', out);
		ret = cpu_report_text(out, hin.cpu, &tv);
		if (!ret)
			fputc('\n', out);
	}
	/* off-CPU inside polls (record --offcpu): also `asyncscope blocking` */
	if (!ret && !html && !strcmp(format, "text") && ro.blocking) {
		fputc('\n', out);
		ret = blocking_report_text(out, bl, &tv);
	}
	if (out && !ret) {
		ret = cli_close_output(out);   /* -o FILE put in place */
		out = NULL;
	} else if (out) {
		/* not put in place; the write's own errno (ENOSPC ...) when the
		 * writer could only say EIO */
		if (ret == -EIO && fflush(out))
			ret = -errno;
		ret = cli_write_errno(ret);   /* -ENOSPC when its file system is full */
		if (out != stdout)
			fclose(out);
		out = NULL;
	}
	if (ret) {
		if (ret != -ECANCELED)
			cli_error("writing the report: %s", cli_write_error(ret));
		ret = 1;
		goto cleanup;
	}
	analysis__tasks(an, &ntasks);
	if (ntasks == 0 && !usdt_counts__total(uc) && !profile)
		cli_error("warning: the trace holds no task activity: the target ran no task "
			  "while it was recorded");
	ret = 0;
cleanup:
	if (out && out != stdout)
		fclose(out);
	timeline__free(tl);
	zoom__free(zm);
	findings__free(fi);
	usdt_counts__free(uc);
	blocking__free(bl);
	futures__free(fu);
	analysis__free(an);
	task_model__free(m);
	cpu_samples__free(hin.cpu);
	runq__free(hin.runq);
	uring__free(hin.uring);
	as_source__free(r);
	as_source__free(r2);
	return ret;
}
