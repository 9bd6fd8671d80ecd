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

struct async_exec;

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
	const char *runtime;  /* its kind, as struct dump_list says, or NULL */
	pid_t tid;            /* DUMP_VIA_OWNER: the thread whose block_on future owns it */
	const char *comm;     /* ... its name (in res->block_ons) */
	uint64_t task;        /* DUMP_VIA_OWNER: the task whose future owns it (its
	                         header; 0: a thread's block_on future) */
	bool walked;          /* already walked (found through CONTEXT) */
};

struct ctx {
	pid_t pid;
	struct proc_threads *threads;   /* dump_opts.threads, or loaded at the first read */
	bool threads_owned;             /* ... by this dump (closed at its end) */
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
	struct u64map hdr_vt;         /* task header -> the vtable last read in it (this
	                                 dump's cache: a sample checks it in its copy) */
	struct u64map vt_id;          /* task vtable -> its tasks' id offset + 1 (cache) */
	uint64_t walk_trailer;        /* trailer offset of the last node walked + 1, 0 none:
	                                 the next node's links read with its header */
	struct dump_result *res;
	uint8_t *snap;
	uint8_t *snap2;               /* the second copy of a cell, for the checks */
	uint32_t next_seq;            /* ~N of the tasks without an id: first sight, never reused */
	size_t cur_list;              /* the task list being walked (index + 1 into
	                                 res->task_lists, that it has or is about to have):
	                                 the list of the tasks dump_add_task() adds; 0 none */
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
	bool counter_read;            /* dump_lists_created() tried (res->lists_counted) */
	bool block_ons_read;          /* dump_block_ons() done (before the heap scan) */
	struct async_exec *ax;        /* async-task's tasks (dump/async_exec.h), or NULL */
	struct proc_thread *th;       /* the threads as CONTEXT's discovery read them, or
	                                 NULL (block_on.c reads them); freed by dump_run */
	size_t n_th;
};

/* The target's threads (probe/threads.h; caller frees *out), the iterator
 * loaded once a dump. 0 or -errno. */
int dump_read_threads(struct ctx *c, struct proc_thread **out, size_t *n);

/* Reads one word of the target: 0 or -errno. */
int dump_rd64(struct ctx *c, uint64_t addr, uint64_t *v);
/* The poll copy of the task at header, or NULL when the header does not
 * look like a live task (its vtable's poll is no raw::poll copy). */
struct poll_copy *dump_task_copy(struct ctx *c, uint64_t header, uint64_t *vtable);
/* The Tokio id of the task at header, 0 unread. */
uint64_t dump_task_id(struct ctx *c, uint64_t header);
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
/* The poll copies' types (of those of tasks found only, when only_used):
 * where their lists are. 0 or -ENOMEM. */
int dump_type_copies(struct ctx *c, bool only_used);
/* Every list noted in c->lists and not yet walked, walked from its heads
 * into c->res. 0 or -ENOMEM. */
int dump_walk_noted(struct ctx *c);

/* The ways in (discover.c). */
/* Every 8-byte word of [start, end) of the target: calls fn(c, addr, word,
 * arg) until it returns non-zero (< 0: an error, returned); at most *budget
 * bytes are read (unreadable chunks skipped). 0 or the error. */
int dump_scan_words(struct ctx *c, uint64_t start, uint64_t end, uint64_t *budget,
		    int (*fn)(struct ctx *, uint64_t, uint64_t, void *), void *arg);
/* Every thread's CONTEXT (a BPF task iterator gives their thread pointers),
 * each runtime handle found once, its OwnedTasks walked from its heads into
 * c->res (task_lists, tasks). Returns the number of lists walked (0: none
 * found, c->res->context_note says why), or -ENOMEM. */
int dump_discover_context(struct ctx *c, const char *exe);
/* Fallback when no task is known: one task found in the heap (its owned
 * list then walked). 0 or -errno. */
int dump_scan_for_task(struct ctx *c);
/* Lists no thread's CONTEXT leads to: the heap scanned for tasks (of the
 * program's LocalSet task types only, when local_only: a LocalSet is in no
 * thread's CONTEXT while it is not polled; else of every type: a runtime
 * no thread is in), each one's list (reached from its scheduler handle)
 * noted in c->lists, via DUMP_VIA_HEAP, once per list. Sets
 * res->heap_scanned and heap_scan_cut when not local_only. 0 or -errno. */
int dump_scan_lists(struct ctx *c, bool local_only);
/* How many task lists the program created (tokio's id counter, read from
 * its static): 0 with *created, or -ENOENT when the binary has no such
 * symbol or it is unreadable. */
int dump_lists_created(struct ctx *c, const char *exe, uint64_t *created);
/* The distinct ids of the lists walked so far. */
size_t dump_lists_found(const struct ctx *c);
/* dump_lists_created() into c->res once (lists_counted): true when read. */
bool dump_read_counter(struct ctx *c, const char *exe);
/* The lists the program created against those walked: the ones no way in
 * reached are looked for in the heap (once), the rest counted as holding
 * no task (res->lists_without_tasks). 0 or -ENOMEM. */
int dump_account_lists(struct ctx *c, const char *exe);

/* The ways in by events (polled.c). */
/* The plan's poll copies: what a vtable's poll pointer may be. 0 or -ENOMEM. */
int dump_add_copies(struct ctx *c, const struct as_probe *probes, size_t n);
/* The tasks src saw polled and not freed by its end, into c->res (seen).
 * 0, -ENOMEM, or the source's error (in err). */
int dump_discover_polled(struct ctx *c, struct as_source *src, char *err, size_t errlen);
/* The same from a short live recording of o->pid (o->duration, 0.3 s). */
int dump_discover_by_recording(struct ctx *c, const struct dump_opts *o, char *err,
			       size_t errlen);

/* What a parked task holds (held.c). */
/* t parked on timers (tokio's Sleep, Timeout, Interval; async-io's Timer,
 * async-std's timeouts) anywhere in its chain (the leaf, a combinator
 * walked through, a poll_fn over one, a pending branch): the earliest
 * deadline into t->wakes_at_ns (0 none). */
void dump_read_deadline(struct ctx *c, struct dump_task *t);
/* The JoinSets t's frames hold, each with its tasks, into t->join_sets
 * (their tasks' places in c->res resolved later). 0 or -ENOMEM. */
int dump_read_join_sets(struct ctx *c, struct dump_task *t);
/* The LocalSets the block_on futures of c->res own (by value or by
 * reference in a frame, a RunUntil): each one's list noted in c->lists,
 * via DUMP_VIA_OWNER. 0 or -ENOMEM. */
int dump_local_sets_owned(struct ctx *c);
/* The same in the chains of the tasks res->tasks[from..to) (sampled): a
 * task that runs a LocalSet of its own. 0 or -ENOMEM. */
int dump_local_sets_in_tasks(struct ctx *c, size_t from, size_t to);
/* After the tasks are sorted: each JoinSet's tasks found among them (the
 * child's place, the parent's in the child), sorted by id. 0 or -ENOMEM. */
int dump_place_children(struct ctx *c);

#endif
