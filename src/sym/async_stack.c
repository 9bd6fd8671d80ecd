/* Async backtraces from DWARF state machines. Depends on libdw (through
 * dwarf_types) and the name helpers of demangle.h; no I/O of its own. */
#include "sym/async_stack.h"

#include <dwarf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym/demangle.h"

#define MAX_DEREFS 4   /* pointer hops per level (Pin<&mut F>, Box<F>) */

char *async_stack_rel_path(const char *path, const char *dir)
{
	size_t dl = dir ? strlen(dir) : 0;

	while (dl > 1 && dir[dl - 1] == '/')
		dl--;
	if (dl && !strncmp(path, dir, dl) && path[dl] == '/' && path[dl + 1])
		return strdup(path + dl + 1);
	return strdup(path);
}

static const char *die_name(Dwarf_Die *d)
{
	Dwarf_Attribute attr;

	return dwarf_formstring(dwarf_attr(d, DW_AT_name, &attr));
}

/* Whether the type named n is path (its generic arguments aside; a type
 * nested in it, such as an enum's variant "MaybeDone<F>::Future", is
 * not). */
static bool type_is(const char *n, const char *path)
{
	size_t len = n ? strcspn(n, "<") : 0, pl = strlen(path);
	int level = 0;

	if (!n || len < pl || strncmp(n + len - pl, path, pl))
		return false;
	for (const char *c = n + len; *c; c++) {
		if (*c == '<')
			level++;
		else if (*c == '>' && --level == 0)
			return !c[1];
	}
	return !n[len];
}

/* Whether the type at d is path (as type_is()): its own DW_AT_name must
 * be path's last segment (with or without generic arguments) before its
 * qualified name, dear to build (a walk of its unit), is looked at. */
static bool die_is(struct dwarf_types *dt, Dwarf_Die *d, const char *path)
{
	const char *own = die_name(d), *last = path, *c;
	size_t ll;

	for (c = path; (c = strstr(c, "::")); c += 2)
		last = c + 2;
	ll = strlen(last);
	if (!own || strncmp(own, last, ll) || (own[ll] && own[ll] != '<'))
		return false;
	return type_is(dwarf_types__name(dt, d), path);
}

/* A state machine: rustc puts __state inside the variant_part, as its
 * discriminant (an enum's discriminant has no name). */
static bool discr_is_state(Dwarf_Die *type)
{
	Dwarf_Die t, vp, discr;
	Dwarf_Attribute attr;

	if (dwarf_peel_type(type, &t) || dwarf_child(&t, &vp))
		return false;
	do {
		if (dwarf_tag(&vp) != DW_TAG_variant_part)
			continue;
		if (!dwarf_formref_die(dwarf_attr(&vp, DW_AT_discr, &attr), &discr))
			return false;
		const char *n = dwarf_formstring(dwarf_attr(&discr, DW_AT_name, &attr));
		return n && !strcmp(n, "__state");
	} while (dwarf_siblingof(&vp, &vp) == 0);
	return false;
}

/* One walk: the DWARF, the reads, the bias for trait objects, and a
 * budget of frames over every branch (macros nest). */
struct walk {
	struct dwarf_types *dt;
	mem_read_fn read;
	void *ctx;
	uint64_t bias;
	bool dyn;             /* bias known: trait objects followed */
	int budget;
};

#define WALK_BUDGET 512   /* frames in all, branches included */
#define MAX_PASSES 32     /* combinators walked through per chain */
#define MAX_BRANCHES 64   /* per macro */

/* A trait object ({pointer, vtable}, the pointee a "dyn ..." type): the
 * concrete type from the vtable and the data pointer. */
static bool follow_dyn(struct walk *w, Dwarf_Die *type, uint64_t *addr)
{
	Dwarf_Die pm, vm, pt, pointee, concrete;
	Dwarf_Attribute attr;
	uint64_t poff, voff, data = 0, vtable = 0;

	if (!w->dyn || dwarf_tag(type) != DW_TAG_structure_type ||
	    dwt_member(type, "pointer", &pm, &poff, &pt) || dwt_member(type, "vtable", &vm, &voff, NULL))
		return false;
	if (dwarf_tag(&pt) != DW_TAG_pointer_type ||
	    !dwarf_formref_die(dwarf_attr(&pt, DW_AT_type, &attr), &pointee))
		return false;
	const char *pn = dwarf_formstring(dwarf_attr(&pointee, DW_AT_name, &attr));
	if (!pn || (strncmp(pn, "(dyn ", 5) && strncmp(pn, "dyn ", 4)))
		return false;
	if (w->read(w->ctx, *addr + poff, &data, sizeof(data)) || !data ||
	    w->read(w->ctx, *addr + voff, &vtable, sizeof(vtable)) || vtable <= w->bias ||
	    dwarf_types__vtable_type(w->dt, vtable - w->bias, &concrete) ||
	    dwarf_peel_type(&concrete, &concrete))
		return false;
	*type = concrete;
	*addr = data;
	return true;
}

/* Pin<P> -> P, a thin pointer to a state machine -> what it points to
 * (reading the pointer), a trait object -> the future behind it. Returns
 * true when it moved. */
static bool follow(struct walk *w, Dwarf_Die *type, uint64_t *addr)
{
	Dwarf_Die inner, m;
	Dwarf_Attribute attr;
	uint64_t off, ptr = 0;

	if (follow_dyn(w, type, addr))
		return true;
	if (die_is(w->dt, type, "core::pin::Pin") &&
	    (dwt_member(type, "__pointer", &m, &off, &inner) == 0 ||
	     dwt_member(type, "pointer", &m, &off, &inner) == 0)) {
		*type = inner;
		*addr += off;
		return true;
	}
	int tag = dwarf_tag(type);
	if (tag != DW_TAG_pointer_type && tag != DW_TAG_reference_type &&
	    tag != DW_TAG_rvalue_reference_type)
		return false;
	if (!dwarf_formref_die(dwarf_attr(type, DW_AT_type, &attr), &inner) ||
	    dwarf_peel_type(&inner, &inner) || !discr_is_state(&inner))
		return false;
	if (w->read(w->ctx, *addr, &ptr, sizeof(ptr)) || !ptr)
		return false;
	*type = inner;
	*addr = ptr;
	return true;
}

/* What is awaited through a reference is the future behind it: Pin<P> ->
 * P, a thin pointer or reference to a structure (&mut F, Box<F>) -> the
 * structure, a trait object -> the concrete future (as follow(), but to
 * any future, not only a state machine: only for a value that is polled
 * as a future, never for a member that may be anything). */
static void deref_future(struct walk *w, Dwarf_Die *type, uint64_t *addr)
{
	for (int hop = 0; hop < MAX_DEREFS; hop++) {
		Dwarf_Die inner;
		Dwarf_Attribute attr;
		uint64_t ptr = 0;
		int tag;
		if (follow(w, type, addr))
			continue;
		tag = dwarf_tag(type);
		if (tag != DW_TAG_pointer_type && tag != DW_TAG_reference_type &&
		    tag != DW_TAG_rvalue_reference_type)
			return;
		if (!dwarf_formref_die(dwarf_attr(type, DW_AT_type, &attr), &inner) ||
		    dwarf_peel_type(&inner, &inner) || dwarf_tag(&inner) != DW_TAG_structure_type ||
		    w->read(w->ctx, *addr, &ptr, sizeof(ptr)) || !ptr)
			return;
		*type = inner;
		*addr = ptr;
	}
}

static int push_frame(struct async_stack *s, struct async_frame *f)
{
	struct async_frame *p = realloc(s->frames, (s->n + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	s->frames = p;
	s->frames[s->n++] = *f;
	return 0;
}

static void frame_free(struct async_frame *f)
{
	free(f->via);
	free(f->type);
	free(f->future);
	free(f->state);
	free(f->file);
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Fills f from the state machine `type` at addr and its active variant v. */
static int make_frame(struct dwarf_types *dt, Dwarf_Die *type, uint64_t addr,
		      struct dwt_variant *v, struct async_frame *f)
{
	const char *tname = dwarf_types__name(dt, type);
	Dwarf_Attribute attr;
	const char *state = dwarf_formstring(dwarf_attr(&v->type, DW_AT_name, &attr));
	const char *file = dwarf_decl_file(&v->member);
	int line = 0;

	memset(f, 0, sizeof(*f));
	f->addr = addr;
	f->variant = v->type;
	f->variant_addr = addr + v->offset;
	f->discr_addr = v->discr_addr;
	f->discr = v->discr;
	f->discr_size = v->discr_size;
	f->type = dup_or_null(tname ? tname : "?");
	f->future = sym_pretty_future(tname ? tname : "?");
	f->state = dup_or_null(state ? state : "?");
	if (file)
		f->file = async_stack_rel_path(file, dwarf_types__comp_dir(&v->member));
	if (dwarf_decl_line(&v->member, &line) == 0 && line > 0)
		f->line = (unsigned)line;
	if (!f->type || !f->future || !f->state || (file && !f->file)) {
		frame_free(f);
		return -ENOMEM;
	}
	return 0;
}

static int set_leaf(struct dwarf_types *dt, Dwarf_Die *type, struct async_stack *s)
{
	const char *name = dwarf_types__name(dt, type);

	if (!name)
		return 0;
	s->leaf_type = strdup(name);
	s->leaf = sym_pretty_future(name);
	if (!s->leaf_type || !s->leaf)
		return -ENOMEM;
	return 0;
}

static int walk(struct walk *w, Dwarf_Die *type, uint64_t addr, struct async_stack *out);

/* Appends a branch in state to out (its chain empty): the branch, or NULL
 * when out of memory. */
static struct async_branch *new_branch(struct async_stack *out, const char *state)
{
	struct async_branch *p = realloc(out->branches, (out->n_branches + 1) * sizeof(*p));

	if (!p)
		return NULL;
	out->branches = p;
	p += out->n_branches;
	memset(p, 0, sizeof(*p));
	if (!(p->state = strdup(state)))
		return NULL;
	out->n_branches++;
	return p;
}

/* A Fuse whose future ended (futures' Fuse { inner: Option<F> } None):
 * a futures::select! branch no longer polled. */
static bool fuse_ended(struct walk *w, Dwarf_Die *type, uint64_t addr)
{
	struct dwt_variant v;
	Dwarf_Attribute attr;
	Dwarf_Die opt;
	uint64_t off;

	if (!die_is(w->dt, type, "::fuse::Fuse") ||
	    dwt_member(type, "inner", NULL, &off, &opt) ||
	    dwt_read_variant(&opt, addr + off, w->read, w->ctx, &v))
		return false;
	const char *vn = dwarf_formstring(dwarf_attr(&v.member, DW_AT_name, &attr));
	return vn && !strcmp(vn, "None");
}

/* One branch future at addr (through a reference: the future behind it):
 * a MaybeDone<F> (join!, join_all) read through its variant (Future: F's
 * chain; Done, Gone), an ended Fuse done, else the future itself. */
static int add_branch(struct walk *w, Dwarf_Die *type, uint64_t addr, bool disabled,
		      struct async_stack *out)
{
	struct async_branch *b;
	const char *state = disabled ? "disabled" : "pending";
	Dwarf_Die t, inner;
	uint64_t off;
	int err = 0;

	if (out->n_branches >= MAX_BRANCHES)
		return 0;
	if (dwarf_peel_type(type, &t))
		t = *type;
	if (!disabled)
		deref_future(w, &t, &addr);
	if (!disabled && (die_is(w->dt, &t, "::maybe_done::MaybeDone") ||
			  die_is(w->dt, &t, "::try_maybe_done::TryMaybeDone"))) {
		struct dwt_variant v;
		Dwarf_Attribute attr;

		if (dwt_read_variant(&t, addr, w->read, w->ctx, &v)) {
			state = "?";
		} else {
			const char *vn = dwarf_formstring(dwarf_attr(&v.member, DW_AT_name, &attr));
			/* Future(F), or Future { future: F } (tokio >= 1.37's pin-project) */
			if (vn && !strcmp(vn, "Future") &&
			    (!dwt_member(&v.type, "__0", NULL, &off, &inner) ||
			     !dwt_member(&v.type, "future", NULL, &off, &inner))) {
				t = inner;
				addr += v.offset + off;
			} else {
				state = vn && !strcmp(vn, "Done") ? "done" : vn && !strcmp(vn, "Gone") ?
					"gone" : "?";
			}
		}
	} else if (!disabled && fuse_ended(w, &t, addr)) {
		state = "done";
	}
	if (!(b = new_branch(out, state)))
		return -ENOMEM;
	if (!strcmp(state, "pending"))
		err = walk(w, &t, addr, &b->stack);
	return err == -ENOENT ? 0 : err;
}

/* The members of a tuple "(A, B, ...)" (__0, __1, ...) as branches; bit i
 * of disabled set: branch i is disabled (select!). */
static int add_tuple(struct walk *w, Dwarf_Die *tuple, uint64_t addr, uint64_t disabled,
		     struct async_stack *out)
{
	char field[16];
	Dwarf_Die et;
	uint64_t off;
	int err = 0;

	for (unsigned i = 0; i < MAX_BRANCHES && !err; i++) {
		snprintf(field, sizeof(field), "__%u", i);
		if (dwt_member(tuple, field, NULL, &off, &et))
			break;
		err = add_branch(w, &et, addr + off, i < 64 && (disabled >> i & 1), out);
	}
	return err;
}

/* "tokio::select!" from where the macro's own code is: the crate
 * directory before "/src/" (its version cut: "tokio-1.53.1" -> "tokio";
 * futures-util's macros are futures'), and the file's name (select.rs,
 * join_mod.rs -> join). NULL when the path says neither. */
static char *macro_name(const char *file, const char *fallback_crate, const char *fallback)
{
	const char *src = file ? strstr(file, "/src/") : NULL, *base, *c;
	char crate[64] = "", name[32] = "", *out = NULL;

	if (src) {
		for (c = src; c > file && c[-1] != '/'; c--)
			;
		size_t n = (size_t)(src - c);
		/* "tokio-1.53.1": the version goes */
		for (size_t i = 0; i + 1 < n; i++)
			if (c[i] == '-' && c[i + 1] >= '0' && c[i + 1] <= '9') {
				n = i;
				break;
			}
		if (n && n < sizeof(crate)) {
			memcpy(crate, c, n);
			crate[n] = '\0';
			for (char *p = crate; *p; p++)
				if (*p == '-')
					*p = '_';
			if (!strcmp(crate, "futures_util"))
				strcpy(crate, "futures");
		}
	}
	base = file ? strrchr(file, '/') : NULL;
	base = base ? base + 1 : file;
	if (base && strlen(base) < sizeof(name) && strstr(base, ".rs")) {
		snprintf(name, sizeof(name), "%.*s", (int)(strstr(base, ".rs") - base), base);
		char *mod = strstr(name, "_mod");
		if (mod && !mod[4])
			*mod = '\0';   /* futures' join_mod.rs */
	}
	if (!crate[0])
		snprintf(crate, sizeof(crate), "%s", fallback_crate);
	if (!name[0] || (strcmp(name, "select") && strcmp(name, "join") && strcmp(name, "try_join")))
		snprintf(name, sizeof(name), "%s", fallback);
	if (asprintf(&out, "%s::%s!", crate, name) < 0)
		return NULL;
	return out;
}

/* The leaf awaited by the innermost frame (variant pv at paddr, its member
 * pvm) is an await macro's poll_fn (tokio's own before 1.4x, core's now,
 * futures-util's): its branches, from where the macro keeps them. tokio's
 * select!, join! and try_join! keep a tuple `futures` in the awaiting state
 * (select! a `disabled` bit mask beside it); futures' join! keeps _fut0,
 * _fut1 ... in the poll_fn's closure. Which macro: the crate and file of
 * its source (the awaiting state's location), never a line. Returns 0
 * (nothing when it is none), or -ENOMEM. */
static int expand_macro(struct walk *w, const char *leaf, Dwarf_Die *leaf_type, uint64_t leaf_addr,
			Dwarf_Die *pv, Dwarf_Die *pvm, uint64_t paddr, struct async_stack *out)
{
	Dwarf_Die tuple, clo, et;
	uint64_t off, dis_off, foff0, disabled = 0;
	const char *file = pvm ? dwarf_decl_file(pvm) : NULL;
	int err = 0;

	if (!leaf || !strstr(leaf, "::poll_fn::PollFn<"))
		return 0;
	if (pv && !dwt_member(pv, "futures", NULL, &off, &tuple)) {
		Dwarf_Die dt_;
		const char *tn = dwarf_types__name(w->dt, &tuple);
		bool joins = tn && strstr(tn, "::maybe_done::MaybeDone<");
		if (!joins && !dwt_member(pv, "disabled", NULL, &dis_off, &dt_)) {
			uint8_t d = 0;
			if (!w->read(w->ctx, paddr + dis_off, &d, 1))
				disabled = d;
		}
		if (!(out->macro = macro_name(file, "tokio", joins ? "join" : "select")))
			return -ENOMEM;
		return add_tuple(w, &tuple, paddr + off, disabled, out);
	}
	if (dwt_member(leaf_type, "f", NULL, &off, &clo))
		return 0;
	if (!dwt_member(&clo, "_fut0", NULL, &foff0, &et)) {
		char field[16];
		uint64_t coff = off, foff;

		if (!(out->macro = macro_name(file, "futures", "join")))
			return -ENOMEM;
		for (unsigned i = 0; i < MAX_BRANCHES && !err; i++) {
			snprintf(field, sizeof(field), "_fut%u", i);
			if (dwt_member(&clo, field, NULL, &foff, &et))
				break;
			err = add_branch(w, &et, leaf_addr + coff + foff, false, out);
		}
		return err;
	}
	/* futures' select! / select_biased!: its poll_fn's closure holds a
	 * reference to each branch's future (bound in the awaiting state, or
	 * the caller's pinned one), in the order of the branches; which macro
	 * from its source file (select_mod.rs), as for join! */
	char *name = macro_name(file, "futures", "?");
	Dwarf_Die m;
	if (!name)
		return -ENOMEM;
	if (strcmp(name, "futures::select!") || dwarf_child(&clo, &m)) {
		free(name);
		return 0;
	}
	out->macro = name;
	do {
		Dwarf_Attribute attr;
		Dwarf_Word moff = 0;
		if (dwarf_tag(&m) != DW_TAG_member || dwarf_hasattr(&m, DW_AT_artificial) ||
		    !dwarf_formref_die(dwarf_attr(&m, DW_AT_type, &attr), &et) ||
		    (dwarf_attr(&m, DW_AT_data_member_location, &attr) && dwarf_formudata(&attr, &moff)))
			continue;
		err = add_branch(w, &et, leaf_addr + off + moff, false, out);
	} while (!err && dwarf_siblingof(&m, &m) == 0);
	return err;
}

/* The pointer in an AtomicPtr<T> (or a raw pointer) member `name` of st at
 * addr: 0 with *ptr and *pointee (T), else -ENOENT / the read error. */
static int read_ptr_member(struct walk *w, Dwarf_Die *st, uint64_t addr, const char *name,
			   uint64_t *ptr, Dwarf_Die *pointee)
{
	Dwarf_Die mt, pt;
	Dwarf_Attribute attr;
	uint64_t off, poff = 0;

	if (dwt_member(st, name, NULL, &off, &mt))
		return -ENOENT;
	if (dwarf_peel_type(&mt, &pt))
		return -ENOENT;
	/* AtomicPtr { p: UnsafeCell { value: *mut T } }: wrappers of one member */
	for (int i = 0; i < 4 && dwarf_tag(&pt) == DW_TAG_structure_type; i++) {
		uint64_t o;
		if (dwt_only_member(&pt, &o, &pt) || dwarf_peel_type(&pt, &pt))
			return -ENOENT;
		poff += o;
	}
	if (dwarf_tag(&pt) != DW_TAG_pointer_type ||
	    !dwarf_formref_die(dwarf_attr(&pt, DW_AT_type, &attr), pointee))
		return -ENOENT;
	*ptr = 0;
	return w->read(w->ctx, addr + off + poff, ptr, sizeof(*ptr));
}

#define MAX_UNORDERED 64   /* futures of a FuturesUnordered listed */

/* A stream of futures awaited (Next<FuturesUnordered<F>>, the stream
 * itself): every future in it, a branch each, from its list of all tasks
 * (head_all, next_all; each task's future an Option, None once done).
 * Returns 0 (nothing when it is none) or -ENOMEM. */
static int expand_unordered(struct walk *w, const char *leaf, Dwarf_Die *leaf_type, uint64_t addr,
			    struct async_stack *out)
{
	Dwarf_Die fu = *leaf_type, task, ft, opt;
	uint64_t t = 0, off;
	int err = 0;

	if (!leaf || !strstr(leaf, "::futures_unordered::FuturesUnordered<"))
		return 0;
	const char *fn = dwarf_types__name(w->dt, &fu);
	if (fn && strstr(fn, "::next::Next<")) {
		/* Next { stream: &mut St } */
		if (read_ptr_member(w, &fu, addr, "stream", &addr, &fu) || !addr)
			return 0;
		fn = dwarf_types__name(w->dt, &fu);
	}
	if (!fn || !strstr(fn, "::futures_unordered::FuturesUnordered<"))
		return 0;
	if (read_ptr_member(w, &fu, addr, "head_all", &t, &task))
		return 0;
	if (!(out->macro = strdup("futures::stream::FuturesUnordered")))
		return -ENOMEM;
	for (int i = 0; t && i < MAX_UNORDERED && !err; i++) {
		struct dwt_variant v;
		Dwarf_Attribute attr;

		uint64_t cell_off;
		/* future: UnsafeCell<Option<F>> */
		if (dwt_member(&task, "future", NULL, &off, &ft) || dwt_only_member(&ft, &cell_off, &opt))
			break;
		uint64_t fa = t + off + cell_off;
		if (dwt_read_variant(&opt, fa, w->read, w->ctx, &v))
			break;
		const char *vn = dwarf_formstring(dwarf_attr(&v.member, DW_AT_name, &attr));
		Dwarf_Die inner;
		uint64_t ioff;
		if (vn && !strcmp(vn, "Some") && !dwt_member(&v.type, "__0", NULL, &ioff, &inner)) {
			err = add_branch(w, &inner, fa + v.offset + ioff, false, out);
		} else if (!new_branch(out, "gone")) {
			return -ENOMEM;
		}
		Dwarf_Die next_t;
		if (read_ptr_member(w, &task, t, "next_all", &t, &next_t))
			break;
	}
	return err;
}

/* The locals the await macros declare (tokio's select!, join!, try_join!;
 * futures' join!, select!), by the versions checked (tokio 1.24.2, 1.53.1,
 * futures 0.3.21): rustc gives an external crate's macro expansion the
 * span of its invocation, so their DW_AT_decl_line is the user's line of
 * the macro (the __awaitee's own is in the macro's source). */
static const char *const macro_vars[] = {
	"futures", "disabled", "output",          /* tokio */
	"_fut0",                                  /* futures::join! */
	"__select_result", "__poll_fn",           /* futures::select! */
	"__awaitee",                              /* any: the awaited future itself */
};

static void find_macro_var(Dwarf_Die *scope, const char *own, unsigned lo, unsigned hi,
			   unsigned *best, int depth)
{
	Dwarf_Die c;

	if (depth > 16 || dwarf_child(scope, &c))
		return;
	do {
		int tag = dwarf_tag(&c), line;
		const char *n, *file;
		if (tag == DW_TAG_lexical_block) {
			find_macro_var(&c, own, lo, hi, best, depth + 1);
			continue;
		}
		if (tag != DW_TAG_variable || !(n = die_name(&c)))
			continue;
		bool known = false;
		for (size_t i = 0; i < sizeof(macro_vars) / sizeof(macro_vars[0]) && !known; i++)
			known = !strcmp(n, macro_vars[i]);
		if (known && (file = dwarf_decl_file(&c)) && !strcmp(file, own) &&
		    !dwarf_decl_line(&c, &line) && (unsigned)line > lo && (unsigned)line < hi &&
		    (!*best || (unsigned)line < *best))
			*best = (unsigned)line;
	} while (dwarf_siblingof(&c, &c) == 0);
}

/* The line in own of the await macro's invocation between lo and hi, from
 * the macro's locals in the body of the state machine sm (the subprogram
 * "{async_fn#0}" beside its type "{async_fn_env#0}"), 0 when none. */
static unsigned macro_var_line(struct walk *w, Dwarf_Die *sm, const char *own, unsigned lo,
			       unsigned hi)
{
	Dwarf_Die body;
	unsigned best = 0;

	if (dwarf_types__async_body(w->dt, sm, &body) == 0)
		find_macro_var(&body, own, lo, hi, &best, 0);
	return best;
}

/* The awaiting frame f of state machine sm (in its variant member vm) is in
 * an await macro: its line is the macro's own source. Points it at the
 * function's file instead, at the first line with code between the awaits
 * around it (the macro's invocation): the bounds are the function's line
 * (Unresumed), the lines of the other awaits in that file, and its end
 * (Returned). Left as it is when that finds none. */
static int macro_site(struct walk *w, Dwarf_Die *sm, Dwarf_Die *vm, struct async_frame *f)
{
	Dwarf_Die t, vp, var, m, mt;
	Dwarf_Attribute attr;
	const char *own = NULL, *here = dwarf_decl_file(vm);
	unsigned lo = 0, hi = ~0u, k = 0;
	int line;

	if (!f->state || sscanf(f->state, "Suspend%u", &k) != 1)
		return 0;
	if (dwarf_peel_type(sm, &t) || dwarf_child(&t, &vp))
		return 0;
	do {
		if (dwarf_tag(&vp) != DW_TAG_variant_part || dwarf_child(&vp, &var))
			continue;
		do {
			if (dwarf_tag(&var) != DW_TAG_variant || dwarf_child(&var, &m) ||
			    !dwarf_formref_die(dwarf_attr(&m, DW_AT_type, &attr), &mt))
				continue;
			const char *vn = dwarf_formstring(dwarf_attr(&mt, DW_AT_name, &attr));
			const char *file = dwarf_decl_file(&m);
			unsigned j;
			if (!vn || !file || dwarf_decl_line(&m, &line) || line <= 0)
				continue;
			if (!strcmp(vn, "Unresumed")) {
				own = file;
				if ((unsigned)line > lo)
					lo = (unsigned)line;
			}
			if (!strcmp(vn, "Returned") && (unsigned)line < hi)
				hi = (unsigned)line;
			if (sscanf(vn, "Suspend%u", &j) == 1 && j != k && here && strcmp(file, here)) {
				/* another await of the function's own file bounds it */
				if (j < k && (unsigned)line > lo)
					lo = (unsigned)line;
				if (j > k && (unsigned)line < hi)
					hi = (unsigned)line;
			}
		} while (dwarf_siblingof(&var, &var) == 0);
	} while (dwarf_siblingof(&vp, &vp) == 0);
	if (!own || !here || !strcmp(own, here))
		return 0;
	unsigned at = macro_var_line(w, &t, own, lo, hi);
	if (!at)
		at = dwarf_types__first_line(w->dt, own, lo, hi);
	if (!at)
		return 0;
	char *rel = async_stack_rel_path(own, dwarf_types__comp_dir(vm));
	if (!rel)
		return -ENOMEM;
	free(f->file);
	f->file = rel;
	f->line = at;
	return 0;
}

#define COMBINATOR_DEPTH 24   /* structure levels searched for the futures inside (a
                                 combinator is 2 or 3: Map > map::Map > Incomplete) */
#define COLLECT_NODES    512   /* structures looked at per search */
#define MAX_ELEMS         64   /* elements of a slice or Vec looked at */

/* The futures inside a combinator: each with the structures passed
 * through from the combinator to it (path[0] the combinator). */
struct inner_item {
	Dwarf_Die type;
	uint64_t addr;
	bool unresumed;        /* a state machine never polled (a future kept for
	                          later, not awaited: a closure's capture ...) */
	int n_path;
	Dwarf_Die path[COMBINATOR_DEPTH];
	uint64_t path_addr[COMBINATOR_DEPTH];
};

struct inner_search {
	struct inner_item items[MAX_BRANCHES];
	int n;
	bool cut;              /* more than MAX_BRANCHES */
	int nodes;
	Dwarf_Die path[COMBINATOR_DEPTH];
	uint64_t path_addr[COMBINATOR_DEPTH];
};


static void add_item(struct walk *w, struct inner_search *is, Dwarf_Die *type, uint64_t addr,
		     int depth)
{
	struct inner_item *it;
	struct dwt_variant v;

	if (is->n == MAX_BRANCHES) {
		is->cut = true;
		return;
	}
	it = &is->items[is->n++];
	it->type = *type;
	it->addr = addr;
	it->unresumed = discr_is_state(type) &&
			!dwt_read_variant(type, addr, w->read, w->ctx, &v) &&
			die_name(&v.type) && !strcmp(die_name(&v.type), "Unresumed");
	it->n_path = depth;
	memcpy(it->path, is->path, (size_t)depth * sizeof(Dwarf_Die));
	memcpy(it->path_addr, is->path_addr, (size_t)depth * sizeof(uint64_t));
}

static void search_inner(struct walk *w, Dwarf_Die *type, uint64_t addr, int depth,
			 struct inner_search *is);


/* The elements of a slice or a Vec (n of type et from ptr), each searched. */
static void search_elems(struct walk *w, Dwarf_Die *et, uint64_t ptr, uint64_t n, int depth,
			 struct inner_search *is)
{
	int64_t size = dwt_byte_size(et);

	if (!ptr || size <= 0)
		return;
	if (n > MAX_ELEMS) {
		is->cut = true;
		n = MAX_ELEMS;
	}
	for (uint64_t i = 0; i < n && is->n < MAX_BRANCHES; i++)
		search_inner(w, et, ptr + i * (uint64_t)size, depth, is);
}

/* A pointer member: followed to a state machine (a Box<F> of one), or
 * when pinned (ptr_pinned: Pin<Box<T>>, Pin<&mut T>) to any structure. */
static void search_ptr(struct walk *w, Dwarf_Die *pt, uint64_t addr, bool pinned, int depth,
		       struct inner_search *is)
{
	Dwarf_Die to;
	Dwarf_Attribute attr;
	uint64_t ptr = 0;
	int tag = dwarf_tag(pt);

	if ((tag != DW_TAG_pointer_type && tag != DW_TAG_reference_type) ||
	    !dwarf_formref_die(dwarf_attr(pt, DW_AT_type, &attr), &to) ||
	    dwarf_peel_type(&to, &to) || dwarf_tag(&to) != DW_TAG_structure_type ||
	    (!pinned && !discr_is_state(&to)) ||
	    w->read(w->ctx, addr, &ptr, sizeof(ptr)) || !ptr)
		return;
	search_inner(w, &to, ptr, depth, is);
}

static void search_inner(struct walk *w, Dwarf_Die *type, uint64_t addr, int depth,
			 struct inner_search *is)
{
	Dwarf_Die t, child, mt, dp;
	Dwarf_Attribute attr;
	Dwarf_Word off;
	uint64_t poff, loff, len = 0, ptr = 0;

	if (depth >= COMBINATOR_DEPTH || is->n == MAX_BRANCHES || ++is->nodes > COLLECT_NODES ||
	    dwarf_peel_type(type, &t) || dwarf_tag(&t) != DW_TAG_structure_type)
		return;
	if (discr_is_state(&t)) {
		add_item(w, is, &t, addr, depth);
		return;
	}
	/* a future taken whole: its own states (MaybeDone), or its own
	 * branches (FuturesUnordered) */
	if (depth && (die_is(w->dt, &t, "::maybe_done::MaybeDone") ||
		      die_is(w->dt, &t, "::try_maybe_done::TryMaybeDone") ||
		      die_is(w->dt, &t, "::futures_unordered::FuturesUnordered"))) {
		add_item(w, is, &t, addr, depth);
		return;
	}
	is->path[depth] = t;
	is->path_addr[depth] = addr;
	/* a trait object: the concrete type behind it */
	{
		Dwarf_Die ct = t;
		uint64_t ca = addr;
		if (follow_dyn(w, &ct, &ca)) {
			search_inner(w, &ct, ca, depth + 1, is);
			return;
		}
	}
	/* Pin<P>: a pointer followed to any structure, or a boxed slice */
	if (die_is(w->dt, &t, "core::pin::Pin") &&
	    (dwt_member(&t, "__pointer", NULL, &poff, &mt) == 0 ||
	     dwt_member(&t, "pointer", NULL, &poff, &mt) == 0)) {
		if (!dwarf_peel_type(&mt, &mt) && dwarf_tag(&mt) != DW_TAG_structure_type)
			search_ptr(w, &mt, addr + poff, true, depth + 1, is);
		else
			search_inner(w, &mt, addr + poff, depth + 1, is);
		return;
	}
	/* a boxed slice { data_ptr, length } */
	if (!dwt_member(&t, "data_ptr", NULL, &poff, &mt) &&
	    !dwt_member(&t, "length", NULL, &loff, NULL) && dwarf_tag(&mt) == DW_TAG_pointer_type &&
	    dwarf_formref_die(dwarf_attr(&mt, DW_AT_type, &attr), &dp)) {
		if (!w->read(w->ctx, addr + poff, &ptr, sizeof(ptr)) &&
		    !w->read(w->ctx, addr + loff, &len, sizeof(len)))
			search_elems(w, &dp, ptr, len, depth + 1, is);
		return;
	}
	/* a Vec<T> { buf: RawVec { .. ptr .. }, len } */
	if (die_is(w->dt, &t, "alloc::vec::Vec")) {
		if (dwarf_child(&t, &child))
			return;
		do {
			const char *pn = die_name(&child);
			if (dwarf_tag(&child) == DW_TAG_template_type_parameter && pn &&
			    !strcmp(pn, "T") && dwarf_formref_die(dwarf_attr(&child, DW_AT_type, &attr), &dp) &&
			    !dwt_member(&t, "len", NULL, &loff, NULL) &&
			    !dwt_member_deep(&t, "ptr", &poff, NULL) &&
			    !w->read(w->ctx, addr + poff, &ptr, sizeof(ptr)) &&
			    !w->read(w->ctx, addr + loff, &len, sizeof(len)))
				search_elems(w, &dp, ptr, len, depth + 1, is);
		} while (dwarf_siblingof(&child, &child) == 0);
		return;
	}
	if (dwt_has_variants(&t)) {
		struct dwt_variant v;
		if (!dwt_read_variant(&t, addr, w->read, w->ctx, &v))
			search_inner(w, &v.type, addr + v.offset, depth + 1, is);
		return;
	}
	if (dwarf_child(&t, &child))
		return;
	do {
		if (dwarf_tag(&child) != DW_TAG_member || dwarf_hasattr(&child, DW_AT_artificial) ||
		    !dwarf_formref_die(dwarf_attr(&child, DW_AT_type, &attr), &mt) ||
		    dwarf_peel_type(&mt, &mt))
			continue;
		off = 0;
		if (dwarf_attr(&child, DW_AT_data_member_location, &attr) &&
		    dwarf_formudata(&attr, &off))
			continue;
		if (dwarf_tag(&mt) == DW_TAG_structure_type)
			search_inner(w, &mt, addr + off, depth + 1, is);
		else
			search_ptr(w, &mt, addr + off, false, depth + 1, is);
	} while (is->n < MAX_BRANCHES && dwarf_siblingof(&child, &child) == 0);
}

/* Whether a combinator's name says nothing of what it does: std's
 * plumbing (Pin, Option, Box, cells ...), tuples, closures. */
static bool plumbing(const char *n)
{
	size_t len = strcspn(n, "<");
	const char *sep = memmem(n, len, "::", 2);

	return !strncmp(n, "core::", 6) || !strncmp(n, "alloc::", 7) || n[0] == '(' || !sep ||
	       memmem(n, len, "{closure", 8);
}

/* "A > B": the readable names of path[from..to), each without its generic
 * arguments; enum variants ("Some", "Incomplete"), plumbing and a name
 * repeating the one before it (futures' Map around map::Map) left out.
 * Appended to *out (" > " between). 0 or -ENOMEM. */
static int via_names(struct walk *w, const struct inner_item *it, int from, int to, char **out)
{
	size_t len = *out ? strlen(*out) : 0;
	const char *last = NULL;
	size_t last_len = 0;

	for (int i = from; i < to; i++) {
		Dwarf_Die d = it->path[i], prev;
		const char *n = dwarf_types__name(w->dt, &d);
		if (i)
			prev = it->path[i - 1];
		if (!n || plumbing(n) || (i && dwt_has_variants(&prev)))
			continue;
		size_t nl = strcspn(n, "<");
		const char *base = n;
		for (const char *c = n; c < n + nl; c++)
			if (c[0] == ':' && c[1] == ':')
				base = c + 2;
		size_t bl = (size_t)(n + nl - base);
		if (last && bl == last_len && !strncmp(base, last, bl))
			continue;
		last = base;
		last_len = bl;
		char *p = realloc(*out, len + nl + 4);
		if (!p)
			return -ENOMEM;
		*out = p;
		len += (size_t)sprintf(p + len, "%s%.*s", len ? " > " : "", (int)nl, n);
	}
	return 0;
}

/* The names of it->path[0..to) appended to *via (" > " between). */
static int append_via(struct walk *w, const struct inner_item *it, int to, char **via)
{
	char *v = NULL, *p = NULL;

	if (via_names(w, it, 0, to, &v)) {
		free(v);
		return -ENOMEM;
	}
	if (!v)
		return 0;
	if (!*via) {
		*via = v;
		return 0;
	}
	if (asprintf(&p, "%s > %s", *via, v) < 0) {
		free(v);
		return -ENOMEM;
	}
	free(v);
	free(*via);
	*via = p;
	return 0;
}

static int add_passed(struct async_stack *out, Dwarf_Die *type, uint64_t addr)
{
	struct async_passed *p;

	for (size_t i = 0; i < out->n_passed; i++)
		if (out->passed[i].addr == addr &&
		    dwarf_dieoffset(&out->passed[i].type) == dwarf_dieoffset(type))
			return 0;
	if (!(p = realloc(out->passed, (out->n_passed + 1) * sizeof(*p))))
		return -ENOMEM;
	out->passed = p;
	p[out->n_passed].type = *type;
	p[out->n_passed++].addr = addr;
	return 0;
}

/* The leaf cur at *addr (no state machine, no macro) as a combinator of
 * futures: with one inside, walked through (1: *cur, *addr that future,
 * the combinators named in the innermost frame's via, or the root's);
 * with several, its branches (0: out->macro the structure where they
 * part). 0 also when it holds none. < 0 -ENOMEM. */
static int through(struct walk *w, Dwarf_Die *cur, uint64_t *addr, struct async_stack *out)
{
	struct inner_search *is = malloc(sizeof(*is));   /* ~150 KiB: not zeroed */
	char **via = out->n ? &out->frames[out->n - 1].via : &out->via;
	int started = 0, ret = 0, k = 0;

	if (!is)
		return -ENOMEM;
	is->n = is->nodes = 0;
	is->cut = false;
	search_inner(w, cur, *addr, 0, is);
	for (int i = 0; i < is->n; i++)
		started += !is->items[i].unresumed;
	/* the futures polled, when some are: the others are kept for later */
	for (int i = 0; i < is->n; i++)
		if (!started || !is->items[i].unresumed)
			is->items[k++] = is->items[i];
	is->n = k;
	if (is->n == 1) {
		struct inner_item *it = &is->items[0];
		for (int i = 0; i < it->n_path && !ret; i++)
			ret = add_passed(out, &it->path[i], it->path_addr[i]);
		if (!ret)
			ret = append_via(w, it, it->n_path, via);
		if (!ret) {
			free(out->leaf);
			free(out->leaf_type);
			out->leaf = out->leaf_type = NULL;
			out->leaf_addr = 0;
			*cur = it->type;
			*addr = it->addr;
			ret = 1;
		}
		free(is);
		return ret;
	}
	if (is->n >= 2) {
		/* where the futures part: the longest path all share */
		int common = is->items[0].n_path;
		for (int i = 1; i < is->n; i++) {
			int j = 0;
			while (j < common && j < is->items[i].n_path &&
			       is->items[i].path_addr[j] == is->items[0].path_addr[j] &&
			       dwarf_dieoffset(&is->items[i].path[j]) ==
				       dwarf_dieoffset(&is->items[0].path[j]))
				j++;
			common = j;
		}
		const struct inner_item *it = &is->items[0];
		/* the combinator that holds them all, named by its type (past
		 * plumbing: an Option or a tuple of them is its own member) */
		int at = common - 1;
		while (at > 0) {
			Dwarf_Die d = it->path[at];
			const char *n = dwarf_types__name(w->dt, &d);
			Dwarf_Die prev = it->path[at - 1];
			if (n && !plumbing(n) && !dwt_has_variants(&prev))
				break;
			at--;
		}
		/* out through the newtypes that are its public face (JoinAll {
		 * kind: JoinAllKind }): a named structure of one member */
		for (int pa = at - 1; pa >= 0; pa--) {
			Dwarf_Die d = it->path[pa], only;
			const char *n = dwarf_types__name(w->dt, &d);
			uint64_t o;
			if (!n || plumbing(n) || (pa && dwt_has_variants((Dwarf_Die *)&it->path[pa - 1])))
				continue;
			if (dwt_only_member(&d, &o, &only))
				break;
			at = pa;
		}
		for (int i = 0; i < common && !ret; i++)
			ret = add_passed(out, (Dwarf_Die *)&it->path[i], it->path_addr[i]);
		if (!ret && at > 0)
			ret = append_via(w, it, at, via);
		if (!ret) {
			Dwarf_Die d = it->path[at];
			const char *n = dwarf_types__name(w->dt, &d);
			if (!n)
				n = "?";
			if (asprintf(&out->macro, "%.*s", (int)strcspn(n, "<"), n) < 0) {
				out->macro = NULL;
				ret = -ENOMEM;
			}
		}
		for (int i = 0; i < is->n && !ret; i++)
			ret = add_branch(w, &is->items[i].type, is->items[i].addr, false, out);
		if (!ret && is->cut && !new_branch(out, "more not read"))
			ret = -ENOMEM;
	}
	free(is);
	return ret;
}

static int walk(struct walk *w, Dwarf_Die *type, uint64_t addr, struct async_stack *out)
{
	Dwarf_Die cur, pv, psm, pvm;
	uint64_t paddr = 0;
	bool have_pv = false;
	int passes = 0;

	memset(out, 0, sizeof(*out));
	if (dwarf_peel_type(type, &cur))
		return -ENOENT;
	for (int depth = 0;; depth++) {
		struct dwt_variant v;
		struct async_frame f;
		Dwarf_Die awaitee;
		uint64_t off;
		int err;

		deref_future(w, &cur, &addr);
		if (!discr_is_state(&cur)) {
			/* not a state machine: the leaf (an await macro's branches) */
			free(out->leaf);
			free(out->leaf_type);
			out->leaf = out->leaf_type = NULL;
			if ((err = set_leaf(w->dt, &cur, out)))
				return err;
			out->leaf_addr = addr;
			out->leaf_die = cur;
			err = expand_macro(w, out->leaf_type, &cur, addr, have_pv ? &pv : NULL,
					   have_pv ? &pvm : NULL, paddr, out);
			if (!err && out->macro && out->n)
				err = macro_site(w, &psm, &pvm, &out->frames[out->n - 1]);
			if (!err && !out->macro)
				err = expand_unordered(w, out->leaf_type, &cur, addr, out);
			if (err || out->macro)
				return err;
			/* a combinator: through the one future in it, or its
			 * futures as branches */
			if (++passes > MAX_PASSES || w->budget <= 0) {
				out->truncated = 1;
				return 0;
			}
			if ((err = add_passed(out, &cur, addr)))
				return err;
			err = through(w, &cur, &addr, out);
			if (err <= 0)
				return err;
			w->budget--;
			have_pv = false;   /* what the next leaf is in: no frame's state */
			continue;
		}
		if (depth >= ASYNC_STACK_MAX_DEPTH || w->budget <= 0) {
			out->truncated = 1;
			return 0;
		}
		err = dwt_read_variant(&cur, addr, w->read, w->ctx, &v);
		if (err) {
			out->error = err;
			return 0;
		}
		err = make_frame(w->dt, &cur, addr, &v, &f);
		if (err)
			return err;
		err = push_frame(out, &f);
		if (err) {
			frame_free(&f);
			return err;
		}
		w->budget--;
		if (dwt_member(&v.type, "__awaitee", NULL, &off, &awaitee))
			return 0;   /* not suspended: nothing awaited */
		pv = v.type;
		pvm = v.member;
		psm = cur;
		paddr = addr + v.offset;
		have_pv = true;
		addr += v.offset + off;
		cur = awaitee;
	}
}

int async_stack_walk(struct dwarf_types *dt, Dwarf_Die *type, uint64_t addr,
		     mem_read_fn read, void *ctx, struct async_stack *out)
{
	struct walk w = { .dt = dt, .read = read, .ctx = ctx, .budget = WALK_BUDGET };

	return walk(&w, type, addr, out);
}

int async_stack_walk_dyn(struct dwarf_types *dt, Dwarf_Die *type, uint64_t addr,
			 mem_read_fn read, void *ctx, uint64_t bias, struct async_stack *out)
{
	struct walk w = { .dt = dt, .read = read, .ctx = ctx, .bias = bias, .dyn = true,
			  .budget = WALK_BUDGET };

	return walk(&w, type, addr, out);
}

int async_stack_verify(const struct async_stack *s, mem_read_fn read, void *ctx)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct async_frame *f = &s->frames[i];
		uint64_t now = 0;
		int err;

		if (!f->discr_addr)
			continue;
		err = read(ctx, f->discr_addr, &now, f->discr_size);
		if (err)
			return err;
		if (now != f->discr)
			return 0;
	}
	for (size_t i = 0; i < s->n_branches; i++) {
		int ok = async_stack_verify(&s->branches[i].stack, read, ctx);
		if (ok != 1)
			return ok;
	}
	return 1;
}

void async_stack__clear(struct async_stack *s)
{
	for (size_t i = 0; i < s->n; i++)
		frame_free(&s->frames[i]);
	for (size_t i = 0; i < s->n_branches; i++) {
		free(s->branches[i].state);
		async_stack__clear(&s->branches[i].stack);
	}
	free(s->branches);
	free(s->macro);
	free(s->via);
	free(s->passed);
	free(s->frames);
	free(s->leaf);
	free(s->leaf_type);
	memset(s, 0, sizeof(*s));
}
