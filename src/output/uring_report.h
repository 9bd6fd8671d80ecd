/* The io_uring report (asyncscope uring): submissions, completions and
 * completion latency per task, from an io_uring analysis
 * (analysis/uring.h). Writes only to the FILE* it is given; computes
 * nothing.
 * A task is named as in every output (util/task_id.h): "#3", its runtime
 * id; this analysis keys tasks by address and knows no seq, so a task
 * without an id is named by its address. */
#ifndef AS_OUTPUT_URING_REPORT_H
#define AS_OUTPUT_URING_REPORT_H

#include <stdio.h>

#include "analysis/uring.h"

struct text_view;

/* Writes the text form. Returns 0 or -EIO. */
int uring_report_text(FILE *out, struct uring *u, const struct text_view *v);

#endif
