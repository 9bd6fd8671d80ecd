/* Analysis of the recorded real traces in tests/data/ (tests/apps programs
 * whose truth is known): wake edges, long polls, stalls, idle times, polls
 * per task, and the timeline. Run from the repository root. */
#include <errno.h>
#include <stdlib.h>

#include "analysis/tasks.h"
#include "analysis/timeline.h"
#include "harness.h"
#include "trace/reader.h"

#define MS 1000000ULL

struct fixture {
	struct trace_reader *r;
	struct analysis *a;
};

/* Reads path through a fresh analysis (opts may be NULL). */
static bool load(struct fixture *f, const char *path, const struct analysis_opts *opts)
{
	char err[512] = "";
	struct as_event ev;
	int n;

	memset(f, 0, sizeof(*f));
	f->r = trace_reader__open(path, err, sizeof(err));
	if (!f->r) {
		fprintf(stderr, "%s (run from the repository root)\n", err);
		th_failed_checks++;
		return false;
	}
	f->a = analysis__new_opts(trace_reader__meta(f->r), opts);
	CHECK(f->a != NULL);
	while ((n = trace_reader__next(f->r, &ev)) == 1)
		CHECK_EQ_U64(analysis__add(f->a, &ev), 0);
	CHECK_EQ_U64(n, 0);
	CHECK_EQ_U64(analysis__finish(f->a, trace_reader__end(f->r)), 0);
	return true;
}

static void unload(struct fixture *f)
{
	analysis__free(f->a);
	trace_reader__free(f->r);
}

static const struct task_stats *by_name(struct fixture *f, const char *name)
{
	size_t n;
	const struct task_stats *t = analysis__tasks(f->a, &n);

	for (size_t i = 0; i < n; i++)
		if (t[i].name && !strcmp(t[i].name, name))
			return &t[i];
	fprintf(stderr, "no task named %s\n", name);
	th_failed_checks++;
	return NULL;
}

/* Wakes of to by from (a task name, or NULL for the source kind k). */
static uint64_t edge_count(struct fixture *f, enum wake_source k, const char *from,
			   const char *to)
{
	const struct task_stats *tt = by_name(f, to), *ft = from ? by_name(f, from) : NULL;
	size_t n;
	const struct wake_edge *e = analysis__edges(f->a, &n);

	if (!tt || (from && !ft))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (e[i].to_seq == tt->seq && e[i].from_kind == k &&
		    (!from || e[i].from_seq == ft->seq))
			return e[i].count;
	return 0;
}

static void test_chain_edges(void)
{
	struct fixture f;
	size_t n;

	if (!load(&f, "tests/data/chain-100.trace", NULL))
		return;
	CHECK_EQ_U64(edge_count(&f, WAKE_FROM_TASK, "chain::producer", "chain::relay"), 100);
	CHECK_EQ_U64(edge_count(&f, WAKE_FROM_TASK, "chain::relay", "chain::consumer"), 100);
	CHECK_EQ_U64(edge_count(&f, WAKE_FROM_TIMER, NULL, "chain::producer"), 100);
	const struct wake_edge *e = analysis__edges(f.a, &n);
	CHECK(n >= 3);
	for (size_t i = 0; i < n && i < 3; i++) {
		CHECK_EQ_U64(e[i].count, 100);
		CHECK_EQ_U64(e[i].timed, 100);
		CHECK(e[i].delay_p50_ns > 0 && e[i].delay_p50_ns <= e[i].delay_p99_ns);
		CHECK(e[i].delay_p99_ns <= e[i].delay_max_ns);
	}
	/* The producer sleeps 2 ms per message: its idle time is the sleep (the
	 * timer fires on a 1 ms tick, so 2-3 ms). */
	const struct task_stats *p = by_name(&f, "chain::producer");
	if (p) {
		CHECK(p->idle_p50_ns >= 2 * MS && p->idle_p50_ns <= 3300000);
		CHECK(p->pending_ratio > 0.98 && p->pending_ratio < 1);
		CHECK(p->self_wake_ratio == 0);
	}
	const struct hist *h = analysis__dist(f.a, DIST_POLL);
	CHECK(h && h->count == 303);
	unload(&f);
}

static void test_blocker(void)
{
	struct fixture f;
	size_t n;
	const struct task_stats *blk, *stuck;

	if (!load(&f, "tests/data/blocker-2s.trace", NULL))
		return;
	blk = by_name(&f, "blocker::main::{async_block#0}::{async_block#1}");
	stuck = by_name(&f, "blocker::stuck_forever");
	const struct long_poll *lp = analysis__long_polls(f.a, &n);
	CHECK(n >= 1);
	if (n && blk) {
		CHECK_EQ_U64(lp[0].seq, blk->seq);
		CHECK(lp[0].duration_ns >= 200 * MS && lp[0].duration_ns < 210 * MS);
		CHECK(!lp[0].until_end);
	}
	CHECK_EQ_U64(analysis__summary(f.a)->long_polls, n);
	const struct stall *st = analysis__stalled(f.a, &n);
	bool found = false;
	for (size_t i = 0; stuck && i < n; i++)
		if (st[i].seq == stuck->seq) {
			found = true;
			CHECK(st[i].until_end);
			CHECK(st[i].stalled_ns > 1500 * MS);
		}
	CHECK(found);
	unload(&f);
}

static void test_sleepers_idle(void)
{
	struct fixture f;
	size_t n, seen[3] = { 0 };
	static const uint64_t sleep_ms[3] = { 20, 50, 100 };

	if (!load(&f, "tests/data/sleepers.trace", NULL))
		return;
	const struct task_stats *t = analysis__tasks(f.a, &n);
	for (size_t i = 0; i < n; i++) {
		if (t[i].kind != TASK_KIND_TASK || t[i].wakes < 3)
			continue;
		for (int k = 0; k < 3; k++) {
			uint64_t want = sleep_ms[k] * MS, p50 = t[i].idle_p50_ns;

			if (p50 >= want && p50 - want <= want / 10)
				seen[k]++;
		}
	}
	/* Each sleeper task's median idle is its sleep: never shorter, and at
	 * most 10% longer (Tokio's timer rounds a sleep up to its 1 ms tick). */
	for (int k = 0; k < 3; k++) {
		if (!seen[k])
			fprintf(stderr, "no sleeper with idle p50 ~ %llu ms\n",
				(unsigned long long)sleep_ms[k]);
		CHECK(seen[k] >= 1);
	}
	unload(&f);
}

static void test_yields_polls(void)
{
	struct fixture f;
	size_t n, checked = 0;

	if (!load(&f, "tests/data/yields-multi-20.trace", NULL))
		return;
	const struct task_stats *t = analysis__tasks(f.a, &n);
	uint64_t *ids = calloc(n + 1, sizeof(*ids));
	size_t m = 0;
	CHECK(ids != NULL);
	for (size_t i = 0; ids && i < n; i++)
		if (t[i].kind == TASK_KIND_TASK && t[i].tokio_id && t[i].spawn_file)
			ids[m++] = i;
	/* k-th spawned task by tokio id: (k % 5) + 1 polls */
	for (size_t a = 0; ids && a < m; a++)
		for (size_t b = a + 1; b < m; b++)
			if (t[ids[b]].tokio_id < t[ids[a]].tokio_id) {
				uint64_t x = ids[a];
				ids[a] = ids[b];
				ids[b] = x;
			}
	for (size_t k = 0; ids && k < m; k++) {
		CHECK_EQ_U64(t[ids[k]].polls, (k % 5) + 1);
		checked++;
	}
	CHECK_EQ_U64(checked, 20);
	free(ids);
	unload(&f);
}

/* Second pass over chain-100: per-worker busy time and polls add up to the
 * first pass's; each bucket's busy + parked + idle is the bucket. */
static void test_chain_timeline(void)
{
	struct fixture f;
	struct trace_reader *r;
	struct timeline *tl = NULL;
	struct as_event ev;
	char err[512];
	size_t nw, n1, nt;
	int n;

	if (!load(&f, "tests/data/chain-100.trace", NULL))
		return;
	r = trace_reader__open("tests/data/chain-100.trace", err, sizeof(err));
	CHECK(r != NULL);
	if (r)
		tl = timeline__new(f.a, trace_reader__meta(r), NULL);
	CHECK(tl != NULL);
	while (tl && (n = trace_reader__next(r, &ev)) == 1)
		CHECK_EQ_U64(timeline__add(tl, &ev), 0);
	if (tl) {
		CHECK_EQ_U64(timeline__finish(tl, trace_reader__end(r)), 0);
		CHECK_EQ_U64(timeline__buckets(tl), 100);
		CHECK_EQ_U64(timeline__start_ns(tl), analysis__summary(f.a)->start_ns);
		const struct worker_stats *w1 = analysis__workers(f.a, &n1);
		const struct timeline_worker *w = timeline__workers(tl, &nw);
		CHECK_EQ_U64(nw, n1);
		for (size_t i = 0; i < nw && i < n1; i++) {
			uint64_t busy = 0, polls = 0, parked = 0;

			for (size_t b = 0; b < timeline__buckets(tl); b++) {
				busy += w[i].busy_ns[b];
				polls += w[i].polls[b];
				parked += w[i].parked_ns[b];
				CHECK(w[i].busy_ns[b] + w[i].parked_ns[b] + w[i].idle_ns[b] <=
				      timeline__bucket_ns(tl));
			}
			CHECK_EQ_U64(busy, w1[i].busy_ns);
			CHECK_EQ_U64(polls, w1[i].polls);
			CHECK_EQ_U64(parked, w1[i].parked_ns);
		}
		const struct timeline_task *t = timeline__tasks(tl, &nt);
		CHECK_EQ_U64(nt, 3);
		CHECK_STR(t[0].name, "chain::producer");
		double run = 0;
		for (size_t b = 0; b < timeline__buckets(tl); b++) {
			run += t[0].running[b] * (double)timeline__bucket_ns(tl);
			CHECK(t[0].running[b] + t[0].scheduled[b] + t[0].idle[b] <= 1.0001);
		}
		const struct task_stats *p = by_name(&f, "chain::producer");
		CHECK(p && run > 0.99 * (double)p->busy_ns && run < 1.01 * (double)p->busy_ns);
	}
	timeline__free(tl);
	trace_reader__free(r);
	unload(&f);
}

int main(void)
{
	RUN(test_chain_edges);
	RUN(test_blocker);
	RUN(test_sleepers_idle);
	RUN(test_yields_polls);
	RUN(test_chain_timeline);
	TEST_MAIN_END();
}
