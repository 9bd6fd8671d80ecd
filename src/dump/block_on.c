/* The block_on futures of a live program's threads: see block_on.h.
 * Depends on libdwfl (unwinding), libdw (scopes, locations), dump's
 * procmem and frame_loc, sym/async_stack; never prints.
 *
 * Checked on tokio 1.24.2 and 1.53.1 (rustc 1.95, x86-64, release with
 * debug info): a multi-thread runtime's block_on (and Handle::block_on)
 * parks in CachedParkThread::block_on, out of line, whose future is pin!'s
 * copy `f` (the F by value, then a Pin<&mut F>), with no DW_AT_location
 * (the argument `f` is an entry value of rsi there); a current-thread
 * runtime parks in the driver below CoreGuard::block_on's closure, whose
 * `future` (Pin<&mut F>) has a location (rsp-relative, or in a
 * callee-saved register). The copies of F in the callers' scopes
 * (Runtime::block_on's `future`, inlined into main) were moved from before
 * the first poll: never read (the search stops at the innermost scope that
 * holds the future by value). */
#include "dump/block_on.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dump/async_exec.h"
#include "dump/frame_loc.h"
#include "dump/procmem.h"
#include "probe/threads.h"
#include "sym/async_stack.h"
#include "sym/demangle.h"

/* The runtime's block_on functions and the name of the future in each,
 * by the versions they were checked on. Names are demangled (legacy
 * mangling, rustc's default), without generics or hash. The search goes
 * from the innermost frame outwards and takes the first whose location is
 * known, until a scope holds the future by value (older copies are moved
 * from): the order here does not matter. */
static const struct bo_fn {
	const char *name;
	const char *var;
} bo_fns[] = {
	/* multi_thread, Handle::block_on (1.24.2, 1.53.1): parks in it */
	{ "tokio::runtime::park::CachedParkThread::block_on", "f" },
	/* current_thread (1.24.2, 1.53.1): the core's loop, parks in the driver */
	{ "tokio::runtime::scheduler::current_thread::CoreGuard::block_on::{{closure}}", "future" },
	{ "tokio::runtime::scheduler::current_thread::CoreGuard::block_on", "future" },
	{ "tokio::runtime::context::BlockingRegionGuard::block_on", "f" },            /* 1.24.2 */
	{ "tokio::runtime::context::blocking::BlockingRegionGuard::block_on", "f" },  /* 1.53.1 */
	{ "tokio::runtime::scheduler::current_thread::CurrentThread::block_on", "future" },
	{ "tokio::runtime::scheduler::multi_thread::MultiThread::block_on", "future" },
	{ "tokio::runtime::runtime::Runtime::block_on", "future" },
	{ "tokio::runtime::runtime::Runtime::block_on_inner", "future" },             /* 1.53.1 */
	{ "tokio::runtime::handle::Handle::block_on", "future" },
	{ "tokio::runtime::handle::Handle::block_on_inner", "future" },               /* 1.53.1 */
	/* async-io 1.11 (smol::block_on, async-std's task::block_on through
	 * async-global-executor): parks in it, the future pin!'d in place */
	{ "async_io::driver::block_on", "future" },
	/* futures-lite 1.12's future::block_on */
	{ "futures_lite::future::block_on", "future" },
};

/* The runtimes' own threads that drive their executors in a block_on
 * (async-global-executor 2.3's worker threads, smol 1.3's "smol-N" for
 * its global executor): not a program's block_on, not listed. Matched
 * against the functions (demangled, inlined ones included) of the frames
 * outside the block_on. */
static const char *const runtime_thread_fns[] = {
	"async_global_executor::threading::thread_main_loop",
	"smol::spawn::spawn::",
};

#define MAX_FRAMES   128
#define MAX_SCAN     (256u << 10)  /* bytes of stack scanned for the future */
#define PIN_PREFIX   "core::pin::Pin<"

struct frame {
	uint64_t pc;
	bool activation;     /* frame 0: pc is where it stopped, not a return address */
	struct frame_regs r;
};

struct unwind {
	pid_t pid, tid;
	const uint64_t *regs;
	bool given;
	struct frame frames[MAX_FRAMES];
	int n;
};

static char *debuginfo_path;

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct unwind *u = arg;

	(void)dwfl;
	if (u->given)
		return 0;
	u->given = true;
	*thread_argp = u;
	return u->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct unwind *u = arg;

	(void)dwfl;
	if (tid != u->tid)
		return false;
	*thread_argp = u;
	return true;
}

/* The live stack: the thread is parked, its frames do not change under
 * the read (a thread that runs meanwhile is caught by the chain's check). */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct unwind *u = arg;
	uint64_t v;

	(void)dwfl;
	if (procmem_read_raw(u->pid, addr, &v, sizeof(v)))
		return false;
	*result = v;
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct unwind *u = thread_arg;
	Dwarf_Word regs[FRAME_NREGS];

	for (int i = 0; i < FRAME_NREGS; i++)
		regs[i] = u->regs[i];
	dwfl_thread_state_register_pc(thread, regs[16]);
	return dwfl_thread_state_registers(thread, 0, 16, regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static int on_frame(Dwfl_Frame *state, void *arg)
{
	struct unwind *u = arg;
	struct frame *f;
	Dwarf_Addr pc;
	bool act;

	if (u->n == MAX_FRAMES || !dwfl_frame_pc(state, &pc, &act) || !pc)
		return DWARF_CB_ABORT;
	f = &u->frames[u->n++];
	memset(f, 0, sizeof(*f));
	f->pc = pc;
	f->activation = act;
	for (unsigned r = 0; r < FRAME_NREGS - 1; r++) {
		Dwarf_Word v;
		if (dwfl_frame_reg(state, r, &v) == 0) {
			f->r.v[r] = v;
			f->r.known |= 1u << r;
		}
	}
	f->r.v[16] = pc;
	f->r.known |= 1u << 16;
	return DWARF_CB_OK;
}

/* The concrete functions of a compilation unit (at its top level and in
 * its namespaces), found once per unit and dump: finding the function of a
 * pc then costs a look at each instead of a walk of the unit's tree (its
 * types: most of it). */
struct cu_funcs {
	Dwarf_Off cu;
	Dwarf_Die *funcs;
	size_t n;
};

struct cu_cache {
	struct cu_funcs *v;
	size_t n;
};

/* The search of one thread's frames. */
struct search {
	struct ctx *c;
	Dwarf *dbg;
	struct cu_cache *cache;
	const char *function;    /* the innermost block_on function met, NULL none */
	int err;                 /* why the future was not located (frame_loc) */
	bool done;
	bool have_type;
	Dwarf_Die type;          /* the innermost candidate's type (F or Pin<&mut F>) */
	int stop_frame;          /* the frame whose scope held it by value, -1 none */
	Dwarf_Die stop_type;     /* its type there */
	bool found;
	uint64_t addr;           /* the future located */
	Dwarf_Die ftype;         /* its type */
};

static const char *type_name(struct search *s, Dwarf_Die *t)
{
	return dwarf_types__name(s->c->dt, t);
}

static bool is_ref(struct search *s, Dwarf_Die *t)
{
	int tag = dwarf_tag(t);
	const char *name;

	if (tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type)
		return true;
	name = tag == DW_TAG_structure_type ? type_name(s, t) : NULL;
	return name && !strncmp(name, PIN_PREFIX, strlen(PIN_PREFIX));
}

/* The type a Pin or a pointer type leads to (t itself otherwise). */
static void pointee(struct search *s, Dwarf_Die *t)
{
	for (int depth = 0; depth < 8; depth++) {
		int tag = dwarf_tag(t);
		Dwarf_Attribute attr;
		Dwarf_Die next;
		uint64_t off;
		if (tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type) {
			if (!dwarf_attr(t, DW_AT_type, &attr) || !dwarf_formref_die(&attr, &next))
				return;
		} else if (!is_ref(s, t) || dwt_only_member(t, &off, &next)) {
			return;
		}
		*t = next;
	}
}

/* From the variable's location to the future: through Pin and &mut
 * (a value location holds the pointer itself). 0 with *addr, *out. */
static int to_future(struct search *s, Dwarf_Die *t, const struct frame_loc *loc,
		     uint64_t *addr, Dwarf_Die *out)
{
	Dwarf_Die cur = *t;
	bool value = loc->kind == FRAME_LOC_VALUE;
	uint64_t a = loc->where;

	if (loc->piece && loc->piece < 8)
		return -EPROTO;   /* a part of the pointer only */
	for (int depth = 0; depth < 8; depth++) {
		int tag = dwarf_tag(&cur);
		Dwarf_Attribute attr;
		uint64_t off;
		Dwarf_Die next;
		if (tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type) {
			if (!dwarf_attr(&cur, DW_AT_type, &attr) || !dwarf_formref_die(&attr, &next))
				return -EPROTO;
			if (!value && procmem_read(&s->c->pm, a, &a, sizeof(a)))
				return -EFAULT;
			value = false;
			cur = next;
			continue;
		}
		if (is_ref(s, &cur)) {   /* Pin<P> { pointer: P } */
			if (dwt_only_member(&cur, &off, &next) || (value && off))
				return -EPROTO;
			a += value ? 0 : off;
			cur = next;
			continue;
		}
		break;
	}
	if (value || !a || dwarf_tag(&cur) != DW_TAG_structure_type)
		return -EPROTO;
	*addr = a;
	*out = cur;
	return 0;
}

/* A copy of the future by value must be the polled one: block_on polls
 * before it parks, and a copy never polled (Unresumed) is one the future
 * was moved out of (a caller's argument inlined into main). 0, or
 * -ENODATA for a moved-from copy. */
static int started(struct search *s, uint64_t addr, Dwarf_Die *t)
{
	struct dwt_variant v;
	Dwarf_Attribute attr;
	const char *name;

	if (dwt_read_variant(t, addr, procmem_read, &s->c->pm, &v))
		return 0;   /* not a state machine: its walk says what it is */
	name = dwarf_formstring(dwarf_attr(&v.type, DW_AT_name, &attr));
	return name && !strcmp(name, "Unresumed") ? -ENODATA : 0;
}

/* One candidate variable of a block_on scope at the frame's pc: located,
 * or the search goes on (a reference not located), or it ends (the
 * future held by value here, not located). */
static void candidate(struct search *s, Dwarf_Die *var, const struct frame *f, int k,
		      uint64_t rel, const Dwarf_Op *fb, size_t nfb)
{
	Dwarf_Attribute attr;
	Dwarf_Die t;
	Dwarf_Op *ops;
	size_t nops;
	struct frame_loc loc;
	int err;

	if (!dwarf_attr_integrate(var, DW_AT_type, &attr) || !dwarf_formref_die(&attr, &t))
		return;
	bool by_ref = is_ref(s, &t);
	if (!s->have_type) {
		s->type = t;
		s->have_type = true;
	}
	if (!dwarf_attr(var, DW_AT_location, &attr) ||
	    dwarf_getlocation_addr(&attr, rel, &ops, &nops, 1) <= 0)
		err = -ENODATA;
	else
		err = frame_loc_eval(ops, nops, fb, nfb, &f->r, s->c->bias, procmem_read, &s->c->pm,
				     &loc);
	if (!err && !(err = to_future(s, &t, &loc, &s->addr, &s->ftype)) &&
	    !(err = by_ref ? 0 : started(s, s->addr, &s->ftype))) {
		s->found = s->done = true;
		return;
	}
	if (!s->err)
		s->err = err;
	if (!by_ref) {
		s->done = true;
		s->stop_frame = k;
		s->stop_type = t;
	}
}

/* The block_on function of a scope (its table row), or NULL. */
static const struct bo_fn *scope_fn(Dwarf_Die *scope)
{
	Dwarf_Attribute attr;
	const char *link;
	const struct bo_fn *hit = NULL;
	char *dm, *name;

	if (!dwarf_attr_integrate(scope, DW_AT_linkage_name, &attr) &&
	    !dwarf_attr_integrate(scope, DW_AT_MIPS_linkage_name, &attr))
		return NULL;
	if (!(link = dwarf_formstring(&attr)) || !(dm = sym_demangle(link)))
		return NULL;
	name = sym_strip_generics(dm);
	for (size_t i = 0; name && i < sizeof(bo_fns) / sizeof(bo_fns[0]) && !hit; i++)
		if (!strcmp(name, bo_fns[i].name))
			hit = &bo_fns[i];
	free(name);
	free(dm);
	return hit;
}

/* The variables named var directly in scope, the last declared first
 * (pin! shadows its argument in the same block). */
static void scope_vars(struct search *s, Dwarf_Die *scope, const char *var, const struct frame *f,
		       int k, uint64_t rel, const Dwarf_Op *fb, size_t nfb)
{
	Dwarf_Die child, found[8];
	size_t n = 0;

	if (dwarf_child(scope, &child))
		return;
	do {
		int tag = dwarf_tag(&child);
		Dwarf_Attribute attr;
		const char *name;
		if ((tag == DW_TAG_variable || tag == DW_TAG_formal_parameter) &&
		    dwarf_attr_integrate(&child, DW_AT_name, &attr) &&
		    (name = dwarf_formstring(&attr)) && !strcmp(name, var) && n < 8)
			found[n++] = child;
	} while (dwarf_siblingof(&child, &child) == 0);
	while (n-- && !s->done)
		candidate(s, &found[n], f, k, rel, fb, nfb);
}

#define MAX_SCOPES 64

/* The scopes below parent that contain rel, outermost first, into
 * out[*n..]: the subroutines inlined into a function and its lexical
 * blocks. (dwarf_getscopes() gives an inlined subroutine's abstract
 * context instead of the function it is inlined into.) */
static void scopes_in(Dwarf_Die *parent, uint64_t rel, Dwarf_Die *out, int *n, int depth)
{
	Dwarf_Die child;

	if (depth > 32 || dwarf_child(parent, &child))
		return;
	do {
		int tag = dwarf_tag(&child);
		if ((tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block) ||
		    dwarf_haspc(&child, rel) != 1)
			continue;
		if (*n < MAX_SCOPES)
			out[(*n)++] = child;
		scopes_in(&child, rel, out, n, depth + 1);
		return;
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int collect_funcs(Dwarf_Die *parent, struct cu_funcs *cf, size_t *cap, int depth)
{
	Dwarf_Die child;

	if (depth > 32 || dwarf_child(parent, &child))
		return 0;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_namespace) {
			if (collect_funcs(&child, cf, cap, depth + 1))
				return -ENOMEM;
			continue;
		}
		if (tag != DW_TAG_subprogram ||
		    (!dwarf_hasattr(&child, DW_AT_low_pc) && !dwarf_hasattr(&child, DW_AT_ranges)))
			continue;
		if (cf->n == *cap) {
			size_t nc = *cap ? *cap * 2 : 64;
			Dwarf_Die *v = realloc(cf->funcs, nc * sizeof(*v));
			if (!v)
				return -ENOMEM;
			cf->funcs = v;
			*cap = nc;
		}
		cf->funcs[cf->n++] = child;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/* The unit's functions (from the cache, else collected now), or NULL. */
static const struct cu_funcs *unit_funcs(struct cu_cache *cc, Dwarf_Die *cu)
{
	Dwarf_Off off = dwarf_dieoffset(cu);
	struct cu_funcs *v, cf = { .cu = off };
	size_t cap = 0;

	for (size_t i = 0; i < cc->n; i++)
		if (cc->v[i].cu == off)
			return &cc->v[i];
	if (collect_funcs(cu, &cf, &cap, 0) || !(v = realloc(cc->v, (cc->n + 1) * sizeof(*v)))) {
		free(cf.funcs);
		return NULL;
	}
	cc->v = v;
	v[cc->n] = cf;
	return &v[cc->n++];
}

static void cu_cache__clear(struct cu_cache *cc)
{
	for (size_t i = 0; i < cc->n; i++)
		free(cc->v[i].funcs);
	free(cc->v);
}

/* Whether a function (or a subroutine inlined there) at frame f's pc is
 * one of runtime_thread_fns. */
static bool runtime_thread_frame(struct search *s, const struct frame *f)
{
	uint64_t rel = (f->activation ? f->pc : f->pc - 1) - s->c->bias;
	Dwarf_Die cu, scopes[MAX_SCOPES];
	const struct cu_funcs *cf;
	int n = 0;
	bool hit = false;
	char key[40];
	const char *val;

	snprintf(key, sizeof(key), "rt:%llx", (unsigned long long)rel);
	if (dwarf_types__memo_get(s->c->dt, key, &val))
		return !strcmp(val, "1");
	if (!dwarf_addrdie(s->dbg, rel, &cu) || !(cf = unit_funcs(s->cache, &cu)))
		return false;
	for (size_t i = 0; i < cf->n && !n; i++)
		if (dwarf_haspc(&cf->funcs[i], rel) == 1) {
			scopes[n++] = cf->funcs[i];
			scopes_in(&scopes[0], rel, scopes, &n, 0);
		}
	for (int i = 0; i < n && !hit; i++) {
		Dwarf_Attribute attr;
		const char *link;
		char *dm;
		if (dwarf_tag(&scopes[i]) != DW_TAG_subprogram &&
		    dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		if ((!dwarf_attr_integrate(&scopes[i], DW_AT_linkage_name, &attr) &&
		     !dwarf_attr_integrate(&scopes[i], DW_AT_MIPS_linkage_name, &attr)) ||
		    !(link = dwarf_formstring(&attr)) || !(dm = sym_demangle(link)))
			continue;
		for (size_t k = 0; k < sizeof(runtime_thread_fns) / sizeof(runtime_thread_fns[0]); k++)
			hit |= !strncmp(dm, runtime_thread_fns[k], strlen(runtime_thread_fns[k]));
		free(dm);
	}
	dwarf_types__memo_put(s->c->dt, key, hit ? "1" : "0");
	return hit;
}

/* Frame k: its scopes at the pc, innermost first; each block_on
 * function's variables, from its innermost lexical block out. */
static void search_frame(struct search *s, const struct frame *f, int k)
{
	uint64_t rel = (f->activation ? f->pc : f->pc - 1) - s->c->bias;
	Dwarf_Die cu, scopes[MAX_SCOPES];
	Dwarf_Op *fb = NULL;
	size_t nfb = 0;
	const struct cu_funcs *cf;
	int n = 0, last;
	bool hit = false;
	char key[40];
	const char *val;

	/* a pc known (from an earlier dump of this binary) to be in no
	 * block_on function: finding its scopes walks its unit (a worker's
	 * frames are in tokio's, the largest) */
	snprintf(key, sizeof(key), "bo:%llx", (unsigned long long)rel);
	if (dwarf_types__memo_get(s->c->dt, key, &val) && !strcmp(val, "-"))
		return;
	if (!dwarf_addrdie(s->dbg, rel, &cu))
		return;   /* not the executable's code (libc, the vDSO) */
	if (!(cf = unit_funcs(s->cache, &cu)))
		return;
	for (size_t i = 0; i < cf->n && !n; i++)
		if (dwarf_haspc(&cf->funcs[i], rel) == 1) {
			scopes[n++] = cf->funcs[i];
			scopes_in(&scopes[0], rel, scopes, &n, 0);
		}
	if (n && dwarf_tag(&scopes[0]) == DW_TAG_subprogram) {
		Dwarf_Attribute attr;
		if (!dwarf_attr(&scopes[0], DW_AT_frame_base, &attr) ||
		    dwarf_getlocation_addr(&attr, rel, &fb, &nfb, 1) <= 0) {
			fb = NULL;
			nfb = 0;
		}
	}
	last = n;   /* the scopes inside the function met last (inner) */
	for (int i = n - 1; i >= 0 && !s->done; i--) {
		int tag = dwarf_tag(&scopes[i]);
		const struct bo_fn *fn;
		if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
			continue;
		if ((fn = scope_fn(&scopes[i]))) {
			hit = true;
			if (!s->function)
				s->function = fn->name;
			for (int j = last - 1; j >= i && !s->done; j--)
				scope_vars(s, &scopes[j], fn->var, f, k, rel, fb, nfb);
		}
		last = i;
	}
	if (!hit && !s->done)
		dwarf_types__memo_put(s->c->dt, key, "-");
}

/* The future not located by DWARF: the stack from the innermost frame to
 * the end of the frame that holds it by value read whole, every offset of
 * it (by the type's alignment) tried as the future. A future never moves
 * once polled, so a copy of its type in a Suspend state whose chain reads
 * (every frame suspended) is the live one. Bytes inside the live future
 * may read as another such copy, with a shorter chain (a part of it): of
 * overlapping ones the longest chain is kept; found only when one is left. */
#define MAX_HITS 8

static int scan_frame(struct search *s, const struct frame *inner, const struct frame *f)
{
	struct procmem *pm = &s->c->pm;
	uint64_t sp = inner->r.v[7], len = f->r.cfa - sp, step = 8;
	int64_t size = dwt_byte_size(&s->stop_type);
	struct { uint64_t addr; size_t depth; } hits[MAX_HITS];
	Dwarf_Attribute attr;
	Dwarf_Word align;
	uint8_t *buf;
	int n = 0, kept = 0, best = -1;

	if (!(inner->r.known & (1u << 7)) || !f->r.cfa || f->r.cfa <= sp || len > MAX_SCAN ||
	    size <= 0 || (uint64_t)size > len || !dwt_has_variants(&s->stop_type))
		return 0;
	if (dwarf_attr(&s->stop_type, DW_AT_alignment, &attr) && dwarf_formudata(&attr, &align) == 0 &&
	    align >= 8 && align <= 4096)
		step = align;
	if (!(buf = malloc(len)))
		return -ENOMEM;
	if (procmem_read_raw(s->c->pid, sp, buf, len)) {
		free(buf);
		return 0;
	}
	pm->snap = buf;
	pm->snap_addr = sp;
	pm->snap_len = len;
	for (uint64_t a = (sp + step - 1) / step * step; a + (uint64_t)size <= sp + len && n < MAX_HITS;
	     a += step) {
		struct dwt_variant v;
		struct async_stack st;
		const char *vname;
		bool ok = true;
		if (dwt_read_variant(&s->stop_type, a, procmem_read, pm, &v) ||
		    !(vname = dwarf_formstring(dwarf_attr(&v.type, DW_AT_name, &attr))) ||
		    strncmp(vname, "Suspend", 7))
			continue;
		if (async_stack_walk(s->c->dt, &s->stop_type, a, procmem_read, pm, &st) == -ENOMEM) {
			pm->snap = NULL;
			free(buf);
			return -ENOMEM;
		}
		for (size_t i = 0; i < st.n && ok; i++)
			ok = !strncmp(st.frames[i].state, "Suspend", 7);
		if (ok && st.n && !st.error) {
			hits[n].addr = a;
			hits[n++].depth = st.n + (st.leaf != NULL);
		}
		async_stack__clear(&st);
	}
	pm->snap = NULL;
	free(buf);
	/* the hits no overlapping hit beats */
	for (int i = 0; i < n; i++) {
		bool beaten = false;
		for (int j = 0; j < n && !beaten; j++)
			beaten = j != i && hits[j].addr < hits[i].addr + (uint64_t)size &&
				 hits[i].addr < hits[j].addr + (uint64_t)size &&
				 (hits[j].depth > hits[i].depth ||
				  (hits[j].depth == hits[i].depth && j < i));
		if (!beaten) {
			kept++;
			best = i;
		}
	}
	if (kept == 1 && n < MAX_HITS) {
		s->addr = hits[best].addr;
		s->ftype = s->stop_type;
		s->found = true;
	}
	return 0;
}

/* The entry of a thread whose frames hold a block_on (run: the thread is
 * running, its frames not read). */
static int read_entry(struct search *s, struct unwind *u, struct dump_block_on *e, bool run)
{
	const char *tn;
	int err;

	e->function = s->function;
	if (run) {
		/* as a task being polled: never a chain read from stale frames */
		if (s->have_type) {
			Dwarf_Die t = s->type;
			pointee(s, &t);
			if ((tn = type_name(s, &t)) && !(e->name = sym_pretty_future(tn)))
				return -ENOMEM;
		}
		e->note = "running, not sampled";
		return 0;
	}
	if (!s->found && s->stop_frame >= 0 &&
	    (err = scan_frame(s, &u->frames[0], &u->frames[s->stop_frame])))
		return err;
	if (s->found) {
		e->addr = s->addr;
		e->located = s->err ? "frame_scan" : "dwarf";
	}
	if (s->err && s->found)
		e->note = s->err == -ENODATA ? "location optimized out at the pc: the future found by "
					       "a scan of its frame"
					     : "location not known at the pc: the future found by a "
					       "scan of its frame";
	else if (s->err)
		e->note = frame_loc_strerror(s->err);
	if (!s->found && !s->err)
		e->note = frame_loc_strerror(-ENODATA);   /* no variable of it at the pc */
	if (!s->found && !s->have_type)
		return 0;
	{
		Dwarf_Die t = s->found ? s->ftype : s->type;
		pointee(s, &t);
		tn = type_name(s, &t);
	}
	if (tn && !(e->name = sym_pretty_future(tn)))
		return -ENOMEM;
	if (!s->found)
		return 0;
	for (int attempt = 0; attempt < 3; attempt++) {
		async_stack__clear(&e->stack);
		err = async_stack_walk_dyn(s->c->dt, &s->ftype, s->addr, procmem_read, &s->c->pm,
					   s->c->bias, &e->stack);
		if (err == -ENOMEM)
			return err;
		if (err) {
			e->note = "the future is not described by DWARF";
			return 0;
		}
		if (async_stack_verify(&e->stack, procmem_read, &s->c->pm) == 1) {
			/* an executor's run(): the future it runs */
			if ((err = async_exec_tidy_block_on(&e->stack)) < 0)
				return err;
			if (err && (e->stack.n || e->stack.leaf)) {
				char *name = strdup(e->stack.n ? e->stack.frames[0].future : e->stack.leaf);
				if (!name)
					return -ENOMEM;
				free(e->name);
				e->name = name;
			}
			return 0;
		}
	}
	async_stack__clear(&e->stack);
	e->note = "changed while reading";
	return 0;
}


static int add_entry(struct dump_result *r, const struct proc_thread *t, struct dump_block_on **e)
{
	struct dump_block_on *v = realloc(r->block_ons, (r->n_block_ons + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	r->block_ons = v;
	*e = &v[r->n_block_ons++];
	memset(*e, 0, sizeof(**e));
	(*e)->tid = t->tid;
	snprintf((*e)->comm, sizeof((*e)->comm), "%s", t->comm);
	return 0;
}

/* Reads of threads on a CPU, the pauses before them growing (ms): about
 * 90 ms in all, a few reads of the thread iterator */
static const unsigned oncpu_pause_ms[] = { 1, 1, 2, 3, 5, 8, 13, 21, 34 };

static int read_threads(struct ctx *c, struct proc_thread **out, size_t *n)
{
	return dump_read_threads(c, out, n);
}

/* A thread on a CPU when its registers were read has them as of its last
 * entry into the kernel, not where it runs: its stack would unwind from a
 * stale place (and its block_on go unseen). Such threads are read again
 * after growing pauses (oncpu_pause_ms) until they are off a CPU (a busy
 * thread is preempted now and then); those never caught keep on_cpu. */
static void reread_on_cpu(struct ctx *c, struct proc_thread *th, size_t n)
{
	for (size_t k = 0; k < sizeof(oncpu_pause_ms) / sizeof(oncpu_pause_ms[0]); k++) {
		struct proc_thread *again = NULL;
		struct timespec pause = { 0, oncpu_pause_ms[k] * 1000000L };
		size_t left = 0, na = 0;

		for (size_t i = 0; i < n; i++)
			left += th[i].on_cpu && th[i].has_regs;
		if (!left)
			return;
		nanosleep(&pause, NULL);
		if (read_threads(c, &again, &na))
			return;
		for (size_t j = 0; j < na; j++)
			for (size_t i = 0; i < n && !again[j].on_cpu; i++)
				if (th[i].tid == again[j].tid && th[i].on_cpu)
					th[i] = again[j];
		free(again);
	}
}

static bool has_entry(const struct dump_result *r, pid_t tid)
{
	for (size_t i = 0; i < r->n_block_ons; i++)
		if (r->block_ons[i].tid == tid)
			return true;
	return false;
}

/* Thread t's stack unwound from its registers, its block_on (if any)
 * added as an entry. 0 or -ENOMEM. */
static int unwind_one(struct ctx *c, Dwfl *dwfl, struct unwind *u, struct cu_cache *cache,
		      const struct proc_thread *t)
{
	struct search s = { .c = c, .dbg = dwarf_types__dwarf(c->dt), .cache = cache,
			    .stop_frame = -1 };
	struct dump_block_on *e;
	int ret;

	if (!t->has_regs || !t->regs[16] || !s.dbg)
		return 0;
	u->tid = t->tid;
	u->regs = t->regs;
	u->given = false;
	u->n = 0;
	dwfl_getthread_frames(dwfl, t->tid, on_frame, u);
	for (int k = 0; k + 1 < u->n; k++)
		if (u->frames[k + 1].r.known & (1u << 7))
			u->frames[k].r.cfa = u->frames[k + 1].r.v[7];
	int k = 0;
	for (; k < u->n && !s.done; k++)
		search_frame(&s, &u->frames[k], k);
	if (!s.function)
		return 0;
	/* a runtime's own thread in its block_on: the executor, not a future
	 * of the program */
	for (; k < u->n; k++)
		if (runtime_thread_frame(&s, &u->frames[k]))
			return 0;
	if ((ret = add_entry(c->res, t, &e)))
		return ret;
	return read_entry(&s, u, e, t->on_cpu);
}

/* Thread tid's context switches so far (voluntary and not: the counters
 * the thread iterator reads), from /proc. 0 or -errno. */
static int thread_switches(pid_t pid, pid_t tid, uint64_t *sw)
{
	char path[64], line[128];
	unsigned long long v;
	int seen = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	if (!(f = fopen(path, "re")))
		return -errno;
	*sw = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1) {
			*sw += v;
			seen++;
		}
	fclose(f);
	return seen == 2 ? 0 : -ENODATA;
}

#define STABLE_ROUNDS 5   /* reads of a thread that runs meanwhile */

int dump_block_ons(struct ctx *c, const struct proc_thread *given, size_t n)
{
	struct proc_thread *th = NULL;
	struct unwind *u = NULL;
	struct cu_cache cache = { 0 };
	Dwfl *dwfl = NULL;
	bool *redo = NULL;
	int ret = 0;

	if (!given) {
		if (read_threads(c, &th, &n))
			return 0;
	} else if (!(th = malloc((n ? n : 1) * sizeof(*th)))) {
		return -ENOMEM;
	} else {
		memcpy(th, given, n * sizeof(*th));
	}
	reread_on_cpu(c, th, n);
	if (!(u = calloc(1, sizeof(*u))) || !(redo = calloc(n ? n : 1, sizeof(*redo)))) {
		ret = -ENOMEM;
		goto out;
	}
	u->pid = c->pid;
	dwfl = dwfl_begin(&proc_callbacks);
	if (!dwfl)
		goto out;
	dwfl_report_begin(dwfl);
	if (dwfl_linux_proc_report(dwfl, c->pid)) {
		dwfl_report_end(dwfl, NULL, NULL);
		goto out;
	}
	dwfl_report_end(dwfl, NULL, NULL);
	if (!dwfl_attach_state(dwfl, NULL, c->pid, &thread_callbacks, u))
		goto out;
	for (size_t i = 0; i < n; i++)
		redo[i] = true;
	/* A thread preempted (off a CPU, its registers current) may run again
	 * while its stack is unwound: the frames read would not be those of
	 * the registers (an unwind that stops early, a block_on unseen). Its
	 * context switches, read again after the unwinds (/proc: no iterator
	 * run for a target that sits still), say whether it ran:
	 * then, when no block_on was found in it, it is taken again with its
	 * new registers (a block_on found stays: its future does not move
	 * while it runs, and its chain is checked as it is read). */
	for (int round = 0; round < STABLE_ROUNDS && !ret; round++) {
		struct proc_thread *again = NULL;
		size_t na = 0, todo = 0;

		for (size_t i = 0; i < n && !ret; i++) {
			if (!redo[i])
				continue;
			ret = unwind_one(c, dwfl, u, &cache, &th[i]);
			todo++;
		}
		if (ret || !todo || round + 1 == STABLE_ROUNDS)
			break;
		todo = 0;
		for (size_t i = 0; i < n; i++) {
			uint64_t sw = 0;
			bool was = redo[i] && !has_entry(c->res, th[i].tid) && !th[i].on_cpu;
			redo[i] = was && !thread_switches(c->pid, th[i].tid, &sw) && sw != th[i].switches;
			todo += redo[i];
		}
		/* the new registers of those that ran */
		if (!todo || read_threads(c, &again, &na))
			break;
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; redo[i] && j < na; j++)
				if (again[j].tid == th[i].tid)
					th[i] = again[j];
		free(again);
		reread_on_cpu(c, th, n);
	}
	/* on a CPU throughout, no block_on seen from its stale registers:
	 * said, never dropped */
	for (size_t i = 0; i < n && !ret; i++) {
		struct dump_result *r = c->res;
		struct dump_thread *v;
		if (!th[i].on_cpu || !th[i].has_regs || has_entry(r, th[i].tid))
			continue;
		if (!(v = realloc(r->running, (r->n_running + 1) * sizeof(*v)))) {
			ret = -ENOMEM;
			break;
		}
		r->running = v;
		v[r->n_running].tid = th[i].tid;
		snprintf(v[r->n_running++].comm, sizeof(v->comm), "%s", th[i].comm);
	}
out:
	cu_cache__clear(&cache);
	dwfl_end(dwfl);
	free(redo);
	free(u);
	free(th);
	return ret;
}

void dump_block_ons__free(struct dump_block_on *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(b[i].name);
		async_stack__clear(&b[i].stack);
	}
	free(b);
}
