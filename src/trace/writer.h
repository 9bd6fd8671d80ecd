/* Trace file writer: stores a struct as_trace_meta, a stream of struct
 * as_event and a struct as_trace_end trailer in asyncscope's compact, chunked,
 * checksummed trace format (docs/trace-format.md). Streaming: it buffers one
 * chunk (about 64 KiB) plus the live tables (threads, live tasks, strings).
 * No libbpf; never prints. */
#ifndef AS_TRACE_WRITER_H
#define AS_TRACE_WRITER_H

#include <stdbool.h>
#include <stdint.h>

#include "trace/event.h"

/* Format version written into every file. Readers accept it and every
 * version from AS_TRACE_FORMAT_MIN_VERSION on (1: no USDT events; 2: no OFFCPU events, no stacks;
 * 3: no SAMPLE events; 4: no RUNQ events; 5: no URING events; 6: no FUTURE
 * events, no source locations of probes and stack frames; 7: no runtime
 * release in the header; 8: no loss counts in the chunks; 9: no flight recorder trigger in
 * the header; 10: no record of what was recorded beside the probes). */
#define AS_TRACE_FORMAT_VERSION 13
#define AS_TRACE_FORMAT_MIN_VERSION 1

struct trace_writer;

/* Creates or truncates path (mode 0644) and writes the header: magic, format
 * version and every field of meta (meta->format_version is ignored: the file
 * gets AS_TRACE_FORMAT_VERSION). meta is copied; the caller keeps it. NULL
 * strings in meta are stored as absent (see trace_reader__meta()). Returns
 * NULL and sets errno on failure: EINVAL for a bad meta (n_probes > 65536,
 * probes NULL with n_probes > 0, a probe role outside enum as_probe_role),
 * or the error of open/write/malloc. */
struct trace_writer *trace_writer__new(const char *path, const struct as_trace_meta *meta);
/* As trace_writer__new(), but stamps the file with format version (from
 * AS_TRACE_FORMAT_MIN_VERSION to AS_TRACE_FORMAT_VERSION) and writes the
 * header and stack fields as that version has them. Events are encoded the
 * same way in every version; the caller keeps to what the version may hold
 * (for tests of older readers' rules). EINVAL for a version out of range. */
struct trace_writer *trace_writer__new_version(const char *path, const struct as_trace_meta *meta,
					       uint32_t version);
/* As trace_writer__new(), on fd, an open file (truncated or new, written
 * from its current offset) that the writer owns from then on, closed by
 * finish or free (also on failure). */
struct trace_writer *trace_writer__new_fd(int fd, const struct as_trace_meta *meta);

/* The loss counts so far (cumulative since the start: events lost in the
 * kernel, events missed by the recorder) and the CLOCK_MONOTONIC ns when
 * they were read. Each chunk written from then on ends with them (format
 * version 9), so that a recording cut before its trailer still tells a
 * lower bound of its losses; a flush with no pending event still writes a
 * chunk when the counts changed since the last one. */
void trace_writer__counts(struct trace_writer *w, uint64_t lost, uint64_t missed, uint64_t ns);

/* Appends one event (ev and ev->str are only read during the call). Returns
 * 0, or -EINVAL for a type outside 1..AS_EV__MAX-1, a POLL_BEGIN probe
 * >= n_probes, or a str longer than 65535 bytes (nothing is written then, and
 * the writer stays usable; also for an AS_EV_OFFCPU or AS_EV_SAMPLE stack not yet defined
 * by trace_writer__stack()), or the -errno of a failed write or allocation,
 * which is sticky: every later call returns it. Events may be written with
 * any timestamps (out of order is fine). */
int trace_writer__write(struct trace_writer *w, const struct as_event *ev);

/* Gives stack s (its id field is ignored) an id for AS_EV_OFFCPU and AS_EV_SAMPLE stack
 * field: the id of an identical stack (same counts and addresses) already
 * written, else the next id (1, 2, ...), writing its definition into the
 * stream before any later event. Frame symbols are stored as given (NULL as
 * ""), the first one given for an address sequence wins. Returns 0 with *id,
 * -EINVAL for more than AS_STACK_MAX_FRAMES frames a side, a frame symbol
 * longer than AS_FRAME_SYM_MAX or frames NULL with frames counted (nothing
 * written, the writer stays usable), or a sticky -errno as write(). */
int trace_writer__stack(struct trace_writer *w, const struct as_stack *s, uint32_t *id);
/* Stacks defined so far. */
uint32_t trace_writer__stacks(const struct trace_writer *w);

/* Ends the current chunk and writes it to the file, so that a recorder that
 * crashes later leaves every flushed event readable. No-op with no pending
 * event. No fsync. Returns 0 or -errno (sticky). */
int trace_writer__flush(struct trace_writer *w);

/* Flushes, writes the trailer and closes the file: the file is complete.
 * end->lost, missed and end_ns are stored as given; end->events is ignored and
 * the number of events actually written is stored instead. Returns 0 or
 * -errno; later write/flush/finish calls return -EINVAL. */
int trace_writer__finish(struct trace_writer *w, const struct as_trace_end *end);
/* After a write error (a full disk, EIO), finish still cuts the file after
 * its last whole chunk and writes the trailer for the events in it, and
 * returns the write's -errno: true when it did (the file is then a complete
 * trace of what was written). */
bool trace_writer__salvaged(const struct trace_writer *w);

/* Bytes written to the file so far, plus the payload of the pending chunk. */
uint64_t trace_writer__bytes(const struct trace_writer *w);
/* Events accepted by trace_writer__write(). */
uint64_t trace_writer__events(const struct trace_writer *w);

/* Closes and frees; accepts NULL. Without a successful finish, pending events
 * are flushed (best effort) but no trailer is written: the file then reads as
 * truncated (-ENODATA after the last event). */
void trace_writer__free(struct trace_writer *w);

#endif
