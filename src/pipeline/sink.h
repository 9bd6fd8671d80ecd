/* The sink interface: what consumes decoded events. Implemented by every
 * analysis (tasks, futures, blocking, CPU samples, run queue, io_uring, USDT
 * counts, timeline, the live view) and every streaming output (folded,
 * Perfetto, CAT, events). pipeline_run() (pipeline.h) feeds a set of sinks
 * from one source; a consumer that needs a second pass is run again.
 *
 * A sink gets every event in source order with its stack looked up once
 * (NULL when the event has none), then finish() once with the end of the
 * input (the trailer, or for a truncated input the events read and the last
 * timestamp). It keeps no pointer into the event or the stack past add()
 * unless it copies, except ev->str and stacks, which the source lends until
 * it is freed. Results are read through the implementation's own accessors
 * after finish(). */
#ifndef AS_PIPELINE_SINK_H
#define AS_PIPELINE_SINK_H

#include "trace/event.h"

struct as_sink_ops {
	const char *name;     /* "tasks", "blocking", ...: for messages */
	/* Returns 0 or -errno (-ENOMEM, -EIO ...): the run stops there. */
	int (*add)(void *impl, const struct as_event *ev, const struct as_stack *stack);
	/* Once, after the last add(). May be NULL. Returns 0 or -errno. */
	int (*finish)(void *impl, const struct as_trace_end *end);
	/* Frees impl; NULL when the sink does not own it (a view of an object
	 * the caller frees itself). */
	void (*free)(void *impl);
};

struct as_sink {
	const struct as_sink_ops *ops;
	void *impl;
	/* The event types add() wants: bit 1u << type each; 0 every type. A
	 * sink whose add() ignores most events says so, and is not called for
	 * them (finish() comes all the same). */
	uint32_t types;
};

#define AS_SINK_TYPE(t) (1u << (t))
/* types of a sink that is called for no event at all (finish() only): its
 * object learns the events otherwise (from a shared model, say). */
#define AS_SINK_NO_EVENTS (1u << 31)

static inline void as_sink__free(struct as_sink *s)
{
	if (s && s->ops && s->ops->free)
		s->ops->free(s->impl);
	if (s) {
		s->ops = 0;
		s->impl = 0;
		s->types = 0;
	}
}

#endif
