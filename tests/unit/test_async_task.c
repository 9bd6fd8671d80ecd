/* async-task's facts without a process (dump/async_task.h): its state word
 * said as dump says a task's state (state.rs bits, the reference count
 * above them ignored), and an executor's wrapper frames dropped from the
 * front of a chain with the runtime profiles' patterns, never the last. */
#include <stdlib.h>
#include <string.h>

#include "dump/async_task.h"
#include "harness.h"

#define REF(n) ((uint64_t)(n) * ASYNC_TASK_REFERENCE)

static void test_states(void)
{
	const char *note = "x";

	/* a task with its Task handle and one waker (TASK 16), parked */
	CHECK_STR(async_task_state_name(REF(2) | 0x10, &note), "idle");
	CHECK(note == NULL);
	CHECK_STR(async_task_state_name(REF(1) | 0x10 | ASYNC_TASK_SCHEDULED, &note), "runnable");
	CHECK(note == NULL);
	/* running wins over scheduled (woken while running) */
	CHECK_STR(async_task_state_name(REF(1) | ASYNC_TASK_RUNNING | ASYNC_TASK_SCHEDULED, &note),
		  "running");
	CHECK_STR(note, "running, not sampled");
	CHECK_STR(async_task_state_name(REF(1) | ASYNC_TASK_COMPLETED, &note), "completed");
	CHECK_STR(note, "completed, output not yet taken");
	CHECK_STR(async_task_state_name(REF(1) | ASYNC_TASK_COMPLETED | ASYNC_TASK_CLOSED, &note),
		  "completed");
	CHECK_STR(note, "completed or cancelled, future dropped");
	/* AWAITER (32), REGISTERING (64), NOTIFYING (128): no state of their own */
	CHECK_STR(async_task_state_name(REF(3) | 0x20 | 0x40 | 0x80, &note), "idle");
	CHECK(note == NULL);
}

static struct async_frame fr(const char *type, const char *future, unsigned line)
{
	return (struct async_frame){ .type = strdup(type), .future = strdup(future),
				     .state = strdup("Suspend0"), .file = strdup("src/x.rs"),
				     .line = line };
}

static const char *const pats[] = {
	"async_executor::{impl#*}::spawn::{async_block_env#0}",
	"async_std::task::builder::SupportTaskLocals",
};

static void test_drop_wrappers(void)
{
	struct async_stack s = { 0 };

	s.frames = calloc(3, sizeof(*s.frames));
	s.frames[0] = fr("async_executor::{impl#4}::spawn::{async_block_env#0}<(), app::f::{async_fn_env#0}>",
			 "async_executor::{impl#4}::spawn::{async_block#0}", 139);
	s.frames[1] = fr("app::f::{async_fn_env#0}", "app::f", 17);
	s.frames[2] = fr("app::g::{async_fn_env#0}", "app::g", 13);
	s.n = 3;
	CHECK_EQ_U64(async_task_drop_wrappers(&s, pats, 2), 1);
	CHECK_EQ_U64(s.n, 2);
	CHECK_STR(s.frames[0].future, "app::f");
	CHECK_EQ_U64(s.frames[0].line, 17);
	CHECK_STR(s.frames[1].future, "app::g");
	/* nothing more to drop: the chain starts at the task's own future */
	CHECK_EQ_U64(async_task_drop_wrappers(&s, pats, 2), 0);
	CHECK_EQ_U64(s.n, 2);
	async_stack__clear(&s);

	/* a chain of wrappers only keeps its last frame */
	s.frames = calloc(2, sizeof(*s.frames));
	s.frames[0] = fr("async_executor::{impl#2}::spawn::{async_block_env#0}<u8, X>", "w", 1);
	s.frames[1] = fr("async_executor::{impl#4}::spawn::{async_block_env#0}<u8, Y>", "w2", 2);
	s.n = 2;
	CHECK_EQ_U64(async_task_drop_wrappers(&s, pats, 2), 1);
	CHECK_EQ_U64(s.n, 1);
	CHECK_STR(s.frames[0].future, "w2");
	async_stack__clear(&s);

	/* wrappers only, around a future that is no async fn (async-std's
	 * SupportTaskLocals<async_task::Task<()>>): the chain is that future */
	s.frames = calloc(1, sizeof(*s.frames));
	s.frames[0] = fr("async_executor::{impl#4}::spawn::{async_block_env#0}<(), "
			 "async_std::task::builder::SupportTaskLocals<async_task::task::Task<()>>>",
			 "w", 139);
	s.n = 1;
	s.leaf_type = strdup("async_std::task::builder::SupportTaskLocals<async_task::task::Task<()>>");
	s.leaf = strdup("async_std::task::builder::SupportTaskLocals<async_task::task::Task<()>>");
	s.leaf_addr = 0x1000;
	CHECK_EQ_U64(async_task_drop_wrappers(&s, pats, 2), 1);
	CHECK_EQ_U64(s.n, 0);
	CHECK_STR(s.leaf_type, "async_task::task::Task<()>");
	CHECK_STR(s.leaf, "async_task::task::Task<()>");
	CHECK_EQ_U64(s.leaf_addr, 0);
	async_stack__clear(&s);
	/* the same with an await macro at the end: its frame is kept */
	s.frames = calloc(1, sizeof(*s.frames));
	s.frames[0] = fr("async_executor::{impl#4}::spawn::{async_block_env#0}<(), X>", "w", 139);
	s.n = 1;
	s.leaf = strdup("x");
	s.macro = strdup("futures::join!");
	CHECK_EQ_U64(async_task_drop_wrappers(&s, pats, 2), 0);
	CHECK_EQ_U64(s.n, 1);
	async_stack__clear(&s);

	/* no pattern, an empty stack: nothing dropped */
	CHECK_EQ_U64(async_task_drop_wrappers(&s, pats, 2), 0);
	s.frames = calloc(1, sizeof(*s.frames));
	s.frames[0] = fr("async_executor::{impl#4}::spawn::{async_block_env#0}<(), Z>", "w", 1);
	s.n = 1;
	CHECK_EQ_U64(async_task_drop_wrappers(&s, NULL, 0), 0);
	async_stack__clear(&s);
}

int main(void)
{
	RUN(test_states);
	RUN(test_drop_wrappers);
	TEST_MAIN_END();
}
