/* `asyncscope probes BINARY`: what each runtime profile finds in a binary,
 * with each probe point's first-instruction cost class. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "probe/plan.h"
#include "probe/profile.h"
#include "sym/elf_image.h"

/* Sample:
 *   tokio: 14 probe points in ./yields
 *   ROLE   ADDRESS   COST       SYMBOL / FUTURE
 *   poll   0x296d0   emulated   tokio::runtime::task::raw::poll  [yields::main::{async_block#3}]
 */
int cmd_probes(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "runtime", required_argument, NULL, 'r' }, { 0 },
	};
	const struct runtime_profile *prof = NULL;
	char err[1024];
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "r:", longopts, NULL)) != -1) {
		if (c != 'r')
			return 2;
		prof = profile_find(optarg);
		if (!prof) {
			cli_error("unknown runtime '%s': supported runtimes are: tokio", optarg);
			return 2;
		}
	}
	if (optind + 1 != argc) {
		cli_error("usage: asyncscope probes [--runtime NAME] BINARY");
		return 2;
	}
	struct elf_image *img = elf_image__open(argv[optind]);
	if (!img) {
		cli_error("cannot read %s: %s", argv[optind],
			  errno == ENOEXEC ? "not a 64-bit ELF file" : strerror(errno));
		return 1;
	}
	struct probe_plan *plan = probe_plan__build(img, prof, err, sizeof(err));
	if (!plan) {
		cli_error("%s", err);
		elf_image__free(img);
		return 1;
	}
	printf("%s: %zu probe points in %s (build id %s)\n", plan->profile->name, plan->n,
	       img->path, img->build_id[0] ? img->build_id : "none");
	printf("%-6s %-12s %-14s %s\n", "ROLE", "ADDRESS", "COST", "SYMBOL [FUTURE]");
	for (size_t i = 0; i < plan->n; i++) {
		const struct as_probe *p = &plan->probes[i];
		printf("%-6s 0x%-10llx %-14s %s%s%s%s\n", probe_role_name(p->role),
		       (unsigned long long)p->addr, p->emulated ? "emulated" : "single-step",
		       p->symbol, p->future ? "  [" : "", p->future ? p->future : "",
		       p->future ? "]" : "");
	}
	probe_plan__free(plan);
	elf_image__free(img);
	return 0;
}
