/* Naming a poll copy's future without DWARF (probe/future_names.c,
 * probe/callees.c): the carrier argument parser on names as legacy and v0
 * demangling spell them (nm -C of tests/apps-deployed*, debug = false),
 * and the direct callees of hand-assembled code. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "probe/callees.h"
#include "probe/future_names.h"

static void check_arg(const char *name, const char *type, unsigned nth, const char *want)
{
	char *got = future_carrier_arg(name, type, nth);

	if (want)
		CHECK_STR(got, want);
	else
		CHECK(got == NULL);
	free(got);
}

static void test_carrier_legacy(void)
{
	const char *cell = "core::ptr::drop_in_place<tokio::runtime::task::core::Cell<deployed::outer::"
			   "{{closure}},alloc::sync::Arc<tokio::runtime::scheduler::multi_thread::"
			   "handle::Handle>>>";
	check_arg(cell, "tokio::runtime::task::core::Cell", 0, "deployed::outer::{{closure}}");
	check_arg(cell, "tokio::runtime::task::core::Cell", 1,
		  "alloc::sync::Arc<tokio::runtime::scheduler::multi_thread::handle::Handle>");
	check_arg(cell, "tokio::runtime::task::core::Cell", 2, NULL);
	/* the worker's task: nested arguments kept whole */
	check_arg("core::ptr::drop_in_place<tokio::runtime::task::core::Stage<tokio::runtime::"
		  "blocking::task::BlockingTask<tokio::runtime::scheduler::multi_thread::worker::"
		  "Launch::launch::{{closure}}>>>", "tokio::runtime::task::core::Stage", 0,
		  "tokio::runtime::blocking::task::BlockingTask<tokio::runtime::scheduler::"
		  "multi_thread::worker::Launch::launch::{{closure}}>");
	/* Core is not CoreStage, nor a longer path ending in it */
	check_arg("core::ptr::drop_in_place<tokio::runtime::task::core::CoreStage<app::f::{{closure}}>>",
		  "tokio::runtime::task::core::Core", 0, NULL);
	check_arg("x::tokio::runtime::task::core::Cell<app::F,S>", "tokio::runtime::task::core::Cell", 0,
		  NULL);
	/* async-executor's spawn<T, F> wrapper: the future is F */
	check_arg("core::ptr::drop_in_place<async_executor::Executor::spawn<(),smol_yields::main::"
		  "{{closure}}::{{closure}}>::{{closure}}>", "async_executor::Executor::spawn", 1,
		  "smol_yields::main::{{closure}}::{{closure}}");
	/* a fn pointer's arrow is no closing bracket */
	check_arg("a::Cell<app::W<fn() -> u8>,S>", "a::Cell", 0, "app::W<fn() -> u8>");
}

static void test_carrier_v0(void)
{
	check_arg("core::ptr::drop_in_place::<tokio::runtime::task::core::Cell<deployed::yielder::"
		  "{closure#0}, alloc::sync::Arc<tokio::runtime::scheduler::current_thread::Handle>>>",
		  "tokio::runtime::task::core::Cell", 0, "deployed::yielder::{closure#0}");
	/* a turbofish */
	check_arg("app::spawn_with::<(), app::main::{closure#0}>::{closure#0}", "app::spawn_with", 1,
		  "app::main::{closure#0}");
}

static void test_callees(void)
{
	/* at 0x1000: call +0x20 (0x1025); jmp -> inside (0x100a); call 0x1025
	 * again; call *%rax; jmp 0x2000 (a tail call) */
	static const uint8_t code[] = {
		0xe8, 0x20, 0x00, 0x00, 0x00,       /* 0x1000 call 0x1025 */
		0xeb, 0x03,                         /* 0x1005 jmp 0x100a */
		0x90, 0x90, 0x90,                   /* 0x1007 nops */
		0xe8, 0x16, 0x00, 0x00, 0x00,       /* 0x100a call 0x1025 */
		0xff, 0xd0,                         /* 0x100f call *%rax */
		0xe9, 0xea, 0x0f, 0x00, 0x00,       /* 0x1011 jmp 0x2000 */
	};
	struct callee c[4];
	int n = callees_of(code, sizeof(code), 0x1000, c, 4);

	CHECK_EQ_U64(n, 2);
	CHECK_EQ_U64(c[0].addr, 0x1025);
	CHECK_EQ_U64(c[0].sites, 2);
	CHECK_EQ_U64(c[1].addr, 0x2000);
	CHECK_EQ_U64(c[1].sites, 1);
	/* max bounds the targets kept */
	CHECK_EQ_U64(callees_of(code, sizeof(code), 0x1000, c, 1), 1);
	CHECK_EQ_U64(callees_of(code, 0, 0x1000, c, 4), 0);
}

int main(void)
{
	RUN(test_carrier_legacy);
	RUN(test_carrier_v0);
	RUN(test_callees);
	TEST_MAIN_END();
}
