/* CAT's rules: call stacks to events, and the roles of a foreign file's
 * functions by name (see cat/rules.h). The runtime names below are the
 * poll, completion and park functions of probe/profile.c's profiles (Tokio
 * 1.24; async-task 4.3 for async-std, smol and async-executor), as CAT's
 * own data: tests/unit/test_cat.c checks that every such profile point is
 * named here with the same role. Pure C; no probe/. */
#include "cat/rules.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sym/demangle.h"
#include "util/glob.h"

/* ---- Per-thread call stacks ---- */

static uint64_t innermost(const struct cat_state *st, uint16_t role)
{
	for (uint32_t i = st->n; i-- > 0;)
		if (st->frames[i].role == role)
			return st->frames[i].addr;
	return 0;
}

static bool inside(const struct cat_state *st, uint16_t role)
{
	for (uint32_t i = 0; i < st->n; i++)
		if (st->frames[i].role == role)
			return true;
	return false;
}

int cat_state__apply(struct cat_state *st, bool exit, uint16_t role, uint32_t probe,
		     uint64_t addr, struct as_event *ev)
{
	int has = 0;

	ev->type = 0;
	ev->flags = 0;
	ev->probe = (uint16_t)probe;
	ev->task = 0;
	ev->other = 0;
	if (!exit) {
		has = 1;
		switch (role) {
		case AS_ROLE_POLL:
			ev->type = AS_EV_POLL_BEGIN;
			ev->task = addr;
			st->ready = false;
			break;
		case AS_ROLE_READY:
			st->ready = true;
			has = 0;
			break;
		case AS_ROLE_WAKE:
			ev->type = AS_EV_WAKE;
			ev->task = addr;
			ev->other = innermost(st, AS_ROLE_POLL);
			ev->flags = inside(st, AS_ROLE_IO_DRIVER) ? AS_WAKE_IO
				    : inside(st, AS_ROLE_TIMER) ? AS_WAKE_TIMER : 0;
			break;
		case AS_ROLE_SPAWN:
			ev->type = AS_EV_SPAWN;
			ev->other = addr;
			break;
		case AS_ROLE_FREE:
			ev->type = AS_EV_FREE;
			ev->task = addr;
			break;
		case AS_ROLE_PARK:
			ev->type = AS_EV_PARK;
			break;
		case AS_ROLE_USDT:
			ev->type = AS_EV_USDT;
			ev->other = addr;
			ev->task = innermost(st, AS_ROLE_POLL);
			break;
		case AS_ROLE_FUTURE:
			ev->type = AS_EV_FUTURE_ENTER;
			ev->other = st->futures;
			ev->task = innermost(st, AS_ROLE_POLL);
			break;
		default:
			has = 0;
			break;
		}
		if (st->n >= CAT_DEPTH_MAX)
			return -E2BIG;
		if (st->n == st->cap) {
			uint32_t cap = st->cap ? st->cap * 2 : 16;
			struct cat_frame *f = realloc(st->frames, cap * sizeof(*f));
			if (!f)
				return -ENOMEM;
			st->frames = f;
			st->cap = cap;
		}
		st->frames[st->n++] = (struct cat_frame){ .probe = probe, .role = role, .addr = addr };
		if (role == AS_ROLE_FUTURE)
			st->futures++;
		return has;
	}
	for (uint32_t i = st->n; i-- > 0;) {
		if (st->frames[i].probe != probe || st->frames[i].addr != addr)
			continue;
		role = st->frames[i].role;   /* the call ends as it began */
		while (st->n > i)
			if (st->frames[--st->n].role == AS_ROLE_FUTURE)
				st->futures--;
		break;
	}
	switch (role) {
	case AS_ROLE_POLL:
		ev->type = AS_EV_POLL_END;
		ev->task = addr;
		ev->flags = st->ready ? AS_POLL_READY : 0;
		st->ready = false;
		return 1;
	case AS_ROLE_PARK:
		ev->type = AS_EV_UNPARK;
		return 1;
	case AS_ROLE_FUTURE:
		ev->type = AS_EV_FUTURE_EXIT;
		ev->other = st->futures;
		ev->task = innermost(st, AS_ROLE_POLL);
		return 1;
	default:
		return 0;
	}
}

void cat_state__clear(struct cat_state *st)
{
	free(st->frames);
	memset(st, 0, sizeof(*st));
}

/* ---- Functions of a file without asyncscope's header ---- */

/* In matching order: the inner polls first, then by role (poll, ready,
 * park), each role Tokio's then async-task's. The async-task functions are
 * named "async-std" (the runtime CAT traced; smol and async-executor share
 * them). */
static const struct cat_runtime_fn runtime_fns[] = {
	/* Poll functions a uftrace log shows inside the task polls: Tokio's
	 * Harness::poll (entered by raw::poll through a jump) and async-std's
	 * SupportTaskLocals poll closure, which CAT's logs start from (inside
	 * async_task's RawTask::run). */
	{ AS_ROLE_POLL, false, true, "tokio", "tokio::runtime::task::harness::Harness::poll" },
	{ AS_ROLE_POLL, false, true, "tokio", "<tokio::runtime::task::harness::Harness>::poll" },
	{ AS_ROLE_POLL, false, true, "async-std",
	  "<async_std::task::builder::SupportTaskLocals as core::future::future::Future>::poll::{{closure}}" },
	/* task polls */
	{ AS_ROLE_POLL, false, false, "tokio", "tokio::runtime::task::raw::poll" },
	{ AS_ROLE_POLL, false, false, "async-std", "async_task::raw::RawTask::run" },
	{ AS_ROLE_POLL, false, false, "async-std", "<async_task::raw::RawTask>::run" },
	/* entered when the polled task completes (Ready polls) */
	{ AS_ROLE_READY, false, false, "tokio", "tokio::runtime::task::harness::Harness::complete" },
	{ AS_ROLE_READY, true, false, "async-std",
	  "core::ptr::drop_in_place<async_executor::Executor::spawn<*>::{{closure}}>" },
	{ AS_ROLE_READY, true, false, "async-std",
	  "core::ptr::drop_in_place<async_executor::LocalExecutor::spawn<*>::{{closure}}>" },
	{ AS_ROLE_READY, true, false, "async-std",
	  "core::ptr::drop_in_place<core::pin::Pin<alloc::boxed::Box<async_executor::Executor::spawn<*>::{{closure}}>>>" },
	{ AS_ROLE_READY, true, false, "async-std",
	  "core::ptr::drop_in_place<core::pin::Pin<alloc::boxed::Box<async_executor::LocalExecutor::spawn<*>::{{closure}}>>>" },
	/* worker parks */
	{ AS_ROLE_PARK, false, false, "tokio",
	  "tokio::runtime::scheduler::multi_thread::worker::Context::park_timeout" },
	{ AS_ROLE_PARK, false, false, "tokio",
	  "<tokio::runtime::scheduler::multi_thread::worker::Context>::park_timeout" },
	/* tokio 1.53's name of the same (probe/profile.c says why) */
	{ AS_ROLE_PARK, false, false, "tokio",
	  "tokio::runtime::scheduler::multi_thread::worker::Context::park_internal" },
	{ AS_ROLE_PARK, false, false, "tokio",
	  "<tokio::runtime::scheduler::multi_thread::worker::Context>::park_internal" },
	{ AS_ROLE_PARK, false, false, "tokio", "tokio::runtime::scheduler::current_thread::Context::park" },
	{ AS_ROLE_PARK, false, false, "tokio", "<tokio::runtime::scheduler::current_thread::Context>::park" },
	{ AS_ROLE_PARK, false, false, "async-std", "parking::Inner::park" },
	{ AS_ROLE_PARK, false, false, "async-std", "<parking::Inner>::park" },
	{ AS_ROLE_PARK, false, false, "async-std", "polling::epoll::Poller::wait" },
	{ AS_ROLE_PARK, false, false, "async-std", "<polling::epoll::Poller>::wait" },
};

const struct cat_runtime_fn *cat_rules_runtime_fns(size_t *n)
{
	*n = sizeof(runtime_fns) / sizeof(runtime_fns[0]);
	return runtime_fns;
}

int cat_rules_classify(const char *rust, const char *spelled, struct cat_role *out)
{
	char *norm = sym_strip_generics(rust);

	*out = (struct cat_role){ 0 };
	if (!norm)
		return -ENOMEM;
	for (size_t i = 0; i < sizeof(runtime_fns) / sizeof(runtime_fns[0]); i++) {
		const struct cat_runtime_fn *fn = &runtime_fns[i];

		if (fn->glob ? glob_match(fn->name, rust) : !strcmp(norm, fn->name)) {
			out->role = fn->role;
			out->inner_poll = fn->inner;
			out->runtime = fn->runtime;
			break;
		}
	}
	free(norm);
	if (!out->role && (strstr(spelled, "::_{{closure}}") ||
			   strstr(spelled, "as core..future..future..Future>::poll")))
		out->role = AS_ROLE_FUTURE;
	return 0;
}

int cat_rules_future_name(const char *rust, char **out)
{
	size_t n = strlen(rust);
	const char *tail = "::{{closure}}";
	size_t tl = strlen(tail), k = n;

	while (k > tl && !memcmp(rust + k - tl, tail, tl))
		k -= tl;
	*out = NULL;
	if (k < n && !(*out = strndup(rust, k)))
		return -ENOMEM;
	return 0;
}
