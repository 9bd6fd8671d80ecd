/* What a parked task holds, read from its chain (dump_int.h): the deadline
 * of the timer it waits on, and the tasks of each tokio JoinSet its frames
 * hold (its children, listed under it; each child then names its parent).
 * Types and offsets from DWARF, by the names of tokio's types. */
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dump/dump_int.h"

/* Futures that wait for a deadline, and the member (anywhere below them)
 * holding it as a std Instant (CLOCK_MONOTONIC on Linux): Sleep keeps it
 * in its Inner on 1.24 and on itself in later releases; the search finds
 * either. */
static const struct {
	const char *type_prefix;
	const char *member;
} timers[] = {
	{ "tokio::time::sleep::Sleep", "deadline" },
	{ "tokio::time::timeout::Timeout<", "deadline" },
	{ "tokio::time::interval::Interval", "deadline" },
};

void dump_read_deadline(struct ctx *c, struct dump_task *t)
{
	const struct async_stack *s = &t->stack;
	Dwarf_Die die = s->leaf_die, inst;
	uint64_t off, so, no;
	int64_t sec = 0;
	uint32_t nsec = 0;

	if (!s->leaf_type || !s->leaf_addr)
		return;
	for (size_t i = 0; i < sizeof(timers) / sizeof(timers[0]); i++) {
		if (strncmp(s->leaf_type, timers[i].type_prefix, strlen(timers[i].type_prefix)))
			continue;
		if (dwt_member_deep(&die, timers[i].member, &off, &inst) ||
		    dwt_member_deep(&inst, "tv_sec", &so, NULL) ||
		    dwt_member_deep(&inst, "tv_nsec", &no, NULL))
			return;
		if (procmem_read(&c->pm, s->leaf_addr + off + so, &sec, sizeof(sec)) ||
		    procmem_read(&c->pm, s->leaf_addr + off + no, &nsec, sizeof(nsec)) ||
		    sec <= 0 || nsec >= 1000000000u)
			return;
		t->wakes_at_ns = (uint64_t)sec * 1000000000ull + nsec;
		return;
	}
}


/* JoinSets */

#define JOIN_SET_PREFIX "tokio::task::join_set::JoinSet<"
#define MAX_JOIN_SETS   8      /* per task */
#define MAX_CHILDREN    4096   /* per JoinSet */

static bool is_join_set(struct ctx *c, Dwarf_Die *type)
{
	const char *n = dwarf_types__name(c->dt, type);

	return n && !strncmp(n, JOIN_SET_PREFIX, strlen(JOIN_SET_PREFIX));
}

/* The type a pointer-like type points at: a pointer, a one-member wrapper
 * of one (NonNull { pointer }), or an Option of those (its Some's __0). */
static bool pointee(Dwarf_Die *type, Dwarf_Die *out, int depth)
{
	Dwarf_Die t, vp, var, m, mt;
	Dwarf_Attribute a;
	uint64_t off;

	if (depth > 4 || dwarf_peel_type(type, &t))
		return false;
	if (dwarf_tag(&t) == DW_TAG_pointer_type)
		return dwarf_formref_die(dwarf_attr(&t, DW_AT_type, &a), out) != NULL;
	if (dwarf_tag(&t) != DW_TAG_structure_type)
		return false;
	if (!dwt_only_member(&t, &off, &mt))
		return pointee(&mt, out, depth + 1);
	/* Option<P>: the variant named Some, whose type holds P as __0 */
	if (dwarf_child(&t, &vp))
		return false;
	do {
		if (dwarf_tag(&vp) != DW_TAG_variant_part || dwarf_child(&vp, &var))
			continue;
		do {
			const char *n;
			if (dwarf_tag(&var) != DW_TAG_variant || dwarf_child(&var, &m))
				continue;
			n = dwarf_formstring(dwarf_attr(&m, DW_AT_name, &a));
			if (n && !strcmp(n, "Some") && dwarf_formref_die(dwarf_attr(&m, DW_AT_type, &a), &mt) &&
			    !dwt_member(&mt, "__0", NULL, &off, &mt))
				return pointee(&mt, out, depth + 1);
		} while (dwarf_siblingof(&var, &var) == 0);
	} while (dwarf_siblingof(&vp, &vp) == 0);
	return false;
}

/* The pointer in the smart pointer member `name` below st at addr
 * (Rc / Arc { ptr: NonNull<..Box<T>> }): its value and what it points at. */
static int smart_ptr(struct ctx *c, Dwarf_Die *st, uint64_t addr, const char *name,
		     uint64_t *ptr, Dwarf_Die *to)
{
	Dwarf_Die t, nn;
	uint64_t off, poff;

	if (dwt_member_deep(st, name, &off, &t) || dwt_member_deep(&t, "ptr", &poff, &nn) ||
	    !pointee(&nn, to, 0) || dump_rd64(c, addr + off + poff, ptr) || !*ptr)
		return -ENOENT;
	return 0;
}

/* The tasks of the JoinSet of type js at addr: its IdleNotifiedSet's two
 * lists (notified: done, not yet joined; idle: the others), each entry's
 * JoinHandle the task's header. */
static int read_join_set(struct ctx *c, Dwarf_Die *js, uint64_t addr, struct dump_join_set *out)
{
	static const char *const lists[] = { "notified", "idle" };
	Dwarf_Die inner, entry = { 0 }, vt;
	uint64_t arc, next_off, value_off, ptr_off;
	bool have_entry = false;

	out->addr = addr;
	/* IdleNotifiedSet { lists: Arc<Mutex<ListsInner>> }: the Arc's ArcInner */
	if (smart_ptr(c, js, addr, "lists", &arc, &inner))
		return -ENOENT;
	for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]); l++) {
		Dwarf_Die ll, head_t;
		uint64_t ll_off, head_off, e = 0;
		if (dwt_member_deep(&inner, lists[l], &ll_off, &ll) ||
		    dwt_member_deep(&ll, "head", &head_off, &head_t) ||
		    dump_rd64(c, arc + ll_off + head_off, &e))
			return -ENOENT;
		if (!have_entry) {
			/* ListEntry { pointers: { .. next }, value: JoinHandle { raw: { ptr } } } */
			if (!pointee(&head_t, &entry, 0) ||
			    dwt_member_deep(&entry, "next", &next_off, NULL) ||
			    dwt_member(&entry, "value", NULL, &value_off, &vt) ||
			    dwt_member_deep(&vt, "ptr", &ptr_off, NULL))
				return -ENOENT;
			have_entry = true;
		}
		for (size_t steps = 0; e; steps++) {
			struct dump_child *ch;
			uint64_t h;
			if (steps == MAX_CHILDREN || out->n == MAX_CHILDREN) {
				out->cut = true;
				break;
			}
			if (dump_rd64(c, e + value_off + ptr_off, &h) || !h) {
				out->cut = true;
				break;
			}
			ch = realloc(out->tasks, (out->n + 1) * sizeof(*ch));
			if (!ch)
				return -ENOMEM;
			out->tasks = ch;
			ch[out->n++] = (struct dump_child){ .header = h, .id = dump_task_id(c, h),
							    .done = l == 0 };
			if (dump_rd64(c, e + next_off, &e)) {
				out->cut = true;
				break;
			}
		}
	}
	return 0;
}

/* A search of a frame's variant for values of one type (by name), held by
 * value in a member (or a member's member) or by reference. */
struct held_search {
	struct ctx *c;
	bool (*is)(struct ctx *c, Dwarf_Die *type);
	const char *through;   /* an __awaitee of a type named so is searched too, or NULL */
	int (*found)(struct held_search *hs, Dwarf_Die *type, uint64_t at);
	void *arg;
	size_t frame;
};

static int find_in(struct held_search *hs, Dwarf_Die *st, uint64_t addr, int depth)
{
	struct ctx *c = hs->c;
	Dwarf_Die m;

	if (dwarf_child(st, &m))
		return 0;
	do {
		Dwarf_Die mt, to;
		Dwarf_Attribute a;
		Dwarf_Word off;
		uint64_t at = 0;
		const char *n;
		int err;
		if (dwarf_tag(&m) != DW_TAG_member || !dwarf_formref_die(dwarf_attr(&m, DW_AT_type, &a), &mt) ||
		    dwarf_formudata(dwarf_attr(&m, DW_AT_data_member_location, &a), &off) ||
		    dwarf_peel_type(&mt, &mt))
			continue;
		n = dwarf_formstring(dwarf_attr(&m, DW_AT_name, &a));
		if (n && !strcmp(n, "__awaitee")) {
			/* the next frame's own, unless a wrapper that holds one */
			const char *tn = hs->through ? dwarf_types__name(c->dt, &mt) : NULL;
			if (depth < 1 && tn && !strncmp(tn, hs->through, strlen(hs->through)) &&
			    (err = find_in(hs, &mt, addr + off, depth + 1)))
				return err;
			continue;
		}
		if (hs->is(c, &mt)) {
			at = addr + off;
			to = mt;
		} else if (dwarf_tag(&mt) == DW_TAG_pointer_type && pointee(&mt, &to, 0) &&
			   !dwarf_peel_type(&to, &to) && hs->is(c, &to)) {
			if (dump_rd64(c, addr + off, &at) || !at)
				continue;
		} else {
			if (depth < 1 && dwarf_tag(&mt) == DW_TAG_structure_type &&
			    (err = find_in(hs, &mt, addr + off, depth + 1)))
				return err;
			continue;
		}
		if ((err = hs->found(hs, &to, at)))
			return err;
	} while (dwarf_siblingof(&m, &m) == 0);
	return 0;
}

/* A JoinSet found in frame hs->frame of the task hs->arg: listed once. */
static int join_set_found(struct held_search *hs, Dwarf_Die *type, uint64_t at)
{
	struct dump_task *t = hs->arg;
	bool known = false;
	int err;

	for (size_t i = 0; i < t->n_join_sets; i++)
		known |= t->join_sets[i].addr == at;
	if (known || t->n_join_sets == MAX_JOIN_SETS)
		return 0;
	struct dump_join_set *js = realloc(t->join_sets, (t->n_join_sets + 1) * sizeof(*js));
	if (!js)
		return -ENOMEM;
	t->join_sets = js;
	js = &js[t->n_join_sets];
	memset(js, 0, sizeof(*js));
	js->frame = hs->frame;
	err = read_join_set(hs->c, type, at, js);
	if (err == -ENOMEM) {
		free(js->tasks);
		return err;
	}
	if (err)
		free(js->tasks);   /* not laid out as expected: not listed */
	else
		t->n_join_sets++;
	return 0;
}

int dump_read_join_sets(struct ctx *c, struct dump_task *t)
{
	struct held_search hs = { .c = c, .is = is_join_set, .found = join_set_found, .arg = t };

	for (size_t k = 0; k < t->stack.n; k++) {
		struct async_frame *f = &t->stack.frames[k];
		hs.frame = k;
		int err = find_in(&hs, &f->variant, f->variant_addr, 0);
		if (err)
			return err;
	}
	return 0;
}

/* LocalSets */

#define LOCAL_SET_NAME "tokio::task::local::LocalSet"
#define RUN_UNTIL_PREFIX "tokio::task::local::RunUntil<"

static bool is_local_set(struct ctx *c, Dwarf_Die *type)
{
	const char *n = dwarf_types__name(c->dt, type);

	return n && !strcmp(n, LOCAL_SET_NAME);
}

/* A LocalSet found in a block_on's chain: its LocalOwnedTasks (LocalSet {
 * context: Rc<Context { shared: Arc<Shared> }> }, the Arc a task of it
 * holds as its scheduler) noted once for walking, owned by thread
 * hs->arg's future. */
static int local_set_found(struct held_search *hs, Dwarf_Die *type, uint64_t at)
{
	struct ctx *c = hs->c;
	const struct dump_block_on *b = hs->arg;
	Dwarf_Die rcbox, inner;
	uint64_t rc, arc;
	size_t layout, n = c->n_lists;

	for (layout = 0; layout < c->n_layouts && !c->layouts[layout].local; layout++)
		;
	if (layout == c->n_layouts || smart_ptr(c, type, at, "context", &rc, &rcbox) ||
	    smart_ptr(c, &rcbox, rc, "shared", &arc, &inner))
		return 0;
	dump_note_list(c, arc + c->layouts[layout].owned_off, layout, DUMP_VIA_OWNER);
	if (c->n_lists > n) {
		c->lists[n].runtime = "local_set";
		c->lists[n].tid = b->tid;
		c->lists[n].comm = b->comm;
	}
	return 0;
}

int dump_local_sets_owned(struct ctx *c)
{
	struct dump_result *r = c->res;
	struct held_search hs = { .c = c, .is = is_local_set, .through = RUN_UNTIL_PREFIX,
				  .found = local_set_found };

	for (size_t i = 0; i < r->n_block_ons; i++) {
		const struct async_stack *s = &r->block_ons[i].stack;
		int err = 0;
		hs.arg = &r->block_ons[i];
		/* the future itself a RunUntil or a LocalSet (a chain of no frame) */
		if (s->leaf_type && s->leaf_addr && !s->n) {
			Dwarf_Die leaf = s->leaf_die;
			if (is_local_set(c, &leaf))
				err = local_set_found(&hs, &leaf, s->leaf_addr);
			else if (!strncmp(s->leaf_type, RUN_UNTIL_PREFIX, strlen(RUN_UNTIL_PREFIX)))
				err = find_in(&hs, &leaf, s->leaf_addr, 1);
		}
		for (size_t k = 0; k < s->n && !err; k++)
			err = find_in(&hs, &s->frames[k].variant, s->frames[k].variant_addr, 0);
		if (err)
			return err;
	}
	return 0;
}

/* The JoinSets' tasks among the dump's */

static int cmp_child(const void *a, const void *b)
{
	const struct dump_child *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->header < y->header ? -1 : x->header > y->header;
}

/* Each JoinSet's tasks found among the tasks (sorted): the child's place,
 * and the parent's in the child. 0 or -ENOMEM. */
int dump_place_children(struct ctx *c)
{
	struct dump_result *r = c->res;
	struct u64map at = { 0 };
	int err = 0;

	for (size_t i = 0; i < r->n && !err; i++)
		err = u64map__set(&at, r->tasks[i].header, i + 1);
	for (size_t i = 0; i < r->n && !err; i++)
		for (size_t j = 0; j < r->tasks[i].n_join_sets; j++) {
			struct dump_join_set *js = &r->tasks[i].join_sets[j];
			for (size_t k = 0; k < js->n; k++) {
				uint64_t idx;
				if (!u64map__get(&at, js->tasks[k].header, &idx))
					continue;
				js->tasks[k].task = idx;
				r->tasks[idx - 1].parent = i + 1;
			}
			qsort(js->tasks, js->n, sizeof(*js->tasks), cmp_child);
		}
	u64map__clear(&at);
	return err;
}
