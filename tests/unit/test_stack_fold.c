/* Unit tests for analysis/stack_fold: what each frame is (the tables), the
 * crates learnt from registry paths, and the folded line: a task's stack
 * starting at its code, the program's first frame and the kernel's found,
 * --all-frames keeping everything. The stacks are those a tokio 1.24
 * worker, its blocking pool and a #[tokio::main] thread really show
 * (recorded with --dwarf on tests/apps: sleeper_in_poll, cpu_split). */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "analysis/stack_fold.h"

static void test_kinds(void)
{
	CHECK_EQ_U64(stack_frame_kind("sleeper_in_poll::blocker::{{closure}}", NULL), FRAME_OWN);
	CHECK_EQ_U64(stack_frame_kind("<app::Svc as tower_service::Service<R>>::call", NULL),
		     FRAME_OWN);
	CHECK_EQ_U64(stack_frame_kind("std::thread::functions::sleep", NULL), FRAME_LIBRARY);
	CHECK_EQ_U64(stack_frame_kind("<u64>::wrapping_mul", NULL), FRAME_LIBRARY);
	CHECK_EQ_U64(stack_frame_kind("<F as core::future::into_future::IntoFuture>::into_future",
				      NULL), FRAME_SCAFFOLD);   /* forwarding */
	CHECK_EQ_U64(stack_frame_kind("<T as alloc::vec::spec::SpecExtend>::spec_extend", NULL),
		     FRAME_LIBRARY);
	CHECK_EQ_U64(stack_frame_kind("<[T]>::sort", NULL), FRAME_LIBRARY);
	CHECK_EQ_U64(stack_frame_kind("clock_nanosleep", NULL), FRAME_LIBRARY);
	CHECK_EQ_U64(stack_frame_kind("hyper::proto::h1::dispatch::Dispatcher::poll_loop", NULL),
		     FRAME_LIBRARY);
	CHECK_EQ_U64(stack_frame_kind("tokio::runtime::task::raw::RawTask::poll", NULL),
		     FRAME_SCAFFOLD);
	CHECK_EQ_U64(stack_frame_kind("<tokio::runtime::blocking::task::BlockingTask<T> as "
				      "core::future::future::Future>::poll", NULL), FRAME_SCAFFOLD);
	CHECK_EQ_U64(stack_frame_kind("<core::panic::unwind_safe::AssertUnwindSafe<F> as "
				      "core::ops::function::FnOnce<()>>::call_once", NULL),
		     FRAME_SCAFFOLD);
	CHECK_EQ_U64(stack_frame_kind("<std::sys::thread::unix::Thread>::new::thread_start", NULL),
		     FRAME_SCAFFOLD);
	CHECK_EQ_U64(stack_frame_kind("start_thread", NULL), FRAME_SCAFFOLD);
	CHECK_EQ_U64(stack_frame_kind("tokio::sync::mpsc::chan::Rx::recv", NULL), FRAME_LIBRARY);
	CHECK_EQ_U64(stack_frame_kind("libc.so.6+0x891f4", NULL), FRAME_UNKNOWN);
	CHECK_EQ_U64(stack_frame_kind("", NULL), FRAME_UNKNOWN);
}

static void test_crates(void)
{
	static const struct as_frame fr[] = {
		{ 0x1000, "mycrate_dep::Thing::go",
		  "/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/mycrate-dep-0.3.1/src/lib.rs", 7 },
		{ 0x2000, "app::main", "src/main.rs", 3 },
		{ 0x3000, "other::x", "/usr/share/cargo/registry/other-1.2.3-beta.1/src/x.rs", 1 },
	};
	struct as_stack st = { .id = 1, .n_user = 3, .frames = fr };
	struct stack_crates c = { 0 };

	CHECK_EQ_U64(stack_frame_kind("mycrate_dep::Thing::go", &c), FRAME_OWN);
	CHECK_EQ_U64(stack_crates__learn(&c, &st), 0);
	CHECK_EQ_U64(c.n, 2);
	CHECK_EQ_U64(stack_frame_kind("mycrate_dep::Thing::go", &c), FRAME_LIBRARY);
	CHECK_EQ_U64(stack_frame_kind("other::x", &c), FRAME_LIBRARY);
	CHECK_EQ_U64(stack_frame_kind("app::main", &c), FRAME_OWN);
	CHECK_EQ_U64(stack_crates__learn(&c, &st), 0);   /* once each */
	CHECK_EQ_U64(c.n, 2);
	stack_crates__clear(&c);
	stack_crates__clear(&c);
}

/* sleeper_in_poll's off-CPU stack on a blocking-pool thread (kernel frames
 * innermost first, then user frames innermost first, as a trace has them) */
static const struct as_frame sleeper[] = {
	{ 1, "_einittext" }, { 2, "__schedule" }, { 3, "schedule" }, { 4, "do_nanosleep" },
	{ 5, "entry_SYSCALL_64_after_hwframe" },
	{ 10, "clock_nanosleep" },
	{ 11, "std::sys::thread::unix::sleep::nanosleep" },
	{ 11, "std::thread::functions::sleep" },
	{ 12, "sleeper_in_poll::sleep_blocking::{{closure}}" },
	{ 12, "sleeper_in_poll::blocker::{{closure}}" },
	{ 13, "tokio::runtime::task::core::Core<T,S>::poll::{{closure}}" },
	{ 13, "tokio::loom::std::unsafe_cell::UnsafeCell<T>::with_mut" },
	{ 14, "std::panicking::catch_unwind" },
	{ 14, "tokio::runtime::task::harness::poll_future" },
	{ 15, "tokio::runtime::task::raw::RawTask::poll" },
	{ 16, "tokio::runtime::coop::budget" },
	{ 17, "tokio::runtime::scheduler::multi_thread::worker::run" },
	{ 18, "<tokio::runtime::blocking::task::BlockingTask<T> as core::future::future::Future>::poll" },
	{ 19, "std::sys::backtrace::__rust_begin_short_backtrace" },
	{ 20, "core::ops::function::FnOnce::call_once{{vtable.shim}}" },
	{ 21, "<std::sys::thread::unix::Thread>::new::thread_start" },
	{ 22, "libc.so.6+0x891f4" },
	{ 23, "libc.so.6+0x1098eb" },
};

static void test_fold_task(void)
{
	const struct as_stack st = { .id = 1, .n_kernel = 5,
				     .n_user = sizeof(sleeper) / sizeof(sleeper[0]) - 5,
				     .frames = sleeper };
	struct stack_line l;

	CHECK_EQ_U64(stack_fold_line(&st, 1, 0, NULL, &l), 0);
	CHECK_STR(l.s, "sleeper_in_poll::blocker::{{closure}};sleeper_in_poll::sleep_blocking::{{closure}};"
		  "std::thread::functions::sleep;std::sys::thread::unix::sleep::nanosleep;"
		  "clock_nanosleep;entry_SYSCALL_64_after_hwframe;do_nanosleep;schedule;__schedule");
	CHECK_EQ_U64(l.n, 9);
	CHECK_EQ_U64(l.own, 0);
	CHECK_EQ_U64(l.kernel, 5);
	free(l.s);
	/* --all-frames: everything, the program's first frame further in */
	CHECK_EQ_U64(stack_fold_line(&st, 1, STACK_FOLD_ALL, NULL, &l), 0);
	CHECK_EQ_U64(l.n, st.n_user + 4u);
	CHECK_EQ_U64(l.own, 13);
	CHECK(!strncmp(l.s, "libc.so.6+0x1098eb;libc.so.6+0x891f4;<std::sys", 46));
	free(l.s);
	/* as a string only */
	char *s = stack_fold(&st, 5, 0);
	CHECK_STR(s, "sleeper_in_poll::blocker::{{closure}};sleeper_in_poll::sleep_blocking::{{closure}};"
		  "std::thread::functions::sleep;std::sys::thread::unix::sleep::nanosleep;clock_nanosleep");
	free(s);
	s = stack_fold(NULL, 0, 0);
	CHECK_STR(s, "");
	free(s);
}

/* #[tokio::main]: the program's main, the runtime's block_on, its async
 * body; the runtime frames between two of the program's frames go too */
static void test_fold_block_on(void)
{
	static const struct as_frame fr[] = {
		{ 1, "app::work" },
		{ 2, "app::main::{{closure}}" },
		{ 3, "tokio::runtime::park::CachedParkThread::block_on" },
		{ 4, "tokio::runtime::runtime::Runtime::block_on" },
		{ 5, "app::main" },
		{ 6, "core::ops::function::FnOnce::call_once" },
		{ 7, "std::rt::lang_start::{{closure}}" },
		{ 8, "std::rt::lang_start_internal" },
		{ 9, "main" },
		{ 10, "__libc_start_call_main" },
		{ 11, "__libc_start_main" },
		{ 12, "_start" },
	};
	const struct as_stack st = { .id = 2, .n_user = 12, .frames = fr };
	struct stack_line l;

	CHECK_EQ_U64(stack_fold_line(&st, 0, 0, NULL, &l), 0);
	CHECK_STR(l.s, "app::main;app::main::{{closure}};app::work");
	CHECK_EQ_U64(l.own, 0);
	CHECK_EQ_U64((uint64_t)(int64_t)l.kernel, (uint64_t)-1);
	free(l.s);
}

/* No frame of the program: the leading scaffolding goes, the library's
 * code stays; all scaffolding (the runtime's own loop): everything stays */
static void test_fold_no_own(void)
{
	static const struct as_frame lib[] = {
		{ 1, "epoll_wait" },
		{ 2, "mio::poll::Poll::poll" },
		{ 3, "hyper::proto::h1::dispatch::Dispatcher<D,Bs,I,T>::poll_loop" },
		{ 4, "tokio::runtime::task::raw::RawTask::poll" },
		{ 5, "start_thread" },
	};
	const struct as_stack st = { .id = 3, .n_user = 5, .frames = lib };
	struct stack_line l;

	CHECK_EQ_U64(stack_fold_line(&st, 0, 0, NULL, &l), 0);
	CHECK_STR(l.s, "hyper::proto::h1::dispatch::Dispatcher<D,Bs,I,T>::poll_loop;"
		  "mio::poll::Poll::poll;epoll_wait");
	CHECK_EQ_U64((uint64_t)(int64_t)l.own, (uint64_t)-1);
	free(l.s);
	const struct as_stack rt = { .id = 4, .n_user = 2, .frames = lib + 3 };
	CHECK_EQ_U64(stack_fold_line(&rt, 0, 0, NULL, &l), 0);
	CHECK_STR(l.s, "start_thread;tokio::runtime::task::raw::RawTask::poll");
	free(l.s);
}

/* The scheduler's stack (no task): the thread's start goes, the runtime's
 * loop stays */
static void test_fold_thread(void)
{
	static const struct as_frame fr[] = {
		{ 1, "epoll_wait" },
		{ 2, "tokio::runtime::scheduler::multi_thread::worker::Context::park" },
		{ 3, "tokio::runtime::scheduler::multi_thread::worker::run" },
		{ 4, "tokio::runtime::blocking::pool::Inner::run" },
		{ 5, "std::sys::backtrace::__rust_begin_short_backtrace" },
		{ 6, "start_thread" },
	};
	const struct as_stack st = { .id = 6, .n_user = 6, .frames = fr };
	char *s = stack_fold(&st, 0, STACK_FOLD_THREAD);

	CHECK_STR(s, "tokio::runtime::scheduler::multi_thread::worker::run;"
		  "tokio::runtime::scheduler::multi_thread::worker::Context::park;epoll_wait");
	free(s);
	/* a thread with no runtime loop: from its first frame of code */
	const struct as_stack plain = { .id = 7, .n_user = 1, .frames = fr };
	s = stack_fold(&plain, 0, STACK_FOLD_THREAD);
	CHECK_STR(s, "epoll_wait");
	free(s);
}

/* ';' in a name (an array type) and control characters cannot break a line */
static void test_clean(void)
{
	static const struct as_frame fr[] = {
		{ 1, "<[u8; 4] as app::Tr>::f" }, { 0x2a, "" }, { 3, "app::a\nb" },
	};
	const struct as_stack st = { .id = 5, .n_user = 3, .frames = fr };
	char *s = stack_fold(&st, 0, STACK_FOLD_ALL);

	CHECK_STR(s, "app::a b;0x2a;<[u8, 4] as app::Tr>::f");
	free(s);
}

int main(void)
{
	RUN(test_kinds);
	RUN(test_crates);
	RUN(test_fold_task);
	RUN(test_fold_block_on);
	RUN(test_fold_no_own);
	RUN(test_fold_thread);
	RUN(test_clean);
	TEST_MAIN_END();
}
