/* speedscope: a profile (output/pprof.h) as speedscope's JSON file format
 * (https://www.speedscope.app/file-format-schema.json, src/lib/
 * file-format-spec.ts of speedscope): one "sampled" profile per sample
 * type, in its unit (nanoseconds; counts as "none"), each sample a stack of
 * frame indices root first with its weight, frames shared (a function's
 * name and file). speedscope lists the profiles by name ("cpu
 * (nanoseconds)", "offcpu (nanoseconds)", ...) and shows each in its time
 * unit. Writes only to the FILE* given. */
#ifndef AS_OUTPUT_SPEEDSCOPE_H
#define AS_OUTPUT_SPEEDSCOPE_H

#include <stdint.h>
#include <stdio.h>

#include "output/pprof.h"

/* Writes p to out; name (may be NULL) names the file's profile group.
 * Profiles of a type without weight are left out (an empty file has none).
 * Returns 0, -ENOMEM or -EIO; *profiles (may be NULL) gets how many. */
int speedscope_write(FILE *out, const struct pprof *p, const char *name, uint64_t *profiles);

#endif
