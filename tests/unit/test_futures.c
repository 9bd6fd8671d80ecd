/* Future-level analysis (src/analysis/futures.c) on synthetic event streams
 * of known shape: exact self times and folded lines of the on-CPU graph, the
 * await chain of a select-like poll, wait weights, resynchronisation after
 * lost events (each kind counted), frames outside tasks, task polls nested in
 * frames, runtime worker tasks, task seqs agreeing with analysis/tasks.c;
 * and the outputs that show them (folded writer, text and JSON reports,
 * Perfetto slices), which must not change for traces without futures. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/futures.h"
#include "analysis/tasks.h"
#include "harness.h"
#include "output/folded.h"
#include "output/perfetto.h"
#include "output/report.h"
#include "trace/event.h"

/* probe indexes */
enum { P_POLL_H, P_POLL_S, F_HANDLER, F_LEVEL1, F_LEVEL2, F_A, F_B, F_COMPUTE, P_WAKE, P_WORKER,
       N_PROBES };

static uint32_t aw_handler[] = { 12, 14 }, aw_level1[] = { 22 }, aw_level2[] = { 33 },
		aw_a[] = { 41 }, aw_b[] = { 51 };

static struct as_probe probes[N_PROBES] = {
	[P_POLL_H] = { .role = AS_ROLE_POLL, .addr = 0x1000, .symbol = "tokio::runtime::task::raw::poll",
		       .future = "app::handler::{async_fn_env#0}" },
	[P_POLL_S] = { .role = AS_ROLE_POLL, .addr = 0x1100, .symbol = "tokio::runtime::task::raw::poll",
		       .future = "app::sel::{async_fn_env#0}" },
	[F_HANDLER] = { .role = AS_ROLE_FUTURE, .addr = 0x2000, .symbol = "app::handler::{{closure}}",
			.future = "app::handler", .src_file = "/src/app/src/main.rs", .src_line = 10,
			.n_awaits = 2, .await_lines = aw_handler, .state_off = 8 },
	[F_LEVEL1] = { .role = AS_ROLE_FUTURE, .addr = 0x2100, .symbol = "app::level1::{{closure}}",
		       .future = "app::level1", .src_file = "/src/app/src/main.rs", .src_line = 20,
		       .n_awaits = 1, .await_lines = aw_level1, .state_off = 8 },
	[F_LEVEL2] = { .role = AS_ROLE_FUTURE, .addr = 0x2200, .symbol = "app::level2::{{closure}}",
		       .future = "app::level2", .src_file = "/src/app/src/x.rs", .src_line = 30,
		       .n_awaits = 1, .await_lines = aw_level2, .state_off = 8 },
	[F_A] = { .role = AS_ROLE_FUTURE, .addr = 0x2300, .symbol = "app::a::{{closure}}",
		  .future = "app::a", .src_file = "/src/app/src/main.rs", .src_line = 40,
		  .n_awaits = 1, .await_lines = aw_a, .state_off = 8 },
	[F_B] = { .role = AS_ROLE_FUTURE, .addr = 0x2400, .symbol = "app::b::{{closure}}",
		  .future = "app::b", .src_file = "/src/app/src/main.rs", .src_line = 50,
		  .n_awaits = 1, .await_lines = aw_b, .state_off = 8 },
	[F_COMPUTE] = { .role = AS_ROLE_FUTURE, .addr = 0x2500, .symbol = "app::compute",
			.state_off = -1 },
	[P_WAKE] = { .role = AS_ROLE_WAKE, .addr = 0x3000, .symbol = "tokio::runtime::task::raw::wake" },
	[P_WORKER] = { .role = AS_ROLE_POLL, .addr = 0x1200, .symbol = "tokio::runtime::task::raw::poll",
		       .future = "tokio::runtime::blocking::task::BlockingTask<worker>" },
};
static const struct as_trace_meta meta = {
	.format_version = 7, .pid = 9, .target = "/bin/app", .build_id = "", .runtime = "tokio",
	.cmdline = "app", .probes = probes, .n_probes = N_PROBES,
};

#define TID 100
#define TASK_A 0xa000
#define TASK_B 0xb000
#define TASK_C 0xc000
#define TASK_W 0xf000

/* ---- stream builders ---- */

static struct as_event evs[256];
static size_t n_evs;

static void put(struct as_event e)
{
	if (n_evs < sizeof(evs) / sizeof(evs[0]))
		evs[n_evs++] = e;
}

static void thread(uint32_t tid, uint64_t ts, const char *name)
{
	put((struct as_event){ .type = AS_EV_THREAD, .tid = tid, .ts = ts, .str = name });
}

static void wake(uint32_t tid, uint64_t ts, uint64_t task)
{
	put((struct as_event){ .type = AS_EV_WAKE, .probe = P_WAKE, .tid = tid, .ts = ts, .task = task });
}

static void poll_begin(uint32_t tid, uint64_t ts, uint64_t task, uint16_t probe)
{
	put((struct as_event){ .type = AS_EV_POLL_BEGIN, .probe = probe, .tid = tid, .ts = ts,
			       .task = task });
}

static void poll_end(uint32_t tid, uint64_t ts, uint64_t task, bool ready)
{
	put((struct as_event){ .type = AS_EV_POLL_END, .tid = tid, .ts = ts, .task = task,
			       .flags = ready ? AS_POLL_READY : 0 });
}

static void enter(uint32_t tid, uint64_t ts, uint64_t task, uint16_t probe, uint32_t depth)
{
	put((struct as_event){ .type = AS_EV_FUTURE_ENTER, .probe = probe, .tid = tid, .ts = ts,
			       .task = task, .other = AS_FUT_OTHER(depth, 0) });
}

/* Returned Pending suspended at await point ap (ap < 0: state not read, the
 * flag only), Ready (ap == READY_STATE: by __state Returned; READY_FLAG: by
 * the flag), or with no outcome (UNKNOWN). */
#define READY_STATE (-10)
#define READY_FLAG (-11)
#define UNKNOWN (-12)
#define PENDING_FLAG (-1)
static void leave(uint32_t tid, uint64_t ts, uint64_t task, uint16_t probe, uint32_t depth, int ap)
{
	struct as_event e = { .type = AS_EV_FUTURE_EXIT, .probe = probe, .tid = tid, .ts = ts,
			      .task = task };

	if (ap == READY_STATE)
		e.other = AS_FUT_OTHER(depth, 2);            /* __state 1 Returned, + 1 */
	else if (ap == READY_FLAG)
		e.other = AS_FUT_OTHER(depth, 0), e.flags = AS_FUTURE_READY;
	else if (ap == UNKNOWN)
		e.other = AS_FUT_OTHER(depth, 0);
	else if (ap == PENDING_FLAG)
		e.other = AS_FUT_OTHER(depth, 0), e.flags = AS_FUTURE_PENDING;
	else
		e.other = AS_FUT_OTHER(depth, (uint32_t)ap + 4), e.flags = AS_FUTURE_PENDING;
	put(e);
}

/* Runs the stream through a new analysis, finished at end_ns. */
static struct futures *run(const struct futures_opts *o, uint64_t end_ns)
{
	struct futures *f = futures__new(&meta, o);

	CHECK(f != NULL);
	if (!f)
		return NULL;
	for (size_t i = 0; i < n_evs; i++)
		CHECK_EQ_U64(futures__add(f, &evs[i]), 0);
	CHECK_EQ_U64(futures__finish(f, end_ns), 0);
	return f;
}

/* The graph's lines as "a;b;c N\n" text (caller frees). */
static char *folded(const struct futures *f, enum futures_graph g)
{
	size_t n, len = 0;
	const struct futures_stack *s = futures__stacks(f, g, &n);
	char *buf = NULL;
	FILE *m = open_memstream(&buf, &len);

	for (size_t i = 0; m && i < n; i++) {
		for (uint32_t j = 0; j < s[i].n; j++)
			fprintf(m, "%s%s", j ? ";" : "", s[i].frames[j]);
		fprintf(m, " %llu\n", (unsigned long long)s[i].ns);
	}
	if (m)
		fclose(m);
	return buf;
}

static const struct futures_fn *fn_named(const struct futures *f, const char *name)
{
	size_t n;
	const struct futures_fn *fn = futures__fns(f, &n);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(fn[i].name, name))
			return &fn[i];
	return NULL;
}

/* handler -> level1 -> level2, Pending at every level, then Ready: exact
 * self times, the root's own time, the wait chain with the leaf's .await. */
static void nested_stream(void)
{
	n_evs = 0;
	thread(TID, 1, "tokio-runtime-w");
	wake(TID, 5, TASK_A);
	poll_begin(TID, 100, TASK_A, P_POLL_H);
	enter(TID, 110, TASK_A, F_HANDLER, 0);
	enter(TID, 120, TASK_A, F_LEVEL1, 1);
	enter(TID, 130, TASK_A, F_LEVEL2, 2);
	leave(TID, 180, TASK_A, F_LEVEL2, 2, 0);
	leave(TID, 200, TASK_A, F_LEVEL1, 1, 0);
	leave(TID, 210, TASK_A, F_HANDLER, 0, 1);
	poll_end(TID, 220, TASK_A, false);
	wake(TID, 500, TASK_A);
	poll_begin(TID, 1000, TASK_A, P_POLL_H);
	enter(TID, 1010, TASK_A, F_HANDLER, 0);
	enter(TID, 1020, TASK_A, F_LEVEL1, 1);
	leave(TID, 1100, TASK_A, F_LEVEL1, 1, READY_FLAG);
	leave(TID, 1110, TASK_A, F_HANDLER, 0, READY_STATE);
	poll_end(TID, 1120, TASK_A, true);
}

static void test_nested_self_times(void)
{
	nested_stream();
	struct futures *f = run(NULL, 2000);
	if (!f)
		return;
	char *on = folded(f, FUTURES_ONCPU), *wt = folded(f, FUTURES_WAIT);

	CHECK_STR(on, "app::handler 40\n"
		      "app::handler;app::handler 40\n"
		      "app::handler;app::handler;app::level1 110\n"
		      "app::handler;app::handler;app::level1;app::level2 50\n");
	CHECK_STR(wt, "app::handler;app::handler;app::level1;app::level2 (x.rs:33) 780\n");
	const struct futures_summary *s = futures__summary(f);
	CHECK_EQ_U64(s->oncpu_ns, 240); /* = the task's busy time */
	CHECK_EQ_U64(s->wait_ns, 780);
	CHECK_EQ_U64(s->enters, 5);
	CHECK_EQ_U64(s->exits, 5);
	CHECK_EQ_U64(s->frames, 5);
	CHECK_EQ_U64(s->ready, 2);
	CHECK_EQ_U64(s->pending, 3);
	CHECK_EQ_U64(s->exits_lost + s->entries_lost + s->unmatched_exits + s->bad + s->open_at_end, 0);
	CHECK_EQ_U64(s->parked_tasks, 0); /* completed */
	const struct futures_fn *h = fn_named(f, "app::handler"), *l1 = fn_named(f, "app::level1"),
		*l2 = fn_named(f, "app::level2");
	CHECK(h && l1 && l2);
	if (h && l1 && l2) {
		CHECK_EQ_U64(h->polls, 2);
		CHECK_EQ_U64(h->ready, 1);
		CHECK_EQ_U64(h->pending, 1);
		CHECK_EQ_U64(h->total_ns, 200);
		CHECK_EQ_U64(h->self_ns, 40);
		CHECK_EQ_U64(h->max_ns, 100);
		CHECK_STR(h->file, "/src/app/src/main.rs");
		CHECK_EQ_U64(h->line, 10);
		CHECK_EQ_U64(l1->polls, 2);
		CHECK_EQ_U64(l1->total_ns, 160);
		CHECK_EQ_U64(l1->self_ns, 110);
		CHECK_EQ_U64(l1->max_ns, 80);
		CHECK_EQ_U64(l2->polls, 1);
		CHECK_EQ_U64(l2->pending, 1);
		CHECK_EQ_U64(l2->self_ns, 50);
	}
	size_t n;
	const struct futures_fn *fns = futures__fns(f, &n);
	CHECK_EQ_U64(n, 3);
	if (n == 3) /* most self time first */
		CHECK_STR(fns[0].name, "app::level1");
	free(on);
	free(wt);
	futures__free(f);

	/* --lines: every frame with its file:line */
	struct futures_opts o = { .lines = true };
	f = run(&o, 2000);
	on = folded(f, FUTURES_ONCPU);
	wt = folded(f, FUTURES_WAIT);
	CHECK_STR(on, "app::handler 40\n"
		      "app::handler;app::handler (main.rs:10) 40\n"
		      "app::handler;app::handler (main.rs:10);app::level1 (main.rs:20) 110\n"
		      "app::handler;app::handler (main.rs:10);app::level1 (main.rs:20);app::level2 (x.rs:30) 50\n");
	CHECK_STR(wt, "app::handler;app::handler (main.rs:14);app::level1 (main.rs:22);"
		      "app::level2 (x.rs:33) 780\n");
	free(on);
	free(wt);
	futures__free(f);
}

/* opts.per_task (export --format pprof): two tasks of one root future keep
 * their stacks apart, each naming its task; merged by root future, the same
 * lines and weights as without it */
static void test_per_task(void)
{
	n_evs = 0;
	thread(TID, 1, "tokio-runtime-w");
	wake(TID, 5, TASK_A);
	wake(TID, 6, TASK_B);
	poll_begin(TID, 100, TASK_A, P_POLL_H);
	enter(TID, 110, TASK_A, F_HANDLER, 0);
	leave(TID, 150, TASK_A, F_HANDLER, 0, 0);
	poll_end(TID, 160, TASK_A, false);
	poll_begin(TID, 200, TASK_B, P_POLL_H);
	enter(TID, 210, TASK_B, F_HANDLER, 0);
	leave(TID, 280, TASK_B, F_HANDLER, 0, 1);
	poll_end(TID, 290, TASK_B, false);

	struct futures *f = run(&(struct futures_opts){ .per_task = true }, 1000);
	if (!f)
		return;
	size_t n;
	const struct futures_stack *st = futures__stacks(f, FUTURES_ONCPU, &n);
	uint64_t a = 0, b = 0;
	for (size_t i = 0; i < n; i++) {
		CHECK(st[i].task != NULL);
		if (st[i].task && !strcmp(st[i].task, "~1"))
			a += st[i].ns;
		else if (st[i].task && !strcmp(st[i].task, "~2"))
			b += st[i].ns;
	}
	/* (no Tokio id in the stream: the tasks are ~1 and ~2, by seq) */
	CHECK_EQ_U64(a, 60);    /* A's poll: 10 its own, 40 in handler, 10 after */
	CHECK_EQ_U64(b, 90);
	st = futures__stacks(f, FUTURES_WAIT, &n);
	CHECK_EQ_U64(n, 2);     /* each parked to the end, at its own .await */
	for (size_t i = 0; i < n; i++)
		CHECK(st[i].task && (!strcmp(st[i].task, "~1") ? st[i].ns == 840 :
				     !strcmp(st[i].task, "~2") && st[i].ns == 710));
	futures__free(f);

	/* by root future: one graph for both, no task named */
	f = run(NULL, 1000);
	if (!f)
		return;
	char *on = folded(f, FUTURES_ONCPU);
	CHECK_STR(on, "app::handler 40\napp::handler;app::handler 110\n");
	st = futures__stacks(f, FUTURES_ONCPU, &n);
	for (size_t i = 0; i < n; i++)
		CHECK(st[i].task == NULL);
	free(on);
	futures__free(f);
}

/* A select-like future polls a (Pending) then b (Pending): the chain is the
 * last one polled, b. A child returning Ready, or with no recorded outcome
 * (a --probe function), after a Pending one does not replace it. The task,
 * never woken, is parked at the end with that chain. */
static void test_select_chain(void)
{
	n_evs = 0;
	thread(TID, 1, "w");
	wake(TID, 2, TASK_B);
	poll_begin(TID, 10, TASK_B, P_POLL_S);
	enter(TID, 11, TASK_B, F_HANDLER, 0);
	enter(TID, 12, TASK_B, F_A, 1);
	leave(TID, 14, TASK_B, F_A, 1, 0);
	enter(TID, 15, TASK_B, F_B, 1);
	leave(TID, 18, TASK_B, F_B, 1, 0);
	leave(TID, 20, TASK_B, F_HANDLER, 0, 0);
	poll_end(TID, 21, TASK_B, false);
	/* second poll: a Pending, then b Ready, then compute (unknown) */
	wake(TID, 30, TASK_B);
	poll_begin(TID, 100, TASK_B, P_POLL_S);
	enter(TID, 101, TASK_B, F_HANDLER, 0);
	enter(TID, 102, TASK_B, F_A, 1);
	leave(TID, 103, TASK_B, F_A, 1, 0);
	enter(TID, 104, TASK_B, F_B, 1);
	leave(TID, 105, TASK_B, F_B, 1, READY_FLAG);
	enter(TID, 106, TASK_B, F_COMPUTE, 1);
	leave(TID, 107, TASK_B, F_COMPUTE, 1, UNKNOWN);
	leave(TID, 110, TASK_B, F_HANDLER, 0, 0);
	poll_end(TID, 111, TASK_B, false);

	struct futures *f = run(NULL, 1111);
	if (!f)
		return;
	char *wt = folded(f, FUTURES_WAIT);

	/* first wait: 21 -> 100 on b; second: 111 -> the end (1111) on a */
	CHECK_STR(wt, "app::sel;app::handler;app::a (main.rs:41) 1000\n"
		      "app::sel;app::handler;app::b (main.rs:51) 79\n");
	size_t n;
	const struct futures_parked *p = futures__parked(f, &n);
	CHECK_EQ_U64(n, 1);
	if (n == 1) {
		CHECK_EQ_U64(p->seq, 1);
		CHECK_STR(p->name, "app::sel");
		CHECK_EQ_U64(p->since_ns, 111);
		CHECK_EQ_U64(p->waiting_ns, 1000);
		CHECK_EQ_U64(p->n_chain, 2);
		if (p->n_chain == 2) {
			CHECK_STR(p->chain[0].name, "app::handler");
			CHECK_STR(p->chain[0].file, "/src/app/src/main.rs");
			CHECK_EQ_U64(p->chain[0].line, 12);
			CHECK(p->chain[0].at_await);
			CHECK_STR(p->chain[1].name, "app::a");
			CHECK_EQ_U64(p->chain[1].line, 41);
		}
	}
	CHECK(futures__parked_task(f, 1) == p);
	CHECK(futures__parked_task(f, 2) == NULL);
	const struct futures_fn *c = fn_named(f, "app::compute");
	CHECK(c && c->unknown == 1 && c->file == NULL);
	CHECK_EQ_U64(futures__summary(f)->unknown, 1);
	free(wt);
	futures__free(f);
}

/* Pending known only from the flag (state not read): the await line is
 * unknown, the chain gives the function's line, not flagged as an await. */
static void test_chain_without_state(void)
{
	n_evs = 0;
	wake(TID, 2, TASK_B);
	poll_begin(TID, 10, TASK_B, P_POLL_S);
	enter(TID, 11, TASK_B, F_LEVEL2, 0);
	leave(TID, 12, TASK_B, F_LEVEL2, 0, PENDING_FLAG);
	poll_end(TID, 13, TASK_B, false);
	struct futures *f = run(NULL, 113);
	if (!f)
		return;
	char *wt = folded(f, FUTURES_WAIT);
	CHECK_STR(wt, "app::sel;app::level2 (x.rs:30) 100\n");
	size_t n;
	const struct futures_parked *p = futures__parked(f, &n);
	CHECK(n == 1 && p->n_chain == 1 && p->chain[0].line == 30 && !p->chain[0].at_await);
	free(wt);
	futures__free(f);
}

/* Lost events: missing EXITs (found by a shallower ENTER, a shallower EXIT,
 * the poll's end), a missing ENTER (depth gap), EXITs without a frame, and
 * events of a probe that is no future; each counted, stacks kept right. */
static void test_resync(void)
{
	n_evs = 0;
	thread(TID, 1, "w");
	leave(TID, 5, 0, F_LEVEL2, 4, 0);           /* entered before the recording */
	wake(TID, 6, TASK_C);
	poll_begin(TID, 10, TASK_C, P_POLL_H);
	enter(TID, 10, TASK_C, F_HANDLER, 0);
	enter(TID, 20, TASK_C, F_LEVEL1, 1);
	enter(TID, 30, TASK_C, F_LEVEL2, 2);
	/* EXITs of level2 and level1 lost */
	enter(TID, 60, TASK_C, F_LEVEL1, 1);        /* closes level2 and level1 at 30 */
	leave(TID, 70, TASK_C, F_LEVEL1, 1, 0);
	leave(TID, 80, TASK_C, F_HANDLER, 0, 0);
	poll_end(TID, 90, TASK_C, false);

	poll_begin(TID, 100, TASK_C, P_POLL_H);
	enter(TID, 100, TASK_C, F_HANDLER, 0);
	enter(TID, 110, TASK_C, F_LEVEL2, 2);       /* ENTER of level1 lost */
	leave(TID, 120, TASK_C, F_LEVEL2, 2, 0);
	leave(TID, 130, TASK_C, F_LEVEL1, 1, 0);    /* no frame at depth 1 */
	leave(TID, 140, TASK_C, F_HANDLER, 0, 0);
	put((struct as_event){ .type = AS_EV_FUTURE_ENTER, .probe = P_WAKE, .tid = TID, .ts = 141 });
	put((struct as_event){ .type = AS_EV_FUTURE_ENTER, .probe = 999, .tid = TID, .ts = 141 });
	poll_end(TID, 150, TASK_C, false);

	poll_begin(TID, 200, TASK_C, P_POLL_H);
	enter(TID, 200, TASK_C, F_HANDLER, 0);
	enter(TID, 210, TASK_C, F_LEVEL1, 1);
	leave(TID, 220, TASK_C, F_LEVEL1, 1, 0);
	/* EXIT of handler lost: the poll's end closes it at 220 */
	poll_end(TID, 240, TASK_C, false);

	poll_begin(TID, 300, TASK_C, P_POLL_H);
	enter(TID, 300, TASK_C, F_HANDLER, 0);
	enter(TID, 310, TASK_C, F_A, 1);
	leave(TID, 320, TASK_C, F_B, 1, 0);         /* b's ENTER and a's EXIT lost */
	leave(TID, 330, TASK_C, F_HANDLER, 0, 0);
	poll_end(TID, 340, TASK_C, true);

	struct futures *f = run(NULL, 400);
	if (!f)
		return;
	const struct futures_summary *s = futures__summary(f);
	CHECK_EQ_U64(s->exits_lost, 4);       /* level2, level1, handler, a */
	CHECK_EQ_U64(s->entries_lost, 1);
	CHECK_EQ_U64(s->unmatched_exits, 3);  /* before the recording, level1, b */
	CHECK_EQ_U64(s->bad, 2);
	CHECK_EQ_U64(s->open_at_end, 0);
	char *on = folded(f, FUTURES_ONCPU);
	/* poll 1: handler 10..80 (child 10 + 0 + 10) self 50; level1 cut 20..30
	 * self 10, level2 cut 30..30, level1 60..70 self 10; root 10..90 self 10.
	 * poll 2: handler 100..140 self 30, level2 (under handler: its parent was
	 * lost) 110..120 self 10; root 100..150 self 10. poll 3: handler cut at
	 * 220 (200..220, child 10) self 10, level1 10, root 240 - 220 = 20. poll
	 * 4: a cut at 310 (self 0), handler 300..330 self 30, root 10. */
	CHECK_STR(on, "app::handler 50\n"
		      "app::handler;app::handler 120\n"
		      "app::handler;app::handler;app::level1 30\n"
		      "app::handler;app::handler;app::level2 10\n");
	CHECK_EQ_U64(s->oncpu_ns, 80 + 50 + 40 + 40);
	free(on);
	futures__free(f);
}

/* Frames outside any task poll go to "(no task) thread NAME"; a task polled
 * inside such a frame (LocalSet::run_until) takes its time out of the
 * frame's self time and roots its own frames at the task. */
static void test_outside_and_nested_poll(void)
{
	n_evs = 0;
	thread(1, 1, "main");
	enter(1, 10, 0, F_HANDLER, 0);
	wake(1, 15, TASK_A);
	poll_begin(1, 20, TASK_A, P_POLL_H);
	enter(1, 25, TASK_A, F_LEVEL1, 1);
	leave(1, 35, TASK_A, F_LEVEL1, 1, READY_FLAG);
	poll_end(1, 40, TASK_A, true);
	leave(1, 100, 0, F_HANDLER, 0, 0);
	struct futures *f = run(NULL, 100);
	if (!f)
		return;
	char *on = folded(f, FUTURES_ONCPU);
	CHECK_STR(on, "(no task) thread main;app::handler 70\n"
		      "app::handler 10\n"
		      "app::handler;app::level1 10\n");
	CHECK_EQ_U64(futures__summary(f)->outside_tasks, 1);
	free(on);
	futures__free(f);
}

/* Tokio's worker loop is polled as a task: its own time is not on-CPU time of
 * a user task, and it never parks in the wait graph; the user task inside is
 * counted as usual. Frames still running at the end close there. */
static void test_worker_task(void)
{
	n_evs = 0;
	thread(TID, 1, "tokio-runtime-w");
	wake(TID, 2, TASK_W);
	poll_begin(TID, 10, TASK_W, P_WORKER);
	wake(TID, 11, TASK_A);
	poll_begin(TID, 20, TASK_A, P_POLL_H);
	enter(TID, 21, TASK_A, F_HANDLER, 0);
	leave(TID, 41, TASK_A, F_HANDLER, 0, 1);
	poll_end(TID, 50, TASK_A, false);
	wake(TID, 60, TASK_A);
	poll_begin(TID, 70, TASK_A, P_POLL_H);
	enter(TID, 75, TASK_A, F_HANDLER, 0);
	struct futures *f = run(NULL, 100);
	if (!f)
		return;
	char *on = folded(f, FUTURES_ONCPU), *wt = folded(f, FUTURES_WAIT);
	CHECK_STR(on, "app::handler 15\n"
		      "app::handler;app::handler 45\n");
	CHECK_STR(wt, "app::handler;app::handler (main.rs:14) 20\n");
	CHECK_EQ_U64(futures__summary(f)->open_at_end, 1);
	size_t n;
	futures__parked(f, &n);
	CHECK_EQ_U64(n, 0); /* running at the end, the worker is not a user task */
	free(on);
	free(wt);
	futures__free(f);
}

/* Seqs follow analysis/tasks.c: an address polled again after Ready, or
 * woken after FREE, is a new task; parked entries name the report's seq. */
static void test_seqs_match_analysis(void)
{
	n_evs = 0;
	thread(TID, 1, "w");
	wake(TID, 2, TASK_A);                       /* seq 1 */
	poll_begin(TID, 10, TASK_A, P_POLL_H);
	poll_end(TID, 20, TASK_A, true);
	poll_begin(TID, 30, TASK_A, P_POLL_H);      /* reused: seq 2 */
	enter(TID, 31, TASK_A, F_HANDLER, 0);
	leave(TID, 32, TASK_A, F_HANDLER, 0, 0);
	poll_end(TID, 40, TASK_A, false);
	put((struct as_event){ .type = AS_EV_FREE, .tid = TID, .ts = 50, .task = TASK_A });
	wake(TID, 60, TASK_A);                      /* seq 3 */
	wake(TID, 61, TASK_B);                      /* seq 4 */
	poll_begin(TID, 70, TASK_A, P_POLL_S);
	enter(TID, 71, TASK_A, F_B, 0);
	leave(TID, 72, TASK_A, F_B, 0, 0);
	poll_end(TID, 80, TASK_A, false);
	poll_begin(TID, 90, TASK_B, P_POLL_H);
	enter(TID, 91, TASK_B, F_A, 0);
	leave(TID, 92, TASK_B, F_A, 0, 0);
	poll_end(TID, 95, TASK_B, false);
	struct futures *f = run(NULL, 200);
	struct analysis *a = analysis__new(&meta);
	CHECK(a != NULL);
	if (!f || !a) {
		futures__free(f);
		analysis__free(a);
		return;
	}
	for (size_t i = 0; i < n_evs; i++)
		CHECK_EQ_U64(analysis__add(a, &evs[i]), 0);
	CHECK_EQ_U64(analysis__finish(a, &(struct as_trace_end){ .end_ns = 200 }), 0);
	size_t n;
	const struct futures_parked *p = futures__parked(f, &n);
	CHECK_EQ_U64(n, 3);
	CHECK_EQ_U64(futures__summary(f)->parked_tasks, 3);
	if (n == 3) {
		/* longest waiting first; seq 2 was dropped (freed) while pending */
		CHECK_EQ_U64(p[0].seq, 3);
		CHECK_EQ_U64(p[1].seq, 4);
		CHECK_EQ_U64(p[2].seq, 2);
		CHECK(p[0].until_end && p[1].until_end && !p[2].until_end);
		CHECK_EQ_U64(p[2].waiting_ns, 10);
		CHECK_EQ_U64(p[2].chain[0].line, 12);
		for (size_t i = 0; i < 2; i++) {
			const struct task_stats *t = analysis__task(a, p[i].seq);
			CHECK(t != NULL);
			if (t)
				CHECK_EQ_U64(t->state, TASK_STATE_IDLE);
		}
		CHECK_EQ_U64(analysis__task(a, 3)->header, TASK_A);
		CHECK_EQ_U64(analysis__task(a, 4)->header, TASK_B);
		CHECK_STR(p[0].chain[0].name, "app::b");
	}
	/* the freed task's wait (40 -> 50) is counted, on its chain */
	char *wt = folded(f, FUTURES_WAIT);
	CHECK_STR(wt, "app::handler;app::a (main.rs:41) 105\n"
		      "app::handler;app::handler (main.rs:12) 10\n"
		      "app::sel;app::b (main.rs:51) 120\n");
	free(wt);
	analysis__free(a);
	futures__free(f);
}

/* Past FUTURES_PARKED_KEEP parked tasks, the longest waits are kept; the
 * count says how many there were. */
static void test_parked_bounded(void)
{
	struct futures *f = futures__new(&meta, NULL);
	const uint64_t n_tasks = FUTURES_PARKED_KEEP + 3;

	CHECK(f != NULL);
	if (!f)
		return;
	for (uint64_t i = 0; i < n_tasks; i++) {
		uint64_t task = 0x100000 + i * 64, ts = 1000 + i * 10;
		struct as_event in[] = {
			{ .type = AS_EV_WAKE, .tid = 1, .ts = ts, .task = task },
			{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = ts + 1, .task = task },
			{ .type = AS_EV_FUTURE_ENTER, .tid = 1, .ts = ts + 2, .task = task,
			  .probe = F_A },
			{ .type = AS_EV_FUTURE_EXIT, .tid = 1, .ts = ts + 3, .task = task,
			  .probe = F_A, .flags = AS_FUTURE_PENDING, .other = AS_FUT_OTHER(0, 4) },
			{ .type = AS_EV_POLL_END, .tid = 1, .ts = ts + 4, .task = task },
		};
		for (size_t k = 0; k < sizeof(in) / sizeof(in[0]); k++)
			CHECK_EQ_U64(futures__add(f, &in[k]), 0);
	}
	CHECK_EQ_U64(futures__finish(f, 1000 + n_tasks * 10), 0);
	size_t n;
	const struct futures_parked *p = futures__parked(f, &n);
	CHECK_EQ_U64(n, FUTURES_PARKED_KEEP);
	CHECK_EQ_U64(futures__summary(f)->parked_tasks, n_tasks);
	if (n == FUTURES_PARKED_KEEP) {
		CHECK_EQ_U64(p[0].seq, 1);               /* the longest wait */
		CHECK_EQ_U64(p[n - 1].seq, FUTURES_PARKED_KEEP); /* the last 3 dropped */
		CHECK_EQ_U64(p[n - 1].n_chain, 1);
		CHECK_STR(p[n - 1].chain[0].name, "app::a");
	}
	CHECK_EQ_U64(futures__summary(f)->wait_stacks, 1);
	futures__free(f);
}

/* The observer sees every frame with its outcome, await line and task, each
 * child inside its parent. */
struct seen {
	struct futures_frame fr[16];
	size_t n;
};

static void on_frame(void *ctx, const struct futures_frame *fr)
{
	struct seen *s = ctx;

	if (s->n < 16)
		s->fr[s->n++] = *fr;
}

static void test_observer(void)
{
	struct seen s = { .n = 0 };
	struct futures_observer obs = { .ctx = &s, .frame = on_frame };
	struct futures_opts o = { .observer = &obs };

	nested_stream();
	struct futures *f = run(&o, 2000);
	if (!f)
		return;
	CHECK_EQ_U64(s.n, 5);
	if (s.n == 5) {
		CHECK_STR(s.fr[0].name, "app::level2");
		CHECK_EQ_U64(s.fr[0].begin, 130);
		CHECK_EQ_U64(s.fr[0].end, 180);
		CHECK_EQ_U64(s.fr[0].await_line, 33);
		CHECK_EQ_U64(s.fr[0].outcome, FUTURES_PENDING);
		CHECK_EQ_U64(s.fr[0].depth, 2);
		CHECK_EQ_U64(s.fr[0].task, 1);
		CHECK_EQ_U64(s.fr[0].tid, TID);
		CHECK_STR(s.fr[2].name, "app::handler");
		CHECK_EQ_U64(s.fr[2].await_line, 14);
		CHECK_EQ_U64(s.fr[2].line, 10);
		CHECK_EQ_U64(s.fr[4].outcome, FUTURES_READY);
		CHECK_EQ_U64(s.fr[4].await_line, 0);
		CHECK(futures__fn(f, s.fr[4].fn) && !strcmp(futures__fn(f, s.fr[4].fn)->name,
							   "app::handler"));
		CHECK(futures__fn(f, 1000) == NULL);
	}
	futures__free(f);
}

/* Misuse and empty input. */
static void test_edges(void)
{
	struct futures *f = futures__new(NULL, NULL);
	size_t n = 7;
	struct as_event e = { .type = AS_EV_FUTURE_ENTER, .tid = 1, .ts = 5 };

	CHECK(f != NULL);
	if (!f)
		return;
	CHECK_EQ_U64(futures__add(NULL, &e), (uint64_t)-EINVAL);
	CHECK_EQ_U64(futures__add(f, NULL), (uint64_t)-EINVAL);
	CHECK_EQ_U64(futures__add(f, &e), 0);
	CHECK(futures__stacks(f, FUTURES_ONCPU, &n) == NULL && n == 0);
	CHECK_EQ_U64(futures__finish(f, 0), 0);
	CHECK_EQ_U64(futures__finish(f, 0), (uint64_t)-EINVAL);
	CHECK_EQ_U64(futures__add(f, &e), (uint64_t)-EINVAL);
	CHECK_EQ_U64(futures__summary(f)->bad, 1);
	futures__stacks(f, FUTURES_WAIT, &n);
	CHECK_EQ_U64(n, 0);
	futures__fns(f, &n);
	CHECK_EQ_U64(n, 0);
	futures__free(f);
	futures__free(NULL);
	CHECK_STR(futures_outcome__str(FUTURES_CUT), "cut short");

	/* two copies of one function (monomorphisations) are one function */
	struct as_probe two[2] = {
		{ .role = AS_ROLE_FUTURE, .addr = 1, .future = "app::g", .src_file = "g.rs", .src_line = 3 },
		{ .role = AS_ROLE_FUTURE, .addr = 2, .future = "app::g", .src_file = "g.rs", .src_line = 3 },
	};
	struct as_trace_meta tm = { .probes = two, .n_probes = 2 };
	const struct as_event in[] = {
		{ .type = AS_EV_FUTURE_ENTER, .tid = 1, .ts = 1, .probe = 0 },
		{ .type = AS_EV_FUTURE_EXIT, .tid = 1, .ts = 2, .probe = 0 },
		{ .type = AS_EV_FUTURE_ENTER, .tid = 1, .ts = 3, .probe = 1 },
		{ .type = AS_EV_FUTURE_EXIT, .tid = 1, .ts = 5, .probe = 1 },
	};
	f = futures__new(&tm, NULL);
	for (size_t i = 0; f && i < 4; i++)
		CHECK_EQ_U64(futures__add(f, &in[i]), 0);
	CHECK(f && futures__finish(f, 5) == 0);
	const struct futures_fn *fn = futures__fns(f, &n);
	CHECK(n == 1 && fn[0].polls == 2 && fn[0].total_ns == 3);
	CHECK_EQ_U64(futures__summary(f)->oncpu_stacks, 1);
	CHECK_EQ_U64(futures__summary(f)->outside_tasks, 2);
	futures__free(f);
}

/* The folded writer: plain "a;b;c N" lines, hostile names made safe. */
static void test_folded_writer(void)
{
	char *buf = NULL;
	size_t len = 0;
	uint64_t lines = 0, total = 0;

	nested_stream();
	struct futures *f = run(NULL, 2000);
	FILE *m = open_memstream(&buf, &len);
	if (!f || !m)
		return;
	CHECK_EQ_U64(folded_futures_write(m, f, FUTURES_ONCPU, &lines, &total), 0);
	CHECK_EQ_U64(folded_futures_write(m, f, FUTURES_WAIT, NULL, NULL), 0);
	fclose(m);
	CHECK_STR(buf, "app::handler 40\n"
		       "app::handler;app::handler 40\n"
		       "app::handler;app::handler;app::level1 110\n"
		       "app::handler;app::handler;app::level1;app::level2 50\n"
		       "app::handler;app::handler;app::level1;app::level2 (x.rs:33) 780\n");
	CHECK_EQ_U64(lines, 4);
	CHECK_EQ_U64(total, 240);
	free(buf);
	futures__free(f);

	/* ';' and control characters in names */
	struct as_probe hp[2] = {
		{ .role = AS_ROLE_POLL, .addr = 1, .symbol = "poll", .future = "a;b\nc" },
		{ .role = AS_ROLE_FUTURE, .addr = 2, .symbol = "x", .future = "<T as F;G>::poll\t" },
	};
	struct as_trace_meta hm = { .probes = hp, .n_probes = 2 };
	f = futures__new(&hm, NULL);
	const struct as_event in[] = {
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 1, .task = 5, .probe = 0 },
		{ .type = AS_EV_FUTURE_ENTER, .tid = 1, .ts = 2, .task = 5, .probe = 1 },
		{ .type = AS_EV_FUTURE_EXIT, .tid = 1, .ts = 9, .task = 5, .probe = 1 },
		{ .type = AS_EV_POLL_END, .tid = 1, .ts = 10, .task = 5, .flags = AS_POLL_READY },
	};
	for (size_t i = 0; f && i < sizeof(in) / sizeof(in[0]); i++)
		CHECK_EQ_U64(futures__add(f, &in[i]), 0);
	CHECK(f && futures__finish(f, 10) == 0);
	buf = NULL;
	m = open_memstream(&buf, &len);
	if (!m || !f) {
		futures__free(f);
		return;
	}
	CHECK_EQ_U64(folded_futures_write(m, f, FUTURES_ONCPU, &lines, NULL), 0);
	fclose(m);
	CHECK_STR(buf, "a,b?c 2\na,b?c;<T as F,G>::poll? 7\n");
	free(buf);
	futures__free(f);
}

/* Runs the analysis of the stream and returns the text or JSON report with
 * (fu) or without the future sections (caller frees). */
static char *report(bool json, bool with_futures, uint64_t end_ns)
{
	struct analysis *a = analysis__new(&meta);
	struct futures *f = futures__new(&meta, NULL);
	struct as_trace_end end = { .end_ns = end_ns, .events = n_evs };
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	CHECK(a && f && m);
	if (a && f && m) {
		for (size_t i = 0; i < n_evs; i++) {
			CHECK_EQ_U64(analysis__add(a, &evs[i]), 0);
			CHECK_EQ_U64(futures__add(f, &evs[i]), 0);
		}
		CHECK_EQ_U64(analysis__finish(a, &end), 0);
		CHECK_EQ_U64(futures__finish(f, end_ns), 0);
		struct report_opts ro = { .futures = with_futures ? f : NULL };
		CHECK_EQ_U64(json ? report_json(m, a, &meta, &end, &ro)
				  : report_text(m, a, &meta, &end, &ro), 0);
	}
	if (m)
		fclose(m);
	analysis__free(a);
	futures__free(f);
	return buf;
}

/* Text and JSON: the functions, the frames lost, each parked task's chain
 * with file:line of its .await; nothing of it without futures. */
static void test_reports(void)
{
	test_select_chain(); /* leaves its stream in evs */
	char *t = report(false, true, 1111), *plain = report(false, false, 1111);
	char *j = report(true, true, 1111), *jplain = report(true, false, 1111);

	CHECK(t && strstr(t, "FUTURES: 7 future polls in 4 functions (record --futures); frames "
			     "lost: 0 exits, 0 entries, 0 exits without entry\n"));
	CHECK(t && strstr(t, "PARKED AT: 1 task parked for good (last poll Pending, never polled "
			     "again), longest waiting first, await chain outermost first\n"));
	/* names as the text shows them: the async fn for its state machine,
	 * columns as wide as the names (16 at least) */
	CHECK(t && strstr(t, "     ~1  app::sel           1.00 us  end of trace\n"));
	CHECK(t && strstr(t, "\n           app::handler     at /src/app/src/main.rs:12\n"));
	CHECK(t && strstr(t, "\n           app::a           at /src/app/src/main.rs:41\n"));
	CHECK(t && strstr(t, "main.rs:40"));
	CHECK(t && strstr(t, "\nTOTALS\n") > strstr(t, "PARKED AT"));
	CHECK(plain && !strstr(plain, "FUTURES") && !strstr(plain, "PARKED AT"));
	/* the rest is the same report */
	if (t && plain)
		CHECK(!strncmp(t, plain, (size_t)(strstr(plain, "\nTOTALS") - plain)));
	CHECK(j && strstr(j, "\"futures\": {"));
	CHECK(j && strstr(j, "\"exits_lost\": 0"));
	CHECK(j && strstr(j, "\"at_await\": true"));
	CHECK(j && strstr(j, "\"until_end\": true"));
	CHECK(j && strstr(j, "\"parked_tasks\": 1"));
	CHECK(j && strstr(j, "\"line\": 41"));
	CHECK(j && strstr(j, "\"wait_stacks\": ["));
	CHECK(j && strstr(j, "\"app::b (main.rs:51)\""));
	CHECK(jplain && !strstr(jplain, "\"futures\""));
	free(t);
	free(plain);
	free(j);
	free(jplain);
}

/* Perfetto: one slice per frame, inside its poll slice and its parent on the
 * thread's track, with the await line. */
static void test_perfetto(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	struct perfetto *p;

	nested_stream();
	p = m ? perfetto__new(m, &meta) : NULL;
	CHECK(p != NULL);
	if (!p) {
		if (m)
			fclose(m);
		free(buf);
		return;
	}
	for (size_t i = 0; i < n_evs; i++)
		CHECK_EQ_U64(perfetto__add(p, &evs[i]), 0);
	CHECK_EQ_U64(perfetto__finish(p, &(struct as_trace_end){ .end_ns = 2000 }, false), 0);
	CHECK_EQ_U64(perfetto__future_slices(p), 5);
	perfetto__free(p);
	fclose(m);
	CHECK(strstr(buf, "\"future_slices\":5"));
	CHECK(strstr(buf, "\"name\":\"app::level2\",\"cat\":\"future\",\"args\":{\"task\":1,"
			  "\"outcome\":\"Pending\",\"fn\":\"/src/app/src/x.rs:30\",\"await\":"
			  "\"/src/app/src/x.rs:33\",\"depth\":2}"));
	/* slices on the thread's track nest: sort by (ts, -dur), check with a stack */
	struct { double ts, end; } sl[32], stack[32];
	size_t n = 0, depth = 0;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		double ts, dur;
		unsigned tid;

		if (!strstr(line, "\"ph\":\"X\"") || (!strstr(line, "\"cat\":\"future\"") &&
						      !strstr(line, "\"cat\":\"poll\"")))
			continue;
		if (sscanf(strstr(line, "\"tid\":"), "\"tid\":%u,\"ts\":%lf,\"dur\":%lf", &tid, &ts,
			   &dur) == 3 && tid == TID && n < 32)
			sl[n].ts = ts, sl[n++].end = ts + dur;
	}
	CHECK_EQ_U64(n, 7); /* 2 polls, 5 frames */
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && (sl[k - 1].ts > sl[k].ts || (sl[k - 1].ts == sl[k].ts &&
							     sl[k - 1].end < sl[k].end)); k--) {
			double t0 = sl[k].ts, t1 = sl[k].end;

			sl[k] = sl[k - 1];
			sl[k - 1].ts = t0, sl[k - 1].end = t1;
		}
	for (size_t i = 0; i < n; i++) {
		while (depth && stack[depth - 1].end <= sl[i].ts)
			depth--;
		if (depth)
			CHECK(sl[i].end <= stack[depth - 1].end + 1e-9);
		stack[depth++] = sl[i];
	}
	free(buf);

	/* without future probes: no future key at all */
	struct as_trace_meta plain = meta;
	plain.n_probes = 2;
	buf = NULL;
	m = open_memstream(&buf, &len);
	p = m ? perfetto__new(m, &plain) : NULL;
	for (size_t i = 0; p && i < n_evs; i++)
		perfetto__add(p, &evs[i]);
	CHECK(p && perfetto__finish(p, NULL, false) == 0);
	perfetto__free(p);
	if (m)
		fclose(m);
	CHECK(buf && !strstr(buf, "future"));
	free(buf);
}

int main(void)
{
	RUN(test_nested_self_times);
	RUN(test_per_task);
	RUN(test_select_chain);
	RUN(test_chain_without_state);
	RUN(test_resync);
	RUN(test_outside_and_nested_poll);
	RUN(test_worker_task);
	RUN(test_seqs_match_analysis);
	RUN(test_parked_bounded);
	RUN(test_observer);
	RUN(test_edges);
	RUN(test_folded_writer);
	RUN(test_reports);
	RUN(test_perfetto);
	TEST_MAIN_END();
}
