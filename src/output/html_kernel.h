/* html_kernel: an adapter for a caller that drains a trace itself and feeds
 * every event to each of its consumers (cli/report.c's drain()): it bundles
 * the analyses behind the HTML page's CPU-sample, run-queue and io_uring
 * sections (analysis/cpu_samples, runq, uring), feeds them, and hands them
 * to report_html_write() (output/html.h) with the caller's off-CPU analysis.
 * The page writer itself runs no analysis; a caller that holds these
 * analyses (e.g. as pipeline sinks) calls report_html_write() directly and
 * needs none of this. Depends on output/html.h, never the reverse. */
#ifndef AS_OUTPUT_HTML_KERNEL_H
#define AS_OUTPUT_HTML_KERNEL_H

#include <stddef.h>
#include <stdio.h>

#include "trace/event.h"

struct blocking;
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

/* report_html_write(out, json, len, in) with in holding b (the off-CPU
 * analysis, fed every event as for the report's "blocking" key; NULL: no
 * such section) and k's analyses (k NULL: none of them). Returns as
 * report_html_write(). */
int report_html_kernel(FILE *out, const char *json, size_t len, struct blocking *b,
		       struct html_kernel *k);

#endif
