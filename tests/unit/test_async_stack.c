/* Async backtraces over synthetic memory: the DWARF of the real test program
 * tests/apps/target/release/parked (built by `make apps`, which `make test`
 * runs first) describes its state machines; the test lays out a future in a
 * buffer (discriminants placed at the offsets libdw gives, found here
 * without the code under test) and checks the frames, lines, leaf, enum
 * niches, read failures and the torn-read check. Expected lines come from
 * the `// dump:` markers of parked.rs. */
#include <dwarf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "sym/async_stack.h"
#include "sym/dwarf_types.h"

#define BIN "tests/apps/target/release/parked"
#define SRC "tests/apps/src/bin/parked.rs"
#define BASE 0x7f0000001000ull

struct mem {
	uint64_t base;
	uint8_t buf[4096];
	uint64_t fail_at;     /* reads covering this address fail (0: none) */
	int reads;
};

static int mem_read(void *ctx, uint64_t addr, void *out, size_t len)
{
	struct mem *m = ctx;

	m->reads++;
	if (m->fail_at && addr <= m->fail_at && m->fail_at < addr + len)
		return -EFAULT;
	if (addr < m->base || addr + len > m->base + sizeof(m->buf))
		return -EFAULT;
	memcpy(out, m->buf + (addr - m->base), len);
	return 0;
}

/* Line of the `// dump: tag` marker in parked.rs, or of "async fn tag(" */
static unsigned src_line(const char *needle)
{
	FILE *f = fopen(SRC, "r");
	char line[512];
	unsigned n = 0, found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, needle))
			found = n;
	}
	fclose(f);
	return found;
}

static unsigned marker(const char *tag)
{
	char buf[128];

	snprintf(buf, sizeof(buf), "// dump: %s\n", tag);
	return src_line(buf);
}

/* Independently of dwarf_types.c: the __state offset of a state machine and
 * the __awaitee offset (and type) inside the variant with discriminant 3. */
static int layout(Dwarf_Die *sm, uint64_t *state_off, uint64_t *awaitee_off, Dwarf_Die *awaitee)
{
	Dwarf_Die vp, child, m, vt, am;
	Dwarf_Attribute a;
	Dwarf_Word w;
	uint64_t voff = 0;

	if (dwarf_child(sm, &vp))
		return -1;
	while (dwarf_tag(&vp) != DW_TAG_variant_part)
		if (dwarf_siblingof(&vp, &vp))
			return -1;
	if (!dwarf_formref_die(dwarf_attr(&vp, DW_AT_discr, &a), &m) ||
	    dwarf_formudata(dwarf_attr(&m, DW_AT_data_member_location, &a), &w))
		return -1;
	*state_off = w;
	if (!awaitee_off)
		return 0;
	dwarf_child(&vp, &child);
	do {
		if (dwarf_tag(&child) != DW_TAG_variant || !dwarf_attr(&child, DW_AT_discr_value, &a) ||
		    dwarf_formudata(&a, &w) || w != 3)
			continue;
		dwarf_child(&child, &m);
		if (dwarf_formudata(dwarf_attr(&m, DW_AT_data_member_location, &a), &w) == 0)
			voff = w;
		if (!dwarf_formref_die(dwarf_attr(&m, DW_AT_type, &a), &vt) || dwarf_child(&vt, &am))
			return -1;
		do {
			const char *n = dwarf_diename(&am);
			if (n && !strcmp(n, "__awaitee")) {
				dwarf_formudata(dwarf_attr(&am, DW_AT_data_member_location, &a), &w);
				*awaitee_off = voff + w;
				return dwarf_formref_die(dwarf_attr(&am, DW_AT_type, &a), awaitee) ? 0 : -1;
			}
		} while (dwarf_siblingof(&am, &am) == 0);
	} while (dwarf_siblingof(&child, &child) == 0);
	return -1;
}

struct fixture {
	struct dwarf_types *dt;
	Dwarf_Die outer, middle, inner, stage;
	uint64_t outer_state, middle_at, middle_state, inner_at, inner_state;
};

static int setup(struct fixture *fx)
{
	static const char *const names[] = {
		"parked::deep_outer::{async_fn_env#0}",
		"tokio::runtime::task::core::Stage<parked::deep_outer::{async_fn_env#0}>",
		"parked::no_such_fn::{async_fn_env#0}",
	};
	Dwarf_Die dies[3], d;
	int found[3];
	uint64_t off;

	memset(fx, 0, sizeof(*fx));
	fx->dt = dwarf_types__open(BIN);
	if (!fx->dt) {
		fprintf(stderr, "%s: %s (run `make apps`)\n", BIN, strerror(errno));
		return -1;
	}
	CHECK_EQ_U64(dwarf_types__find(fx->dt, names, 3, dies, found), 2);
	CHECK(found[0] && found[1] && !found[2]);
	if (!found[0] || !found[1])
		return -1;
	fx->outer = dies[0];
	fx->stage = dies[1];
	if (layout(&fx->outer, &fx->outer_state, &fx->middle_at, &fx->middle) ||
	    layout(&fx->middle, &off, &fx->inner_at, &fx->inner))
		return -1;
	fx->middle_state = fx->middle_at + off;
	fx->inner_at += fx->middle_at;
	if (layout(&fx->inner, &off, NULL, &d))
		return -1;
	fx->inner_state = fx->inner_at + off;
	return 0;
}

static void test_rel_path(void)
{
	char *s;

	s = async_stack_rel_path("/w/app/src/main.rs", "/w/app");
	CHECK_STR(s, "src/main.rs");
	free(s);
	s = async_stack_rel_path("/w/app/src/main.rs", "/w/app/");
	CHECK_STR(s, "src/main.rs");
	free(s);
	s = async_stack_rel_path("/w/application/x.rs", "/w/app");
	CHECK_STR(s, "/w/application/x.rs");
	free(s);
	s = async_stack_rel_path("/usr/share/cargo/registry/tokio/src/a.rs", NULL);
	CHECK_STR(s, "/usr/share/cargo/registry/tokio/src/a.rs");
	free(s);
}

static void test_names(void)
{
	struct fixture fx;

	if (setup(&fx) == 0) {
		CHECK_STR(dwarf_types__name(fx.dt, &fx.outer), "parked::deep_outer::{async_fn_env#0}");
		CHECK_STR(dwarf_types__name(fx.dt, &fx.middle), "parked::deep_middle::{async_fn_env#0}");
		CHECK_STR(dwarf_types__name(fx.dt, &fx.stage),
			  "tokio::runtime::task::core::Stage<parked::deep_outer::{async_fn_env#0}>");
		CHECK(dwt_has_variants(&fx.outer));
	} else {
		CHECK(!"fixture");
	}
	dwarf_types__free(fx.dt);
}

/* the three levels suspended: three frames at the .await lines, the leaf */
static void test_suspended_chain(void)
{
	struct fixture fx;
	struct mem m = { .base = BASE };
	struct async_stack s;

	if (setup(&fx)) {
		CHECK(!"fixture");
		dwarf_types__free(fx.dt);
		return;
	}
	m.buf[fx.outer_state] = 3;
	m.buf[fx.middle_state] = 3;
	m.buf[fx.inner_state] = 3;
	CHECK_EQ_U64(async_stack_walk(fx.dt, &fx.outer, BASE, mem_read, &m, &s), 0);
	CHECK_EQ_U64(s.n, 3);
	CHECK_EQ_U64(s.error, 0);
	if (s.n == 3) {
		CHECK_STR(s.frames[0].future, "parked::deep_outer");
		CHECK_STR(s.frames[0].type, "parked::deep_outer::{async_fn_env#0}");
		CHECK_STR(s.frames[0].state, "Suspend0");
		CHECK_STR(s.frames[0].file, "src/bin/parked.rs");
		CHECK_EQ_U64(s.frames[0].line, marker("deep_outer"));
		CHECK_STR(s.frames[1].future, "parked::deep_middle");
		CHECK_EQ_U64(s.frames[1].line, marker("deep_middle"));
		CHECK_STR(s.frames[2].future, "parked::deep_inner");
		CHECK_EQ_U64(s.frames[2].line, marker("deep_inner"));
		CHECK_EQ_U64(s.frames[2].addr, BASE + fx.inner_at);
		CHECK_EQ_U64(s.frames[2].discr_addr, BASE + fx.inner_state);
	}
	CHECK_STR(s.leaf, "core::future::pending::Pending<()>");
	/* unchanged memory verifies; a moved __state does not */
	CHECK_EQ_U64(async_stack_verify(&s, mem_read, &m), 1);
	m.buf[fx.middle_state] = 4;
	CHECK_EQ_U64(async_stack_verify(&s, mem_read, &m), 0);
	async_stack__clear(&s);
	CHECK(s.n == 0 && !s.frames && !s.leaf);
	dwarf_types__free(fx.dt);
}

/* Unresumed / Returned inner levels end the chain there, at the fn's lines */
static void test_other_states(void)
{
	struct fixture fx;
	struct mem m = { .base = BASE };
	struct async_stack s;

	if (setup(&fx)) {
		CHECK(!"fixture");
		dwarf_types__free(fx.dt);
		return;
	}
	/* all zero: the root is Unresumed, at the line of `async fn deep_outer` */
	CHECK_EQ_U64(async_stack_walk(fx.dt, &fx.outer, BASE, mem_read, &m, &s), 0);
	CHECK_EQ_U64(s.n, 1);
	if (s.n == 1) {
		CHECK_STR(s.frames[0].state, "Unresumed");
		CHECK_EQ_U64(s.frames[0].line, src_line("async fn deep_outer("));
	}
	CHECK(!s.leaf);
	async_stack__clear(&s);

	m.buf[fx.outer_state] = 3;
	m.buf[fx.middle_state] = 1;
	CHECK_EQ_U64(async_stack_walk(fx.dt, &fx.outer, BASE, mem_read, &m, &s), 0);
	CHECK_EQ_U64(s.n, 2);
	if (s.n == 2)
		CHECK_STR(s.frames[1].state, "Returned");
	async_stack__clear(&s);

	/* a discriminant no variant has: the walk stops with an error, no frame made up */
	m.buf[fx.middle_state] = 200;
	CHECK_EQ_U64(async_stack_walk(fx.dt, &fx.outer, BASE, mem_read, &m, &s), 0);
	CHECK_EQ_U64(s.n, 1);
	CHECK(s.error == -ENOENT);
	async_stack__clear(&s);

	/* unreadable inner memory: the frames read so far, and the error */
	m.buf[fx.middle_state] = 3;
	m.fail_at = BASE + fx.inner_state;
	CHECK_EQ_U64(async_stack_walk(fx.dt, &fx.outer, BASE, mem_read, &m, &s), 0);
	CHECK_EQ_U64(s.n, 2);
	CHECK(s.error == -EFAULT);
	async_stack__clear(&s);
	dwarf_types__free(fx.dt);
}

/* Stage<T> keeps its tag in a niche: Running and Consumed have values, the
 * dataful Finished is the default */
static void test_enum_niche(void)
{
	struct fixture fx;
	struct mem m = { .base = BASE };
	struct dwt_variant v;
	uint64_t tag_off;
	uint64_t val;

	if (setup(&fx) || layout(&fx.stage, &tag_off, NULL, NULL)) {
		CHECK(!"fixture");
		dwarf_types__free(fx.dt);
		return;
	}
	static const struct { uint64_t tag; const char *name; } cases[] = {
		{ 2, "Running" }, { 4, "Consumed" }, { 0, "Finished" }, { 3, "Finished" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		val = cases[i].tag;
		memcpy(m.buf + tag_off, &val, sizeof(val));
		CHECK_EQ_U64(dwt_read_variant(&fx.stage, BASE, mem_read, &m, &v), 0);
		CHECK_STR(dwarf_diename(&v.member), cases[i].name);
		CHECK_EQ_U64(v.discr, cases[i].tag);
	}
	/* Running holds the future as __0 */
	val = 2;
	memcpy(m.buf + tag_off, &val, sizeof(val));
	Dwarf_Die fut;
	uint64_t off;
	CHECK_EQ_U64(dwt_read_variant(&fx.stage, BASE, mem_read, &m, &v), 0);
	CHECK_EQ_U64(dwt_member(&v.type, "__0", NULL, &off, &fut), 0);
	CHECK_STR(dwarf_types__name(fx.dt, &fut), "parked::deep_outer::{async_fn_env#0}");
	dwarf_types__free(fx.dt);
}

/* not a state machine at the root: no frames, the type is the leaf */
static void test_leaf_root(void)
{
	static const char *const names[] = { "core::future::pending::Pending<()>" };
	struct dwarf_types *dt = dwarf_types__open(BIN);
	struct mem m = { .base = BASE };
	struct async_stack s;
	Dwarf_Die d;
	int found;

	CHECK(dt != NULL);
	if (!dt)
		return;
	CHECK_EQ_U64(dwarf_types__find(dt, names, 1, &d, &found), 1);
	if (found) {
		CHECK_EQ_U64(async_stack_walk(dt, &d, BASE, mem_read, &m, &s), 0);
		CHECK_EQ_U64(s.n, 0);
		CHECK_STR(s.leaf, "core::future::pending::Pending<()>");
		async_stack__clear(&s);
		struct dwt_variant v;
		CHECK(dwt_read_variant(&d, BASE, mem_read, &m, &v) == -ENOENT);   /* no enum */
	}
	dwarf_types__free(dt);
}

/* Hostile memory: the walk over bytes that are noise (a hash of the
 * address), through every way it follows (await macros' branches, the
 * futures inside combinators, slices and Vecs of them, pointers, trait
 * objects whose vtable is never a real one) ends without a fault, within
 * its bounds (frames, branches), for the futures of dump_zoo, which parks
 * a task in each of those ways. Under the sanitizers (the unit tests'
 * build). */
#define ZOO "tests/apps/target/release/dump_zoo"

static uint64_t noise_seed;

static int noise_read(void *ctx, uint64_t addr, void *out, size_t len)
{
	uint8_t *o = out;
	int *reads = ctx;

	if (++*reads > 200000)
		return -EFAULT;   /* a runaway walk: said by the check below */
	if (addr < 0x1000)
		return -EFAULT;
	for (size_t i = 0; i < len; i++) {
		uint64_t x = (addr + i) ^ noise_seed;
		x ^= x >> 33;
		x *= 0xff51afd7ed558ccdull;
		x ^= x >> 33;
		/* mostly small values: discriminants and lengths that select
		 * real variants, pointers that mostly fail */
		o[i] = (uint8_t)(x % 7 ? x & 3 : x);
	}
	return 0;
}

static size_t depth_of(const struct async_stack *s, int level)
{
	size_t n = s->n;

	for (size_t b = 0; b < s->n_branches && level < 32; b++)
		n += depth_of(&s->branches[b].stack, level + 1);
	return n;
}

static void test_noise(void)
{
	static const char *const names[] = {
		"dump_zoo::t_select::{async_fn_env#0}", "dump_zoo::t_join3::{async_fn_env#0}",
		"dump_zoo::f_join::{async_fn_env#0}", "dump_zoo::f_select::{async_fn_env#0}",
		"dump_zoo::f_select_biased::{async_fn_env#0}", "dump_zoo::f_fn_select::{async_fn_env#0}",
		"dump_zoo::f_fn_select_pinned::{async_fn_env#0}", "dump_zoo::f_join_all::{async_fn_env#0}",
		"dump_zoo::b_pin_box::{async_fn_env#0}", "dump_zoo::b_trait::{async_fn_env#0}",
		"dump_zoo::j_unordered::{async_fn_env#0}", "dump_zoo::c_stack::{async_fn_env#0}",
		"dump_zoo::c_then::{async_fn_env#0}", "dump_zoo::c_maybe_done::{async_fn_env#0}",
		"dump_zoo::c_handwritten::{async_fn_env#0}", "dump_zoo::zoo_main::{async_fn_env#0}",
	};
	size_t n = sizeof(names) / sizeof(names[0]);
	struct dwarf_types *dt = dwarf_types__open(ZOO);
	Dwarf_Die dies[sizeof(names) / sizeof(names[0])];
	int found[sizeof(names) / sizeof(names[0])] = { 0 }, walks = 0, bad = 0;

	CHECK(dt != NULL);
	if (!dt)
		return;
	CHECK_EQ_U64(dwarf_types__find(dt, names, n, dies, found), n);
	for (size_t i = 0; i < n; i++) {
		for (uint64_t seed = 1; found[i] && seed <= 40; seed++) {
			struct async_stack st;
			int reads = 0, err;
			noise_seed = seed * 0x9e3779b97f4a7c15ull + i;
			err = async_stack_walk_dyn(dt, &dies[i], BASE + seed * 4096, noise_read, &reads,
						   0x1000, &st);
			walks++;
			if ((err && err != -ENOENT) || depth_of(&st, 0) > 4096 || reads > 200000)
				bad++;
			async_stack__clear(&st);
		}
	}
	CHECK_EQ_U64(walks, 40 * n);
	CHECK_EQ_U64(bad, 0);
	dwarf_types__free(dt);
}

int main(void)
{
	RUN(test_rel_path);
	RUN(test_names);
	RUN(test_suspended_chain);
	RUN(test_other_states);
	RUN(test_enum_niche);
	RUN(test_leaf_root);
	RUN(test_noise);
	TEST_MAIN_END();
}
