/* A stack's frames as one flame-graph line fragment. Pure C, no I/O. */
#ifndef AS_ANALYSIS_STACK_FOLD_H
#define AS_ANALYSIS_STACK_FOLD_H

#include <stdint.h>

#include "trace/event.h"

/* "user;...;kernel": user frames outermost first, then kernel frames
 * outermost first, leaving out the skip_kernel innermost kernel frames (the
 * tracing or sampling path); an unnamed frame as 0xADDR, a newline in a name
 * as a space. Returns a malloc'd string the caller frees ("" for NULL st),
 * or NULL on ENOMEM. */
char *stack_fold(const struct as_stack *st, uint32_t skip_kernel);

#endif
