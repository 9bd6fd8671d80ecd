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

#include "cli/commands.h"
#include "cli/progress.h"
#include "output/folded.h"
#include "output/perfetto.h"
#include "trace/reader.h"

#define USAGE "usage: asyncscope export --format perfetto|folded -o OUT [--per-task] " \
	      "[--partial] [--progress|--no-progress] FILE"

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "per-task", no_argument, NULL, 'T' },
		{ "partial", no_argument, NULL, 'P' },
		{ "progress", no_argument, NULL, 'p' },
		{ "no-progress", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *format = NULL, *outpath = NULL, *path;
	bool partial = false, per_task = false, truncated = false;
	enum progress_mode progress_opt = PROGRESS_AUTO;
	struct trace_reader *r = NULL;
	struct perfetto *pf = NULL;
	struct folded *fd = NULL;
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
	if (!format || (strcmp(format, "perfetto") && strcmp(format, "folded"))) {
		cli_error("%s%s%s: use --format perfetto or --format folded",
			  format ? "unknown format '" : "missing format", format ? format : "",
			  format ? "'" : "");
		return 2;
	}
	if (per_task && strcmp(format, "folded")) {
		cli_error("--per-task applies to --format folded only");
		return 2;
	}
	if (!outpath || optind + 1 != argc) {
		cli_error(USAGE);
		return 2;
	}
	path = argv[optind];
	r = trace_reader__open(path, err, sizeof(err));
	if (!r) {
		cli_error("%s", err);
		return 1;
	}
	const struct as_trace_meta *meta = trace_reader__meta(r);

	out = strcmp(outpath, "-") ? fopen(outpath, "we") : stdout;
	if (!out) {
		cli_error("cannot create %s: %s", outpath, strerror(errno));
		goto cleanup;
	}
	setvbuf(out, NULL, _IOFBF, 1 << 20);
	if (!strcmp(format, "perfetto"))
		pf = perfetto__new(out, meta);
	else
		fd = folded__new(out, meta, per_task);
	if (!pf && !fd) {
		cli_error("cannot start the export: %s", strerror(errno));
		goto cleanup;
	}

	progress__init(&pg, "exporting", path, progress_opt);

	struct as_event ev;
	uint64_t last_ts = 0;
	int e = 0;

	while ((n = trace_reader__next(r, &ev)) == 1) {
		e = pf ? perfetto__add(pf, &ev) : folded__add(fd, &ev);
		if (e)
			break;
		if (ev.ts > last_ts)
			last_ts = ev.ts;
		progress__update(&pg, r);
	}
	progress__end(&pg);
	if (e) {
		cli_error("writing %s: %s", outpath, strerror(-e));
		goto cleanup;
	}
	if (n == -ENODATA && partial) {
		truncated = true;
		cli_error("warning: %s is truncated after %" PRIu64 " events: exporting them, "
			  "marked as truncated", path, trace_reader__events(r));
	} else if (n == -ENODATA) {
		cli_error("%s is truncated after %" PRIu64 " events (the recording did not "
			  "finish): rerun the export with --partial to use them",
			  path, trace_reader__events(r));
		goto cleanup;
	} else if (n < 0) {
		cli_error("%s", trace_reader__error(r));
		goto cleanup;
	}
	const struct as_trace_end *end = trace_reader__end(r);
	struct as_trace_end cut = { .events = trace_reader__events(r), .end_ns = last_ts };

	if (!end)
		end = &cut;
	e = pf ? perfetto__finish(pf, end, truncated) : folded__finish(fd, end->end_ns);
	if (e) {
		cli_error("writing %s: %s", outpath, strerror(-e));
		goto cleanup;
	}
	/* folded stacks have no metadata: a comment line, which flamegraph.pl,
	 * inferno and speedscope skip as not a stack */
	if (fd && truncated && (fprintf(out, "# asyncscope: truncated trace: weights stop at "
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
		cli_error("wrote %" PRIu64 " poll slices, %" PRIu64 " flows to %s%s",
			  perfetto__slices(pf), perfetto__flows(pf), outpath,
			  truncated ? " (truncated trace)" : "");
	else
		cli_error("wrote %" PRIu64 " lines, %" PRIu64 " ns of user-task polls to %s%s",
			  folded__lines(fd), folded__total_ns(fd), outpath,
			  truncated ? " (truncated trace)" : "");
	cli_print_lost(stderr, r);
	ret = 0;
cleanup:
	if (out && out != stdout)
		fclose(out);
	if (ret && outpath && strcmp(outpath, "-") && (pf || fd))
		unlink(outpath); /* no half-written file left behind */
	perfetto__free(pf);
	folded__free(fd);
	trace_reader__free(r);
	return ret;
}
