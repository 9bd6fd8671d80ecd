/* Probe planning on real binaries of tests/apps (built by `make apps`):
 * Tokio (yields), async-std and smol (async-task based), both runtimes in
 * one binary (mixed), and binaries without any runtime: no BPF, no root. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "probe/futures_plan.h"
#include "probe/plan.h"
#include "sym/elf_image.h"

#define APPS "tests/apps/target/release/"
#define YIELDS APPS "yields"

static size_t count_future(const struct probe_plan *p, const char *future)
{
	size_t n = 0;
	for (size_t i = 0; i < p->n; i++)
		if (p->probes[i].role == AS_ROLE_POLL && p->probes[i].future &&
		    !strcmp(p->probes[i].future, future))
			n++;
	return n;
}

static void test_plan_yields(void)
{
	char err[512] = "";
	struct elf_image *img = elf_image__open(YIELDS);

	CHECK(img != NULL);
	if (!img) {
		fprintf(stderr, "%s missing: run `make apps` first\n", YIELDS);
		return;
	}
	struct probe_plan *p = probe_plan__build(img, NULL, 0, err, sizeof(err));
	CHECK(p != NULL);
	if (!p) {
		fprintf(stderr, "plan: %s\n", err);
		elf_image__free(img);
		return;
	}
	CHECK_STR(p->runtime, "tokio");
	CHECK_EQ_U64(p->n_profiles, 1);
	CHECK(p->id_profile == p->profiles[0]);
	/* one raw::poll copy per (future, scheduler): the spawned block on the
	 * two schedulers, and the multi-thread worker's blocking task */
	CHECK_EQ_U64(p->per_role[AS_ROLE_POLL], 3);
	CHECK_EQ_U64(count_future(p, "yields::main::{async_block#3}::{async_block#0}"), 2);
	CHECK_EQ_U64(count_future(p, "tokio::runtime::blocking::task::BlockingTask<"
			 "tokio::runtime::scheduler::multi_thread::worker::{impl#0}::launch::{closure#0}>"), 1);
	CHECK_EQ_U64(p->per_role[AS_ROLE_READY], 3);
	CHECK_EQ_U64(p->per_role[AS_ROLE_SPAWN], 1);
	CHECK_EQ_U64(p->per_role[AS_ROLE_PARK], 2);
	CHECK_EQ_U64(p->per_role[AS_ROLE_TIMER], 1);
	/* boxed cells only: the unboxed variant is a fallback */
	CHECK_EQ_U64(p->per_role[AS_ROLE_FREE], 2);
	CHECK(p->per_role[AS_ROLE_WAKE] >= 4);
	for (size_t i = 0; i < p->n; i++) {
		const struct as_probe *q = &p->probes[i];
		CHECK(q->addr != 0 && q->symbol && *q->symbol);
		/* raw::poll is a jmp, wake_by_val a push: both emulated */
		if (q->role == AS_ROLE_POLL || !strcmp(q->symbol, "tokio::runtime::task::waker::wake_by_val"))
			CHECK(q->emulated);
		if (q->role == AS_ROLE_FREE)
			CHECK(strstr(q->symbol, "Box<tokio::runtime::task::core::Cell<") != NULL);
		/* Tokio's poll probes read the task id, nothing else does; the
		 * schedulers' functions that wakers reach are marked nested */
		CHECK_EQ_U64(p->flags[i] & ~(PLAN_F_NESTED | PLAN_F_NO_RETURN),
			     q->role == AS_ROLE_POLL ? PLAN_F_TASK_ID : 0);
		/* the workers' loops (worker::launch's task) get no return probe */
		CHECK_EQ_U64(!!(p->flags[i] & PLAN_F_NO_RETURN),
			     q->role == AS_ROLE_POLL && q->future && strstr(q->future, "::launch::"));
		CHECK_EQ_U64(!!(p->flags[i] & PLAN_F_NESTED),
			     q->role == AS_ROLE_WAKE && strstr(q->symbol, "::schedule"));
	}
	probe_plan__free(p);
	elf_image__free(img);
}

static struct probe_plan *plan_of(const char *path, struct elf_image **img)
{
	char err[512] = "";

	*img = elf_image__open(path);
	if (!*img) {
		fprintf(stderr, "%s missing: run `make apps` first\n", path);
		return NULL;
	}
	struct probe_plan *p = probe_plan__build(*img, NULL, 0, err, sizeof(err));
	if (!p)
		fprintf(stderr, "plan of %s: %s\n", path, err);
	return p;
}

static size_t count_role_owner(const struct probe_plan *p, unsigned role, const char *runtime)
{
	size_t n = 0;
	for (size_t i = 0; i < p->n; i++)
		if (p->probes[i].role == role && !strcmp(p->profiles[p->owner[i]]->name, runtime))
			n++;
	return n;
}

/* The async-task points every async-executor based binary must offer:
 * poll is run (push first), ready the spawn wrapper's drop glue (inside
 * the task), wake/free the vtable functions; no task id, no spawn site. */
static void check_async_task_probes(const struct probe_plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct as_probe *q = &p->probes[i];
		CHECK(q->addr != 0 && q->symbol && *q->symbol);
		CHECK(!(p->flags[i] & PLAN_F_TASK_ID));
		switch (q->role) {
		case AS_ROLE_POLL:
			CHECK_STR(q->symbol, "async_task::raw::RawTask<F,T,S>::run");
			CHECK(q->emulated);
			break;
		case AS_ROLE_READY:
			CHECK(strstr(q->symbol, "core::ptr::drop_in_place<async_executor::") == q->symbol);
			CHECK(p->flags[i] == PLAN_F_INSIDE);
			CHECK(q->emulated);
			break;
		case AS_ROLE_WAKE:
			CHECK(strstr(q->symbol, "async_task::raw::RawTask<F,T,S>::") == q->symbol);
			break;
		case AS_ROLE_FREE:
			CHECK_STR(q->symbol, "async_task::raw::RawTask<F,T,S>::destroy");
			CHECK(q->emulated);
			break;
		case AS_ROLE_PARK:
			CHECK(!strcmp(q->symbol, "parking::Inner::park") ||
			      !strcmp(q->symbol, "polling::epoll::Poller::wait"));
			CHECK(q->emulated);
			break;
		default:
			CHECK(!"unexpected role");
		}
	}
	CHECK_EQ_U64(p->per_role[AS_ROLE_SPAWN], 0);
	CHECK(p->id_profile == NULL);
}

static void test_plan_async_std(void)
{
	struct elf_image *img = NULL;
	struct probe_plan *p = plan_of(APPS "asyncstd_yields", &img);

	CHECK(p != NULL);
	if (p) {
		/* async-std refines async-executor: one runtime */
		CHECK_STR(p->runtime, "async-std");
		CHECK_EQ_U64(p->n_profiles, 1);
		/* one RawTask::run copy: every task is Executor::spawn's wrapper
		 * around SupportTaskLocals around the spawned block */
		CHECK_EQ_U64(p->per_role[AS_ROLE_POLL], 1);
		CHECK_EQ_U64(count_future(p, "asyncstd_yields::main::{async_block#1}::{async_block#0}"), 1);
		/* the wrapper's drop glue, emitted in two codegen units */
		CHECK_EQ_U64(p->per_role[AS_ROLE_READY], 2);
		CHECK_EQ_U64(p->per_role[AS_ROLE_WAKE], 3);
		CHECK_EQ_U64(p->per_role[AS_ROLE_FREE], 1);
		CHECK_EQ_U64(p->per_role[AS_ROLE_PARK], 2);
		CHECK_EQ_U64(p->n, 9);
		check_async_task_probes(p);
	}
	probe_plan__free(p);
	elf_image__free(img);
}

static void test_plan_smol(void)
{
	struct elf_image *img = NULL;
	struct probe_plan *p = plan_of(APPS "smol_yields", &img);

	CHECK(p != NULL);
	if (p) {
		CHECK_STR(p->runtime, "smol");
		/* two RawTask::run copies: Executor::spawn (smol::spawn and the
		 * executor used directly share it) and LocalExecutor::spawn */
		CHECK_EQ_U64(p->per_role[AS_ROLE_POLL], 2);
		CHECK_EQ_U64(count_future(p, "smol_yields::yielder"), 2);
		CHECK_EQ_U64(p->per_role[AS_ROLE_READY], 4);
		CHECK_EQ_U64(p->per_role[AS_ROLE_WAKE], 6);
		CHECK_EQ_U64(p->per_role[AS_ROLE_FREE], 1);
		CHECK_EQ_U64(p->per_role[AS_ROLE_PARK], 2);
		check_async_task_probes(p);
	}
	probe_plan__free(p);
	elf_image__free(img);
}

static void test_plan_mixed(void)
{
	struct elf_image *img = NULL;
	struct probe_plan *p = plan_of(APPS "mixed", &img);

	CHECK(p != NULL);
	if (!p) {
		elf_image__free(img);
		return;
	}
	CHECK_STR(p->runtime, "tokio+smol");
	CHECK_EQ_U64(p->n_profiles, 2);
	CHECK_STR(p->profiles[0]->name, "tokio");
	CHECK_STR(p->profiles[1]->name, "smol");
	CHECK(p->id_profile == p->profiles[0]);
	/* Tokio: the spawned fn on two schedulers and the worker's blocking task */
	CHECK_EQ_U64(count_role_owner(p, AS_ROLE_POLL, "tokio"), 3);
	CHECK_EQ_U64(count_future(p, "mixed::tokio_yielder"), 2);
	CHECK_EQ_U64(count_role_owner(p, AS_ROLE_POLL, "smol"), 1);
	CHECK_EQ_U64(count_future(p, "mixed::smol_yielder"), 1);
	CHECK_EQ_U64(count_role_owner(p, AS_ROLE_SPAWN, "tokio"), 1);
	CHECK_EQ_U64(count_role_owner(p, AS_ROLE_SPAWN, "smol"), 0);
	CHECK_EQ_U64(count_role_owner(p, AS_ROLE_READY, "smol"), 2);
	CHECK_EQ_U64(count_role_owner(p, AS_ROLE_FREE, "smol"), 1);
	for (size_t i = 0; i < p->n; i++) {
		bool tokio = p->owner[i] == 0;
		const struct as_probe *q = &p->probes[i];
		CHECK(tokio == (strncmp(q->symbol, "tokio::", 7) == 0 ||
				strstr(q->symbol, "<tokio::") != NULL));
		if (q->role == AS_ROLE_POLL)
			CHECK_EQ_U64(p->flags[i] & ~PLAN_F_NO_RETURN, tokio ? PLAN_F_TASK_ID : 0);
	}
	probe_plan__free(p);

	/* --runtime smol: only smol's points */
	const struct runtime_profile *only[] = { profile_find("smol") };
	char err[512] = "";
	p = probe_plan__build(img, only, 1, err, sizeof(err));
	CHECK(p != NULL);
	if (p) {
		CHECK_STR(p->runtime, "smol");
		CHECK_EQ_U64(p->per_role[AS_ROLE_POLL], 1);
		CHECK(p->id_profile == NULL);
	}
	probe_plan__free(p);
	elf_image__free(img);
}

static void test_plan_runtime_absent(void)
{
	char err[512] = "";
	struct elf_image *img = elf_image__open(YIELDS);
	const struct runtime_profile *only[] = { profile_find("smol") };

	CHECK(img != NULL);
	if (!img)
		return;
	CHECK(probe_plan__build(img, only, 1, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "no smol runtime functions found") != NULL);
	CHECK(strstr(err, "async_task::raw::RawTask::run") != NULL);
	elf_image__free(img);
}

static void test_future_names(void)
{
	const struct runtime_profile *ae = profile_find("async-executor");
	char *s;

	s = plan_future_name(ae, "async_executor::{impl#4}::spawn::{async_block_env#0}<usize, "
			     "async_std::task::builder::SupportTaskLocals<app::main::{async_block#1}::"
			     "{async_block_env#0}>>");
	CHECK_STR(s, "app::main::{async_block#1}::{async_block#0}");
	free(s);
	s = plan_future_name(ae, "async_executor::{impl#9}::spawn::{async_block_env#0}<(), "
			     "core::pin::Pin<alloc::boxed::Box<app::big::{async_fn_env#0}, alloc::alloc::Global>>>");
	CHECK_STR(s, "app::big");
	free(s);
	/* not a wrapper: kept whole */
	s = plan_future_name(ae, "app::Wrapper<app::inner::{async_fn_env#0}>");
	CHECK_STR(s, "app::Wrapper<app::inner>");
	free(s);
	/* Tokio has no wrappers */
	s = plan_future_name(profile_find("tokio"), "core::pin::Pin<alloc::boxed::Box<app::f::{async_fn_env#0}, alloc::alloc::Global>>");
	CHECK_STR(s, "core::pin::Pin<alloc::boxed::Box<app::f>>");
	free(s);
}

static void test_plan_not_tokio(void)
{
	char err[512] = "";
	struct elf_image *img = elf_image__open("/proc/self/exe");

	CHECK(img != NULL);
	if (!img)
		return;
	struct probe_plan *p = probe_plan__build(img, NULL, 0, err, sizeof(err));
	CHECK(p == NULL);
	CHECK(strstr(err, "no Tokio runtime functions found") != NULL);
	CHECK(strstr(err, "tokio::runtime::task::raw::poll") != NULL);
	probe_plan__free(p);
	elf_image__free(img);
}

static void test_plan_stripped(void)
{
	char err[512] = "";
	struct elf_image *img = elf_image__open("/bin/true");   /* Debian strips it */

	CHECK(img != NULL);
	if (!img)
		return;
	CHECK(!img->has_symtab);
	CHECK(probe_plan__build(img, NULL, 0, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "stripped") != NULL);
	elf_image__free(img);
}

static void test_profile_lookup(void)
{
	const struct runtime_profile *out[PLAN_MAX_PROFILES];
	char bad[64];

	CHECK(profile_find("tokio") != NULL);
	CHECK(profile_find("nope") == NULL);
	for (size_t i = 0; profiles[i]; i++) {
		CHECK(profile_find(profiles[i]->name) == profiles[i]);
		CHECK(strstr(profile_known_names(), profiles[i]->name) != NULL);
	}
	CHECK_EQ_U64(profile_parse("tokio+smol", out, PLAN_MAX_PROFILES, bad, sizeof(bad)), 2);
	CHECK_STR(out[1]->name, "smol");
	CHECK(profile_parse("tokio+nope", out, PLAN_MAX_PROFILES, bad, sizeof(bad)) == -EINVAL);
	CHECK_STR(bad, "nope");
	CHECK(profile_parse("tokio+", out, PLAN_MAX_PROFILES, bad, sizeof(bad)) == -EINVAL);
	CHECK(profile_parse("", out, PLAN_MAX_PROFILES, bad, sizeof(bad)) == -EINVAL);
	CHECK_STR(probe_role_name(AS_ROLE_POLL), "poll");
	CHECK_STR(probe_role_name(999), "?");
}

/* Readable names and crates of future poll functions (record --futures). */
static void test_future_fn_names(void)
{
	static const struct { const char *sym, *die, *want; } cases[] = {
		{ "app::handler::{{closure}}", "{async_fn#0}", "app::handler" },
		{ "app::handler::{closure#0}", "{async_fn#0}", "app::handler" },
		{ "app::f::{{closure}}::{{closure}}", "{async_block#1}", "app::f::{{closure}}::{async_block#1}" },
		{ "<app::Tick as core::future::future::Future>::poll", "poll", "<app::Tick as Future>::poll" },
		{ "app::plain::{{closure}}", "{closure#0}", "app::plain::{{closure}}" },
		{ "app::g::{{closure}}", NULL, "app::g::{{closure}}" },
		{ "app::work", NULL, "app::work" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *n = futures_readable_name(cases[i].sym, cases[i].die);
		CHECK(n != NULL);
		if (n)
			CHECK_STR(n, cases[i].want);
		free(n);
	}
	char c[64];
	CHECK_STR(futures_crate_of("app::handler::{{closure}}", c, sizeof(c)), "app");
	CHECK_STR(futures_crate_of("<my_app::Tick as core::future::future::Future>::poll", c, sizeof(c)),
		  "my_app");
	CHECK_STR(futures_crate_of("<&mut x::Y as core::future::future::Future>::poll", c, sizeof(c)), "x");
	CHECK_STR(futures_crate_of("main", c, sizeof(c)), "main");
}

int main(void)
{
	RUN(test_plan_yields);
	RUN(test_plan_async_std);
	RUN(test_plan_smol);
	RUN(test_plan_mixed);
	RUN(test_plan_runtime_absent);
	RUN(test_future_names);
	RUN(test_future_fn_names);
	RUN(test_plan_not_tokio);
	RUN(test_plan_stripped);
	RUN(test_profile_lookup);
	TEST_MAIN_END();
}
