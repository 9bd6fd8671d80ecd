/* Trace file reader: validates and decodes a file written by trace/writer.h,
 * one chunk at a time (memory: one chunk plus the live tables and every
 * string of the file). Every length, count and index read from the file is
 * checked: any input gives events, a clean end, or an error, never a crash.
 * Knows no other format (a CAT / uftrace text is cat/reader.h's; a caller
 * that takes either opens it with source_open_file()). No libbpf; never
 * prints. */
#ifndef AS_TRACE_READER_H
#define AS_TRACE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/event.h"

struct trace_reader;

/* Bytes of a file's start that tell whether it is a trace: read up to this
 * many and ask trace_reader__is_trace(). */
#define TRACE_READER_HEAD_LEN 16

/* Whether a file starting with the n bytes head (n <= TRACE_READER_HEAD_LEN,
 * fewer only at the end of the file) is an asyncscope trace, cut or whole:
 * head is a prefix of the magic, or starts with it (an empty file too). Any
 * other file is not read here: source_open_file() (pipeline/source_file.h)
 * decides what it is (a CAT / uftrace dump text, cat/reader.h). */
bool trace_reader__is_trace(const void *head, size_t n);

/* Opens path and reads and validates its header. Returns NULL and sets errno
 * on failure, and then (when err and errlen > 0) writes into err a one-line
 * lowercase message that names the problem and the fix: cannot open (errno
 * of open), not an asyncscope trace (EINVAL), unsupported format version
 * (EPROTONOSUPPORT), corrupt or cut header (EBADMSG), or ENOMEM. */
struct trace_reader *trace_reader__open(const char *path, char *err, size_t errlen);
/* The same on f, opened on path and already read for its first n bytes
 * (head, n <= TRACE_READER_HEAD_LEN, else EINVAL; a trace by
 * trace_reader__is_trace()): f may be a pipe, it is read on from where it
 * stands. f is the reader's from then on, also on failure (closed). */
struct trace_reader *trace_reader__fopen(FILE *f, const void *head, size_t n, const char *path,
					 char *err, size_t errlen);

/* The header, owned by the reader (valid until trace_reader__free()).
 * format_version is the file's. target, build_id, runtime, cmdline and every
 * probe symbol are never NULL: absent (NULL when written) reads back as "".
 * probe future keeps the NULL / "" distinction. */
const struct as_trace_meta *trace_reader__meta(const struct trace_reader *r);

/* Reads the next event into *ev. Returns 1 with an event (ev->str, NULL or
 * not, borrowed until trace_reader__free()), 0 at the clean end (trailer
 * read; see trace_reader__end()), -EBADMSG if the file is corrupt (checksum
 * mismatch, malformed record, undefined reference, trailer disagreeing with
 * the events, bytes after the trailer), -ENODATA if it is truncated (ends
 * before the trailer: every event of every complete chunk before the cut has
 * been returned first), or -ENOMEM / -EIO. Errors and the end are sticky:
 * later calls return the same value. */
int trace_reader__next(struct trace_reader *r, struct as_event *ev);
/* The same for up to max events at once into ev[0 .. max) (max >= 1):
 * returns how many (> 0), 0 at the clean end, or the error next() would
 * return; an error met after some events is returned by the following
 * call, those events first. The fast way through a trace (a chunk's
 * events are decoded in one loop). */
int trace_reader__next_batch(struct trace_reader *r, struct as_event *ev, size_t max);

/* After next() returned an error: a one-line lowercase message naming the
 * file, the problem and what to do; "" otherwise. Owned by the reader. */
const char *trace_reader__error(const struct trace_reader *r);

/* The trailer once next() has returned 0, else NULL. Owned by the reader. */
const struct as_trace_end *trace_reader__end(const struct trace_reader *r);

/* The loss counts of the last complete chunk read (format version 9):
 * out->lost and out->missed, the events lost in the kernel and missed by
 * the recorder since the start, and out->counts_ns, the CLOCK_MONOTONIC ns
 * when the recorder read them (the rest of *out untouched; as
 * cat_reader__counts()). 1 with them, 0 when no chunk read so far carried
 * counts (an older version, or none yet). */
int trace_reader__counts(const struct trace_reader *r, struct as_trace_end *out);

/* Stack id (format version 3, as in AS_EV_OFFCPU's and AS_EV_SAMPLE's stack field), defined
 * in the file before any event that refers to it: every stack an event
 * returned by next() refers to is available. NULL for 0 or an id not yet
 * defined. Owned by the reader (frame symbols never NULL: "" when unknown),
 * valid until trace_reader__free(). */
const struct as_stack *trace_reader__stack(const struct trace_reader *r, uint32_t id);

/* Events returned by next() so far. */
uint64_t trace_reader__events(const struct trace_reader *r);

/* File offset of the next unread byte (a whole chunk is read at once): for
 * progress against the file size. */
uint64_t trace_reader__offset(const struct trace_reader *r);

/* Frees what a meta built by a reader owns (strings, probes and their
 * source fields) and zeroes it. */
void trace_meta__clear(struct as_trace_meta *m);
/* Closes and frees everything, including strings lent out; accepts NULL. */
void trace_reader__free(struct trace_reader *r);

#endif
