/* The flight recorder's memory (record/profile --flight): the last events of
 * a recording, encoded compactly in one byte ring of bounded size, oldest
 * evicted first, and written on demand as a normal trace file of a time
 * range. What a kept event needs to be decoded although older events were
 * evicted is kept outside the ring, as "state": the name of every thread
 * (AS_EV_THREAD), every task name or declaration (AS_EV_SPAWN with
 * AS_SPAWN_NAME, with or without AS_SPAWN_TASK), every stack (the frames of
 * AS_EV_OFFCPU / AS_EV_SAMPLE), every string. A state record leaves the
 * ring with its event and is re-emitted at the start of a snapshot that
 * refers to its thread, task or task id; state no event in the ring refers
 * to any more is dropped at the next prune. The probe records are the
 * trace header's (the caller's meta). Pure C: trace/writer and util/ only,
 * no libbpf, never prints. */
#ifndef AS_RECORD_FLIGHT_H
#define AS_RECORD_FLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/event.h"

struct flight;

/* Counts of the ring and its state. */
struct flight_stats {
	uint64_t pushed;           /* events given to flight__push() */
	uint64_t events;           /* events in the ring now */
	uint64_t ring_bytes;       /* bytes they take */
	uint64_t ring_cap;         /* bytes the ring may take */
	uint64_t state_bytes;      /* bytes the state takes (estimate: tables, strings,
	                              stacks; limit - ring_cap is its budget) */
	uint64_t state_records;    /* thread names and task names kept outside the ring */
	uint64_t stacks;           /* stacks kept */
	uint64_t evicted_age;      /* events evicted because older than the window */
	uint64_t evicted_size;     /* events evicted to stay within the size */
	uint64_t oldest_ns, newest_ns; /* ts of the ring's first and last event (0: empty) */
	uint64_t refused;          /* events not kept: malformed (a bad stack id) or no memory */
};

/* What flight__write() wrote. */
struct flight_written {
	uint64_t events;           /* events in the file, state records included */
	uint64_t state;            /* of which state records re-emitted */
	uint64_t first_ns, last_ns; /* ts range of the events but state records
	                               (those are stamped with the range's start) */
	uint64_t evicted_size;     /* events of the range that had been evicted for size */
	uint64_t bytes;            /* file size */
};

/* A ring of at most limit bytes (ring and state together; at least 64K),
 * keeping events younger than window_ns (0: until the size evicts them).
 * NULL with errno on failure. */
struct flight *flight__new(uint64_t limit, uint64_t window_ns);
/* Frees; accepts NULL. */
void flight__free(struct flight *f);

/* Keeps a copy of ev (and of ev->str), evicting the oldest events while the
 * limit would be passed. ev->stack must be 0 or an id flight__stack()
 * returned. Returns 0, or -EINVAL / -ENOMEM (ev not kept, counted as
 * refused). */
int flight__push(struct flight *f, const struct as_event *ev);
/* The id of stack st in the ring's stack table (the id of an identical one
 * kept, else a new one; frames and their strings copied): 0 or -errno. */
int flight__stack(struct flight *f, const struct as_stack *st, uint32_t *id);

/* Evicts the events older than now_ns - window (age), but none at or after
 * hold_ns (a snapshot's start still to be written; 0 none). Prunes the
 * state now and then (when it doubled since the last prune). */
void flight__expire(struct flight *f, uint64_t now_ns, uint64_t hold_ns);

/* Writes the ring's events with from_ns <= ts <= to_ns into a new trace file
 * at path (meta: the header; its clock fields are set to from_ns), state
 * records first, then the events in ring order, with lost and missed in the
 * trailer; a meta with a flight_trigger gets flight_evicted set to the
 * events of the range evicted for size. Returns 0 with *out, or -errno (a partial file is removed). */
int flight__write(struct flight *f, const struct as_trace_meta *meta, const char *path,
		  uint64_t from_ns, uint64_t to_ns, uint64_t lost, uint64_t missed,
		  struct flight_written *out);

void flight__stats(const struct flight *f, struct flight_stats *st);

/* Drops state that no event in the ring refers to (also done by expire).
 * Returns the state records dropped. */
uint64_t flight__prune(struct flight *f);

#endif
