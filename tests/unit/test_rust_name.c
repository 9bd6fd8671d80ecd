/* Display names (src/util/rust_name.c) on names rustc really emits: DWARF
 * type names of the test programs (tests/apps blocker, read with readelf),
 * their legacy-mangled symbols and the same program built with
 * -C symbol-mangling-version=v0 (rustc 1.95), demangled by sym/demangle. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "util/rust_name.h"

static void check(const char *name, int width, bool wide, const char *want)
{
	char *d = rust_name_display(name, width, wide);

	CHECK_STR(d, want);
	free(d);
}

/* Compiler-internal segments, in both forms. */
static void test_rewrites(void)
{
	/* DWARF: an async fn's state machine is the fn */
	check("blocker::stuck_forever::{async_fn_env#0}", 0, true, "blocker::stuck_forever");
	check("checkout::{async_fn#0}", 0, true, "checkout");
	check("app::Conn<T>::serve::{async_fn_env#0}<T>", 0, true, "app::Conn<T>::serve<T>");
	/* an async block's and a closure's state machines */
	check("blocker::main::{async_block#0}::{async_block_env#1}", 0, true,
	      "blocker::main::{async_block#0}::{async_block#1}");
	check("std::thread::current::id::get_or_init::{closure_env#0}", 0, true,
	      "std::thread::current::id::get_or_init::{closure#0}");
	check("{closure_env#0}<blocker::stuck_forever::{async_fn_env#0}, alloc::sync::Arc<tokio::"
	      "runtime::scheduler::current_thread::Handle, alloc::alloc::Global>>", 0, true,
	      "{closure#0}<blocker::stuck_forever, alloc::sync::Arc<tokio::runtime::scheduler::"
	      "current_thread::Handle>>");
	/* legacy mangling's escaped braces */
	check("blocker::main::{{closure}}::{{closure}}", 0, true, "blocker::main::{closure}::{closure}");
	check("a::svc::Conn<T>::serve::{{closure}}", 0, true, "a::svc::Conn<T>::serve::{closure}");
	/* v0's closures and impls stay: nothing tells what they were */
	check("a::main::{closure#1}::{closure#0}", 0, true, "a::main::{closure#1}::{closure#0}");
	check("core::iter::adapters::flatten::{impl#18}::iter_try_fold", 0, true,
	      "core::iter::adapters::flatten::{impl#18}::iter_try_fold");
	/* not a path: as it is */
	check("do_nanosleep", 0, true, "do_nanosleep");
	check("(unknown)", 0, false, "(unknown)");
	check("", 10, false, "");
	CHECK(rust_name_display(NULL, 10, false) == NULL);
}

/* Short: from the left, whole segments, the leaf kept. */
static void test_short(void)
{
	/* fits: unchanged but the rewrites */
	check("blocker::stuck_forever::{async_fn_env#0}", 40, false, "blocker::stuck_forever");
	/* too wide: leading segments go; the last named one and the blocks
	 * after it stay even past the width */
	check("blocker::main::{async_block#0}::{async_block_env#1}", 40, false,
	      "...::main::{async_block#0}::{async_block#1}");
	check("blocker::main::{async_block#0}::{async_block#1}", 48, false,
	      "blocker::main::{async_block#0}::{async_block#1}");
	check("sleeper_in_poll::sleep_blocking::{{closure}}", 30, false,
	      "...::sleep_blocking::{closure}");
	/* a wrapper of one type shows that type, shortened inside it: what
	 * tells one spawn_blocking closure from another */
	check("tokio::runtime::blocking::task::BlockingTask<tokio::runtime::scheduler::multi_thread::"
	      "worker::Launch::launch::{{closure}}>", 48, false,
	      "BlockingTask<...::Launch::launch::{closure}>");
	check("tokio::runtime::blocking::task::BlockingTask<tokio::runtime::scheduler::multi_thread::"
	      "worker::Launch::launch::{{closure}}>", 40, false, "BlockingTask<...::launch::{closure}>");
	check("tokio::runtime::blocking::task::BlockingTask<offload::main::{async_block_env#0}::"
	      "{closure_env#1}>", 48, false, "BlockingTask<...::main::{async_block#0}::{closure#1}>");
	check("tracing::instrument::Instrumented<tokio::runtime::blocking::task::BlockingTask<"
	      "app::work::{closure#0}>>", 40, false, "Instrumented<BlockingTask<...::work::{closure#0}>>");
	/* generic arguments collapse before any segment goes (several) */
	check("hyper::server::server::new_svc::NewSvcTask<hyper::server::conn::AddrStream, "
	      "core::future::from_generator::GenFuture<bench::main::{{closure}}>>", 48, false,
	      "hyper::server::server::new_svc::NewSvcTask<..>");
	/* a turbofish goes entirely */
	check("core::ptr::drop_in_place::<alloc::boxed::Box<a::main::{closure#0}>>", 20, false,
	      "...::drop_in_place");
	/* a qualified bracket keeps its type and trait, by their last segment */
	check("<a::Checksum<u8> as core::future::future::Future>::poll", 30, false,
	      "<Checksum<..> as Future>::poll");
	check("<futures_nested::Checksum as core::future::future::Future>::poll", 40, false,
	      "<Checksum as Future>::poll");
	check("<<a::svc::Conn<u8>>::serve::{closure#0} as core::future::into_future::IntoFuture>"
	      "::into_future", 48, false,
	      "<<Conn<..>>::serve::{closure#0} as IntoFuture>::into_future");
	check("<a::svc::Conn<u8>>::serve::{closure#0}", 20, false, "<Conn<..>>::serve::{closure#0}");
	/* width counts characters, not bytes */
	check("app::d\xc3\xa9j\xc3\xa0::vu", 13, false, "app::d\xc3\xa9j\xc3\xa0::vu");
	check("app::d\xc3\xa9j\xc3\xa0::vu", 12, false, "...::vu");
	CHECK_EQ_U64(rust_name_width("d\xc3\xa9j\xc3\xa0"), 4);
	/* a single word far too wide: its end goes */
	char big[300];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	char *d = rust_name_display(big, 20, false);
	CHECK(d && rust_name_width(d) == 2 * 20 + 16 && !strcmp(d + strlen(d) - 3, "..."));
	free(d);
	/* wide: never shortened */
	check("tokio::runtime::blocking::task::BlockingTask<tokio::runtime::scheduler::multi_thread::"
	      "worker::Launch::launch::{{closure}}>", 10, true,
	      "tokio::runtime::blocking::task::BlockingTask<tokio::runtime::scheduler::multi_thread::"
	      "worker::Launch::launch::{closure}>");
}

/* Into a caller's buffer: cut at its end with "...". */
static void test_format(void)
{
	char buf[16];

	CHECK_STR(rust_name_format(buf, sizeof(buf), "a::b::{async_fn_env#0}", 40, false), "a::b");
	CHECK_STR(rust_name_format(buf, sizeof(buf), "abcdefghijklmnopqrstuvwxyz", 40, true),
		  "abcdefghijkl...");
	CHECK_STR(rust_name_format(buf, sizeof(buf), NULL, 40, true), "");
	CHECK_STR(rust_name_format(buf, 4, "abcdef", 40, true), "abc");
}

int main(void)
{
	RUN(test_rewrites);
	RUN(test_short);
	RUN(test_format);
	TEST_MAIN_END();
}
