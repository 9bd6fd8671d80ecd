/* gen_trace: writes a synthetic but realistic trace of N events (default 10
 * million) for benchmarking the readers, the analysis and the exporters
 * (bench/outputs.sh). Shape of a Tokio multi-thread runtime: 2 worker threads
 * each running a worker task whose single poll lasts the trace, user-task
 * polls nested inside it; about LIVE (1000) live tasks, spawned from inside
 * polls and freed when they complete, so addresses are reused; wakes from
 * other tasks' polls, from the I/O driver and the timer while a worker is
 * parked; parks when no task is runnable. Deterministic (fixed seed).
 * LEAKED (default 0) more tasks are never freed, spread evenly over the
 * trace: spawned from main, polled once and never seen again, half of them
 * Pending (idle until the end: detached tasks, a recording attached
 * mid-run) and half Ready without their FREE (a lost free event); their
 * 4 events each come on top of EVENTS. For report memory figures
 * (bench/live_tasks.sh).
 * Usage: gen_trace OUT.trace [EVENTS] [LIVE] [LEAKED]
 * Links src/trace/writer.c and its util dependencies only. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/writer.h"

#define NFUT 8
#define MAXLIVE 100000

enum { P_WORKER = 0, P_USER = 1, P_WAKE = P_USER + NFUT, P_SPAWN, P_FREE, P_PARK, NPROBES };

struct task {
	uint64_t header;
	uint64_t id;
	uint16_t probe;
	int state;  /* 0 idle, 1 runnable, 2 running */
};

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static struct trace_writer *w;
static uint64_t now, written, target;
static uint64_t leak_target, leaked;

static void emit(uint8_t type, uint8_t flags, uint16_t probe, uint32_t tid, uint64_t task,
		 uint64_t other, const char *str)
{
	struct as_event ev = { .type = type, .flags = flags, .probe = probe, .tid = tid,
			       .ts = now, .task = task, .other = other, .str = str };
	int err = trace_writer__write(w, &ev);

	if (err) {
		fprintf(stderr, "gen_trace: write: %s\n", strerror(-err));
		exit(1);
	}
	written++;
	now += 200 + rnd(3000); /* 0.2 .. 3.2 us between events */
}

/* A never-freed task on thread tid (a worker, inside its loop's poll). */
static void emit_leak(uint32_t tid)
{
	uint64_t h = 0x600000000000ULL + leaked * 0x400;
	uint16_t probe = (uint16_t)(P_USER + leaked % NFUT);

	emit(AS_EV_SPAWN, 0, P_SPAWN, 1000, 0, (uint64_t)(100 + leaked % 7) << 32 | 5,
	     "src/detached.rs");
	emit(AS_EV_WAKE, 0, P_WAKE, 1000, h, 0, NULL);
	emit(AS_EV_POLL_BEGIN, 0, probe, tid, h, 1000000 + leaked, NULL);
	emit(AS_EV_POLL_END, leaked % 2 ? AS_POLL_READY : 0, probe, tid, h, 0, NULL);
	leaked++;
}

int main(int argc, char **argv)
{
	static struct task tasks[MAXLIVE];
	static uint32_t runq[MAXLIVE], idle[MAXLIVE];
	static uint64_t free_headers[MAXLIVE];
	struct as_probe probes[NPROBES] = { 0 };
	char *futs[NFUT];
	uint32_t n_tasks = 0, n_run = 0, n_idle = 0, n_free = 0;
	uint32_t live_target, tids[2] = { 1001, 1002 };
	uint64_t workers[2] = { 0x7f0000001000ULL, 0x7f0000002000ULL };
	uint64_t next_header = 0x560000000000ULL, next_id = 3;
	bool parked[2] = { false, false };

	if (argc < 2) {
		fprintf(stderr, "usage: gen_trace OUT.trace [EVENTS] [LIVE] [LEAKED]\n");
		return 2;
	}
	target = argc > 2 ? strtoull(argv[2], NULL, 10) : 10000000ULL;
	live_target = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 1000;
	if (live_target < 1 || live_target > MAXLIVE / 2)
		live_target = 1000;
	leak_target = argc > 4 ? strtoull(argv[4], NULL, 10) : 0;

	probes[P_WORKER] = (struct as_probe){ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll",
		.future = "tokio::runtime::blocking::task::BlockingTask<tokio::runtime::scheduler::"
			  "multi_thread::worker::{impl#0}::launch::{closure#0}>" };
	for (int i = 0; i < NFUT; i++) {
		if (asprintf(&futs[i], "bench::service::handler_%d::{async_fn_env#0}", i) < 0)
			return 1;
		probes[P_USER + i] = (struct as_probe){ .role = AS_ROLE_POLL,
			.symbol = "tokio::runtime::task::raw::poll", .future = futs[i] };
	}
	probes[P_WAKE] = (struct as_probe){ .role = AS_ROLE_WAKE, .symbol = "schedule" };
	probes[P_SPAWN] = (struct as_probe){ .role = AS_ROLE_SPAWN, .symbol = "spawn" };
	probes[P_FREE] = (struct as_probe){ .role = AS_ROLE_FREE, .symbol = "dealloc" };
	probes[P_PARK] = (struct as_probe){ .role = AS_ROLE_PARK, .symbol = "park" };
	struct as_trace_meta meta = {
		.pid = 1000, .target = "/bench/synthetic-server", .build_id = "", .runtime = "tokio",
		.cmdline = "synthetic-server", .clock_mono_ns = 1000000000000ULL,
		.clock_real_ns = 1700000000000000000ULL, .probes = probes, .n_probes = NPROBES,
	};
	now = meta.clock_mono_ns + 1000;
	w = trace_writer__new(argv[1], &meta);
	if (!w) {
		fprintf(stderr, "gen_trace: cannot create %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	emit(AS_EV_THREAD, 0, 0, 1000, 0, 0, "synthetic-serv");
	for (int i = 0; i < 2; i++) {
		emit(AS_EV_THREAD, 0, 0, tids[i], 0, 0, "tokio-runtime-w");
		emit(AS_EV_WAKE, 0, P_WAKE, 1000, workers[i], 0, NULL);
		emit(AS_EV_POLL_BEGIN, 0, P_WORKER, tids[i], workers[i], (uint64_t)i + 1, NULL);
	}
	while (written - 4 * leaked < target) {
		int th = (int)rnd(2);
		uint32_t tid = tids[th];

		/* leaked tasks at an even rate: leaked / LEAKED = written / EVENTS */
		while (leaked < leak_target &&
		       (double)leaked < (double)leak_target * (double)(written - 4 * leaked) / (double)target)
			emit_leak(tid);

		if (n_tasks < live_target && rnd(4) == 0) {
			/* spawned from main (block_on) or from a poll below */
			uint64_t h = n_free ? free_headers[--n_free] : (next_header += 0x400);
			struct task *t = &tasks[n_tasks];

			*t = (struct task){ .header = h, .id = next_id++, .probe = (uint16_t)(P_USER + rnd(NFUT)),
					    .state = 1 };
			emit(AS_EV_SPAWN, 0, P_SPAWN, 1000, 0, (uint64_t)(20 + rnd(50)) << 32 | 9,
			     "src/server.rs");
			emit(AS_EV_WAKE, 0, P_WAKE, 1000, h, 0, NULL);
			runq[n_run++] = n_tasks++;
			continue;
		}
		if (!n_run) {
			/* nothing runnable: park, the driver wakes idle tasks, unpark */
			if (!parked[th]) {
				emit(AS_EV_PARK, 0, P_PARK, tid, 0, 0, NULL);
				parked[th] = true;
			}
			now += rnd(50000);
			for (uint32_t k = 1 + rnd(4); k-- && n_idle;) {
				uint32_t j = rnd(n_idle), ti = idle[j];

				idle[j] = idle[--n_idle];
				tasks[ti].state = 1;
				runq[n_run++] = ti;
				emit(AS_EV_WAKE, rnd(2) ? AS_WAKE_IO : AS_WAKE_TIMER, P_WAKE, tid,
				     tasks[ti].header, workers[th], NULL);
			}
			emit(AS_EV_UNPARK, 0, P_PARK, tid, 0, 0, NULL);
			parked[th] = false;
			continue;
		}
		/* poll the oldest-ish runnable task on this worker */
		uint32_t qi = rnd(n_run < 4 ? n_run : 4), ti = runq[qi];
		struct task *t = &tasks[ti];

		runq[qi] = runq[--n_run];
		if (parked[th]) {
			emit(AS_EV_UNPARK, 0, P_PARK, tid, 0, 0, NULL);
			parked[th] = false;
		}
		t->state = 2;
		emit(AS_EV_POLL_BEGIN, 0, t->probe, tid, t->header, t->id, NULL);
		now += rnd(20000); /* poll body: up to 20 us */
		if (n_idle && rnd(3) == 0) { /* wakes another task (channel send) */
			uint32_t j = rnd(n_idle), wi = idle[j];

			idle[j] = idle[--n_idle];
			tasks[wi].state = 1;
			runq[n_run++] = wi;
			emit(AS_EV_WAKE, 0, P_WAKE, tid, tasks[wi].header, t->header, NULL);
		}
		bool self_wake = rnd(10) == 0;
		if (self_wake)
			emit(AS_EV_WAKE, 0, P_WAKE, tid, t->header, t->header, NULL);
		bool ready = !self_wake && rnd(12) == 0;

		emit(AS_EV_POLL_END, ready ? AS_POLL_READY : 0, t->probe, tid, t->header, 0, NULL);
		if (ready) {
			emit(AS_EV_FREE, 0, P_FREE, tid, t->header, 0, NULL);
			free_headers[n_free++] = t->header;
			/* move the last task into slot ti, fixing its queue entry */
			uint32_t last = --n_tasks;

			if (ti != last) {
				tasks[ti] = tasks[last];
				for (uint32_t k = 0; k < n_run; k++)
					if (runq[k] == last)
						runq[k] = ti;
				for (uint32_t k = 0; k < n_idle; k++)
					if (idle[k] == last)
						idle[k] = ti;
			}
		} else if (self_wake) {
			t->state = 1;
			runq[n_run++] = ti;
		} else {
			t->state = 0;
			idle[n_idle++] = ti;
		}
	}
	while (leaked < leak_target)
		emit_leak(tids[0]);
	for (int i = 0; i < 2; i++)
		emit(AS_EV_POLL_END, AS_POLL_READY, P_WORKER, tids[i], workers[i], 0, NULL);
	struct as_trace_end end = { .end_ns = now };
	int err = trace_writer__finish(w, &end);

	trace_writer__free(w);
	for (int i = 0; i < NFUT; i++)
		free(futs[i]);
	if (err) {
		fprintf(stderr, "gen_trace: finish: %s\n", strerror(-err));
		return 1;
	}
	printf("%llu events, %llu never-freed tasks, %.1f s of trace\n",
	       (unsigned long long)written, (unsigned long long)leaked,
	       (double)(now - meta.clock_mono_ns) / 1e9);
	return 0;
}
