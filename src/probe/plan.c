/* Probe planning from symbols (and DWARF for future names). Runtimes are
 * found by their profiles' poll functions (and marker symbols); several
 * runtimes in one binary are planned together, each probe remembering
 * which profile it came from. */
#include "probe/plan.h"
#include "probe/future_names.h"
#include "sym/demangle.h"
#include "sym/dwarf_names.h"
#include "util/glob.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *probe_role_name(unsigned role)
{
	const char *n = as_role_name(role);
	return n ? n : "?";
}

static bool planned(const struct probe_plan *plan, unsigned role, uint64_t addr)
{
	for (size_t i = 0; i < plan->n; i++)
		if (plan->probes[i].role == role && plan->probes[i].addr == addr)
			return true;
	return false;
}

/* Makes room for one more probe in every per-probe array and zeroes its
 * entries; returns the new probe (not yet counted in plan->n) or NULL. */
struct as_probe *probe_plan__grow(struct probe_plan *plan)
{
	size_t n = plan->n + 1;
	struct as_probe *p = realloc(plan->probes, n * sizeof(*p));

	if (!p)
		return NULL;
	plan->probes = p;
	uint8_t *o = realloc(plan->owner, n);
	if (!o)
		return NULL;
	plan->owner = o;
	uint8_t *f = realloc(plan->flags, n);
	if (!f)
		return NULL;
	plan->flags = f;
	uint64_t *sm = realloc(plan->sema, n * sizeof(*sm));
	if (!sm)
		return NULL;
	plan->sema = sm;
	struct usdt_arg *ua = realloc(plan->usdt_arg, n * sizeof(*ua));
	if (!ua)
		return NULL;
	plan->usdt_arg = ua;
	struct probe_site *si = realloc(plan->site, n * sizeof(*si));
	if (!si)
		return NULL;
	plan->site = si;
	p = &plan->probes[plan->n];
	memset(p, 0, sizeof(*p));
	plan->owner[plan->n] = 0;
	plan->flags[plan->n] = 0;
	plan->sema[plan->n] = 0;
	memset(&plan->usdt_arg[plan->n], 0, sizeof(plan->usdt_arg[plan->n]));
	memset(&plan->site[plan->n], 0, sizeof(plan->site[plan->n]));
	return p;
}

/* 1 when uprobes emulate the instruction at addr (site_insn_class). */
uint8_t probe_plan_emulated(const struct elf_image *img, uint64_t addr)
{
	uint8_t code[16] = { 0 };
	int n = elf_image__read(img, addr, code, sizeof(code));

	return n > 0 ? site_insn_class(code, (size_t)n) == SITE_EMULATED : 0;
}

static int add_point(struct probe_plan *plan, const struct elf_image *img,
		     const struct profile_point *pt, const struct elf_sym *s,
		     uint8_t owner, uint8_t flags)
{
	struct as_probe *p = probe_plan__grow(plan);

	if (!p)
		return -ENOMEM;
	p->role = pt->role;
	p->arg_reg = pt->arg_reg;
	p->addr = s->addr;
	p->emulated = probe_plan_emulated(img, s->addr);
	p->symbol = strdup(s->name);
	if (!p->symbol)
		return -ENOMEM;
	plan->owner[plan->n] = owner;
	plan->flags[plan->n] = flags;
	plan->n++;
	plan->per_role[pt->role]++;
	return 0;
}

/* Adds prof's points; owner is its index in plan->profiles. A fallback
 * point is used only when no earlier point of its role in this profile
 * matched. A function already planned for the same role (by another
 * profile sharing it) is not added twice. */
static int plan_profile(struct probe_plan *plan, const struct elf_image *img, uint8_t owner)
{
	const struct runtime_profile *prof = plan->profiles[owner];
	size_t mine[AS_ROLE__MAX] = { 0 };

	for (size_t k = 0; k < prof->n_points; k++) {
		const struct profile_point *pt = &prof->points[k];
		uint8_t flags = 0;
		if (pt->role >= AS_ROLE__MAX || (pt->fallback && mine[pt->role]))
			continue;
		if (pt->role == AS_ROLE_POLL && prof == plan->id_profile)
			flags |= PLAN_F_TASK_ID;
		if (pt->inside)
			flags |= PLAN_F_INSIDE;
		if (pt->stack && pt->role == AS_ROLE_SPAWN)
			flags |= PLAN_F_STACK;
		if (pt->name && pt->role == AS_ROLE_SPAWN)
			flags |= PLAN_F_NAME;
		if (pt->nested && pt->role == AS_ROLE_WAKE)
			flags |= PLAN_F_NESTED;
		for (size_t i = 0; i < img->n_syms; i++) {
			const struct elf_sym *s = &img->syms[i];
			if (!profile_point_matches(pt, s->name, s->norm))
				continue;
			mine[pt->role]++;
			if (planned(plan, pt->role, s->addr))
				continue;
			int err = add_point(plan, img, pt, s, owner, flags);
			if (err)
				return err;
		}
	}
	return 0;
}

/* Does the binary hold prof's poll function (and its marker symbol)? */
static bool profile_found(const struct elf_image *img, const struct runtime_profile *prof)
{
	bool marked = !prof->marker, poll = false;

	for (size_t i = 0; i < img->n_syms && !(marked && poll); i++) {
		const struct elf_sym *s = &img->syms[i];
		if (!marked && strstr(s->name, prof->marker))
			marked = true;
		for (size_t k = 0; !poll && k < prof->n_points; k++)
			if (prof->points[k].role == AS_ROLE_POLL && profile_point_matches(&prof->points[k], s->name, s->norm))
				poll = true;
	}
	return marked && poll;
}

/* The n-th (0 first) generic argument of a type name "base<a, b<c>, d>"
 * that ends with its argument list, as a malloc'd string; NULL when there
 * is none (or on ENOMEM). */
static char *nth_generic_arg(const char *name, unsigned nth)
{
	const char *open = strchr(name, '<');
	size_t len = strlen(name);
	int depth = 0;

	if (!open || open == name || name[len - 1] != '>')
		return NULL;
	const char *start = open + 1;
	unsigned k = 0;
	for (const char *q = start; *q; q++) {
		if (*q == '<' || *q == '(' || *q == '[') {
			depth++;
		} else if ((*q == '>' && q[-1] != '-') || *q == ')' || *q == ']') {
			if (depth > 0) {
				depth--;
				continue;
			}
			/* the list must close at the very end */
			if (q != name + len - 1)
				return NULL;
			if (k == nth && q > start)
				return strndup(start, (size_t)(q - start));
			return NULL;
		} else if (*q == ',' && depth == 0) {
			if (k == nth)
				return strndup(start, (size_t)(q - start));
			k++;
			start = q + 1;
			while (*start == ' ')
				start++;
		}
	}
	return NULL;
}

char *plan_future_name(const struct runtime_profile *prof, const char *type_name)
{
	char *cur = strdup(type_name);

	/* each round replaces cur with a strictly shorter part of it */
	for (bool again = true; cur && again;) {
		const char *open = strchr(cur, '<');
		again = false;
		if (!prof || !open || open == cur)
			break;
		char base[512];
		size_t blen = (size_t)(open - cur);
		if (blen >= sizeof(base))
			break;
		memcpy(base, cur, blen);
		base[blen] = '\0';
		for (size_t w = 0; w < prof->n_wrappers; w++) {
			if (!glob_match(prof->wrappers[w].pattern, base))
				continue;
			char *inner = nth_generic_arg(cur, prof->wrappers[w].arg);
			if (inner) {
				free(cur);
				cur = inner;
				again = true;
			}
			break;
		}
	}
	if (!cur)
		return NULL;
	char *pretty = sym_pretty_future(cur);
	free(cur);
	return pretty;
}

/* The root future of each poll copy: from DWARF (Tokio's subprogram is
 * "poll<T, S>", async-task's "run<F, T, S>"), else from a v0 symbol
 * ("...::raw::poll::<T, S>"), else (legacy symbols without DWARF) from the
 * names of what the copy calls (probe/future_names.h); the owner
 * profile's wrappers peeled off. */
static int name_futures(struct probe_plan *plan, const struct elf_image *img)
{
	size_t n = plan->per_role[AS_ROLE_POLL], j = 0;
	uint64_t *addrs = calloc(n ? n : 1, sizeof(*addrs));
	char **names = calloc(n ? n : 1, sizeof(*names));
	struct callee_namer *cn = NULL;
	int err = 0;

	if (!addrs || !names) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < plan->n; i++)
		if (plan->probes[i].role == AS_ROLE_POLL)
			addrs[j++] = plan->probes[i].addr;
	if (img->has_debug_info)
		dwarf_subprogram_names_fd(elf_image__dwarf_fd(img), addrs, n, names);
	j = 0;
	for (size_t i = 0; i < plan->n; i++) {
		struct as_probe *p = &plan->probes[i];
		if (p->role != AS_ROLE_POLL)
			continue;
		const char *src = names[j] ? names[j] : p->symbol;
		char *arg = sym_first_generic_arg(src);
		j++;
		/* a legacy symbol spells the parameters themselves: "RawTask<F,T,S>::run" */
		if (arg && (!strcmp(arg, "F") || !strcmp(arg, "T"))) {
			free(arg);
			arg = NULL;
		}
		if (!arg) {
			/* neither DWARF nor the symbol: what the copy calls */
			enum callee_found how;
			bool endless;
			if (!cn && !(cn = callee_namer__new(img))) {
				err = -ENOMEM;
				goto cleanup;
			}
			if ((err = callee_namer__future(cn, plan->profiles[plan->owner[i]], p->addr,
							&arg, &how, &endless)))
				goto cleanup;
			if (arg)
				plan->named_by_callees++;
			if (endless)
				plan->flags[i] |= PLAN_F_NO_RETURN;
		}
		if (!arg) {
			plan->unnamed_polls++;
			continue;
		}
		p->future = plan_future_name(plan->profiles[plan->owner[i]], arg);
		free(arg);
		if (!p->future) {
			err = -ENOMEM;
			goto cleanup;
		}
		const char *endless = plan->profiles[plan->owner[i]]->endless_polls;
		if (endless && glob_match(endless, p->future))
			plan->flags[i] |= PLAN_F_NO_RETURN;
	}
cleanup:
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	free(addrs);
	callee_namer__free(cn);
	return err;
}

/* The register an argument number (as_probe.arg_reg) names. */
static unsigned arg_gpr(unsigned arg_reg)
{
	static const unsigned r[] = { SITE_RDI, SITE_RSI, SITE_RDX, SITE_RCX };
	return r[arg_reg & 3];
}

/* What the entry program of probe i reads (bpf/task.bpf.c): 0 with *needs
 * filled when the probe may move, else the enum site_why that keeps it at
 * the entry. A probe with a return program stays: its uretprobe takes the
 * return address at [%rsp] on entry. */
static uint8_t site_needs_of(const struct probe_plan *plan, size_t i, struct site_needs *needs)
{
	const struct as_probe *p = &plan->probes[i];
	uint8_t f = plan->flags[i];

	needs->regs = SITE_REG_BIT(arg_gpr(p->arg_reg));
	needs->stack = false;
	switch (p->role) {
	case AS_ROLE_POLL:   /* poll_enter: the task register; poll_exit at the return */
		return f & PLAN_F_NO_RETURN ? 0 : SITE_ENTRY_RETURN;
	case AS_ROLE_READY:  /* task_ready, task_wake, task_free: the task register */
	case AS_ROLE_WAKE:
	case AS_ROLE_FREE:
		return 0;
	case AS_ROLE_SPAWN:
		if (f & PLAN_F_STACK)   /* task_spawn_stack unwinds from the entry's registers */
			return SITE_ENTRY_STACK;
		if (f & PLAN_F_NAME) {  /* task_name: also the kind (rsi, rdx) and the id (r8) */
			needs->regs |= SITE_REG_BIT(SITE_RSI) | SITE_REG_BIT(SITE_RDX) | SITE_REG_BIT(SITE_R8);
			return 0;
		}
		needs->stack = true;    /* task_spawn: the return address at [%rsp] */
		return 0;
	default:                     /* entry + return probes */
		return SITE_ENTRY_RETURN;
	}
}

/* The size of the function symbol at addr, 0 when none says. */
static uint64_t sym_size(const struct elf_image *img, uint64_t addr)
{
	uint64_t size = 0;

	for (size_t i = 0; i < img->n_syms; i++)
		if (img->syms[i].addr == addr && img->syms[i].size > size)
			size = img->syms[i].size;
	return size;
}

/* Longest function decoded to place a probe (its branch targets). */
#define SITE_MAX_FUNC (256u << 10)

/* Places every probe planned so far (site.h): an entry-only probe on a
 * single-stepped first instruction moves to the first emulated one that
 * keeps what its program reads; ASYNCSCOPE_ENTRY_SITES=1 keeps them all
 * at their entries (to measure the difference). 0 or -errno. */
static int place_sites(struct probe_plan *plan, const struct elf_image *img)
{
	bool at_entry = getenv("ASYNCSCOPE_ENTRY_SITES") && strcmp(getenv("ASYNCSCOPE_ENTRY_SITES"), "0");
	uint8_t *code = NULL;
	size_t cap = 0;
	int err = 0;

	for (size_t i = 0; i < plan->n && !err; i++) {
		struct as_probe *p = &plan->probes[i];
		struct probe_site *site = &plan->site[i];
		struct site_needs needs;
		uint8_t head[16];
		int n = elf_image__read(img, p->addr, head, sizeof(head));

		memset(site, 0, sizeof(*site));
		if (n > 0 && site_insn_class(head, (size_t)n) == SITE_EMULATED) {
			site->why = SITE_ENTRY_CHEAP;
			continue;
		}
		uint8_t keep = site_needs_of(plan, i, &needs);
		if (keep || at_entry) {
			site->why = keep ? keep : SITE_ENTRY_ASKED;
			continue;
		}
		uint64_t size = sym_size(img, p->addr);
		if (size > SITE_MAX_FUNC) {
			site->why = SITE_ENTRY_STOPPED;
			snprintf(site->note, sizeof(site->note), "function too long to check (%llu bytes)",
				 (unsigned long long)size);
			continue;
		}
		if (size > cap) {
			uint8_t *c = realloc(code, size);
			if (!c) {
				err = -ENOMEM;
				break;
			}
			code = c;
			cap = size;
		}
		n = size ? elf_image__read(img, p->addr, code, size) : 0;
		err = site_find(code, n > 0 ? (size_t)n : 0, &needs, site);
		if (!err && site->off)
			p->emulated = probe_plan_emulated(img, p->addr + site->off);
	}
	free(code);
	return err;
}

uint64_t probe_plan__site_addr(const struct probe_plan *plan, size_t i)
{
	return plan->probes[i].addr + (plan->site ? plan->site[i].off : 0);
}

/* The first poll pattern of prof, for messages. */
static const char *poll_pattern(const struct runtime_profile *prof)
{
	for (size_t k = 0; k < prof->n_points; k++)
		if (prof->points[k].role == AS_ROLE_POLL)
			return prof->points[k].pattern;
	return "?";
}

/* Profiles found in img, in table order, without those another found
 * profile refines. Returns how many went into out. */
static size_t detect(const struct elf_image *img, const struct runtime_profile **out, size_t max)
{
	const struct runtime_profile *found[16];
	size_t nf = 0, n = 0;

	for (size_t i = 0; profiles[i] && nf < 16; i++)
		if (profile_found(img, profiles[i]))
			found[nf++] = profiles[i];
	for (size_t i = 0; i < nf && n < max; i++) {
		bool refined = false;
		for (size_t k = 0; k < nf; k++)
			if (found[k]->refines && !strcmp(found[k]->refines, found[i]->name))
				refined = true;
		if (!refined)
			out[n++] = found[i];
	}
	return n;
}

static void probe_clear(struct as_probe *p)
{
	free(p->symbol);
	free(p->future);
	free(p->src_file);
	free(p->await_lines);
	for (uint32_t k = 0; p->await_types && k < p->n_awaits; k++)
		free(p->await_types[k]);
	free(p->await_types);
}

void probe_plan__keep_roles(struct probe_plan *plan, unsigned roles)
{
	size_t n = 0;

	for (size_t i = 0; i < plan->n; i++) {
		if (!(roles & (1u << plan->probes[i].role))) {
			plan->per_role[plan->probes[i].role]--;
			probe_clear(&plan->probes[i]);
			continue;
		}
		plan->probes[n] = plan->probes[i];
		plan->owner[n] = plan->owner[i];
		plan->flags[n] = plan->flags[i];
		plan->sema[n] = plan->sema[i];
		plan->usdt_arg[n] = plan->usdt_arg[i];
		plan->site[n] = plan->site[i];
		n++;
	}
	plan->n = n;
}

static void plan_reset(struct probe_plan *plan)
{
	for (size_t i = 0; i < plan->n; i++)
		probe_clear(&plan->probes[i]);
	free(plan->probes);
	free(plan->owner);
	free(plan->flags);
	free(plan->sema);
	free(plan->usdt_arg);
	free(plan->site);
	memset(plan, 0, sizeof(*plan));
}

/* probe_plan__build(); with optional, finding no runtime (or no symbol
 * table) is not an error when no profile was asked for. */
static struct probe_plan *build(const struct elf_image *img,
				const struct runtime_profile *const *profs, size_t n_profs,
				bool optional, char *err, size_t errlen)
{
	struct probe_plan *plan = calloc(1, sizeof(*plan));
	int ret = 0;

	if (!plan) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (optional && !n_profs && !img->has_symtab) {
		snprintf(plan->runtime, sizeof(plan->runtime), "none");
		return plan;
	}
	if (!img->has_symtab) {
		snprintf(err, errlen, "%s is stripped (no symbol table) and no debug file was found "
			 "(by build id, .gnu_debuglink or debuginfod): name it with --debug-file, or "
			 "build with `strip = false` (and `debug = true` for task names)", img->name);
		goto fail;
	}
	if (n_profs > PLAN_MAX_PROFILES) {
		snprintf(err, errlen, "at most %d runtimes at once", PLAN_MAX_PROFILES);
		goto fail;
	}
	if (n_profs) {
		for (size_t i = 0; i < n_profs; i++)
			plan->profiles[i] = profs[i];
		plan->n_profiles = n_profs;
	} else {
		plan->n_profiles = detect(img, plan->profiles, PLAN_MAX_PROFILES);
	}
	if (!plan->n_profiles && optional) {
		snprintf(plan->runtime, sizeof(plan->runtime), "none");
		return plan;
	}
	if (!plan->n_profiles) {
		snprintf(err, errlen, "no Tokio runtime functions found in %s, nor async-std, smol or "
			 "async-executor ones (searched %zu function symbols for %s and %s): is it an "
			 "async Rust program built on one of them? (supported: tokio 1.x, async-std 1.12, "
			 "smol 1.3, async-executor 1.5)", img->name, img->n_syms,
			 "tokio::runtime::task::raw::poll", "async_task::raw::RawTask::run");
		goto fail;
	}
	for (size_t i = 0; i < plan->n_profiles; i++)
		if (!plan->id_profile && plan->profiles[i]->vtable_id_off_slot)
			plan->id_profile = plan->profiles[i];
	for (size_t i = 0; i < plan->n_profiles; i++) {
		size_t before = plan->per_role[AS_ROLE_POLL];
		bool shared = false;
		ret = plan_profile(plan, img, (uint8_t)i);
		if (ret) {
			snprintf(err, errlen, "planning probes: %s", strerror(-ret));
			goto fail;
		}
		/* a profile sharing its poll function with an earlier one adds no copy */
		for (size_t k = 0; k < i; k++)
			if (!strcmp(poll_pattern(plan->profiles[k]), poll_pattern(plan->profiles[i])))
				shared = true;
		if (plan->per_role[AS_ROLE_POLL] == before && !(shared && before)) {
			const char *name = plan->profiles[i]->name;
			snprintf(err, errlen, "no %s runtime functions found in %s (searched %zu "
				 "function symbols for %s): is it a %s program? (supported: %s)",
				 !strcmp(name, "tokio") ? "Tokio" : name, img->name, img->n_syms,
				 poll_pattern(plan->profiles[i]), !strcmp(name, "tokio") ? "Tokio" : name,
				 profile_known_names());
			goto fail;
		}
		if (i)
			strncat(plan->runtime, "+", sizeof(plan->runtime) - strlen(plan->runtime) - 1);
		strncat(plan->runtime, plan->profiles[i]->name,
			sizeof(plan->runtime) - strlen(plan->runtime) - 1);
	}
	ret = name_futures(plan, img);
	if (ret) {
		snprintf(err, errlen, "naming futures: %s", strerror(-ret));
		goto fail;
	}
	ret = place_sites(plan, img);
	if (ret) {
		snprintf(err, errlen, "placing probes: %s", ret == -ENOMEM ? strerror(ENOMEM) :
			 "the Capstone disassembler does not start");
		goto fail;
	}
	return plan;
fail:
	probe_plan__free(plan);
	return NULL;
}

struct probe_plan *probe_plan__build(const struct elf_image *img,
				     const struct runtime_profile *const *profs, size_t n_profs,
				     char *err, size_t errlen)
{
	return build(img, profs, n_profs, false, err, errlen);
}

/* "p:a, p:b, q:c" (each provider:name once), cut to fit len. */
static void list_usdt(const struct usdt_notes *notes, char *out, size_t len)
{
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < notes->n && used + 1 < len; i++) {
		const struct usdt_site *s = &notes->sites[i];
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = !strcmp(notes->sites[k].provider, s->provider) &&
			       !strcmp(notes->sites[k].name, s->name);
		if (seen)
			continue;
		int n = snprintf(out + used, len - used, "%s%s:%s", used ? ", " : "", s->provider, s->name);
		if (n < 0)
			break;
		used += (size_t)n < len - used ? (size_t)n : len - used - 1;
	}
}

static int add_usdt(struct probe_plan *plan, const struct elf_image *img,
		    const struct usdt_site *site)
{
	struct as_probe *p = probe_plan__grow(plan);
	size_t len = strlen(site->provider) + strlen(site->name) + 2;

	if (!p)
		return -ENOMEM;
	p->role = AS_ROLE_USDT;
	p->addr = site->addr;
	p->emulated = probe_plan_emulated(img, site->addr);
	p->symbol = malloc(len);
	if (!p->symbol)
		return -ENOMEM;
	snprintf(p->symbol, len, "%s:%s", site->provider, site->name);
	plan->sema[plan->n] = site->sema;
	plan->usdt_arg[plan->n] = site->arg0;
	plan->n++;
	plan->per_role[AS_ROLE_USDT]++;
	return 0;
}

struct probe_plan *probe_plan__build_usdt(const struct elf_image *img,
					  const struct runtime_profile *const *profs, size_t n_profs,
					  const struct usdt_notes *notes,
					  const char *const *patterns, size_t n_patterns,
					  char *err, size_t errlen)
{
	struct probe_plan *plan = build(img, profs, n_profs, n_patterns > 0, err, errlen);

	if (!plan || !n_patterns)
		return plan;
	for (size_t k = 0; k < n_patterns; k++) {
		const char *colon = strchr(patterns[k], ':');
		if (!colon || colon == patterns[k] || !colon[1]) {
			snprintf(err, errlen, "bad USDT probe '%s': use PROVIDER:NAME or PROVIDER:*",
				 patterns[k]);
			goto fail;
		}
		bool found = false;
		for (size_t i = 0; i < notes->n; i++)
			found = found || usdt_match(patterns[k], &notes->sites[i]);
		if (!found) {
			char have[512];
			list_usdt(notes, have, sizeof(have));
			if (notes->n)
				snprintf(err, errlen, "no USDT probe %s in %s: it has %s", patterns[k],
					 img->name, have);
			else
				snprintf(err, errlen, "no USDT probe %s in %s: it has no USDT probes "
					 "(no .note.stapsdt section)", patterns[k], img->name);
			goto fail;
		}
	}
	for (size_t i = 0; i < notes->n; i++) {
		bool wanted = false;
		for (size_t k = 0; k < n_patterns && !wanted; k++)
			wanted = usdt_match(patterns[k], &notes->sites[i]);
		if (!wanted)
			continue;
		if (plan->n >= 65535) {
			snprintf(err, errlen, "too many probe points (at most 65535)");
			goto fail;
		}
		int ret = add_usdt(plan, img, &notes->sites[i]);
		if (ret) {
			snprintf(err, errlen, "planning probes: %s", strerror(-ret));
			goto fail;
		}
	}
	return plan;
fail:
	probe_plan__free(plan);
	return NULL;
}

void probe_plan__free(struct probe_plan *plan)
{
	if (!plan)
		return;
	plan_reset(plan);
	free(plan);
}

int probe_plan__identify(struct probe_plan *plan, const struct elf_image *img,
			 struct dwarf_types *dt)
{
	for (size_t i = 0; i < plan->n_profiles; i++) {
		int err = runtime_id__identify(plan->profiles[i], img, dt, &plan->ids[i]);
		if (err)
			return err;
	}
	plan->identified = true;
	return 0;
}

/* The index of the id profile in plan->profiles, or -1. */
static int id_index(const struct probe_plan *plan)
{
	for (size_t i = 0; i < plan->n_profiles; i++)
		if (plan->profiles[i] == plan->id_profile)
			return (int)i;
	return -1;
}

uint32_t probe_plan__hdr_vtable_off(const struct probe_plan *plan)
{
	int i = id_index(plan);

	return i < 0 ? 0 : plan->identified ? plan->ids[i].hdr_vtable_off :
	       plan->id_profile->hdr_vtable_off;
}

uint32_t probe_plan__vtable_id_off_slot(const struct probe_plan *plan)
{
	int i = id_index(plan);

	return i < 0 ? 0 : plan->identified ? plan->ids[i].vtable_id_off_slot :
	       plan->id_profile->vtable_id_off_slot;
}

bool probe_plan__frees_tasks(const struct probe_plan *plan, const struct runtime_profile *prof)
{
	for (size_t i = 0; i < plan->n; i++)
		if (plan->probes[i].role == AS_ROLE_FREE && plan->profiles[plan->owner[i]] == prof)
			return true;
	return false;
}

uint32_t probe_plan__spawn_meta_name_off(const struct probe_plan *plan)
{
	for (size_t i = 0; i < plan->n_profiles; i++)
		if (plan->profiles[i]->spawn_meta_name_off)
			return plan->identified ? plan->ids[i].spawn_meta_name_off :
			       plan->profiles[i]->spawn_meta_name_off;
	return 0;
}
