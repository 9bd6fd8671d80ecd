/* Perfetto / Chrome trace-event JSON export of a trace (`export --format
 * perfetto-json`; the native protobuf is output/perfetto_pb.h): opens in
 * ui.perfetto.dev and chrome://tracing. Streaming: events go out as the
 * trace is read (slices when they end), memory is bounded by the live tasks
 * and the threads. Pure C on decoded events (output/folded.h's poll tracker);
 * writes only to the FILE* given.
 *
 * The document, {"traceEvents": [...], "displayTimeUnit": "ns",
 * "metadata": {...}}, times in microseconds with ns precision relative to the
 * trace start (the recording start, or the first event if earlier):
 * - process `pid` (named "TARGET pid PID"), one thread track per thread
 *   (named from AS_EV_THREAD): a complete slice per poll of a user task,
 *   named by its pretty root future, args task (seq), tokio_id, outcome
 *   (Ready, Pending, cut short, running at end), spawned_at, header; "parked"
 *   slices while the thread parks. Runtime worker tasks' polls (the worker's
 *   executor loop) are not on these tracks: see the task tracks;
 * - process "tasks" (pid PERFETTO_TASKS_PID), one track per task (tid
 *   PERFETTO_TASKS_PID + seq, named "task SEQ NAME", sorted by seq) with its
 *   states: "scheduled" (wake -> poll), "running" (each poll, worker tasks
 *   included), "idle" (Pending -> wake);
 * - flow arrows (s/f, bind point "e") from each wake (or spawn) that made a
 *   task runnable to the user-task poll it caused; the start sits on the
 *   waker's poll slice, or on a 1 ns "wake" slice on the waking thread when
 *   no user poll was running there (runtime, I/O driver, timer, block_on);
 * - with record --futures: a slice per future frame on the thread's track,
 *   nested in the poll slice that ran it (and in its parent frame), named by
 *   the future, args task (seq), outcome (Ready, Pending, unknown, cut short,
 *   running at end), fn (file:line), await (file:line of the .await it is
 *   suspended at, when Pending there), awaiting (the future awaited there,
 *   when known), depth; metadata future_slices and the
 *   frames lost (future_exits_lost, future_entries_lost,
 *   future_unmatched_exits: see analysis/futures.h);
 * - counters "runnable tasks" and "parked workers" in process `pid`;
 * - lost / missed events and truncation as global instant events at the end
 *   and in metadata. */
#ifndef AS_OUTPUT_PERFETTO_H
#define AS_OUTPUT_PERFETTO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "pipeline/sink.h"
#include "trace/event.h"

/* pid of the "tasks" process, and base of its tids: above any Linux pid
 * (pid_max <= 2^22), so task tracks never collide with real threads. */
#define PERFETTO_TASKS_PID 4194304

struct perfetto;

/* Starts the document on out (borrowed, never closed; give it a large
 * buffer). meta (may be NULL) is read during the call. Returns NULL with
 * errno set on failure. */
struct perfetto *perfetto__new(FILE *out, const struct as_trace_meta *meta);
struct task_model;
/* The same on task model m (analysis/task_model.h), shared with other sinks
 * of the run: m is borrowed (it must outlive p and must not have seen an
 * event yet); the caller feeds m each event before perfetto__add() (or puts
 * task_model__sink(m) before perfetto__sink(p)) and finishes m before
 * perfetto__finish(). */
struct perfetto *perfetto__new_on(FILE *out, struct task_model *m,
				  const struct as_trace_meta *meta);
/* Feeds one event in trace order. Returns 0, -ENOMEM, -EINVAL after finish,
 * or -EIO on a write error. */
int perfetto__add(struct perfetto *p, const struct as_event *ev);
/* Closes what is still open at end->end_ns (NULL: the last event's time),
 * writes the lost/missed counts of end and, if truncated, marks the trace as
 * such; ends the document and flushes. Returns 0, -EINVAL if called twice,
 * -ENOMEM, or -EIO. */
int perfetto__finish(struct perfetto *p, const struct as_trace_end *end, bool truncated);
/* Written so far: poll slices of user tasks, and flows. */
uint64_t perfetto__slices(const struct perfetto *p);
uint64_t perfetto__flows(const struct perfetto *p);
/* Future frame slices written (record --futures traces). */
uint64_t perfetto__future_slices(const struct perfetto *p);
/* A sink view of p (pipeline/sink.h; ops->free NULL: p stays the caller's):
 * add() is perfetto__add(), finish() perfetto__finish(p, end,
 * end->truncated). */
struct as_sink perfetto__sink(struct perfetto *p);
/* Frees p (not out); accepts NULL. */
void perfetto__free(struct perfetto *p);

#endif
