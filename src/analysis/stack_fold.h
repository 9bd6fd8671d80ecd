/* A stack's frames as one flame-graph line fragment, and what each frame
 * is: the program's own code, a library, the runtime's scaffolding, or
 * unknown. Pure C, no I/O, no globals.
 *
 * Readable flame graphs start at the task: a thread's start, the worker
 * loop and the ~50 frames of the runtime and the standard library between
 * a task's poll and its future (raw::poll, the harness, coop, catch_unwind,
 * the worker's context...) say nothing about the program. What counts as
 * such scaffolding is data: one table of crate / module prefixes in
 * stack_fold.c (frame_rules), next to the table of library crates that
 * tells the program's own frames apart, never tuned to a program.
 *
 * Folding (the default): let K be the innermost frame of the program's own
 * code, or, with none, the outermost user frame that is not scaffolding;
 * scaffolding and unnamed frames outer of K are left out. Frames inner of
 * K (what the program called: std::thread::sleep, a mutex, the C library,
 * the kernel) and library frames that lead to it (hyper calling a service)
 * stay. A stack with no such K keeps all its frames. A stack of no task
 * (STACK_FOLD_THREAD: the scheduler, an idle worker) loses only the
 * thread's start, up to the runtime's own loop: there the runtime is the
 * answer. STACK_FOLD_ALL keeps every frame.
 *
 * The program's own first frame is the outermost own frame kept; its
 * position in the line is given (struct stack_line.own), and kernel frames
 * start at stack_line.kernel: the writers mark them (folded: "_[j]" and
 * "_[k]", the annotations flamegraph.pl and inferno colour with --colors
 * java and do not print). */
#ifndef AS_ANALYSIS_STACK_FOLD_H
#define AS_ANALYSIS_STACK_FOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/event.h"

enum stack_fold_flags {
	STACK_FOLD_ALL = 1,    /* keep every frame (--all-frames) */
	STACK_FOLD_THREAD = 2, /* a stack of no task (the scheduler, an idle
	                          worker, another thread): leave out only the
	                          thread's start, up to the runtime's own loop
	                          (frame_rules' loop entries) or the first frame
	                          that is not scaffolding */
};

/* What a frame is. */
enum frame_kind {
	FRAME_OWN = 0,         /* the program's own code */
	FRAME_LIBRARY,         /* a library (std, core, the runtime's API, a crate
	                          found in a registry path, C code) */
	FRAME_SCAFFOLD,        /* the runtime's or std's machinery between a thread's
	                          start and a task's future (frame_rules) */
	FRAME_UNKNOWN,         /* no name, or "FILE+0xOFFSET" */
	FRAME_KERNEL,          /* a kernel frame */
};

/* The library crates learnt from frames' source paths (a crate under a
 * cargo registry or git checkout is a dependency, whatever its name). Zero
 * initialise; stack_crates__clear() frees. */
struct stack_crates {
	char **names;
	size_t n, cap;
};
void stack_crates__clear(struct stack_crates *c);
/* Learns the crates of st's frames' files. Returns 0 or -ENOMEM. */
int stack_crates__learn(struct stack_crates *c, const struct as_stack *st);

/* The kind of a user frame named sym (demangled; "" unknown); crates may be
 * NULL (the static table only). */
enum frame_kind stack_frame_kind(const char *sym, const struct stack_crates *crates);
/* Whether user frame sym is a thread's or the process's start (clone3,
 * start_thread, _start, ...): the outermost frame of a whole user stack,
 * so one ending elsewhere was cut short. */
bool stack_frame_start(const char *sym);

/* A folded stack: its frames outermost first, ';' between them. */
struct stack_line {
	char *s;               /* malloc'd, the caller frees; "" for no frame */
	uint32_t n;            /* frames in s */
	int32_t own;           /* index in s of the program's first frame, -1 none */
	int32_t kernel;        /* index of the first kernel frame, -1 none */
};

/* The frames of st kept by flags, outermost first: user frames, then kernel
 * frames, leaving out the skip_kernel innermost kernel frames (the tracing
 * or sampling path). idx gets the frame indices into st->frames (room for
 * st->n_kernel + st->n_user); *own the position in idx of the program's
 * first frame (-1 none); *n_user how many of them are user frames. Returns
 * how many. */
uint32_t stack_fold_view(const struct as_stack *st, uint32_t skip_kernel, unsigned flags,
			 const struct stack_crates *crates, uint32_t *idx, int32_t *own,
			 uint32_t *n_user);

/* The line of st as stack_fold_view() keeps it: an unnamed frame as
 * 0xADDR, ';' in a name as ',' and control characters as '?'. Returns 0 or
 * -ENOMEM (then *out is zeroed). */
int stack_fold_line(const struct as_stack *st, uint32_t skip_kernel, unsigned flags,
		    const struct stack_crates *crates, struct stack_line *out);

/* The same as a string only (the caller frees; "" for NULL st), or NULL on
 * ENOMEM. */
char *stack_fold(const struct as_stack *st, uint32_t skip_kernel, unsigned flags);

/* Writes one flame-graph frame name: ';' as ',', control characters as
 * '?' (len bytes of s). */
void stack_frame_clean(char *s);

#endif
