/* Unit tests for src/analysis/zoom.c, the HTML page's second pass: a
 * hand-built stream with exact lanes and histograms, and the recorded
 * traces of tests/data/, where every number must agree with the first
 * pass's (busy and parked time per worker, busy and scheduling time per
 * task, the per-task poll and scheduling-delay percentiles the report
 * prints). Run from the repository root. */
#include <errno.h>
#include <stdlib.h>

#include "analysis/tasks.h"
#include "analysis/zoom.h"
#include "harness.h"
#include "trace/reader.h"

#define US 1000ULL

static struct as_probe probes[] = {
	{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "app::main::{{closure}}" },
	{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "app::other" },
};

static struct as_trace_meta meta = {
	.format_version = 1, .pid = 42, .target = "/bin/app", .build_id = "",
	.runtime = "tokio", .cmdline = "app", .probes = probes, .n_probes = 2,
};

/* The stream, in us: worker thread 1; T (0x100) woken at 0, runs 50..250,
 * idle, woken at 600, runs 720..1000 (still running at the end); U (0x200)
 * woken at 20, runs 250..300 and completes; thread 1 parked 300..700. */
static const struct as_event stream[] = {
	{ .type = AS_EV_THREAD, .tid = 1, .ts = 0, .str = "w1" },
	{ .type = AS_EV_WAKE, .tid = 9, .ts = 0, .task = 0x100 },
	{ .type = AS_EV_WAKE, .tid = 9, .ts = 20 * US, .task = 0x200 },
	{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 50 * US, .task = 0x100, .other = 1, .probe = 0 },
	{ .type = AS_EV_POLL_END, .tid = 1, .ts = 250 * US, .task = 0x100 },
	{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 250 * US, .task = 0x200, .other = 2, .probe = 1 },
	{ .type = AS_EV_POLL_END, .tid = 1, .ts = 300 * US, .task = 0x200, .flags = AS_POLL_READY },
	{ .type = AS_EV_PARK, .tid = 1, .ts = 300 * US },
	{ .type = AS_EV_UNPARK, .tid = 1, .ts = 700 * US },
	{ .type = AS_EV_WAKE, .tid = 9, .ts = 600 * US, .task = 0x100 },
	{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 720 * US, .task = 0x100, .other = 1, .probe = 0 },
};
#define N_STREAM (sizeof(stream) / sizeof(stream[0]))

static uint64_t sum(const uint64_t *v, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += v[i];
	return s;
}

static void test_stream(void)
{
	struct as_trace_end e = { .end_ns = 1000 * US };
	struct analysis *a = analysis__new(&meta);
	struct zoom *z = NULL;
	size_t n;

	CHECK(a != NULL);
	if (!a)
		return;
	for (size_t i = 0; i < N_STREAM; i++)
		CHECK_EQ_U64(analysis__add(a, &stream[i]), 0);
	CHECK_EQ_U64(analysis__finish(a, &e), 0);
	z = zoom__new(a, &meta, NULL);
	CHECK(z != NULL);
	if (!z)
		goto out;
	for (size_t i = 0; i < N_STREAM; i++)
		CHECK_EQ_U64(zoom__add(z, &stream[i]), 0);
	CHECK_EQ_U64(zoom__finish(z, &e), 0);
	CHECK_EQ_U64(zoom__finish(z, &e), -EINVAL);
	CHECK_EQ_U64(zoom__candidates(z), 2);

	/* one worker lane over 1000 us: 1 us buckets (none narrower) */
	const struct zoom_worker *w = zoom__workers(z, &n);
	CHECK_EQ_U64(n, 1);
	if (n == 1) {
		CHECK_EQ_U64(w[0].tid, 1);
		CHECK_EQ_U64(w[0].lane.bucket_ns, 1 * US);
		CHECK_EQ_U64(w[0].lane.buckets, 1000);
		CHECK_EQ_U64(sum(w[0].lane.a, w[0].lane.buckets), 200 * US + 50 * US + 280 * US);
		CHECK_EQ_U64(sum(w[0].lane.b, w[0].lane.buckets), 400 * US);
		CHECK_EQ_U64(w[0].lane.a[49], 0);
		CHECK_EQ_U64(w[0].lane.a[50], 1 * US);
		CHECK_EQ_U64(w[0].lane.b[300], 1 * US);
		CHECK_EQ_U64(w[0].lane.b[700], 0);
	}
	/* runnable: 2 at once while both wait (20..50 us), 1 until 250 */
	const struct zoom_lane *r = zoom__runnable(z);
	CHECK(r != NULL);
	if (r) {
		CHECK_EQ_U64(r->a[10], 1);
		CHECK_EQ_U64(r->a[30], 2);
		CHECK_EQ_U64(r->a[100], 1);
		CHECK_EQ_U64(r->a[400], 0);
		CHECK_EQ_U64(r->a[650], 1);
	}
	/* both tasks detailed, the busiest first */
	const struct zoom_task *t = zoom__tasks(z, &n);
	CHECK_EQ_U64(n, 2);
	if (n == 2) {
		CHECK_EQ_U64(t[0].seq, 1);
		CHECK_EQ_U64(t[1].seq, 2);
		CHECK(t[0].fine && t[1].fine);
		/* T: one poll ended (200 us; the one running at the end has no
		 * sample), two runnable waits a poll ended (50 and 120 us) */
		CHECK_EQ_U64(t[0].poll.count, 1);
		CHECK_EQ_U64(t[0].poll.max, 200 * US);
		CHECK_EQ_U64(t[0].sched.count, 2);
		CHECK_EQ_U64(t[0].sched.sum, 170 * US);
		CHECK_EQ_U64(t[1].poll.count, 1);
		CHECK_EQ_U64(t[1].sched.sum, 230 * US);
		/* T's lane from its first event to the end, U's to its last */
		CHECK_EQ_U64(t[0].lane.start_ns, 0);
		CHECK_EQ_U64(t[0].lane.end_ns, 1000 * US);
		CHECK_EQ_U64(sum(t[0].lane.a, t[0].lane.buckets), 480 * US);
		CHECK_EQ_U64(sum(t[0].lane.b, t[0].lane.buckets), 170 * US);
		CHECK_EQ_U64(t[1].lane.start_ns, 20 * US);
		CHECK_EQ_U64(t[1].lane.end_ns, 300 * US);
		CHECK_EQ_U64(sum(t[1].lane.a, t[1].lane.buckets), 50 * US);
	}
	/* a results call before finish has nothing */
out:
	zoom__free(z);
	analysis__free(a);
}

static void test_not_finished(void)
{
	struct analysis *a = analysis__new(&meta);

	errno = 0;
	CHECK(zoom__new(a, &meta, NULL) == NULL);
	CHECK_EQ_U64(errno, EINVAL);
	analysis__free(a);
	zoom__free(NULL);
}

/* Two passes over a recorded trace: pass 1 the analysis, pass 2 zoom. */
static void check_trace(const char *path, size_t detail_max)
{
	char err[512] = "";
	struct trace_reader *r = trace_reader__open(path, err, sizeof(err)), *r2 = NULL;
	struct analysis *a = NULL;
	struct zoom *z = NULL;
	struct as_event ev;
	size_t n, nw, nrows;
	int k;

	if (!r) {
		fprintf(stderr, "%s (run from the repository root)\n", err);
		th_failed_checks++;
		return;
	}
	a = analysis__new(trace_reader__meta(r));
	while ((k = trace_reader__next(r, &ev)) == 1)
		CHECK_EQ_U64(analysis__add(a, &ev), 0);
	CHECK_EQ_U64(analysis__finish(a, trace_reader__end(r)), 0);
	r2 = trace_reader__open(path, err, sizeof(err));
	z = r2 ? zoom__new(a, trace_reader__meta(r2), &(struct zoom_opts){ .detail_max = detail_max }) : NULL;
	CHECK(z != NULL);
	if (!z)
		goto out;
	while ((k = trace_reader__next(r2, &ev)) == 1)
		CHECK_EQ_U64(zoom__add(z, &ev), 0);
	CHECK_EQ_U64(zoom__finish(z, trace_reader__end(r2)), 0);

	const struct worker_stats *ws = analysis__workers(a, &nw);
	const struct zoom_worker *w = zoom__workers(z, &n);
	CHECK_EQ_U64(n, nw);
	for (size_t i = 0; i < n && i < nw; i++) {
		CHECK_EQ_U64(w[i].tid, ws[i].tid);
		CHECK_EQ_U64(sum(w[i].lane.a, w[i].lane.buckets), ws[i].busy_ns);
		CHECK_EQ_U64(sum(w[i].lane.b, w[i].lane.buckets), ws[i].parked_ns);
		CHECK(w[i].lane.buckets <= ZOOM_WORKER_BUCKETS / 2);
	}
	const struct zoom_task *t = zoom__tasks(z, &n);
	const struct task_stats *rows = analysis__tasks(a, &nrows);
	size_t users = 0;

	for (size_t i = 0; i < nrows; i++)
		users += rows[i].kind == TASK_KIND_TASK;
	CHECK_EQ_U64(zoom__candidates(z), users);
	CHECK_EQ_U64(n, users < detail_max ? users : detail_max);
	for (size_t i = 0; i < n; i++) {
		const struct task_stats *row = analysis__task(a, t[i].seq);

		CHECK(row == t[i].row);
		if (!row)
			continue;
		/* the busiest first */
		if (i)
			CHECK(!t[i].fine || t[i - 1].row->busy_ns >= row->busy_ns);
		CHECK_EQ_U64(sum(t[i].lane.a, t[i].lane.buckets), row->busy_ns);
		CHECK_EQ_U64(t[i].sched.sum, row->sched_ns);
		CHECK_EQ_U64(hist__quantile(&t[i].poll, 0.5), row->poll_p50_ns);
		CHECK_EQ_U64(hist__quantile(&t[i].poll, 0.99), row->poll_p99_ns);
		CHECK_EQ_U64(hist__quantile(&t[i].sched, 0.5), row->sched_p50_ns);
		CHECK_EQ_U64(hist__quantile(&t[i].sched, 0.99), row->sched_p99_ns);
		CHECK_EQ_U64(t[i].sched.max, row->sched_max_ns);
		CHECK(t[i].lane.buckets <= (t[i].fine ? ZOOM_LANE_BUCKETS : ZOOM_STRIP_BUCKETS));
		CHECK_EQ_U64(t[i].fine, i < ZOOM_LANES_MAX);
	}
out:
	zoom__free(z);
	analysis__free(a);
	trace_reader__free(r);
	trace_reader__free(r2);
}

static void test_traces(void)
{
	check_trace("tests/data/chain-100.trace", ZOOM_DETAIL_MAX);
	check_trace("tests/data/blocker-2s.trace", ZOOM_DETAIL_MAX);
	check_trace("tests/data/sleepers.trace", ZOOM_DETAIL_MAX);
	check_trace("tests/data/yields-multi-20.trace", ZOOM_DETAIL_MAX);
	/* fewer detailed than candidates: still the busiest first */
	check_trace("tests/data/chain-100.trace", 7);
}

int main(void)
{
	RUN(test_stream);
	RUN(test_not_finished);
	RUN(test_traces);
	TEST_MAIN_END();
}
