/* Probe planning: match runtime profiles against a binary's symbols and
 * decide every probe point (address, role, argument register, cost class,
 * and for poll copies the root future type). No libbpf here. */
#ifndef AS_PROBE_PLAN_H
#define AS_PROBE_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "probe/profile.h"
#include "probe/runtime_id.h"
#include "probe/site.h"
#include "sym/elf_image.h"
#include "sym/usdt_notes.h"
#include "trace/event.h"

#define PLAN_MAX_PROFILES 4

/* Per-probe flags (the BPF cookie's AS_CF_* bits). */
enum plan_flag {
	PLAN_F_TASK_ID = 1,  /* poll: the profile's header has a task id */
	PLAN_F_INSIDE = 2,   /* ready: the register points inside the task */
	PLAN_F_STACK = 4,    /* spawn: the register holds the new task; the call
	                        site comes from the unwound stack */
	PLAN_F_NAME = 8,     /* spawn: gives the new task's name (task_name) */
	PLAN_F_NESTED = 16,  /* wake: reached from a waker call (profile_point.nested) */
	PLAN_F_NO_RETURN = 32, /* poll: a worker's loop (endless_polls): entry only */
};

struct probe_plan {
	/* The runtimes found (or asked for), in profile table order. */
	const struct runtime_profile *profiles[PLAN_MAX_PROFILES];
	size_t n_profiles;
	char runtime[64];            /* their names joined by '+': "tokio+smol" */
	/* The one profile with a task id layout, or NULL (BPF settings). */
	const struct runtime_profile *id_profile;
	struct as_probe *probes;     /* owned */
	uint8_t *owner;              /* owned; per probe: index into profiles */
	uint8_t *flags;              /* owned; per probe: enum plan_flag bits */
	/* Per probe, zero but for AS_ROLE_USDT sites: the semaphore's virtual
	 * address (0 none) and the first argument. Owned. */
	uint64_t *sema;
	struct usdt_arg *usdt_arg;
	/* Per probe, where it is attached: probes[i].addr + site[i].off, and
	 * why (probe/site.h). Zero (the entry) until probe_plan__build() places
	 * the runtime probes; future and USDT probes stay there. Owned. */
	struct probe_site *site;
	size_t n;
	size_t per_role[AS_ROLE__MAX];
	/* Per profile, after probe_plan__identify(): its version and layout. */
	struct runtime_id ids[PLAN_MAX_PROFILES];
	bool identified;
	/* Poll copies whose future was named from what they call (no DWARF,
	 * legacy symbols), and those left without a name. */
	size_t named_by_callees, unnamed_polls;
};

/* Builds the plan for img. With n_profs 0, every known profile is tried
 * and all that find their poll function (and their marker symbol) are
 * planned and merged, a profile refined by another one found dropped; else
 * exactly profs[0..n_profs) are planned. Returns NULL and writes a one-line
 * reason with the fix into err (stripped binary, no runtime symbols). */
struct probe_plan *probe_plan__build(const struct elf_image *img,
				     const struct runtime_profile *const *profs, size_t n_profs,
				     char *err, size_t errlen);
/* As probe_plan__build(), then the USDT sites of notes selected by
 * patterns[0..n_patterns) ("provider:name" or "provider:*"), each site a
 * probe of role AS_ROLE_USDT with symbol "provider:name", in note order,
 * a site selected twice planned once. With patterns and no runtime asked
 * for (n_profs 0), runtimes are optional: those found are planned, none
 * (or a stripped binary) gives runtime "none". A pattern matching no site
 * fails with a one-line message listing the binary's probes. With
 * n_patterns 0 this is exactly probe_plan__build(). */
struct probe_plan *probe_plan__build_usdt(const struct elf_image *img,
					  const struct runtime_profile *const *profs, size_t n_profs,
					  const struct usdt_notes *notes,
					  const char *const *patterns, size_t n_patterns,
					  char *err, size_t errlen);
void probe_plan__free(struct probe_plan *plan);
/* Identifies the version and checks the layout of every planned runtime
 * (runtime_id.h; dt: img's DWARF, may be NULL), into plan->ids. Returns 0
 * or -ENOMEM. */
int probe_plan__identify(struct probe_plan *plan, const struct elf_image *img,
			 struct dwarf_types *dt);
/* The header layout for reading task ids: the id profile's, or DWARF's
 * where it disagreed (identified plans). */
uint32_t probe_plan__hdr_vtable_off(const struct probe_plan *plan);
uint32_t probe_plan__vtable_id_off_slot(const struct probe_plan *plan);
/* Drops every probe whose role's bit (1 << role) is not in roles. */
void probe_plan__keep_roles(struct probe_plan *plan, unsigned roles);
/* True when the plan has a free probe (AS_ROLE_FREE) of profile prof. */
bool probe_plan__frees_tasks(const struct probe_plan *plan, const struct runtime_profile *prof);
/* Where the spawn metadata keeps the name (name points), 0 none. */
uint32_t probe_plan__spawn_meta_name_off(const struct probe_plan *plan);
/* Makes room for one more probe in every per-probe array, zeroed (owner 0);
 * returns it, not yet counted in plan->n, or NULL (ENOMEM). The caller fills
 * it, then increments plan->n and plan->per_role[role]. */
struct as_probe *probe_plan__grow(struct probe_plan *plan);
/* 1 when the first instruction at addr is emulated by uprobes (cheap). */
uint8_t probe_plan_emulated(const struct elf_image *img, uint64_t addr);
/* The address probe i is attached at (its function's entry, or past it:
 * plan->site[i]). */
uint64_t probe_plan__site_addr(const struct probe_plan *plan, size_t i);
/* plan->owner of probes that belong to no runtime profile (futures). */
#define PLAN_OWNER_NONE 0xff

/* Lower-case role name ("poll", "wake", ...). */
const char *probe_role_name(unsigned role);

/* Name of the root future a task wraps, from a future type name as DWARF
 * spells it: prof's wrappers peeled off, then made readable
 * (sym_pretty_future). Returns a malloc'd string, or NULL (ENOMEM). */
char *plan_future_name(const struct runtime_profile *prof, const char *type_name);

#endif
