/* The run-queue delay section of `asyncscope blocking`: per thread (workers
 * first), how often and how long it waited for a CPU once runnable, from a
 * run-queue analysis (analysis/runq.h). Writes only to the FILE* it is
 * given; computes nothing. */
#ifndef AS_OUTPUT_RUNQ_REPORT_H
#define AS_OUTPUT_RUNQ_REPORT_H

#include <stdio.h>

#include "analysis/runq.h"

#define RUNQ_REPORT_THREADS 32   /* threads listed */

/* Writes the text section. Returns 0 or -EIO. */
int runq_report_text(FILE *out, struct runq *q);

#endif
