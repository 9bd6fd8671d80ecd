/* `export --format cat`: a trace as CAT's dumped_data.txt, i.e. `uftrace
 * dump` text: one `reading <tid>.dat` section per thread (in order of first
 * appearance), each thread's events as [entry] / [exit ] lines of the
 * runtime's real functions (task polls, wakes, spawns, frees, parks) and of
 * the probed futures, with asyncscope's metadata in "# asyncscope ..."
 * header lines before the first section. Reading the file back
 * (cat/reader.h, through source_open_file()) gives the same events in the
 * same order, so the same report. Grammar: docs/cat-format.md.
 *
 * Streaming: events are spilled per thread to one temporary file in 4 KiB
 * blocks; memory holds a block per thread, the probe names and the header
 * tables (threads, spawn locations, task id runs, order hints), never the
 * events. Output goes only to the FILE* given. Pure C: no libbpf, no trace
 * reader; uses cat/names.h, cat/rules.h and cat/heap.h. */
#ifndef AS_CAT_WRITER_H
#define AS_CAT_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "pipeline/sink.h"
#include "trace/event.h"

struct cat_writer;

/* Starts a CAT file for a trace of meta (borrowed until cat_writer__free();
 * its probe table names the lines). Nothing is written to out before
 * cat_writer__finish(). Returns NULL with errno (ENOMEM, or the error of
 * creating the temporary file). */
struct cat_writer *cat_writer__new(FILE *out, const struct as_trace_meta *meta);

/* Takes one event, in trace order. Events that have no function line in this
 * format (a task's name, OFFCPU, SAMPLE, RUNQ, URING; a THREAD event after its thread's
 * first event; an event of a role no probe of the trace has) are counted in
 * cat_writer__dropped() and left out. Returns 0, -EINVAL for a type outside
 * 1..AS_EV__MAX-1, or a sticky -ENOMEM / -EIO. */
int cat_writer__add(struct cat_writer *w, const struct as_event *ev);

/* Writes the whole file to out: the header (with end's lost, missed and
 * end_ns, or a "truncated" line when truncated), then each thread's section.
 * end may be NULL when truncated. Returns 0 or -errno (-EIO on a write
 * error); out is flushed, not closed. */
int cat_writer__finish(struct cat_writer *w, const struct as_trace_end *end, bool truncated);

/* Lines written (after finish), events taken, events left out, threads. */
uint64_t cat_writer__lines(const struct cat_writer *w);
uint64_t cat_writer__events(const struct cat_writer *w);
uint64_t cat_writer__dropped(const struct cat_writer *w);
uint32_t cat_writer__threads(const struct cat_writer *w);

/* w as a sink (pipeline/sink.h): add() is cat_writer__add(), finish()
 * cat_writer__finish(w, end, end->truncated), which writes the file. A
 * view: its free() is NULL, w stays the caller's. */
struct as_sink cat_writer__sink(struct cat_writer *w);

/* Frees w and its temporary file; accepts NULL. */
void cat_writer__free(struct cat_writer *w);

#endif
