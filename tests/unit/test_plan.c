/* Probe planning on a real Tokio binary (tests/apps yields, built by
 * `make apps`) and on binaries without Tokio: no BPF, no root. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "probe/plan.h"
#include "sym/elf_image.h"

#define YIELDS "tests/apps/target/release/yields"

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
	struct probe_plan *p = probe_plan__build(img, NULL, err, sizeof(err));
	CHECK(p != NULL);
	if (!p) {
		fprintf(stderr, "plan: %s\n", err);
		elf_image__free(img);
		return;
	}
	CHECK_STR(p->profile->name, "tokio");
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
	}
	probe_plan__free(p);
	elf_image__free(img);
}

static void test_plan_not_tokio(void)
{
	char err[512] = "";
	struct elf_image *img = elf_image__open("/proc/self/exe");

	CHECK(img != NULL);
	if (!img)
		return;
	struct probe_plan *p = probe_plan__build(img, NULL, err, sizeof(err));
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
	CHECK(probe_plan__build(img, NULL, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "stripped") != NULL);
	elf_image__free(img);
}

static void test_profile_lookup(void)
{
	CHECK(profile_find("tokio") != NULL);
	CHECK(profile_find("nope") == NULL);
	CHECK_STR(probe_role_name(AS_ROLE_POLL), "poll");
	CHECK_STR(probe_role_name(999), "?");
}

int main(void)
{
	RUN(test_plan_yields);
	RUN(test_plan_not_tokio);
	RUN(test_plan_stripped);
	RUN(test_profile_lookup);
	TEST_MAIN_END();
}
