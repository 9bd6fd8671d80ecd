/* Async backtraces from DWARF state machines. Depends on libdw (through
 * dwarf_types) and the name helpers of demangle.h; no I/O of its own. */
#include "sym/async_stack.h"

#include <dwarf.h>
#include <errno.h>
#include <stdbool.h>
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

/* Pin<P> -> P, and a thin pointer to a state machine -> what it points to
 * (reading the pointer). Returns true when it moved. */
static bool follow(struct dwarf_types *dt, Dwarf_Die *type, uint64_t *addr, mem_read_fn read,
		   void *ctx)
{
	const char *name = dwarf_types__name(dt, type);
	Dwarf_Die inner, m;
	Dwarf_Attribute attr;
	uint64_t off, ptr = 0;

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
	if (read(ctx, *addr, &ptr, sizeof(ptr)) || !ptr)
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

int async_stack_walk(struct dwarf_types *dt, Dwarf_Die *type, uint64_t addr,
		     mem_read_fn read, void *ctx, struct async_stack *out)
{
	Dwarf_Die cur;

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
			if (!follow(dt, &cur, &addr, read, ctx))
				break;
		if (!discr_is_state(&cur))
			return set_leaf(dt, &cur, out);   /* not a state machine: the leaf */
		if (depth >= ASYNC_STACK_MAX_DEPTH) {
			out->truncated = 1;
			return 0;
		}
		err = dwt_read_variant(&cur, addr, read, ctx, &v);
		if (err) {
			out->error = err;
			return 0;
		}
		err = make_frame(dt, &cur, addr, &v, &f);
		if (err)
			return err;
		err = push_frame(out, &f);
		if (err) {
			frame_free(&f);
			return err;
		}
		if (dwt_member(&v.type, "__awaitee", NULL, &off, &awaitee))
			return 0;   /* not suspended: nothing awaited */
		addr += v.offset + off;
		cur = awaitee;
	}
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
	return 1;
}

void async_stack__clear(struct async_stack *s)
{
	for (size_t i = 0; i < s->n; i++)
		frame_free(&s->frames[i]);
	free(s->frames);
	free(s->leaf);
	free(s->leaf_type);
	memset(s, 0, sizeof(*s));
}
