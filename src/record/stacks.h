/* Stack naming for off-CPU intervals and CPU samples: kernel frames from
 * /proc/kallsyms, user frames from the target's ELF symbols and DWARF
 * (functions inlined at each address, file:line), named at record time so
 * a report may run where this kernel and binary are not; and with --dwarf,
 * user stacks unwound by their call frame information. The target's own
 * binary is the one the recording opened (its image and DWARF lent to the
 * symbolizer). No libbpf. Internal to src/record. */
#ifndef AS_RECORD_STACKS_H
#define AS_RECORD_STACKS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "events.h"
#include "record/recorder.h"
#include "record/stats.h"
#include "trace/event.h"

struct elf_image;
struct dwarf_types;
struct rec_stacks;

/* For tgid; the binary at path already open as img and dt (borrowed for
 * the life of the object; dt may be NULL); dwarf: start a DWARF unwinding
 * session; kernel: name kernel frames (from /proc/kallsyms, read now). What cannot be set up is said once through o->notice (kernel
 * frames without names, no DWARF unwinding) and the rest goes on. NULL
 * and errno on ENOMEM. */
struct rec_stacks *rec_stacks__new(pid_t tgid, const char *path, const struct elf_image *img,
				   struct dwarf_types *dt, bool dwarf, bool kernel,
				   const struct recorder_opts *o);

/* The user frames of o worth keeping: a frame-pointer walk through code
 * built without frame pointers ends in garbage, so up to the first address
 * no code can have. */
uint32_t rec_stack_user_depth(const struct raw_offcpu *o);

/* With copied registers and stack (--dwarf): *out = r->s with the user
 * stack unwound by DWARF, unless the frame-pointer walk found more frames
 * (code without call frame information, or a stack deeper than the copy);
 * both depths counted in st. */
void rec_stacks__unwind(struct rec_stacks *s, const struct raw_sample_dwarf *r,
			struct raw_offcpu *out, struct unwind_stats *st);

/* Names o's frames (kernel first; each user frame preceded by the
 * functions inlined at it, innermost first) into *out, whose frames are
 * borrowed until the next call. Returns false when o has no frame. */
bool rec_stacks__name(struct rec_stacks *s, const struct raw_offcpu *o, struct as_stack *out);

/* The call site of a spawn seen at a function that is given the new task
 * (RAW_SPAWN_STACK): r's user stack unwound by DWARF, the innermost frame
 * (functions inlined at each address included) whose function is not under
 * one of the crate path prefixes lib (NULL-terminated; "tokio::" and the
 * standard library's), nor a generic impl ("<F as ..."), nor C code: its
 * file into file (len bytes), line into *line and column into *col (DWARF's
 * call column, 0 unknown). Returns
 * false when no such frame with a file:line is found (no unwinding session,
 * a stack deeper than the copy, no DWARF). */
bool rec_stacks__call_site(struct rec_stacks *s, const struct raw_spawn_stack *r,
			   const char *const *lib, char *file, size_t len, uint32_t *line,
			   uint32_t *col);

/* Whether the function that returns to ret was called from a spawn: the
 * functions at the call (DWARF's inlined ones, innermost first) up to the
 * first one outside the crate prefixes lib (the program's) include one
 * whose name has "spawn" (tokio::spawn's spawn_inner, spawn_blocking):
 * a program's own Handle::current() call is no spawn. True when it cannot
 * tell (no DWARF, no name). */
bool rec_stacks__called_from_spawn(struct rec_stacks *s, uint64_t ret, const char *const *lib);

/* Reads the target's mappings and modules now, while it runs (a target
 * may exit before its last records are read). Accepts NULL. */
void rec_stacks__prime(struct rec_stacks *s);

/* Accepts NULL. */
void rec_stacks__free(struct rec_stacks *s);

#endif
