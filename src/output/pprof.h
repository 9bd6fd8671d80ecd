/* pprof: a profile in pprof's format (perftools.profiles.Profile of
 * ../shared/pprof/profile.proto, the file `go tool pprof`, Pyroscope,
 * Parca and Grafana read), built incrementally from samples and written
 * gzip'd (zlib) to a FILE* or a memory buffer.
 *
 * A library module: no files, no CLI, no trace reader; it knows stacks
 * (trace/event.h's struct as_stack, folded by analysis/stack_fold.h) but
 * no analysis. Strings, functions and locations are interned as samples
 * come, and samples with the same locations and labels are merged (their
 * values summed), so memory grows with the distinct stacks, not with the
 * samples. Errors are -errno returns; nothing is printed.
 *
 * Use (a live agent serving /debug/pprof/profile does the same per window):
 *
 *   struct pprof *p = pprof__new();
 *   int cpu = pprof__add_type(p, "cpu", "nanoseconds");
 *   int off = pprof__add_type(p, "offcpu", "nanoseconds");
 *   pprof__set_period(p, "cpu", "nanoseconds", 10101010);
 *   pprof__set_time(p, wall_start_ns, duration_ns);
 *   int64_t v[2] = { 10101010, 0 };
 *   struct pprof_label l[] = { { "task", "app::handler" }, { "task_id", "#3" } };
 *   const char *root[] = { "app::handler" };
 *   pprof__add_stack(p, &(struct pprof_stack){ .roots = root, .n_roots = 1,
 *                    .stack = st, .skip_kernel = 3 }, v, l, 2);
 *   pprof__write(p, file);            // or pprof__write_mem(p, &buf, &len)
 *   pprof__free(p);
 *
 * What a written profile holds: sample_type as added (the first is the
 * default unless pprof__set_default_type()), a Sample per distinct (stack,
 * labels) with one value per type, a Location per distinct (address, the
 * functions at it: inlined ones first, as pprof wants them), a Function
 * per distinct (name, file) (its system_name left unset: pprof would take
 * the name as still to demangle), one Mapping naming the program when
 * given (no location refers to it: addresses are the process's, and every
 * location has its functions, nothing is left to symbolise), the
 * string table ("" first), time, duration, period and comments. Synthetic
 * frames (a task, a future) have address 0 and a location of their own. */
#ifndef AS_OUTPUT_PPROF_H
#define AS_OUTPUT_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/stack_fold.h"
#include "trace/event.h"

struct pprof;

/* One frame of a sample, for pprof__add_sample(). */
struct pprof_frame {
	const char *function;    /* its name; NULL or "": "0xADDR" */
	const char *file;        /* source file, NULL unknown */
	uint32_t line;           /* 0 unknown */
	uint64_t addr;           /* 0: a synthetic frame */
	bool inlined;            /* inlined into the next (outer) frame, at the
	                            same address: one location with it */
};

/* One label: key and a string value, or (str NULL) a number in unit
 * (NULL none). */
struct pprof_label {
	const char *key;
	const char *str;
	int64_t num;
	const char *unit;
};

/* A stack for pprof__add_stack(): synthetic frames at the root (a task, a
 * chain of futures: outermost first), then the frames of an as_stack as
 * stack_fold_view() keeps them (leaving out skip_kernel innermost kernel
 * frames; flags STACK_FOLD_ALL keeps all). */
struct pprof_stack {
	const char *const *roots;
	size_t n_roots;
	const struct as_stack *stack;       /* NULL: the roots alone */
	uint32_t skip_kernel;
	unsigned flags;                     /* stack_fold.h */
	const struct stack_crates *crates;  /* may be NULL */
};

/* A new empty profile, or NULL (ENOMEM). */
struct pprof *pprof__new(void);
/* Adds a sample type ("cpu", "nanoseconds"); before the first sample.
 * Returns its index (0, 1, ...: the values' order), -EINVAL after a
 * sample, or -ENOMEM. */
int pprof__add_type(struct pprof *p, const char *type, const char *unit);
/* The type shown by default (pprof's default_sample_type). Returns 0 or
 * -EINVAL. */
int pprof__set_default_type(struct pprof *p, int type);
/* When the profile was taken (wall clock ns since the epoch, 0 unknown)
 * and for how long (ns). */
void pprof__set_time(struct pprof *p, int64_t time_ns, int64_t duration_ns);
/* The sampling period ("cpu", "nanoseconds", 10101010). 0 or -ENOMEM. */
int pprof__set_period(struct pprof *p, const char *type, const char *unit, int64_t period);
/* The program's binary and build id (hex, may be NULL): a Mapping that
 * names it, every location's functions being resolved already. 0,
 * -EINVAL or -ENOMEM. */
int pprof__set_main_binary(struct pprof *p, const char *file, const char *build_id);
/* A comment line (go tool pprof -comments). 0 or -ENOMEM. */
int pprof__add_comment(struct pprof *p, const char *text);

/* Adds a sample: n frames leaf first, values[] one per type (copied), the
 * labels. Merged with an equal (frames, labels) sample. Returns 0, -EINVAL
 * (no type yet) or -ENOMEM. */
int pprof__add_sample(struct pprof *p, const struct pprof_frame *frames, size_t n,
		      const int64_t *values, const struct pprof_label *labels, size_t n_labels);
/* The same from s (frames named as recorded: kernel frames, user frames
 * with the functions inlined at each address and their file:line). When
 * the stack holds a frame of the program's own code, the label
 * "program_frame" names the first one (the outermost). Returns as
 * pprof__add_sample(). */
int pprof__add_stack(struct pprof *p, const struct pprof_stack *s, const int64_t *values,
		     const struct pprof_label *labels, size_t n_labels);

/* Writes the profile gzip'd to out (borrowed; flushed, not closed).
 * Returns 0, -ENOMEM or -EIO. The profile stays usable (more samples may
 * be added and written again). */
int pprof__write(struct pprof *p, FILE *out);
/* The same into *buf (malloc'd, the caller frees) of *len bytes. */
int pprof__write_mem(struct pprof *p, uint8_t **buf, size_t *len);
/* The Profile message itself, not compressed (for tests and for callers
 * that compress on their own): *buf malloc'd. 0 or -ENOMEM. */
int pprof__encode(struct pprof *p, uint8_t **buf, size_t *len);

/* Reading a profile back (the speedscope writer converts one). */
struct pprof_sample_view {
	const uint32_t *functions;   /* function ids (1, 2, ...), leaf first: each
	                                location's lines expanded, inlined first */
	const uint32_t *lines;       /* their lines (0 unknown) */
	size_t n;
	const int64_t *values;       /* one per type */
};
typedef int (*pprof_each_fn)(void *ctx, const struct pprof_sample_view *s);
/* Calls fn for every sample in the order they were first added, until fn
 * returns non-zero (returned). Returns 0, fn's value or -ENOMEM. */
int pprof__each(const struct pprof *p, pprof_each_fn fn, void *ctx);
/* Sample types, and type t's name and unit. */
int pprof__types(const struct pprof *p);
const char *pprof__type(const struct pprof *p, int t, const char **unit);
/* Function fid's name, and its file (NULL unknown) into *file. */
const char *pprof__function(const struct pprof *p, uint32_t fid, const char **file);

/* Counts: samples (distinct), locations, functions, strings. */
size_t pprof__samples(const struct pprof *p);
size_t pprof__locations(const struct pprof *p);
size_t pprof__functions(const struct pprof *p);

/* Frees p; accepts NULL. */
void pprof__free(struct pprof *p);

#endif
