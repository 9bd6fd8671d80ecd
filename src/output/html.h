/* html: the report as one self-contained HTML page (inline CSS and JS, no
 * network, opens from disk). The page renders two JSON documents it embeds:
 * the JSON report of json.c, taken as bytes (this module computes nothing
 * from it; sections whose keys it lacks say "no data in this report"), and
 * the kernel-side data only the page shows in full, written here from the
 * analyses that compute it (analysis/blocking, cpu_samples, runq, uring):
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

/* Stacks (flame-graph lines) and table rows embedded per section, heaviest
 * first; the page says how many more there were and what they weigh. */
#define HTML_STACKS_MAX 5000
#define HTML_ROWS_MAX 1000

/* The analyses behind the page's CPU-sample, run-queue and io_uring
 * sections (analysis/cpu_samples, runq, uring), fed every event of the
 * trace in order. */
struct html_kernel;

/* meta is borrowed until html_kernel__free (probe names). NULL and errno on
 * failure. */
struct html_kernel *html_kernel__new(const struct as_trace_meta *meta);
/* Takes one event and the stack its stack field names (NULL when none;
 * read during the call only: the analyses copy what they keep). Returns 0,
 * -EINVAL for NULL k or ev, or -ENOMEM. */
int html_kernel__add(struct html_kernel *k, const struct as_event *ev, const struct as_stack *stack);
/* Accepts NULL. */
void html_kernel__free(struct html_kernel *k);

/* Writes the HTML page showing the JSON report json (len bytes, borrowed, need
 * not be NUL-terminated; as report_json() writes it) to out, with the
 * sections of the off-CPU analysis b (fed every event, as for the report's
 * "blocking" key; its flame graph; NULL or no off-CPU interval: no such
 * section) and of k (NULL: none). The JSON is embedded as it is except that
 * "</" becomes "<\/" and "<!--" becomes "\u003c!--", so that no string in it
 * can end or derail the <script> block (valid JSON stays valid and means the
 * same); the kernel-side JSON is escaped alike. The report JSON is not
 * validated: an empty one gives a page of empty sections, an invalid one a
 * page that says so. Returns 0, -EINVAL if out is NULL or json is NULL with
 * len > 0, -ENOMEM, or -EIO on a write error. */
int report_html_kernel(FILE *out, const char *json, size_t len, struct blocking *b,
		       struct html_kernel *k);
/* report_html_kernel(out, json, len, NULL, NULL). */
int report_html(FILE *out, const char *json, size_t len);

#endif
