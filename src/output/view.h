/* How the text outputs show things, one way for all of them (report,
 * blocking, cpu, uring, dump): colour (ANSI SGR) or not, names shortened
 * from the left (util/rust_name.h) or full, at most `limit` rows per table
 * with one line saying how many more and how to see them; and the
 * findings block (analysis/findings.h) at the top of a report. Formatting
 * only; writes only to the FILE* it is given. */
#ifndef AS_OUTPUT_VIEW_H
#define AS_OUTPUT_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define TEXT_LIMIT_DEFAULT 25   /* rows per table (cli: --limit) */
#define TEXT_NAME_MAX 48        /* a name column at most this wide (but a
                                   name's leaf, which stays whole) */

struct text_view {
	bool color;               /* ANSI colour */
	bool wide;                /* full names */
	size_t limit;             /* rows per table, 0 all */
};

/* The defaults: no colour, short names, TEXT_LIMIT_DEFAULT rows. */
extern const struct text_view text_view_default;

enum text_style {
	TS_RESET = 0,
	TS_BOLD,                  /* headings, titles */
	TS_ERROR,                 /* bold red */
	TS_WARNING,               /* bold yellow */
	TS_INFO,                  /* bold cyan */
	TS_ADVICE,                /* green */
	TS_DIM,                   /* details */
};

/* The SGR sequence of s, "" without colour (v NULL: the defaults). */
const char *text_sgr(const struct text_view *v, enum text_style s);

/* How many of n rows a table shows. */
size_t text_rows(const struct text_view *v, size_t n);
/* After a table that showed `shown` of `total` rows, when it left some out:
 * "<indent>... 12 more <what> (--limit N shows more, --limit 0 all<where>)". */
void text_more(FILE *out, const struct text_view *v, size_t shown, size_t total,
	       const char *what, const char *indent, const char *where);

/* name as a text output shows it into buf (size n): rust_name_format() of
 * name, shortened to width unless v->wide, control bytes and invalid UTF-8
 * shown as '?'. Returns buf. */
char *text_name(const struct text_view *v, char *buf, size_t n, const char *name, int width);
/* Writes name (as text_name()) left-aligned in a column of width characters,
 * then a space; a wider name (its leaf, or --wide) pushes the row. */
void text_name_column(FILE *out, const struct text_view *v, const char *name, int width);
/* The width of a name column fitting the names given (as they will be
 * shown), at least min, at most TEXT_NAME_MAX (unless v->wide: the
 * widest). NULL names count as "(unknown)". */
int text_name_width(const struct text_view *v, const char *const *names, size_t n, int min);

struct findings;
/* The findings block:
 *
 * FINDINGS: 1 error, 1 warning, most severe first (asyncscope report --format json: each with its detail)
 *   error    #1 app::blocker blocked its worker 199.0 ms in std::thread::sleep (do_nanosleep)
 *            at src/app.rs:15
 *            Off CPU inside its polls, blocked (not preempted): ... (errors only, wrapped)
 *            -> replace std::thread::sleep with tokio::time::sleep(d).await
 *   warning  #2 app::stuck_forever was never woken after its last poll returned Pending: ...
 *            -> check what it awaits ...
 *
 * or "FINDINGS: none ..." Returns 0 or -EIO. */
int text_findings(FILE *out, const struct findings *f, const struct text_view *v);

#endif
