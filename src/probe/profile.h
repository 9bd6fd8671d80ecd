/* Runtime profiles: what asyncscope knows about where to probe a runtime,
 * kept as data. Each point names functions by their demangled name (hash
 * removed) and says which role the probe plays and which argument register
 * holds the task. Adding a runtime means adding a table, not code. */
#ifndef AS_PROBE_PROFILE_H
#define AS_PROBE_PROFILE_H

#include <stddef.h>
#include <stdint.h>

enum profile_match {
	MATCH_NORM,    /* pattern equals the name with generic arguments removed */
	MATCH_PREFIX,  /* pattern is a prefix of the demangled name */
};

struct profile_point {
	uint16_t role;       /* enum as_probe_role */
	uint8_t arg_reg;     /* 0 rdi, 1 rsi, 2 rdx, 3 rcx */
	uint8_t fallback;    /* used only when no earlier point of this role matched */
	enum profile_match match;
	const char *pattern;
};

struct runtime_profile {
	const char *name;            /* "tokio" */
	const char *versions;        /* what the table was verified on */
	/* Header layout for reading the task id in BPF (0: no id). */
	uint32_t hdr_vtable_off;
	uint32_t vtable_id_off_slot;
	const struct profile_point *points;
	size_t n_points;
};

/* The profile called name, or NULL. */
const struct runtime_profile *profile_find(const char *name);
/* All known profiles, NULL-terminated. */
extern const struct runtime_profile *const profiles[];

#endif
