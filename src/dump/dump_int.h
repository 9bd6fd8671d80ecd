/* What the files of the dump engine share (dump.c: tasks, walks, reads;
 * discover.c: the ways in, CONTEXT and the heap scan): the engine's state
 * and its helpers. Private to src/dump; dump.h is the interface. */
#ifndef AS_DUMP_DUMP_INT_H
#define AS_DUMP_DUMP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dump/dump.h"
#include "dump/procmem.h"
#include "dump/task_lists.h"
#include "sym/dwarf_types.h"
#include "sym/elf_image.h"
#include "util/u64map.h"

/* Where things are, from DWARF or the 1.24 constants. */
struct layout {
	uint64_t hdr_state, hdr_vtable;
	uint64_t vt_poll, vt_trailer, vt_id;
	uint64_t owned_prev, owned_next;   /* within the Trailer */
	uint64_t hdr_owner;                /* Header.owner_id */
	bool from_dwarf;
};

/* One raw::poll<T, S> copy: what its tasks are. */
struct poll_copy {
	uint64_t addr;        /* ELF virtual address */
	char *future;         /* readable root future name, or NULL */
	char *cell_name;      /* DWARF name of Cell<T, S>, or NULL */
	bool typed;           /* cell found: */
	Dwarf_Die stage;      /* Stage<T> */
	uint64_t stage_off;   /* its offset in the cell */
	uint64_t cell_size;
	size_t owned;         /* its scheduler's OwnedTasks (sharded, or one list whose
	                         head DWARF describes): index + 1 into ctx.layouts, 0 none */
	bool done;            /* type_copies() looked at it */
	bool used;            /* a task found is of this copy (the copies typed lazily) */
	bool one_list;        /* DWARF says its OwnedTasks is one list (< 1.35) */
};

#define MAX_LAYOUTS 8     /* scheduler kinds (multi_thread, current_thread) */
#define MAX_LISTS   64    /* OwnedTasks found (one per runtime) */

/* An OwnedTasks to walk (sharded, or one list reached from its handle):
 * where, with which layout, how it was found. */
struct owned_list {
	uint64_t addr;
	size_t layout;
	enum dump_via via;
	bool walked;          /* already walked (found through CONTEXT) */
};

struct ctx {
	pid_t pid;
	struct proc_threads *threads;   /* dump_opts.threads, or NULL: loaded for the one read */
	uint64_t bias;
	struct layout lay;
	struct procmem pm;
	struct dwarf_types *dt;
	struct poll_copy *copies;     /* the plan's poll probes */
	size_t n_copies;
	struct u64map copy_by_addr;   /* ELF address -> index + 1 */
	struct u64map vt_copy;        /* task vtable -> poll copy index + 1, 0 none (cache) */
	struct u64map vt_trailer;     /* task vtable -> its trailer offset (cache) */
	struct u64map task_by_header; /* header -> index + 1 into res->tasks */
	struct dump_result *res;
	uint8_t *snap;
	uint32_t next_seq;            /* ~N of the tasks without an id: first sight, never reused */
	struct owned_layout layouts[MAX_LAYOUTS];
	size_t n_layouts;
	bool has_local;               /* a copy's tasks are a LocalSet's */
	bool sharded;                 /* a copy's DWARF describes its OwnedTasks (sharded,
	                                 or one list with its head): lists are walked from
	                                 their heads */
	bool one_list;                /* a copy's DWARF describes one list */
	enum dump_via seed_via;       /* how the tasks known before the walks were found */
	struct owned_list lists[MAX_LISTS];
	size_t n_lists;
	/* no DWARF for any task list, of a version that shards it: its facts */
	const struct task_list_fact *unverified;
	bool version_known;           /* from the binary's paths (else its symbols) */
	struct proc_thread *th;       /* the threads as CONTEXT's discovery read them, or
	                                 NULL (block_on.c reads them); freed by dump_run */
	size_t n_th;
};

/* Reads one word of the target: 0 or -errno. */
int dump_rd64(struct ctx *c, uint64_t addr, uint64_t *v);
/* The poll copy of the task at header, or NULL when the header does not
 * look like a live task (its vtable's poll is no raw::poll copy). */
struct poll_copy *dump_task_copy(struct ctx *c, uint64_t header, uint64_t *vtable);
/* The owned-list links of the task at h: 0 or -1. */
int dump_task_links(struct ctx *c, uint64_t h, uint64_t *prev, uint64_t *next);
/* The OwnedTasks the task at h belongs to: 1 with *addr, *layout; else 0. */
int dump_owned_of(struct ctx *c, uint64_t h, uint64_t *addr, size_t *layout);
/* Notes the OwnedTasks at addr for walking (once), found as via says. */
void dump_note_list(struct ctx *c, uint64_t addr, size_t layout, enum dump_via via);
/* Adds the task at header (once): 0 or -ENOMEM. */
int dump_add_task(struct ctx *c, uint64_t header, uint64_t id, const char *name, bool seen);
/* owned_tasks__walk()'s callbacks over c (ctx). */
extern const struct owned_walk_ops dump_walk_ops;
/* Appends a list to c->res->task_lists (zeroed): it, or NULL (ENOMEM). */
struct dump_list *dump_list_add(struct ctx *c);

/* The ways in (discover.c). */
/* Every thread's CONTEXT (a BPF task iterator gives their thread pointers),
 * each runtime handle found once, its OwnedTasks walked from its heads into
 * c->res (task_lists, tasks). Returns the number of lists walked (0: none
 * found, c->res->context_note says why), or -ENOMEM. */
int dump_discover_context(struct ctx *c, const char *exe);
/* Fallback when no task is known: one task found in the heap (its owned
 * list then walked). 0 or -errno. */
int dump_scan_for_task(struct ctx *c);
/* Every LocalSet's list (a LocalSet is in no thread's CONTEXT while it is
 * not polled): the heap scanned for tasks of the program's LocalSet task
 * types, each one's LocalOwnedTasks (reached from its scheduler handle)
 * noted in c->lists, via DUMP_VIA_HEAP, once per list. 0 or -errno. */
int dump_scan_local_sets(struct ctx *c);

#endif
