/* Planning future-level probes: see futures_plan.h. Selection is by
 * demangled symbol name; DWARF then tells an async state machine's poll
 * function (subprogram "{async_fn#N}" / "{async_block#N}" whose first
 * parameter is Pin<&mut {async_*_env#N}>) from a plain closure, where self
 * is at entry (the parameter's location at the function's first address),
 * where __state sits in the state machine, and the source line of the
 * function and of each SuspendN variant (its .await). */
#include "probe/futures_plan.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym/async_stack.h"
#include "sym/demangle.h"
#include "sym/dwarf_types.h"
#include "util/u64map.h"

/* Await points kept per state machine (as the trace format keeps). */
#define FMT_MAX_AWAITS_PLAN 4096u

/* CAT's patterns (uftrace -F), in this demangler's spelling: legacy
 * "{{closure}}" and v0 "{closure#N}" both. */
static const char *const cat_patterns[] = {
	"^<async_std::task::builder::SupportTaskLocals<.*> as core::future::future::Future>::poll::(\\{\\{closure\\}\\}|\\{closure#[0-9]+\\})$",
	"^<core::future::from_generator::GenFuture<.*> as core::future::future::Future>::poll$",
	"::(\\{\\{closure\\}\\}|\\{closure#[0-9]+\\})$",
	"as core::future::future::Future>::poll$",
};

/* Crates never traced by --futures when the binary has no DWARF to tell
 * the target's own crates: the standard library, runtimes and the usual
 * async plumbing. */
static const char *const dep_crates[] = {
	"std", "core", "alloc", "tokio", "tokio_util", "tokio_stream", "futures", "futures_core",
	"futures_util", "futures_channel", "futures_executor", "futures_io", "futures_lite",
	"async_std", "async_task", "async_executor", "async_io", "async_lock", "async_channel",
	"async_global_executor", "async_process", "async_net", "async_fs", "smol", "blocking",
	"mio", "hyper", "h2", "http", "http_body", "tower", "tower_service", "tower_layer", "bytes",
	"parking", "parking_lot", "parking_lot_core", "polling", "event_listener", "tracing",
	"tracing_core", "tracing_futures", "pin_project_lite", "pin_project", "once_cell",
	"crossbeam_utils", "crossbeam_channel", "socket2", "want", "try_lock", "httparse",
	"reqwest", "rustls", "tokio_rustls", "slab", "signal_hook_registry", "waker_fn",
	"kv_log_macro", "log", "gimli", "addr2line", "miniz_oxide", "object", "rustc_demangle",
	"hashbrown", "memchr", "serde", "serde_json",
};

char *futures_crate_of(const char *name, char *out, size_t len)
{
	const char *p = name;
	size_t n = 0;

	while (*p == '<' || *p == '&' || *p == '*' || *p == ' ')
		p++;
	if (!strncmp(p, "mut ", 4))
		p += 4;
	while (p[n] && p[n] != ':' && p[n] != '<' && p[n] != ' ' && p[n] != '>' && n + 1 < len)
		n++;
	memcpy(out, p, n);
	out[n] = '\0';
	return out;
}

static bool is_dep_crate(const char *crate)
{
	for (size_t i = 0; i < sizeof(dep_crates) / sizeof(dep_crates[0]); i++)
		if (!strcmp(crate, dep_crates[i]))
			return true;
	return false;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

/* Length of a trailing closure segment ("::{{closure}}", "::{closure#3}"),
 * or 0. */
static size_t closure_suffix(const char *s)
{
	size_t n = strlen(s);
	if (ends_with(s, "::{{closure}}"))
		return strlen("::{{closure}}");
	if (n && s[n - 1] == '}') {
		const char *c = strstr(s, "::{closure#");
		const char *last = NULL;
		while (c) {
			last = c;
			c = strstr(c + 1, "::{closure#");
		}
		if (last) {
			const char *q = last + strlen("::{closure#");
			while (*q >= '0' && *q <= '9')
				q++;
			if (q[0] == '}' && !q[1])
				return n - (size_t)(last - s);
		}
	}
	return 0;
}

#define FUTURE_POLL_SUFFIX " as core::future::future::Future>::poll"

char *futures_readable_name(const char *symbol, const char *die_name)
{
	size_t cl = closure_suffix(symbol);
	size_t n = strlen(symbol);
	char *out;

	if (ends_with(symbol, FUTURE_POLL_SUFFIX)) {
		size_t k = n - strlen(FUTURE_POLL_SUFFIX);
		if (asprintf(&out, "%.*s as Future>::poll", (int)k, symbol) < 0)
			return NULL;
		return out;
	}
	if (cl && die_name && !strncmp(die_name, "{async_fn#", 10))
		return strndup(symbol, n - cl);
	if (cl && die_name && !strncmp(die_name, "{async_block#", 13)) {
		if (asprintf(&out, "%.*s::%s", (int)(n - cl), symbol, die_name) < 0)
			return NULL;
		return out;
	}
	return strdup(symbol);
}

/* A path below a dependency's or the toolchain's sources. */
static bool dep_path(const char *p)
{
	return p && (strstr(p, "/registry/") || strstr(p, "/.cargo/") || !strncmp(p, "/rustc/", 7) ||
		     strstr(p, "/vendor/") || !strncmp(p, "library/", 8) || strstr(p, "/rustlib/") ||
		     strstr(p, "/usr/src/rustc"));
}

/* path below dir ("/w/app/src/x.rs" below "/w/app"). */
static bool under_dir(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	return !strncmp(path, dir, n) && path[n] == '/';
}

/* What DWARF says of one planned function. */
struct fn_info {
	bool found;            /* its subprogram was seen */
	bool own;              /* in a compilation unit of the target's own crates */
	bool dep_decl;         /* declared in a dependency's or std's sources */
	char die_name[64];     /* "{async_fn#0}", "poll", ... */
	char *file;            /* decl_file, relative to the unit's comp_dir */
	uint32_t line;
	int self_reg;          /* 0 rdi, 1 rsi, 2 rdx, 3 rcx; -1 unknown */
	int64_t state_off;     /* __state offset, -1: not a state machine */
	uint8_t ret_kind, ret_size;   /* the returned Poll's tag (AS_RET_*) */
	uint16_t ret_off;
	uint64_t ret_pending;
	uint32_t *awaits;
	char **await_types;    /* readable __awaitee type per await point, or NULL */
	uint32_t n_awaits;
	/* A wrapper's poll (tracing's Instrumented<T>, whose T::poll is
	 * inlined in it): T's name when T is a state machine of the target's
	 * own sources, "" otherwise; state_off is then T's __state inside
	 * the wrapper. */
	char wrapped[192];
	const char *wrap_member;  /* set before the DWARF walk for a wrapper's poll */
};

/* Futures that wrap the program's own and inline its poll: the poll of
 * such a wrapper, one copy per wrapped type, stands for the wrapped
 * future's (tokio_unstable + tracing builds wrap every task's future in an
 * Instrumented<F> for its span). member: where the wrapped future is. */
static const struct { const char *poll_prefix, *member; } wrapper_polls[] = {
	{ "<tracing::instrument::Instrumented<", "inner" },
};

static const char *wrapper_member(const char *symbol)
{
	for (size_t i = 0; i < sizeof(wrapper_polls) / sizeof(wrapper_polls[0]); i++)
		if (!strncmp(symbol, wrapper_polls[i].poll_prefix, strlen(wrapper_polls[i].poll_prefix)))
			return wrapper_polls[i].member;
	return NULL;
}

static int reg_of_op(unsigned atom)
{
	switch (atom) {
	case DW_OP_reg5: return 0;   /* rdi */
	case DW_OP_reg4: return 1;   /* rsi */
	case DW_OP_reg1: return 2;   /* rdx */
	case DW_OP_reg2: return 3;   /* rcx */
	default: return -1;
	}
}

/* Pin<&mut T>, &mut T, *mut T -> T (structure). */
static bool pointee_struct(Dwarf_Die *type, Dwarf_Die *out)
{
	Dwarf_Die t, mt;
	Dwarf_Attribute a;
	uint64_t off;

	for (int hop = 0; hop < 4; hop++) {
		if (dwarf_peel_type(type, &t))
			return false;
		int tag = dwarf_tag(&t);
		if (tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type ||
		    tag == DW_TAG_rvalue_reference_type) {
			if (!dwarf_formref_die(dwarf_attr_integrate(&t, DW_AT_type, &a), &t))
				return false;
			if (dwarf_peel_type(&t, out))
				return false;
			return dwarf_tag(out) == DW_TAG_structure_type;
		}
		if (tag != DW_TAG_structure_type || dwt_only_member(&t, &off, &mt) || off)
			return false;   /* Pin { __pointer } */
		*type = mt;
	}
	return false;
}

/* The readable type of the __awaitee of a SuspendN variant type, or NULL. */
static char *awaitee_of(struct dwarf_types *dt, Dwarf_Die *suspend)
{
	Dwarf_Die t, m, at;
	uint64_t off;

	if (dwarf_peel_type(suspend, &t) || dwt_member(&t, "__awaitee", &m, &off, &at))
		return NULL;
	const char *n = dwarf_types__name(dt, &at);
	return n ? sym_pretty_future(n) : NULL;
}

/* The __state member of a state machine and its await lines. */
static int state_machine(struct dwarf_types *dt, Dwarf_Die *st, struct fn_info *fi)
{
	Dwarf_Die vp, discr, v, vm;
	Dwarf_Attribute a;
	Dwarf_Word off;

	if (dwarf_child(st, &vp))
		return 0;
	do {
		if (dwarf_tag(&vp) != DW_TAG_variant_part)
			continue;
		if (!dwarf_formref_die(dwarf_attr(&vp, DW_AT_discr, &a), &discr))
			return 0;
		const char *n = dwarf_diename(&discr);
		if (!n || strcmp(n, "__state") ||
		    dwarf_formudata(dwarf_attr(&discr, DW_AT_data_member_location, &a), &off))
			return 0;
		fi->state_off = (int64_t)off;
		if (dwarf_child(&vp, &v))
			return 0;
		do {
			Dwarf_Word dv;
			int line = 0;
			if (dwarf_tag(&v) != DW_TAG_variant ||
			    dwarf_formudata(dwarf_attr(&v, DW_AT_discr_value, &a), &dv) || dv < 3 ||
			    dv - 3 >= FMT_MAX_AWAITS_PLAN || dwarf_child(&v, &vm))
				continue;
			if (dwarf_tag(&vm) != DW_TAG_member || dwarf_decl_line(&vm, &line) || line <= 0)
				continue;
			uint32_t k = (uint32_t)(dv - 3);
			if (k >= fi->n_awaits) {
				uint32_t *na = realloc(fi->awaits, (k + 1) * sizeof(*na));
				if (!na)
					return -ENOMEM;
				fi->awaits = na;
				char **nt = realloc(fi->await_types, (k + 1) * sizeof(*nt));
				if (!nt)
					return -ENOMEM;
				fi->await_types = nt;
				for (uint32_t i = fi->n_awaits; i <= k; i++) {
					na[i] = 0;
					nt[i] = NULL;
				}
				fi->n_awaits = k + 1;
			}
			fi->awaits[k] = (uint32_t)line;
			Dwarf_Die vt;
			if (!fi->await_types[k] &&
			    dwarf_formref_die(dwarf_attr_integrate(&vm, DW_AT_type, &a), &vt))
				fi->await_types[k] = awaitee_of(dt, &vt);
		} while (dwarf_siblingof(&v, &v) == 0);
		return 0;
	} while (dwarf_siblingof(&vp, &vp) == 0);
	return 0;
}

/* Where the Poll a function returns keeps its tag, and the tag of
 * Pending: rustc describes Poll<T> as a structure with a variant_part whose
 * discriminant member is the tag (a niche inside T's data or a tag of its
 * own) and whose "Pending" variant has DW_AT_discr_value. x86-64 returns
 * up to 16 bytes of integers in rax:rdx, more in memory at the address the
 * caller passed (and the callee returns in rax). */
static void poll_return(Dwarf_Die *sp, struct fn_info *fi)
{
	Dwarf_Die t, vp, discr, v, vm, dt;
	Dwarf_Attribute a;
	Dwarf_Word off, pending = 0;
	bool have = false;

	if (!dwarf_formref_die(dwarf_attr_integrate(sp, DW_AT_type, &a), &t) ||
	    dwarf_peel_type(&t, &t) || dwarf_tag(&t) != DW_TAG_structure_type)
		return;
	const char *n = dwarf_diename(&t);
	int64_t size = dwt_byte_size(&t);
	if (!n || strncmp(n, "Poll<", 5) || size <= 0 || dwarf_child(&t, &vp))
		return;
	do {
		if (dwarf_tag(&vp) == DW_TAG_variant_part)
			break;
	} while (dwarf_siblingof(&vp, &vp) == 0);
	if (dwarf_tag(&vp) != DW_TAG_variant_part ||
	    !dwarf_formref_die(dwarf_attr(&vp, DW_AT_discr, &a), &discr) ||
	    dwarf_formudata(dwarf_attr(&discr, DW_AT_data_member_location, &a), &off) ||
	    !dwarf_formref_die(dwarf_attr_integrate(&discr, DW_AT_type, &a), &dt))
		return;
	int64_t dsize = dwt_byte_size(&dt);
	if (dwarf_child(&vp, &v))
		return;
	do {
		const char *vn;
		if (dwarf_tag(&v) != DW_TAG_variant || dwarf_child(&v, &vm))
			continue;
		vn = dwarf_diename(&vm);
		if (vn && !strcmp(vn, "Pending") &&
		    !dwarf_formudata(dwarf_attr(&v, DW_AT_discr_value, &a), &pending))
			have = true;
	} while (!have && dwarf_siblingof(&v, &v) == 0);
	if (!have || (dsize != 1 && dsize != 2 && dsize != 4 && dsize != 8) || off > 4096)
		return;
	if (dsize < 8)
		pending &= (1ull << (8 * dsize)) - 1;
	/* where the Poll comes back: self in rsi means rdi held the address of
	 * the Poll to write (returned in memory, whatever its size: Rust's ABI
	 * does so for some small ones too); self in rdi means registers, where
	 * rustc's two-value layout puts its first value in rax and its second
	 * (at offset 8) in rdx. A tag anywhere else (the second of two values
	 * packed in 8 bytes, say) is not guessed at: left unknown. */
	if (fi->self_reg == 1) {
		fi->ret_kind = AS_RET_MEM;
		fi->ret_off = (uint16_t)off;
	} else if (fi->self_reg != 0 || size > 16) {
		return;
	} else if (off == 0) {
		fi->ret_kind = AS_RET_RAX;
		fi->ret_off = 0;
	} else if (off == 8 && size <= 16) {
		fi->ret_kind = AS_RET_RDX;
		fi->ret_off = 0;
	} else {
		return;
	}
	fi->ret_size = (uint8_t)dsize;
	fi->ret_pending = pending;
}

/* The source of a state machine: its Unresumed variant's member sits at
 * the async fn's (or block's) line. Replaces fi's (the wrapper's own). */
static int unresumed_source(Dwarf_Die *st, struct fn_info *fi)
{
	Dwarf_Die vp, v, vm;
	Dwarf_Attribute a;
	Dwarf_Word dv;
	int line = 0;

	if (dwarf_child(st, &vp))
		return 0;
	do {
		if (dwarf_tag(&vp) != DW_TAG_variant_part || dwarf_child(&vp, &v))
			continue;
		do {
			const char *file;
			if (dwarf_tag(&v) != DW_TAG_variant ||
			    dwarf_formudata(dwarf_attr(&v, DW_AT_discr_value, &a), &dv) || dv != 0 ||
			    dwarf_child(&v, &vm) || !(file = dwarf_decl_file(&vm)) ||
			    dwarf_decl_line(&vm, &line) || line <= 0)
				continue;
			char *rel = async_stack_rel_path(file, dwarf_types__comp_dir(&vm));
			if (!rel)
				return -ENOMEM;
			free(fi->file);
			fi->file = rel;
			fi->line = (uint32_t)line;
			return 0;
		} while (dwarf_siblingof(&v, &v) == 0);
	} while (dwarf_siblingof(&vp, &vp) == 0);
	return 0;
}

/* A wrapper's poll (fi->wrap_member): self points at the wrapper w, whose
 * member holds the wrapped future; when that is a state machine declared
 * in the program's own sources, it is what the probe traces. */
static int wrapped_machine(struct dwarf_types *dt, Dwarf_Die *w, struct fn_info *fi)
{
	Dwarf_Die m, t;
	Dwarf_Attribute a;
	Dwarf_Word off;

	if (dwarf_child(w, &m))
		return 0;
	do {
		const char *mn = dwarf_diename(&m);
		if (dwarf_tag(&m) == DW_TAG_member && mn && !strcmp(mn, fi->wrap_member))
			break;
	} while (dwarf_siblingof(&m, &m) == 0);
	const char *mn = dwarf_diename(&m);
	if (!mn || strcmp(mn, fi->wrap_member) ||
	    dwarf_formudata(dwarf_attr(&m, DW_AT_data_member_location, &a), &off) ||
	    !dwarf_formref_die(dwarf_attr_integrate(&m, DW_AT_type, &a), &t))
		return 0;
	/* a state machine of the target's own crates (its struct has no
	 * decl_file: the crate of its path, in a unit of the program's) */
	const char *tn = dwarf_diename(&t);
	const char *q = dwarf_types__name(dt, &t);
	char crate[64];
	if (!tn || !q || !fi->own || (strncmp(tn, "{async_fn_env#", 14) &&
				      strncmp(tn, "{async_block_env#", 17)) ||
	    !futures_crate_of(q, crate, sizeof(crate)) || is_dep_crate(crate))
		return 0;
	/* "chain::relay::{async_fn_env#0}" is chain::relay's; an async
	 * block's keeps its place: "app::main::{async_block#1}" */
	const char *env = strrchr(q, ':');
	if (!env || env - q < 2)
		return 0;
	if (!strncmp(env + 1, "{async_fn_env#", 14))
		snprintf(fi->wrapped, sizeof(fi->wrapped), "%.*s", (int)(env - 1 - q), q);
	else
		snprintf(fi->wrapped, sizeof(fi->wrapped), "%.*s{async_block#%s", (int)(env + 1 - q), q,
			 env + 1 + 17);
	int ret = state_machine(dt, &t, fi);
	if (!ret && fi->state_off >= 0)
		fi->state_off += (int64_t)off;
	if (!ret)
		ret = unresumed_source(&t, fi);
	return ret;
}

static int describe(struct dwarf_types *dt, Dwarf_Die *sp, Dwarf_Addr lo, const char *comp_dir,
		    const char *own_dir, struct fn_info *fi)
{
	Dwarf_Die param, st;
	Dwarf_Attribute a;
	const char *n = dwarf_diename(sp);
	const char *file = dwarf_decl_file(sp);
	int line = 0;

	fi->found = true;
	snprintf(fi->die_name, sizeof(fi->die_name), "%s", n ? n : "");
	fi->dep_decl = own_dir && file && file[0] == '/' ? !under_dir(file, own_dir) || dep_path(file) :
		       dep_path(file);
	if (file && !(fi->file = async_stack_rel_path(file, comp_dir)))
		return -ENOMEM;
	if (dwarf_decl_line(sp, &line) == 0 && line > 0)
		fi->line = (uint32_t)line;
	if (dwarf_child(sp, &param))
		return 0;
	do {
		if (dwarf_tag(&param) == DW_TAG_formal_parameter)
			break;
	} while (dwarf_siblingof(&param, &param) == 0);
	if (dwarf_tag(&param) != DW_TAG_formal_parameter)
		return 0;
	if (dwarf_attr(&param, DW_AT_location, &a)) {
		Dwarf_Op *expr;
		size_t len;
		if (dwarf_getlocation_addr(&a, lo, &expr, &len, 1) == 1 && len == 1)
			fi->self_reg = reg_of_op(expr[0].atom);
	}
	poll_return(sp, fi);
	Dwarf_Die ptype;
	if (!dwarf_formref_die(dwarf_attr_integrate(&param, DW_AT_type, &a), &ptype) ||
	    !pointee_struct(&ptype, &st))
		return 0;
	if (fi->wrap_member)
		return wrapped_machine(dt, &st, fi);
	return state_machine(dt, &st, fi);
}

struct walk {
	struct dwarf_types *dt;
	const char *own_dir;     /* compilation directory of the program's main, or NULL */
	struct u64map *want;     /* address -> index + 1 into infos */
	struct fn_info *infos;
	const char *comp_dir;
	bool own;
	int err;
};

static void walk_die(struct walk *w, Dwarf_Die *parent, int depth)
{
	Dwarf_Die c;

	if (depth > 24 || dwarf_child(parent, &c))
		return;
	do {
		int tag = dwarf_tag(&c);
		if (tag == DW_TAG_subprogram) {
			Dwarf_Addr lo;
			uint64_t idx;
			if (dwarf_lowpc(&c, &lo) == 0 && u64map__get(w->want, lo, &idx) &&
			    !w->infos[idx - 1].found) {
				struct fn_info *fi = &w->infos[idx - 1];
				fi->own = w->own;
				int ret = describe(w->dt, &c, lo, w->comp_dir, w->own_dir, fi);
				if (ret)
					w->err = ret;
			}
			walk_die(w, &c, depth + 1);   /* nested items */
		} else if (tag == DW_TAG_namespace || tag == DW_TAG_structure_type ||
			   tag == DW_TAG_lexical_block) {
			walk_die(w, &c, depth + 1);
		}
	} while (w->err == 0 && dwarf_siblingof(&c, &c) == 0);
}

/* The crate of a Rust unit, from its name "src/main.rs/@/app.1a2b-cgu.0". */
static void unit_crate(const char *name, char *out, size_t len)
{
	const char *at = name ? strstr(name, "/@/") : NULL;
	size_t n = 0;
	out[0] = '\0';
	if (!at)
		return;
	at += 3;
	while (at[n] && at[n] != '.' && n + 1 < len)
		n++;
	memcpy(out, at, n);
	out[n] = '\0';
}

/* One pass over the units: every wanted subprogram (in every unit when
 * all_units, else in the units of the program's own code only). */
static int scan_dwarf(Dwarf *dw, struct walk *w, bool all_units)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Attribute a;
		if (dwarf_offdie(dw, off + hsize, &cu)) {
			const char *name = dwarf_diename(&cu);
			const char *dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &a));
			char crate[64];
			unit_crate(name, crate, sizeof(crate));
			/* cargo compiles the workspace's packages in its root and
			 * every other package (registry, git, std) in its own */
			w->own = w->own_dir ? dir && !strcmp(dir, w->own_dir) && !is_dep_crate(crate) :
				 crate[0] && !dep_path(name) && !dep_path(dir) && !is_dep_crate(crate);
			w->comp_dir = dir;
			if (w->own || all_units)
				walk_die(w, &cu, 0);
			if (w->err)
				return w->err;
		}
		off = next;
	}
	return 0;
}

/* The compilation directory of the unit holding the program's own main
 * (the one function "<crate>::main" of a crate that is not std's or a
 * runtime's), or NULL. Borrowed from dw. */
static const char *main_unit_dir(const struct elf_image *img, Dwarf *dw)
{
	const char *dir = NULL;

	for (size_t i = 0; i < img->n_syms; i++) {
		const char *n = img->syms[i].name;
		char crate[64];
		if (!n || !ends_with(n, "::main"))
			continue;
		futures_crate_of(n, crate, sizeof(crate));
		if (is_dep_crate(crate) || strlen(n) != strlen(crate) + strlen("::main"))
			continue;
		Dwarf_Die cu;
		Dwarf_Attribute a;
		if (!dwarf_addrdie(dw, img->syms[i].addr, &cu))
			continue;
		const char *d = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &a));
		if (!d || !strncmp(d, "/rustc/", 7))
			continue;
		if (dir && strcmp(dir, d))
			return NULL;   /* two mains in different places: do not guess */
		dir = d;
	}
	return dir;
}

static bool is_future_symbol(const char *name)
{
	return closure_suffix(name) || ends_with(name, FUTURE_POLL_SUFFIX);
}

int futures_plan_add(struct probe_plan *plan, const struct elf_image *img,
		     const struct futures_opts *o, struct futures_plan_stats *stats,
		     char *err, size_t errlen)
{
	struct futures_plan_stats local = { 0 };
	size_t n_re = o->n_patterns + (o->preset_cat ? 4 : 0), n_ok_re = 0;
	regex_t *re = calloc(n_re ? n_re : 1, sizeof(*re));
	bool *re_hit = calloc(n_re ? n_re : 1, sizeof(*re_hit));
	size_t *sel = NULL, n_sel = 0;
	bool *by_pattern = NULL;
	struct fn_info *infos = NULL;
	struct u64map want = { 0 };
	struct dwarf_types *dt = NULL, *own_dt = NULL;
	size_t max = o->max_probes ? o->max_probes : FUTURES_PLAN_MAX_DEFAULT;
	int ret = 0;

	if (!stats)
		stats = &local;
	memset(stats, 0, sizeof(*stats));
	if (!re || !re_hit) {
		ret = -ENOMEM;
		goto nomem;
	}
	for (size_t i = 0; i < n_re; i++) {
		const char *pat = i < o->n_patterns ? o->patterns[i] : cat_patterns[i - o->n_patterns];
		int rc = regcomp(&re[i], pat, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			char msg[128];
			regerror(rc, &re[i], msg, sizeof(msg));
			snprintf(err, errlen, "bad --probe pattern '%s': %s", pat, msg);
			ret = -EINVAL;
			goto out;
		}
		n_ok_re++;
	}
	if (!o->futures && !n_re)
		goto out;
	if (!img->n_syms) {
		snprintf(err, errlen, "%s has no symbol table (stripped): future probes need function "
			 "names; trace an unstripped build", img->name);
		ret = -ENOENT;
		goto out;
	}

	/* Select by name; one probe per address. */
	sel = calloc(img->n_syms, sizeof(*sel));
	by_pattern = calloc(img->n_syms, sizeof(*by_pattern));
	if (!sel || !by_pattern)
		goto nomem;
	for (size_t i = 0; i < img->n_syms; i++) {
		const struct elf_sym *s = &img->syms[i];
		bool pat = false;
		if (!s->name || !s->size || (n_sel && img->syms[sel[n_sel - 1]].addr == s->addr))
			continue;
		for (size_t k = 0; k < n_re; k++)
			if (regexec(&re[k], s->name, 0, NULL, 0) == 0) {
				re_hit[k] = true;
				pat = true;
			}
		if (!pat && !(o->futures && is_future_symbol(s->name)))
			continue;
		by_pattern[n_sel] = pat;
		sel[n_sel++] = i;
	}
	for (size_t k = 0; k < o->n_patterns; k++)
		if (!re_hit[k]) {
			snprintf(err, errlen, "no function of %s matches --probe '%s' (patterns match "
				 "demangled names without hash, e.g. 'app::handler::\\{\\{closure\\}\\}')",
				 img->name, o->patterns[k]);
			ret = -ENOENT;
			goto out;
		}

	/* DWARF: what each selected function is. */
	infos = calloc(n_sel ? n_sel : 1, sizeof(*infos));
	if (!infos)
		goto nomem;
	for (size_t j = 0; j < n_sel; j++) {
		infos[j].self_reg = -1;
		infos[j].state_off = -1;
		infos[j].wrap_member = wrapper_member(img->syms[sel[j]].name);
		if ((ret = u64map__set(&want, img->syms[sel[j]].addr, j + 1)))
			goto nomem;
	}
	if (o->futures && !img->has_debug_info) {
		/* without DWARF an async fn's body is a closure like any other:
		 * probing every closure would be costly and tell nothing. --futures
		 * is off (the caller says so), --probe patterns stay */
		size_t k = 0;
		stats->no_dwarf = true;
		u64map__clear(&want);
		for (size_t j = 0; j < n_sel; j++)
			if (by_pattern[j]) {
				sel[k] = sel[j];
				by_pattern[k] = true;
				infos[k] = infos[j];
				if (u64map__set(&want, img->syms[sel[k]].addr, k + 1))
					goto nomem;
				k++;
			}
		n_sel = k;
	}
	if (img->has_debug_info && n_sel &&
	    (dt = o->dt ? o->dt : (own_dt = dwarf_types__open_fd(elf_image__dwarf_fd(img))))) {
		struct walk w = { .dt = dt, .want = &want, .infos = infos,
				  .own_dir = main_unit_dir(img, dwarf_types__dwarf(dt)) };
		stats->dwarf = true;
		if ((ret = scan_dwarf(dwarf_types__dwarf(dt), &w, n_re > 0)))
			goto nomem;
	}

	for (size_t j = 0; j < n_sel; j++) {
		const struct elf_sym *s = &img->syms[sel[j]];
		struct fn_info *fi = &infos[j];
		if (!by_pattern[j]) {
			/* --futures: the target's own async state machines and
			 * Future::poll functions */
			/* by DWARF: the unit and the declaring file, not the name
			 * (an impl of the program's trait for a std type is its own) */
			bool poll_fn = ends_with(s->name, FUTURE_POLL_SUFFIX);
			/* rustc names: {async_fn#N} / {async_block#N}; before 1.69
			 * {generator#N}, in some later ones {coroutine#N} or
			 * {async_closure#N} */
			bool sm = !strncmp(fi->die_name, "{async_fn#", 10) ||
				  !strncmp(fi->die_name, "{async_block#", 13) ||
				  !strncmp(fi->die_name, "{generator#", 11) ||
				  !strncmp(fi->die_name, "{coroutine#", 11) ||
				  !strncmp(fi->die_name, "{async_closure#", 15);
			/* a wrapper's poll stands for the program's own future
			 * it wraps and inlines */
			bool wrapped = fi->found && fi->wrapped[0];
			if (!wrapped && (!fi->found || !fi->own || fi->dep_decl || !(sm || poll_fn)))
				continue;
		}
		uint8_t code[16];
		int got = elf_image__read(img, s->addr, code, sizeof(code));
		if (got > 0 && !insn_probeable(code, (size_t)got)) {
			stats->unprobeable++;
			continue;
		}
		if (plan->n >= 65535 || stats->planned >= max) {
			stats->over_max++;
			continue;
		}
		struct as_probe *p = probe_plan__grow(plan);
		if (!p)
			goto nomem;
		p->role = AS_ROLE_FUTURE;
		p->addr = s->addr;
		p->emulated = probe_plan_emulated(img, s->addr);
		p->state_off = (int32_t)(fi->state_off >= 0 && fi->state_off < 0xfffffe ? fi->state_off : -1);
		p->arg_reg = (uint8_t)(fi->self_reg >= 0 ? fi->self_reg : 0);
		p->self_reg = p->arg_reg;
		if (fi->self_reg < 0)
			p->state_off = -1;   /* self unknown: do not read */
		if (p->state_off < 0) {
			p->ret_kind = fi->ret_kind;
			p->ret_size = fi->ret_size;
			p->ret_off = fi->ret_off;
			p->ret_pending = fi->ret_pending;
		}
		p->symbol = strdup(s->name);
		p->future = fi->wrapped[0] ? strdup(fi->wrapped) :
			    futures_readable_name(s->name, fi->found ? fi->die_name : NULL);
		plan->owner[plan->n] = PLAN_OWNER_NONE;
		plan->n++;   /* counted before any failure below: freed with the plan */
		plan->per_role[AS_ROLE_FUTURE]++;
		if (!p->symbol || !p->future)
			goto nomem;
		p->src_file = fi->file;
		fi->file = NULL;
		p->src_line = fi->line;
		p->await_lines = fi->awaits;
		p->await_types = fi->await_types;
		p->n_awaits = fi->n_awaits;
		fi->awaits = NULL;
		fi->await_types = NULL;
		stats->planned++;
		stats->state_machines += p->state_off >= 0;
		stats->poll_returns += p->state_off < 0 && p->ret_kind;
		stats->with_source += p->src_file && p->src_line;
	}
	for (size_t i = 0; stats->planned && i < img->n_syms && !stats->unwinds; i++)
		stats->unwinds = img->syms[i].name && !strncmp(img->syms[i].name, "panic_unwind::", 14);
	ret = (int)stats->planned;
	goto out;
nomem:
	snprintf(err, errlen, "planning future probes: out of memory");
	ret = -ENOMEM;
out:
	for (size_t i = 0; i < n_ok_re; i++)
		regfree(&re[i]);
	free(re);
	free(re_hit);
	free(sel);
	free(by_pattern);
	for (size_t j = 0; infos && j < n_sel; j++) {
		free(infos[j].file);
		free(infos[j].awaits);
		for (uint32_t k = 0; infos[j].await_types && k < infos[j].n_awaits; k++)
			free(infos[j].await_types[k]);
		free(infos[j].await_types);
	}
	free(infos);
	u64map__clear(&want);
	dwarf_types__free(own_dt);
	return ret;
}
