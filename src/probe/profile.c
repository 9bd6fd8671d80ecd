/* Runtime profiles as data. Facts behind each entry: ../shared/RUNTIME-NOTES.md
 * (verified on tokio 1.24.2 release builds, with and without debug info and LTO)
 * and the comments here (async-task based executors). */
#include "probe/profile.h"
#include "trace/event.h"
#include "util/glob.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Tokio 1.x. Every per-type copy of a matched function is probed. Version
 * bounds: "source" means read from tokio 1.24.2's and 1.53.1's sources (the
 * two built and traced here); a PR number where tokio's CHANGELOG lists the
 * change. Unbounded points are in both. */
#define T124 "1.24"   /* Debian's tokio, the oldest version tested */
#define T153 "1.53"   /* the newest version tested */
static const struct profile_point tokio_points[] = {
	/* One copy per (future, scheduler); first instruction is a jmp into
	 * Harness::poll (emulated), and survives fat LTO. rdi = task header. */
	{ AS_ROLE_POLL, 0, 0, MATCH_NORM, "tokio::runtime::task::raw::poll" },
	/* Entered only on completion (Ready or cancel): classifies the poll
	 * outcome without reading the racy state word at return. */
	{ AS_ROLE_READY, 0, 0, MATCH_NORM, "tokio::runtime::task::harness::Harness::complete" },
	/* Wakes. A waker's wake_by_val (push first: emulated, ~0.6 us) is how
	 * timers, I/O, channels and deferred yields wake a task; wake_by_ref
	 * (single-stepped) is rarer. The multi-thread Schedule impl that they
	 * reach starts with `sub rsp` (single-stepped, ~9 us), so it is not
	 * probed: a wake is the waker call, even for a task already notified. */
	{ AS_ROLE_WAKE, 0, 0, MATCH_NORM, "tokio::runtime::task::waker::wake_by_val" },
	{ AS_ROLE_WAKE, 0, 0, MATCH_NORM, "tokio::runtime::task::waker::wake_by_ref" },
	/* A new task's first schedule (spawn). multi-thread spawn calls
	 * schedule_task out of line in 1.24 (single-stepped, once per task);
	 * release builds of 1.53 inline it into schedule_option_task_without_yield,
	 * which bind_new_task calls once per spawn (rsi = Option<Notified>: the
	 * task, or 0 when the runtime was shut down). The current-thread
	 * Schedule impl (emulated) serves spawns and wakes; the recorder drops
	 * a schedule nested in the wake it belongs to. rsi = task. */
	{ AS_ROLE_WAKE, 1, 0, MATCH_NORM,
	  "tokio::runtime::scheduler::multi_thread::worker::<impl tokio::runtime::scheduler::multi_thread::handle::Handle>::schedule_task", .nested = 1 },
	{ AS_ROLE_WAKE, 1, 0, MATCH_NORM, /* v0 mangling */
	  "<tokio::runtime::scheduler::multi_thread::handle::Handle>::schedule_task", .nested = 1 },
	{ AS_ROLE_WAKE, 1, 0, MATCH_NORM,
	  "tokio::runtime::scheduler::multi_thread::worker::<impl tokio::runtime::scheduler::multi_thread::handle::Handle>::schedule_option_task_without_yield",
	  .why = "source: not in 1.24.2, in 1.53.1" },
	{ AS_ROLE_WAKE, 1, 0, MATCH_NORM,
	  "<tokio::runtime::scheduler::multi_thread::handle::Handle>::schedule_option_task_without_yield",
	  .why = "source: not in 1.24.2, in 1.53.1" },
	{ AS_ROLE_WAKE, 1, 0, MATCH_NORM,
	  "tokio::runtime::scheduler::current_thread::<impl tokio::runtime::task::Schedule for alloc::sync::Arc>::schedule", .nested = 1 },
	{ AS_ROLE_WAKE, 1, 0, MATCH_NORM,
	  "<alloc::sync::Arc as tokio::runtime::task::Schedule>::schedule", .nested = 1 },
	/* A LocalSet's schedule, which its spawn calls directly and its
	 * Schedule impl (wakes) through: the first schedule of a spawn_local
	 * task, and the schedule of its wakes, dropped as nested. Starts with a
	 * mov (single-stepped, ~4 us a local spawn or wake). rsi = task. */
	{ AS_ROLE_WAKE, 1, 0, MATCH_NORM, "tokio::task::local::Shared::schedule", .nested = 1 },
	{ AS_ROLE_WAKE, 1, 0, MATCH_NORM, "<tokio::task::local::Shared>::schedule", .nested = 1 },
	/* spawn_blocking and the multi-thread workers themselves */
	{ AS_ROLE_WAKE, 1, 0, MATCH_NORM, "tokio::runtime::blocking::pool::Spawner::spawn_task" },
	{ AS_ROLE_WAKE, 1, 0, MATCH_NORM, "<tokio::runtime::blocking::pool::Spawner>::spawn_task" },
	/* #[track_caller] Handle::current(&'static Location) runs once per
	 * tokio::spawn, even when spawn itself is inlined (1.24); 1.53's
	 * spawn_inner reaches the runtime through context::with_current
	 * instead (not in the CHANGELOG). */
	{ AS_ROLE_SPAWN, 0, 0, MATCH_NORM, "tokio::runtime::handle::Handle::current",
	  .until = T124, .why = "source: 1.24.2's spawn_inner calls Handle::current, 1.53.1's "
	  "context::with_current (1.25 to 1.52 untested)" },
	{ AS_ROLE_SPAWN, 0, 0, MATCH_NORM, "<tokio::runtime::handle::Handle>::current",
	  .until = T124, .why = "as above" },
	/* The scheduler's Handle::current (#[track_caller], rdi = &Location,
	 * push first): still run by spawn_blocking in 1.53 (inlined into the
	 * public one in 1.24 builds). A program's own Handle::current() calls
	 * reach it too: the location is kept only for a task first seen on the
	 * same thread before that poll ends. */
	{ AS_ROLE_SPAWN, 0, 0, MATCH_NORM, "tokio::runtime::scheduler::Handle::current" },
	{ AS_ROLE_SPAWN, 0, 0, MATCH_NORM, "<tokio::runtime::scheduler::Handle>::current" },
	/* Every spawn onto a runtime's OwnedTasks (tokio::spawn, Handle and
	 * Runtime::spawn, JoinSet, LocalRuntime's spawn_local) binds the new
	 * task here, out of line and generic only over the scheduler (push
	 * first: emulated); rsi = the task. Its &Location does not reach it:
	 * the call site is found by unwinding the stack to the program's frame. */
	{ AS_ROLE_SPAWN, 1, 0, MATCH_NORM, "tokio::runtime::task::list::OwnedTasks::bind_inner",
	  .stack = 1, .why = "source: not in 1.24.2 (bind is generic there), in 1.53.1" },
	{ AS_ROLE_SPAWN, 1, 0, MATCH_NORM, "<tokio::runtime::task::list::OwnedTasks>::bind_inner",
	  .stack = 1, .why = "as above" },
	/* A LocalSet's tasks bind through LocalOwnedTasks::bind (generic, and
	 * inlined), but task::spawn_local and LocalSet::spawn_local stay out
	 * of line (one copy per future, push first): their entry, the stack
	 * unwound to the caller; the task is the next one first scheduled on
	 * the thread (the Schedule impl above). */
	{ AS_ROLE_SPAWN, 0, 0, MATCH_NORM, "tokio::task::local::spawn_local", .stack = 1,
	  .why = "source: out of line in 1.53.1 builds, inlined in 1.24.2's" },
	{ AS_ROLE_SPAWN, 0, 0, MATCH_NORM, "tokio::task::local::LocalSet::spawn_local", .stack = 1,
	  .why = "as above" },
	{ AS_ROLE_SPAWN, 0, 0, MATCH_NORM, "<tokio::task::local::LocalSet>::spawn_local", .stack = 1,
	  .why = "as above" },
	/* Builds with tokio_unstable and tracing: get_span (out of line, push
	 * first) builds each task's span from the spawn's SpawnMeta (rcx),
	 * whose name is task::Builder::name's; r8 = the task id. Tokio keeps
	 * the name nowhere in the task. */
	{ AS_ROLE_SPAWN, 3, 0, MATCH_NORM, "tokio::util::trace::task::get_span", .name = 1,
	  .why = "source: 1.53.1 util/trace.rs, tracing feature only" },
	/* Freeing the task cell (rdi = header); the unboxed variant only where
	 * the boxed one was merged away (fat LTO). */
	{ AS_ROLE_FREE, 0, 0, MATCH_PREFIX,
	  "core::ptr::drop_in_place<alloc::boxed::Box<tokio::runtime::task::core::Cell<" },
	{ AS_ROLE_FREE, 0, 0, MATCH_PREFIX,
	  "core::ptr::drop_in_place::<alloc::boxed::Box<tokio::runtime::task::core::Cell<" },
	{ AS_ROLE_FREE, 0, 1, MATCH_PREFIX,
	  "core::ptr::drop_in_place<tokio::runtime::task::core::Cell<" },
	{ AS_ROLE_FREE, 0, 1, MATCH_PREFIX,
	  "core::ptr::drop_in_place::<tokio::runtime::task::core::Cell<" },
	/* Worker parking (entry and return). 1.24.2's worker park() and
	 * park_yield() call Context::park_timeout, 1.53.1's call
	 * Context::park_internal: it came with the alternative timer (tokio#7467,
	 * 1.49, read from both sources; the CHANGELOG lists only the timer). Not
	 * multi_thread::park::Parker::park_timeout, which 1.53 still has and
	 * which is not the worker's park. */
	{ AS_ROLE_PARK, 0, 0, MATCH_NORM, "tokio::runtime::scheduler::multi_thread::worker::Context::park_timeout",
	  .until = "1.48", .why = "tokio#7467" },
	{ AS_ROLE_PARK, 0, 0, MATCH_NORM, "<tokio::runtime::scheduler::multi_thread::worker::Context>::park_timeout",
	  .until = "1.48", .why = "tokio#7467" },
	{ AS_ROLE_PARK, 0, 0, MATCH_NORM, "tokio::runtime::scheduler::multi_thread::worker::Context::park_internal",
	  .since = "1.49", .why = "tokio#7467" },
	{ AS_ROLE_PARK, 0, 0, MATCH_NORM, "<tokio::runtime::scheduler::multi_thread::worker::Context>::park_internal",
	  .since = "1.49", .why = "tokio#7467" },
	{ AS_ROLE_PARK, 0, 0, MATCH_NORM, "tokio::runtime::scheduler::current_thread::Context::park" },
	{ AS_ROLE_PARK, 0, 0, MATCH_NORM, "<tokio::runtime::scheduler::current_thread::Context>::park" },
	/* Driver context: wakes made inside come from I/O or the timer. */
	{ AS_ROLE_IO_DRIVER, 0, 0, MATCH_NORM, "tokio::runtime::io::Driver::turn",
	  .until = T124, .why = "source: 1.24.2 runtime/io/mod.rs, 1.53.1 runtime/io/driver.rs" },
	{ AS_ROLE_IO_DRIVER, 0, 0, MATCH_NORM, "<tokio::runtime::io::Driver>::turn",
	  .until = T124, .why = "as above" },
	{ AS_ROLE_IO_DRIVER, 0, 0, MATCH_NORM, "tokio::runtime::io::driver::Driver::turn",
	  .why = "source: 1.53.1 runtime/io/driver.rs (1.25 to 1.52 untested)" },
	{ AS_ROLE_IO_DRIVER, 0, 0, MATCH_NORM, "<tokio::runtime::io::driver::Driver>::turn",
	  .why = "as above" },
	{ AS_ROLE_TIMER, 0, 0, MATCH_NORM,
	  "tokio::runtime::time::<impl tokio::runtime::time::handle::Handle>::process_at_time" },
	{ AS_ROLE_TIMER, 0, 0, MATCH_NORM, "<tokio::runtime::time::handle::Handle>::process_at_time" },
	/* The alternative timer (tokio_unstable, Builder::enable_alt_timer,
	 * multi-thread): a worker gathers its expired timers into a WakeQueue
	 * and wakes them in wake_all (out of line, push first), bypassing
	 * process_at_time. */
	{ AS_ROLE_TIMER, 0, 0, MATCH_NORM, "tokio::runtime::time_alt::wake_queue::WakeQueue::wake_all",
	  .since = "1.49", .why = "tokio#7467" },
	{ AS_ROLE_TIMER, 0, 0, MATCH_NORM, "<tokio::runtime::time_alt::wake_queue::WakeQueue>::wake_all",
	  .since = "1.49", .why = "tokio#7467" },
};

/* With the tracing feature (tokio_unstable builds) every task's future is
 * wrapped for its span: the name is the future inside. */
static const struct future_wrapper tokio_wrappers[] = {
	{ "tracing::instrument::Instrumented", 0 },
};

/* What a poll copy's drop glue names (the stage dropped when the future
 * completes, the cell freed when the task is): Harness<T, S>::poll calls
 * them out of line in 1.24.2 and 1.53.1 release builds (nm of
 * tests/apps-deployed*, debug = false). */
static const struct future_carrier tokio_carriers[] = {
	{ "tokio::runtime::task::core::Cell", 0 },
	{ "tokio::runtime::task::core::Stage", 0 },
	{ "tokio::runtime::task::core::CoreStage", 0 },
	{ "tokio::runtime::task::core::Core", 0 },
};

/* The runtime's own code and the standard library: not a spawn's call site. */
static const char *const tokio_library[] = {
	"tokio::", "tokio_util::", "std::", "core::", "alloc::", NULL,
};

/* What DWARF confirms or reveals of a tokio binary (1.24.2, 1.53.1 and
 * 1.53.1 with tokio_unstable and tracing checked; src/sym/type_layout.h). */
static const struct layout_fact tokio_layout[] = {
	{ LAYOUT_HDR_VTABLE, false, "tokio::runtime::task::core::Header", "vtable" },
	{ LAYOUT_VTABLE_ID, false, "tokio::runtime::task::raw::Vtable", "id_offset" },
	{ LAYOUT_META_NAME, false, "tokio::util::trace::SpawnMeta", "name" },
	{ LAYOUT_SIGN, true, "tokio::runtime::task::list::OwnedTasks", "list",
	  "tokio::util::sharded_list::ShardedList", "1.35 or later", NULL,
	  "tokio#6001 (1.35: the task list is sharded)" },
	{ LAYOUT_SIGN, true, "tokio::runtime::task::list::OwnedTasks", "list",
	  "tokio::util::linked_list::LinkedList", "before 1.35", NULL, "tokio#6001" },
	{ LAYOUT_SIGN, false, "tokio::runtime::task::raw::Vtable", "spawn_location_offset",
	  NULL, "1.46 or later", "tokio_unstable",
	  "tokio#7417 (1.46: TaskMeta::spawn_location, its offset in the vtable)" },
	{ LAYOUT_SIGN, false, "tokio::runtime::task::core::Header", "tracing_id",
	  NULL, NULL, "tracing", "source: Header::tracing_id with tokio_unstable and tracing" },
};

/* block_in_place's closure spawning run(cx): 1.24.2 names it inside
 * block_in_place, 1.53.1 inside its helper maybe_move_runtime */
static const char *const tokio_handoff_loops[] = {
	"tokio::runtime::blocking::task::BlockingTask<tokio::runtime::scheduler::multi_thread*::worker::block_in_place::*",
	"tokio::runtime::blocking::task::BlockingTask<tokio::runtime::scheduler::multi_thread*::worker::maybe_move_runtime::*",
	NULL,
};

/* A blocking-pool task's poll: BlockingTask's Future::poll (1.24.2, 1.53.1) */
static const char *const tokio_pool_frames[] = {
	"<tokio::runtime::blocking::task::BlockingTask<*> as core::future::future::Future>::poll",
	NULL,
};

/* Inside block_in_place: the function itself (1.53.1 keeps it out of line)
 * and exit_runtime, which only block_in_place calls (1.24.2 inlines
 * block_in_place into the caller's closure) */
static const char *const tokio_handoff_frames[] = {
	"tokio::runtime::scheduler::multi_thread*::worker::block_in_place*",
	"tokio::runtime::context::exit_runtime*",
	"tokio::runtime::context::runtime_mt::exit_runtime*",
	NULL,
};

/* runtime/task/state.rs, the same in 1.24.2 and 1.53.1: RUNNING 1,
 * COMPLETE 2, NOTIFIED 4 (a Notified holds a reference), JOIN_INTEREST 8
 * (the JoinHandle's reference), the count from bit 6 (REF_ONE 64); Header
 * is repr(C) with the state first. An idle task's count: 1 for its
 * OwnedTasks (or LocalOwnedTasks) entry, 1 while JOIN_INTEREST, 1 a waker
 * held or AbortHandle (dump_zoo: exact on 53 tasks, LocalSets too). */
static const struct task_state_layout tokio_task_state = {
	.off = 0, .busy = 0x1 | 0x2 | 0x4, .handle = 0x8, .ref_shift = 6, .base_refs = 1,
};

static const struct runtime_profile tokio_profile = {
	.name = "tokio",
	.crate = "tokio",
	/* each multi-thread worker runs its whole loop in the poll of the
	 * blocking-pool task worker::launch spawned (1.24.2 and 1.53.1) */
	.endless_polls = "tokio::runtime::blocking::task::BlockingTask<tokio::runtime::scheduler::multi_thread::worker::*launch*>",
	/* worker::launch's closure and block_in_place's (1.24.2 and 1.53.1;
	 * multi_thread_alt's too) run the worker's loop: run(cx) */
	.worker_loops = "tokio::runtime::blocking::task::BlockingTask<tokio::runtime::scheduler::multi_thread*::worker::*",
	.handoff_loops = tokio_handoff_loops,
	.pool_tasks = "tokio::runtime::blocking::task::BlockingTask<*",
	.pool_frames = tokio_pool_frames,
	.handoff_frames = tokio_handoff_frames,
	.layout = tokio_layout,
	.n_layout = sizeof(tokio_layout) / sizeof(tokio_layout[0]),
	.versions = "tokio 1.24 to 1.53",
	.tested = "1.24.2, 1.53.1",
	.range = "1.24 to 1.53",
	.library = tokio_library,
	/* Header is repr(C): state@0, queue_next@8, vtable@0x10; the vtable's
	 * id_offset is its tenth word: the same in 1.24.2 and 1.53.1, with or
	 * without tokio_unstable (whose spawn_location_offset, 1.46, comes
	 * after it); the offsets entered the vtable in 1.23 with tokio#5213
	 * ("reduce amount of codegen needed per spawned task", not checked in
	 * 1.23's source). Checked against DWARF where the binary has it. */
	.task_state = &tokio_task_state,
	.hdr_vtable_off = 0x10,
	.vtable_id_off_slot = 0x48,
	/* SpawnMeta { spawned_at: &Location, name: Option<&str>, .. } with
	 * tracing (1.53.1, DWARF) */
	.spawn_meta_name_off = 8,
	.points = tokio_points,
	.n_points = sizeof(tokio_points) / sizeof(tokio_points[0]),
	.wrappers = tokio_wrappers,
	.n_wrappers = sizeof(tokio_wrappers) / sizeof(tokio_wrappers[0]),
	.carriers = tokio_carriers,
	.n_carriers = sizeof(tokio_carriers) / sizeof(tokio_carriers[0]),
};

/* async-task 4.3 tasks run by async-executor 1.5: async-std 1.12 (through
 * async-global-executor 2.3), smol 1.3, and async-executor used directly
 * share these points. Verified on release builds (debug = true) of
 * tests/apps asyncstd_yields, smol_yields and mixed. A task is the pointer
 * to its header (vtable@0, state@8, awaiter@0x10; the schedule function
 * then the future follow): async-task gives tasks no id. */
static const struct profile_point async_executor_points[] = {
	/* Poll: RawTask<F,T,S>::run, one copy per (future, output, schedule),
	 * its address in the task vtable; first instruction push (emulated).
	 * rdi = task. It returns bool ("woken while running"), not Poll. */
	{ AS_ROLE_POLL, 0, 0, MATCH_NORM, "async_task::raw::RawTask::run" },
	{ AS_ROLE_POLL, 0, 0, MATCH_NORM, "<async_task::raw::RawTask>::run" },
	/* Ready: run drops the future right after it returned Ready (and when
	 * a closed task is dropped: cancelled, as Tokio's complete). The drop
	 * glue of async-executor's spawn wrapper stays out of line (push; under
	 * fat LTO it survives but may start with a mov: single-stepped):
	 * rdi = the future, inside the task (0x28 past it with the executor's
	 * 8-byte schedule closure). The state word's COMPLETED bit read at
	 * run's return is racy: the task may already be freed or re-run. */
	{ AS_ROLE_READY, 0, 0, MATCH_GLOB,
	  "core::ptr::drop_in_place<async_executor::Executor::spawn<*>::{{closure}}>", 1 },
	{ AS_ROLE_READY, 0, 0, MATCH_GLOB,
	  "core::ptr::drop_in_place<async_executor::LocalExecutor::spawn<*>::{{closure}}>", 1 },
	/* futures of 2048 bytes and more are boxed by async-task */
	{ AS_ROLE_READY, 0, 0, MATCH_GLOB,
	  "core::ptr::drop_in_place<core::pin::Pin<alloc::boxed::Box<async_executor::Executor::spawn<*>::{{closure}}>>>", 1 },
	{ AS_ROLE_READY, 0, 0, MATCH_GLOB,
	  "core::ptr::drop_in_place<core::pin::Pin<alloc::boxed::Box<async_executor::LocalExecutor::spawn<*>::{{closure}}>>>", 1 },
	/* Wakes (rdi = task): wake and wake_by_ref are the waker vtable's, so
	 * always out of line; wake_by_ref may start with a mov (single-stepped).
	 * A wake while the task runs only marks it, and run reschedules it
	 * inline: the wake is the waker call. */
	{ AS_ROLE_WAKE, 0, 0, MATCH_NORM, "async_task::raw::RawTask::wake" },
	{ AS_ROLE_WAKE, 0, 0, MATCH_NORM, "<async_task::raw::RawTask>::wake" },
	{ AS_ROLE_WAKE, 0, 0, MATCH_NORM, "async_task::raw::RawTask::wake_by_ref" },
	{ AS_ROLE_WAKE, 0, 0, MATCH_NORM, "<async_task::raw::RawTask>::wake_by_ref" },
	/* The task vtable's schedule (push): Runnable::schedule, i.e. the first
	 * schedule of a spawned task (its first sight), and a wake by value
	 * when the schedule function is zero-sized. The recorder drops a
	 * schedule nested in the wake it belongs to. No spawn location:
	 * neither async-std, smol nor async-executor spawn is #[track_caller]. */
	{ AS_ROLE_WAKE, 0, 0, MATCH_NORM, "async_task::raw::RawTask::schedule", .nested = 1 },
	{ AS_ROLE_WAKE, 0, 0, MATCH_NORM, "<async_task::raw::RawTask>::schedule", .nested = 1 },
	/* Freed (rdi = task): the vtable's destroy (push), reached when the
	 * Task handle or a Runnable lets go last. A detached task freed by
	 * its own last run is not seen: destroy is inlined there. */
	{ AS_ROLE_FREE, 0, 0, MATCH_NORM, "async_task::raw::RawTask::destroy" },
	{ AS_ROLE_FREE, 0, 0, MATCH_NORM, "<async_task::raw::RawTask>::destroy" },
	/* Worker idle (entry and return, both push): async-io's block_on
	 * either parks on its parking::Parker or waits in epoll holding the
	 * reactor lock. Inner::park often returns at once (already notified).
	 * Under fat LTO Poller::wait is inlined: epoll waits are not seen. */
	{ AS_ROLE_PARK, 0, 0, MATCH_NORM, "parking::Inner::park" },
	{ AS_ROLE_PARK, 0, 0, MATCH_NORM, "<parking::Inner>::park" },
	{ AS_ROLE_PARK, 0, 0, MATCH_NORM, "polling::epoll::Poller::wait" },
	{ AS_ROLE_PARK, 0, 0, MATCH_NORM, "<polling::epoll::Poller>::wait" },
	/* No I/O or timer context: async-io's ReactorLock::react collects the
	 * timer and I/O wakers together and wakes them after both. */
};

/* The task's future is async-executor's spawn wrapper around the user's
 * future (async-std wraps it once more for task locals); large futures
 * are boxed. */
static const struct future_wrapper async_executor_wrappers[] = {
	{ "async_executor::{impl#*}::spawn::{async_block_env#0}", 1 },
	{ "async_std::task::builder::SupportTaskLocals", 0 },
	{ "core::pin::Pin", 0 },
	{ "alloc::boxed::Box", 0 },
};

/* The spawn wrapper's drop glue (the READY points above) names the
 * user's future: spawn<T, F>'s second argument. */
static const struct future_carrier async_executor_carriers[] = {
	{ "async_executor::Executor::spawn", 1 },
	{ "async_executor::LocalExecutor::spawn", 1 },
};

#define ASYNC_EXECUTOR_TABLES \
	.carriers = async_executor_carriers, \
	.n_carriers = sizeof(async_executor_carriers) / sizeof(async_executor_carriers[0]), \
	.points = async_executor_points, \
	.n_points = sizeof(async_executor_points) / sizeof(async_executor_points[0]), \
	.wrappers = async_executor_wrappers, \
	.n_wrappers = sizeof(async_executor_wrappers) / sizeof(async_executor_wrappers[0])

static const struct runtime_profile async_std_profile = {
	.name = "async-std",
	.versions = "async-std 1.12, async-global-executor 2.3, async-executor 1.5, async-task 4.3",
	.marker = "async_std::",
	.refines = "async-executor",
	ASYNC_EXECUTOR_TABLES,
};

static const struct runtime_profile smol_profile = {
	.name = "smol",
	.versions = "smol 1.3, async-executor 1.5, async-task 4.3",
	/* smol::spawn's global executor (smol's other items are re-exports of
	 * async-executor, async-io and futures-lite: a program using only those
	 * is an async-executor one). Under fat LTO only drop glue of
	 * smol::spawn::spawn::global's thread closure keeps the name. */
	.marker = "smol::spawn::",
	.refines = "async-executor",
	ASYNC_EXECUTOR_TABLES,
};

static const struct runtime_profile async_executor_profile = {
	.name = "async-executor",
	.versions = "async-executor 1.5, async-task 4.3",
	.marker = "async_executor::",
	ASYNC_EXECUTOR_TABLES,
};

const struct runtime_profile *const profiles[] = {
	&tokio_profile, &async_std_profile, &smol_profile, &async_executor_profile, NULL,
};

const struct runtime_profile *profile_find(const char *name)
{
	for (size_t i = 0; profiles[i]; i++)
		if (!strcmp(profiles[i]->name, name))
			return profiles[i];
	return NULL;
}

int profile_parse(const char *names, const struct runtime_profile **out, size_t max,
		  char *bad, size_t badlen)
{
	size_t n = 0;

	if (bad && badlen)
		snprintf(bad, badlen, "%s", names);
	while (*names) {
		const char *end = strchr(names, '+');
		size_t len = end ? (size_t)(end - names) : strlen(names);
		char name[64];
		if (!len || len >= sizeof(name) || n == max)
			return -EINVAL;
		memcpy(name, names, len);
		name[len] = '\0';
		const struct runtime_profile *p = profile_find(name);
		if (!p) {
			if (bad && badlen)
				snprintf(bad, badlen, "%s", name);
			return -EINVAL;
		}
		out[n++] = p;
		names += len + (end ? 1 : 0);
		if (end && !*names)
			return -EINVAL;
	}
	return n ? (int)n : -EINVAL;
}

const char *profile_known_names(void)
{
	return "tokio, async-std, smol, async-executor";
}


bool profile_point_matches(const struct profile_point *pt, const char *name, const char *norm)
{
	switch (pt->match) {
	case MATCH_PREFIX: return !strncmp(name, pt->pattern, strlen(pt->pattern));
	case MATCH_GLOB: return glob_match(pt->pattern, name);
	default: return !strcmp(norm, pt->pattern);
	}
}

bool task_state_wakers(const struct task_state_layout *l, uint64_t s, uint32_t *wakers)
{
	uint64_t refs = s >> l->ref_shift, base = l->base_refs + !!(s & l->handle);

	if (s & l->busy || refs < base || refs - base > UINT32_MAX)
		return false;
	*wakers = (uint32_t)(refs - base);
	return true;
}
