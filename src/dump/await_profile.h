/* The await profile: dumps taken at a fixed rate (dump --every), every live
 * task's await chain counted in each, idle tasks included, into a wall-clock
 * "where do tasks wait" profile: folded stacks (flame graphs: the task's
 * root future, then each frame "future (file:line)" outermost first, then
 * what it awaits; a branch of an await macro as its own stack, the sample's
 * time split between the pending branches) weighted in ns (samples x the
 * interval), and a table of chains (tasks seen in each, share of the
 * samples). The future of each thread in a block_on counts as a task whose
 * root is "block_on NAME". Depends on dump/dump.h and util/ only; never prints but to the
 * stream it is given.
 *
 * Ownership: the profile owns every chain string it keeps; results are
 * borrowed until await_profile__free(). */
#ifndef AS_DUMP_AWAIT_PROFILE_H
#define AS_DUMP_AWAIT_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dump/dump.h"

struct await_profile;

/* A profile of samples interval_ns apart. NULL when out of memory. */
struct await_profile *await_profile__new(uint64_t interval_ns);
/* One sample: every task of the dump, and every block_on future. Returns 0
 * or -ENOMEM. */
int await_profile__add(struct await_profile *p, const struct dump_result *r);
/* Samples added. */
uint64_t await_profile__samples(const struct await_profile *p);

/* One chain, as await_profile__chains() lists them. */
struct await_chain {
	const char *stack;       /* "root;frame (file:line);...;awaited", ';' between */
	uint64_t ns;             /* wall-clock time spent in it: samples x interval */
	uint64_t task_samples;   /* (task, sample) pairs in it, each branch of a
	                            macro one of its own */
	uint64_t tasks;          /* distinct tasks seen in it */
};

/* Every chain, most time first (ties: stack order). *n the count. The
 * array is the profile's, valid until the next add or free. */
const struct await_chain *await_profile__chains(struct await_profile *p, size_t *n);

/* Folded stacks, one line per chain: "STACK NS" (ns: the weight's unit;
 * flamegraph.pl, speedscope, inferno read it). Returns 0 or -EIO. */
int await_profile__write_folded(struct await_profile *p, FILE *out);
/* The table: samples, interval, then per chain TASKS, SHARE (of all the
 * tasks' time), TIME, the chain; at most limit rows (0: all) and a line
 * saying how many more. Returns 0 or -EIO. */
int await_profile__write_table(struct await_profile *p, FILE *out, size_t limit);

/* Frees p; accepts NULL. */
void await_profile__free(struct await_profile *p);

#endif
