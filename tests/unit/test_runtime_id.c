/* Runtime release and layout identification (src/probe/runtime_id.c) on the
 * real test programs: tests/apps (tokio 1.24.2) and tests/apps-tokio153
 * (tokio 1.53.1, skipped when not built); a profile whose header layout
 * disagrees with DWARF gets DWARF's, with one warning naming both values;
 * without DWARF the layout is unverified. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "probe/profile.h"
#include "probe/runtime_id.h"
#include "sym/dwarf_types.h"
#include "sym/elf_image.h"
#include "harness.h"

#define Y124 "tests/apps/target/release/yields"
#define Y153 "tests/apps-tokio153/target/release/yields"

static void identify(const char *path, const struct runtime_profile *prof, bool with_dwarf,
		     struct runtime_id *id)
{
	struct elf_image *img = elf_image__open(path);
	struct dwarf_types *dt = with_dwarf && img ? dwarf_types__open_fd(elf_image__fd(img)) : NULL;

	CHECK(img != NULL);
	CHECK(!with_dwarf || dt != NULL);
	memset(id, 0, sizeof(*id));
	if (img)
		CHECK_EQ_U64(runtime_id__identify(prof, img, dt, id), 0);
	dwarf_types__free(dt);
	elf_image__free(img);
}

static void test_exact_versions(void)
{
	const struct runtime_profile *tokio = profile_find("tokio");
	struct runtime_id id;
	char line[512];

	identify(Y124, tokio, true, &id);
	CHECK(!strcmp(id.version, "1.24.2") && id.exact && !id.untested && !id.outside);
	CHECK(id.layout_checked && id.n_warnings == 0 && !id.features[0]);
	CHECK_EQ_U64(id.hdr_vtable_off, 0x10);
	CHECK_EQ_U64(id.vtable_id_off_slot, 0x48);
	runtime_id__describe(tokio, &id, line, sizeof(line));
	CHECK(!strncmp(line, "tokio 1.24.2 (DWARF paths", 25));
	CHECK(strstr(line, "; layout checked against DWARF)") != NULL);

	if (access(Y153, R_OK)) {
		printf("%s not built (make apps needs ../shared/crates): skipped\n", Y153);
		return;
	}
	identify(Y153, tokio, true, &id);
	CHECK(!strcmp(id.version, "1.53.1") && id.exact && id.layout_checked && !id.n_warnings);
}

/* A profile that says the vtable pointer is elsewhere: DWARF wins. */
static void test_dwarf_wins(void)
{
	struct runtime_profile wrong = *profile_find("tokio");
	struct runtime_id id;

	wrong.hdr_vtable_off = 0x18;
	identify(Y124, &wrong, true, &id);
	CHECK_EQ_U64(id.hdr_vtable_off, 0x10);
	CHECK_EQ_U64(id.n_warnings, 1);
	CHECK(strstr(id.warnings[0], "Header.vtable is at 0x10 in DWARF, not 0x18") != NULL);
}

/* Without DWARF types: the version still comes from the paths, the
 * layout is unverified and the profile's values are used. */
static void test_no_dwarf(void)
{
	const struct runtime_profile *tokio = profile_find("tokio");
	struct runtime_id id;
	char line[512];

	identify(Y124, tokio, false, &id);
	CHECK(!strcmp(id.version, "1.24.2") && strstr(id.source, "panic locations"));
	CHECK(!id.layout_checked);
	CHECK_EQ_U64(id.hdr_vtable_off, tokio->hdr_vtable_off);
	runtime_id__describe(tokio, &id, line, sizeof(line));
	CHECK(strstr(line, "layout unverified") != NULL);
}

/* A runtime without version data is described by its profile alone. */
static void test_unversioned(void)
{
	const struct runtime_profile *smol = profile_find("smol");
	struct runtime_id id;
	char line[256];

	identify(Y124, smol, false, &id);
	CHECK(!strcmp(id.version, "unknown") && !id.n_warnings);
	runtime_id__describe(smol, &id, line, sizeof(line));
	CHECK(!strcmp(line, "smol (smol 1.3, async-executor 1.5, async-task 4.3)"));
}

int main(void)
{
	RUN(test_exact_versions);
	RUN(test_dwarf_wins);
	RUN(test_no_dwarf);
	RUN(test_unversioned);
	TEST_MAIN_END();
}
