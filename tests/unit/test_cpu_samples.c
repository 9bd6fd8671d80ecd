/* CPU samples: SAMPLE events in the trace format (version 4: round trip,
 * version 3 rejects them) and the per-task attribution of the CPU samples
 * analysis (tasks, runtime tasks, scheduler, idle, other threads); RUNQ
 * events (version 5, version 4 rejects them) and the run-queue analysis. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "harness.h"
#include "stamp.h"
#include "analysis/blocking.h"
#include "analysis/cpu_samples.h"
#include "analysis/task_model.h"
#include "analysis/runq.h"
#include "output/cpu_report.h"
#include "trace/event.h"
#include "trace/reader.h"
#include "trace/writer.h"

static struct as_probe probes[] = {
	{ .role = AS_ROLE_POLL, .addr = 0x1000, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "app::heavy" },
	{ .role = AS_ROLE_POLL, .addr = 0x2000, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "app::light" },
	{ .role = AS_ROLE_POLL, .addr = 0x3000, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "tokio::runtime::blocking::task::BlockingTask<worker>" },
};
static const struct as_trace_meta meta = {
	.pid = 7, .target = "/bin/app", .build_id = "", .runtime = "tokio", .cmdline = "app",
	.probes = probes, .n_probes = 3,
};

static const struct as_frame burn_frames[] = {
	{ 0xffffffff81a00010ull, "bpf_prog_123_cpu_sample" },
	{ 0xffffffff81a00100ull, "perf_swevent_hrtimer" },
	{ 0xffffffff81a00200ull, "asm_sysvec_apic_timer_interrupt" },
	{ 0x555500001234ull, "app::burn" },
	{ 0x555500002000ull, "app::heavy::{{closure}}" },
};

static void tmp_path(char *buf)
{
	static int n;
	snprintf(buf, 64, "/tmp/as-test-cpu-%d-%d.trace", (int)getpid(), n++);
}

/* Samples keep their task (explicit or the thread's current one), stack
 * and timestamp; version 3 knows no type 11. */
static void test_roundtrip_and_v3(void)
{
	char path[64], err[512];
	struct as_event ev;
	uint32_t id = 0;
	tmp_path(path);
	struct trace_writer *w = trace_writer__new(path, &meta);
	CHECK(w != NULL);
	if (!w)
		return;
	struct as_stack s = { .n_kernel = 3, .n_user = 2, .frames = burn_frames };
	CHECK_EQ_U64(trace_writer__stack(w, &s, &id), 0);
	CHECK_EQ_U64(trace_writer__write(w, &(struct as_event){ .type = AS_EV_SAMPLE, .tid = 1, .ts = 5,
							       .stack = 2 }), -EINVAL);
	const struct as_event in[] = {
		{ .type = AS_EV_THREAD, .tid = 1, .ts = 1, .str = "w" },
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 2, .task = 0xa000, .other = 3 },
		{ .type = AS_EV_SAMPLE, .tid = 1, .ts = 3, .task = 0xa000, .stack = 1 },
		{ .type = AS_EV_SAMPLE, .tid = 1, .ts = 4, .task = 0xb000, .stack = 0 },
		{ .type = AS_EV_POLL_END, .tid = 1, .ts = 5, .task = 0xa000 },
		{ .type = AS_EV_SAMPLE, .tid = 1, .ts = 6, .task = 0, .stack = 1 },
	};
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		CHECK_EQ_U64(trace_writer__write(w, &in[i]), 0);
	CHECK_EQ_U64(trace_writer__finish(w, &(struct as_trace_end){ .events = 6 }), 0);
	trace_writer__free(w);

	struct trace_reader *r = trace_reader__open(path, err, sizeof(err));
	CHECK(r != NULL);
	if (r) {
		CHECK_EQ_U64(trace_reader__meta(r)->format_version, AS_TRACE_FORMAT_VERSION);
		size_t i = 0;
		while (trace_reader__next(r, &ev) == 1 && i < 6) {
			CHECK_EQ_U64(ev.type, in[i].type);
			CHECK_EQ_U64(ev.ts, in[i].ts);
			CHECK_EQ_U64(ev.task, in[i].task);
			if (ev.type == AS_EV_SAMPLE) {
				CHECK_EQ_U64(ev.stack, in[i].stack);
				if (ev.stack) {
					const struct as_stack *rs = trace_reader__stack(r, ev.stack);
					CHECK(rs != NULL);
					if (rs)
						CHECK_STR(rs->frames[3].sym, "app::burn");
				}
			}
			i++;
		}
		CHECK_EQ_U64(i, 6);
	}
	trace_reader__free(r);

	stamp_version(path, 3);
	r = trace_reader__open(path, err, sizeof(err));
	CHECK(r != NULL);
	if (r) {
		CHECK_EQ_U64(trace_reader__next(r, &ev), 1);
		CHECK_EQ_U64(trace_reader__next(r, &ev), 1);
		CHECK_EQ_U64(trace_reader__next(r, &ev), -EBADMSG);
		CHECK(strstr(trace_reader__error(r), "unknown event type") != NULL);
	}
	trace_reader__free(r);
	unlink(path);
}

#define A 0xa000ull
#define B 0xb000ull
#define W 0xc000ull   /* a worker loop polled as a task */

static void test_attribution(void)
{
	struct as_stack st = { .id = 1, .n_kernel = 3, .n_user = 2, .frames = burn_frames };
	struct cpu_samples *c = cpu_samples__new(&meta);
	CHECK(c != NULL);
	if (!c)
		return;
	const struct as_event evs[] = {
		/* tid 1: worker loop W, A then B polled inside it */
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 1, .task = W, .probe = 2 },
		{ .type = AS_EV_SAMPLE, .tid = 1, .ts = 2, .task = W },            /* scheduler */
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 3, .task = A, .probe = 0, .other = 5 },
		{ .type = AS_EV_SAMPLE, .tid = 1, .ts = 4, .task = A, .stack = 1 },
		{ .type = AS_EV_SAMPLE, .tid = 1, .ts = 5, .task = A, .stack = 1 },
		{ .type = AS_EV_SAMPLE, .tid = 1, .ts = 6, .task = A, .stack = 1 },
		{ .type = AS_EV_POLL_END, .tid = 1, .ts = 7, .task = A },
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 8, .task = B, .probe = 1 },
		{ .type = AS_EV_SAMPLE, .tid = 1, .ts = 9, .task = B, .stack = 1 },
		{ .type = AS_EV_POLL_END, .tid = 1, .ts = 10, .task = B },
		{ .type = AS_EV_PARK, .tid = 1, .ts = 11 },
		{ .type = AS_EV_SAMPLE, .tid = 1, .ts = 12, .task = W },           /* idle */
		{ .type = AS_EV_UNPARK, .tid = 1, .ts = 13 },
		/* tid 2: never polled: outside the runtime */
		{ .type = AS_EV_SAMPLE, .tid = 2, .ts = 14 },
		/* tid 3: a current_thread worker outside polls */
		{ .type = AS_EV_PARK, .tid = 3, .ts = 15 },
		{ .type = AS_EV_UNPARK, .tid = 3, .ts = 16 },
		{ .type = AS_EV_SAMPLE, .tid = 3, .ts = 17 },                      /* scheduler */
	};
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		CHECK_EQ_U64(cpu_samples__add(c, &evs[i], evs[i].stack ? &st : NULL), 0);
	size_t n;
	const struct cpu_row *r = cpu_samples__rows(c, &n);
	const struct cpu_summary *s = cpu_samples__summary(c);
	CHECK_EQ_U64(s->samples, 8);
	CHECK_EQ_U64(s->in_tasks, 4);
	CHECK_EQ_U64(s->tasks, 2);
	CHECK_EQ_U64(n, 5);
	if (r && n == 5) {
		CHECK_STR(r[0].name, "app::heavy");
		CHECK_EQ_U64(r[0].samples, 3);
		CHECK_EQ_U64(r[0].tokio_id, 5);
		CHECK_EQ_U64(r[0].task, A);
		CHECK_STR(r[1].name, "scheduler");
		CHECK_EQ_U64(r[1].samples, 2);
		CHECK_STR(r[2].name, "app::light");
		CHECK_EQ_U64(r[2].samples, 1);
		CHECK_STR(r[3].name, "idle");
		CHECK_STR(r[4].name, "outside-runtime");
	}
	const struct cpu_folded *l = cpu_samples__folded(c, &n);
	CHECK_EQ_U64(n, 5);
	if (l && n == 5) {
		/* the sampling path (BPF, perf, timer interrupt) is left out */
		CHECK_STR(l[0].stack, "app::heavy;app::heavy::{{closure}};app::burn");
		CHECK_EQ_U64(l[0].count, 3);
		CHECK_STR(l[1].stack, "scheduler");
		CHECK_EQ_U64(l[1].count, 2);
		CHECK_STR(l[2].stack, "app::light;app::heavy::{{closure}};app::burn");
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (f) {
		CHECK_EQ_U64(cpu_report_text(f, c, NULL), 0);
		fclose(f);
		CHECK(strstr(buf, "8 samples, 4 in polls of 2 tasks") != NULL);
		CHECK(strstr(buf, "37.5%  #5 app::heavy\n") != NULL);
		free(buf);
	}
	CHECK_EQ_U64(cpu_samples__add(c, NULL, NULL), -EINVAL);
	cpu_samples__free(c);
	cpu_samples__free(NULL);

	/* nothing sampled */
	c = cpu_samples__new(&meta);
	cpu_samples__rows(c, &n);
	CHECK_EQ_U64(n, 0);
	cpu_samples__folded(c, &n);
	CHECK_EQ_U64(n, 0);
	CHECK_EQ_U64(cpu_samples__summary(c)->samples, 0);
	cpu_samples__free(c);
}

/* A profile trace (no probes): tasks declared by runtime task id
 * (AS_SPAWN_TASK), samples keyed by that id; a name found after the first
 * sample and the runtime's own task (a worker's loop) settle at the end;
 * task 0 is no task, its thread's; the blocking analysis likewise. */
static void test_profile(void)
{
	static const struct as_trace_meta pmeta = {
		.pid = 7, .target = "/bin/app", .build_id = "", .runtime = "tokio", .cmdline = "app",
	};
	const uint8_t decl = AS_SPAWN_NAME | AS_SPAWN_TASK;
	const struct as_event evs[] = {
		{ .type = AS_EV_SPAWN, .flags = decl, .tid = 1, .ts = 1, .task = 3, .other = 3,
		  .str = "app::heavy" },
		{ .type = AS_EV_SAMPLE, .tid = 1, .ts = 2, .task = 3 },
		{ .type = AS_EV_SAMPLE, .tid = 1, .ts = 3, .task = 3 },
		{ .type = AS_EV_SPAWN, .flags = decl, .tid = 2, .ts = 4, .task = 4, .other = 4 },
		{ .type = AS_EV_SAMPLE, .tid = 2, .ts = 5, .task = 4 },
		{ .type = AS_EV_SPAWN, .flags = decl, .tid = 2, .ts = 6, .task = 1, .other = 1 },
		{ .type = AS_EV_SAMPLE, .tid = 2, .ts = 7, .task = 1 },
		{ .type = AS_EV_OFFCPU, .tid = 2, .ts = 8, .task = 1, .other = 5000 },
		{ .type = AS_EV_OFFCPU, .tid = 1, .ts = 9, .task = 3, .other = 700 },
		{ .type = AS_EV_SAMPLE, .tid = 9, .ts = 10 },
		/* named later, and #1 found to be a worker's launch task */
		{ .type = AS_EV_SPAWN, .flags = decl, .tid = 2, .ts = 11, .task = 4, .other = 4,
		  .str = "app::light" },
		{ .type = AS_EV_SPAWN, .flags = decl | AS_SPAWN_RUNTIME, .tid = 2, .ts = 12, .task = 1,
		  .other = 1 },
	};
	struct task_model *m = task_model__new(&pmeta);
	struct cpu_samples *c = m ? cpu_samples__new_on(m, &pmeta) : NULL;
	struct blocking *b = m ? blocking__new_on(m, &pmeta) : NULL;

	CHECK(as_meta_profile(&pmeta) && !as_meta_profile(&meta));
	CHECK(c && b);
	if (!c || !b)
		goto out;
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		CHECK_EQ_U64(task_model__add(m, &evs[i]), 0);
		CHECK_EQ_U64(cpu_samples__add(c, &evs[i], NULL), 0);
		CHECK_EQ_U64(blocking__add(b, &evs[i], NULL), 0);
	}
	CHECK_EQ_U64(task_model__finish(m, 20), 0);
	size_t n;
	const struct cpu_row *r = cpu_samples__rows(c, &n);
	const struct cpu_summary *s = cpu_samples__summary(c);
	CHECK(s->profile);
	CHECK_EQ_U64(s->samples, 5);
	CHECK_EQ_U64(s->in_tasks, 3);
	CHECK_EQ_U64(n, 4);
	if (r && n == 4) {
		CHECK_STR(r[0].name, "app::heavy");
		CHECK_EQ_U64(r[0].tokio_id, 3);
		CHECK_EQ_U64(r[0].samples, 2);
		/* ties: tasks by key, then the other kinds */
		CHECK_STR(r[1].name, "app::light");   /* its late name */
		CHECK_EQ_U64(r[1].tokio_id, 4);
		CHECK_STR(r[2].name, "scheduler");   /* the launch task's sample */
		CHECK_STR(r[3].name, "thread 9");   /* no task: its thread's */
	}
	const struct blocking_summary *bs = blocking__summary(b);
	CHECK(bs->profile);
	CHECK_EQ_U64(bs->ns, 700);
	CHECK_EQ_U64(bs->tasks, 1);
	CHECK_EQ_U64(bs->runtime_ns, 5000);   /* the runtime's own loop, not counted */
	CHECK_EQ_U64(bs->parked_ns, 0);
	const struct blocking_task *bt = blocking__tasks(b, &n);
	CHECK_EQ_U64(n, 1);
	if (bt && n == 1) {
		CHECK_STR(bt[0].name, "app::heavy");
		CHECK_EQ_U64(bt[0].tokio_id, 3);
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (f) {
		CHECK_EQ_U64(cpu_report_text(f, c, NULL), 0);
		fclose(f);
		CHECK(strstr(buf, "CPU samples (profile): 5 samples, 3 in 2 tasks") != NULL);
		CHECK(strstr(buf, "#4 app::light\n") != NULL);
		free(buf);
	}
out:
	blocking__free(b);
	cpu_samples__free(c);
	task_model__free(m);
}

/* RUNQ round trip; version 4 knows no type 12. */
static void test_runq_format(void)
{
	char path[64], err[512];
	struct as_event ev;
	tmp_path(path);
	struct trace_writer *w = trace_writer__new(path, &meta);
	CHECK(w != NULL);
	if (!w)
		return;
	CHECK_EQ_U64(trace_writer__write(w, &(struct as_event){ .type = AS_EV_THREAD, .tid = 9, .ts = 1, .str = "w" }), 0);
	CHECK_EQ_U64(trace_writer__write(w, &(struct as_event){ .type = AS_EV_RUNQ, .tid = 9, .ts = 2,
							       .task = 0xa000, .other = 123456 }), 0);
	CHECK_EQ_U64(trace_writer__finish(w, &(struct as_trace_end){ .events = 2 }), 0);
	trace_writer__free(w);
	struct trace_reader *r = trace_reader__open(path, err, sizeof(err));
	CHECK(r != NULL);
	if (r) {
		CHECK_EQ_U64(trace_reader__meta(r)->format_version, AS_TRACE_FORMAT_VERSION);
		CHECK_EQ_U64(trace_reader__next(r, &ev), 1);
		CHECK_EQ_U64(trace_reader__next(r, &ev), 1);
		CHECK_EQ_U64(ev.type, AS_EV_RUNQ);
		CHECK_EQ_U64(ev.tid, 9);
		CHECK_EQ_U64(ev.ts, 2);
		CHECK_EQ_U64(ev.task, 0xa000);
		CHECK_EQ_U64(ev.other, 123456);
		CHECK_EQ_U64(trace_reader__next(r, &ev), 0);
	}
	trace_reader__free(r);
	stamp_version(path, 4);
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

/* Per-thread waits: workers (polled or parked) first, percentiles exact
 * for small values, threads without waits left out. */
static void test_runq_analysis(void)
{
	struct runq *q = runq__new();
	CHECK(q != NULL);
	if (!q)
		return;
	const struct as_event evs[] = {
		{ .type = AS_EV_THREAD, .tid = 1, .ts = 1, .str = "main" },
		{ .type = AS_EV_THREAD, .tid = 2, .ts = 1, .str = "tokio-runtime-w" },
		{ .type = AS_EV_THREAD, .tid = 3, .ts = 1, .str = "quiet" },
		{ .type = AS_EV_POLL_BEGIN, .tid = 2, .ts = 2, .task = A },
		{ .type = AS_EV_RUNQ, .tid = 1, .ts = 3, .other = 100000000 },
		{ .type = AS_EV_RUNQ, .tid = 2, .ts = 3, .task = A, .other = 10 },
		{ .type = AS_EV_RUNQ, .tid = 2, .ts = 4, .other = 20 },
		{ .type = AS_EV_RUNQ, .tid = 2, .ts = 5, .other = 30 },
		{ .type = AS_EV_PARK, .tid = 3, .ts = 6 },
	};
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		CHECK_EQ_U64(runq__add(q, &evs[i]), 0);
	size_t n;
	const struct runq_thread *t = runq__threads(q, &n);
	CHECK_EQ_U64(n, 2);
	if (t && n == 2) {
		CHECK_EQ_U64(t[0].tid, 2);
		CHECK(t[0].worker);
		CHECK_STR(t[0].name, "tokio-runtime-w");
		CHECK_EQ_U64(t[0].count, 3);
		CHECK_EQ_U64(t[0].p50_ns, 20);
		CHECK_EQ_U64(t[0].p99_ns, 30);
		CHECK_EQ_U64(t[0].max_ns, 30);
		CHECK_EQ_U64(t[0].total_ns, 60);
		CHECK_EQ_U64(t[0].in_poll, 1);
		CHECK_EQ_U64(t[1].tid, 1);
		CHECK(!t[1].worker);
		CHECK_EQ_U64(t[1].max_ns, 100000000);
	}
	CHECK_EQ_U64(runq__add(q, NULL), -EINVAL);
	runq__free(q);
	runq__free(NULL);
}

int main(void)
{
	RUN(test_roundtrip_and_v3);
	RUN(test_attribution);
	RUN(test_profile);
	RUN(test_runq_format);
	RUN(test_runq_analysis);
	TEST_MAIN_END();
}
