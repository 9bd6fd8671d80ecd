/* Qualified names from dwarf_types' per-unit scope index, checked against
 * a walk of each name's scopes from its unit's root (dwarf_getscopes_die,
 * the way names were built before the index), over every named type of
 * the first units of a real Rust binary (tests/apps/target/release/parked,
 * built by `make apps`); and an async body found from its state machine's
 * type (the subprogram "{async_fn#0}" beside "{async_fn_env#0}", in
 * another unit). */
#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "sym/dwarf_types.h"

#define BIN "tests/apps/target/release/parked"
#define MAX_CHECKED 20000

static const char *own_name(Dwarf_Die *d)
{
	Dwarf_Attribute a;

	return dwarf_formstring(dwarf_attr_integrate(d, DW_AT_name, &a));
}

/* The name as dwarf_types built it before its index: every namespace and
 * type scope from the unit's root, then the DIE's own name. */
static char *reference_name(Dwarf_Die *die)
{
	Dwarf_Die *scopes = NULL;
	char *out = calloc(1, 1);
	size_t len = 0;
	int n = dwarf_getscopes_die(die, &scopes);

	for (int i = n - 1; out && i >= 0; i--) {
		int tag = dwarf_tag(&scopes[i]);
		const char *s = own_name(&scopes[i]);
		if ((i && tag != DW_TAG_namespace && tag != DW_TAG_structure_type &&
		     tag != DW_TAG_union_type && tag != DW_TAG_enumeration_type) || !s)
			continue;
		char *p = realloc(out, len + strlen(s) + 3);
		if (!p) {
			free(out);
			out = NULL;
			break;
		}
		out = p;
		len += (size_t)sprintf(out + len, "%s%s", len ? "::" : "", s);
	}
	free(scopes);
	return out;
}

static int checked, differ;

static void check_below(struct dwarf_types *dt, Dwarf_Die *parent, int depth)
{
	Dwarf_Die c;

	if (depth > 64 || checked >= MAX_CHECKED || dwarf_child(parent, &c))
		return;
	do {
		int tag = dwarf_tag(&c);
		if (tag == DW_TAG_structure_type && own_name(&c) && checked < MAX_CHECKED &&
		    checked % 7 == 0) {
			char *want = reference_name(&c);
			const char *got = dwarf_types__name(dt, &c);
			if (!want || !got || strcmp(want, got)) {
				if (differ++ < 5)
					fprintf(stderr, "  %s: index %s, scopes %s\n", own_name(&c),
						got ? got : "(null)", want ? want : "(null)");
			}
			free(want);
		}
		if (tag == DW_TAG_structure_type || tag == DW_TAG_namespace || tag == DW_TAG_subprogram ||
		    tag == DW_TAG_lexical_block || tag == DW_TAG_union_type)
			checked++, check_below(dt, &c, depth + 1);
	} while (dwarf_siblingof(&c, &c) == 0);
}

static void test_scoped_names(void)
{
	setenv("ASYNCSCOPE_CACHE_DIR", "", 1);   /* no memo: names from the index */
	struct dwarf_types *dt = dwarf_types__open(BIN);
	Dwarf_Off off = 0, next;
	size_t hsize;
	int units = 0;

	CHECK(dt != NULL);
	if (!dt)
		return;
	Dwarf *dw = dwarf_types__dwarf(dt);
	while (units < 40 && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		if (dwarf_offdie(dw, off + hsize, &cu))
			check_below(dt, &cu, 0);
		off = next;
		units++;
	}
	CHECK(checked > 1000);
	CHECK_EQ_U64(differ, 0);
	dwarf_types__free(dt);
}

static void test_async_body(void)
{
	setenv("ASYNCSCOPE_CACHE_DIR", "", 1);
	struct dwarf_types *dt = dwarf_types__open(BIN);
	const char *names[] = { "parked::deep_outer::{async_fn_env#0}", "parked::nap::{async_fn_env#0}" };
	Dwarf_Die dies[2], body;
	int found[2] = { 0 };

	CHECK(dt != NULL);
	if (!dt)
		return;
	CHECK_EQ_U64(dwarf_types__find(dt, names, 2, dies, found), 2);
	for (int i = 0; i < 2; i++) {
		if (!found[i])
			continue;
		CHECK_EQ_U64(dwarf_types__async_body(dt, &dies[i], &body), 0);
		CHECK(dwarf_tag(&body) == DW_TAG_subprogram);
		CHECK_STR(own_name(&body), "{async_fn#0}");
		const char *file = dwarf_decl_file(&body);
		CHECK(file && strstr(file, "src/bin/parked.rs"));
	}
	/* a type that is no state machine has no body */
	const char *plain[] = { "tokio::time::sleep::Sleep" };
	Dwarf_Die sleep;
	int f = 0;
	if (dwarf_types__find(dt, plain, 1, &sleep, &f) == 1)
		CHECK(dwarf_types__async_body(dt, &sleep, &body) < 0);
	dwarf_types__free(dt);
}

int main(void)
{
	RUN(test_scoped_names);
	RUN(test_async_body);
	TEST_MAIN_END();
}
