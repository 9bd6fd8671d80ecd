/* The ways into a live program's task lists (dump_int.h): first every
 * thread's thread-local tokio CONTEXT, whose runtime handle leads to the
 * runtime's OwnedTasks (no probe: the threads' thread pointers from a BPF
 * task iterator, probe/threads.h; the layout from DWARF, dump/rt_context.h);
 * the count of the lists the program created (tokio's id counter) against
 * those found; last, a scan of the heap, for one task header (when nothing
 * else found a task) or for the lists nothing else reached (LocalSets, a
 * runtime no thread is in). What found each list is kept with it. */
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dump/dump_int.h"
#include "dump/rt_context.h"
#include "probe/threads.h"

/* CONTEXT */

int dump_discover_context(struct ctx *c, const char *exe)
{
	struct dump_result *r = c->res;
	struct proc_thread *th = NULL;
	struct rt_context *rc = NULL;
	struct {
		struct rt_handle h;
		size_t thread, threads;
	} found[MAX_LISTS];
	size_t n_th = 0, n_found = 0;
	char err[256];
	const char *why = NULL;
	int ret = 0;

	(void)err;
	if (dump_read_threads(c, &th, &n_th)) {
		r->context_note = "the threads' thread pointers could not be read (BPF task iterator)";
		return 0;
	}
	r->threads = n_th;
	rc = rt_context__open(c->dt, exe, &why);
	if (!rc) {
		ret = errno == ENOMEM ? -ENOMEM : 0;
		r->context_note = why;
		goto out;
	}
	for (size_t i = 0; i < n_th; i++) {
		struct rt_handle h;
		size_t k;
		int got = -EBUSY;
		/* a handle being set (entering or leaving a runtime) is read again */
		for (int try = 0; try < 3 && got < 0; try++)
			got = rt_context__handle(rc, th[i].fsbase, procmem_read, &c->pm, &h);
		if (got < 0)
			r->context_unread++;
		if (got != 1)
			continue;
		r->context_threads++;
		for (k = 0; k < n_found && found[k].h.arc != h.arc; k++)
			;
		if (k == n_found) {
			if (n_found == MAX_LISTS)
				continue;
			found[n_found].h = h;
			found[n_found].thread = i;
			found[n_found++].threads = 0;
		}
		found[k].threads++;
	}
	if (!n_found) {
		r->context_note = "no thread's thread-local CONTEXT holds a runtime handle";
		goto out;
	}
	for (size_t k = 0; k < n_found; k++) {
		const struct rt_handle *h = &found[k].h;
		const struct proc_thread *t = &th[found[k].thread];
		struct dump_list *l = dump_list_add(c);
		struct owned_walk w;
		size_t layout;
		if (!l) {
			ret = -ENOMEM;
			goto out;
		}
		l->via = DUMP_VIA_CONTEXT;
		l->runtime = h->kind;
		l->tid = t->tid;
		snprintf(l->comm, sizeof(l->comm), "%s", t->comm);
		l->threads = found[k].threads;
		if (h->list < 0) {
			l->note = "the binary's DWARF does not describe this runtime's task list";
			r->lists++;
			r->lists_unread++;
			if (!r->list_note)
				r->list_note = l->note;
			continue;
		}
		l->addr = h->arc + h->layout.owned_off;
		/* its layout kept (the lists noted from tasks are compared by address) */
		for (layout = 0; layout < c->n_layouts; layout++)
			if (!memcmp(&c->layouts[layout], &h->layout, sizeof(h->layout)))
				break;
		if (layout == c->n_layouts && c->n_layouts < MAX_LAYOUTS)
			c->layouts[c->n_layouts++] = h->layout;
		c->cur_list = r->n_task_lists;   /* l's */
		ret = owned_tasks__walk(&h->layout, l->addr, procmem_read, &c->pm, &dump_walk_ops, c,
					&w);
		c->cur_list = 0;
		if (ret)
			goto out;
		l = &r->task_lists[r->n_task_lists - 1];   /* stable: tasks do not move lists */
		l->id = w.id;
		l->shards = w.shards;
		l->walked = w.walked;
		l->tasks = w.tasks;
		l->complete = w.shards && w.walked == w.shards;
		l->note = l->complete ? NULL : w.cut ? w.cut : "a walk was cut";
		r->lists++;
		r->shards += h->layout.one ? 0 : w.shards;
		r->shards_walked += h->layout.one ? 0 : w.walked;
		if (!w.shards)
			r->lists_unread++;
		if (!l->complete && !r->list_note)
			r->list_note = l->note;
		if (layout < MAX_LAYOUTS && c->n_lists < MAX_LISTS)
			c->lists[c->n_lists++] = (struct owned_list){ .addr = l->addr, .layout = layout,
								     .via = DUMP_VIA_CONTEXT,
								     .walked = true };
	}
	/* a thread whose CONTEXT could not be read may hold a runtime of its own */
	if (r->context_unread && !r->list_note)
		r->list_note = "the thread-local CONTEXT of a thread could not be read (a runtime "
			       "only it entered would be missing)";
	ret = (int)r->n_task_lists;
out:
	rt_context__free(rc);
	c->th = th;   /* kept for the block_on futures */
	c->n_th = n_th;
	return ret;
}

/* The lists the program created */

struct counter {
	struct ctx *c;
	uint64_t *created;
};

static int counter_symbol(const struct elf_symbol *sym, void *arg)
{
	struct counter *k = arg;
	uint64_t v = 0;

	if (sym->type != STT_OBJECT || (sym->size != 8 && sym->size != 4) ||
	    !strstr(sym->name, task_lists_counter_pieces[1]) ||
	    !strstr(sym->name, task_lists_counter_pieces[0]))
		return 0;
	if (procmem_read_raw(k->c->pid, k->c->bias + sym->value, &v, sym->size))
		return -EIO;
	*k->created = v ? v - 1 : 0;
	return 1;
}

int dump_lists_created(struct ctx *c, const char *exe, uint64_t *created)
{
	struct counter k = { c, created };

	return elf_symbols_each(exe, counter_symbol, &k, NULL) == 1 ? 0 : -ENOENT;
}

size_t dump_lists_found(const struct ctx *c)
{
	const struct dump_result *r = c->res;
	size_t n = 0;

	for (size_t i = 0; i < r->n_task_lists; i++) {
		size_t j;
		if (!r->task_lists[i].id)
			continue;
		for (j = 0; j < i && r->task_lists[j].id != r->task_lists[i].id; j++)
			;
		n += j == i;
	}
	return n;
}

bool dump_read_counter(struct ctx *c, const char *exe)
{
	if (!c->counter_read) {
		c->counter_read = true;
		c->res->lists_counted = !dump_lists_created(c, exe, &c->res->lists_created);
	}
	return c->res->lists_counted;
}

int dump_account_lists(struct ctx *c, const char *exe)
{
	struct dump_result *r = c->res;
	size_t found;

	if (!dump_read_counter(c, exe))
		return 0;
	found = dump_lists_found(c);
	if (r->lists_created > found && !r->heap_scanned) {
		int err = dump_type_copies(c, false);
		if (!err)
			err = dump_scan_lists(c, false);
		if (!err)
			err = dump_walk_noted(c);
		if (err == -ENOMEM)
			return err;
		found = dump_lists_found(c);
	}
	r->lists_without_tasks = r->lists_created > found ? (size_t)(r->lists_created - found) : 0;
	return 0;
}

/* The heap scan */

/* dump_scan_words (dump_int.h): also async_exec.c's heap scan */
int dump_scan_words(struct ctx *c, uint64_t start, uint64_t end, uint64_t *budget,
		    int (*fn)(struct ctx *, uint64_t, uint64_t, void *), void *arg)
{
	enum { CHUNK = 1 << 20 };
	uint64_t *buf = malloc(CHUNK);
	int r = 0;

	if (!buf)
		return -ENOMEM;
	for (uint64_t a = start; a < end && !r && *budget; a += CHUNK) {
		size_t len = end - a < CHUNK ? (size_t)(end - a) : CHUNK;
		if (len > *budget)
			len = (size_t)*budget;
		*budget -= len;
		if (procmem_read_raw(c->pid, a, buf, len))
			continue;   /* guard pages, unmapped meanwhile */
		for (size_t i = 0; i < len / 8 && !r; i++)
			r = fn(c, a + i * 8, buf[i], arg);
	}
	free(buf);
	return r < 0 ? r : 0;
}

enum scan_mode {
	SCAN_ONE_TASK,            /* stop at the first live task (its list walked after) */
	SCAN_LOCAL_LISTS,         /* LocalSet tasks only, every list of them noted */
	SCAN_ALL_LISTS,           /* every task, the list of each noted (once) */
};

struct scan {
	enum scan_mode mode;
	struct u64map vtables;    /* task vtable addresses */
	uint64_t fallback;        /* sharded lists: the first task of no OwnedTasks accepted */
};

/* A word equal to a poll copy's runtime address: a task vtable's poll slot. */
static int is_vtable(struct ctx *c, uint64_t addr, uint64_t word, void *arg)
{
	struct scan *sc = arg;
	uint64_t idx;

	if (word <= c->bias || !u64map__get(&c->copy_by_addr, word - c->bias, &idx))
		return 0;
	if (sc->mode == SCAN_LOCAL_LISTS && (!c->copies[idx - 1].owned ||
					     !c->layouts[c->copies[idx - 1].owned - 1].local))
		return 0;
	if (u64map__set(&sc->vtables, addr - c->lay.vt_poll, 1))
		return -ENOMEM;
	return 0;
}

/* The kind of runtime whose task h is, from its poll copy's scheduler
 * type (static), or NULL. */
static const char *task_runtime(struct ctx *c, uint64_t h)
{
	uint64_t vt;
	struct poll_copy *pc = dump_task_copy(c, h, &vt);

	if (!pc || !pc->cell_name)
		return NULL;
	if (pc->owned && c->layouts[pc->owned - 1].local)
		return "local_set";
	if (strstr(pc->cell_name, "::current_thread::"))
		return "current_thread";
	if (strstr(pc->cell_name, "::multi_thread::"))
		return "multi_thread";
	return NULL;
}

/* The list at owned of the task h, found by the scan: noted once, with the
 * kind of its runtime. */
static void note_scanned_list(struct ctx *c, uint64_t h, uint64_t owned, size_t layout)
{
	size_t n = c->n_lists;

	dump_note_list(c, owned, layout, DUMP_VIA_HEAP);
	if (c->n_lists > n)
		c->lists[n].runtime = task_runtime(c, h);
}

/* A word equal to a vtable address: a task header if its owned-list links
 * point back at it (a freed cell's neighbours no longer do). Stops the scan
 * at the first live task: the list walk finds the others. */
static int is_header(struct ctx *c, uint64_t addr, uint64_t word, void *arg)
{
	struct scan *sc = arg;
	uint64_t h = addr - c->lay.hdr_vtable, prev, next, p2, n2, state, owned;
	size_t layout;

	if (!u64map__get(&sc->vtables, word, NULL) || dump_task_links(c, h, &prev, &next) ||
	    dump_rd64(c, h + c->lay.hdr_state, &state))
		return 0;
	if (next && (dump_task_links(c, next, &p2, &n2) || p2 != h))
		return 0;
	if (prev && (dump_task_links(c, prev, &p2, &n2) || n2 != h))
		return 0;
	/* both links null: the only task of its list, if its state is sane
	 * (reference count 1..64 in units of 1 << 6, tokio 1.24 state.rs) */
	if (!prev && !next && ((state >> 6) == 0 || (state >> 6) > 64))
		return 0;
	/* a sharded OwnedTasks is found from one of its tasks: a task of no
	 * such list (a blocking-pool worker) only if the scan finds none */
	if (sc->mode != SCAN_ONE_TASK) {
		/* every list (or every LocalSet's): noted, walked from its head */
		if (dump_owned_of(c, h, &owned, &layout))
			note_scanned_list(c, h, owned, layout);
		return 0;
	}
	if ((c->sharded && !dump_owned_of(c, h, &owned, &layout)) ||
	    (c->unverified && (dump_rd64(c, h + c->lay.hdr_owner, &owned) || !owned))) {
		if (!sc->fallback)
			sc->fallback = h;
		return 0;
	}
	return dump_add_task(c, h, 0, NULL, false) ? -ENOMEM : 1;
}

/* Fallback when the recording saw no task polled (every task idle): find
 * one task in memory. The vtables are the words of the executable's
 * read-only data equal to a poll copy's address; a task header holds one at
 * hdr_vtable. Scans the heap and anonymous mappings (thread arenas), at most
 * 1 GiB in all. */
static int scan(struct ctx *c, enum scan_mode mode)
{
	char path[64], line[4096], exe[PATH_MAX];
	struct scan sc = { .mode = mode };
	uint64_t budget = UINT64_C(1) << 30;
	size_t known = c->res->n;   /* a mixed program's async-task tasks, already known */
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", c->pid);
	snprintf(exe, sizeof(exe), "%s", c->res->target);
	for (int pass = 0; pass < 2 && !ret; pass++) {
		f = fopen(path, "re");
		if (!f)
			return -errno;
		while (!ret && fgets(line, sizeof(line), f)) {
			uint64_t start, end;
			char perms[8], name[PATH_MAX] = "";
			if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %*s %*s %*s %4095[^\n]", &start,
				   &end, perms, name) < 3)
				continue;
			if (pass == 0 && !strcmp(name, exe) && perms[0] == 'r' && perms[2] != 'x')
				ret = dump_scan_words(c, start, end, &budget, is_vtable, &sc);
			else if (pass == 1 && sc.vtables.len && perms[0] == 'r' && perms[1] == 'w' &&
				 (!name[0] || !strcmp(name, "[heap]")))
				ret = dump_scan_words(c, start, end, &budget, is_header, &sc);
			if (pass == 1 && c->res->n > known && mode == SCAN_ONE_TASK)
				break;
		}
		fclose(f);
	}
	if (mode == SCAN_ALL_LISTS) {
		c->res->heap_scanned = true;
		c->res->heap_scan_cut = !budget;
	}
	if (!ret && mode == SCAN_ONE_TASK && c->res->n == known && sc.fallback &&
	    dump_add_task(c, sc.fallback, 0, NULL, false))
		ret = -ENOMEM;
	u64map__clear(&sc.vtables);
	return ret;
}

int dump_scan_for_task(struct ctx *c)
{
	return scan(c, SCAN_ONE_TASK);
}

int dump_scan_lists(struct ctx *c, bool local_only)
{
	return scan(c, local_only ? SCAN_LOCAL_LISTS : SCAN_ALL_LISTS);
}

