/* What a parked task holds, read from its chain (dump_int.h): the deadline
 * of the timer it waits on, and the tasks of each tokio JoinSet its frames
 * hold (its children, listed under it; each child then names its parent).
 * Types and offsets from DWARF, by the names of tokio's types. */
#include <dwarf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dump/dump_int.h"

/* Futures that wait for a deadline, and the member (anywhere below them)
 * holding it as a std Instant (CLOCK_MONOTONIC on Linux), or an
 * Option<Instant> (opt): tokio's Sleep keeps it in its Inner on 1.24 and
 * on itself in later releases (the search finds either), Timeout and
 * Interval in their Sleep; async-io 1.x's Timer (smol::Timer, and inside
 * async-std's sleep and timeouts) keeps `when`, None for a timer that
 * never fires. By the versions checked (tokio 1.24.2, 1.53.1; async-io
 * 1.11, async-std 1.12). */
enum timer_kind { T_INSTANT, T_OPTION, T_BOXED };   /* T_BOXED: a Pin<Box<timer>> */

static const struct {
	const char *type_prefix;
	const char *member;
	enum timer_kind kind;
} timers[] = {
	{ "tokio::time::sleep::Sleep", "deadline", T_INSTANT },
	{ "tokio::time::timeout::Timeout<", "deadline", T_INSTANT },
	{ "tokio::time::interval::Interval", "delay", T_BOXED },   /* Pin<Box<Sleep>> */
	{ "async_io::Timer", "when", T_OPTION },
	{ "async_std::future::timeout::TimeoutFuture<", "when", T_OPTION },
	{ "async_std::io::timeout::Timeout<", "when", T_OPTION },
};

#define POLL_FN_INFIX "::poll_fn::PollFn<"

/* The deadline of the timer of type die at addr (its name first checked
 * against the table), CLOCK_MONOTONIC ns; 0 none. */
static uint64_t timer_deadline(struct ctx *c, Dwarf_Die *die, uint64_t addr, int depth)
{
	const char *name = depth < 2 ? dwarf_types__name(c->dt, die) : NULL;
	Dwarf_Die inst, opt = *die;
	uint64_t off, so, no;
	int64_t sec = 0;
	uint32_t nsec = 0;

	for (size_t i = 0; name && addr && i < sizeof(timers) / sizeof(timers[0]); i++) {
		if (strncmp(name, timers[i].type_prefix, strlen(timers[i].type_prefix)))
			continue;
		if (dwt_member_deep(&opt, timers[i].member, &off, &inst))
			return 0;
		if (timers[i].kind == T_BOXED) {
			/* Pin<Box<T>>: { pointer: *T } */
			Dwarf_Die pt, to;
			Dwarf_Attribute a;
			uint64_t po = 0, p = 0;
			if (dwarf_peel_type(&inst, &pt))
				return 0;
			if (dwarf_tag(&pt) == DW_TAG_structure_type && dwt_only_member(&pt, &po, &pt))
				return 0;
			if (dwarf_peel_type(&pt, &pt) || dwarf_tag(&pt) != DW_TAG_pointer_type ||
			    !dwarf_formref_die(dwarf_attr(&pt, DW_AT_type, &a), &to) ||
			    dwarf_peel_type(&to, &to) || dump_rd64(c, addr + off + po, &p) || !p)
				return 0;
			return timer_deadline(c, &to, p, depth + 1);
		}
		if (timers[i].kind == T_OPTION) {
			struct dwt_variant v;
			Dwarf_Attribute a;
			uint64_t io;
			const char *vn;
			if (dwt_read_variant(&inst, addr + off, procmem_read, &c->pm, &v) ||
			    !(vn = dwarf_formstring(dwarf_attr(&v.member, DW_AT_name, &a))) ||
			    strcmp(vn, "Some") || dwt_member(&v.type, "__0", NULL, &io, &inst))
				return 0;
			off += v.offset + io;
		}
		if (dwt_member_deep(&inst, "tv_sec", &so, NULL) ||
		    dwt_member_deep(&inst, "tv_nsec", &no, NULL) ||
		    procmem_read(&c->pm, addr + off + so, &sec, sizeof(sec)) ||
		    procmem_read(&c->pm, addr + off + no, &nsec, sizeof(nsec)) || sec <= 0 ||
		    nsec >= 1000000000u)
			return 0;
		return (uint64_t)sec * 1000000000ull + nsec;
	}
	return 0;
}

static void earliest(uint64_t *min, uint64_t at)
{
	if (at && (!*min || at < *min))
		*min = at;
}

/* A poll_fn's closure over a timer (Interval::tick's, over &mut self):
 * the deadline of each timer its captures point at. */
static void poll_fn_timers(struct ctx *c, Dwarf_Die *leaf, uint64_t addr, uint64_t *min)
{
	Dwarf_Die clo, m;
	uint64_t off;

	if (dwt_member(leaf, "f", NULL, &off, &clo) || dwarf_child(&clo, &m))
		return;
	do {
		Dwarf_Die mt, to;
		Dwarf_Attribute a;
		Dwarf_Word moff = 0;
		uint64_t p = 0;
		if (dwarf_tag(&m) != DW_TAG_member ||
		    !dwarf_formref_die(dwarf_attr(&m, DW_AT_type, &a), &mt) ||
		    (dwarf_attr(&m, DW_AT_data_member_location, &a) && dwarf_formudata(&a, &moff)))
			continue;
		/* a capture by reference of a reference (&mut self): two hops */
		p = addr + off + moff;
		for (int hop = 0; hop < 2; hop++) {
			if (dwarf_peel_type(&mt, &mt) || dwarf_tag(&mt) != DW_TAG_pointer_type ||
			    !dwarf_formref_die(dwarf_attr(&mt, DW_AT_type, &a), &to) ||
			    dwarf_peel_type(&to, &to) || dump_rd64(c, p, &p) || !p)
				break;
			if (dwarf_tag(&to) == DW_TAG_structure_type) {
				earliest(min, timer_deadline(c, &to, p, 0));
				break;
			}
			mt = to;
		}
	} while (dwarf_siblingof(&m, &m) == 0);
}

/* The earliest deadline of the timers s waits on: its leaf, the
 * combinators it went through (a Timeout), a poll_fn over a timer, and
 * every pending branch's, recursively. */
static void stack_deadline(struct ctx *c, const struct async_stack *s, uint64_t *min, int depth)
{
	if (depth > 16)
		return;
	if (s->leaf_type && s->leaf_addr) {
		Dwarf_Die leaf = s->leaf_die;
		earliest(min, timer_deadline(c, &leaf, s->leaf_addr, 0));
		if (strstr(s->leaf_type, POLL_FN_INFIX))
			poll_fn_timers(c, &leaf, s->leaf_addr, min);
	}
	for (size_t i = 0; i < s->n_passed; i++) {
		Dwarf_Die d = s->passed[i].type;
		earliest(min, timer_deadline(c, &d, s->passed[i].addr, 0));
	}
	for (size_t b = 0; b < s->n_branches; b++)
		if (!strcmp(s->branches[b].state, "pending"))
			stack_deadline(c, &s->branches[b].stack, min, depth + 1);
}

void dump_read_deadline(struct ctx *c, struct dump_task *t)
{
	uint64_t min = 0;

	stack_deadline(c, &t->stack, &min, 0);
	t->wakes_at_ns = min;
}


/* JoinSets */

#define JOIN_SET_PREFIX "tokio::task::join_set::JoinSet<"
#define MAX_JOIN_SETS   8      /* per task */
#define MAX_CHILDREN    4096   /* per JoinSet */

/* by its own name first: a qualified name is dear to build (a walk of
 * its unit), and find_in asks of every member */
static bool own_name_is(Dwarf_Die *type, const char *name)
{
	Dwarf_Attribute a;
	const char *own = dwarf_formstring(dwarf_attr(type, DW_AT_name, &a));
	size_t len = strlen(name);

	return own && !strncmp(own, name, len) && (!own[len] || own[len] == '<');
}

static bool is_join_set(struct ctx *c, Dwarf_Die *type)
{
	const char *n = own_name_is(type, "JoinSet") ? dwarf_types__name(c->dt, type) : NULL;

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
	const char *through_own;  /* its own DW_AT_name (without generics) */
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
			const char *tn = hs->through && own_name_is(&mt, hs->through_own)
					 ? dwarf_types__name(c->dt, &mt) : NULL;
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
	const char *n = own_name_is(type, "LocalSet") ? dwarf_types__name(c->dt, type) : NULL;

	return n && !strcmp(n, LOCAL_SET_NAME);
}

/* A LocalSet found in a block_on's chain: its LocalOwnedTasks (LocalSet {
 * context: Rc<Context { shared: Arc<Shared> }> }, the Arc a task of it
 * holds as its scheduler) noted once for walking, owned by thread
 * hs->arg's future. */
/* Who owns the LocalSets searched for: a thread's block_on future, or a
 * task's future. */
struct ls_owner {
	pid_t tid;
	const char *comm;
	uint64_t task;        /* the task's header, 0 a block_on */
};

static int local_set_found(struct held_search *hs, Dwarf_Die *type, uint64_t at)
{
	struct ctx *c = hs->c;
	const struct ls_owner *o = hs->arg;
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
		c->lists[n].tid = o->tid;
		c->lists[n].comm = o->comm;
		c->lists[n].task = o->task;
	}
	return 0;
}

/* The LocalSets of one chain (its frames, or the chain a RunUntil or a
 * LocalSet itself: no frame), owned by o. */
static int local_sets_in(struct held_search *hs, const struct async_stack *s)
{
	struct ctx *c = hs->c;
	int err = 0;

	if (s->leaf_type && s->leaf_addr && !s->n) {
		Dwarf_Die leaf = s->leaf_die;
		if (is_local_set(c, &leaf))
			err = local_set_found(hs, &leaf, s->leaf_addr);
		else if (!strncmp(s->leaf_type, RUN_UNTIL_PREFIX, strlen(RUN_UNTIL_PREFIX)))
			err = find_in(hs, &leaf, s->leaf_addr, 1);
	}
	for (size_t k = 0; k < s->n && !err; k++)
		err = find_in(hs, &s->frames[k].variant, s->frames[k].variant_addr, 0);
	return err;
}

int dump_local_sets_in_tasks(struct ctx *c, size_t from, size_t to)
{
	struct held_search hs = { .c = c, .is = is_local_set, .through = RUN_UNTIL_PREFIX,
				  .through_own = "RunUntil", .found = local_set_found };
	int err = 0;

	for (size_t i = from; i < to && i < c->res->n && !err; i++) {
		struct ls_owner o = { .task = c->res->tasks[i].header };
		hs.arg = &o;
		err = local_sets_in(&hs, &c->res->tasks[i].stack);
	}
	return err;
}

int dump_local_sets_owned(struct ctx *c)
{
	struct dump_result *r = c->res;
	struct held_search hs = { .c = c, .is = is_local_set, .through = RUN_UNTIL_PREFIX,
				  .through_own = "RunUntil", .found = local_set_found };

	for (size_t i = 0; i < r->n_block_ons; i++) {
		struct ls_owner o = { .tid = r->block_ons[i].tid, .comm = r->block_ons[i].comm };
		int err;
		hs.arg = &o;
		/* the future itself a RunUntil or a LocalSet (a chain of no frame) */
		if ((err = local_sets_in(&hs, &r->block_ons[i].stack)))
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
