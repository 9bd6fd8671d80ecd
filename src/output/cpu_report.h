/* The CPU report (asyncscope cpu): samples per task and share, or the
 * flame-graph stacks (folded format), from a CPU samples analysis
 * (analysis/cpu_samples.h). Writes only to the FILE* it is given;
 * computes nothing.
 * A task is named as in every output (util/task_id.h): "#3", its runtime
 * id; this analysis keys tasks by address and knows no seq, so a task
 * without an id is named by its address. */
#ifndef AS_OUTPUT_CPU_REPORT_H
#define AS_OUTPUT_CPU_REPORT_H

#include <stdio.h>

#include "analysis/cpu_samples.h"

struct text_view;

/* Writes the text form: at most v->limit rows (output/view.h; NULL the
 * defaults), most samples first. Returns 0, -ENOMEM or -EIO. */
int cpu_report_text(FILE *out, struct cpu_samples *c, const struct text_view *v);
/* Writes "task-future;user frames;kernel frames COUNT" lines, most first
 * (flamegraph.pl, inferno, speedscope input), after a comment line; the
 * marks of output/folded.h ("_[j]" the program's first frame, "_[k]"
 * kernel frames). Returns 0, -ENOMEM or -EIO. */
int cpu_report_folded(FILE *out, struct cpu_samples *c);

#endif
