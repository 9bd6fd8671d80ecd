/* pipeline_run(): a source drained into sinks (see pipeline.h). Knows no
 * source and no sink by name. */
#include <errno.h>
#include <string.h>

#include "pipeline/pipeline.h"

/* Events a source with next_batch() hands over at once: 12 KiB, in the
 * first-level cache while the sinks take them one by one. */
#define BATCH 256

/* The hot loop of every command that reads a trace: the source hands out a
 * batch of events (next_batch(), else one by one), each sink's add() is
 * called for each event in order (progress every 4096 events), and what
 * the loop keeps lives in locals. */
int pipeline_run(struct as_source *src, struct as_sink *sinks, size_t n,
		 const struct pipeline_opts *opts, struct pipeline_result *res)
{
	static const struct pipeline_opts none;
	int (*next)(void *, struct as_event *) = src->ops->next;
	int (*next_batch)(void *, struct as_event *, size_t) = src->ops->next_batch;
	const struct as_stack *(*stack_of)(void *, uint32_t) = src->ops->stack;
	void *impl = src->impl;
	/* the sinks' add() and impl side by side: one load each per event */
	struct {
		int (*add)(void *, const struct as_event *, const struct as_stack *);
		void *impl;
	} hot[PIPELINE_MAX_SINKS];
	/* by event type (16: a type past 15), the sinks that want it: from[t]
	 * .. from[t + 1] in by_type, in order */
	uint8_t by_type[17 * PIPELINE_MAX_SINKS], from[18];
	struct as_sink *const end_sink = sinks + n;
	struct as_event evs[BATCH];
	uint64_t last_ts = 0, events = 0;
	int got, err = 0;

	if (!opts)
		opts = &none;
	memset(res, 0, sizeof(*res));
	if (n > PIPELINE_MAX_SINKS) {
		res->err = -E2BIG;
		return res->err;
	}
	for (size_t i = 0; i < n; i++) {
		hot[i].add = sinks[i].ops->add;
		hot[i].impl = sinks[i].impl;
	}
	for (unsigned t = 0, k = 0; t <= 16; t++) {
		from[t] = (uint8_t)k;
		for (size_t i = 0; i < n; i++) {
			uint32_t types = sinks[i].types;

			/* a type past 15 to the sinks that take every type */
			if (!types || (t < 16 && (types & AS_SINK_TYPE(t)) &&
				       !(types & AS_SINK_NO_EVENTS)))
				by_type[k++] = (uint8_t)i;
		}
		from[t + 1] = (uint8_t)k;
	}
	for (;;) {
		got = next_batch ? next_batch(impl, evs, BATCH) : next(impl, evs);
		if (got <= 0)
			break;
		for (const struct as_event *ev = evs, *ev_end = evs + got; ev < ev_end; ev++) {
			const struct as_stack *stack = ev->stack && stack_of
						       ? stack_of(impl, ev->stack) : NULL;

			unsigned t = ev->type < 16 ? ev->type : 16;

			for (unsigned x = from[t]; x < from[t + 1]; x++) {
				unsigned i = by_type[x];

				if ((err = hot[i].add(hot[i].impl, ev, stack))) {
					res->events = events;
					res->err = err;
					res->failed = sinks[i].ops->name;
					return err;
				}
			}
			if (ev->ts > last_ts)
				last_ts = ev->ts;
			if (!(++events & (PIPELINE_PROGRESS_EVERY - 1)) && opts->on_progress)
				opts->on_progress(opts->ctx, src, events);
		}
	}
	res->events = events;
	if ((got == -ENODATA || got == -EBADMSG) && opts->partial) {
		res->truncated = true;
		res->corrupt = got == -EBADMSG;
		res->end = (struct as_trace_end){ .events = events, .end_ns = last_ts,
						  .truncated = 1 };
		if (as_source__counts(src, &res->end))
			res->end.counts_lower_bound = 1;
	} else if (got < 0) {
		res->err = got;
		return got;
	} else {
		const struct as_trace_end *end = as_source__end(src);

		if (end)
			res->end = *end;
		else
			res->end = (struct as_trace_end){ .events = events, .end_ns = last_ts };
	}
	for (struct as_sink *s = sinks; s < end_sink; s++) {
		err = s->ops->finish ? s->ops->finish(s->impl, &res->end) : 0;
		if (err) {
			res->err = err;
			res->failed = s->ops->name;
			return err;
		}
	}
	return 0;
}
