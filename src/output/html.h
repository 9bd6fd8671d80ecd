/* html: the report as one self-contained HTML page (inline CSS and JS, no
 * network, opens from disk). The page renders three JSON documents it embeds:
 * the JSON report of json.c, bounded (html_bound.h: its long arrays cut to
 * their most important elements, whatever the trace's size; sections whose
 * keys it lacks say "no data in this report"), the page's own data (what
 * was cut; with the second pass of analysis/zoom.h, the zoomable timeline's
 * lanes and the detailed tasks' histograms), and the kernel-side data only
 * the page shows in full, written here from the analyses that compute it
 * (analysis/blocking, cpu_samples, runq, uring), which the caller runs and
 * passes in (this module runs no analysis):
 * flame-graph stacks of off-CPU time and of CPU samples, CPU samples per
 * task, run-queue delay per thread, io_uring requests per task. Each of
 * those sections appears only when the trace holds such events, as do the
 * future-level sections (record --futures: async and wait flame graphs,
 * future functions, the await chains of parked tasks), drawn from the
 * report's "futures" key alone. The page itself is
 * src/output/html_template.html, embedded at build time as
 * src/output/html_assets.h (scripts/gen-html-assets.sh). */
#ifndef AS_OUTPUT_HTML_H
#define AS_OUTPUT_HTML_H

#include <stddef.h>
#include <stdio.h>

#include "trace/event.h"

struct blocking;
struct cpu_samples;
struct runq;
struct uring;
struct zoom;

/* Stacks (flame-graph lines, at most so many bytes of them) and table rows
 * embedded per kernel-side section, heaviest first; the page says how many
 * more there were and what they weigh. Buckets of a detailed task's
 * histograms. */
#define HTML_STACKS_MAX 5000
#define HTML_STACKS_BYTES 800000
#define HTML_ROWS_MAX 1000
#define HTML_HIST_BUCKETS 48

/* The analyses behind the page's kernel-side sections, run by the caller
 * over every event of the trace (as `asyncscope blocking`, `cpu` and
 * `uring` run them) and read here only; each NULL: no such section, as is
 * one that saw no such event. All borrowed for the call. */
struct html_inputs {
	struct blocking *blocking;  /* off-CPU inside polls (its flame graph) */
	struct cpu_samples *cpu;    /* CPU samples per task and their stacks */
	struct runq *runq;          /* run-queue delay per thread */
	struct uring *uring;        /* io_uring requests per task */
	struct zoom *zoom;          /* the second pass of the timeline's lanes and
	                               the detailed tasks (analysis/zoom.h); their
	                               rows and wake edges kept first */
};

/* Writes the HTML page showing the JSON report json (len bytes, borrowed, need
 * not be NUL-terminated; as report_json() writes it) to out, with the
 * kernel-side sections and the second pass of in (NULL: none). The JSON is
 * embedded minified and bounded (html_bound.h: its long arrays cut, what
 * was cut said in the page block), a document that is not one JSON object
 * as it is (an empty one gives a page of empty sections, an invalid one a
 * page that says so); in every block "</" becomes "<\/" and "<!--"
 * becomes "\u003c!--", so that no string can end or derail the <script>
 * block (valid JSON stays valid and means the same). Returns 0, -EINVAL if
 * out is NULL or json is NULL with len > 0, -ENOMEM, or -EIO on a write
 * error. */
int report_html_write(FILE *out, const char *json, size_t len, const struct html_inputs *in);
/* report_html_write(out, json, len, NULL). */
int report_html(FILE *out, const char *json, size_t len);

#endif
