/* The blocking report (asyncscope blocking): off-CPU time inside polls per
 * task and per cause, or its flame-graph stacks (folded format), from a
 * blocking analysis (analysis/blocking.h). Writes only to the FILE* it is
 * given; computes nothing.
 * A task is named as in every output (util/task_id.h): "#3", its runtime
 * id; this analysis keys tasks by address and knows no seq, so a task
 * without an id is named by its address. */
#ifndef AS_OUTPUT_BLOCKING_REPORT_H
#define AS_OUTPUT_BLOCKING_REPORT_H

#include <stdio.h>

#include "analysis/blocking.h"
#include "output/folded.h"

#define BLOCKING_REPORT_CAUSES 5   /* causes listed per task */

struct text_view;

/* Writes the text section: at most v->limit tasks (output/view.h; NULL the
 * defaults), most off-CPU time first, names as v says. Returns 0, -ENOMEM
 * or -EIO. */
int blocking_report_text(FILE *out, struct blocking *b, const struct text_view *v);
/* Writes "task-future;user frames;kernel frames WEIGHT" lines, heaviest
 * first (flamegraph.pl / inferno input), after a comment line naming the
 * unit; the marks and units of output/folded.h (weights in unit, lines
 * under half a unit left out and counted in the comment at the end).
 * Returns 0, -ENOMEM or -EIO. */
int blocking_report_folded(FILE *out, struct blocking *b, enum folded_unit unit);

#endif
