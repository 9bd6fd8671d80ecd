/* Unit tests for dump/rt_context.c on the real test programs (tokio 1.24.2
 * from tests/apps, built by `make apps`; 1.53.1 from tests/apps-tokio153,
 * skipped when not built): CONTEXT's TLS symbol and PT_TLS give the
 * address gdb gives for a thread (fsbase - 0xe0 on 1.24's idle_many,
 * fsbase - 0xd8 on 1.53's: checked with `p &'...CONTEXT...'` against
 * `$fs_base`), and a thread whose CONTEXT is not alive (zeroed storage)
 * holds no handle. */
#include <errno.h>
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
