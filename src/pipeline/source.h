/* The source interface: where decoded events come from. Implemented by the
 * trace file reader, the CAT / uftrace dump reader and a live recording
 * session (and, later, memory discovery for dump). A consumer sees only this
 * interface: pipeline_run() (pipeline.h) drains a source into sinks.
 *
 * Ownership: the source owns everything it lends (meta, stacks, the end,
 * error text and every ev->str), valid until as_source__free(). No I/O is
 * required of an implementation beyond its own; none prints. */
#ifndef AS_PIPELINE_SOURCE_H
#define AS_PIPELINE_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "trace/event.h"

struct as_source_ops {
	/* Next event into *ev: 1 with an event, 0 at the clean end (end() then
	 * answers), -ENODATA when the input stops before its end (a truncated
	 * trace: every complete event before the cut was returned first), or
	 * another -errno (-EBADMSG corrupt, -ENOMEM, -EIO ...; error() says
	 * what, one line). Errors and the end are sticky. */
	int (*next)(void *impl, struct as_event *ev);
	/* Optional (NULL: next() alone): up to max (>= 1) next events into
	 * ev[0 .. max), as next() would give them one by one: how many (> 0),
	 * 0 at the clean end, or next()'s error (one met after some events
	 * comes at the following call, those events first). Strings and
	 * stacks as for next(). */
	int (*next_batch)(void *impl, struct as_event *ev, size_t max);
	/* The header: target, runtime, probes ... Never NULL once open. */
	const struct as_trace_meta *(*meta)(void *impl);
	/* Stack id of an event (ev->stack), NULL for 0 or an unknown id. May
	 * be NULL when the source never has stacks. */
	const struct as_stack *(*stack)(void *impl, uint32_t id);
	/* The end record (events, lost, missed, end_ns) once next() returned
	 * 0, else NULL. */
	const struct as_trace_end *(*end)(void *impl);
	/* After next() returned -ENODATA: the cumulative loss counts the input
	 * carried up to the cut (as_trace_end's lost, missed and counts_ns), 1
	 * with them, 0 when it carried none. May be NULL. */
	int (*counts)(void *impl, struct as_trace_end *out);
	/* After next() returned < 0: a one-line lowercase message naming the
	 * input, the problem and the fix; "" otherwise. */
	const char *(*error)(void *impl);
	/* For progress: bytes consumed so far and in all (0 when unknown).
	 * Either may be NULL. */
	uint64_t (*offset)(void *impl);
	uint64_t (*size)(void *impl);
	/* Frees the source and everything it lent; accepts a half-built one. */
	void (*free)(void *impl);
};

struct as_source {
	const struct as_source_ops *ops;
	void *impl;
	const char *name;         /* the input as the user named it ("FILE", "pid 123") */
};

static inline int as_source__next(struct as_source *s, struct as_event *ev)
{
	return s->ops->next(s->impl, ev);
}

static inline const struct as_trace_meta *as_source__meta(const struct as_source *s)
{
	return s->ops->meta(s->impl);
}

static inline const struct as_stack *as_source__stack(const struct as_source *s, uint32_t id)
{
	return id && s->ops->stack ? s->ops->stack(s->impl, id) : (const struct as_stack *)0;
}

static inline const struct as_trace_end *as_source__end(const struct as_source *s)
{
	return s->ops->end(s->impl);
}

static inline int as_source__counts(const struct as_source *s, struct as_trace_end *out)
{
	return s->ops->counts ? s->ops->counts(s->impl, out) : 0;
}

static inline const char *as_source__error(const struct as_source *s)
{
	return s->ops->error(s->impl);
}

/* Frees s->impl through its ops and clears *s; accepts a zeroed source. */
static inline void as_source__free(struct as_source *s)
{
	if (s && s->ops && s->ops->free)
		s->ops->free(s->impl);
	if (s) {
		s->ops = 0;
		s->impl = 0;
	}
}

#endif
