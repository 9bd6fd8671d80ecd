/* io_uring requests: URING events in the trace format (version 6: round
 * trip with flags, version 5 rejects them) and the per-task io_uring
 * analysis (submissions, completions, failures, latency, outside polls). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "harness.h"
#include "stamp.h"
#include "analysis/uring.h"
#include "trace/event.h"
#include "trace/reader.h"
#include "trace/writer.h"

static struct as_probe probes[] = {
	{ .role = AS_ROLE_POLL, .addr = 0x1000, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "app::reader" },
};
static const struct as_trace_meta meta = {
	.pid = 7, .target = "/bin/app", .build_id = "", .runtime = "tokio", .cmdline = "app",
	.probes = probes, .n_probes = 1,
};

#define A 0xa000ull

static void test_format(void)
{
	char path[64], err[512];
	struct as_event ev;
	snprintf(path, sizeof(path), "/tmp/as-test-uring-%d.trace", (int)getpid());
	struct trace_writer *w = trace_writer__new(path, &meta);
	CHECK(w != NULL);
	if (!w)
		return;
	const struct as_event in[] = {
		{ .type = AS_EV_THREAD, .tid = 1, .ts = 1, .str = "w" },
		{ .type = AS_EV_URING, .tid = 1, .ts = 2, .task = A, .other = 22 },
		{ .type = AS_EV_URING, .tid = 1, .ts = 5, .task = A, .other = 3,
		  .flags = AS_URING_COMPLETE | AS_URING_ERROR },
	};
	for (size_t i = 0; i < 3; i++)
		CHECK_EQ_U64(trace_writer__write(w, &in[i]), 0);
	CHECK_EQ_U64(trace_writer__finish(w, &(struct as_trace_end){ .events = 3 }), 0);
	trace_writer__free(w);
	struct trace_reader *r = trace_reader__open(path, err, sizeof(err));
	CHECK(r != NULL);
	if (r) {
		CHECK_EQ_U64(trace_reader__meta(r)->format_version, AS_TRACE_FORMAT_VERSION);
		for (size_t i = 0; i < 3; i++) {
			CHECK_EQ_U64(trace_reader__next(r, &ev), 1);
			CHECK_EQ_U64(ev.type, in[i].type);
			CHECK_EQ_U64(ev.ts, in[i].ts);
			CHECK_EQ_U64(ev.task, in[i].task);
			CHECK_EQ_U64(ev.other, in[i].other);
			CHECK_EQ_U64(ev.flags, in[i].flags);
		}
		CHECK_EQ_U64(trace_reader__next(r, &ev), 0);
	}
	trace_reader__free(r);
	stamp_version(path, 5);
	r = trace_reader__open(path, err, sizeof(err));
	CHECK(r != NULL);
	if (r) {
		CHECK_EQ_U64(trace_reader__next(r, &ev), 1);
		CHECK_EQ_U64(trace_reader__next(r, &ev), -EBADMSG);
		CHECK(strstr(trace_reader__error(r), "unknown event type") != NULL);
	}
	trace_reader__free(r);
	unlink(path);
}

static void test_analysis(void)
{
	struct uring *u = uring__new(&meta);
	CHECK(u != NULL);
	if (!u)
		return;
	const struct as_event evs[] = {
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 1, .task = A, .other = 4 },
		{ .type = AS_EV_URING, .tid = 1, .ts = 2, .task = A, .other = 22 },
		{ .type = AS_EV_URING, .tid = 1, .ts = 3, .task = A, .other = 22 },
		{ .type = AS_EV_URING, .tid = 1, .ts = 4, .task = A, .other = 1000, .flags = AS_URING_COMPLETE },
		{ .type = AS_EV_URING, .tid = 1, .ts = 5, .task = A, .other = 3000,
		  .flags = AS_URING_COMPLETE | AS_URING_ERROR },
		{ .type = AS_EV_POLL_END, .tid = 1, .ts = 6, .task = A },
		{ .type = AS_EV_URING, .tid = 1, .ts = 7, .other = 22 },
		{ .type = AS_EV_URING, .tid = 1, .ts = 8, .other = 50, .flags = AS_URING_COMPLETE },
	};
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		CHECK_EQ_U64(uring__add(u, &evs[i]), 0);
	size_t n;
	const struct uring_task *t = uring__tasks(u, &n);
	const struct uring_summary *s = uring__summary(u);
	CHECK_EQ_U64(s->submitted, 3);
	CHECK_EQ_U64(s->completed, 3);
	CHECK_EQ_U64(s->errors, 1);
	CHECK_EQ_U64(n, 2);
	if (t && n == 2) {
		CHECK_STR(t[0].name, "app::reader");
		CHECK_EQ_U64(t[0].task, A);
		CHECK_EQ_U64(t[0].tokio_id, 4);
		CHECK_EQ_U64(t[0].submitted, 2);
		CHECK_EQ_U64(t[0].completed, 2);
		CHECK_EQ_U64(t[0].errors, 1);
		CHECK_EQ_U64(t[0].max_ns, 3000);
		CHECK_STR(t[1].name, "outside-polls");
		CHECK_EQ_U64(t[1].task, 0);
		CHECK_EQ_U64(t[1].submitted, 1);
		CHECK_EQ_U64(t[1].p50_ns, 50);
	}
	CHECK_EQ_U64(uring__add(u, NULL), -EINVAL);
	uring__free(u);
	uring__free(NULL);
}

int main(void)
{
	RUN(test_format);
	RUN(test_analysis);
	TEST_MAIN_END();
}
