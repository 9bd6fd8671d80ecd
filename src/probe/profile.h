/* Runtime profiles: what asyncscope knows about where to probe a runtime,
 * kept as data. Each point names functions by their demangled name (hash
 * removed) and says which role the probe plays and which argument register
 * holds the task. Adding a runtime means adding a table, not code. */
#ifndef AS_PROBE_PROFILE_H
#define AS_PROBE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum profile_match {
	MATCH_NORM,    /* pattern equals the name with generic arguments removed */
	MATCH_PREFIX,  /* pattern is a prefix of the demangled name */
	MATCH_GLOB,    /* pattern matches the whole demangled name; '*' matches any text */
};

struct profile_point {
	uint16_t role;       /* enum as_probe_role */
	uint8_t arg_reg;     /* 0 rdi, 1 rsi, 2 rdx, 3 rcx */
	uint8_t fallback;    /* used only when no earlier point of this role matched */
	enum profile_match match;
	const char *pattern;
	/* AS_ROLE_READY: the register points inside the task (at its future,
	 * at most AS_INSIDE_MAX bytes past the task pointer), not at it. */
	uint8_t inside;
	/* AS_ROLE_SPAWN: the register holds the new task, not a &Location; the
	 * spawn's call site is found by unwinding the user stack (AS_CF_STACK). */
	uint8_t stack;
	/* AS_ROLE_SPAWN: the point gives the new task's name, not its site:
	 * the register holds the spawn's metadata (name at the profile's
	 * spawn_meta_name_off), r8 its task id. */
	uint8_t name;
	/* AS_ROLE_WAKE: a scheduler function that a waker call (another wake
	 * point) reaches out of line: a wake here of the task the thread's last
	 * event woke is that same wake, reported twice. */
	uint8_t nested;
	/* The runtime versions where this function plays this role (NULL: no
	 * bound known), and what sets the bounds: the runtime's pull request
	 * where its CHANGELOG lists it, else "source" (read from the sources of
	 * the versions on either side). Matching is by name, so a bound is
	 * documentation and evidence of the version, never a filter. */
	const char *since, *until, *why;
};

/* A generic type that wraps the user's future inside a task: the root
 * future name shown is its generic argument `arg` (0 first), applied again
 * until no wrapper matches. pattern is a glob ('*' any text) on the type
 * name as DWARF spells it, without its generic arguments. */
struct future_wrapper {
	const char *pattern;
	unsigned arg;
};

/* A generic type holding a task's future, as a function's name spells it
 * ("core::ptr::drop_in_place<tokio::runtime::task::core::Cell<F, S>>"):
 * the future is its generic argument `arg` (0 first). type is the path
 * without its arguments, as legacy and v0 names both spell it. Without
 * DWARF and with legacy symbols (whose poll copies carry no generic
 * arguments), a poll copy's future is found in the names of the functions
 * it calls (probe/future_names.h). */
struct future_carrier {
	const char *type;
	unsigned arg;
};

/* A fact about the runtime's types that DWARF can confirm. */
enum layout_role {
	LAYOUT_HDR_VTABLE = 1,  /* member's offset is the profile's hdr_vtable_off */
	LAYOUT_VTABLE_ID,       /* member's offset is the profile's vtable_id_off_slot */
	LAYOUT_META_NAME,       /* member's offset is the profile's spawn_meta_name_off */
	LAYOUT_SIGN,            /* the member (of member_type) shows versions / feature */
};

struct layout_fact {
	uint8_t role;
	bool deep;                /* the member may sit in nested structures */
	const char *type, *member;
	const char *member_type;  /* LAYOUT_SIGN: the member's type, without generic
	                             arguments (NULL: the member existing is the sign) */
	const char *versions;     /* LAYOUT_SIGN: the range where it holds
	                             ("1.35 or later"), NULL any */
	const char *feature;      /* LAYOUT_SIGN: the build it shows ("tokio_unstable") */
	const char *why;          /* the pull request or source behind it */
};

/* A task's state word, as far as it tells what can still wake the task:
 * where it is in the task's header, the bits set while it is not idle,
 * the bit set while its JoinHandle lives (which holds a reference), and
 * the reference count's first bit. An idle task is referenced by its
 * runtime's task list (base_refs), its JoinHandle, and every waker of it
 * held and AbortHandle: what is left beyond the list and the handle are
 * the wakers (dump, and record's last read of the idle tasks). */
struct task_state_layout {
	uint32_t off;
	uint64_t busy;            /* running, complete, notified */
	uint64_t handle;          /* JoinHandle alive */
	unsigned ref_shift;
	uint64_t base_refs;
};

/* The wakers held of an idle task whose state word is s: true with
 * *wakers, false when s is no idle task's, or its count is below what the
 * list and the handle hold (then nothing is known). */
bool task_state_wakers(const struct task_state_layout *l, uint64_t s, uint32_t *wakers);

struct runtime_profile {
	const char *name;            /* "tokio" */
	const char *versions;        /* what the table was verified on */
	/* The versions built and traced by the tests ("1.24.2, 1.53.1") and the
	 * range the profile claims ("1.24 to 1.53": those between the tested
	 * ones are untested); NULL when not versioned. */
	const char *tested, *range;
	/* Crate path prefixes of the runtime's own code ("tokio::"): a spawn's
	 * call site is the innermost frame outside them and the standard
	 * library. NULL-terminated; NULL: none. */
	const char *const *library;
	/* The crate whose `<crate>-<version>/` source paths give the version
	 * ("tokio"); NULL: not versioned. */
	const char *crate;
	const struct layout_fact *layout;
	size_t n_layout;
	/* Root futures (a glob on the poll copy's future name) whose poll
	 * returns only when the runtime shuts down, e.g. a worker's loop: no
	 * return probe there, so that a return pending forever on each worker
	 * cannot hold up the detaching of the probes (a recorder killed while
	 * its target runs). NULL: none. */
	const char *endless_polls;
	/* Root futures (globs) of the runtime's own worker loops: a task polled
	 * outermost on a thread and running the scheduler there, whether or not
	 * anything was polled inside it (an idle worker; the loop
	 * block_in_place starts to take over a worker's queue). NULL: known
	 * only by the polls nested in them. */
	const char *worker_loops;
	/* Of those, the loops block_in_place starts (globs, NULL-terminated):
	 * the task that spawned one handed its worker's queue to it and
	 * blocked by design. NULL: none. */
	const char *const *handoff_loops;
	/* Root futures of the blocking pool's tasks (spawn_blocking): made to
	 * block, on threads that are not workers (worker loops excepted). */
	const char *pool_tasks;
	/* The same known from a stack (profile mode names few tasks): user
	 * frames (globs, NULL-terminated) found only in a blocking-pool task's
	 * poll, and only inside block_in_place. NULL: none. */
	const char *const *pool_frames;
	const char *const *handoff_frames;
	/* Text found in a demangled function symbol only where the binary uses
	 * this runtime (anywhere in the name: under fat LTO the runtime's own
	 * functions may survive only as generic arguments of others); NULL:
	 * finding the poll function is enough. */
	const char *marker;
	/* A profile this one makes more precise (same functions, a runtime
	 * built on it): when both are found, only this one is used. */
	const char *refines;
	/* The state word (NULL: its count says nothing of the wakers held:
	 * async-executor keeps a waker of every task it runs). */
	const struct task_state_layout *task_state;
	/* Header layout for reading the task id in BPF (0: no task id). */
	uint32_t hdr_vtable_off;
	uint32_t vtable_id_off_slot;
	/* Where a spawn's metadata (name points) keeps the task's name. */
	uint32_t spawn_meta_name_off;
	const struct profile_point *points;
	size_t n_points;
	const struct future_wrapper *wrappers;
	size_t n_wrappers;
	const struct future_carrier *carriers;
	size_t n_carriers;
};

/* The profile called name, or NULL. */
const struct runtime_profile *profile_find(const char *name);
/* All known profiles, NULL-terminated, in detection order. */
extern const struct runtime_profile *const profiles[];

/* Parses a runtime list such as "tokio" or "tokio+smol" into out (at most
 * max). Returns the number of profiles, or -EINVAL when a name is unknown
 * (or the list is empty or too long); the first unknown name is copied
 * into bad (when not NULL). */
int profile_parse(const char *names, const struct runtime_profile **out, size_t max,
		  char *bad, size_t badlen);
/* "tokio, async-std, smol, async-executor": the known names, for messages. */
const char *profile_known_names(void);

/* Whether a function named name (demangled, hash removed; norm: without
 * generic arguments) is the profile point pt. */
bool profile_point_matches(const struct profile_point *pt, const char *name, const char *norm);

#endif
