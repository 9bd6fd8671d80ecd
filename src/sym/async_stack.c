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
	struct dwarf_types *dt = w->dt;
	const char *name = dwarf_types__name(dt, type);
	Dwarf_Die inner, m;
	Dwarf_Attribute attr;
	uint64_t off, ptr = 0;

	if (follow_dyn(w, type, addr))
		return true;
	if (name && !strncmp(name, "core::pin::Pin<", 15) &&
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

/* One branch future at addr: a MaybeDone<F> (join!) read through its
 * variant (Future: F's chain; Done, Gone), else the future itself. */
static int add_branch(struct walk *w, Dwarf_Die *type, uint64_t addr, bool disabled,
		      struct async_stack *out)
{
	struct async_branch *b;
	const char *name = dwarf_types__name(w->dt, type);
	const char *state = disabled ? "disabled" : "pending";
	Dwarf_Die t = *type, inner;
	uint64_t off;
	int err = 0;

	if (out->n_branches >= MAX_BRANCHES)
		return 0;
	if (!disabled && name && strstr(name, "::maybe_done::MaybeDone<")) {
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
	if (!dwt_member(leaf_type, "f", NULL, &off, &clo) &&
	    !dwt_member(&clo, "_fut0", NULL, &foff0, &et)) {
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
	}
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
	unsigned at = dwarf_types__first_line(w->dt, own, lo, hi);
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

#define COMBINATOR_DEPTH 12  /* member levels searched for the inner future (a variant counts one) */

/* A combinator's inner future: the state machines reachable through the
 * members of type at addr (enums through their active variant, no
 * pointers followed), up to 2 counted; with exactly one, *found / *faddr
 * and the structures passed through (path[0..*plen)) say where. */
struct inner_search {
	int found;
	Dwarf_Die type;
	uint64_t addr;
	Dwarf_Die path[COMBINATOR_DEPTH], best[COMBINATOR_DEPTH];
	int n_best;
};

static void search_inner(struct walk *w, Dwarf_Die *type, uint64_t addr, int depth,
			 struct inner_search *is)
{
	Dwarf_Die t, child, mt;
	Dwarf_Attribute attr;
	Dwarf_Word off;

	if (depth >= COMBINATOR_DEPTH || is->found > 1 || dwarf_peel_type(type, &t) ||
	    dwarf_tag(&t) != DW_TAG_structure_type)
		return;
	is->path[depth] = t;
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
		if (discr_is_state(&mt)) {
			if (++is->found == 1) {
				is->type = mt;
				is->addr = addr + off;
				memcpy(is->best, is->path, (size_t)(depth + 1) * sizeof(Dwarf_Die));
				is->n_best = depth + 1;
			}
		} else {
			search_inner(w, &mt, addr + off, depth + 1, is);
		}
	} while (is->found <= 1 && dwarf_siblingof(&child, &child) == 0);
}

/* "A > B": the readable names of the combinators passed through, each
 * without its generic arguments; enum variants ("Some", "Incomplete")
 * left out. */
static char *via_names(struct walk *w, const struct inner_search *is)
{
	char *out = NULL;
	size_t len = 0;

	for (int i = 0; i < is->n_best; i++) {
		Dwarf_Die d = is->best[i], prev;
		const char *n = dwarf_types__name(w->dt, &d);
		if (i)
			prev = is->best[i - 1];
		if (!n || !strstr(n, "::") || (i && dwt_has_variants(&prev)))
			continue;   /* a variant's own structure */
		size_t nl = strcspn(n, "<");
		char *p = realloc(out, len + nl + 4);
		if (!p) {
			free(out);
			return NULL;
		}
		out = p;
		len += (size_t)sprintf(out + len, "%s%.*s", len ? " > " : "", (int)nl, n);
	}
	return out;
}

static int walk(struct walk *w, Dwarf_Die *type, uint64_t addr, struct async_stack *out)
{
	Dwarf_Die cur, pv, psm, pvm;
	uint64_t paddr = 0;
	bool have_pv = false;

	memset(out, 0, sizeof(*out));
	if (dwarf_peel_type(type, &cur))
		return -ENOENT;
	for (int depth = 0;; depth++) {
		struct dwt_variant v;
		struct async_frame f;
		Dwarf_Die awaitee;
		uint64_t off;
		int err;

		for (int hop = 0; hop < MAX_DEREFS && !discr_is_state(&cur); hop++)
			if (!follow(w, &cur, &addr))
				break;
		if (!discr_is_state(&cur)) {
			/* not a state machine: the leaf (an await macro's branches) */
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
			if (err || out->macro || !out->n)
				return err;
			/* a combinator around one future: walked through */
			struct inner_search is = { 0 };
			search_inner(w, &cur, addr, 0, &is);
			if (is.found != 1)
				return 0;
			if (!(out->frames[out->n - 1].via = via_names(w, &is)))
				return -ENOMEM;
			free(out->leaf);
			free(out->leaf_type);
			out->leaf = out->leaf_type = NULL;
			out->leaf_addr = 0;
			cur = is.type;
			addr = is.addr;
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
	free(s->frames);
	free(s->leaf);
	free(s->leaf_type);
	memset(s, 0, sizeof(*s));
}
