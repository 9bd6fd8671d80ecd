/* The target of a recording: the process found by pid or the command
 * launched (held before exec until the probes are attached), its binary
 * opened once (ELF symbols and, on demand, DWARF, shared by the probe plan,
 * the futures plan and stack naming), and the probe plan built from it.
 * Internal to src/record; never prints (warnings through rec_notify). */
#ifndef AS_RECORD_LAUNCH_H
#define AS_RECORD_LAUNCH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "probe/plan.h"
#include "record/recorder.h"
#include "sym/dwarf_types.h"
#include "sym/elf_image.h"
#include "sym/usdt_notes.h"

struct rec_target {
	char binary[PATH_MAX];       /* the executable, as messages name it */
	char attach_path[PATH_MAX];  /* what the kernel opens (/proc/PID/exe for -p:
	                                the magic link resolves even a replaced file) */
	char *cmdline;               /* owned: the command line, "" unknown */
	pid_t tgid;                  /* the target (the child once launched) */
	pid_t child;                 /* the launched command, -1 none */
	int go_fd;                   /* write end of the child's go pipe, -1 */
	int exec_fd;                 /* read end of the pipe the child reports a failed
	                                exec on (closed by exec), -1 */
	int exec_errno;              /* a failed exec's errno, once read (0 none) */
	int status;                  /* the child's wait status, -1 */
	bool held;                   /* the child stopped at its exec (ptrace), until
	                                rec_target__resume() */
	bool gone;                   /* the target exited (child reaped) */
	bool stopped;                /* ... because the recording stopped it */
	/* the binary, opened once: */
	struct elf_image *img;
	struct usdt_notes *notes;    /* with o->n_usdt */
	struct dwarf_types *dt;      /* its DWARF, opened by rec_target__dwarf() */
	bool dt_tried;
};

/* Sets *t up (pointers NULL, fds -1) for o->pid or o->argv: the binary
 * resolved and opened, the command line read, nothing launched yet.
 * Returns 0 or -errno with a one-line message and fix in err. On failure
 * *t is still ready for rec_target__release(). */
int rec_target__find(struct rec_target *t, const struct recorder_opts *o, char *err, size_t errlen);

/* The binary's DWARF (opened on the first call; NULL when it has none or
 * it cannot be read), borrowed until rec_target__release(). */
struct dwarf_types *rec_target__dwarf(struct rec_target *t);

/* The runtime profiles o->runtime names into profs[PLAN_MAX_PROFILES]:
 * how many (0: none named, detect), or -EINVAL with a message in err. */
int rec_parse_runtime(const struct recorder_opts *o, const struct runtime_profile **profs,
		      char *err, size_t errlen);

/* The probe plan for o with profs[0..n_profs) (runtime profiles, USDT
 * sites, future probes). Returns 0 with *out (probe_plan__free) and
 * res->future_* filled, or -errno with a message in err. Warnings about
 * future probes go to o->notice (not with o->quiet). */
int rec_target__plan(struct rec_target *t, const struct recorder_opts *o,
		     const struct runtime_profile *const *profs, size_t n_profs,
		     struct probe_plan **out, struct recorder_result *res, char *err, size_t errlen);

/* Forks the command of o->argv, held before exec until rec_target__go();
 * its stdout and stderr go to o->child_stdio when set. t->tgid becomes the
 * child. 0 or -errno with a message. No-op for a pid target. */
int rec_target__spawn(struct rec_target *t, const struct recorder_opts *o, char *err,
		      size_t errlen);

/* Lets a launched command exec. 0 or -errno with a message. */
int rec_target__go(struct rec_target *t, char *err, size_t errlen);

/* true (once known, and from then on) when the target has exited; a
 * launched command is reaped, its status in t->status. */
bool rec_target__gone(struct rec_target *t);

/* Where the kernel loaded the binary: *bias = runtime address - the ELF's
 * virtual address, from /proc/PID/maps (the mapping of file offset 0).
 * Returns 0, or -ENOENT when the target's maps do not show it. */
int rec_target__load_bias(const struct rec_target *t, uint64_t *bias);

/* The errno of a launched command's failed exec, 0 when it ran; the first
 * call waits for the exec (the pipe closes then), later ones return the
 * same. */
int rec_target__exec_error(struct rec_target *t);
/* A launched command is held stopped right after its exec (it traces
 * itself until then: PTRACE_TRACEME), so that its maps are read before any
 * of its code runs, however short-lived it is (a program done in a
 * millisecond under load was gone before the recorder read them, and its
 * spawn sites and stacks were lost). rec_target__exec_error() waits for
 * that stop; this lets it run (detaches). No-op when not held. */
void rec_target__resume(struct rec_target *t);

/* Ends a launched command that is still running (SIGTERM, then SIGKILL
 * after 2 s) and collects its status. No-op for a pid target. */
void rec_target__stop(struct rec_target *t);

/* Frees what t holds; a child still held before exec is let go without
 * exec (it exits) and reaped. */
void rec_target__release(struct rec_target *t);

#endif
