/* Probe planning from symbols (and DWARF for future names). */
#include "probe/plan.h"
#include "sym/demangle.h"
#include "sym/dwarf_names.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *probe_role_name(unsigned role)
{
	static const char *const names[AS_ROLE__MAX] = {
		[AS_ROLE_POLL] = "poll", [AS_ROLE_READY] = "ready", [AS_ROLE_WAKE] = "wake",
		[AS_ROLE_SPAWN] = "spawn", [AS_ROLE_FREE] = "free", [AS_ROLE_PARK] = "park",
		[AS_ROLE_IO_DRIVER] = "io", [AS_ROLE_TIMER] = "timer",
	};
	return role < AS_ROLE__MAX && names[role] ? names[role] : "?";
}

static bool matches(const struct profile_point *pt, const struct elf_sym *s)
{
	if (pt->match == MATCH_PREFIX)
		return !strncmp(s->name, pt->pattern, strlen(pt->pattern));
	return !strcmp(s->norm, pt->pattern);
}

static bool planned(const struct probe_plan *plan, unsigned role, uint64_t addr)
{
	for (size_t i = 0; i < plan->n; i++)
		if (plan->probes[i].role == role && plan->probes[i].addr == addr)
			return true;
	return false;
}

static int add_point(struct probe_plan *plan, const struct elf_image *img,
		     const struct profile_point *pt, const struct elf_sym *s)
{
	struct as_probe *p = realloc(plan->probes, (plan->n + 1) * sizeof(*p));
	uint8_t code[16] = { 0 };

	if (!p)
		return -ENOMEM;
	plan->probes = p;
	p = &plan->probes[plan->n];
	memset(p, 0, sizeof(*p));
	p->role = pt->role;
	p->arg_reg = pt->arg_reg;
	p->addr = s->addr;
	int n = elf_image__read(img, s->addr, code, sizeof(code));
	p->emulated = n > 0 ? (uint8_t)insn_emulated(code, (size_t)n) : 0;
	p->symbol = strdup(s->name);
	if (!p->symbol)
		return -ENOMEM;
	plan->n++;
	plan->per_role[pt->role]++;
	return 0;
}

static int plan_profile(struct probe_plan *plan, const struct elf_image *img,
			const struct runtime_profile *prof)
{
	plan->profile = prof;
	for (size_t k = 0; k < prof->n_points; k++) {
		const struct profile_point *pt = &prof->points[k];
		if (pt->fallback && plan->per_role[pt->role])
			continue;
		for (size_t i = 0; i < img->n_syms; i++) {
			const struct elf_sym *s = &img->syms[i];
			if (!matches(pt, s) || planned(plan, pt->role, s->addr))
				continue;
			int err = add_point(plan, img, pt, s);
			if (err)
				return err;
		}
	}
	return 0;
}

/* The root future of each poll copy: from DWARF (the subprogram is named
 * "poll<T, S>"), else from a v0 symbol ("...::raw::poll::<T, S>"). */
static int name_futures(struct probe_plan *plan, const struct elf_image *img)
{
	size_t n = plan->per_role[AS_ROLE_POLL], j = 0;
	uint64_t *addrs = calloc(n ? n : 1, sizeof(*addrs));
	char **names = calloc(n ? n : 1, sizeof(*names));
	int err = 0;

	if (!addrs || !names) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < plan->n; i++)
		if (plan->probes[i].role == AS_ROLE_POLL)
			addrs[j++] = plan->probes[i].addr;
	if (img->has_debug_info)
		dwarf_subprogram_names(img->path, addrs, n, names);
	j = 0;
	for (size_t i = 0; i < plan->n; i++) {
		struct as_probe *p = &plan->probes[i];
		if (p->role != AS_ROLE_POLL)
			continue;
		const char *src = names[j] ? names[j] : p->symbol;
		char *arg = sym_first_generic_arg(src);
		j++;
		if (!arg)
			continue;
		p->future = sym_pretty_future(arg);
		free(arg);
	}
cleanup:
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	free(addrs);
	return err;
}

static void plan_reset(struct probe_plan *plan)
{
	for (size_t i = 0; i < plan->n; i++) {
		free(plan->probes[i].symbol);
		free(plan->probes[i].future);
	}
	free(plan->probes);
	memset(plan, 0, sizeof(*plan));
}

struct probe_plan *probe_plan__build(const struct elf_image *img,
				     const struct runtime_profile *prof,
				     char *err, size_t errlen)
{
	struct probe_plan *plan = calloc(1, sizeof(*plan));
	int ret = 0;

	if (!plan) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (!img->has_symtab) {
		snprintf(err, errlen, "%s is stripped (no symbol table): trace the unstripped "
			 "binary, or build with `strip = false` (and `debug = true` for task names)",
			 img->path);
		goto fail;
	}
	for (size_t i = 0; profiles[i]; i++) {
		const struct runtime_profile *p = prof ? prof : profiles[i];
		ret = plan_profile(plan, img, p);
		if (ret || plan->per_role[AS_ROLE_POLL] || prof)
			break;
		plan_reset(plan);
	}
	if (ret) {
		snprintf(err, errlen, "planning probes: %s", strerror(-ret));
		goto fail;
	}
	if (!plan->per_role[AS_ROLE_POLL]) {
		snprintf(err, errlen, "no %s runtime functions found in %s (searched %zu function "
			 "symbols for %s): is it a %s program? (supported: tokio 1.x)",
			 prof ? prof->name : "Tokio", img->path, img->n_syms,
			 "tokio::runtime::task::raw::poll", prof ? prof->name : "Tokio");
		goto fail;
	}
	ret = name_futures(plan, img);
	if (ret) {
		snprintf(err, errlen, "naming futures: %s", strerror(-ret));
		goto fail;
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
