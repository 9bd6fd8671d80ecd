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
#include "cli/progress.h"
#include "output/html.h"
#include "output/html_kernel.h"
#include "output/report.h"
#include "output/blocking_report.h"
#include "output/usdt_report.h"
#include "trace/reader.h"

#define USAGE "usage: asyncscope report [--format text|json] [--html FILE] [--partial]\n" \
	"         [--long-poll DURATION] [--stall DURATION] [--starve DURATION]\n" \
	"         [--max-tasks N] FILE\n" \
	"DURATION: ns, or with a unit: 500us, 1ms, 1.5s\n" \
	"--max-tasks: finished tasks listed one by one, the busiest (default 10000, 0 all);\n" \
	"             the others are summed per name and spawn location"


/* Parses "1500", "1500ns", "500us", "1ms", "1.5s" into ns. Returns 0 or -EINVAL. */
static int parse_duration(const char *s, uint64_t *ns)
{
	static const struct { const char *unit; double mult; } units[] = {
		{ "", 1 }, { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	};
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v >= 0) || *s == '-' || *s == '+')
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		v *= units[i].mult;
		if (v < 1 || v > 1e18)
			return -EINVAL;
		*ns = (uint64_t)(v + 0.5);
		return 0;
	}
	return -EINVAL;
}

/* Reads every event of r into an, uc, bl and hk (pass 1; hk: the HTML page's
 * kernel-side sections, only with --html) or tl (pass 2). Returns 0,
 * or 1 (runtime failure, message printed). *truncated: the trace ends
 * without its trailer (accepted with partial); *cut: the end to use then.
 * Every event goes to both (the analysis counts USDT hits as events). */
static int drain(struct trace_reader *r, struct progress *pg, bool partial, struct analysis *an,
		 struct usdt_counts *uc, struct blocking *bl, struct html_kernel *hk,
		 struct futures *fu, struct timeline *tl, bool *truncated, struct as_trace_end *cut)
{
	struct as_event ev;
	uint64_t count = 0, last_ts = 0;
	int n;

	while ((n = trace_reader__next(r, &ev)) == 1) {
		int err = uc ? usdt_counts__add(uc, &ev) : 0;
		if (bl && !err)
			err = blocking__add(bl, &ev, ev.type == AS_EV_OFFCPU ?
					    trace_reader__stack(r, ev.stack) : NULL);
		if (hk && !err)
			err = html_kernel__add(hk, &ev, trace_reader__stack(r, ev.stack));
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
		progress__update(pg, r);
	}
	progress__end(pg);
	*truncated = false;
	if (n == -ENODATA && partial) {
		*truncated = true;
	} else if (n < 0) {
		cli_error("%s", trace_reader__error(r));
		return 1;
	}
	*cut = (struct as_trace_end){ .events = count, .end_ns = last_ts };
	return 0;
}

/* Writes the report of an in the chosen form. Returns 0 or -errno. */
static int write_report(const char *format, const char *html, const struct analysis *an,
			const struct as_trace_meta *meta, const struct as_trace_end *end,
			const struct report_opts *ro, struct blocking *bl, struct html_kernel *hk)
{
	char *json = NULL;
	size_t len = 0;
	FILE *mem, *out;
	int err;

	if (!html)
		return !strcmp(format, "json") ? report_json(stdout, an, meta, end, ro)
					       : report_text(stdout, an, meta, end, ro);
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
	out = fopen(html, "w");
	if (!out) {
		err = -errno;
		cli_error("cannot write %s: %s", html, strerror(errno));
		free(json);
		return err;
	}
	err = report_html_kernel(out, json, len, bl, hk);
	if (fclose(out) && !err)
		err = -EIO;
	free(json);
	if (!err)
		fprintf(stderr, "wrote %s\n", html);
	return err;
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "partial", no_argument, NULL, 'P' },
		{ "long-poll", required_argument, NULL, 'L' },
		{ "stall", required_argument, NULL, 'S' },
		{ "starve", required_argument, NULL, 'W' },
		{ "html", required_argument, NULL, 'H' },
		{ "max-tasks", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *format = "text", *html = NULL, *path;
	bool partial = false, truncated = false, truncated2 = false, two_pass;
	struct trace_reader *r = NULL, *r2 = NULL;
	struct analysis *an = NULL;
	struct usdt_counts *uc = NULL;
	struct blocking *bl = NULL;
	struct html_kernel *hk = NULL;
	struct futures *fu = NULL;
	struct timeline *tl = NULL;
	struct analysis_opts ao = { 0 };
	struct as_trace_end cut, cut2;
	const struct as_trace_end *end;
	const struct as_trace_meta *meta;
	struct progress pg;
	char err[1024] = "";
	size_t ntasks;
	int c, ret = 1;

	optind = 1;
	while ((c = getopt_long(argc, argv, "f:h", longopts, NULL)) != -1) {
		uint64_t *dst = c == 'L' ? &ao.long_poll_ns : c == 'S' ? &ao.stall_ns : &ao.starve_ns;

		switch (c) {
		case 'f': format = optarg; break;
		case 'P': partial = true; break;
		case 'H': html = optarg; break;
		case 'M': {
			char *endp;
			unsigned long long v;

			errno = 0;
			v = strtoull(optarg, &endp, 10);
			if (errno || endp == optarg || *endp || *optarg == '-' || v > SIZE_MAX - 1) {
				cli_error("bad count '%s' for --max-tasks: use a number, 0 for no limit",
					  optarg);
				return 2;
			}
			ao.max_tasks = v ? (size_t)v : ANALYSIS_UNLIMITED;
			break;
		}
		case 'L':
		case 'S':
		case 'W':
			if (parse_duration(optarg, dst)) {
				cli_error("bad duration '%s' for --%s: use ns or a unit, e.g. 500us, "
					  "1ms, 2s", optarg, c == 'L' ? "long-poll" : c == 'S'
					  ? "stall" : "starve");
				return 2;
			}
			break;
		case 'h':
			printf("%s\n", USAGE);
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
		cli_error("usage: asyncscope report [--format text|json] [--html FILE] [--partial] "
			  "[--long-poll D] [--stall D] [--starve D] [--max-tasks N] FILE");
		return 2;
	}
	path = argv[optind];
	progress__init(&pg, "reading trace", path, PROGRESS_AUTO);
	two_pass = html || !strcmp(format, "json");

	/* Pass 1: the analysis. */
	r = trace_reader__open(path, err, sizeof(err));
	if (!r) {
		cli_error("%s", err);
		return 1;
	}
	meta = trace_reader__meta(r);
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
		cli_error("warning: %s", trace_reader__error(r));
	end = trace_reader__end(r);
	if (!end)
		end = &cut;
	if (analysis__finish(an, end) || (fu && futures__finish(fu, end->end_ns))) {
		cli_error("out of memory");
		goto cleanup;
	}

	/* Pass 2: the timeline, now that the trace's bounds are known. */
	if (two_pass) {
		r2 = trace_reader__open(path, err, sizeof(err));
		if (!r2) {
			cli_error("%s", err);
			goto cleanup;
		}
		tl = timeline__new(an, trace_reader__meta(r2), NULL);
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
	ret = write_report(format, html, an, meta, end, &ro, bl, hk);
	if (!ret && !html && !strcmp(format, "text"))
		ret = usdt_report_text(stdout, uc);
	/* off-CPU inside polls (record --offcpu): also `asyncscope blocking` */
	if (!ret && !html && !strcmp(format, "text") && ro.blocking)
		ret = blocking_report_text(stdout, bl);
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
	timeline__free(tl);
	usdt_counts__free(uc);
	blocking__free(bl);
	html_kernel__free(hk);
	futures__free(fu);
	analysis__free(an);
	trace_reader__free(r);
	trace_reader__free(r2);
	return ret;
}
