/* html_bound: the report JSON as the HTML page embeds it, bounded whatever
 * the trace's size. The same document (json.c's schema, keys in their
 * order, any key it does not know copied as it is, "findings" included),
 * minified, with each long array cut to at most a number of elements and of
 * bytes (HTML_BOUND_* below; the table in html_bound.c): the elements kept
 * are the most important by the array's own ranking (the busiest tasks, the
 * longest polls, the most frequent wake edges...), written in the array's
 * order. Task rows: runtime workers, then the tasks the caller names (the
 * ones the page details, output/html.h), then those a finding names, then
 * the busiest; wake edges: the most frequent, then those of the named tasks.
 * What was cut is said exactly: per array its length, the elements kept and
 * the sums of the counts and durations of those left out.
 *
 * Reads only the bytes it is given; writes only to the FILE* and the JSON
 * writer it is given. Depends on util/json and util/u64map only. */
#ifndef AS_OUTPUT_HTML_BOUND_H
#define AS_OUTPUT_HTML_BOUND_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct json_writer;

struct html_bound_opts {
	const uint64_t *keep;     /* task seqs whose rows and wake edges go first */
	size_t n_keep;
	double scale;             /* every limit times this (0: 1); tests use small ones */
};

/* Writes the report json (len bytes, borrowed) minified and bounded to out,
 * and what was cut to w as one value (w must be where a value goes): an
 * object {"PATH": {"total" (elements in the report), "kept", "omitted":
 * {KEY: sum over the elements left out, ...}}, ...}, PATH an array's key
 * ("tasks", "futures.parked"), listed only when elements were left out
 * ({} when none). o may be NULL. Returns 0; -EINVAL when json is not one
 * JSON object (nothing written, w untouched); -ENOMEM or -EIO (out or w
 * may then hold part of their output). */
int html_bound(FILE *out, const char *json, size_t len, const struct html_bound_opts *o,
	       struct json_writer *w);

#endif
