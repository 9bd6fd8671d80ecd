/* record/idle_refs.c on this process's own memory: the idle tasks followed
 * through events (a Pending poll end makes one idle; a poll, a wake, a
 * free or a Ready end does not), their state words read in one batch
 * past an address that cannot be read (counted, the rest still read), the
 * wakers held as the tokio profile's layout says, and a note only for a
 * task still idle as it was read. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "probe/plan.h"
#include "probe/profile.h"
#include "record/idle_refs.h"

/* Tokio's state word: REF_ONE 64, JOIN_INTEREST 8, NOTIFIED 4 */
#define REF 64ull

static struct rec_idle x;
static struct as_event got[16];
static size_t n_got;

static void take(void *ctx, const struct as_event *ev)
{
	(void)ctx;
	if (n_got < 16)
		got[n_got++] = *ev;
}

static int note(uint8_t type, uint8_t flags, uint64_t task)
{
	struct as_event ev = { .type = type, .flags = flags, .task = task, .tid = 7, .probe = 0 };

	return rec_idle__note(&x, &ev);
}

static void test_read_and_emit(void)
{
	static uint64_t hdr[5];
	uint8_t owner[1] = { 0 };
	struct probe_plan plan = { .n_profiles = 1, .n = 1, .owner = owner };
	struct idle_emitted ie;

	plan.profiles[0] = profile_find("tokio");
	CHECK(plan.profiles[0] && plan.profiles[0]->task_state);
	hdr[0] = 2 * REF | 8;          /* list + JoinHandle: no waker */
	hdr[1] = 3 * REF | 8;          /* one waker */
	hdr[2] = 2 * REF;              /* detached, one waker */
	hdr[3] = 3 * REF | 8 | 4;      /* notified by now: not idle */
	hdr[4] = 2 * REF | 8;          /* idle, then polled again after the read */
	for (int i = 0; i < 5; i++)
		CHECK_EQ_U64(note(AS_EV_POLL_END, 0, (uint64_t)(uintptr_t)&hdr[i]), 0);
	/* a task whose memory is gone, read among them */
	CHECK_EQ_U64(note(AS_EV_POLL_END, 0, 0x10), 0);
	/* not idle: Ready, freed, woken */
	CHECK_EQ_U64(note(AS_EV_POLL_END, AS_POLL_READY, 0x20), 0);
	CHECK_EQ_U64(note(AS_EV_POLL_END, 0, 0x30), 0);
	CHECK_EQ_U64(note(AS_EV_FREE, 0, 0x30), 0);
	CHECK_EQ_U64(note(AS_EV_POLL_END, 0, 0x40), 0);
	CHECK_EQ_U64(note(AS_EV_WAKE, 0, 0x40), 0);
	CHECK_EQ_U64(x.idle.len, 6);
	CHECK_EQ_U64(rec_idle__read(&x, getpid(), &plan), 0);
	CHECK_EQ_U64(x.unread, 1);
	CHECK_EQ_U64(x.n_reads, 4);   /* hdr[3] notified */
	/* polled again since the read: idle anew, its read is of before */
	CHECK_EQ_U64(note(AS_EV_POLL_BEGIN, 0, (uint64_t)(uintptr_t)&hdr[4]), 0);
	CHECK_EQ_U64(note(AS_EV_POLL_END, 0, (uint64_t)(uintptr_t)&hdr[4]), 0);
	rec_idle__emit(&x, 99, 7, take, NULL, &ie);
	CHECK_EQ_U64(ie.notes, 3);
	CHECK_EQ_U64(ie.no_waker, 1);
	CHECK_EQ_U64(ie.before_idle + ie.before_queued, 0);
	uint64_t want[3][2] = { { (uintptr_t)&hdr[0], 0 }, { (uintptr_t)&hdr[1], 1 },
				{ (uintptr_t)&hdr[2], 1 } };
	for (int w = 0; w < 3; w++) {
		bool seen = false;

		for (size_t i = 0; i < n_got; i++)
			if (got[i].task == want[w][0]) {
				seen = true;
				CHECK_EQ_U64(got[i].other, want[w][1]);
				CHECK_EQ_U64(got[i].type, AS_EV_SPAWN);
				CHECK_EQ_U64(got[i].flags, AS_SPAWN_WAKERS);
				CHECK_EQ_U64(got[i].ts, 99);
			}
		CHECK(seen);
	}
	rec_idle__free(&x);
}

/* A runtime whose profile has no layout (async-task's): nothing read. */
static void test_no_layout(void)
{
	static uint64_t hdr = 2 * REF | 8;
	uint8_t owner[1] = { 0 };
	struct probe_plan plan = { .n_profiles = 1, .n = 1, .owner = owner };
	struct idle_emitted ie = { .no_waker = 7 };

	n_got = 0;
	plan.profiles[0] = profile_find("smol");
	CHECK(plan.profiles[0] && !plan.profiles[0]->task_state);
	CHECK_EQ_U64(note(AS_EV_POLL_END, 0, (uint64_t)(uintptr_t)&hdr), 0);
	CHECK_EQ_U64(rec_idle__read(&x, getpid(), &plan), 0);
	CHECK_EQ_U64(x.n_reads, 0);
	CHECK_EQ_U64(x.unread, 0);
	rec_idle__emit(&x, 1, 7, take, NULL, &ie);
	CHECK_EQ_U64(ie.notes, 0);
	CHECK_EQ_U64(ie.no_waker, 0);
	rec_idle__free(&x);
}

/* Tasks found in memory at the end (rec_idle__before()): one followed
 * through its events or found twice is not taken again; one of which an
 * event comes after the walk is dropped; the others get their note, in
 * the order found, an idle one with its wakers note after it when known,
 * after the notes of the tasks followed. */
static void test_before(void)
{
	static uint64_t hdr = 3 * REF | 8;
	uint8_t owner[1] = { 0 };
	struct probe_plan plan = { .n_profiles = 1, .n = 1, .owner = owner };
	struct idle_emitted ie;
	char name[] = "app::stuck";

	n_got = 0;
	plan.profiles[0] = profile_find("tokio");
	CHECK_EQ_U64(note(AS_EV_POLL_END, 0, (uint64_t)(uintptr_t)&hdr), 0);   /* followed */
	CHECK_EQ_U64(rec_idle__read(&x, getpid(), &plan), 0);
	CHECK_EQ_U64(rec_idle__before(&x, &(struct idle_before){ .header = (uintptr_t)&hdr,
				.id = 9, .wakers_known = true, .wakers = 0 }), 0);
	CHECK_EQ_U64(rec_idle__before(&x, &(struct idle_before){ .header = 0x100, .id = 3,
				.name = name, .wakers_known = true, .wakers = 0 }), 0);
	name[0] = 'X';   /* copied */
	CHECK_EQ_U64(rec_idle__before(&x, &(struct idle_before){ .header = 0x100, .id = 3 }), 0);
	CHECK_EQ_U64(rec_idle__before(&x, &(struct idle_before){ .header = 0x200, .id = 4,
				.wakers_known = true, .wakers = 2 }), 0);
	CHECK_EQ_U64(rec_idle__before(&x, &(struct idle_before){ .header = 0x300, .id = 5,
				.queued = true }), 0);
	CHECK_EQ_U64(rec_idle__before(&x, &(struct idle_before){ .header = 0x400, .id = 6 }), 0);
	CHECK_EQ_U64(rec_idle__before(&x, &(struct idle_before){ .header = 0x500, .id = 7 }), 0);
	CHECK_EQ_U64(x.n_before, 5);
	/* events after the walk: 0x400 polled (its events were on their way),
	 * 0x500 sampled inside a poll; a spawn note of none drops nothing */
	CHECK_EQ_U64(note(AS_EV_POLL_BEGIN, 0, 0x400), 0);
	CHECK_EQ_U64(note(AS_EV_SAMPLE, 0, 0x500), 0);
	CHECK_EQ_U64(note(AS_EV_SPAWN, AS_SPAWN_WAKERS, 0x200), 0);
	rec_idle__emit(&x, 5, 7, take, NULL, &ie);
	CHECK_EQ_U64(ie.notes, 1);
	CHECK_EQ_U64(ie.before_idle, 2);
	CHECK_EQ_U64(ie.before_queued, 1);
	CHECK_EQ_U64(ie.before_no_waker, 1);
	CHECK_EQ_U64(n_got, 6);
	CHECK_EQ_U64(got[0].task, (uintptr_t)&hdr);
	CHECK_EQ_U64(got[0].flags, AS_SPAWN_WAKERS);
	CHECK_EQ_U64(got[0].other, 1);
	CHECK_EQ_U64(got[1].task, 0x100);
	CHECK_EQ_U64(got[1].flags, AS_SPAWN_BEFORE);
	CHECK_EQ_U64(got[1].other, 3);
	CHECK(got[1].str && !strcmp(got[1].str, "app::stuck"));
	CHECK_EQ_U64(got[2].task, 0x100);
	CHECK_EQ_U64(got[2].flags, AS_SPAWN_WAKERS);
	CHECK_EQ_U64(got[2].other, 0);
	CHECK_EQ_U64(got[3].task, 0x200);
	CHECK_EQ_U64(got[3].flags, AS_SPAWN_BEFORE);
	CHECK(!got[3].str);
	CHECK_EQ_U64(got[4].task, 0x200);
	CHECK_EQ_U64(got[4].other, 2);
	CHECK_EQ_U64(got[5].task, 0x300);
	CHECK_EQ_U64(got[5].flags, AS_SPAWN_BEFORE | AS_SPAWN_QUEUED);
	CHECK_EQ_U64(got[5].ts, 5);
	rec_idle__free(&x);
}

int main(void)
{
	RUN(test_read_and_emit);
	RUN(test_no_layout);
	RUN(test_before);
	TEST_MAIN_END();
}
