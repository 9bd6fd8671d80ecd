/* Runtime profiles as data. Facts behind each entry: ../shared/RUNTIME-NOTES.md
 * (verified on tokio 1.24.2 release builds, with and without debug info and LTO). */
#include "probe/profile.h"
#include "trace/event.h"

#include <string.h>

/* Tokio 1.x. Every per-type copy of a matched function is probed. */
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
	 * schedule_task out of line (single-stepped, once per task). The
	 * current-thread Schedule impl (emulated) serves spawns and wakes; the
	 * recorder drops a schedule nested in the wake it belongs to. rsi = task. */
	{ AS_ROLE_WAKE, 1, 0, MATCH_NORM,
	  "tokio::runtime::scheduler::multi_thread::worker::<impl tokio::runtime::scheduler::multi_thread::handle::Handle>::schedule_task" },
	{ AS_ROLE_WAKE, 1, 0, MATCH_NORM, /* v0 mangling */
	  "<tokio::runtime::scheduler::multi_thread::handle::Handle>::schedule_task" },
	{ AS_ROLE_WAKE, 1, 0, MATCH_NORM,
	  "tokio::runtime::scheduler::current_thread::<impl tokio::runtime::task::Schedule for alloc::sync::Arc>::schedule" },
	{ AS_ROLE_WAKE, 1, 0, MATCH_NORM,
	  "<alloc::sync::Arc as tokio::runtime::task::Schedule>::schedule" },
	/* spawn_blocking and the multi-thread workers themselves */
	{ AS_ROLE_WAKE, 1, 0, MATCH_NORM, "tokio::runtime::blocking::pool::Spawner::spawn_task" },
	{ AS_ROLE_WAKE, 1, 0, MATCH_NORM, "<tokio::runtime::blocking::pool::Spawner>::spawn_task" },
	/* #[track_caller] Handle::current(&'static Location) runs once per
	 * tokio::spawn, even when spawn itself is inlined (1.24). */
	{ AS_ROLE_SPAWN, 0, 0, MATCH_NORM, "tokio::runtime::handle::Handle::current" },
	{ AS_ROLE_SPAWN, 0, 0, MATCH_NORM, "<tokio::runtime::handle::Handle>::current" },
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
	/* Worker parking (entry and return). */
	{ AS_ROLE_PARK, 0, 0, MATCH_NORM, "tokio::runtime::scheduler::multi_thread::worker::Context::park_timeout" },
	{ AS_ROLE_PARK, 0, 0, MATCH_NORM, "<tokio::runtime::scheduler::multi_thread::worker::Context>::park_timeout" },
	{ AS_ROLE_PARK, 0, 0, MATCH_NORM, "tokio::runtime::scheduler::current_thread::Context::park" },
	{ AS_ROLE_PARK, 0, 0, MATCH_NORM, "<tokio::runtime::scheduler::current_thread::Context>::park" },
	/* Driver context: wakes made inside come from I/O or the timer. */
	{ AS_ROLE_IO_DRIVER, 0, 0, MATCH_NORM, "tokio::runtime::io::Driver::turn" },
	{ AS_ROLE_IO_DRIVER, 0, 0, MATCH_NORM, "<tokio::runtime::io::Driver>::turn" },
	{ AS_ROLE_IO_DRIVER, 0, 0, MATCH_NORM, "tokio::runtime::io::driver::Driver::turn" },
	{ AS_ROLE_TIMER, 0, 0, MATCH_NORM,
	  "tokio::runtime::time::<impl tokio::runtime::time::handle::Handle>::process_at_time" },
	{ AS_ROLE_TIMER, 0, 0, MATCH_NORM, "<tokio::runtime::time::handle::Handle>::process_at_time" },
};

static const struct runtime_profile tokio_profile = {
	.name = "tokio",
	.versions = "tokio 1.24",
	/* Header is repr(C): state@0, queue_next@8, vtable@0x10; the vtable's
	 * id_offset is its tenth word (1.23 and later). */
	.hdr_vtable_off = 0x10,
	.vtable_id_off_slot = 0x48,
	.points = tokio_points,
	.n_points = sizeof(tokio_points) / sizeof(tokio_points[0]),
};

const struct runtime_profile *const profiles[] = { &tokio_profile, NULL };

const struct runtime_profile *profile_find(const char *name)
{
	for (size_t i = 0; profiles[i]; i++)
		if (!strcmp(profiles[i]->name, name))
			return profiles[i];
	return NULL;
}
