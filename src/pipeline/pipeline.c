/* pipeline_run(): a source drained into sinks (see pipeline.h). Knows no
 * source and no sink by name. */
#include <errno.h>
#include <string.h>

#include "pipeline/pipeline.h"

int pipeline_run(struct as_source *src, struct as_sink *sinks, size_t n,
		 const struct pipeline_opts *opts, struct pipeline_result *res)
{
	static const struct pipeline_opts none;
	struct as_event ev;
	uint64_t last_ts = 0;
	int got;

	if (!opts)
		opts = &none;
	memset(res, 0, sizeof(*res));
	while ((got = as_source__next(src, &ev)) == 1) {
		const struct as_stack *stack = ev.stack ? as_source__stack(src, ev.stack) : NULL;

		for (size_t i = 0; i < n; i++) {
			int err = sinks[i].ops->add(sinks[i].impl, &ev, stack);

			if (err) {
				res->err = err;
				res->failed = sinks[i].ops->name;
				return err;
			}
		}
		res->events++;
		if (ev.ts > last_ts)
			last_ts = ev.ts;
		if (opts->progress)
			opts->progress(opts->ctx, src, res->events);
	}
	if (got == -ENODATA && opts->partial) {
		res->truncated = true;
		res->end = (struct as_trace_end){ .events = res->events, .end_ns = last_ts,
						 .truncated = 1 };
	} else if (got < 0) {
		res->err = got;
		return got;
	} else {
		const struct as_trace_end *end = as_source__end(src);

		if (end)
			res->end = *end;
		else
			res->end = (struct as_trace_end){ .events = res->events, .end_ns = last_ts };
	}
	for (size_t i = 0; i < n; i++) {
		int err = sinks[i].ops->finish ? sinks[i].ops->finish(sinks[i].impl, &res->end) : 0;

		if (err) {
			res->err = err;
			res->failed = sinks[i].ops->name;
			return err;
		}
	}
	return 0;
}
