/* Link holders: uprobe_multi link descriptors held apart, each by a thread
 * of its own with a file table of its own (unshare(CLONE_FILES)), so that
 * their releases overlap. Releasing a uprobe link waits for an RCU
 * tasks-trace and an SRCU grace period (tens to hundreds of ms under
 * load); a process killed by SIGKILL closes one file table's descriptors
 * one after the other, but each thread's own table is closed by that
 * thread as it exits, all at once. A clean release closes them from their
 * threads too, in parallel.
 *
 * Ownership: the holder owns the descriptors given to it from the call on
 * (also on failure: they are then closed at release from threads of the
 * shared table). */
#ifndef AS_PROBE_LINK_HOLD_H
#define AS_PROBE_LINK_HOLD_H

#include <stddef.h>

struct link_hold;

/* Takes fds[0..n) (n at most LINK_HOLD_MAX: the rest stay the caller's,
 * *taken says how many were taken). NULL only when out of memory (nothing
 * taken then). */
#define LINK_HOLD_MAX 32
struct link_hold *link_hold__new(const int *fds, size_t n, size_t *taken);
/* Closes every descriptor, in parallel, waits for the threads and frees.
 * Accepts NULL. */
void link_hold__release(struct link_hold *h);

#endif
