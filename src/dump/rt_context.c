/* Tokio's thread-local CONTEXT from outside the process (rt_context.h).
 * Depends on libelf, libdw (sym/dwarf_types) and dump/task_lists only.
 *
 * Checked on tokio 1.24.2 and 1.53.1 (rustc 1.8x, glibc, x86-64):
 * - the symbol: CONTEXT's `__RUST_STD_INTERNAL_VAL` (std's thread_local!
 *   storage), an STT_TLS symbol, legacy-mangled
 *   _ZN5tokio7runtime7context7CONTEXT...__RUST_STD_INTERNAL_VAL17h<hash>E;
 * - its type: std's lazy::Storage<Context, ()> { value: UnsafeCell<
 *   MaybeUninit<Context>>, state: Cell<State<()>> (a variant part:
 *   Uninitialized, Alive, Destroyed) } in 1.24 (tokio_thread_local! without
 *   const), eager::Storage<Context> { val: UnsafeCell<Context>, state:
 *   Cell<State> (an enumeration: Initial, Alive, Destroyed) } in 1.53;
 *   the value is read only when the state says Alive;
 * - the handle: Context.handle (1.24) or Context.current.handle (1.53,
 *   current::HandleCell), a RefCell<Option<scheduler::Handle>>, Handle an
 *   enum CurrentThread(Arc<current_thread::Handle>) | MultiThread(Arc<
 *   multi_thread::Handle>);
 * - where a thread's copy is: x86-64 TLS variant II, the executable is
 *   module 1 with static TLS right below the thread pointer:
 *   fsbase - tlsoffset + st_value, tlsoffset = roundup(p_memsz - firstbyte,
 *   p_align) + firstbyte, firstbyte = -(p_vaddr & (p_align - 1)) &
 *   (p_align - 1) (glibc's _dl_determine_tlsoffset; checked against gdb's
 *   address of the symbol on both versions). */
#include "dump/rt_context.h"

#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sym/elf_image.h"

/* The facts, by the versions they were checked on. */
static const char *const sym_prefix = "_ZN5tokio7runtime7context7CONTEXT";
static const char *const sym_part = "__RUST_STD_INTERNAL_VAL";
static const char *const context_type = "tokio::runtime::context::Context";
/* the handle's RefCell below Context, tried in order */
static const char *const handle_paths[][3] = {
	{ "current", "handle", NULL },   /* 1.53.1 (current::HandleCell, since 1.26) */
	{ "handle", NULL, NULL },        /* 1.24.2 */
};
/* scheduler::Handle's variants */
static const struct { const char *variant, *kind; } kinds[] = {
	{ "MultiThread", "multi_thread" },
	{ "CurrentThread", "current_thread" },
	{ "MultiThreadAlt", "multi_thread_alt" },   /* tokio_unstable, 1.31 .. 1.47 */
};

#define MAX_STORAGE 4096

struct rt_context {
	struct dwarf_types *dt;
	uint64_t sym_value;       /* st_value: the offset in the TLS block */
	uint64_t tls_off;         /* tlsoffset: the block's distance below fsbase */
	uint64_t size;            /* the storage's size */
	bool has_state;
	uint64_t state_off;
	Dwarf_Die state;          /* the State type (enumeration or variant part) */
	uint64_t handle_off;      /* Option<scheduler::Handle> in the storage */
	uint64_t borrow_off;      /* its RefCell's borrow flag */
	Dwarf_Die option;         /* Option<scheduler::Handle> */
	char *linkage;            /* the symbol's name */
	int task_id_err;          /* 0: task_id holds current_task_id's place */
	bool has_entered;         /* Context.runtime (Cell<EnterRuntime>) described: */
	uint64_t entered_off;
	Dwarf_Die entered;        /* EnterRuntime */
	struct rt_task_id_loc task_id;
};

/* ELF: the TLS symbol and PT_TLS. */
static int tls_symbol(const struct elf_symbol *sym, void *arg)
{
	struct rt_context *rc = arg;

	if (sym->type != STT_TLS || strncmp(sym->name, sym_prefix, strlen(sym_prefix)) ||
	    !strstr(sym->name, sym_part))
		return 0;
	if (!(rc->linkage = strdup(sym->name)))
		return -ENOMEM;
	rc->sym_value = sym->value;
	return 1;
}

static int find_symbol(struct rt_context *rc, const char *path)
{
	uint64_t tls_off;
	int ret = elf_symbols_each(path, tls_symbol, rc, &tls_off);

	if (ret < 0 && ret != -ENOENT)
		return ret;
	if (ret != 1 || tls_off == UINT64_MAX)
		return -ENOENT;
	rc->tls_off = tls_off;
	return 0;
}

/* DWARF: the variable named rc->linkage with a location. */
static const char *die_name(Dwarf_Die *d)
{
	Dwarf_Attribute a;

	return dwarf_formstring(dwarf_attr_integrate(d, DW_AT_name, &a));
}

static bool find_var(struct rt_context *rc, Dwarf_Die *parent, int depth, Dwarf_Die *out)
{
	static const char *const path[] = { "tokio", "runtime", "context", "CONTEXT" };
	Dwarf_Die child;

	if (dwarf_child(parent, &child))
		return false;
	do {
		int tag = dwarf_tag(&child);
		const char *n;
		Dwarf_Attribute a;
		if (tag == DW_TAG_namespace && depth < 8) {
			n = die_name(&child);
			if (depth < 4 && (!n || strcmp(n, path[depth])))
				continue;
			if (find_var(rc, &child, depth + 1, out))
				return true;
		} else if (tag == DW_TAG_variable && depth >= 4 && dwarf_hasattr(&child, DW_AT_location)) {
			n = dwarf_formstring(dwarf_attr(&child, DW_AT_linkage_name, &a));
			if (n && !strcmp(n, rc->linkage)) {
				*out = child;
				return true;
			}
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

static bool defined_type(struct rt_context *rc, Dwarf_Die *ref_holder, Dwarf_Die *out)
{
	Dwarf_Attribute a;
	Dwarf_Die raw;

	if (!dwarf_formref_die(dwarf_attr(ref_holder, DW_AT_type, &a), &raw) ||
	    dwarf_peel_type(&raw, out))
		return false;
	return task_lists_defined(rc->dt, out);
}

/* The member path below st to a member of type `name` (through structures
 * and unions: UnsafeCell, MaybeUninit, ManuallyDrop), depth <= 6. */
static bool find_typed(struct rt_context *rc, Dwarf_Die *st, const char *name, int depth,
		       uint64_t *off, Dwarf_Die *out)
{
	Dwarf_Die child;

	if (depth > 6 || dwarf_child(st, &child))
		return false;
	do {
		Dwarf_Attribute a;
		Dwarf_Word loc = 0;
		Dwarf_Die t;
		uint64_t below;
		const char *tn;
		if (dwarf_tag(&child) != DW_TAG_member || !defined_type(rc, &child, &t))
			continue;
		if (dwarf_attr(&child, DW_AT_data_member_location, &a) && dwarf_formudata(&a, &loc))
			continue;
		tn = dwarf_types__name(rc->dt, &t);
		if (tn && !strcmp(tn, name)) {
			*off = loc;
			*out = t;
			return true;
		}
		if ((dwarf_tag(&t) == DW_TAG_structure_type || dwarf_tag(&t) == DW_TAG_union_type) &&
		    find_typed(rc, &t, name, depth + 1, &below, out)) {
			*off = loc + below;
			return true;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* Peels one-member wrappers (Cell, UnsafeCell) off t, adding offsets, until
 * a type with variants or an enumeration. */
static bool peel_wrappers(Dwarf_Die *t, uint64_t *off)
{
	for (int d = 0; d < 8; d++) {
		uint64_t o;
		Dwarf_Die inner;
		if (dwarf_tag(t) == DW_TAG_enumeration_type || dwt_has_variants(t))
			return true;
		if (dwt_only_member(t, &o, &inner))
			return false;
		*off += o;
		*t = inner;
	}
	return false;
}

/* A reader of one value: what the discriminant of a variant part reads as,
 * to learn which variant a value selects without memory to read. */
static int const_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	uint64_t v = *(const uint64_t *)ctx;

	(void)addr;
	memcpy(buf, &v, len < sizeof(v) ? len : sizeof(v));   /* x86-64: little endian */
	return 0;
}

/* The variant the value v of t's discriminant selects: 0 with *out, whose
 * discr_addr is the discriminant's offset in t. */
static int variant_of(Dwarf_Die *t, uint64_t v, struct dwt_variant *out)
{
	return dwt_read_variant(t, 0, const_read, &v, out);
}

/* The discriminant of t (an enum with a variant part) and its value for
 * the variant named name, among the first 256 values: 0 with *off (in t),
 * *size and *value, or -ENODATA. */
static int variant_value(Dwarf_Die *t, const char *name, uint32_t *off, uint32_t *size,
			 uint64_t *value)
{
	for (uint64_t v = 0; v < 256; v++) {
		struct dwt_variant var;
		const char *n;
		if (variant_of(t, v, &var) || !var.discr_size || !(n = die_name(&var.member)) ||
		    strcmp(n, name))
			continue;
		*off = (uint32_t)var.discr_addr;
		*size = var.discr_size;
		*value = v;
		return 0;
	}
	return -ENODATA;
}

/* The storage's state in the form a reader without DWARF can test: its
 * offset, size and the value that means Alive. */
static int state_alive(struct rt_context *rc, struct rt_task_id_loc *loc)
{
	if (dwarf_tag(&rc->state) == DW_TAG_enumeration_type) {
		int64_t sz = dwt_byte_size(&rc->state);
		Dwarf_Die e;
		if (sz <= 0 || sz > 8 || dwarf_child(&rc->state, &e))
			return -ENODATA;
		do {
			Dwarf_Attribute a;
			Dwarf_Word cv;
			const char *n = die_name(&e);
			if (dwarf_tag(&e) == DW_TAG_enumerator && n && !strcmp(n, "Alive") &&
			    !dwarf_formudata(dwarf_attr(&e, DW_AT_const_value, &a), &cv)) {
				loc->state_off = (uint32_t)rc->state_off;
				loc->state_size = (uint32_t)sz;
				loc->state_alive = cv;
				return 0;
			}
		} while (dwarf_siblingof(&e, &e) == 0);
		return -ENODATA;
	}
	/* a variant part (std's lazy State<()>): the discriminant value whose
	 * variant is Alive, among the first few */
	for (uint64_t v = 0; v < 8; v++) {
		struct dwt_variant var;
		const char *n;
		if (variant_of(&rc->state, v, &var) || !(n = die_name(&var.member)) ||
		    strcmp(n, "Alive") || !var.discr_size)
			continue;
		loc->state_off = (uint32_t)(rc->state_off + var.discr_addr);
		loc->state_size = var.discr_size;
		loc->state_alive = v;
		return 0;
	}
	return -ENODATA;
}

/* Context.current_task_id (Cell<Option<Id>>, Id a u64 in 1.24, a
 * NonZeroU64 in 1.53: a tagged Option there, a niche here) at ctx_off in
 * the storage. */
static int task_id_layout(struct rt_context *rc, Dwarf_Die *ctx, uint64_t ctx_off)
{
	struct rt_task_id_loc *loc = &rc->task_id;
	struct dwt_variant none, some;
	Dwarf_Die opt, t;
	uint64_t off = ctx_off, o;
	const char *n;

	memset(loc, 0, sizeof(*loc));
	loc->tp_off = (int64_t)rc->sym_value - (int64_t)rc->tls_off;
	if (rc->has_state && state_alive(rc, loc))
		return -ENODATA;
	if (dwt_member(ctx, "current_task_id", NULL, &o, &opt) || !task_lists_defined(rc->dt, &opt))
		return -ENODATA;
	off += o;
	if (!peel_wrappers(&opt, &off) || !dwt_has_variants(&opt))
		return -ENODATA;
	if (variant_of(&opt, 0, &none) || !(n = die_name(&none.member)) || strcmp(n, "None") ||
	    !none.discr_size || variant_of(&opt, 1, &some) || !(n = die_name(&some.member)) ||
	    strcmp(n, "Some"))
		return -ENODATA;
	loc->tag_off = (uint32_t)(off + none.discr_addr);
	loc->tag_size = none.discr_size;
	loc->tag_none = 0;
	/* Some(Id(u64)) or Some(Id(NonZero<u64>(u64))): down to the u64 */
	if (dwt_member(&some.type, "__0", NULL, &o, &t) || !task_lists_defined(rc->dt, &t))
		return -ENODATA;
	off += some.offset + o;
	for (int d = 0; d < 4 && dwarf_tag(&t) != DW_TAG_base_type; d++) {
		Dwarf_Die inner;
		if (dwt_only_member(&t, &o, &inner) || !task_lists_defined(rc->dt, &inner))
			return -ENODATA;
		off += o;
		t = inner;
	}
	if (dwarf_tag(&t) != DW_TAG_base_type || dwt_byte_size(&t) != 8 || off + 8 > rc->size)
		return -ENODATA;
	loc->id_off = (uint32_t)off;
	return 0;
}

/* The worker-loop test of struct rt_task_id_loc: Context.runtime (already
 * found: rc->entered) NotEntered's discriminant, and Context.budget
 * (Cell<coop::Budget>, Budget(Option<u8>)) None's. Left 0 (no test) when
 * DWARF does not describe them so. */
static void loop_layout(struct rt_context *rc, Dwarf_Die *ctx, uint64_t ctx_off)
{
	struct rt_task_id_loc *loc = &rc->task_id;
	uint32_t rt_off, rt_size, b_off, b_size;
	uint64_t rt_out, b_none, off = ctx_off, o;
	Dwarf_Die b;

	if (!rc->has_entered ||
	    variant_value(&rc->entered, "NotEntered", &rt_off, &rt_size, &rt_out) ||
	    dwt_member(ctx, "budget", NULL, &o, &b) || !task_lists_defined(rc->dt, &b))
		return;
	off += o;
	if (!peel_wrappers(&b, &off) || !dwt_has_variants(&b) ||
	    variant_value(&b, "None", &b_off, &b_size, &b_none))
		return;
	loc->loop_rt_off = (uint32_t)rc->entered_off + rt_off;
	loc->loop_rt_size = rt_size;
	loc->loop_rt_outside = rt_out;
	loc->loop_budget_off = (uint32_t)off + b_off;
	loc->loop_budget_size = b_size;
	loc->loop_budget_none = b_none;
}

static int layout(struct rt_context *rc, Dwarf_Die *var)
{
	Dwarf_Die st, ctx, cell, t;
	uint64_t ctx_off = 0, off, o;
	int64_t size;
	const char *tn;

	if (!defined_type(rc, var, &st) || (size = dwt_byte_size(&st)) <= 0 || size > MAX_STORAGE)
		return -ENODATA;
	rc->size = (uint64_t)size;
	tn = dwarf_types__name(rc->dt, &st);
	if (tn && !strcmp(tn, context_type))
		ctx = st;
	else if (!find_typed(rc, &st, context_type, 0, &ctx_off, &ctx))
		return -ENODATA;
	if (dwt_member(&st, "state", NULL, &rc->state_off, &rc->state) == 0) {
		if (!peel_wrappers(&rc->state, &rc->state_off))
			return -ENODATA;
		rc->has_state = true;
	}
	/* not needed for a dump: profile's, where DWARF describes them */
	rc->task_id_err = task_id_layout(rc, &ctx, ctx_off);
	if (!dwt_member(&ctx, "runtime", NULL, &o, &rc->entered) &&
	    task_lists_defined(rc->dt, &rc->entered)) {
		rc->entered_off = ctx_off + o;
		rc->has_entered = peel_wrappers(&rc->entered, &rc->entered_off) &&
				  dwt_has_variants(&rc->entered);
	}
	if (!rc->task_id_err)
		loop_layout(rc, &ctx, ctx_off);
	for (size_t p = 0; p < sizeof(handle_paths) / sizeof(handle_paths[0]); p++) {
		off = ctx_off;
		t = ctx;
		size_t k;
		for (k = 0; handle_paths[p][k]; k++) {
			if (dwt_member(&t, handle_paths[p][k], NULL, &o, &cell) ||
			    !task_lists_defined(rc->dt, &cell))
				break;
			off += o;
			t = cell;
		}
		if (handle_paths[p][k])
			continue;
		/* RefCell { borrow: Cell<isize>, value: UnsafeCell<Option<Handle>> } */
		if (dwt_member_deep(&cell, "borrow", &o, NULL))
			return -ENODATA;
		rc->borrow_off = off + o;
		if (dwt_member(&cell, "value", NULL, &o, &t))
			return -ENODATA;
		off += o;
		if (!peel_wrappers(&t, &off) || !dwt_has_variants(&t))
			return -ENODATA;
		rc->handle_off = off;
		rc->option = t;
		return 0;
	}
	return -ENODATA;
}

struct rt_context *rt_context__open(struct dwarf_types *dt, const char *path, const char **why)
{
	struct rt_context *rc = calloc(1, sizeof(*rc));
	Dwarf *dw = dwarf_types__dwarf(dt);
	Dwarf_Off off = 0, next;
	size_t hsize;
	Dwarf_Die cu, var;
	bool found = false;
	int err;

	if (!rc) {
		*why = "out of memory";
		return NULL;
	}
	rc->dt = dt;
	err = find_symbol(rc, path);
	if (err) {
		*why = err == -ENOMEM ? "out of memory"
				      : "no thread-local tokio CONTEXT symbol in the executable";
		goto fail;
	}
	/* the variable's DIE as an earlier run found it, else a pass over the
	 * units (remembered: a one-shot dump runs again and again) */
	err = dwarf_types__recall(dt, rc->linkage, &var);
	found = err == 1;
	if (err < 0) {
		while (!found && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
			if (dwarf_offdie(dw, off + hsize, &cu))
				found = find_var(rc, &cu, 0, &var);
			off = next;
		}
		dwarf_types__remember(dt, rc->linkage, found ? &var : NULL);
	}
	if (!found || (err = layout(rc, &var))) {
		err = -ENODATA;
		*why = "the binary's DWARF does not describe tokio's thread-local CONTEXT";
		goto fail;
	}
	return rc;
fail:
	rt_context__free(rc);
	errno = -err;
	return NULL;
}

void rt_context__free(struct rt_context *rc)
{
	if (!rc)
		return;
	free(rc->linkage);
	free(rc);
}

uint64_t rt_context__addr(const struct rt_context *rc, uint64_t fsbase)
{
	return fsbase - rc->tls_off + rc->sym_value;
}

/* 1 when the storage's state (an enumeration or a variant part) is Alive. */
static int alive(struct rt_context *rc, uint64_t addr, mem_read_fn read, void *rctx)
{
	if (dwarf_tag(&rc->state) == DW_TAG_enumeration_type) {
		int64_t sz = dwt_byte_size(&rc->state);
		uint64_t v = 0;
		Dwarf_Die e;
		if (sz <= 0 || sz > 8 || read(rctx, addr + rc->state_off, &v, (size_t)sz))
			return -EFAULT;
		if (dwarf_child(&rc->state, &e))
			return -EPROTO;
		do {
			Dwarf_Attribute a;
			Dwarf_Word cv;
			const char *n = die_name(&e);
			if (dwarf_tag(&e) == DW_TAG_enumerator && n && !strcmp(n, "Alive") &&
			    !dwarf_formudata(dwarf_attr(&e, DW_AT_const_value, &a), &cv))
				return cv == v;
		} while (dwarf_siblingof(&e, &e) == 0);
		return -EPROTO;
	}
	struct dwt_variant v;
	int err = dwt_read_variant(&rc->state, addr + rc->state_off, read, rctx, &v);
	if (err)
		return err == -ENOENT ? -EPROTO : err;
	const char *n = die_name(&v.member);
	return n && !strcmp(n, "Alive");
}

int rt_context__handle(struct rt_context *rc, uint64_t fsbase, mem_read_fn read, void *rctx,
		       struct rt_handle *h)
{
	uint64_t addr = rt_context__addr(rc, fsbase), borrow, arc_off, arc;
	struct dwt_variant some, sched;
	Dwarf_Die handle, arc_t;
	const char *n;
	int r;

	if (!fsbase)
		return -EFAULT;
	if (rc->has_state && (r = alive(rc, addr, read, rctx)) <= 0)
		return r;
	if (read(rctx, addr + rc->borrow_off, &borrow, sizeof(borrow)))
		return -EFAULT;
	if ((int64_t)borrow < 0)
		return -EBUSY;
	r = dwt_read_variant(&rc->option, addr + rc->handle_off, read, rctx, &some);
	if (r)
		return r == -ENOENT ? -EPROTO : r;
	n = die_name(&some.member);
	if (!n || strcmp(n, "Some"))
		return 0;   /* None */
	if (dwt_member(&some.type, "__0", NULL, &arc_off, &handle))
		return -EPROTO;
	uint64_t haddr = addr + rc->handle_off + some.offset + arc_off;
	r = dwt_read_variant(&handle, haddr, read, rctx, &sched);
	if (r)
		return r == -ENOENT ? -EPROTO : r;
	n = die_name(&sched.member);
	memset(h, 0, sizeof(*h));
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (n && !strcmp(n, kinds[i].variant))
			h->kind = kinds[i].kind;
	if (!h->kind || dwt_member(&sched.type, "__0", NULL, &arc_off, &arc_t) ||
	    !task_lists_defined(rc->dt, &arc_t))
		return -EPROTO;
	if (read(rctx, haddr + sched.offset + arc_off, &arc, sizeof(arc)) || !arc || (arc & 7))
		return -EPROTO;
	h->arc = arc;
	h->list = owned_layout__from_arc(rc->dt, &arc_t, &h->layout);
	if (h->list == 0 && !h->layout.one)
		h->list = -ENOENT;
	return 1;
}

int rt_context__task_id_loc(const struct rt_context *rc, struct rt_task_id_loc *loc)
{
	if (rc->task_id_err)
		return rc->task_id_err;
	*loc = rc->task_id;
	return 0;
}

int rt_task_id_read(const struct rt_task_id_loc *loc, uint64_t fsbase, mem_read_fn read,
		    void *rctx, uint64_t *id)
{
	uint64_t base = fsbase + (uint64_t)loc->tp_off, v = 0, tag = 0;

	*id = 0;
	if (!fsbase || loc->tag_size < 1 || loc->tag_size > 8 || loc->state_size > 8)
		return -EFAULT;
	if (loc->state_size) {
		if (read(rctx, base + loc->state_off, &v, loc->state_size))
			return -EFAULT;
		if (v != loc->state_alive)
			return 0;
	}
	if (read(rctx, base + loc->tag_off, &tag, loc->tag_size))
		return -EFAULT;
	if (tag == loc->tag_none)
		return 0;
	if (read(rctx, base + loc->id_off, &v, sizeof(v)))
		return -EFAULT;
	*id = v;
	return v ? 1 : 0;
}

int rt_task_in_loop(const struct rt_task_id_loc *loc, uint64_t fsbase, mem_read_fn read,
		    void *rctx)
{
	uint64_t base = fsbase + (uint64_t)loc->tp_off, rt = 0, budget = 0;

	if (!loc->loop_rt_size || loc->loop_rt_size > 8 || loc->loop_budget_size > 8)
		return 0;
	if (!fsbase || read(rctx, base + loc->loop_rt_off, &rt, loc->loop_rt_size) ||
	    read(rctx, base + loc->loop_budget_off, &budget, loc->loop_budget_size))
		return -EFAULT;
	return rt != loc->loop_rt_outside && budget == loc->loop_budget_none;
}
