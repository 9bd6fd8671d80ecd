/* The USDT section of the text report: hits per probe (provider:name) and
 * per task, from finished USDT counts (analysis/usdt_counts.h). Writes only
 * to the FILE* it is given; computes nothing. */
#ifndef AS_OUTPUT_USDT_REPORT_H
#define AS_OUTPUT_USDT_REPORT_H

#include <stdio.h>

#include "analysis/usdt_counts.h"

#define USDT_REPORT_TASK_ROWS 20   /* (probe, task) rows listed, most hits first */

/* Writes the section (nothing when the trace has no USDT probe). c must be
 * finished (usdt_counts__finish()); borrowed. Returns 0 or -EIO. */
int usdt_report_text(FILE *out, const struct usdt_counts *c);

#endif
