/* Unit tests for dump/rt_context.c on the real test programs (tokio 1.24.2
 * from tests/apps, built by `make apps`; 1.53.1 from tests/apps-tokio153,
 * skipped when not built): CONTEXT's TLS symbol and PT_TLS give the
 * address gdb gives for a thread (fsbase - 0xe0 on 1.24's idle_many,
 * fsbase - 0xd8 on 1.53's: checked with `p &'...CONTEXT...'` against
 * `$fs_base`), and a thread whose CONTEXT is not alive (zeroed storage)
 * holds no handle. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dump/rt_context.h"
#include "harness.h"

#define I124 "tests/apps/target/release/idle_many"
#define I153 "tests/apps-tokio153/target/release/idle_many"
#define FS   UINT64_C(0x7f0000001000)

static int zero_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < FS - 0x1000 || addr + len > FS)
		return -EFAULT;
	memset(buf, 0, len);
	return 0;
}

/* A thread's CONTEXT storage laid out by hand, at FS + loc->tp_off. */
static uint8_t storage[4096];

static int storage_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct rt_task_id_loc *loc = ctx;
	uint64_t base = FS + (uint64_t)loc->tp_off;

	if (addr < base || addr + len > base + sizeof(storage))
		return -EFAULT;
	memcpy(buf, storage + (addr - base), len);
	return 0;
}

static void put(uint32_t off, uint64_t v, uint32_t size)
{
	memcpy(storage + off, &v, size);
}

/* current_task_id's place: a tagged Option (1.24: Id(u64)) or a niche
 * (1.53: Id(NonZeroU64), the id its own tag); read back as the BPF reader
 * does, alive or not, Some or None. */
static void check_task_id(struct rt_context *rc, bool niche)
{
	struct rt_task_id_loc loc;
	uint64_t id = 7;

	CHECK(rt_context__task_id_loc(rc, &loc) == 0);
	CHECK_EQ_U64((uint64_t)-loc.tp_off, niche ? 0xd8 : 0xe0);
	CHECK(loc.state_size >= 1 && loc.state_size <= 8);
	CHECK(loc.tag_size == 8);
	CHECK(niche ? loc.tag_off == loc.id_off : loc.tag_off + 8 == loc.id_off);
	CHECK_EQ_U64(loc.tag_none, 0);
	memset(storage, 0, sizeof(storage));
	CHECK(rt_task_id_read(&loc, FS, storage_read, &loc, &id) == 0 && id == 0);
	put(loc.state_off, loc.state_alive, loc.state_size);
	CHECK(rt_task_id_read(&loc, FS, storage_read, &loc, &id) == 0 && id == 0);
	if (!niche)
		put(loc.tag_off, 1, loc.tag_size);
	put(loc.id_off, 42, 8);
	CHECK(rt_task_id_read(&loc, FS, storage_read, &loc, &id) == 1);
	CHECK_EQ_U64(id, 42);
	/* not alive (destroyed, or never initialised): no task */
	put(loc.state_off, loc.state_alive + 1, loc.state_size);
	CHECK(rt_task_id_read(&loc, FS, storage_read, &loc, &id) == 0 && id == 0);
	CHECK(rt_task_id_read(&loc, 0, storage_read, &loc, &id) == -EFAULT);
	/* the worker-loop test: EnterRuntime { Entered { allow_block_in_place:
	 * bool }, NotEntered } (a niche: NotEntered 2), Budget(Option<u8>) */
	CHECK_EQ_U64(loc.loop_rt_size, 1);
	CHECK_EQ_U64(loc.loop_rt_outside, 2);
	CHECK_EQ_U64(loc.loop_budget_size, 1);
	CHECK_EQ_U64(loc.loop_budget_none, 0);
	CHECK(loc.loop_rt_off != loc.loop_budget_off);
	memset(storage, 0, sizeof(storage));
	put(loc.loop_rt_off, 1, 1);          /* Entered { allow_block_in_place: true } */
	CHECK(rt_task_in_loop(&loc, FS, storage_read, &loc) == 1);
	put(loc.loop_budget_off, 1, 1);      /* Some(budget): inside a user poll */
	CHECK(rt_task_in_loop(&loc, FS, storage_read, &loc) == 0);
	put(loc.loop_budget_off, 0, 1);
	put(loc.loop_rt_off, 2, 1);          /* NotEntered: a spawn_blocking thread */
	CHECK(rt_task_in_loop(&loc, FS, storage_read, &loc) == 0);
	CHECK(rt_task_in_loop(&loc, 0, storage_read, &loc) == -EFAULT);
}

static void check_binary(const char *path, uint64_t below_fs)
{
	struct dwarf_types *dt = dwarf_types__open(path);
	const char *why = NULL;
	struct rt_context *rc;
	struct rt_handle h;

	CHECK(dt != NULL);
	if (!dt)
		return;
	rc = rt_context__open(dt, path, &why);
	CHECK(rc != NULL);
	if (rc) {
		CHECK_EQ_U64(FS - rt_context__addr(rc, FS), below_fs);
		CHECK(rt_context__handle(rc, FS, zero_read, NULL, &h) == 0);
		CHECK(rt_context__handle(rc, 0, zero_read, NULL, &h) == -EFAULT);
		check_task_id(rc, below_fs == 0xd8);
	} else {
		printf("  %s: %s\n", path, why);
	}
	rt_context__free(rc);
	dwarf_types__free(dt);
}

static void test_tokio124(void)
{
	check_binary(I124, 0xe0);
}

static void test_tokio153(void)
{
	if (access(I153, R_OK)) {
		printf("%s not built (make apps needs ../shared/crates): skipped\n", I153);
		return;
	}
	check_binary(I153, 0xd8);
}

static void test_no_context(void)
{
	/* a C program (this test) has no CONTEXT */
	struct dwarf_types *dt = dwarf_types__open("/proc/self/exe");
	const char *why = NULL;

	if (!dt)
		return;   /* built without debug info */
	errno = 0;
	CHECK(rt_context__open(dt, "/proc/self/exe", &why) == NULL);
	CHECK(errno == ENOENT && why && strstr(why, "CONTEXT"));
	dwarf_types__free(dt);
}

int main(void)
{
	RUN(test_tokio124);
	RUN(test_tokio153);
	RUN(test_no_context);
	TEST_MAIN_END();
}
