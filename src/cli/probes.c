/* `asyncscope probes BINARY`: what each runtime profile finds in a binary,
 * with each probe point's first-instruction cost class, and the binary's
 * USDT probes (attachable with `record --usdt`). */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "probe/futures_plan.h"
#include "probe/plan.h"
#include "probe/profile.h"
#include "probe/site.h"
#include "sym/dwarf_types.h"
#include "sym/debuginfo.h"
#include "sym/elf_image.h"
#include "sym/usdt_notes.h"

/* Sample:
 *   USDT probes: 2 sites in ./usdt_app (record --usdt PROVIDER:NAME)
 *   PROBE                          ADDRESS      COST           SEMAPHORE    ARGS
 *   asyncscope_test:tick           0x1078       emulated       -            -8@%rax
 *   asyncscope_test:guarded        0x1208       emulated       0x4020       -8@%rax
 */
static void print_usdt(const struct elf_image *img, const struct usdt_notes *notes)
{
	printf("USDT probes: %zu site%s in %s (record --usdt PROVIDER:NAME)\n", notes->n,
	       notes->n == 1 ? "" : "s", img->path);
	printf("%-30s %-12s %-14s %-12s %s\n", "PROBE", "ADDRESS", "COST", "SEMAPHORE", "ARGS");
	for (size_t i = 0; i < notes->n; i++) {
		const struct usdt_site *s = &notes->sites[i];
		uint8_t code[16];
		char name[256], sema[32] = "-";
		int n = elf_image__read(img, s->addr, code, sizeof(code));
		snprintf(name, sizeof(name), "%s:%s", s->provider, s->name);
		if (s->sema)
			snprintf(sema, sizeof(sema), "0x%llx", (unsigned long long)s->sema);
		printf("%-30s 0x%-10llx %-14s %-12s %s\n", name, (unsigned long long)s->addr,
		       n <= 0 ? "unreadable" : insn_emulated(code, (size_t)n) ? "emulated" : "single-step",
		       sema, s->args[0] ? s->args : "-");
	}
}

/* Sample (one section per runtime found; a function two runtimes share is
 * listed under the first):
 *   tokio+smol: 31 probe points in ./mixed (build id 1f2e...)
 *   tokio (tokio 1.24): 19 probe points
 *   ROLE   ADDRESS      COST           SYMBOL [FUTURE]
 *   poll   0x296d0      emulated       tokio::runtime::task::raw::poll  [mixed::tokio_yielder]
 *   ...
 *   smol (smol 1.3, async-executor 1.5, async-task 4.3): 12 probe points
 *   poll   0x31de0      emulated       async_task::raw::RawTask<F,T,S>::run  [mixed::smol_yielder]
 */
/* Why a probe sits where it does, for the listing: "" at an entry that is
 * already cheap, else "  (moved past: test %rsi, %rsi)" or
 * "  (kept at the entry: ...)". */
static void site_why(const struct probe_site *s, bool emulated, char *buf, size_t n)
{
	buf[0] = '\0';
	switch (s->why) {
	case SITE_MOVED:
		snprintf(buf, n, "  (moved past %u single-stepped instruction%s: %s)", s->skipped,
			 s->skipped == 1 ? "" : "s", s->note);
		break;
	case SITE_ENTRY_RETURN:
		if (!emulated)
			snprintf(buf, n, "  (kept at the entry: a return probe is attached there too)");
		break;
	case SITE_ENTRY_STACK:
		if (!emulated)
			snprintf(buf, n, "  (kept at the entry: the stack is unwound from there)");
		break;
	case SITE_ENTRY_ASKED:
		snprintf(buf, n, "  (kept at the entry: ASYNCSCOPE_ENTRY_SITES is set)");
		break;
	case SITE_ENTRY_STOPPED:
		snprintf(buf, n, "  (kept at the entry: %s)", s->note);
		break;
	default:
		break;
	}
}

/* Sample (probes --futures):
 *   future probes: 5 (4 async state machines, 5 with source lines)
 *   ADDRESS      COST         FUTURE                      SOURCE                      AWAITS
 *   0x2f3d0      emulated     futures_nested::mid         src/bin/futures_nested.rs:136  138 139
 */
static void print_futures(const struct probe_plan *plan, const struct futures_plan_stats *fs)
{
	printf("future probes: %zu (%zu async state machines, %zu with source lines)%s\n",
	       fs->planned, fs->state_machines, fs->with_source,
	       fs->dwarf ? "" : ": no DWARF, build with debug = true for Ready/Pending and lines");
	if (fs->unprobeable)
		printf("  (%zu more matched whose first instruction uprobes cannot take, e.g. a lock "
		       "prefix: left out)\n", fs->unprobeable);
	if (fs->over_max)
		printf("  (%zu more matched and would not be probed: narrow with --probe REGEX)\n",
		       fs->over_max);
	printf("%-12s %-12s %-40s %s\n", "ADDRESS", "COST", "FUTURE", "SOURCE  [AWAIT LINES]");
	for (size_t i = 0; i < plan->n; i++) {
		const struct as_probe *p = &plan->probes[i];
		if (p->role != AS_ROLE_FUTURE)
			continue;
		printf("0x%-10llx %-12s %-40s %s:%u", (unsigned long long)p->addr,
		       p->emulated ? "emulated" : "single-step", p->future ? p->future : p->symbol,
		       p->src_file ? p->src_file : "?", p->src_line);
		for (uint32_t k = 0; k < p->n_awaits; k++)
			printf("%s%u", k ? " " : "  [", p->await_lines[k]);
		printf("%s\n", p->n_awaits ? "]" : "");
	}
}

enum { P_RUNTIME = 1, P_FUTURES, P_PROBE, P_PRESET, P_OUTPUT, P_FORMAT, P_DEBUG_FILE };

static const struct cli_opt probes_opts[] = {
	{ "runtime", 'r', CLI_STRING, P_RUNTIME, "NAME[+NAME]",
	  "list only these runtime profiles: tokio, async-std, smol,\n"
	  "async-executor, several joined by '+' (default: every one found)" },
	{ "futures", 0, CLI_FLAG, P_FUTURES, NULL,
	  "also list the future poll functions record --futures would probe" },
	{ "probe", 0, CLI_LIST, P_PROBE, "REGEX",
	  "also list the functions matching REGEX, as record --probe (repeatable)" },
	{ "probe-preset", 0, CLI_STRING, P_PRESET, "cat", "also list CAT's four patterns" },
	{ "format", 'f', CLI_CHOICE, P_FORMAT, "text", "text (the one form: a table per runtime)" },
	{ "output", 'o', CLI_STRING, P_OUTPUT, "FILE", "write the list to FILE (default -: stdout)" },
	DEBUG_FILE_OPT(P_DEBUG_FILE),
	{ 0 },
};

static const struct cli_opt *const tables[] = { probes_opts, NULL };

const struct cli_command probes_command = {
	.name = "probes",
	.summary = "The probe points each runtime profile finds in a binary, with each one's cost\n"
		   "class, and the binary's USDT probes (record --usdt).",
	.operands = "BINARY",
	.tables = tables,
};

struct probes_args {
	const struct runtime_profile *profs[PLAN_MAX_PROFILES];
	int n_profs;
	struct futures_opts fo;
	const char **pats;
	const char *output;
};

static int on_opt(void *ctx, const struct cli_opt *opt, const struct cli_val *v)
{
	struct probes_args *a = ctx;
	char bad[64];

	switch (opt->key) {
	case P_FUTURES: a->fo.futures = true; break;
	case P_OUTPUT: a->output = v->str; break;
	case P_DEBUG_FILE: debuginfo_set_file(v->str); break;
	case P_PROBE:
		if (cli_push_arg(&a->pats, &a->fo.n_patterns, v->str))
			return 1;
		a->fo.patterns = a->pats;
		break;
	case P_PRESET:
		if (strcmp(v->str, "cat")) {
			cli_error("unknown --probe-preset '%s': the preset is 'cat'", v->str);
			return 2;
		}
		a->fo.preset_cat = true;
		break;
	case P_RUNTIME:
		a->n_profs = profile_parse(v->str, a->profs, PLAN_MAX_PROFILES, bad, sizeof(bad));
		if (a->n_profs < 0) {
			cli_error("unknown runtime '%s': supported runtimes are: %s (several joined by '+')",
				  bad, profile_known_names());
			return 2;
		}
		break;
	}
	return 0;
}

int cmd_probes(int argc, char **argv)
{
	struct probes_args a = { .n_profs = 0, .output = "-" };
	const struct runtime_profile **profs = a.profs;
	struct futures_opts fo;
	const char **pats;
	int n_profs, first, ret = cli_parse(&probes_command, argc, argv, on_opt, &a, &first);
	char err[1024];

	if (ret >= 0 || first + 1 != argc) {
		free(a.pats);
		if (ret >= 0)
			return ret;
		return cli_usage_error(&probes_command, first < argc ? "probes reads one binary"
				       : "probes needs the BINARY");
	}
	fo = a.fo;
	pats = a.pats;
	n_profs = a.n_profs;
	if (cli_redirect_stdout(a.output)) {
		free(pats);
		return 1;
	}
	struct elf_image *img = elf_image__open(argv[first]);
	if (!img) {
		free(pats);
		cli_error("cannot read %s: %s", argv[first],
			  errno == ENOEXEC ? "not a 64-bit ELF file" : strerror(errno));
		return 1;
	}
	char note[600];
	if (img->debug_refused[0]) {
		cli_error("%s", img->debug_refused);
		elf_image__free(img);
		free(pats);
		return 1;
	}
	if (elf_image__debug_note(img, note, sizeof(note)))
		cli_error("%s", note);
	struct usdt_notes *notes = usdt_notes__read_fd(elf_image__fd(img));
	if (!notes)
		cli_error("warning: cannot read the USDT notes of %s: %s", argv[first],
			  errno == EBADMSG ? "malformed .note.stapsdt section" : strerror(errno));
	struct probe_plan *plan = probe_plan__build(img, profs, (size_t)n_profs, err, sizeof(err));
	if (!plan && notes && notes->n && !n_profs) {
		/* a program with USDT probes and no async runtime (C, C++, ...) */
		printf("no async runtime found in %s: USDT probes only\n", img->path);
		print_usdt(img, notes);
		usdt_notes__free(notes);
		elf_image__free(img);
		free(pats);
		return 0;
	}
	/* the binary's DWARF, once: the runtime's release and layout, futures */
	struct dwarf_types *dt = plan ? dwarf_types__open_fd(elf_image__dwarf_fd(img)) : NULL;
	if (!fo.dt)
		fo.dt = dt;
	if (plan && probe_plan__identify(plan, img, dt)) {
		probe_plan__free(plan);
		plan = NULL;
		snprintf(err, sizeof(err), "out of memory");
	}
	struct futures_plan_stats fs = { 0 };
	if (plan && (fo.futures || fo.n_patterns || fo.preset_cat) &&
	    futures_plan_add(plan, img, &fo, &fs, err, sizeof(err)) < 0) {
		probe_plan__free(plan);
		plan = NULL;
	}
	free(pats);
	char why[1024];
	if (plan && fs.no_dwarf && elf_image__no_dwarf_why(img, why, sizeof(why)))
		cli_error("warning: --futures is off (async fn bodies are told from other closures "
			  "by DWARF); %s", why);
	if (!plan) {
		dwarf_types__free(dt);
		cli_error("%s", err);
		usdt_notes__free(notes);
		elf_image__free(img);
		return 1;
	}
	printf("%s: %zu probe points in %s (build id %s)\n", plan->runtime,
	       plan->n - plan->per_role[AS_ROLE_FUTURE], img->path, img->build_id[0] ? img->build_id : "none");
	for (size_t k = 0; k < plan->n_profiles; k++) {
		size_t n = 0;
		for (size_t i = 0; i < plan->n; i++)
			n += plan->owner[i] == k;
		char what[512];
		/* "tokio 1.53.1 (DWARF paths; ...)", "smol (smol 1.3, ...)" */
		runtime_id__describe(plan->profiles[k], &plan->ids[k], what, sizeof(what));
		printf("%s: %zu probe points\n", what, n);
		for (size_t w = 0; plan->identified && w < plan->ids[k].n_warnings; w++)
			printf("warning: %s\n", plan->ids[k].warnings[w]);
		printf("%-6s %-12s %-7s %-24s %-12s %s\n", "ROLE", "ADDRESS", "SITE", "INSTRUCTION AT SITE",
		       "COST", "SYMBOL [FUTURE]  (where the probe sits, when not at a cheap entry)");
		for (size_t i = 0; i < plan->n; i++) {
			const struct as_probe *p = &plan->probes[i];
			uint8_t code[16];
			char insn[64] = "?", why[256];
			if (plan->owner[i] != k)
				continue;
			int got = elf_image__read(img, probe_plan__site_addr(plan, i), code, sizeof(code));
			if (got > 0)
				site_insn_text(code, (size_t)got, probe_plan__site_addr(plan, i), insn,
					       sizeof(insn));
			site_why(&plan->site[i], p->emulated, why, sizeof(why));
			printf("%-6s 0x%-10llx +0x%-4x %-24.24s %-12s %s%s%s%s%s\n", probe_role_name(p->role),
			       (unsigned long long)p->addr, plan->site[i].off, insn,
			       p->emulated ? "emulated" : "single-step", p->symbol, p->future ? "  [" : "",
			       p->future ? p->future : "", p->future ? "]" : "", why);
		}
	}
	if (fo.futures || fo.n_patterns || fo.preset_cat)
		print_futures(plan, &fs);
	if (notes && notes->n)
		print_usdt(img, notes);
	probe_plan__free(plan);
	dwarf_types__free(dt);
	usdt_notes__free(notes);
	elf_image__free(img);
	int werr = cli_close_output(stdout);   /* -o FILE: put in place now */

	if (werr) {
		cli_error("writing the probe list: %s", strerror(-werr));
		return 1;
	}
	return 0;
}
