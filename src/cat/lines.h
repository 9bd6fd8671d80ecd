/* CAT / uftrace dump text, line by line: a buffered reader of a file's byte
 * range, and the grammar of one line (uftrace's records, asyncscope's
 * header lines, section starts), checked. Used by the reader (cat/reader.h)
 * only; grammar: docs/cat-format.md. Pure C (pread on a file descriptor);
 * never prints. */
#ifndef AS_CAT_LINES_H
#define AS_CAT_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest line read (a longer one is an error). */
#define CAT_LINE_MAX (1u << 20)

/* A buffered line reader over [off, end) of the file fd, with pread():
 * set fd, off and end, zero the rest; free buf when done. */
struct cat_line_reader {
	int fd;
	uint64_t off;        /* file offset of buf[0] */
	uint64_t end;
	char *buf;
	size_t cap, len, pos;
	bool eof;
};

/* Returns 1 with a line (*s, *n: without its '\n' and a '\r' before it;
 * valid until the next call), 0 at the end, -E2BIG for a line longer than
 * CAT_LINE_MAX, -ENOMEM or -EIO. *start: its file offset. */
int cat_line_reader__next(struct cat_line_reader *l, const char **s, size_t *n, uint64_t *start);

enum cat_line_kind {
	CAT_LINE_BLANK,
	CAT_LINE_OURS,       /* "# asyncscope ..." */
	CAT_LINE_SECTION,    /* "reading X.dat" */
	CAT_LINE_FUNC,       /* [entry] / [exit ] */
	CAT_LINE_ARGS,       /* [args ] length = N */
	CAT_LINE_RETVAL,     /* [retval] length = N */
	CAT_LINE_ARGVAL,     /* "  args[i] TYPE: VALUE" */
	CAT_LINE_RETVALVAL,  /* "  retval TYPE: VALUE" */
	CAT_LINE_LOST,       /* [lost ] */
	CAT_LINE_OTHER,      /* anything else: ignored, counted */
};

struct cat_line {
	enum cat_line_kind kind;
	bool exit;
	bool numeric;        /* SECTION: X is a thread id; *VAL: a number */
	uint64_t ts;
	uint32_t tid;
	const char *name;    /* FUNC (not NUL-terminated, inside the line) */
	size_t name_len;
	uint64_t addr;       /* FUNC; LOST: the count */
	uint32_t index;      /* ARGVAL */
	uint64_t val;        /* ARGVAL, RETVALVAL */
};

/* Classifies (and for records parses) the line s of n bytes into *pl.
 * Returns NULL, or what is wrong with a line that looks like a uftrace
 * record but is not one (a static string). */
const char *cat_line_parse(const char *s, size_t n, struct cat_line *pl);

/* Whether the first n bytes of a file are a CAT / uftrace dump: text,
 * starting with our header or uftrace's, or with a `reading N.dat` line
 * among the first ones. */
bool cat_detect(const char *buf, size_t n);

/* Parses at most maxdig digits of base (10 or 16) at *pp (before end) into
 * *v, moving *pp past them. False (nothing moved) without a digit, past
 * maxdig digits or on overflow. */
bool cat_parse_u64(const char **pp, const char *end, int base, uint64_t *v, size_t maxdig);
/* Whether [s, end) starts with lit. */
bool cat_starts(const char *s, const char *end, const char *lit);

#endif
