/* `asyncscope export`: trace file -> native Perfetto protobuf, Perfetto /
 * Chrome JSON or folded stacks, streamed event by event
 * (output/perfetto_pb.h, output/perfetto.h, output/folded.h): memory stays
 * bounded by the live tasks (at most --max-live-tasks of them followed) and
 * threads whatever the length of the trace. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis/task_stats.h"
#include "cat/writer.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/trace_cmd.h"
#include "output/folded.h"
#include "output/perfetto.h"
#include "output/perfetto_pb.h"
#include "pipeline/source_file.h"

enum { E_FORMAT = 1, E_OUTPUT, E_PER_TASK, E_LINES, E_PARTIAL, E_PROGRESS, E_NO_PROGRESS,
       E_MAX_LIVE };

static const struct cli_opt export_opts[] = {
	{ "format", 'f', CLI_CHOICE, E_FORMAT,
	  "perfetto|perfetto-json|folded|folded-futures|folded-wait|cat",
	  "perfetto: native Perfetto protobuf (.pftrace, ui.perfetto.dev);\n"
	  "perfetto-json: Chrome trace-event JSON (ui.perfetto.dev, chrome://tracing);\n"
	  "folded: worker;task busy-ns stacks; folded-futures: on-CPU async flame\n"
	  "graph; folded-wait: where tasks wait; cat: CAT's uftrace dump text (required)",
	  0, 0, false, true },
	{ "output", 'o', CLI_STRING, E_OUTPUT, "FILE",
	  "write to FILE, - for stdout (required, but for cat: default stdout)" },
	{ "per-task", 0, CLI_FLAG, E_PER_TASK, NULL, "folded: one stack per task, not per worker" },
	{ "lines", 0, CLI_FLAG, E_LINES, NULL,
	  "folded-futures, folded-wait: each frame's (file:line)" },
	{ "partial", 0, CLI_FLAG, E_PARTIAL, NULL, "export the events of a truncated trace" },
	{ "progress", 0, CLI_FLAG, E_PROGRESS, NULL, "always show the progress line on stderr" },
	{ "no-progress", 0, CLI_FLAG, E_NO_PROGRESS, NULL,
	  "never show it (default: on a terminal, or for a large trace)" },
	{ "max-live-tasks", 0, CLI_COUNT, E_MAX_LIVE, NULL, CLI_MAX_LIVE_HELP },
	{ 0 },
};

static const struct cli_opt *const tables[] = { export_opts, NULL };

const struct cli_command export_command = {
	.name = "export",
	.summary = "Converts a trace (or CAT) file for other tools, streamed event by event.",
	.operands = "FILE",
	.tables = tables,
};

struct export_args {
	const char *format, *outpath;
	bool partial, per_task, lines;
	enum progress_mode progress;
	size_t max_live;          /* the model's live-task limit, 0 none */
};

static int on_opt(void *ctx, const struct cli_opt *opt, const struct cli_val *v)
{
	struct export_args *a = ctx;

	switch (opt->key) {
	case E_FORMAT: a->format = v->str; break;
	case E_OUTPUT: a->outpath = v->str; break;
	case E_PER_TASK: a->per_task = true; break;
	case E_LINES: a->lines = true; break;
	case E_PARTIAL: a->partial = true; break;
	case E_PROGRESS: a->progress = PROGRESS_ON; break;
	case E_NO_PROGRESS: a->progress = PROGRESS_OFF; break;
	case E_MAX_LIVE: return cli_max_live(v, &a->max_live);
	}
	return 0;
}

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
	const char *format = NULL, *outpath = NULL, *path;
	bool partial = false, per_task = false, truncated = false, lines = false, fut_fmt;
	enum progress_mode progress_opt = PROGRESS_AUTO;
	struct as_source src = { 0 }, *r = &src;
	struct perfetto *pf = NULL;       /* perfetto-json */
	struct perfetto_pb *pp = NULL;    /* perfetto */
	struct folded *fd = NULL;
	struct futures *fu = NULL; /* folded-futures, folded-wait: analysis/futures.h */
	struct cat_writer *cw = NULL; /* cat: cat/writer.h */
	struct task_model *m = NULL;  /* shared by the exporter (not cat's) */
	FILE *out = NULL;
	char err[1024] = "";
	int c, ret = 1;

	struct export_args a = { .progress = PROGRESS_AUTO, .max_live = ANALYSIS_MAX_LIVE_TASKS };
	int first;

	c = cli_parse(&export_command, argc, argv, on_opt, &a, &first);
	if (c >= 0)
		return c;
	format = a.format;
	outpath = a.outpath;
	partial = a.partial;
	per_task = a.per_task;
	lines = a.lines;
	progress_opt = a.progress;
	fut_fmt = format && (!strcmp(format, "folded-futures") || !strcmp(format, "folded-wait"));
	if (!format)
		return cli_usage_error(&export_command, "missing format: use --format perfetto, "
				       "perfetto-json, folded, folded-futures, folded-wait or cat");
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
	if (!outpath)
		return cli_usage_error(&export_command, "export needs -o FILE (-o - for stdout)");
	if (first + 1 != argc)
		return cli_usage_error(&export_command, first < argc ? "export reads one trace file"
				       : "export needs the trace FILE");
	path = argv[first];
	if (source_open_file(r, path, err, sizeof(err))) {
		cli_error("%s", err);
		return 1;
	}
	const struct as_trace_meta *meta = as_source__meta(r);

	cli_note_input(path);
	out = cli_open_output(outpath);
	if (!out)
		goto cleanup;
	setvbuf(out, NULL, _IOFBF, 1 << 20);
	if (strcmp(format, "cat") && (!(m = task_model__new(meta)) ||
				      task_model__set_max_live(m, a.max_live)))
		errno = ENOMEM;   /* said below */
	else if (!strcmp(format, "perfetto"))
		pp = perfetto_pb__new_on(out, m, meta);
	else if (!strcmp(format, "perfetto-json"))
		pf = perfetto__new_on(out, m, meta);
	else if (fut_fmt)
		fu = futures__new_on(m, meta, &(struct futures_opts){ .lines = lines });
	else if (!strcmp(format, "cat"))
		cw = cat_writer__new(out, meta);
	else
		fd = folded__new_on(out, m, meta, per_task);
	if (!pf && !pp && !fd && !fu && !cw) {
		cli_error("cannot start the export: %s", strerror(errno));
		goto cleanup;
	}

	/* one sink: the exporter (folded-futures and folded-wait: the futures
	 * analysis, whose lines are written after the run) */
	struct as_sink sinks[2] = { task_model__sink(m), pf ? perfetto__sink(pf)
				    : pp ? perfetto_pb__sink(pp) : fu ? futures__sink(fu)
				    : cw ? cat_writer__sink(cw) : folded__sink(fd) };
	struct pipeline_result res;

	/* the model first (not for cat): the exporter observes it */
	if (cli_run(r, &(struct cli_run_opts){ .path = path, .what = "exporting",
		    .progress = progress_opt, .partial = partial, .output = outpath,
		    .own_truncation = true }, cw ? sinks + 1 : sinks, cw ? 1 : 2, &res)) {
		if (res.err == -ENODATA && !res.failed)
			cli_error("%s is truncated after %" PRIu64 " events (the recording did not "
				  "finish): rerun the export with --partial to use them",
				  path, res.events);
		goto cleanup;
	}
	truncated = res.truncated;
	if (truncated && !res.corrupt)
		cli_error("warning: %s is truncated after %" PRIu64 " events: exporting them, "
			  "marked as truncated", path, res.events);
	int e = 0;
	uint64_t fu_lines = 0, fu_ns = 0;

	if (fu)
		e = folded_futures_write(out, fu, !strcmp(format, "folded-wait") ? FUTURES_WAIT
					 : FUTURES_ONCPU, &fu_lines, &fu_ns);
	if (e) {
		cli_error("writing %s: %s", outpath, cli_write_error(e));
		goto cleanup;
	}
	/* folded stacks have no metadata: a comment line, which flamegraph.pl,
	 * inferno and speedscope skip as not a stack */
	if ((fd || fu) && truncated && (fprintf(out, "# asyncscope: truncated trace: weights stop at "
				     "its last event\n") < 0 || fflush(out))) {
		cli_error("writing %s: %s", outpath, strerror(errno));
		goto cleanup;
	}
	{
		FILE *f = out;
		int werr;

		out = NULL;
		if ((werr = cli_close_output(f))) {
			cli_error("writing %s: %s", outpath, cli_write_error(werr));
			goto cleanup;
		}
	}
	if (pf)
		cli_error("wrote %" PRIu64 " poll slices, %" PRIu64 " flows%s to %s%s",
			  perfetto__slices(pf), perfetto__flows(pf),
			  perfetto__future_slices(pf) ? " and future slices" : "", outpath,
			  truncated ? " (truncated trace)" : "");
	else if (pp)
		cli_error("wrote %" PRIu64 " poll slices, %" PRIu64 " flows%s (%" PRIu64
			  " packets) to %s%s", perfetto_pb__slices(pp), perfetto_pb__flows(pp),
			  perfetto_pb__future_slices(pp) ? " and future slices" : "",
			  perfetto_pb__packets(pp), outpath, truncated ? " (truncated trace)" : "");
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
	cli_print_lost(stderr, r, res.events);
	cli_note_folded(m);
	ret = 0;
cleanup:
	/* on failure an -o file is not put in place: the half-written temporary
	 * file goes at exit, the path named is left as it was */
	if (out && out != stdout)
		fclose(out);
	perfetto__free(pf);
	perfetto_pb__free(pp);
	folded__free(fd);
	futures__free(fu);
	cat_writer__free(cw);
	task_model__free(m);
	as_source__free(r);
	return ret;
}
