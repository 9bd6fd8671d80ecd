/* Async stack dump engine: the order of task discovery (the ways in are in
 * discover.c and polled.c), Tokio's owned-task lists walked, per-task
 * memory reads with consistency checks, DWARF walks (what a task holds:
 * held.c; what the results say of themselves: result.c).
 *
 * Tokio 1.24 facts used here, each checked against DWARF when the binary
 * describes it, constants only as a fallback (RUNTIME-NOTES.md):
 * - Header (repr(C)): state word @0, vtable pointer @0x10.
 *   State bits (runtime/task/state.rs): RUNNING 0b1, COMPLETE 0b10, NOTIFIED 0b100.
 * - Vtable: poll @0 (the raw::poll<T, S> copy of the task's future type),
 *   trailer_offset @0x38, id_offset @0x48.
 * - Trailer starts with `owned: linked_list::Pointers<Header>` {prev, next}:
 *   the intrusive list of the OwnedTasks of the task's scheduler (one list
 *   per runtime in 1.24, walked along the links from any of its tasks).
 *   Blocking-pool tasks are not in it (owner_id 0, null links).
 * - Since 1.35 (tokio#6001) the OwnedTasks is sharded, and a walk from one
 *   task only finds its shard: each shard is walked from its head instead,
 *   the OwnedTasks reached from the task's scheduler handle, its layout from
 *   DWARF (dump/task_lists.h). Header owner_id @0x18 (both versions) tells
 *   a task of that list from others.
 * - The task is a Cell<T, S> at the header: core.stage is Stage<T>
 *   (Running(T) / Finished / Consumed). */
#include "dump/dump.h"

#include <dirent.h>
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/task_model.h"
#include "dump/async_exec.h"
#include "dump/block_on.h"
#include "dump/dump_int.h"
#include "probe/threads.h"
#include "dump/procmem.h"
#include "dump/task_lists.h"
#include "pipeline/pipeline.h"
#include "probe/plan.h"
#include "probe/profile.h"
#include "record/recorder.h"
#include "sym/crate_version.h"
#include "sym/demangle.h"
#include "sym/dwarf_names.h"
#include "sym/dwarf_types.h"
#include "sym/elf_image.h"
#include "util/u64map.h"

#define TOKIO_RUNNING  UINT64_C(0x1)
#define TOKIO_COMPLETE UINT64_C(0x2)
#define TOKIO_NOTIFIED UINT64_C(0x4)

#define MAX_TASKS      100000     /* list walk guard */
#define MAX_SNAPSHOT   (1u << 20) /* task cells read in one piece up to this size */
#define RETRY_NS       2000000L   /* between attempts at a busy task */

#define CELL_PREFIX "tokio::runtime::task::core::Cell"
static void read_layout(struct dwarf_types *dt, struct layout *l)
{
	static const char *const names[] = {
		"tokio::runtime::task::core::Header",
		"tokio::runtime::task::raw::Vtable",
		"tokio::runtime::task::core::Trailer",
	};
	Dwarf_Die dies[3], owned;
	int found[3];
	uint64_t off, o2;
	int hits = 0;

	*l = (struct layout){ .hdr_state = 0, .hdr_vtable = 0x10, .vt_poll = 0, .vt_trailer = 0x38,
			      .vt_id = 0x48, .owned_prev = 0, .owned_next = 8, .hdr_owner = 0x18 };
	if (dwarf_types__find(dt, names, 3, dies, found) <= 0)
		return;
	if (found[0]) {
		hits += dwt_member(&dies[0], "state", NULL, &l->hdr_state, NULL) == 0;
		hits += dwt_member(&dies[0], "vtable", NULL, &l->hdr_vtable, NULL) == 0;
		dwt_member(&dies[0], "owner_id", NULL, &l->hdr_owner, NULL);
	}
	if (found[1]) {
		hits += dwt_member(&dies[1], "poll", NULL, &l->vt_poll, NULL) == 0;
		hits += dwt_member(&dies[1], "trailer_offset", NULL, &l->vt_trailer, NULL) == 0;
		hits += dwt_member(&dies[1], "id_offset", NULL, &l->vt_id, NULL) == 0;
	}
	if (found[2] && dwt_member(&dies[2], "owned", NULL, &off, &owned) == 0) {
		if (dwt_member_deep(&owned, "prev", &o2, NULL) == 0) {
			l->owned_prev = off + o2;
			hits++;
		}
		if (dwt_member_deep(&owned, "next", &o2, NULL) == 0) {
			l->owned_next = off + o2;
			hits++;
		}
	}
	l->from_dwarf = hits == 7;
}

int dump_rd64(struct ctx *c, uint64_t addr, uint64_t *v)
{
	return procmem_read_raw(c->pid, addr, v, sizeof(*v));
}

/* The poll copy of the task at header, or NULL when the header does not
 * look like a live task (its vtable's poll is no raw::poll copy). */
/* The poll copy of the vtable at vt (index + 1, 0 none) and its tasks'
 * trailer offset: read once per vtable (vtables are static data), then
 * from the cache; a dump reads thousands of headers of a few vtables. */
static size_t vtable_copy(struct ctx *c, uint64_t vt, uint64_t *trailer)
{
	uint64_t v, poll, idx = 0, tr = UINT64_MAX;

	if (u64map__get(&c->vt_copy, vt, &v)) {
		if (trailer && u64map__get(&c->vt_trailer, vt, &tr))
			*trailer = tr;
		return (size_t)v;
	}
	if (dump_rd64(c, vt + c->lay.vt_poll, &poll))
		return 0;   /* unreadable: not cached (a torn header's garbage) */
	if (!u64map__get(&c->copy_by_addr, poll - c->bias, &idx))
		idx = 0;
	if (idx && dump_rd64(c, vt + c->lay.vt_trailer, &tr) == 0 && tr <= 1u << 24)
		u64map__set(&c->vt_trailer, vt, tr);
	else
		tr = UINT64_MAX;
	u64map__set(&c->vt_copy, vt, idx);   /* ENOMEM: read again next time */
	if (trailer)
		*trailer = tr;
	return (size_t)idx;
}

struct poll_copy *dump_task_copy(struct ctx *c, uint64_t header, uint64_t *vtable)
{
	size_t idx;

	if (!header || (header & 7) || dump_rd64(c, header + c->lay.hdr_vtable, vtable))
		return NULL;
	u64map__set(&c->hdr_vt, header, *vtable);   /* ENOMEM: read again next time */
	idx = vtable_copy(c, *vtable, NULL);
	return idx ? &c->copies[idx - 1] : NULL;
}

/* dump_task_copy() from the vtable this dump last read in the header (a
 * walk read it moments ago), else read; a sample checks the vtable in its
 * copy of the cell. */
static struct poll_copy *task_copy_cached(struct ctx *c, uint64_t header, uint64_t *vtable)
{
	size_t idx;

	if (!u64map__get(&c->hdr_vt, header, vtable))
		return dump_task_copy(c, header, vtable);
	idx = vtable_copy(c, *vtable, NULL);
	return idx ? &c->copies[idx - 1] : NULL;
}

/* The offset of the task id in the tasks of vtable vt (static data: read
 * once per vtable). Returns 0 or -1. */
static int vtable_id_off(struct ctx *c, uint64_t vt, uint64_t *id_off)
{
	uint64_t v;

	if (u64map__get(&c->vt_id, vt, &v)) {
		*id_off = v - 1;
		return 0;
	}
	if (dump_rd64(c, vt + c->lay.vt_id, id_off) || *id_off >= 1u << 24)
		return -1;   /* not cached: a torn header's garbage */
	u64map__set(&c->vt_id, vt, *id_off + 1);
	return 0;
}

/* The owned-list links of the task at h (each task's own trailer offset:
 * tasks of different future types share a list). Returns 0 or -1. */
/* The links at h + trailer: one read when they are adjacent. */
static int read_links(struct ctx *c, uint64_t h, uint64_t trailer, uint64_t *prev, uint64_t *next)
{
	uint64_t w[2];

	if (c->lay.owned_next == c->lay.owned_prev + 8) {
		if (procmem_read_raw(c->pid, h + trailer + c->lay.owned_prev, w, sizeof(w)))
			return -1;
		*prev = w[0];
		*next = w[1];
		return 0;
	}
	return dump_rd64(c, h + trailer + c->lay.owned_prev, prev) ||
	       dump_rd64(c, h + trailer + c->lay.owned_next, next) ? -1 : 0;
}

int dump_task_links(struct ctx *c, uint64_t h, uint64_t *prev, uint64_t *next)
{
	uint64_t vt, trailer;

	if (!h || (h & 7) || dump_rd64(c, h + c->lay.hdr_vtable, &vt) ||
	    !vtable_copy(c, vt, &trailer) || trailer == UINT64_MAX ||
	    read_links(c, h, trailer, prev, next))
		return -1;
	return 0;
}

/* The sharded OwnedTasks the task at h belongs to (tokio >= 1.35): its
 * scheduler handle read from the cell, the OwnedTasks in it, whose id must
 * be the task's owner id. Returns 1 with *addr and *layout (an index into
 * c->layouts), 0 when the task is of no such list (blocking pool, LocalSet,
 * a tokio < 1.35 list) or unreadable. */
int dump_owned_of(struct ctx *c, uint64_t h, uint64_t *addr, size_t *layout)
{
	const struct owned_layout *l;
	struct poll_copy *pc;
	uint64_t vt, arc, owner, id;

	pc = dump_task_copy(c, h, &vt);
	if (!pc || !pc->owned)
		return 0;
	l = &c->layouts[pc->owned - 1];
	if (dump_rd64(c, h + l->sched_off, &arc) || !arc || (arc & 7) ||
	    dump_rd64(c, h + c->lay.hdr_owner, &owner) || !owner ||
	    dump_rd64(c, arc + l->owned_off + l->id_off, &id) || id != owner)
		return 0;
	*addr = arc + l->owned_off;
	*layout = pc->owned - 1;
	return 1;
}

/* Notes the OwnedTasks at addr for walking (once). */
int dump_read_threads(struct ctx *c, struct proc_thread **out, size_t *n)
{
	char err[256];

	if (!c->threads) {
		/* loaded once for all the reads of this dump */
		if (!(c->threads = proc_threads__open(c->pid, err, sizeof(err))))
			return proc_threads__read(c->pid, out, n, err, sizeof(err));
		c->threads_owned = true;
	}
	return proc_threads__read_open(c->threads, out, n, err, sizeof(err));
}

void dump_note_list(struct ctx *c, uint64_t addr, size_t layout, enum dump_via via)
{
	for (size_t i = 0; i < c->n_lists; i++)
		if (c->lists[i].addr == addr)
			return;
	if (c->n_lists == MAX_LISTS) {
		c->res->walk_cut = true;
		if (!c->res->list_note)
			c->res->list_note = "more runtimes than a dump walks";
		return;
	}
	c->lists[c->n_lists++] = (struct owned_list){ .addr = addr, .layout = layout, .via = via };
}

struct dump_list *dump_list_add(struct ctx *c)
{
	struct dump_result *r = c->res;
	struct dump_list *l = realloc(r->task_lists, (r->n_task_lists + 1) * sizeof(*l));

	if (!l)
		return NULL;
	r->task_lists = l;
	l = &l[r->n_task_lists++];
	memset(l, 0, sizeof(*l));
	return l;
}

int dump_add_task(struct ctx *c, uint64_t header, uint64_t id, const char *name, bool seen)
{
	struct dump_result *r = c->res;
	struct dump_task *t;
	uint64_t idx;

	if (u64map__get(&c->task_by_header, header, &idx)) {
		t = &r->tasks[idx - 1];
		if (!t->list)
			t->list = c->cur_list;
		if (!t->id)
			t->id = id;
		if (!t->name && name && !(t->name = strdup(name)))
			return -ENOMEM;
		return 0;
	}
	if (r->n >= MAX_TASKS) {
		r->walk_cut = true;
		return 0;
	}
	t = realloc(r->tasks, (r->n + 1) * sizeof(*t));
	if (!t)
		return -ENOMEM;
	r->tasks = t;
	t = &r->tasks[r->n];
	memset(t, 0, sizeof(*t));
	t->header = header;
	t->id = id;
	t->list = c->cur_list;
	t->seq = ++c->next_seq;
	t->seen = seen;
	if (name && !(t->name = strdup(name)))
		return -ENOMEM;
	if (u64map__set(&c->task_by_header, header, r->n + 1))
		return -ENOMEM;
	r->n++;
	r->seen += seen;
	return 0;
}

/* Follows one direction of the owned-task list from header. */
static int walk_list(struct ctx *c, uint64_t header, bool forward, struct u64map *visited)
{
	for (size_t steps = 0; steps < MAX_TASKS; steps++) {
		uint64_t prev, next, link, vt;
		if (dump_task_links(c, header, &prev, &next)) {
			c->res->walk_cut = true;   /* freed or torn under us */
			return 0;
		}
		link = forward ? next : prev;
		if (!link)
			return 0;               /* the end of the list */
		if (u64map__get(visited, link, NULL))
			return 0;               /* met a walk already done (or a cycle) */
		if (u64map__set(visited, link, 1))
			return -ENOMEM;
		if (!dump_task_copy(c, link, &vt)) {
			c->res->walk_cut = true;
			return 0;
		}
		int err = dump_add_task(c, link, 0, NULL, false);
		if (err)
			return err;
		header = link;
	}
	c->res->walk_cut = true;
	return 0;
}

/* owned_tasks__walk()'s view of a node: its links and owner id. */
static int walk_node(void *ctx, uint64_t h, struct owned_node *n)
{
	struct ctx *c = ctx;
	uint64_t hdr[32], vt, trailer;
	uint64_t end = (c->lay.hdr_vtable > c->lay.hdr_owner ? c->lay.hdr_vtable : c->lay.hdr_owner) + 8;
	uint64_t links = 0, len;

	if (!h || (h & 7))
		return -1;
	/* the header's vtable and owner id in one read when they are close,
	 * and the links with them when they sit where the last node's did
	 * (the tasks of a list are mostly of one vtable) */
	if (end <= sizeof(hdr) && !(c->lay.hdr_vtable & 7) && !(c->lay.hdr_owner & 7)) {
		len = end;
		if (c->walk_trailer && c->lay.owned_next == c->lay.owned_prev + 8 &&
		    !((c->walk_trailer - 1 + c->lay.owned_prev) & 7)) {
			links = c->walk_trailer - 1 + c->lay.owned_prev;
			if (links + 16 <= sizeof(hdr) && links + 16 > len)
				len = links + 16;
			else if (links + 16 > sizeof(hdr))
				links = 0;
		}
		if (len > end && procmem_read_raw(c->pid, h, hdr, (size_t)len))
			len = end;   /* read as much as the header alone */
		if (len == end && procmem_read_raw(c->pid, h, hdr, (size_t)end))
			return -1;
		vt = hdr[c->lay.hdr_vtable / 8];
		n->owner = hdr[c->lay.hdr_owner / 8];
	} else if (dump_rd64(c, h + c->lay.hdr_vtable, &vt) ||
		   dump_rd64(c, h + c->lay.hdr_owner, &n->owner)) {
		return -1;
	}
	u64map__set(&c->hdr_vt, h, vt);   /* ENOMEM: read again when sampled */
	if (!vtable_copy(c, vt, &trailer) || trailer == UINT64_MAX)
		return -1;
	c->walk_trailer = trailer + 1;
	if (links && links + 16 <= len && trailer + c->lay.owned_prev == links) {
		n->prev = hdr[links / 8];
		n->next = hdr[links / 8 + 1];
		return 0;
	}
	return read_links(c, h, trailer, &n->prev, &n->next) ? -1 : 0;
}

static int walk_found(void *ctx, uint64_t h)
{
	return dump_add_task(ctx, h, 0, NULL, false);
}

const struct owned_walk_ops dump_walk_ops = { .node = walk_node, .found = walk_found };

/* Every shard of every sharded OwnedTasks noted, from its heads. */
int dump_walk_noted(struct ctx *c)
{
	struct dump_result *r = c->res;

	for (size_t i = 0; i < c->n_lists; i++) {
		const struct owned_layout *ol = &c->layouts[c->lists[i].layout];
		struct dump_list *l;
		struct owned_walk w;
		if (c->lists[i].walked)
			continue;
		c->cur_list = r->n_task_lists + 1;   /* added below */
		int err = owned_tasks__walk(ol, c->lists[i].addr, procmem_read, &c->pm,
					    &dump_walk_ops, c, &w);
		c->cur_list = 0;
		if (err)
			return err;
		/* once: this is called again after each way in adds lists */
		c->lists[i].walked = true;
		r->lists++;
		if (!ol->one) {   /* one list (tokio < 1.35): no shards said */
			r->shards += w.shards;
			r->shards_walked += w.walked;
		}
		if (w.cut && !r->list_note)
			r->list_note = w.cut;
		if (!w.shards)
			r->lists_unread++;
		if (!(l = dump_list_add(c)))
			return -ENOMEM;
		l->addr = c->lists[i].addr;
		l->id = w.id;
		l->via = c->lists[i].via;
		if (l->via == DUMP_VIA_OWNER) {
			l->tid = c->lists[i].tid;
			snprintf(l->comm, sizeof(l->comm), "%s", c->lists[i].comm ? c->lists[i].comm : "");
			l->owner_task = c->lists[i].task;
		}
		l->runtime = ol->local ? "local_set" : c->lists[i].runtime;
		l->shards = w.shards;
		l->walked = w.walked;
		l->tasks = w.tasks;
		l->complete = w.shards && w.walked == w.shards && !w.cut;
		l->note = l->complete ? NULL : w.cut ? w.cut : "a walk was cut";
	}
	return 0;
}

static int walk_lists(struct ctx *c)
{
	struct u64map visited = { 0 };
	size_t known = c->res->n;
	int err = 0;

	for (size_t i = 0; i < known && !err; i++) {
		uint64_t h = c->res->tasks[i].header, addr, vt;
		size_t layout;
		struct poll_copy *pc;
		if (async_exec_is_task(c->ax, h))
			continue;   /* async-task's (a mixed program's): its executor's */
		if (c->sharded && dump_owned_of(c, h, &addr, &layout)) {
			/* walked from its heads below */
			dump_note_list(c, addr, layout, c->seed_via);
			continue;
		}
		if (c->sharded && (pc = dump_task_copy(c, h, &vt)) && pc->owned) {
			/* a task of a sharded list whose runtime is unreadable: its
			 * links give its shard only */
			c->res->walk_cut = true;
			if (!c->res->list_note)
				c->res->list_note = "a task's runtime handle was unreadable";
		}
		if (u64map__get(&visited, h, NULL))
			continue;
		if ((err = u64map__set(&visited, h, 1)))
			break;
		err = walk_list(c, h, true, &visited);
		if (!err)
			err = walk_list(c, h, false, &visited);
	}
	u64map__clear(&visited);
	return err ? err : dump_walk_noted(c);
}

/* What the copy's Cell<T, S> says of its scheduler's task list. */
static void note_layout(struct ctx *c, struct poll_copy *pc, Dwarf_Die *cell)
{
	struct owned_layout l = { 0 };
	int r = owned_layout__from_cell(c->dt, cell, &l);

	if (r == 0)
		pc->one_list = c->one_list = true;
	if (r < 0 || (r == 0 && !l.one))
		return;
	for (size_t i = 0; i < c->n_layouts; i++)
		if (!memcmp(&c->layouts[i], &l, sizeof(l))) {
			pc->owned = i + 1;
			c->sharded = true;
			return;
		}
	if (c->n_layouts == MAX_LAYOUTS)
		return;
	c->layouts[c->n_layouts++] = l;
	pc->owned = c->n_layouts;
	c->sharded = true;
	c->has_local |= l.local;
}

/* Cell<T, S> of every poll copy that has tasks: its name from the copy's
 * DWARF subprogram "poll<T, S>", then one pass over the units for them all. */
int dump_type_copies(struct ctx *c, bool only_used)
{
	uint64_t *addrs = calloc(c->n_copies ? c->n_copies : 1, sizeof(*addrs));
	char **names = calloc(c->n_copies ? c->n_copies : 1, sizeof(*names));
	const char **want = calloc(c->n_copies ? c->n_copies : 1, sizeof(*want));
	Dwarf_Die *dies = calloc(c->n_copies ? c->n_copies : 1, sizeof(*dies));
	int *found = calloc(c->n_copies ? c->n_copies : 1, sizeof(*found));
	size_t *sel = calloc(c->n_copies ? c->n_copies : 1, sizeof(*sel));
	size_t nw = 0, ns = 0;
	int ret = -ENOMEM;

	if (!addrs || !names || !want || !dies || !found || !sel)
		goto out;
	/* the copies not yet typed (only those with a task found: only_used) */
	for (size_t i = 0; i < c->n_copies; i++)
		if (!c->copies[i].done && (!only_used || c->copies[i].used)) {
			sel[ns] = i;
			addrs[ns++] = c->copies[i].addr;
		}
	dwarf_subprogram_names_fd(dwarf_types__fd(c->dt), addrs, ns, names);   /* the DWARF's file */
	for (size_t k = 0; k < ns; k++) {
		size_t i = sel[k];
		struct poll_copy *pc = &c->copies[i];
		if (!names[k] || strncmp(names[k], "poll<", 5))
			continue;
		if (!pc->future) {
			/* named exactly as the probe plan names it */
			char *arg = sym_first_generic_arg(names[k]);
			pc->future = arg ? sym_pretty_future(arg) : NULL;
			free(arg);
		}
		if (asprintf(&pc->cell_name, "%s%s", CELL_PREFIX, names[k] + 4) < 0) {
			pc->cell_name = NULL;
			goto out;
		}
		want[nw++] = pc->cell_name;
	}
	if (dwarf_types__find(c->dt, want, nw, dies, found) < 0)
		goto out;
	for (size_t k = 0, w = 0; k < ns; k++) {
		struct poll_copy *pc = &c->copies[sel[k]];
		Dwarf_Die core, stage;
		uint64_t core_off, stage_off, off;
		pc->done = true;
		if (!pc->cell_name)
			continue;
		if (!found[w++])
			continue;
		Dwarf_Die *cell = &dies[w - 1];
		int64_t size = dwt_byte_size(cell);
		note_layout(c, pc, cell);
		if (size <= 0 || dwt_member(cell, "core", NULL, &core_off, &core) ||
		    dwt_member(&core, "stage", NULL, &stage_off, &stage))
			continue;
		off = core_off + stage_off;
		/* CoreStage { stage: UnsafeCell { UnsafeCell { value: Stage<T> } } } */
		for (int d = 0; d < 8 && !dwt_has_variants(&stage); d++) {
			uint64_t o;
			Dwarf_Die inner;
			if (dwt_only_member(&stage, &o, &inner))
				break;
			off += o;
			stage = inner;
		}
		if (!dwt_has_variants(&stage))
			continue;
		pc->stage = stage;
		pc->stage_off = off;
		pc->cell_size = (uint64_t)size;
		pc->typed = true;
	}
	ret = 0;
out:
	for (size_t k = 0; names && k < ns; k++)
		free(names[k]);
	free(names);
	free(sel);
	free(addrs);
	free(want);
	free(dies);
	free(found);
	return ret;
}

static void pause_briefly(void)
{
	struct timespec ts = { 0, RETRY_NS };

	nanosleep(&ts, NULL);
}

/* One read of the whole cell at header into buf: 0, or -1 when it is too
 * large or unreadable (then read piece by piece). */
static int read_cell(struct ctx *c, uint64_t header, const struct poll_copy *pc, uint8_t *buf)
{
	if (pc->cell_size > MAX_SNAPSHOT || pc->cell_size < c->lay.hdr_state + 8 ||
	    procmem_read_raw(c->pid, header, buf, pc->cell_size))
		return -1;
	return 0;
}

/* An idle task's wakers held, from state word s (struct dump_task's
 * wakers; the tokio profile's task_state). */
static void idle_refs(struct dump_task *t, uint64_t s)
{
	const struct runtime_profile *p = profile_find("tokio");

	t->wakers = 0;
	t->wakers_known = p && p->task_state && task_state_wakers(p->task_state, s, &t->wakers);
}

static uint64_t word_at(const uint8_t *buf, uint64_t off)
{
	uint64_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

/* Reads the task's future and walks it: fills t->stack, or t->note. One
 * attempt; returns 1 done, 0 retry (t->note says why), 2 the header holds
 * another vtable than vtable (when vtable is not 0: look again), < 0
 * ENOMEM. *id_off, when not UINT64_MAX, is where t->id is read (from the
 * copy; then set to UINT64_MAX). */
static int sample_once(struct ctx *c, struct dump_task *t, struct poll_copy *pc,
		       uint64_t vtable, uint64_t *id_off)
{
	struct dwt_variant v;
	uint64_t s1, s2, t_off, stage_discr;
	Dwarf_Die fut;
	const char *vname;
	Dwarf_Attribute attr;
	bool snap;
	int ok, err;

	/* one read of the whole cell: its state, vtable and id, and the walk
	 * then reads a near-instant copy */
	c->pm.snap = NULL;
	t->wakers_known = false;
	snap = read_cell(c, t->header, pc, c->snap) == 0;
	if (snap && vtable && c->lay.hdr_vtable + 8 <= pc->cell_size &&
	    word_at(c->snap, c->lay.hdr_vtable) != vtable)
		return 2;
	if (*id_off != UINT64_MAX) {
		if (snap && *id_off + 8 <= pc->cell_size)
			t->id = word_at(c->snap, *id_off);
		else
			dump_rd64(c, t->header + *id_off, &t->id);
		*id_off = UINT64_MAX;
	}
	if (snap) {
		s1 = word_at(c->snap, c->lay.hdr_state);
	} else if (dump_rd64(c, t->header + c->lay.hdr_state, &s1)) {
		t->state = "unreadable";
		t->note = "task memory unreadable (freed?)";
		return 1;
	}
	if (s1 & TOKIO_COMPLETE) {
		t->state = "completed";
		t->note = "completed, output not yet taken";
		return 1;
	}
	if (s1 & TOKIO_RUNNING) {
		t->state = "running";
		t->note = "running, not sampled";
		return 0;
	}
	t->state = s1 & TOKIO_NOTIFIED ? "runnable" : "idle";
	idle_refs(t, s1);
	if (snap) {
		c->pm.snap = c->snap;
		c->pm.snap_addr = t->header;
		c->pm.snap_len = pc->cell_size;
	}
	err = dwt_read_variant(&pc->stage, t->header + pc->stage_off, procmem_read, &c->pm, &v);
	if (err) {
		t->note = "task stage unreadable";
		return 1;
	}
	stage_discr = v.discr;
	vname = dwarf_formstring(dwarf_attr(&v.member, DW_AT_name, &attr));
	if (!vname || strcmp(vname, "Running")) {
		t->state = "completed";
		t->note = vname && !strcmp(vname, "Consumed") ? "completed, output taken"
							       : "completed, output not yet taken";
		return 1;
	}
	if (dwt_member(&v.type, "__0", NULL, &t_off, &fut)) {
		t->note = "task future not described by DWARF";
		return 1;
	}
	err = async_stack_walk_dyn(c->dt, &fut, t->header + pc->stage_off + v.offset + t_off,
				   procmem_read, &c->pm, c->bias, &t->stack);
	if (err == -ENOMEM)
		return err;
	c->pm.snap = NULL;
	if (err) {
		t->note = "task future not described by DWARF";
		return 1;
	}
	/* the checks read the process again: a second copy of the cell, in
	 * one read (what lies outside it is read live) */
	if (snap && read_cell(c, t->header, pc, c->snap2) == 0) {
		s2 = word_at(c->snap2, c->lay.hdr_state);
		c->pm.snap = c->snap2;
		ok = 1;
	} else {
		ok = dump_rd64(c, t->header + c->lay.hdr_state, &s2) == 0;
	}
	ok = ok && s2 == s1 &&
	     dwt_read_variant(&pc->stage, t->header + pc->stage_off, procmem_read, &c->pm, &v) == 0 &&
	     v.discr == stage_discr && async_stack_verify(&t->stack, procmem_read, &c->pm) == 1;
	c->pm.snap = NULL;
	if (ok) {
		t->note = NULL;
		dump_read_deadline(c, t);
		return dump_read_join_sets(c, t) ? -ENOMEM : 1;
	}
	async_stack__clear(&t->stack);
	t->note = "changed while reading";
	t->wakers_known = false;
	return 0;
}

uint64_t dump_task_id(struct ctx *c, uint64_t header)
{
	uint64_t vtable, id_off, id = 0;

	if (dump_task_copy(c, header, &vtable) && !vtable_id_off(c, vtable, &id_off) &&
	    dump_rd64(c, header + id_off, &id))
		id = 0;
	return id;
}

static int sample(struct ctx *c, struct dump_task *t, int attempts, bool cached)
{
	uint64_t vtable;
	struct poll_copy *pc = cached ? task_copy_cached(c, t->header, &vtable)
				      : dump_task_copy(c, t->header, &vtable);
	uint64_t id_off = UINT64_MAX;

	if (!pc) {
		t->state = "unreadable";
		t->note = "task memory unreadable (freed?)";
		return 0;
	}
	if (t->id || vtable_id_off(c, vtable, &id_off))
		id_off = UINT64_MAX;
	/* the id from the first copy of the cell, when there is one */
	if (id_off != UINT64_MAX && !pc->typed) {
		dump_rd64(c, t->header + id_off, &t->id);
		id_off = UINT64_MAX;
	}
	if (!t->name && pc->future && !(t->name = strdup(pc->future)))
		return -ENOMEM;
	if (!pc->typed) {
		uint64_t s = 0;
		dump_rd64(c, t->header + c->lay.hdr_state, &s);
		t->state = s & TOKIO_RUNNING ? "running" : s & TOKIO_COMPLETE ? "completed"
			 : s & TOKIO_NOTIFIED ? "runnable" : "idle";
		idle_refs(t, s);
		t->note = "no DWARF type for this task's future";
		return 0;
	}
	for (int i = 0; i < attempts; i++) {
		if (i)
			pause_briefly();
		int r = sample_once(c, t, pc, cached ? vtable : 0, &id_off);
		if (r == 2) {
			/* another task at this header since the walk: as found now */
			u64map__del(&c->hdr_vt, t->header);
			return sample(c, t, attempts, false);
		}
		if (r)
			return r < 0 ? r : 0;
	}
	return 0;
}

static int cmp_task(const void *a, const void *b)
{
	const struct dump_task *x = a, *y = b;

	if (!x->id != !y->id)
		return x->id ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	/* without an id (async-task's): in order of first sight, as ~N says */
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The Tokio minor version the binary's source paths name
 * ("tokio-1.53.1/src/...", in DWARF or panic locations: crate_version.h):
 * 1 and *minor, or 0. */
static int image_tokio_minor(const struct elf_image *img, unsigned *minor)
{
	struct crate_paths *cp = crate_paths__open_fd(elf_image__fd(img), NULL);
	struct crate_versions cv;
	int found = cp && crate_paths__versions(cp, "tokio", &cv) > 0;

	if (found)
		*minor = cv.hits[0].version.minor;
	crate_paths__free(cp);
	return found;
}

/* Threads named as Tokio names a multi-thread runtime's workers (comm, or
 * NULL: any version's name). */
static size_t worker_threads(pid_t pid, const char *comm_name)
{
	size_t nf;
	const struct task_list_fact *rows = task_list_facts(&nf);
	char path[64], comm[32];
	struct dirent *e;
	size_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	if (!(d = opendir(path)))
		return 0;
	while ((e = readdir(d))) {
		FILE *f;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/comm", pid, e->d_name);
		if (!(f = fopen(path, "re")))
			continue;
		if (fgets(comm, sizeof(comm), f)) {
			comm[strcspn(comm, "\n")] = '\0';
			for (size_t i = 0; i < nf; i++)
				if ((!comm_name || rows[i].worker_comm == comm_name) &&
				    !strcmp(comm, rows[i].worker_comm)) {
					n++;
					break;
				}
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

/* Without DWARF for the task list (a build with line tables only, say):
 * the version facts tell whether it is sharded (the version the binary's
 * panic locations name, else a sharded-list function in its symbols).
 * Sets c->unverified to the facts of a sharded version, else NULL. */
static void undescribed_version(struct ctx *c, const struct elf_image *img)
{
	const struct task_list_fact *f = NULL;
	unsigned minor;

	if (image_tokio_minor(img, &minor)) {
		f = task_list_fact_for(minor);
		c->version_known = true;
	} else {
		for (size_t i = 0; i < img->n_syms && !f; i++)
			if (!strncmp(img->syms[i].norm, "tokio::util::sharded_list::", 27))
				f = task_list_fact_for(35);
	}
	c->unverified = f && f->kind == TASK_LIST_SHARDED ? f : NULL;
}

/* A sharded list without its layout: the walks along the tasks' links
 * covered the shards of the tasks found only. Said, with the shard count
 * Tokio's formula gives for the worker threads seen (0 when none is named
 * as Tokio names them) and how many of them hold a task found. */
static void undescribed_lists(struct ctx *c)
{
	const struct task_list_fact *f = c->unverified;
	struct dump_result *r = c->res;
	struct u64map shards = { 0 };

	if (!f)
		return;
	r->layout_unverified = true;
	r->list_note = "the binary's DWARF does not describe the task list, which tokio shards "
		       "since 1.35 (tokio#6001)";
	r->shards = task_list_shards(f, worker_threads(c->pid, c->version_known ? f->worker_comm
										    : NULL));
	for (size_t i = 0; i < r->n && r->shards; i++) {
		uint64_t vt, id_off, id;
		if (dump_task_copy(c, r->tasks[i].header, &vt) && dump_rd64(c, vt + c->lay.vt_id, &id_off) == 0 &&
		    id_off < 1u << 24 && dump_rd64(c, r->tasks[i].header + id_off, &id) == 0 && id)
			u64map__set(&shards, id % r->shards, 1);
	}
	r->shards_walked = shards.len;
	u64map__clear(&shards);
}

/* The binary has tokio's LocalSet (task::local) code. */
static bool has_local_set(const struct elf_image *img)
{
	for (size_t i = 0; i < img->n_syms; i++)
		if (!strncmp(img->syms[i].norm, "tokio::task::local::", 20))
			return true;
	return false;
}

static bool has_tokio(const struct elf_image *img)
{
	for (size_t i = 0; i < img->n_syms; i++)
		if (!strcmp(img->syms[i].norm, "tokio::runtime::task::raw::poll"))
			return true;
	return false;
}

#define LOCAL_SET_ROUNDS 4   /* LocalSets in tasks of LocalSets in tasks ... */

/* The tasks found so far, their chains read, searched for the LocalSets
 * their futures own (a task that runs one: LocalSet::run_until in it); each
 * list found walked, its tasks searched the same way. 0 or -ENOMEM. */
static int local_sets_of_tasks(struct ctx *c, int attempts)
{
	struct dump_result *r = c->res;
	size_t from = 0;

	if ((!c->snap && !(c->snap = malloc(MAX_SNAPSHOT))) ||
	    (!c->snap2 && !(c->snap2 = malloc(MAX_SNAPSHOT))))
		return -ENOMEM;
	for (int round = 0; round < LOCAL_SET_ROUNDS && from < r->n; round++) {
		size_t to = r->n, lists = c->n_lists;
		int err;
		for (size_t i = from; i < to; i++) {
			uint64_t vt;
			struct poll_copy *pc = task_copy_cached(c, r->tasks[i].header, &vt);
			if (pc)
				pc->used = true;
		}
		if ((err = dump_type_copies(c, true)))
			return err;
		for (size_t i = from; i < to; i++) {
			if ((err = sample(c, &r->tasks[i], attempts, true)))
				return err;
			r->tasks[i].sampled = true;
		}
		if ((err = dump_local_sets_in_tasks(c, from, to)))
			return err;
		from = to;
		if (c->n_lists == lists)
			break;
		if ((err = dump_walk_noted(c)))
			return err;
	}
	return 0;
}

int dump_run(const struct dump_opts *o, struct dump_result *res, char *err, size_t errlen)
{
	char exe[64], target[PATH_MAX];
	struct elf_image *img = NULL;
	struct ctx c = { .pid = o->pid, .threads = o->threads, .res = res };
	struct probe_plan *plan = NULL;
	const struct as_probe *probes = o->probes;
	size_t n_probes = o->n_probes;
	bool tokio;
	char why[256];
	int attempts = o->attempts > 0 ? o->attempts : 5;
	int ret;
	ssize_t n;

	memset(res, 0, sizeof(*res));
	res->pid = o->pid;
	c.pm.pid = o->pid;
	if (o->pid <= 0 || (kill(o->pid, 0) && errno == ESRCH)) {
		snprintf(err, errlen, "no process with pid %d: check the pid (ps -e) and that the "
			 "program is still running", o->pid);
		return -ESRCH;
	}
	if (geteuid() != 0) {
		snprintf(err, errlen, "reading another process's tasks needs root: run as root (sudo)");
		return -EPERM;
	}
	snprintf(exe, sizeof(exe), "/proc/%d/exe", o->pid);
	n = readlink(exe, target, sizeof(target) - 1);
	if (n < 0 && errno == ENOENT) {
		/* a zombie: kill() still finds it, its memory is gone */
		snprintf(err, errlen, "no process with pid %d: it has exited (check with ps -e)",
			 o->pid);
		return -ESRCH;
	}
	if (n < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot read %s: %s", exe, strerror(errno));
		return ret;
	}
	target[n] = '\0';
	if (!(res->target = strdup(target)))
		goto nomem;
	img = o->img ? o->img : elf_image__open(exe);
	if (!img) {
		ret = -errno;
		snprintf(err, errlen, "cannot read %s: %s", target, strerror(errno));
		goto fail;
	}
	if (img->debug_refused[0]) {
		snprintf(err, errlen, "%s", img->debug_refused);
		ret = -EBADF;
		goto fail;
	}
	char note[600];
	if (elf_image__debug_note(img, note, sizeof(note)) && !(res->debug_note = strdup(note)))
		goto nomem;
	if (!img->has_symtab && !img->has_debug_info) {
		snprintf(err, errlen, "%s is stripped (no symbols, no debug info) and no debug file "
			 "was found (by build id, .gnu_debuglink or debuginfod): name it with "
			 "--debug-file, or rebuild with debug = true and strip = false", target);
		ret = -ENODATA;
		goto fail;
	}
	tokio = has_tokio(img);
	if (!tokio && !async_exec_present(img)) {
		snprintf(err, errlen, "no Tokio runtime functions found in %s (searched %zu function "
			 "symbols for tokio::runtime::task::raw::poll), nor async-task's (async-std, "
			 "smol: async_task::raw::RawTask::run): is it a Tokio program?",
			 target, img->n_syms);
		ret = -ENOENT;
		goto fail;
	}
	if (!img->has_debug_info) {
		char why[1024];
		snprintf(err, errlen, "dump reads tasks through DWARF (their layout, await points): %s",
			 elf_image__no_dwarf_why(img, why, sizeof(why)));
		ret = -ENODATA;
		goto fail;
	}
	ret = procmem_load_bias(o->pid, img, &c.bias);
	if (ret) {
		snprintf(err, errlen, "cannot find where %s is loaded in pid %d: %s", target, o->pid,
			 strerror(-ret));
		goto fail;
	}
	{
		uint64_t probe;
		/* process_vm_readv needs ptrace access: fails here, not per task */
		ret = procmem_read_raw(o->pid, c.bias + img->loads[0].vaddr, &probe, sizeof(probe));
		if (ret) {
			snprintf(err, errlen, "cannot read the memory of pid %d: %s%s", o->pid,
				 strerror(-ret), ret == -EPERM ? ": run as root (sudo)" : "");
			goto fail;
		}
	}

	/* 1. the tasks polled for a moment (or as the caller's source saw
	 * them), or the ones the caller knows */
	c.dt = o->dt ? o->dt : dwarf_types__open_fd(elf_image__dwarf_fd(img));
	if (!c.dt) {
		ret = -errno;
		snprintf(err, errlen, "%s has no readable debug info: rebuild with debug = true "
			 "in its Cargo profile", target);
		goto fail;
	}
	read_layout(c.dt, &c.lay);
	c.seed_via = DUMP_VIA_POLL;
	if (o->source)
		probes = as_source__meta(o->source)->probes, n_probes = as_source__meta(o->source)->n_probes;
	if (o->source) {
		ret = dump_discover_polled(&c, o->source, err, errlen);
		if (ret)
			goto fail;
		goto tasks_known;
	}
	if (o->no_trace) {
		if (dump_add_copies(&c, o->probes, o->n_probes))
			goto nomem;
		for (size_t i = 0; i < o->n_headers; i++)
			if (dump_add_task(&c, o->headers[i], 0, NULL, false))
				goto nomem;
		/* and every runtime's list through CONTEXT: the tasks not
		 * polled since the caller began tracing */
		if (dump_type_copies(&c, false) || dump_discover_context(&c, exe) < 0)
			goto nomem;
		goto tasks_known;
	}
	/* 1. no probe: the runtime handle in each thread's CONTEXT, its lists
	 * walked from their heads (the poll copies from the probe plan, never
	 * attached) */
	plan = probe_plan__build(img, NULL, 0, why, sizeof(why));
	if (plan && dump_add_copies(&c, plan->probes, plan->n))
		goto nomem;
	if (plan)
		probes = plan->probes, n_probes = plan->n;
	/* the copies' types: all of them only when the program has LocalSet
	 * code (their layouts say which are LocalSet tasks, to look for in
	 * the heap), else only those of the tasks the walks find */
	if (has_local_set(img) && dump_type_copies(&c, false))
		goto nomem;
	ret = o->trace || !tokio ? 0 : dump_discover_context(&c, exe);
	if (ret < 0)
		goto nomem;
	if (ret > 0) {
		/* LocalSets are in no CONTEXT: from the block_on futures that
		 * own them; then, when the program created more lists than
		 * were found (or cannot say, with LocalSet code), the heap: for
		 * every task, or for the program's LocalSet task types only */
		if (!o->no_trace) {
			if (dump_block_ons(&c, c.th, c.n_th))
				goto nomem;
			c.block_ons_read = true;
		}
		if (c.has_local && (dump_local_sets_owned(&c) || dump_walk_noted(&c)))
			goto nomem;
		bool counted = dump_read_counter(&c, exe);
		bool more = counted && res->lists_created > dump_lists_found(&c);
		/* a LocalSet that a task runs: from the futures of the tasks
		 * found so far (their chains read now), before the heap */
		if (more && c.has_local) {
			if (local_sets_of_tasks(&c, attempts))
				goto nomem;
			more = res->lists_created > dump_lists_found(&c);
		}
		if (more && dump_type_copies(&c, false))
			goto nomem;
		if ((more || (c.has_local && !counted)) &&
		    (dump_scan_lists(&c, !more) == -ENOMEM || dump_walk_noted(&c)))
			goto nomem;
		for (size_t i = 0; i < res->n; i++) {
			uint64_t vt;
			struct poll_copy *pc = task_copy_cached(&c, res->tasks[i].header, &vt);
			if (pc)
				pc->used = true;
		}
		if (dump_type_copies(&c, true))
			goto nomem;
		goto lists_known;
	}
	if (!tokio && !o->trace)
		goto lists_known;   /* async-task only: its executors, below */
	/* 2. else the tasks polled during a short recording */
	res->traced = true;
	ret = dump_discover_by_recording(&c, o, err, errlen);
	if (ret)
		goto fail;
	if (kill(o->pid, 0) && errno == ESRCH) {
		snprintf(err, errlen, "pid %d exited while it was traced", o->pid);
		ret = -ESRCH;
		goto fail;
	}

tasks_known:
	if (!tokio)
		goto lists_known;
	/* async-task's task types: its tasks (a mixed program's) are no seeds */
	if ((ret = async_exec_open(&c, img, probes, n_probes, false, &c.ax, err, errlen)))
		goto fail;
	/* the rest of the tasks from Tokio's lists; the copies' types first:
	 * they say where a list is */
	ret = dump_type_copies(&c, false);
	if (!ret && !c.sharded && !c.one_list)
		undescribed_version(&c, img);
	if (!ret && !async_exec_others(c.ax, res)) {
		/* 3. last: one task found in the heap */
		ret = dump_scan_for_task(&c);
		c.seed_via = DUMP_VIA_HEAP;
	}
	if (!ret)
		ret = walk_lists(&c);
	if (ret)
		goto nomem;
	if (c.unverified)
		undescribed_lists(&c);
lists_known:
	if (dump_account_lists(&c, exe))
		goto nomem;
	/* async-task's tasks (async-std, smol): through their executors */
	if (!c.ax && (ret = async_exec_open(&c, img, probes, n_probes, !tokio, &c.ax, err, errlen)))
		goto fail;
	if (c.ax && async_exec__discover(c.ax, img) < 0)
		goto nomem;
	/* 3. each task's stack (those of the tasks searched for LocalSets
	 * already read) */
	if (!c.snap)
		c.snap = malloc(MAX_SNAPSHOT);
	if (!c.snap2)
		c.snap2 = malloc(MAX_SNAPSHOT);
	if (!c.snap || !c.snap2)
		goto nomem;
	for (size_t i = 0; i < res->n; i++)
		if (!res->tasks[i].sampled &&
		    (async_exec__owns(c.ax, res->tasks[i].header)
			     ? async_exec__sample(c.ax, &res->tasks[i], attempts)
			     : sample(&c, &res->tasks[i], attempts, true)))
			goto nomem;
	if (res->n)
		qsort(res->tasks, res->n, sizeof(*res->tasks), cmp_task);
	if (dump_place_children(&c))
		goto nomem;
	/* 4. the block_on futures (top shows none: not read for it) */
	if (!o->no_trace && !c.block_ons_read && dump_block_ons(&c, c.th, c.n_th))
		goto nomem;
	ret = 0;
	goto out;
nomem:
	snprintf(err, errlen, "out of memory");
	ret = -ENOMEM;
fail:
	dump_result__clear(res);
out:
	if (c.threads_owned)
		proc_threads__close(c.threads);
	async_exec__free(c.ax);
	free(c.snap);
	free(c.snap2);
	free(c.th);
	for (size_t i = 0; i < c.n_copies; i++) {
		free(c.copies[i].future);
		free(c.copies[i].cell_name);
	}
	free(c.copies);
	u64map__clear(&c.copy_by_addr);
	u64map__clear(&c.vt_copy);
	u64map__clear(&c.vt_trailer);
	u64map__clear(&c.task_by_header);
	u64map__clear(&c.hdr_vt);
	u64map__clear(&c.vt_id);
	if (!o->dt)
		dwarf_types__free(c.dt);
	probe_plan__free(plan);
	if (!o->img)
		elf_image__free(img);
	return ret;
}
