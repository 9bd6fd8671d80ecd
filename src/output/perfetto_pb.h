/* Native Perfetto export of a trace: protobuf TracePackets with TrackEvents
 * (Perfetto's own format, `../shared/perfetto/perfetto_trace.proto`), which
 * ui.perfetto.dev and trace_processor load without their legacy JSON
 * importer. The same content as the JSON of output/perfetto.h
 * (`--format perfetto-json`) in a quarter of its size (a JSON complete slice
 * is two packets here: TrackEvent has no duration); streaming in the same way (events go out as the trace is
 * read, slices when they end; memory bounded by the live tasks, the threads
 * and the distinct names). Pure C on decoded events (output/folded.h's poll
 * tracker); writes only to the FILE* given.
 *
 * One packet sequence (trusted_packet_sequence_id 1), whose first packet
 * clears the incremental state (SEQ_INCREMENTAL_STATE_CLEARED) and sets the
 * defaults; every later TrackEvent packet says SEQ_NEEDS_INCREMENTAL_STATE.
 * - Names are interned: slice names as InternedData event_names, argument
 *   names as debug_annotation_names, repeated argument strings (outcomes,
 *   source locations) as debug_annotation_string_values, each in a packet of
 *   its own just before its first use.
 * - Timestamps are deltas: a ClockSnapshot ties the sequence's clocks to
 *   CLOCK_MONOTONIC (the trace's clock, primary_trace_clock) at the trace
 *   start; clock 64, the default (TracePacketDefaults), is incremental: each
 *   packet's timestamp is the ns since the previous packet on it. Slices are
 *   known when they end, so their begins are in the past: they go on the
 *   incremental clock 65 or 66 (timestamp_clock_id), the one whose last
 *   value is nearest below, else on clock 67, ns since the trace start.
 * - Tracks (TrackDescriptor, defined before use): the process (pid, name,
 *   cmdline); under it one thread track per thread (ThreadDescriptor, named
 *   from AS_EV_THREAD) with a slice per poll of a user task, named by its
 *   root future, args task (seq), tokio_id, outcome (Ready, Pending, cut
 *   short, running at end), and "parked" slices; a "tasks" group with one
 *   track per task ("task ID NAME", sorted by seq; spawn site, tokio id and
 *   header in its description) holding its states "scheduled" (wake ->
 *   poll), "running" (each poll, runtime workers' included; arg thread) and
 *   "idle" (Pending -> wake); counter tracks "runnable tasks" and "parked
 *   workers".
 * - Wake flows: an instant "wake" (or "spawn"; arg by: runtime, io driver,
 *   timer, spawn when no user poll ran there) on the waking thread's track
 *   at the wake, nested in the waker's poll slice, starts a flow (flow_ids)
 *   that ends (terminating_flow_ids) at the poll slice it caused.
 * - With record --futures: a slice per future frame on its thread's track,
 *   nested in the poll slice, args as the JSON's (task, outcome, fn, await,
 *   awaiting, depth).
 * - At the end, on the process track: instants for lost / missed events and
 *   truncation, and an instant "asyncscope" whose args are the JSON's
 *   metadata (events, lost_events, poll_slices, flows, ...). */
#ifndef AS_OUTPUT_PERFETTO_PB_H
#define AS_OUTPUT_PERFETTO_PB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "pipeline/sink.h"
#include "trace/event.h"

struct perfetto_pb;
struct task_model;

/* Starts the trace on out (borrowed, never closed). meta (may be NULL) is
 * read during the call. Returns NULL with errno set on failure. */
struct perfetto_pb *perfetto_pb__new(FILE *out, const struct as_trace_meta *meta);
/* The same on task model m (analysis/task_model.h), shared with other sinks
 * of the run, as perfetto__new_on(): m is borrowed, fed and finished by the
 * caller before this writer sees each event and the end. */
struct perfetto_pb *perfetto_pb__new_on(FILE *out, struct task_model *m,
					const struct as_trace_meta *meta);
/* Feeds one event in trace order. Returns 0, -ENOMEM, -EINVAL after finish,
 * or -EIO on a write error. */
int perfetto_pb__add(struct perfetto_pb *p, const struct as_event *ev);
/* Closes what is still open at end->end_ns (NULL: the last event's time),
 * writes the lost/missed counts and the truncation mark, flushes. Returns 0,
 * -EINVAL if called twice, -ENOMEM, or -EIO. */
int perfetto_pb__finish(struct perfetto_pb *p, const struct as_trace_end *end, bool truncated);
/* Written so far: poll slices of user tasks on thread tracks, flows, future
 * frame slices, and TracePackets in all. */
uint64_t perfetto_pb__slices(const struct perfetto_pb *p);
uint64_t perfetto_pb__flows(const struct perfetto_pb *p);
uint64_t perfetto_pb__future_slices(const struct perfetto_pb *p);
uint64_t perfetto_pb__packets(const struct perfetto_pb *p);
/* A sink view of p (ops->free NULL: p stays the caller's): add() is
 * perfetto_pb__add(), finish() perfetto_pb__finish(p, end, end->truncated). */
struct as_sink perfetto_pb__sink(struct perfetto_pb *p);
/* Frees p (not out); accepts NULL. */
void perfetto_pb__free(struct perfetto_pb *p);

#endif
