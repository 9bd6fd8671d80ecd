/* CAT ("Context Aware Tracing for Rust Asynchronous Programs") and uftrace
 * dump text traces: the pieces shared by the writer (output/cat.h, `export
 * --format cat`) and the reader (trace_reader__open() hands such files to
 * cat_reader__open()): uftrace's spelling of Rust names, the escaping of
 * asyncscope's header values, the per-thread call-stack rules that turn
 * function lines into events, the merge heap, and the reader itself.
 *
 * The grammar is docs/cat-format.md. A file written by asyncscope carries a
 * "# asyncscope ..." header before its first `reading <tid>.dat` section and
 * reads back as the events it was written from; any other uftrace dump reads
 * as task polls (recognised by name) and future frames (CAT's patterns).
 *
 * Pure C: no libbpf; never prints. Depends on util/, sym/demangle.h and the
 * runtime profile tables (probe/profile.h, data only). */
#ifndef AS_TRACE_CAT_H
#define AS_TRACE_CAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/event.h"

/* Version of asyncscope's header grammar ("# asyncscope cat version=1"). */
#define CAT_VERSION 1
/* Longest line read (a longer one is an error). */
#define CAT_LINE_MAX (1u << 20)
/* Deepest call nesting followed per thread (deeper is an error). */
#define CAT_DEPTH_MAX 65536u

/* ---- Names ---- */

/* uftrace's spelling of a demangled Rust name: "::" kept between path
 * components outside angle brackets, ".." for "::" inside them, and "_"
 * before a top-level component that starts with '<' or '{':
 * "<a::B<F> as c::D>::poll::{{closure}}" -> "_<a..B<F> as c..D>::poll::_{{closure}}".
 * Returns a malloc'd string, or NULL with errno ENOMEM. */
char *cat_spell(const char *name);
/* The inverse: the Rust spelling of a uftrace name. malloc'd, or NULL (ENOMEM). */
char *cat_unspell(const char *name);

/* ---- Header values ---- */

/* Writes s escaped for a header value: bytes <= ' ', >= 0x7f, '%' and ','
 * (a list separator) as %XX, and the first letter of "entry", "exit" and
 * "reading" too, so that no header line can match CAT's or uftrace's line
 * patterns. Returns 0 or -EIO. */
int cat_escape(FILE *out, const char *s);
/* Decodes n bytes of an escaped value into a malloc'd string (*out). Returns
 * 0, -EINVAL for a bad escape or an escaped NUL byte, -ENOMEM. */
int cat_unescape(const char *s, size_t n, char **out);

/* Lower-case names of probe roles in the header ("poll", "future", ...), and
 * back (0 when unknown). */
const char *cat_role_name(unsigned role);
unsigned cat_role_parse(const char *s, size_t n);

/* ---- Per-thread call stacks ----
 * The rules that turn a thread's function lines into events; the writer runs
 * them on the lines it writes, so that what the reader derives is known and
 * only the differences are written out (as `[args ]` lines). */

struct cat_frame {
	uint32_t probe;   /* the function (index into the probes), or UINT32_MAX */
	uint16_t role;    /* its enum as_probe_role, 0 for a function with none */
	uint64_t addr;    /* the address in its line */
};

struct cat_state {
	struct cat_frame *frames;  /* open calls, outermost first */
	uint32_t n, cap;
	uint32_t futures;          /* open AS_ROLE_FUTURE frames */
	bool ready;                /* an AS_ROLE_READY call since the last poll line */
};

/* Applies one line to st: the entry (exit false) or exit of function probe
 * (role role, 0 none) with address addr. An exit closes the innermost open
 * call of the same probe and address and every call inside it, and stands
 * for what that call's role says (the role it was entered with); with none
 * open it closes nothing. When the line stands for an event, returns 1 and
 * sets ev's type, flags, probe, task and other as derived (ts, tid, str and
 * stack are left alone): POLL entry -> POLL_BEGIN (task addr, other 0), exit
 * -> POLL_END (task addr, Ready when a READY call came since the last poll
 * line); WAKE entry -> WAKE (task addr, other the innermost open poll's
 * address, flags IO inside an IO_DRIVER call, else TIMER inside a TIMER
 * call); SPAWN entry -> SPAWN (other addr: the spawn location id); FREE
 * entry -> FREE (task addr); PARK entry -> PARK, exit -> UNPARK; USDT entry
 * -> USDT (other addr, task the innermost open poll's); FUTURE entry ->
 * FUTURE_ENTER (other the open future frames before it), exit ->
 * FUTURE_EXIT (other the open future frames after it), both with task the
 * innermost open poll's. Returns 0 for a line that stands for no event,
 * -ENOMEM, or -E2BIG past CAT_DEPTH_MAX open calls. */
int cat_state__apply(struct cat_state *st, bool exit, uint16_t role, uint32_t probe,
		     uint64_t addr, struct as_event *ev);
/* Open calls, the depth that uftrace would print for the next entry. */
static inline uint32_t cat_state__depth(const struct cat_state *st) { return st->n; }
/* Frees st's frames and zeroes it; st may be reused. */
void cat_state__clear(struct cat_state *st);

/* ---- Merge heap ----
 * Sections (0..n-1) keyed by the timestamp of their next event; ties go to
 * the lower section index. Used to merge threads by time, by the reader and
 * by the writer (which checks where the merge would differ from the trace's
 * own order and writes those steps down). */
struct cat_heap {
	uint32_t *heap;   /* section indices */
	uint32_t *pos;    /* per section: its place in heap, UINT32_MAX when out */
	uint64_t *key;    /* per section: the timestamp */
	uint32_t n, cap;
};

/* Makes room for sections 0..n-1 (all out). Returns 0 or -ENOMEM. */
int cat_heap__init(struct cat_heap *h, uint32_t n);
/* Puts section s (not in the heap) in with timestamp ts. */
void cat_heap__push(struct cat_heap *h, uint32_t s, uint64_t ts);
/* Takes section s out (a no-op when it is out). */
void cat_heap__remove(struct cat_heap *h, uint32_t s);
/* The section with the earliest timestamp, or UINT32_MAX when empty. */
static inline uint32_t cat_heap__top(const struct cat_heap *h) { return h->n ? h->heap[0] : UINT32_MAX; }
void cat_heap__free(struct cat_heap *h);

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
 * -ENOMEM, -EIO, or the errno of copying a pipe; f is then closed). The whole file is checked here, so that
 * every syntax error is reported by the open; next() only merges. */
int cat_reader__open(FILE *f, const void *head, size_t head_len, const char *path,
		     struct cat_reader **out, char *err, size_t errlen);

/* As struct trace_reader's accessors (trace/reader.h): meta (format_version:
 * the recorded trace's for an asyncscope file, else
 * AS_TRACE_FORMAT_VERSION), next() (1 event, 0 clean end, -ENODATA truncated,
 * -EBADMSG, -ENOMEM, -EIO; sticky), error(), end() (after a clean end),
 * events(), offset() (bytes read, for progress). All owned by the reader.
 * Events are the threads' merged by timestamp (a file written by asyncscope
 * comes back in its trace's own order). */
const struct as_trace_meta *cat_reader__meta(const struct cat_reader *r);
int cat_reader__next(struct cat_reader *r, struct as_event *ev);
const char *cat_reader__error(const struct cat_reader *r);
const struct as_trace_end *cat_reader__end(const struct cat_reader *r);
uint64_t cat_reader__events(const struct cat_reader *r);
uint64_t cat_reader__offset(const struct cat_reader *r);
const struct cat_stats *cat_reader__stats(const struct cat_reader *r);
/* Closes and frees; accepts NULL. */
void cat_reader__free(struct cat_reader *r);

#endif
