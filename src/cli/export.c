/* `asyncscope export`: trace file -> Perfetto / Chrome JSON or folded stacks,
 * streamed event by event (output/perfetto.h, output/folded.h): memory stays
 * bounded by the live tasks and threads whatever the length of the trace. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cat/writer.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "output/folded.h"
#include "output/perfetto.h"
#include "pipeline/source_file.h"

#define USAGE "usage: asyncscope export --format perfetto|folded|folded-futures|folded-wait|cat " \
	      "-o OUT [--per-task] [--lines] [--partial] [--progress|--no-progress] FILE"

/* What a future-level flame graph holds, and every frame the analysis could
 * not match (lost events), on stderr. */
static void futures_note(const struct futures *fu, const char *format, uint64_t lines,
			 uint64_t ns, const char *outpath, bool truncated)
{
	const struct futures_summary *s = futures__summary(fu);

	cli_error("wrote %" PRIu64 " lines, %" PRIu64 " ns of %s to %s%s", lines, ns,
		  !strcmp(format, "folded-wait") ? "pending time by await chain"
						 : "task polls by future", outpath,
		  truncated ? " (truncated trace)" : "");
	if (!s->enters && !s->exits)
		cli_error("warning: the trace holds no future events: record with --futures "
			  "or --probe REGEX");
	if (s->exits_lost || s->entries_lost || s->unmatched_exits || s->bad || s->too_deep)
		cli_error("warning: future frames did not match: %" PRIu64 " exits lost, %" PRIu64
			  " entries lost, %" PRIu64 " exits without entry, %" PRIu64 " bad, %"
			  PRIu64 " too deep", s->exits_lost, s->entries_lost, s->unmatched_exits,
			  s->bad, s->too_deep);
}

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "per-task", no_argument, NULL, 'T' },
		{ "lines", no_argument, NULL, 'l' },
		{ "partial", no_argument, NULL, 'P' },
		{ "progress", no_argument, NULL, 'p' },
		{ "no-progress", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *format = NULL, *outpath = NULL, *path;
	bool partial = false, per_task = false, truncated = false, lines = false, fut_fmt;
	enum progress_mode progress_opt = PROGRESS_AUTO;
	struct as_source src = { 0 }, *r = &src;
	struct perfetto *pf = NULL;
	struct folded *fd = NULL;
	struct futures *fu = NULL; /* folded-futures, folded-wait: analysis/futures.h */
	struct cat_writer *cw = NULL; /* cat: cat/writer.h */
	struct progress pg;
	FILE *out = NULL;
	char err[1024] = "";
	int c, n, ret = 1;

	optind = 1;
	while ((c = getopt_long(argc, argv, "f:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': format = optarg; break;
		case 'o': outpath = optarg; break;
		case 'T': per_task = true; break;
		case 'l': lines = true; break;
		case 'P': partial = true; break;
		case 'p': progress_opt = PROGRESS_ON; break;
		case 'n': progress_opt = PROGRESS_OFF; break;
		case 'h':
			printf("%s\n", USAGE);
			return 0;
		default:
			return 2;
		}
	}
	fut_fmt = format && (!strcmp(format, "folded-futures") || !strcmp(format, "folded-wait"));
	if (!format || (strcmp(format, "perfetto") && strcmp(format, "folded") && !fut_fmt &&
			strcmp(format, "cat"))) {
		cli_error("%s%s%s: use --format perfetto, folded, folded-futures, folded-wait or cat",
			  format ? "unknown format '" : "missing format", format ? format : "",
			  format ? "'" : "");
		return 2;
	}
	if (per_task && strcmp(format, "folded")) {
		cli_error("--per-task applies to --format folded only");
		return 2;
	}
	if (lines && !fut_fmt) {
		cli_error("--lines applies to --format folded-futures and folded-wait only");
		return 2;
	}
	if (!outpath && !strcmp(format, "cat"))
		outpath = "-";   /* CAT text: stdout by default */
	if (!outpath || optind + 1 != argc) {
		cli_error(USAGE);
		return 2;
	}
	path = argv[optind];
	if (source_open_file(r, path, err, sizeof(err))) {
		cli_error("%s", err);
		return 1;
	}
	const struct as_trace_meta *meta = as_source__meta(r);

	out = strcmp(outpath, "-") ? fopen(outpath, "we") : stdout;
	if (!out) {
		cli_error("cannot create %s: %s", outpath, strerror(errno));
		goto cleanup;
	}
	setvbuf(out, NULL, _IOFBF, 1 << 20);
	if (!strcmp(format, "perfetto"))
		pf = perfetto__new(out, meta);
	else if (fut_fmt)
		fu = futures__new(meta, &(struct futures_opts){ .lines = lines });
	else if (!strcmp(format, "cat"))
		cw = cat_writer__new(out, meta);
	else
		fd = folded__new(out, meta, per_task);
	if (!pf && !fd && !fu && !cw) {
		cli_error("cannot start the export: %s", strerror(errno));
		goto cleanup;
	}

	progress__init(&pg, "exporting", path, progress_opt);

	struct as_event ev;
	uint64_t last_ts = 0, events = 0;
	int e = 0;

	while ((n = as_source__next(r, &ev)) == 1) {
		e = pf ? perfetto__add(pf, &ev) : fu ? futures__add(fu, &ev)
		    : cw ? cat_writer__add(cw, &ev) : folded__add(fd, &ev);
		if (e)
			break;
		if (ev.ts > last_ts)
			last_ts = ev.ts;
		progress__update(&pg, r, ++events);
	}
	progress__end(&pg);
	if (e) {
		cli_error("writing %s: %s", outpath, strerror(-e));
		goto cleanup;
	}
	if (n == -ENODATA && partial) {
		truncated = true;
		cli_error("warning: %s is truncated after %" PRIu64 " events: exporting them, "
			  "marked as truncated", path, events);
	} else if (n == -ENODATA) {
		cli_error("%s is truncated after %" PRIu64 " events (the recording did not "
			  "finish): rerun the export with --partial to use them",
			  path, events);
		goto cleanup;
	} else if (n < 0) {
		cli_error("%s", as_source__error(r));
		goto cleanup;
	}
	const struct as_trace_end *end = as_source__end(r);
	struct as_trace_end cut = { .events = events, .end_ns = last_ts };

	if (!end)
		end = &cut;
	uint64_t fu_lines = 0, fu_ns = 0;

	if (fu && !(e = futures__finish(fu, end->end_ns)))
		e = folded_futures_write(out, fu, !strcmp(format, "folded-wait") ? FUTURES_WAIT
					 : FUTURES_ONCPU, &fu_lines, &fu_ns);
	else if (cw)
		e = cat_writer__finish(cw, end, truncated);
	else if (!fu)
		e = pf ? perfetto__finish(pf, end, truncated) : folded__finish(fd, end->end_ns);
	if (e) {
		cli_error("writing %s: %s", outpath, strerror(-e));
		goto cleanup;
	}
	/* folded stacks have no metadata: a comment line, which flamegraph.pl,
	 * inferno and speedscope skip as not a stack */
	if ((fd || fu) && truncated && (fprintf(out, "# asyncscope: truncated trace: weights stop at "
				     "its last event\n") < 0 || fflush(out))) {
		cli_error("writing %s: %s", outpath, strerror(errno));
		goto cleanup;
	}
	if (out != stdout) {
		FILE *f = out;

		out = NULL;
		if (fclose(f)) {
			cli_error("writing %s: %s", outpath, strerror(errno));
			goto cleanup;
		}
	}
	if (pf)
		cli_error("wrote %" PRIu64 " poll slices, %" PRIu64 " flows%s to %s%s",
			  perfetto__slices(pf), perfetto__flows(pf),
			  perfetto__future_slices(pf) ? " and future slices" : "", outpath,
			  truncated ? " (truncated trace)" : "");
	else if (fd)
		cli_error("wrote %" PRIu64 " lines, %" PRIu64 " ns of user-task polls to %s%s",
			  folded__lines(fd), folded__total_ns(fd), outpath,
			  truncated ? " (truncated trace)" : "");
	else if (cw)
		cli_error("wrote %" PRIu64 " lines, %" PRIu64 " events of %u threads to %s%s%s",
			  cat_writer__lines(cw), cat_writer__events(cw), cat_writer__threads(cw),
			  outpath, truncated ? " (truncated trace)" : "",
			  cat_writer__dropped(cw) ? " (off-CPU, sample, run-queue and io_uring "
			  "events left out: CAT has no line for them)" : "");
	else
		futures_note(fu, format, fu_lines, fu_ns, outpath, truncated);
	cli_print_lost(stderr, r, events);
	ret = 0;
cleanup:
	if (out && out != stdout)
		fclose(out);
	if (ret && outpath && strcmp(outpath, "-") && (pf || fd || fu || cw))
		unlink(outpath); /* no half-written file left behind */
	perfetto__free(pf);
	folded__free(fd);
	futures__free(fu);
	cat_writer__free(cw);
	as_source__free(r);
	return ret;
}
