/* Probe planning: match a runtime profile against a binary's symbols and
 * decide every probe point (address, role, argument register, cost class,
 * and for poll copies the root future type). No libbpf here. */
#ifndef AS_PROBE_PLAN_H
#define AS_PROBE_PLAN_H

#include <stddef.h>

#include "probe/profile.h"
#include "sym/elf_image.h"
#include "trace/event.h"

struct probe_plan {
	const struct runtime_profile *profile;
	struct as_probe *probes;     /* owned */
	size_t n;
	size_t per_role[AS_ROLE__MAX];
};

/* Builds the plan for img. With prof NULL, every known profile is tried and
 * the first that finds its poll function wins. Returns NULL and writes a
 * one-line reason with the fix into err (stripped binary, no runtime symbols). */
struct probe_plan *probe_plan__build(const struct elf_image *img,
				     const struct runtime_profile *prof,
				     char *err, size_t errlen);
void probe_plan__free(struct probe_plan *plan);

/* Lower-case role name ("poll", "wake", ...). */
const char *probe_role_name(unsigned role);

#endif
