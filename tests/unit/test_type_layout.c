/* Layout facts from DWARF (sym/type_layout.h) on the real test programs:
 * tokio 1.24.2 (tests/apps, built by `make apps`) and 1.53.1
 * (tests/apps-tokio153, skipped when not built): the task Header and
 * Vtable offsets BPF reads, the tokio_unstable-only vtable field, and
 * whether OwnedTasks holds one list or shards; generic structs found
 * without their arguments. A 1.53.1 build with --cfg tokio_unstable and
 * the tracing feature (tests/apps-tokio153-unstable) is checked too when
 * built. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "sym/type_layout.h"

#define Y124 "tests/apps/target/release/yields"
#define Y153 "tests/apps-tokio153/target/release/yields"
#define Y153U "tests/apps-tokio153-unstable/target/release/yields"

#define HEADER "tokio::runtime::task::core::Header"
#define VTABLE "tokio::runtime::task::raw::Vtable"
#define OWNED "tokio::runtime::task::list::OwnedTasks"

enum {
	Q_HEADER, Q_STATE, Q_QUEUE_NEXT, Q_VTABLE, Q_OWNER_ID, Q_TRACING_ID, Q_VT, Q_POLL,
	Q_ID_OFFSET, Q_SPAWN_LOC, Q_OWNED_LIST, Q_NO_TYPE, Q_NO_MEMBER, Q_GENERIC, Q_N
};

static const struct type_layout_query queries[Q_N] = {
	[Q_HEADER] = { HEADER, NULL },
	[Q_STATE] = { HEADER, "state" },
	[Q_QUEUE_NEXT] = { HEADER, "queue_next" },
	[Q_VTABLE] = { HEADER, "vtable" },
	[Q_OWNER_ID] = { HEADER, "owner_id" },
	[Q_TRACING_ID] = { HEADER, "tracing_id" },      /* tokio_unstable + tracing only */
	[Q_VT] = { VTABLE, NULL },
	[Q_POLL] = { VTABLE, "poll" },
	[Q_ID_OFFSET] = { VTABLE, "id_offset" },
	[Q_SPAWN_LOC] = { VTABLE, "spawn_location_offset" },   /* tokio_unstable, >= 1.46 */
	[Q_OWNED_LIST] = { OWNED, "list", .deep = true },
	[Q_NO_TYPE] = { "tokio::runtime::task::core::Nope", "state" },
	[Q_NO_MEMBER] = { HEADER, "nope", .deep = true },
	/* with generic arguments written: not how names are asked */
	[Q_GENERIC] = { "tokio::runtime::task::list::OwnedTasks<S>", NULL },
};

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Facts every build shares. */
static void check_shared(const struct type_layout_fact *f)
{
	CHECK(f[Q_HEADER].type_found);
	CHECK(!f[Q_HEADER].member_found);
	CHECK(f[Q_STATE].member_found);
	CHECK_EQ_U64(f[Q_STATE].offset, 0);
	CHECK_STR(f[Q_STATE].member_type, "tokio::runtime::task::state::State");
	CHECK_EQ_U64(f[Q_QUEUE_NEXT].offset, 0x8);
	CHECK(f[Q_VTABLE].member_found);
	CHECK_EQ_U64(f[Q_VTABLE].offset, 0x10);
	CHECK_EQ_U64(f[Q_VTABLE].member_size, 8);
	CHECK_STR(f[Q_VTABLE].member_type, "&tokio::runtime::task::raw::Vtable");
	CHECK(f[Q_OWNER_ID].member_found);
	CHECK_EQ_U64(f[Q_OWNER_ID].offset, 0x18);
	CHECK(f[Q_POLL].member_found);
	CHECK_EQ_U64(f[Q_POLL].offset, 0);
	CHECK(f[Q_ID_OFFSET].member_found);
	CHECK_EQ_U64(f[Q_ID_OFFSET].offset, 0x48);
	CHECK_STR(f[Q_ID_OFFSET].member_type, "usize");
	CHECK(f[Q_SPAWN_LOC].type_found);
	CHECK(f[Q_OWNED_LIST].member_found);
	CHECK(!f[Q_NO_TYPE].type_found);
	CHECK(!f[Q_NO_TYPE].member_found);
	CHECK_EQ_U64(f[Q_NO_TYPE].size, (uint64_t)-1);
	CHECK(f[Q_NO_MEMBER].type_found);
	CHECK(!f[Q_NO_MEMBER].member_found);
	CHECK(!f[Q_GENERIC].type_found);
}

/* Facts of the builds without tokio_unstable. */
static void check_common(const struct type_layout_fact *f)
{
	check_shared(f);
	CHECK_EQ_U64(f[Q_HEADER].size, 32);
	CHECK(f[Q_TRACING_ID].type_found);
	CHECK(!f[Q_TRACING_ID].member_found);
	CHECK_EQ_U64(f[Q_TRACING_ID].member_size, (uint64_t)-1);
	CHECK_STR(f[Q_TRACING_ID].member_type, "");
	CHECK_EQ_U64(f[Q_VT].size, 80);
	CHECK(!f[Q_SPAWN_LOC].member_found);   /* not a tokio_unstable build */
}

/* Queries path; returns the number answered, or -errno. */
static int query(const char *path, struct type_layout_fact *f)
{
	struct dwarf_types *dt = dwarf_types__open(path);
	int n;

	CHECK(dt != NULL);
	if (!dt) {
		fprintf(stderr, "%s: %s (run `make apps`)\n", path, strerror(errno));
		return -errno;
	}
	double t0 = now_ms();
	n = type_layout__query(dt, queries, Q_N, f);
	printf("%s: %d layout queries %.1f ms\n", path, Q_N, now_ms() - t0);
	dwarf_types__free(dt);
	return n;
}

static void test_tokio_124(void)
{
	struct type_layout_fact f[Q_N];

	/* every query answered but the two absent members, the absent member
	 * asked deep, the absent type and the generic name */
	CHECK(query(Y124, f) == Q_N - 5);
	check_common(f);
	/* one list per OwnedTasks before 1.35 */
	CHECK_STR(f[Q_OWNED_LIST].member_type, "tokio::util::linked_list::LinkedList");
	CHECK_EQ_U64(f[Q_OWNED_LIST].member_size, 16);
}

static void test_tokio_153(void)
{
	struct type_layout_fact f[Q_N];

	if (access(Y153, R_OK)) {
		printf("%s not built (make apps needs ../shared/crates): skipped\n", Y153);
		return;
	}
	CHECK(query(Y153, f) == Q_N - 5);
	check_common(f);
	/* sharded since 1.35, a direct member */
	CHECK_STR(f[Q_OWNED_LIST].member_type, "tokio::util::sharded_list::ShardedList");
	CHECK_EQ_U64(f[Q_OWNED_LIST].offset, 0);
}

/* A direct member first; deep only when asked. */
/* tokio_unstable + tracing: Header gains tracing_id, Vtable
 * spawn_location_offset (since 1.46), the shared offsets stay. */
static void test_tokio_153_unstable(void)
{
	struct type_layout_fact f[Q_N];

	if (access(Y153U, R_OK)) {
		printf("%s not built: skipped\n", Y153U);
		return;
	}
	CHECK(query(Y153U, f) == Q_N - 3);
	check_shared(f);
	CHECK_EQ_U64(f[Q_HEADER].size, 40);
	CHECK(f[Q_TRACING_ID].member_found);
	CHECK_EQ_U64(f[Q_TRACING_ID].offset, 0x20);
	CHECK_EQ_U64(f[Q_VT].size, 88);
	CHECK(f[Q_SPAWN_LOC].member_found);
	CHECK_EQ_U64(f[Q_SPAWN_LOC].offset, 0x50);
	CHECK_STR(f[Q_SPAWN_LOC].member_type, "usize");
	CHECK_STR(f[Q_OWNED_LIST].member_type, "tokio::util::sharded_list::ShardedList");
}

static void test_deep(void)
{
	static const struct type_layout_query q[] = {
		{ HEADER, "inner", .deep = false },
		{ "tokio::runtime::task::state::State", "val", .deep = true },
		{ "tokio::runtime::task::state::State", "v", .deep = true },
	};
	struct type_layout_fact f[3];
	struct dwarf_types *dt = dwarf_types__open(Y124);

	CHECK(dt != NULL);
	if (!dt)
		return;
	CHECK(type_layout__query(dt, q, 0, f) == 0);
	int n = type_layout__query(dt, q, 3, f);
	CHECK(n == 2);
	CHECK(!f[0].member_found);
	/* State { val: AtomicUsize }: a direct member */
	CHECK(f[1].member_found);
	CHECK_EQ_U64(f[1].offset, 0);
	CHECK_EQ_U64(f[1].member_size, 8);
	/* AtomicUsize { v: UnsafeCell<usize> }: found below val */
	CHECK(f[2].member_found);
	CHECK_EQ_U64(f[2].offset, 0);
	dwarf_types__free(dt);
}

int main(void)
{
	RUN(test_tokio_124);
	RUN(test_tokio_153);
	RUN(test_tokio_153_unstable);
	RUN(test_deep);
	TEST_MAIN_END();
}
