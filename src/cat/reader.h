/* The CAT / uftrace dump text reader: CAT's dumped_data.txt (`uftrace dump`
 * text) and the files `export --format cat` writes (cat/writer.h) read as
 * asyncscope events. A file written by asyncscope carries a "# asyncscope
 * ..." header before its first `reading <tid>.dat` section and reads back
 * as the events it was written from; any other uftrace dump reads as task
 * polls (recognised by name) and future frames (CAT's patterns), by
 * cat/rules.h. A caller that does not know what a file is opens it with
 * source_open_file() (pipeline/source_file.h), which asks this reader.
 *
 * The grammar is docs/cat-format.md. The module is src/cat/: names.h
 * (spelling), rules.h (what lines stand for), lines.h (the line grammar),
 * heap.h (the merge), this reader (reader.c, header.c) and writer.h.
 *
 * Pure C: no libbpf; never prints. Depends on trace/event.h, util/ and
 * sym/demangle.h; not on probe/ and not on the trace file reader's
 * dispatch (trace/reader.h lends it only trace_meta__clear()). */
#ifndef AS_CAT_READER_H
#define AS_CAT_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/event.h"

/* ---- Reader ---- */

struct cat_reader;

/* What the reader saw, for messages and tests. */
struct cat_stats {
	bool asyncscope;          /* the file has asyncscope's header */
	uint64_t lines;           /* lines in the file */
	uint64_t sections;        /* `reading <tid>.dat` sections */
	uint64_t function_lines;  /* [entry] / [exit ] lines */
	uint64_t skipped_functions; /* of which of functions that stand for nothing
	                               (no runtime role, no CAT pattern) */
	uint64_t header_lines;    /* lines before the first section, ours or uftrace's */
	uint64_t unknown_lines;   /* other lines, ignored (foreign sections included) */
	uint64_t lost_lines;      /* uftrace `[lost ]` records */
};

/* Reads a CAT / uftrace dump text file whose first head_len bytes (already
 * read from f, from its start) are head. Returns 0 when the content is not
 * such a text (f untouched: the caller keeps it); 1 with *out when it is (f
 * is the reader's from then on, also when it is a pipe: it is copied); or,
 * when it is but cannot be read, a negative errno with a one-line lowercase
 * message in err naming path, the line number and the problem (-EBADMSG,
 * -ENOMEM, -EIO, or the errno of copying a pipe; f is then closed). The
 * whole file is checked here, so that every syntax error is reported by the
 * open; next() only merges. */
int cat_reader__open(FILE *f, const void *head, size_t head_len, const char *path,
		     struct cat_reader **out, char *err, size_t errlen);

/* As struct trace_reader's accessors (trace/reader.h), with the contract of
 * pipeline/source.h: meta (format_version: the recorded trace's for an
 * asyncscope file, else AS_TRACE_FORMAT_VERSION), next() (1 event, 0 clean end, -ENODATA truncated,
 * -EBADMSG, -ENOMEM, -EIO; sticky), error(), end() (after a clean end),
 * events(), offset() (bytes read, for progress). All owned by the reader.
 * Events are the threads' merged by timestamp (a file written by asyncscope
 * comes back in its trace's own order). */
const struct as_trace_meta *cat_reader__meta(const struct cat_reader *r);
int cat_reader__next(struct cat_reader *r, struct as_event *ev);
const char *cat_reader__error(const struct cat_reader *r);
/* The loss counts of a `truncated` line that has them (a cut trace of
 * format 9 exported): 1 with lost, missed and counts_ns in *out, else 0. */
int cat_reader__counts(const struct cat_reader *r, struct as_trace_end *out);
const struct as_trace_end *cat_reader__end(const struct cat_reader *r);
uint64_t cat_reader__events(const struct cat_reader *r);
uint64_t cat_reader__offset(const struct cat_reader *r);
const struct cat_stats *cat_reader__stats(const struct cat_reader *r);
/* Closes and frees; accepts NULL. */
void cat_reader__free(struct cat_reader *r);

/* The most CAT text read from a pipe (copied to a temporary file to be
 * read twice); more is refused (EFBIG), naming the fix. The environment's
 * ASYNCSCOPE_CAT_PIPE_MAX (bytes) replaces it, for tests. */
#define CAT_PIPE_MAX (1ull << 30)

#endif
