/* Tokio's OwnedTasks: its layout from DWARF, one walk of every shard, and
 * the version facts used without DWARF (task_lists.h). Depends on
 * sym/dwarf_types only: no process, no libbpf, no I/O.
 *
 * Tokio 1.53.1 (runtime/task/list.rs, util/sharded_list.rs,
 * util/linked_list.rs), since 1.35 (tokio#6001):
 *   OwnedTasks<S> { list: ShardedList<Task<S>>, id: NonZeroU64, closed }
 *   ShardedList<L> { lists: Box<[Mutex<LinkedList<L>>]>, added, count, shard_mask }
 *   LinkedList<L> { head: Option<NonNull<Header>>, tail: Option<NonNull<Header>> }
 * a task lives in shard `id & shard_mask`; each shard is an intrusive list
 * through the Trailer's `owned` pointers, locked by its own Mutex (which a
 * reader from outside cannot take: a node is trusted only when its links
 * and owner id agree). The scheduler handle reaches it:
 *   multi_thread::Handle { shared: worker::Shared { owned, .. }, .. }
 *   current_thread::Handle { shared: Shared { owned, .. }, .. }
 * each behind the task's `core.scheduler: Arc<Handle>`. Up to 1.34 (checked
 * on 1.24.2) OwnedTasks { inner: Mutex<OwnedTasksInner { list: LinkedList,
 * closed }>, id }: one list, which a walk along any task's links covers. */
#include "dump/task_lists.h"

#include <dwarf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The facts, one row per version range. Ranges between the versions we can
 * build (1.24.2 and 1.53.1) are from the sources and the CHANGELOG,
 * untested. */
static const struct task_list_fact facts[] = {
	{ 0, 34, TASK_LIST_ONE, 0, 0, "tokio-runtime-w", NULL,
	  "one locked list per runtime; workers named tokio-runtime-worker (tested on 1.24.2)" },
	{ 35, 49, TASK_LIST_SHARDED, 4, 1u << 16, "tokio-runtime-w", "tokio#6001",
	  "OwnedTasks sharded since 1.35 (tokio#6001): next_power_of_two(workers) * 4 shards "
	  "(at most 1 << 16; current_thread counts one: 4), a task in shard id % shards "
	  "(untested)" },
	{ 50, 0, TASK_LIST_SHARDED, 4, 1u << 16, "tokio-rt-worker", "tokio#7880",
	  "sharded as since 1.35; workers named tokio-rt-worker since 1.50 (tokio#7880) "
	  "(tested on 1.53.1)" },
};

const char *const task_lists_counter_pieces[2] = { "5tokio7runtime4task4list",
						     "19NEXT_OWNED_TASKS_ID" };

const struct task_list_fact *task_list_facts(size_t *n)
{
	*n = sizeof(facts) / sizeof(facts[0]);
	return facts;
}

const struct task_list_fact *task_list_fact_for(unsigned minor)
{
	for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]); i++)
		if (minor >= facts[i].from_minor && (!facts[i].to_minor || minor <= facts[i].to_minor))
			return &facts[i];
	return NULL;
}

size_t task_list_shards(const struct task_list_fact *f, size_t workers)
{
	size_t p = 1;

	if (!f || f->kind != TASK_LIST_SHARDED || !workers)
		return 0;
	while (p < workers)
		p <<= 1;
	p *= f->shards_per_worker;
	return p < f->max_shards ? p : f->max_shards;
}

/* DWARF */

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;

	return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
}

static bool starts(const char *s, const char *prefix)
{
	return s && !strncmp(s, prefix, strlen(prefix));
}

/* A declaration-only structure (another unit defines it): its definition,
 * found by qualified name. */
bool task_lists_defined(struct dwarf_types *dt, Dwarf_Die *die)
{
	const char *name;
	Dwarf_Die def;
	int found = 0;

	if (!dwarf_hasattr(die, DW_AT_declaration))
		return true;
	name = dwarf_types__name(dt, die);
	if (!name || dwarf_types__find(dt, &name, 1, &def, &found) <= 0 || !found)
		return false;
	*die = def;
	return true;
}

/* The type a pointer type DIE points at (typedefs peeled), defined. */
static bool pointee(struct dwarf_types *dt, Dwarf_Die *ptr, Dwarf_Die *out)
{
	Dwarf_Attribute attr;
	Dwarf_Die raw;

	if (dwarf_tag(ptr) != DW_TAG_pointer_type ||
	    !dwarf_formref_die(dwarf_attr(ptr, DW_AT_type, &attr), &raw) ||
	    dwarf_peel_type(&raw, out))
		return false;
	return task_lists_defined(dt, out);
}

/* The first OwnedTasks<..> member below st (depth-first through structure
 * members, depth <= 4): *off its offset, *out its type. */
static bool find_owned(struct dwarf_types *dt, Dwarf_Die *st, int depth, uint64_t *off,
		       Dwarf_Die *out)
{
	Dwarf_Die child;

	if (depth > 4 || dwarf_child(st, &child))
		return false;
	do {
		Dwarf_Attribute attr;
		Dwarf_Word loc = 0;
		Dwarf_Die raw, t;
		uint64_t below;
		if (dwarf_tag(&child) != DW_TAG_member ||
		    !dwarf_formref_die(dwarf_attr(&child, DW_AT_type, &attr), &raw) ||
		    dwarf_peel_type(&raw, &t) || dwarf_tag(&t) != DW_TAG_structure_type)
			continue;
		if (dwarf_attr(&child, DW_AT_data_member_location, &attr) &&
		    dwarf_formudata(&attr, &loc))
			continue;
		if ((starts(die_name(&t), "OwnedTasks<") &&
		     starts(dwarf_types__name(dt, &t), "tokio::runtime::task::list::OwnedTasks<")) ||
		    (starts(die_name(&t), "LocalOwnedTasks<") &&
		     starts(dwarf_types__name(dt, &t), "tokio::runtime::task::list::LocalOwnedTasks<"))) {
			if (!task_lists_defined(dt, &t))
				return false;
			*off = loc;
			*out = t;
			return true;
		}
		if (!task_lists_defined(dt, &t))
			continue;
		if (find_owned(dt, &t, depth + 1, &below, out)) {
			*off = loc + below;
			return true;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* One list (tokio < 1.35): OwnedTasks { inner: Mutex<OwnedTasksInner {
 * list: LinkedList { head, tail }, closed }>, id }; a LocalSet's (both
 * versions): LocalOwnedTasks { inner: UnsafeCell<OwnedTasksInner>, id }:
 * 0 with *n's head and tail within the OwnedTasks, or -ENOENT. */
static int one_list(Dwarf_Die *owned, struct owned_layout *n)
{
	Dwarf_Die inner;
	uint64_t inner_off, head, tail;

	if (dwt_member(owned, "inner", NULL, &inner_off, &inner) ||
	    dwt_member_deep(&inner, "head", &head, NULL) ||
	    dwt_member_deep(&inner, "tail", &tail, NULL))
		return -ENOENT;
	n->one = true;
	n->head_off = inner_off + head;
	n->tail_off = inner_off + tail;
	return 0;
}

/* The OwnedTasks below the ArcInner<Handle> the Arc type `sched` points at:
 * n->owned_off and the list's layout (as owned_layout__from_arc()). */
static int from_arc(struct dwarf_types *dt, Dwarf_Die *sched, struct owned_layout *n)
{
	Dwarf_Die ptr, inner, handle, owned, list, lists, data_ptr, shard;
	uint64_t p_off, data_off, o_off, list_off, lists_off, dp_off, len_off;
	int64_t size;

	if (!starts(die_name(sched), "Arc<") || !task_lists_defined(dt, sched) ||
	    dwt_member_deep(sched, "pointer", &p_off, &ptr) || p_off != 0 ||
	    !pointee(dt, &ptr, &inner) ||
	    dwt_member(&inner, "data", NULL, &data_off, &handle) || !task_lists_defined(dt, &handle) ||
	    !find_owned(dt, &handle, 0, &o_off, &owned))
		return -ENOENT;
	n->owned_off = data_off + o_off;
	n->local = starts(die_name(&owned), "LocalOwnedTasks<");
	if (dwt_member(&owned, "id", NULL, &n->id_off, NULL))
		return -ENOENT;
	if (dwt_member(&owned, "list", NULL, &list_off, &list))
		return one_list(&owned, n);
	if (!starts(die_name(&list), "ShardedList<"))
		return 0;   /* a list, not sharded, of no layout known here (n->one false) */
	if (!task_lists_defined(dt, &list) || dwt_member(&list, "lists", NULL, &lists_off, &lists) ||
	    !task_lists_defined(dt, &lists) ||
	    dwt_member(&lists, "data_ptr", NULL, &dp_off, &data_ptr) ||
	    dwt_member(&lists, "length", NULL, &len_off, NULL) ||
	    dwt_member(&list, "shard_mask", NULL, &n->mask_off, NULL) ||
	    !pointee(dt, &data_ptr, &shard) ||
	    dwt_member_deep(&shard, "head", &n->head_off, NULL) ||
	    dwt_member_deep(&shard, "tail", &n->tail_off, NULL))
		return -ENOENT;
	size = dwt_byte_size(&shard);
	if (size <= 0 || n->head_off + 8 > (uint64_t)size || n->tail_off + 8 > (uint64_t)size)
		return -ENOENT;
	n->shard_size = (uint64_t)size;
	n->lists_ptr_off = list_off + lists_off + dp_off;
	n->lists_len_off = list_off + lists_off + len_off;
	n->mask_off += list_off;
	return 1;
}

int owned_layout__from_arc(struct dwarf_types *dt, Dwarf_Die *arc, struct owned_layout *l)
{
	struct owned_layout n = { 0 };
	int r = from_arc(dt, arc, &n);

	if (r >= 0)
		*l = n;
	return r;
}

int owned_layout__from_cell(struct dwarf_types *dt, Dwarf_Die *cell, struct owned_layout *l)
{
	struct owned_layout n = { 0 };
	Dwarf_Die core, sched;
	uint64_t core_off, s_off;
	int r;

	if (dwt_member(cell, "core", NULL, &core_off, &core) ||
	    dwt_member(&core, "scheduler", NULL, &s_off, &sched))
		return -ENOENT;
	r = from_arc(dt, &sched, &n);
	if (r == 1 || (r == 0 && n.one)) {
		n.sched_off = core_off + s_off;
		*l = n;
	}
	return r;
}

/* The walk */

struct walk {
	const struct owned_layout *l;
	mem_read_fn read;
	void *rctx;
	const struct owned_walk_ops *ops;
	void *ctx;
	struct owned_walk *w;
	size_t budget;          /* nodes left for this list */
	const char *why;        /* of the last failed try */
};

static int rd64(struct walk *k, uint64_t addr, uint64_t *v)
{
	return k->read(k->rctx, addr, v, sizeof(*v));
}

/* One try at the shard at base: 1 walked, 0 changed under the walk (retry),
 * -E2BIG too many nodes, -ENOMEM. */
static int walk_shard(struct walk *k, uint64_t base)
{
	uint64_t head, tail, prev = 0, node;

	if (rd64(k, base + k->l->head_off, &head) || rd64(k, base + k->l->tail_off, &tail)) {
		k->why = "a shard of the task list is unreadable";
		return 0;
	}
	for (node = head; node;) {
		struct owned_node n;
		int err;
		if (!k->budget) {
			k->why = "more tasks than a walk follows";
			return -E2BIG;
		}
		k->budget--;
		if (k->ops->node(k->ctx, node, &n) < 0) {
			k->why = "a task of the list was freed while it was walked";
			return 0;
		}
		if (n.owner != k->w->id) {
			k->why = "a node of the list is owned by another list";
			return 0;
		}
		if (n.prev != prev) {
			k->why = "the task list changed while it was walked";
			return 0;
		}
		if ((err = k->ops->found(k->ctx, node)))
			return err;
		k->w->tasks++;
		prev = node;
		node = n.next;
	}
	if (prev != tail) {
		k->why = "the task list changed while it was walked";
		return 0;
	}
	return 1;
}

int owned_tasks__walk(const struct owned_layout *l, uint64_t owned, mem_read_fn read, void *rctx,
		      const struct owned_walk_ops *ops, void *ctx, struct owned_walk *w)
{
	struct walk k = { .l = l, .read = read, .rctx = rctx, .ops = ops, .ctx = ctx, .w = w,
			  .budget = OWNED_MAX_NODES };
	uint64_t id, base, len, mask;
	int r = 0;

	memset(w, 0, sizeof(*w));
	if (l->one) {
		/* one list: a shard at the OwnedTasks itself */
		if (rd64(&k, owned + l->id_off, &id) || !id) {
			w->cut = "the task list is unreadable";
			return 0;
		}
		w->id = id;
		w->shards = 1;
		for (int t = 0; t < OWNED_TRIES && r == 0; t++)
			r = walk_shard(&k, owned);
		if (r == -ENOMEM)
			return r;
		if (r == 1)
			w->walked = 1;
		else
			w->cut = k.why;
		return 0;
	}
	if (rd64(&k, owned + l->id_off, &id) || rd64(&k, owned + l->lists_ptr_off, &base) ||
	    rd64(&k, owned + l->lists_len_off, &len) || rd64(&k, owned + l->mask_off, &mask)) {
		w->cut = "the task list is unreadable";
		return 0;
	}
	if (!id || !base || !len || len > OWNED_MAX_SHARDS || (len & (len - 1)) || mask != len - 1) {
		w->cut = "the task list does not look like one (its shard count or mask)";
		return 0;
	}
	w->id = id;
	w->shards = (size_t)len;
	for (uint64_t i = 0; i < len; i++) {
		r = 0;
		for (int t = 0; t < OWNED_TRIES && r == 0; t++)
			r = walk_shard(&k, base + i * l->shard_size);
		if (r == -ENOMEM)
			return r;
		if (r == 1) {
			w->walked++;
			continue;
		}
		if (!w->cut)
			w->cut = k.why;
		if (r == -E2BIG)
			break;
	}
	return 0;
}
