/* `asyncscope export`: trace file -> native Perfetto protobuf, Perfetto /
 * Chrome JSON or folded stacks, streamed event by event
 * (output/perfetto_pb.h, output/perfetto.h, output/folded.h): memory stays
 * bounded by the live tasks (at most --max-live-tasks of them followed) and
 * threads whatever the length of the trace; or a profile (pprof, speedscope:
 * output/pprof_trace.h), whose memory is the distinct stacks. */
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
#include "analysis/stack_fold.h"
#include "output/folded.h"
#include "output/perfetto.h"
#include "output/perfetto_pb.h"
#include "output/pprof_trace.h"
#include "output/speedscope.h"
#include "pipeline/source_file.h"

enum { E_FORMAT = 1, E_OUTPUT, E_PER_TASK, E_LINES, E_PARTIAL, E_PROGRESS, E_NO_PROGRESS,
       E_MAX_LIVE, E_ALL_FRAMES, E_UNIT };

static const struct cli_opt export_opts[] = {
	{ "format", 'f', CLI_CHOICE, E_FORMAT,
	  "perfetto|perfetto-json|pprof|speedscope|folded|folded-futures|folded-wait|cat",
	  "perfetto: native Perfetto protobuf (.pftrace, ui.perfetto.dev);\n"
	  "perfetto-json: Chrome trace-event JSON (ui.perfetto.dev, chrome://tracing);\n"
	  "pprof: gzip'd pprof profile (go tool pprof): CPU samples, off-CPU time,\n"
	  "future self time, await waits, poll time, labelled by task;\n"
	  "speedscope: the same as speedscope JSON (speedscope.app);\n"
	  "folded: worker;task busy-time stacks; folded-futures: on-CPU async flame\n"
	  "graph; folded-wait: where tasks wait; cat: CAT's uftrace dump text (required)",
	  0, 0, false, true },
	{ "output", 'o', CLI_STRING, E_OUTPUT, "FILE",
	  "write to FILE, - for stdout (required, but for cat: default stdout)" },
	{ "per-task", 0, CLI_FLAG, E_PER_TASK, NULL, "folded: one stack per task, not per worker" },
	{ "lines", 0, CLI_FLAG, E_LINES, NULL,
	  "folded-futures, folded-wait: each frame's (file:line)" },
	{ "all-frames", 0, CLI_FLAG, E_ALL_FRAMES, NULL,
	  "pprof, speedscope: keep the runtime's and std's frames between a\n"
	  "thread's start and the task's code (folded away by default)" },
	{ "unit", 0, CLI_CHOICE, E_UNIT, "ns|us|ms",
	  "folded, folded-futures, folded-wait: the unit of the weights (default us)" },
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
	const char *format, *outpath, *unit;
	bool partial, per_task, lines, all_frames;
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
	case E_ALL_FRAMES: a->all_frames = true; break;
	case E_UNIT: a->unit = v->str; break;
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

/* What a profile holds, on stderr. */
static void profile_note(const struct pprof_trace_summary *s, const char *format,
			 const struct pprof *p, uint64_t profiles, const char *outpath,
			 bool truncated)
{
	char what[512];
	size_t n = 0;

	what[0] = '\0';
	if (s->cpu_samples)
		n += (size_t)snprintf(what + n, sizeof(what) - n, ", %" PRIu64 " CPU samples%s",
				      s->cpu_samples, s->period_ns ? "" : " (no period found: "
				      "counts only)");
	if (s->offcpu_ns && n < sizeof(what))
		n += (size_t)snprintf(what + n, sizeof(what) - n, ", %.3f ms off CPU",
				      (double)s->offcpu_ns / 1e6);
	if (s->future_ns && n < sizeof(what))
		n += (size_t)snprintf(what + n, sizeof(what) - n, ", %.3f ms future self time",
				      (double)s->future_ns / 1e6);
	if (s->await_ns && n < sizeof(what))
		n += (size_t)snprintf(what + n, sizeof(what) - n, ", %.3f ms awaiting",
				      (double)s->await_ns / 1e6);
	if (s->poll_ns && n < sizeof(what))
		snprintf(what + n, sizeof(what) - n, ", %.3f ms in polls", (double)s->poll_ns / 1e6);
	if (!strcmp(format, "pprof"))
		cli_error("wrote a pprof profile of %" PRIu64 " samples, %zu locations, %zu "
			  "functions%s to %s%s", s->samples, pprof__locations(p),
			  pprof__functions(p), what, outpath, truncated ? " (truncated trace)" : "");
	else
		cli_error("wrote %" PRIu64 " speedscope profiles of %" PRIu64 " stacks%s to %s%s",
			  profiles, s->samples, what, outpath, truncated ? " (truncated trace)" : "");
	if (!what[0])
		cli_error("warning: the trace holds no CPU samples, off-CPU intervals, future "
			  "frames or polls: record with --sample HZ, --offcpu or --futures");
}

/* What a CAT export left out, for its closing line ("" when nothing). */
static const char *cat_left(const struct cat_writer *cw, char *buf, size_t n)
{
	buf[0] = '\0';
	if (cat_writer__dropped(cw))
		snprintf(buf, n, " (%" PRIu64 " events left out: task names, the wakers idle tasks "
			 "held at the end, tasks found in memory then, off-CPU intervals, samples, run-queue waits and io_uring "
			 "requests have no CAT line)",
			 cat_writer__dropped(cw));
	return buf;
}

int cmd_export(int argc, char **argv)
{
	const char *format = NULL, *outpath = NULL, *path;
	char left[256];
	bool partial = false, per_task = false, truncated = false, lines = false, fut_fmt;
	enum progress_mode progress_opt = PROGRESS_AUTO;
	struct as_source src = { 0 }, *r = &src;
	struct perfetto *pf = NULL;       /* perfetto-json */
	struct perfetto_pb *pp = NULL;    /* perfetto */
	struct folded *fd = NULL;
	struct futures *fu = NULL; /* folded-futures, folded-wait: analysis/futures.h */
	struct cat_writer *cw = NULL; /* cat: cat/writer.h */
	struct pprof_trace *pt = NULL; /* pprof, speedscope */
	struct pprof *prof = NULL;
	enum folded_unit unit = FOLDED_US;
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
	bool prof_fmt = format && (!strcmp(format, "pprof") || !strcmp(format, "speedscope"));
	bool folded_fmt = format && (fut_fmt || !strcmp(format, "folded"));
	if (!format)
		return cli_usage_error(&export_command, "missing format: use --format perfetto, "
				       "perfetto-json, pprof, speedscope, folded, folded-futures, "
				       "folded-wait or cat");
	if (a.all_frames && !prof_fmt) {
		cli_error("--all-frames applies to --format pprof and speedscope only");
		return 2;
	}
	if (a.unit && !folded_fmt) {
		cli_error("--unit applies to --format folded, folded-futures and folded-wait only");
		return 2;
	}
	if (a.unit && folded_unit_parse(a.unit, &unit))
		return cli_usage_error(&export_command, "--unit takes ns, us or ms");
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
	else if (prof_fmt)
		pt = pprof_trace__new_on(m, meta, a.all_frames ? STACK_FOLD_ALL : 0);
	else if ((fd = folded__new_on(out, m, meta, per_task)))
		folded__set_unit(fd, unit);
	if (!pf && !pp && !fd && !fu && !cw && !pt) {
		cli_error("cannot start the export: %s", strerror(errno));
		goto cleanup;
	}

	/* folded stacks say their unit first, in a comment line */
	if (fd || fu)
		fprintf(out, "# asyncscope export --format %s: %s in %s\n", format,
			fd ? "busy time of user-task polls by thread and root future" :
			!strcmp(format, "folded-wait") ? "pending time by await chain" :
			"self time in task polls by future", folded_unit_name(unit));
	/* one sink: the exporter (folded-futures and folded-wait: the futures
	 * analysis, whose lines are written after the run; pprof and speedscope:
	 * the analyses the profile is made of) */
	struct as_sink sinks[6] = { task_model__sink(m), pf ? perfetto__sink(pf)
				    : pp ? perfetto_pb__sink(pp) : fu ? futures__sink(fu)
				    : cw ? cat_writer__sink(cw) : fd ? folded__sink(fd)
				    : (struct as_sink){ 0 } };
	size_t n_sinks = 2;
	if (pt)
		n_sinks = 1 + pprof_trace__sinks(pt, sinks + 1, 5);
	struct pipeline_result res;

	/* the model first (not for cat): the exporter observes it */
	if (cli_run(r, &(struct cli_run_opts){ .path = path, .what = "exporting",
		    .progress = progress_opt, .partial = partial, .output = outpath,
		    .own_truncation = true }, cw ? sinks + 1 : sinks, cw ? 1 : n_sinks, &res)) {
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

	uint64_t fu_dropped = 0, prof_count = 0;
	struct pprof_trace_summary ps = { 0 };

	if (fu)
		e = folded_futures_write_unit(out, fu, !strcmp(format, "folded-wait") ? FUTURES_WAIT
					      : FUTURES_ONCPU, unit, &fu_lines, &fu_ns, &fu_dropped);
	if (pt) {
		e = pprof_trace__build(pt, &res.end,
				       &prof, &ps);
		if (!e && !strcmp(format, "pprof"))
			e = pprof__write(prof, out);
		else if (!e) {
			/* speedscope shows the name: what was lost goes with it */
			char name[1024];
			const struct as_trace_end *en = &res.end;

			snprintf(name, sizeof(name), "%s%s", meta && meta->target ? meta->target : path,
				 en->truncated ? " (truncated trace)" : "");
			if (en->lost || en->missed)
				snprintf(name + strlen(name), sizeof(name) - strlen(name),
					 " (lost events %s%" PRIu64 ", missed %" PRIu64 ")",
					 en->truncated ? "at least " : "", en->lost, en->missed);
			e = speedscope_write(out, prof, name, &prof_count);
		}
	}
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
		cli_error("wrote %" PRIu64 " lines, %" PRIu64 " ns of user-task polls (weights in %s) "
			  "to %s%s", folded__lines(fd), folded__total_ns(fd), folded_unit_name(unit),
			  outpath, truncated ? " (truncated trace)" : "");
	else if (pt)
		profile_note(&ps, format, prof, prof_count, outpath, truncated);
	else if (cw)
		cli_error("wrote %" PRIu64 " lines, %" PRIu64 " events of %u threads to %s%s%s",
			  cat_writer__lines(cw), cat_writer__events(cw), cat_writer__threads(cw),
			  outpath, truncated ? " (truncated trace)" : "", cat_left(cw, left, sizeof(left)));
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
	pprof__free(prof);
	pprof_trace__free(pt);
	task_model__free(m);
	as_source__free(r);
	return ret;
}
