/* Stack naming and DWARF unwinding (stacks.h). */
#include "record/stacks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/notice.h"
#include "sym/dwarf_types.h"
#include "sym/dwarf_unwind.h"
#include "sym/kallsyms.h"
#include "sym/proc_syms.h"
#include "util/u64map.h"

/* What DWARF says of a user code address. */
struct expansion {
	struct proc_sym_inline *inl;   /* functions inlined there, innermost first */
	size_t n;
	char file[AS_FRAME_FILE_MAX + 1]; /* the code's (or the call of inl's
	                                     outermost) file, "" unknown */
	uint32_t line, col;
};

struct rec_stacks {
	struct kallsyms *ksyms;
	struct proc_syms *usyms;
	struct dwarf_unwind *unwind;  /* --dwarf */
	/* room for one stack's frames and names */
	struct as_frame frames[2 * AS_STACK_MAX_FRAMES];
	char names[2 * AS_STACK_MAX_FRAMES][AS_FRAME_SYM_MAX + 1];
	uint32_t cols[2 * AS_STACK_MAX_FRAMES];   /* each frame's column, 0 unknown */
	/* what DWARF says of a user code address, cached (bounded by the code
	 * the stacks touch): addr -> index into exps + 1 */
	struct u64map exp_of;
	struct expansion **exps;      /* each allocated on its own: frames point into them */
	size_t n_exps, cap_exps;
};

struct rec_stacks *rec_stacks__new(pid_t tgid, const char *path, const struct elf_image *img,
				   struct dwarf_types *dt, bool dwarf, bool kernel,
				   const struct recorder_opts *o)
{
	struct rec_stacks *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	/* kernel names now: a report may run where this kernel is not */
	if (kernel && !(s->ksyms = kallsyms__load(NULL)))
		rec_notify(o, REC_NOTICE_WARNING, "cannot read /proc/kallsyms (%s): kernel frames "
			   "will have no names", strerror(errno));
	s->usyms = proc_syms__new(tgid, NULL);
	if (s->usyms && img && proc_syms__lend(s->usyms, path, img, dt ? dwarf_types__dwarf(dt) : NULL)) {
		rec_stacks__free(s);
		errno = ENOMEM;
		return NULL;
	}
	if (dwarf && !(s->unwind = dwarf_unwind__new(tgid)))
		rec_notify(o, REC_NOTICE_WARNING, "cannot start DWARF unwinding (%s): user stacks "
			   "will have the frame-pointer walk", strerror(errno));
	return s;
}

uint32_t rec_stack_user_depth(const struct raw_offcpu *o)
{
	uint32_t nu = o->ubytes / 8;

	if (nu > AS_OFFCPU_FRAMES)
		nu = AS_OFFCPU_FRAMES;
	for (uint32_t i = 0; i < nu; i++)
		if (o->ustack[i] < 0x10000 || o->ustack[i] >= 0x800000000000ull)
			return i;
	return nu;
}

/* Unwinds the registers and stack copy of a record r (a struct
 * raw_sample_dwarf or raw_spawn_stack: the same field names) into pcs,
 * AS_OFFCPU_FRAMES at most. */
#define UNWIND_COPY(s, tid, r, pcs) dwarf_unwind__stack((s)->unwind, (tid),		\
	(const uint64_t *)(r)->regs, (r)->copy,						\
	(r)->copy_len <= sizeof((r)->copy) ? (r)->copy_len : 0,				\
	&(struct dwarf_unwind_fix){ .slot = (const uint64_t *)(r)->uret_slot,		\
		.orig = (const uint64_t *)(r)->uret_orig,				\
		.n = (r)->n_uret <= AS_URET_MAX ? (int)(r)->n_uret : AS_URET_MAX },	\
	(pcs), AS_OFFCPU_FRAMES)

void rec_stacks__unwind(struct rec_stacks *s, const struct raw_sample_dwarf *r,
			struct raw_offcpu *out, struct unwind_stats *st)
{
	uint64_t pcs[AS_OFFCPU_FRAMES];
	uint32_t fp = rec_stack_user_depth(&r->s), kept = fp;

	*out = r->s;
	int n = UNWIND_COPY(s, r->s.h.tid, r, pcs);
	if (n <= 0)
		return;  /* no unwinding session: the frame-pointer walk as it is */
	bool fp_won = (uint32_t)n < fp;
	if (!fp_won) {
		memcpy(out->ustack, pcs, (size_t)n * sizeof(pcs[0]));
		out->ubytes = (uint32_t)n * 8;
		kept = (uint32_t)n;
	}
	unwind_stats__add(st, kept, fp, fp_won);
}

/* Returns the expansion of the user code address addr (computed once):
 * the functions inlined there and the file:line of the code. NULL when out
 * of memory or addr cannot be a key (then no expansion). */
static const struct expansion *expand(struct rec_stacks *s, uint64_t addr)
{
	struct proc_sym_inline inl[PROC_SYMS_INLINE_MAX];
	char file[AS_FRAME_FILE_MAX + 1];
	uint32_t line = 0, col = 0;
	uint64_t v;

	if (!addr || addr == UINT64_MAX)   /* not keys of a u64map */
		return NULL;
	if (u64map__get(&s->exp_of, addr, &v))
		return s->exps[v - 1];
	if (s->n_exps == s->cap_exps) {
		size_t cap = s->cap_exps ? s->cap_exps * 2 : 256;
		struct expansion **es = realloc(s->exps, cap * sizeof(*es));
		if (!es)
			return NULL;
		s->exps = es;
		s->cap_exps = cap;
	}
	size_t n = proc_syms__inlined(s->usyms, addr, inl, PROC_SYMS_INLINE_MAX, file, sizeof(file),
				      &line, &col);
	struct expansion *e = calloc(1, sizeof(*e));
	if (!e || (n && !(e->inl = malloc(n * sizeof(*e->inl))))) {
		free(e);
		return NULL;
	}
	if (n)
		memcpy(e->inl, inl, n * sizeof(*e->inl));
	e->n = n;
	if (file[0] && line) {
		snprintf(e->file, sizeof(e->file), "%s", file);
		e->line = line;
		e->col = col;
	}
	if (u64map__set(&s->exp_of, addr, s->n_exps + 1)) {
		free(e->inl);
		free(e);
		return NULL;
	}
	s->exps[s->n_exps++] = e;
	return e;
}

bool rec_stacks__name(struct rec_stacks *s, const struct raw_offcpu *o, struct as_stack *out)
{
	uint32_t nk = o->kbytes / 8, nu = rec_stack_user_depth(o);

	if (!nk && !nu)
		return false;
	if (nk > AS_STACK_MAX_FRAMES)
		nk = AS_STACK_MAX_FRAMES;
	if (nu > AS_STACK_MAX_FRAMES)
		nu = AS_STACK_MAX_FRAMES;
	for (uint32_t i = 0; i < nk; i++) {
		char *name = s->names[i];
		const char *k = kallsyms__lookup(s->ksyms, o->kstack[i]);
		snprintf(name, AS_FRAME_SYM_MAX + 1, "%s", k ? k : "");
		s->frames[i] = (struct as_frame){ .addr = o->kstack[i], .sym = name };
	}
	/* user frames, each preceded by the functions inlined at it (DWARF),
	 * innermost first, up to AS_STACK_MAX_FRAMES in all */
	uint32_t n = 0;
	for (uint32_t j = 0; j < nu && n < AS_STACK_MAX_FRAMES; j++) {
		uint64_t addr = o->ustack[j];
		/* a return address points after its call: look up the call */
		uint64_t at = j == 0 ? addr : addr - 1;
		const struct expansion *e = s->usyms ? expand(s, at) : NULL;
		for (size_t k = 0; e && k < e->n && n < AS_STACK_MAX_FRAMES; k++, n++) {
			s->frames[nk + n] = (struct as_frame){
				.addr = addr, .sym = e->inl[k].name,
				.file = e->inl[k].file[0] ? e->inl[k].file : NULL, .line = e->inl[k].line,
			};
			s->cols[nk + n] = e->inl[k].col;
		}
		if (n >= AS_STACK_MAX_FRAMES)
			break;
		char *name = s->names[nk + n];
		name[0] = '\0';
		if (s->usyms)
			proc_syms__name(s->usyms, at, name, AS_FRAME_SYM_MAX + 1);
		s->frames[nk + n] = (struct as_frame){
			.addr = addr, .sym = name, .file = e && e->file[0] ? e->file : NULL,
			.line = e ? e->line : 0,
		};
		s->cols[nk + n] = e ? e->col : 0;
		n++;
	}
	*out = (struct as_stack){ .n_kernel = (uint16_t)nk, .n_user = (uint16_t)n, .frames = s->frames };
	return true;
}

/* Code of the runtime, the standard library, a generic impl or C. */
static bool library_sym(const char *sym, const char *const *lib)
{
	const char *s = sym[0] == '<' ? sym + 1 : sym;
	size_t id = 0;

	if (!strstr(s, "::"))
		return true;
	for (size_t i = 0; lib && lib[i]; i++)
		if (!strncmp(s, lib[i], strlen(lib[i])))
			return true;
	/* "<F as core::future::Future>::poll": an impl for a type parameter or
	 * a primitive (a program's own types are paths: "app::Server") */
	while (s[id] == '_' || (s[id] >= 'A' && s[id] <= 'Z') || (s[id] >= 'a' && s[id] <= 'z') ||
	       (s[id] >= '0' && s[id] <= '9'))
		id++;
	return id && !strncmp(s + id, " as ", 4);
}

bool rec_stacks__call_site(struct rec_stacks *s, const struct raw_spawn_stack *r,
			   const char *const *lib, char *file, size_t len, uint32_t *line,
			   uint32_t *col)
{
	struct raw_offcpu o = { .h = r->h };
	struct as_stack stack;
	uint64_t pcs[AS_OFFCPU_FRAMES];

	if (!s || !s->unwind)
		return false;
	int n = UNWIND_COPY(s, r->h.tid, r, pcs);
	if (n <= 0)
		return false;
	memcpy(o.ustack, pcs, (size_t)n * sizeof(pcs[0]));
	o.ubytes = (uint32_t)n * 8;
	if (!rec_stacks__name(s, &o, &stack))
		return false;
	for (size_t i = stack.n_kernel; i < (size_t)stack.n_kernel + stack.n_user; i++) {
		const struct as_frame *f = &stack.frames[i];
		if (!f->sym || !f->sym[0] || library_sym(f->sym, lib))
			continue;
		if (!f->file || !f->line)
			return false;
		snprintf(file, len, "%s", f->file);
		*line = f->line;
		*col = s->cols[i];
		return true;
	}
	return false;
}

bool rec_stacks__called_from_spawn(struct rec_stacks *s, uint64_t ret, const char *const *lib)
{
	char name[AS_FRAME_SYM_MAX + 1] = "";

	if (!s || !s->usyms || ret < 2)
		return true;
	const struct expansion *e = expand(s, ret - 1);
	/* without DWARF there, a spawn inlined into the program's function
	 * cannot be told from the program's own call */
	if (!e || (!e->n && !e->file[0]))
		return true;
	/* innermost first: the inlined functions, then the function itself */
	for (size_t k = 0; e && k <= e->n; k++) {
		const char *f = k < e->n ? e->inl[k].name : name;
		if (k == e->n && !proc_syms__name(s->usyms, ret - 1, name, sizeof(name)))
			return true;
		if (!f[0])
			return true;
		if (!library_sym(f, lib))
			return false;   /* the program's own code called it */
		if (strstr(f, "spawn"))
			return true;
	}
	return true;
}

void rec_stacks__prime(struct rec_stacks *s)
{
	if (!s)
		return;
	proc_syms__prime(s->usyms);
	dwarf_unwind__prime(s->unwind);
}

void rec_stacks__free(struct rec_stacks *s)
{
	if (!s)
		return;
	kallsyms__free(s->ksyms);
	proc_syms__free(s->usyms);
	u64map__clear(&s->exp_of);
	for (size_t i = 0; i < s->n_exps; i++) {
		free(s->exps[i]->inl);
		free(s->exps[i]);
	}
	free(s->exps);
	dwarf_unwind__free(s->unwind);
	free(s);
}
