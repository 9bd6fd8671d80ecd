/* The shared part of `blocking`, `cpu` and `uring` (see cli/trace_cmd.h). */
#include "cli/trace_cmd.h"

#include <string.h>

#include "cli/progress.h"

const struct cli_opt trace_cmd_opts[] = {
	{ "output", 'o', CLI_STRING, TC_OUTPUT, "FILE", "write to FILE (default -: stdout)" },
	{ "partial", 0, CLI_FLAG, TC_PARTIAL, NULL, "use the events of a truncated trace" },
	{ 0 },
};

int trace_cmd_on_opt(void *ctx, const struct cli_opt *opt, const struct cli_val *v)
{
	struct trace_cmd_args *a = ctx;

	switch (opt->key) {
	case TC_FORMAT: a->format = v->str; break;
	case TC_FOLDED: a->format = "folded"; break;
	case TC_OUTPUT: a->output = v->str; break;
	case TC_PARTIAL: a->partial = true; break;
	}
	return 0;
}

int trace_cmd_parse(const struct cli_command *cmd, int argc, char **argv,
		    struct trace_cmd_args *a, int *first)
{
	int ret;

	*a = (struct trace_cmd_args){ .format = "text", .output = "-" };
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
	err = cli_close_output(f);
	if (err) {
		cli_error("writing %s: %s", a->output, cli_write_error(err));
		return 1;
	}
	return 0;
}
