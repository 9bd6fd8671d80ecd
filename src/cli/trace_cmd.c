/* The shared part of `blocking`, `cpu` and `uring` (see cli/trace_cmd.h). */
#include "cli/trace_cmd.h"

#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "analysis/tasks.h"
#include "cli/progress.h"

const struct cli_opt trace_cmd_opts[] = {
	{ "output", 'o', CLI_STRING, TC_OUTPUT, "FILE", "write to FILE (default -: stdout)" },
	{ "partial", 0, CLI_FLAG, TC_PARTIAL, NULL, "use the events of a truncated trace" },
	{ "max-live-tasks", 0, CLI_COUNT, TC_MAX_LIVE, NULL, CLI_MAX_LIVE_HELP },
	{ 0 },
};

int cli_max_live(const struct cli_val *v, size_t *max_live)
{
	if (v->num > SIZE_MAX - 1) {
		cli_error("--max-live-tasks takes a number up to %zu, not '%s'", SIZE_MAX - 1, v->str);
		return 2;
	}
	*max_live = (size_t)v->num;
	return 0;
}

struct task_model *trace_cmd_model(struct trace_cmd_args *a, const struct as_trace_meta *meta)
{
	struct task_model *m = task_model__new(meta);

	if (m && task_model__set_max_live(m, a->max_live)) {
		task_model__free(m);
		m = NULL;
	}
	return a->model = m;
}

void cli_note_folded(const struct task_model *m)
{
	uint64_t n = task_model__folded(m);

	if (n)
		cli_error("warning: %" PRIu64 " live tasks dropped: more than %zu tasks were live at "
			  "once (never freed: lost free events, detached tasks), the least recently "
			  "active are not followed (%" PRIu64 " later events of theirs left out); "
			  "--max-live-tasks N follows more, 0 all (memory grows with them)", n,
			  task_model__max_live(m), task_model__folded_events(m));
}

int trace_cmd_on_opt(void *ctx, const struct cli_opt *opt, const struct cli_val *v)
{
	struct trace_cmd_args *a = ctx;

	switch (opt->key) {
	case TC_FORMAT: a->format = v->str; break;
	case TC_FOLDED: a->format = "folded"; break;
	case TC_OUTPUT: a->output = v->str; break;
	case TC_PARTIAL: a->partial = true; break;
	case TC_MAX_LIVE: return cli_max_live(v, &a->max_live);
	case TC_ALL_FRAMES: a->all_frames = true; break;
	case TC_UNIT: a->unit = v->str; break;
	}
	return 0;
}

int trace_cmd_parse(const struct cli_command *cmd, int argc, char **argv,
		    struct trace_cmd_args *a, int *first)
{
	int ret;

	*a = (struct trace_cmd_args){ .format = "text", .output = "-",
				      .max_live = ANALYSIS_MAX_LIVE_TASKS };
	ret = cli_parse(cmd, argc, argv, trace_cmd_on_opt, a, first);
	if (ret >= 0)
		return ret;
	if (*first + 1 == argc)
		return -1;
	return *first < argc ? cli_usage_error(cmd, "%s reads one trace file", cmd->name)
			     : cli_usage_error(cmd, "%s needs the trace FILE", cmd->name);
}

int trace_cmd_finish(struct as_source *src, const char *path, const struct trace_cmd_args *a,
		     struct as_sink *sinks, size_t n, trace_cmd_write_fn write, void *ctx)
{
	bool folded = !strcmp(a->format, "folded");
	struct pipeline_result res;
	FILE *f;
	int err;

	if (cli_run(src, &(struct cli_run_opts){ .path = path, .partial = a->partial }, sinks, n,
		    &res))
		return 1;
	cli_note_input(path);
	f = cli_open_output(a->output);
	if (!f)
		return 1;
	if (write(f, ctx, folded)) {
		cli_error("cannot write the report");
		if (f != stdout)
			fclose(f);
		return 1;
	}
	cli_print_lost(folded ? stderr : f, src, res.events);
	cli_note_folded(a->model);
	err = cli_close_output(f);
	if (err) {
		cli_error("writing %s: %s", a->output, cli_write_error(err));
		return 1;
	}
	return 0;
}
