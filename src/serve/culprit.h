/* The culprit of a blocking interval, by its stack: the innermost kernel
 * function that is not the scheduler's (nor the tracing's), and the first
 * user frame of the program's own code (not the standard library's, the
 * async runtimes' or a C function) with its file and line: the rule
 * `asyncscope blocking` names its causes by (analysis/blocking.h), kept
 * here for serve's metrics, which need it without a blocking analysis
 * (one that would keep every task). Pure C, no I/O. */
#ifndef AS_SERVE_CULPRIT_H
#define AS_SERVE_CULPRIT_H

#include <stdint.h>

#include "trace/event.h"

/* The culprit of st (NULL: none): *kernel, *user ("?" each when none),
 * *file and *line (NULL, 0 unknown). Strings borrowed from st. */
void culprit_of(const struct as_stack *st, const char **kernel, const char **user,
		const char **file, uint32_t *line);

#endif
