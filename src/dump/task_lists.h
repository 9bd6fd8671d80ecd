/* Tokio's lists of the tasks a scheduler owns (its OwnedTasks), read from
 * another process's memory without stopping it:
 * - where a scheduler's OwnedTasks is, from DWARF: from a task's
 *   Cell<T, S> to its scheduler S (an Arc<Handle>), to the OwnedTasks
 *   inside the Handle, to the layout of its ShardedList (tokio >= 1.35);
 * - one walk of every shard of a sharded list, each node checked (a live
 *   task of this list, links that agree) before it is trusted;
 * - the facts used when the binary's DWARF does not describe the list, in
 *   one table with the Tokio versions they hold for and the pull request
 *   that sets them.
 * Reads go through a mem_read_fn; nodes are checked through the caller's
 * callbacks (this file knows nothing of processes, task headers or of the
 * dump's results). Never prints. */
#ifndef AS_DUMP_TASK_LISTS_H
#define AS_DUMP_TASK_LISTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sym/dwarf_types.h"

/* Where one scheduler's sharded OwnedTasks is, from a task of it: every
 * offset from DWARF. */
struct owned_layout {
	bool one;                /* one list (tokio < 1.35): no shards; head_off and
	                            tail_off within the OwnedTasks, no lists_* or mask */
	bool local;              /* a LocalSet's LocalOwnedTasks (one list, both versions:
	                            task::local::Shared { local_state: { owned } }) */
	uint64_t sched_off;      /* the scheduler S (Arc<Handle>: a pointer) in the Cell */
	uint64_t owned_off;      /* OwnedTasks from the start of the ArcInner<Handle> */
	uint64_t id_off;         /* OwnedTasks.id (NonZeroU64), within the OwnedTasks */
	uint64_t lists_ptr_off;  /* ShardedList.lists: Box<[Mutex<LinkedList>]>'s data_ptr */
	uint64_t lists_len_off;  /* ... its length */
	uint64_t mask_off;       /* ShardedList.shard_mask */
	uint64_t shard_size;     /* one Mutex<LinkedList<..>>: the stride of the shards */
	uint64_t head_off;       /* LinkedList.head within one shard */
	uint64_t tail_off;       /* LinkedList.tail within one shard */
};

/* A declaration-only structure DIE (another unit defines it) replaced by
 * its definition, found by qualified name: true, or false when none. */
bool task_lists_defined(struct dwarf_types *dt, Dwarf_Die *die);

/* What the Arc<Handle> type DIE `arc` (a scheduler handle: a task's
 * core.scheduler, or CONTEXT's scheduler::Handle variant) says of the
 * scheduler's OwnedTasks: 1 sharded, 0 one list (l->one), *l filled with
 * owned_off from the ArcInner (sched_off 0); -ENOENT none DWARF describes. */
int owned_layout__from_arc(struct dwarf_types *dt, Dwarf_Die *arc, struct owned_layout *l);

/* What the Cell<T, S> DIE `cell` says of its scheduler's task list:
 * 1 a sharded OwnedTasks, *l filled; 0 one list (tokio < 1.35: OwnedTasks
 * { inner: Mutex<OwnedTasksInner> }), *l filled when DWARF says where its
 * head is (l->one), else untouched; -ENOENT the scheduler
 * owns no OwnedTasks DWARF describes (blocking pool, LocalSet, or types
 * missing). */
int owned_layout__from_cell(struct dwarf_types *dt, Dwarf_Die *cell, struct owned_layout *l);

/* One node of a list as the caller read it: its links and its header's
 * owner id. */
struct owned_node {
	uint64_t prev, next, owner;
};

struct owned_walk_ops {
	/* The node at header: 0, or < 0 when it is no live task (freed, torn). */
	int (*node)(void *ctx, uint64_t header, struct owned_node *n);
	/* A task of the list, checked: 0, or -ENOMEM. */
	int (*found)(void *ctx, uint64_t header);
};

struct owned_walk {
	uint64_t id;             /* the OwnedTasks' id (the owner id of its tasks) */
	size_t shards;           /* shards it has (0: the list itself unreadable) */
	size_t walked;           /* of which walked from head to tail */
	size_t tasks;            /* nodes found (a task of a shard retried counts once per try) */
	const char *cut;         /* why a shard or the list was not walked, or NULL */
};

/* Bounds of a walk (a list that changes under a walk is retried). */
#define OWNED_MAX_SHARDS  (1u << 16)   /* tokio's MAX_SHARDED_LIST_SIZE (task/list.rs) */
#define OWNED_MAX_NODES   100000       /* per list, all shards */
#define OWNED_TRIES       3            /* walks of a shard that changed under the last one */

/* Walks every shard of the OwnedTasks at `owned` (its address in the
 * target; l->one: its one list, as one shard): each node must be a live task (ops->node), owned by this list
 * (owner == the list's id) and linked back to its predecessor, and the last
 * one must be the shard's tail. Fills *w. Returns 0 (a partial walk is
 * said in *w, not an error), or -ENOMEM from ops->found. */
int owned_tasks__walk(const struct owned_layout *l, uint64_t owned, mem_read_fn read, void *rctx,
		      const struct owned_walk_ops *ops, void *ctx, struct owned_walk *w);

/* Version facts: what the dump assumes of a Tokio version's task list
 * when DWARF does not say. */
enum task_list_kind {
	TASK_LIST_ONE = 1,       /* one locked list per OwnedTasks */
	TASK_LIST_SHARDED,       /* a ShardedList: next_power_of_two(workers) * k shards */
};

/* One row per version range; each row holds every fact for its range, and
 * cites the pull request that sets its lower bound. */
struct task_list_fact {
	unsigned from_minor, to_minor;   /* tokio 1.from .. 1.to (to 0: no upper bound known) */
	enum task_list_kind kind;
	unsigned shards_per_worker;      /* TASK_LIST_SHARDED: k */
	unsigned max_shards;             /* TASK_LIST_SHARDED: the cap */
	const char *worker_comm;         /* a worker thread's default name as /proc shows it
	                                    (15 characters) */
	const char *pr;                  /* the pull request that sets the lower bound */
	const char *what;                /* the facts, said */
};

/* The facts for tokio 1.minor, or NULL (outside every range). */
const struct task_list_fact *task_list_fact_for(unsigned minor);

/* The rows of the table, in version order (*n of them). */
const struct task_list_fact *task_list_facts(size_t *n);

/* tokio::runtime::task::list::NEXT_OWNED_TASKS_ID, the static counter that
 * gives every OwnedTasks and LocalOwnedTasks its id (1, 2, ... in order of
 * creation; list.rs, unchanged from 1.24.2 to 1.53.1): its value less one
 * is how many task lists the program created. Found in the symbol table by
 * these pieces of its mangled name (legacy and v0 manglings both spell
 * each path segment as <length><name>). */
extern const char *const task_lists_counter_pieces[2];

/* The shards of a multi-thread runtime's OwnedTasks with `workers` worker
 * threads under fact f (TASK_LIST_SHARDED), or 0 when f is no sharded list
 * or workers is 0. */
size_t task_list_shards(const struct task_list_fact *f, size_t workers);

#endif
