/* async-executor's executors and async-task's tasks, read from a live
 * process without a probe (async_exec.h). Depends on libelf (the static
 * symbols), libdw (sym/dwarf_types), the dump engine's state (dump_int.h)
 * and the runtime profiles' wrapper tables (probe/profile.h: data only).
 *
 * Checked on Debian's async-task 4.3.0, async-executor 1.5.0, async-lock
 * 2.6.0, slab 0.4.4, async-global-executor 2.3.1, async-std 1.12.0 and
 * smol 1.3.0 (rustc 1.95, release with debug = true):
 * - async-task's raw task: Header { state, awaiter, vtable } (reordered by
 *   rustc: vtable @0, state @8), then the schedule fn S at offset_s, then
 *   the union of the future F and its output T at offset_f; the vtable's
 *   layout_info (&'static Option<TaskLayout>, kept "so that debuggers can
 *   decode raw task memory blobs", raw.rs) gives both offsets and the size;
 *   RawTask<F, T, S> (pointers to each part) is in DWARF per task type, its
 *   name from the DWARF name of the type's run copy, "run<F, T, S>";
 * - state bits (state.rs): SCHEDULED 1, RUNNING 2, COMPLETED 4, CLOSED 8,
 *   TASK 16, AWAITER 32, reference count in units of 1 << 8;
 * - Executor { state: OnceCell<Arc<State>> } (async_lock's OnceCell: state
 *   0 uninitialised, 1 initialising, 2 initialised; value), LocalExecutor
 *   { inner: Executor }; State { .., active: Mutex<Slab<Waker>> }: spawn
 *   inserts the task's waker (runnable.waker()), the task's wrapper future
 *   removes it when it ends (lib.rs 131-146);
 * - Slab { entries: Vec<Entry<T>>, len (occupied entries), next }, Entry
 *   Vacant(usize) | Occupied(T); a Waker's RawWaker.data is the task;
 * - a task's schedule fn (Executor::schedule's and LocalExecutor's closure)
 *   captures `state: Arc<State>`: a task leads to its executor.
 * Reading a task's state and chain is async_exec_sample.c's. */
#include "dump/async_exec.h"

#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dump/async_exec_int.h"
#include "dump/async_task.h"
#include "dump/dump_int.h"
#include "probe/profile.h"
#include "probe/threads.h"
#include "sym/demangle.h"
#include "sym/dwarf_names.h"
#include "util/glob.h"

/* The facts, by the versions they were checked on (above). */

/* Statics holding an executor: how each is reached. */
static const struct exec_static {
	const char *symbol;   /* demangled, hash removed */
	const char *needle;   /* in its mangled name, legacy or v0 (length-prefixed: skips
	                         the other symbols without demangling them) */
	const char *type;     /* its DWARF type */
	const char *why;      /* the source that declares it */
} statics[] = {
	{ "async_global_executor::executor::GLOBAL_EXECUTOR", "15GLOBAL_EXECUTOR",
	  "async_executor::Executor",
	  "async-global-executor 2.3.1 executor.rs: static GLOBAL_EXECUTOR: Executor<'_> "
	  "(async-std 1.12's spawn)" },
	{ "smol::spawn::spawn::GLOBAL", "6GLOBAL",
	  "async_lock::once_cell::OnceCell<async_executor::Executor>",
	  "smol 1.3.0 spawn.rs: static GLOBAL: OnceCell<Executor<'_>> in spawn()" },
};

/* Thread-locals holding an executor (std's thread_local! storage: its
 * `__RUST_STD_INTERNAL_VAL`, an STT_TLS symbol; the storage's types, tried
 * in order, with their state's Alive variant), and how each is said. */
static const struct exec_tls {
	const char *prefix, *suffix;   /* the symbol, demangled: starts and ends so */
	const char *needle;            /* as exec_static's */
	const char *name;              /* how the output names it */
	const char *types[2];
	const char *why;
} tls_vars[] = {
	{ "async_global_executor::executor::LOCAL_EXECUTOR::", "__RUST_STD_INTERNAL_VAL",
	  "14LOCAL_EXECUTOR", "async_global_executor::executor::LOCAL_EXECUTOR",
	  { "std::sys::thread_local::native::lazy::Storage<async_executor::LocalExecutor, !>",
	    "std::sys::thread_local::native::lazy::Storage<async_executor::LocalExecutor, ()>" },
	  "async-global-executor 2.3.1 executor.rs: thread_local! LOCAL_EXECUTOR: LocalExecutor "
	  "(async-std's spawn_local; every thread in its block_on, each worker); rustc 1.95's lazy "
	  "Storage { value, state: State::Alive }" },
};
static const char *const tls_alive = "Alive";
_Static_assert(sizeof(statics) / sizeof(statics[0]) == AX_N_STATICS, "AX_N_STATICS");
_Static_assert(sizeof(tls_vars) / sizeof(tls_vars[0]) == AX_N_TLS, "AX_N_TLS");

static const char *const type_header = "async_task::header::Header";
static const char *const type_vtable = "async_task::raw::TaskVTable";
static const char *const rawtask_prefix = "async_task::raw::RawTask";
static const char *const run_marker = "async_task::raw::RawTask";   /* in a run copy's symbol */
static const char *const once_cell_prefix = "async_lock::once_cell::OnceCell<";
static const char *const type_executor = "async_executor::Executor";
static const char *const type_local_executor = "async_executor::LocalExecutor";
static const char *const arc_prefix = "alloc::sync::Arc<";
static const char *const state_inner = "alloc::sync::ArcInner<async_executor::State>";
#define ONCE_INITIALIZED 2   /* async-lock 2.6 once_cell.rs: State::Initialized */

#define MAX_EXECUTORS  64
#define MAX_ENTRIES    (1u << 22)   /* slab entries read (64 MiB) */
#define SLAB_TRIES     3            /* reads of a slab that changed under the last one */
#define RETRY_NS       2000000L     /* between reads of a changing slab */

bool async_exec_present(const struct elf_image *img)
{
	for (size_t i = 0; i < img->n_syms; i++)
		if (strstr(img->syms[i].norm, run_marker) && strstr(img->syms[i].norm, "::run"))
			return true;
	return false;
}

/* DWARF */

const char *ax_die_name(Dwarf_Die *d)
{
	Dwarf_Attribute a;

	return dwarf_formstring(dwarf_attr_integrate(d, DW_AT_name, &a));
}

static bool starts(const char *s, const char *p)
{
	return s && !strncmp(s, p, strlen(p));
}

/* The type a pointer type DIE points at, defined. */
static bool pointee(struct dwarf_types *dt, Dwarf_Die *ptr, Dwarf_Die *out)
{
	Dwarf_Attribute a;
	Dwarf_Die raw;

	if (dwarf_tag(ptr) != DW_TAG_pointer_type ||
	    !dwarf_formref_die(dwarf_attr(ptr, DW_AT_type, &a), &raw) || dwarf_peel_type(&raw, out))
		return false;
	return task_lists_defined(dt, out);
}

/* The pointee of structure st's pointer member `name`. */
static bool member_pointee(struct dwarf_types *dt, Dwarf_Die *st, const char *name, Dwarf_Die *out)
{
	Dwarf_Die t;
	uint64_t off;

	return dwt_member(st, name, NULL, &off, &t) == 0 && pointee(dt, &t, out);
}

/* The generic argument `name` of a structure, defined. */
static bool template_arg(struct dwarf_types *dt, Dwarf_Die *st, const char *name, Dwarf_Die *out)
{
	Dwarf_Die child, raw;
	Dwarf_Attribute a;

	if (dwarf_child(st, &child))
		return false;
	do {
		const char *n;
		if (dwarf_tag(&child) != DW_TAG_template_type_parameter || !(n = ax_die_name(&child)) ||
		    strcmp(n, name))
			continue;
		return dwarf_formref_die(dwarf_attr(&child, DW_AT_type, &a), &raw) &&
		       !dwarf_peel_type(&raw, out) && task_lists_defined(dt, out);
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* The State's slab, from ArcInner<State> (a DIE): where each part is. */
static bool state_layout(struct async_exec *ax, Dwarf_Die *inner)
{
	Dwarf_Die state, active, cell, slab, vec;
	uint64_t data, a_off, c_off, s_off, dummy;

	if (ax->have_state)
		return true;
	if (dwt_member(inner, "data", NULL, &data, &state) || !task_lists_defined(ax->c->dt, &state) ||
	    dwt_member(&state, "active", NULL, &a_off, &active) ||
	    dwt_member(&active, "data", NULL, &c_off, &cell) ||
	    dwt_only_member(&cell, &s_off, &slab) || !task_lists_defined(ax->c->dt, &slab) ||
	    dwt_member(&slab, "entries", NULL, &ax->ent_ptr, &vec) ||
	    dwt_member(&slab, "len", NULL, &ax->slab_len, NULL) ||
	    !task_lists_defined(ax->c->dt, &vec) ||
	    dwt_member_deep(&vec, "pointer", &dummy, NULL) ||
	    dwt_member(&vec, "len", NULL, &ax->ent_len, NULL) ||
	    !template_arg(ax->c->dt, &vec, "T", &ax->entry) || dwt_byte_size(&ax->entry) <= 0)
		return false;
	ax->ent_len += ax->ent_ptr;
	ax->ent_ptr += dummy;
	ax->arc_data = data;
	ax->slab_off = a_off + c_off + s_off;   /* from the State (ArcInner + data) */
	ax->entry_size = (uint64_t)dwt_byte_size(&ax->entry);
	ax->have_state = true;
	return true;
}

enum {
	N_STATICS = sizeof(statics) / sizeof(statics[0]),
	N_TLS = sizeof(tls_vars) / sizeof(tls_vars[0]),
	N_FIXED = 2 + N_STATICS + 2 * N_TLS,
};

/* Header and TaskVTable (dies[0], dies[1]): their layouts. 0 or -ENODATA. */
static int task_layout(struct async_exec *ax, Dwarf_Die *dies, const int *found)
{
	Dwarf_Die lt;

	if (!found[0] || !found[1] ||
	    dwt_member(&dies[0], "state", NULL, &ax->hdr_state, NULL) ||
	    dwt_member(&dies[0], "vtable", NULL, &ax->hdr_vtable, NULL) ||
	    dwt_member(&dies[1], "run", NULL, &ax->vt_run, NULL) ||
	    dwt_member(&dies[1], "layout_info", NULL, &ax->vt_layout_info, &lt) ||
	    !pointee(ax->c->dt, &lt, &ax->opt_layout))
		return -ENODATA;
	return 0;
}

/* One pass over the units for every type: async-task's Header and
 * TaskVTable, the statics' types, and F and S of each copy (RawTask<F, T,
 * S>, named after the copy's DWARF subprogram "run<F, T, S>"). 0, -ENODATA
 * (no Header / TaskVTable), -ENOMEM. */
static int read_types(struct async_exec *ax, const struct elf_image *img)
{
	size_t n = N_FIXED + ax->n_copies;
	uint64_t *addrs = calloc(n, sizeof(*addrs));
	char **names = calloc(n, sizeof(*names)), **want = calloc(n, sizeof(*want));
	Dwarf_Die *dies = calloc(n, sizeof(*dies));
	int *found = calloc(n, sizeof(*found));
	size_t *sel = calloc(n, sizeof(*sel)), nw = N_FIXED;
	int ret = -ENOMEM;

	if (!addrs || !names || !want || !dies || !found || !sel)
		goto out;
	want[0] = (char *)type_header;
	want[1] = (char *)type_vtable;
	for (size_t k = 0; k < N_STATICS; k++)
		want[2 + k] = (char *)statics[k].type;
	for (size_t k = 0; k < N_TLS; k++)
		for (size_t j = 0; j < 2; j++)
			want[2 + N_STATICS + 2 * k + j] = (char *)tls_vars[k].types[j];
	for (size_t i = 0; i < ax->n_copies; i++)
		addrs[i] = ax->copies[i].addr;
	dwarf_subprogram_names_fd(elf_image__dwarf_fd(img), addrs, ax->n_copies, names);
	for (size_t i = 0; i < ax->n_copies; i++) {
		if (!names[i] || strncmp(names[i], "run<", 4))
			continue;
		if (asprintf(&want[nw], "%s%s", rawtask_prefix, names[i] + 3) < 0) {
			want[nw] = NULL;
			goto out;
		}
		sel[nw++] = i;
	}
	if (dwarf_types__find(ax->c->dt, (const char *const *)want, nw, dies, found) < 0)
		goto out;
	if ((ret = task_layout(ax, dies, found)))
		goto out;
	for (size_t k = 0; k < N_STATICS; k++) {
		ax->static_die[k] = dies[2 + k];
		ax->static_found[k] = found[2 + k];
	}
	for (size_t k = 0; k < N_TLS; k++)
		for (size_t j = 0; j < 2 && !ax->tls_found[k]; j++)
			if (found[2 + N_STATICS + 2 * k + j]) {
				ax->tls_die[k] = dies[2 + N_STATICS + 2 * k + j];
				ax->tls_found[k] = 1;
			}
	for (size_t k = N_FIXED; k < nw; k++) {
		struct ax_copy *cp = &ax->copies[sel[k]];
		Dwarf_Die st, arc, inner;
		if (!found[k])
			continue;
		cp->typed = member_pointee(ax->c->dt, &dies[k], "future", &cp->fut);
		/* the executor's closure: state: Arc<State> */
		if (member_pointee(ax->c->dt, &dies[k], "schedule", &st) &&
		    dwt_member_deep(&st, "pointer", &cp->sched_arc_off, &arc) == 0 &&
		    pointee(ax->c->dt, &arc, &inner) &&
		    starts(dwarf_types__name(ax->c->dt, &inner), state_inner) && state_layout(ax, &inner))
			cp->sched = true;
	}
	ret = 0;
out:
	for (size_t i = 0; names && i < ax->n_copies; i++)
		free(names[i]);
	for (size_t k = N_FIXED; want && k < nw; k++)
		free(want[k]);
	free(names);
	free(want);
	free(addrs);
	free(dies);
	free(found);
	free(sel);
	return ret;
}

struct async_exec *async_exec__new(struct ctx *c, const struct elf_image *img,
				   const struct as_probe *probes, size_t n, const char **why)
{
	struct async_exec *ax = calloc(1, sizeof(*ax));
	int err;

	*why = NULL;
	if (!ax)
		return NULL;
	ax->c = c;
	for (size_t i = 0; i < n; i++) {
		const struct as_probe *p = &probes[i];
		struct ax_copy *cp;
		if (p->role != AS_ROLE_POLL || !p->symbol || !strstr(p->symbol, run_marker) ||
		    u64map__get(&ax->copy_by_addr, p->addr, NULL))
			continue;
		cp = realloc(ax->copies, (ax->n_copies + 1) * sizeof(*cp));
		if (!cp)
			goto nomem;
		ax->copies = cp;
		cp = &cp[ax->n_copies];
		memset(cp, 0, sizeof(*cp));
		cp->addr = p->addr;
		if (p->future && !(cp->future = strdup(p->future)))
			goto nomem;
		if (u64map__set(&ax->copy_by_addr, p->addr, ++ax->n_copies))
			goto nomem;
	}
	if (!ax->n_copies) {
		*why = "no async-task run function in the probe plan";
		errno = ENOENT;
		goto fail;
	}
	err = read_types(ax, img);
	if (err == -ENODATA) {
		*why = "the binary's DWARF does not describe async-task's Header and TaskVTable "
		       "(layout_info)";
		errno = ENODATA;
		goto fail;
	}
	if (err)
		goto nomem;
	return ax;
nomem:
	errno = ENOMEM;
fail:
	async_exec__free(ax);
	return NULL;
}

void async_exec__free(struct async_exec *ax)
{
	if (!ax)
		return;
	for (size_t i = 0; i < ax->n_copies; i++)
		free(ax->copies[i].future);
	free(ax->copies);
	free(ax->vts);
	free(ax->snap);
	u64map__clear(&ax->copy_by_addr);
	u64map__clear(&ax->vt_by_addr);
	u64map__clear(&ax->owned);
	u64map__clear(&ax->tried);
	free(ax);
}

bool async_exec__owns(const struct async_exec *ax, uint64_t header)
{
	return ax && u64map__get(&ax->owned, header, NULL);
}

/* Tasks */

int ax_rd64(struct async_exec *ax, uint64_t addr, uint64_t *v)
{
	return procmem_read(&ax->c->pm, addr, v, sizeof(*v));
}

/* The vtable at vt: its copy and layout, read once (static data). NULL
 * when it is no task vtable of a known type. */
static struct ax_vt *vtable_of(struct async_exec *ax, uint64_t vt)
{
	struct ax_vt *v, nv = { 0 };
	uint64_t idx, run, li, o;
	struct dwt_variant var;
	Dwarf_Die tl;
	const char *vn;

	if (u64map__get(&ax->vt_by_addr, vt, &idx))
		return idx ? &ax->vts[idx - 1] : NULL;
	if (!vt || (vt & 7) || ax_rd64(ax, vt + ax->vt_run, &run))
		return NULL;   /* unreadable: not cached (a torn header's garbage) */
	if (run > ax->c->bias && u64map__get(&ax->copy_by_addr, run - ax->c->bias, &idx))
		nv.copy = (size_t)idx;
	/* layout_info: &'static Option<TaskLayout> */
	if (nv.copy && ax_rd64(ax, vt + ax->vt_layout_info, &li) == 0 &&
	    dwt_read_variant(&ax->opt_layout, li, procmem_read, &ax->c->pm, &var) == 0 &&
	    (vn = ax_die_name(&var.member)) && !strcmp(vn, "Some") &&
	    dwt_member(&var.type, "__0", NULL, &o, &tl) == 0) {
		uint64_t so, fo, zo, base = li + var.offset + o;
		if (dwt_member(&tl, "offset_s", NULL, &so, NULL) == 0 &&
		    dwt_member(&tl, "offset_f", NULL, &fo, NULL) == 0 &&
		    dwt_member_deep(&tl, "size", &zo, NULL) == 0 && ax_rd64(ax, base + so, &nv.off_s) == 0 &&
		    ax_rd64(ax, base + fo, &nv.off_f) == 0 && ax_rd64(ax, base + zo, &nv.size) == 0 &&
		    nv.off_f < nv.size && nv.off_s < nv.size && nv.size < (UINT64_C(1) << 32))
			nv.layout = true;
	}
	if (!nv.copy) {
		u64map__set(&ax->vt_by_addr, vt, 0);   /* ENOMEM: read again next time */
		return NULL;
	}
	v = realloc(ax->vts, (ax->n_vts + 1) * sizeof(*v));
	if (!v)
		return NULL;
	ax->vts = v;
	ax->vts[ax->n_vts] = nv;
	if (u64map__set(&ax->vt_by_addr, vt, ++ax->n_vts))
		return NULL;
	return &ax->vts[ax->n_vts - 1];
}

/* The task at h: its vtable entry, or NULL when it is no task of a known
 * type. */
struct ax_vt *ax_task_vt(struct async_exec *ax, uint64_t h)
{
	uint64_t vt;

	if (!h || (h & 7) || ax_rd64(ax, h + ax->hdr_vtable, &vt))
		return NULL;
	return vtable_of(ax, vt);
}

/* The executor State the task at h is scheduled on (its schedule closure's
 * Arc<State>), or 0. */
static uint64_t task_executor(struct async_exec *ax, uint64_t h)
{
	struct ax_vt *v = ax_task_vt(ax, h);
	const struct ax_copy *cp;
	uint64_t inner;

	if (!v || !v->layout || !(cp = &ax->copies[v->copy - 1])->sched ||
	    ax_rd64(ax, h + v->off_s + cp->sched_arc_off, &inner) || !inner || (inner & 7))
		return 0;
	return inner + ax->arc_data;
}

/* Executors */

/* One slab read: the tasks of the State at st into *out (malloc'd, *n of
 * them). Returns 1 complete (every entry a task of a known type, as many
 * as the slab counts), 0 not (*why), -ENOMEM. */
static int slab_tasks(struct async_exec *ax, uint64_t st, uint64_t **out, size_t *n,
		      const char **why)
{
	uint64_t ptr, len, count, *hs = NULL;
	uint8_t *buf = NULL;
	struct procmem pm = ax->c->pm;
	int ret = 0;

	*out = NULL;
	*n = 0;
	*why = NULL;
	for (int try = 0; try < SLAB_TRIES; try++) {
		size_t occupied = 0, k = 0;
		bool unknown = false;
		free(buf);
		free(hs);
		buf = NULL;
		hs = NULL;
		if (ax_rd64(ax, st + ax->slab_off + ax->ent_ptr, &ptr) ||
		    ax_rd64(ax, st + ax->slab_off + ax->ent_len, &len) ||
		    ax_rd64(ax, st + ax->slab_off + ax->slab_len, &count)) {
			*why = "the executor's task slab is unreadable";
			return 0;
		}
		if (len > MAX_ENTRIES) {
			*why = "the executor's task slab is larger than a dump reads (4M entries)";
			return 0;
		}
		if (count > len) {
			*why = "the executor's task slab does not look like one";
			return 0;
		}
		if (!len)
			return 1;
		if (!(buf = malloc(len * ax->entry_size)) || !(hs = calloc(len, sizeof(*hs)))) {
			ret = -ENOMEM;
			goto out;
		}
		if (procmem_read_raw(ax->c->pid, ptr, buf, len * ax->entry_size)) {
			*why = "the executor's task slab is unreadable";
			goto out;
		}
		pm.snap = buf;
		pm.snap_addr = ptr;
		pm.snap_len = len * ax->entry_size;
		for (uint64_t i = 0; i < len; i++) {
			struct dwt_variant v;
			const char *vn;
			uint64_t wo, data;
			uint64_t at = ptr + i * ax->entry_size;
			if (dwt_read_variant(&ax->entry, at, procmem_read, &pm, &v) ||
			    !(vn = ax_die_name(&v.member))) {
				unknown = true;
				continue;
			}
			if (strcmp(vn, "Occupied"))
				continue;
			occupied++;
			if (dwt_member_deep(&v.type, "data", &wo, NULL) ||
			    procmem_read(&pm, at + v.offset + wo, &data, sizeof(data)) ||
			    !ax_task_vt(ax, data)) {
				unknown = true;
				continue;
			}
			hs[k++] = data;
		}
		if (occupied == count && !unknown) {
			*out = hs;
			*n = k;
			hs = NULL;
			ret = 1;
			goto out;
		}
		/* changed under the read (a spawn, a task ending): again; the last
		 * read stands */
		*out = hs;
		*n = k;
		hs = NULL;
		*why = unknown ? "an entry of the executor's task slab is no task of a known type"
			       : "the executor's task slab changed while it was read";
		if (try + 1 < SLAB_TRIES) {
			free(*out);
			*out = NULL;
			*n = 0;
			struct timespec ts = { 0, RETRY_NS };
			nanosleep(&ts, NULL);
		}
	}
out:
	free(buf);
	free(hs);
	return ret;
}

/* What a walk must find to be kept (an executor reached from a task found
 * some other way than through it): the task (h), or one of the live
 * candidates of a heap scan that led to it (cand: header -> State), or,
 * with finished, none when the slab was read whole (only finished tasks led
 * to it: an executor whose tasks all ended). NULL: no condition. */
struct exec_must {
	uint64_t h;
	const struct u64map *cand;
	bool finished;
};

/* Walks the executor at st (once: a State tried is never read again),
 * found as via says (source: the variable's name, or NULL; th: the thread
 * whose thread-local holds it, or NULL), if it meets must. Returns 1
 * walked, 0 not kept, -ENOMEM. */
static int walk_executor(struct async_exec *ax, uint64_t st, enum dump_via via, const char *source,
			 const struct exec_must *must, const struct proc_thread *th)
{
	struct dump_result *r = ax->c->res;
	struct dump_list *l;
	uint64_t *hs = NULL;
	size_t n = 0;
	const char *why = NULL;
	int complete, ret = 1;
	bool has = !must;
	uint64_t v;

	if (!st || (st & 7) || !ax->have_state || u64map__get(&ax->tried, st, NULL))
		return 0;
	if (ax->n_executors == MAX_EXECUTORS) {
		r->walk_cut = true;
		if (!r->list_note)
			r->list_note = "more executors than a dump walks";
		return 0;
	}
	if (u64map__set(&ax->tried, st, 1))
		return -ENOMEM;
	complete = slab_tasks(ax, st, &hs, &n, &why);
	if (complete < 0)
		return complete;
	for (size_t i = 0; i < n && !has; i++)
		has = hs[i] == must->h ||
		      (must->cand && u64map__get(must->cand, hs[i], &v) && v == st);
	if (!has && !(must->finished && complete == 1)) {
		free(hs);
		return 0;   /* a stale candidate's executor: its task is not there */
	}
	ax->n_executors++;
	ax->c->cur_list = r->n_task_lists + 1;   /* added below */
	for (size_t i = 0; i < n; i++)
		if (dump_add_task(ax->c, hs[i], 0, NULL, false) || u64map__set(&ax->owned, hs[i], 1)) {
			ax->c->cur_list = 0;
			ret = -ENOMEM;
			goto out;
		}
	ax->c->cur_list = 0;
	if (!(l = dump_list_add(ax->c))) {
		ret = -ENOMEM;
		goto out;
	}
	l->addr = st;
	l->runtime = "executor";
	l->via = via;
	l->source = source;
	if (th) {
		l->tid = th->tid;
		snprintf(l->comm, sizeof(l->comm), "%s", th->comm);
	}
	l->shards = 1;
	l->walked = complete == 1;
	l->tasks = n;
	l->complete = complete == 1;
	l->note = l->complete ? NULL : why;
	r->lists++;
	if (!l->complete) {
		r->walk_cut = true;
		if (!r->list_note)
			r->list_note = why;
	}
out:
	free(hs);
	return ret;
}

/* The State of the executor at addr, a value of type die (an Executor, a
 * LocalExecutor, a OnceCell of one, the Arc<State>), or 0 (not yet
 * initialised, unreadable, or a type not known). */
static uint64_t executor_state(struct async_exec *ax, uint64_t addr, Dwarf_Die *die, int depth)
{
	const char *name = dwarf_types__name(ax->c->dt, die);
	Dwarf_Die t, ptr, inner;
	uint64_t off, v;

	if (depth > 6 || !name)
		return 0;
	if (starts(name, once_cell_prefix)) {
		uint64_t so, vo;
		if (dwt_member(die, "state", NULL, &so, NULL) || dwt_member(die, "value", NULL, &vo, NULL) ||
		    !template_arg(ax->c->dt, die, "T", &t) || ax_rd64(ax, addr + so, &v) ||
		    v != ONCE_INITIALIZED)
			return 0;
		/* MaybeUninit<T>: a union, T at its start */
		return executor_state(ax, addr + vo, &t, depth + 1);
	}
	if (!strcmp(name, type_local_executor) || starts(name, "async_executor::LocalExecutor<")) {
		if (dwt_member(die, "inner", NULL, &off, &t) || !task_lists_defined(ax->c->dt, &t))
			return 0;
		return executor_state(ax, addr + off, &t, depth + 1);
	}
	if (!strcmp(name, type_executor) || starts(name, "async_executor::Executor<")) {
		if (dwt_member(die, "state", NULL, &off, &t) || !task_lists_defined(ax->c->dt, &t))
			return 0;
		return executor_state(ax, addr + off, &t, depth + 1);
	}
	if (starts(name, arc_prefix)) {
		if (dwt_member_deep(die, "pointer", &off, &ptr) || !pointee(ax->c->dt, &ptr, &inner) ||
		    !starts(dwarf_types__name(ax->c->dt, &inner), state_inner) ||
		    !state_layout(ax, &inner) || ax_rd64(ax, addr + off, &v) || !v || (v & 7))
			return 0;
		return v + ax->arc_data;
	}
	return 0;
}

/* Where the executable's thread-locals are: its TLS block's distance below
 * a thread's thread pointer (x86-64 variant II, glibc's static TLS for the
 * executable, as in rt_context.c), and each TLS variable's offset in it. */
struct tls_syms {
	bool have;                  /* a PT_TLS segment */
	uint64_t tls_off;
	uint64_t value[sizeof(tls_vars) / sizeof(tls_vars[0])];
	bool found[sizeof(tls_vars) / sizeof(tls_vars[0])];
};

static bool ends(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

/* A TLS symbol of the table: its offset into tl. */
static void tls_symbol(const char *raw, uint64_t value, struct tls_syms *tl)
{
	for (size_t k = 0; k < sizeof(tls_vars) / sizeof(tls_vars[0]); k++) {
		char *dm;
		if (tl->found[k] || !strstr(raw, tls_vars[k].needle) || !(dm = sym_demangle(raw)))
			continue;
		if (starts(dm, tls_vars[k].prefix) && ends(dm, tls_vars[k].suffix)) {
			tl->value[k] = value;
			tl->found[k] = true;
		}
		free(dm);
	}
}

/* The statics of the table in the executable's symbol table: their
 * addresses (ELF virtual), found[i] set; its thread-locals into tl. */
struct statics_seen {
	uint64_t *addr;
	bool *found;
	struct tls_syms *tl;
};

static int static_symbol(const struct elf_symbol *sym, void *arg)
{
	struct statics_seen *ss = arg;
	char *dm;

	if (sym->type == STT_TLS)
		tls_symbol(sym->name, sym->value, ss->tl);
	if (sym->type != STT_OBJECT || !sym->value)
		return 0;
	for (size_t k = 0; k < sizeof(statics) / sizeof(statics[0]); k++) {
		if (ss->found[k] || !strstr(sym->name, statics[k].needle))
			continue;
		if (!(dm = sym_demangle(sym->name)))
			continue;
		if (!strcmp(dm, statics[k].symbol)) {
			ss->addr[k] = sym->value;
			ss->found[k] = true;
		}
		free(dm);
	}
	return 0;
}

static void find_statics(const char *path, uint64_t *addr, bool *found, struct tls_syms *tl)
{
	struct statics_seen ss = { addr, found, tl };
	uint64_t tls_off = UINT64_MAX;

	elf_symbols_each(path, static_symbol, &ss, &tls_off);
	/* thread-locals only with the TLS block they are offsets into */
	tl->have = tls_off != UINT64_MAX;
	tl->tls_off = tl->have ? tls_off : 0;
	if (!tl->have)
		memset(tl->found, 0, sizeof(tl->found));
}

/* The std thread_local! storage at addr, of type die: the address of its
 * value when its state is Alive (*val_type its type), else 0. */
static uint64_t tls_value(struct async_exec *ax, Dwarf_Die *die, uint64_t addr, Dwarf_Die *val_type)
{
	Dwarf_Die st, inner;
	struct dwt_variant v;
	uint64_t so, vo, o;
	const char *vn;

	if (dwt_member(die, "state", NULL, &so, &st) || dwt_member(die, "value", NULL, &vo, NULL) ||
	    !template_arg(ax->c->dt, die, "T", val_type))
		return 0;
	/* Cell<State<..>> { value: UnsafeCell { value: State } } */
	for (int d = 0; d < 4 && !dwt_has_variants(&st); d++) {
		if (dwt_only_member(&st, &o, &inner))
			return 0;
		so += o;
		st = inner;
	}
	if (dwt_read_variant(&st, addr + so, procmem_read, &ax->c->pm, &v) ||
	    !(vn = ax_die_name(&v.member)) || strcmp(vn, tls_alive))
		return 0;
	return addr + vo;   /* MaybeUninit<T>: T at its start */
}

/* Every thread's copy of the table's thread-locals (the threads' thread
 * pointers from the BPF task iterator). Returns the executors walked. */
static int from_thread_locals(struct async_exec *ax, const struct tls_syms *tl)
{
	struct proc_thread *th = NULL;
	size_t n_th = 0;
	char err[256];
	int walked = 0, ret = 0;
	bool any = false;

	for (size_t k = 0; k < N_TLS; k++)
		any |= tl->found[k] && ax->tls_found[k];
	(void)err;
	if (!any || dump_read_threads(ax->c, &th, &n_th))
		return 0;   /* the heap scan finds their tasks */
	for (size_t k = 0; k < N_TLS && ret >= 0; k++) {
		if (!tl->found[k] || !ax->tls_found[k])
			continue;
		for (size_t i = 0; i < n_th && ret >= 0; i++) {
			Dwarf_Die vt;
			uint64_t at, val, st;
			if (!th[i].fsbase || th[i].fsbase < tl->tls_off)
				continue;
			at = th[i].fsbase - tl->tls_off + tl->value[k];
			if (!(val = tls_value(ax, &ax->tls_die[k], at, &vt)) ||
			    !(st = executor_state(ax, val, &vt, 0)))
				continue;
			ret = walk_executor(ax, st, DUMP_VIA_TLS, tls_vars[k].name, NULL, &th[i]);
			walked += ret > 0;
		}
	}
	free(th);
	return ret < 0 ? ret : walked;
}

static int from_statics(struct async_exec *ax, const struct elf_image *img)
{
	uint64_t addr[N_STATICS] = { 0 };
	bool found[N_STATICS] = { false };
	struct tls_syms tl = { 0 };
	int walked = 0, r;

	find_statics(img->path, addr, found, &tl);
	for (size_t k = 0; k < N_STATICS; k++) {
		uint64_t st;
		if (!found[k] || !ax->static_found[k])
			continue;
		st = executor_state(ax, addr[k] + ax->c->bias, &ax->static_die[k], 0);
		r = walk_executor(ax, st, DUMP_VIA_STATIC, statics[k].symbol, NULL, NULL);
		if (r < 0)
			return r;
		walked += r;
	}
	if ((r = from_thread_locals(ax, &tl)) < 0)
		return r;
	return walked + r;
}

/* The tasks already known (polled while tracing, or the caller's): their
 * executors. */
static int from_known(struct async_exec *ax)
{
	struct dump_result *r = ax->c->res;
	size_t known = r->n;
	int walked = 0;

	for (size_t i = 0; i < known; i++) {
		uint64_t h = r->tasks[i].header;
		int w;
		if (!ax_task_vt(ax, h))
			continue;
		if (u64map__set(&ax->owned, h, 1))
			return -ENOMEM;
		w = walk_executor(ax, task_executor(ax, h), DUMP_VIA_POLL, NULL,
				  &(struct exec_must){ .h = h }, NULL);
		if (w < 0)
			return w;
		walked += w;
	}
	return walked;
}

/* The heap scan: task vtables are the words of the executable's read-only
 * data equal to a run copy's address (at the vtable's run slot); a task
 * header holds one at hdr_vtable, and its schedule closure its executor's
 * State. First every candidate's State (a candidate: a live or finished
 * task of a known type, not found yet), then each State read once: kept
 * when its slab holds a live candidate, or when only finished tasks led to
 * it and its slab reads whole. A State whose Arc counts are not those of a
 * live Arc (freed memory) is not read. */
#define MAX_HEAP_STATES 256

struct hscan {
	struct async_exec *ax;
	struct u64map vtables;
	struct u64map cand;       /* live candidate header -> its State */
	struct {
		uint64_t st;
		bool live, finished;
	} states[MAX_HEAP_STATES];
	size_t n_states;
	bool states_cut;
};

static int is_vtable(struct ctx *c, uint64_t addr, uint64_t word, void *arg)
{
	struct hscan *hs = arg;

	if (word <= c->bias || !u64map__get(&hs->ax->copy_by_addr, word - c->bias, NULL) ||
	    addr < hs->ax->vt_run)
		return 0;
	return u64map__set(&hs->vtables, addr - hs->ax->vt_run, 1) ? -ENOMEM : 0;
}

/* A live Arc's counts: strong and weak (1 while strong) in a sane range. */
static bool arc_alive(struct async_exec *ax, uint64_t st)
{
	uint64_t w[2];

	if (ax->arc_data < 16 || procmem_read(&ax->c->pm, st - ax->arc_data, w, sizeof(w)))
		return false;
	return w[0] >= 1 && w[0] < (UINT64_C(1) << 32) && w[1] >= 1 && w[1] < (UINT64_C(1) << 32);
}

static int is_header(struct ctx *c, uint64_t addr, uint64_t word, void *arg)
{
	struct hscan *hs = arg;
	struct async_exec *ax = hs->ax;
	uint64_t h = addr - ax->hdr_vtable, state, st;
	bool live;
	size_t k;

	(void)c;
	if (!u64map__get(&hs->vtables, word, NULL) || u64map__get(&ax->owned, h, NULL) ||
	    ax_rd64(ax, h + ax->hdr_state, &state) || state < ASYNC_TASK_REFERENCE ||
	    !(st = task_executor(ax, h)) || u64map__get(&ax->tried, st, NULL))
		return 0;
	live = !(state & (ASYNC_TASK_COMPLETED | ASYNC_TASK_CLOSED));
	for (k = 0; k < hs->n_states && hs->states[k].st != st; k++)
		;
	if (k == hs->n_states) {
		if (k == MAX_HEAP_STATES || !arc_alive(ax, st)) {
			hs->states_cut |= k == MAX_HEAP_STATES;
			return 0;
		}
		hs->states[hs->n_states++].st = st;
		hs->states[k].live = hs->states[k].finished = false;
	}
	hs->states[k].live |= live;
	hs->states[k].finished |= !live;
	return live && u64map__set(&hs->cand, h, st) ? -ENOMEM : 0;
}

static int from_heap(struct async_exec *ax)
{
	struct ctx *c = ax->c;
	struct hscan *hs = calloc(1, sizeof(*hs));
	char path[64], line[4096];
	uint64_t budget = UINT64_C(1) << 30;
	int ret = 0, walked = 0;

	if (!hs)
		return -ENOMEM;
	hs->ax = ax;
	snprintf(path, sizeof(path), "/proc/%d/maps", c->pid);
	for (int pass = 0; pass < 2 && !ret; pass++) {
		FILE *f = fopen(path, "re");
		if (!f)
			break;
		while (!ret && fgets(line, sizeof(line), f)) {
			uint64_t start, end;
			char perms[8], name[PATH_MAX] = "";
			if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %*s %*s %*s %4095[^\n]", &start,
				   &end, perms, name) < 3)
				continue;
			if (pass == 0 && !strcmp(name, c->res->target) && perms[0] == 'r' && perms[2] != 'x')
				ret = dump_scan_words(c, start, end, &budget, is_vtable, hs);
			else if (pass == 1 && hs->vtables.len && perms[0] == 'r' && perms[1] == 'w' &&
				 (!name[0] || !strcmp(name, "[heap]")))
				ret = dump_scan_words(c, start, end, &budget, is_header, hs);
		}
		fclose(f);
	}
	for (size_t k = 0; k < hs->n_states && ret >= 0; k++) {
		struct exec_must m = { .cand = &hs->cand, .finished = hs->states[k].finished };
		ret = walk_executor(ax, hs->states[k].st, DUMP_VIA_HEAP, NULL, &m, NULL);
		walked += ret > 0;
	}
	if (ret >= 0 && (hs->states_cut || !budget)) {
		c->res->walk_cut = true;
		if (!c->res->list_note)
			c->res->list_note = hs->states_cut ? "more executors in the heap than a dump reads"
							    : "the heap scan stopped at its budget (1 GiB)";
	}
	u64map__clear(&hs->vtables);
	u64map__clear(&hs->cand);
	free(hs);
	return ret < 0 ? ret : walked;
}

int async_exec__discover(struct async_exec *ax, const struct elf_image *img)
{
	int a, b, h;

	if ((a = from_statics(ax, img)) < 0 || (b = from_known(ax)) < 0 || (h = from_heap(ax)) < 0)
		return -ENOMEM;
	return a + b + h;
}

int async_exec_open(struct ctx *c, const struct elf_image *img, const struct as_probe *probes,
		    size_t n, bool required, struct async_exec **ax, char *err, size_t errlen)
{
	const char *why = NULL;

	*ax = NULL;
	if (!async_exec_present(img))
		return 0;
	*ax = async_exec__new(c, img, probes, n, &why);
	if (!*ax && errno != ENOMEM) {
		if (!required) {
			if (!c->res->list_note)
				c->res->list_note = why;
			return 0;
		}
		snprintf(err, errlen, "%s: %s: rebuild with debug = true in its Cargo profile",
			 c->res->target, why ? why : "its async-task tasks cannot be read");
		return -ENODATA;
	}
	if (!*ax) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

bool async_exec_is_task(struct async_exec *ax, uint64_t header)
{
	return ax && ax_task_vt(ax, header);
}

size_t async_exec_others(struct async_exec *ax, const struct dump_result *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n; i++)
		n += !async_exec_is_task(ax, r->tasks[i].header);
	return n;
}
