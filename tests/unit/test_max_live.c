/* Unit tests for the live-task limit (task_model__set_max_live(),
 * analysis_opts.max_live_tasks): past it the least recently active live
 * tasks are folded into the groups of --max-tasks, exactly that many; the
 * totals (tasks, polls, busy, idle, wakes, the distributions) are what they
 * are without the limit; a task being polled is never folded; a folded
 * task's later events are counted and dropped until its FREE; memory stays
 * flat however many never-freed tasks come; the reports say so. Synthetic
 * event streams, no root. */
#include <errno.h>
#include <stdlib.h>

#include "analysis/live.h"
#include "analysis/task_model.h"
#include "analysis/tasks.h"
#include "harness.h"
#include "output/report.h"

#define P_A 0
#define P_B 1

static struct as_probe probes[] = {
	{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "app::handler::{{closure}}" },
	{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "app::conn::serve::{{closure}}" },
};

static struct as_trace_meta meta = {
	.format_version = 1, .pid = 42, .target = "/bin/app", .build_id = "",
	.runtime = "tokio", .cmdline = "app", .probes = probes, .n_probes = 2,
};

static const char *files[3] = { "src/a.rs", "src/b.rs", "src/c.rs" };

static void add(struct analysis *a, uint8_t type, uint32_t tid, uint64_t ts, uint64_t task,
		uint64_t other, uint16_t probe, uint8_t flags, const char *str)
{
	struct as_event ev = {
		.type = type, .flags = flags, .probe = probe, .tid = tid, .ts = ts,
		.task = task, .other = other, .str = str,
	};
	int err = analysis__add(a, &ev);

	if (err)
		CHECK_EQ_U64(err, 0);
}

static struct analysis *new_limited(size_t max_live)
{
	struct analysis_opts o = { .max_tasks = ANALYSIS_UNLIMITED, .max_live_tasks = max_live };

	return analysis__new_opts(&meta, &o);
}

#define HDR(i) (0x10000ULL + (uint64_t)(i) * 0x100)

/* Task i: spawned on thread 1 (a site of 12 kinds), scheduled, polled on
 * thread 2 (Pending, every fourth Ready without a FREE); every fifth wakes
 * task i - 1 (when Pending) from its poll, which is then polled again. Never a
 * FREE: every task stays live. */
static void never_freed(struct analysis *a, unsigned n, uint64_t *ts)
{
	for (unsigned i = 0; i < n; i++) {
		uint64_t h = HDR(i);
		uint16_t probe = i % 2 ? P_B : P_A;

		*ts += 100;
		add(a, AS_EV_SPAWN, 1, *ts, 0, (uint64_t)(10 + i % 4) << 32 | 5, 0, 0, files[i % 3]);
		add(a, AS_EV_WAKE, 1, *ts + 1, h, 0, 0, 0, NULL);
		add(a, AS_EV_POLL_BEGIN, 2, *ts + 10, h, i + 1, probe, 0, NULL);
		*ts += 10 + 1 + (i * 7919) % 3000;
		if (i % 5 == 0 && i && (i - 1) % 4)
			add(a, AS_EV_WAKE, 2, *ts - 1, HDR(i - 1), h, 0, 0, NULL);
		add(a, AS_EV_POLL_END, 2, *ts, h, 0, probe, i % 4 == 0 ? AS_POLL_READY : 0, NULL);
		if (i % 5 == 0 && i && (i - 1) % 4) {
			uint16_t pp = (i - 1) % 2 ? P_B : P_A;

			add(a, AS_EV_POLL_BEGIN, 2, *ts + 5, HDR(i - 1), i, pp, 0, NULL);
			*ts += 5 + 200;
			add(a, AS_EV_POLL_END, 2, *ts, HDR(i - 1), 0, pp, 0, NULL);
		}
	}
}

struct sums {
	uint64_t tasks, polls, pending, ready, busy, idle, wakes, self_wakes, max_poll;
};

/* Sums over the user-task rows and the groups of a. */
static struct sums sums_of(const struct analysis *a)
{
	struct sums s = { 0 };
	const struct task_stats *t;
	const struct task_group *g;
	size_t n;

	t = analysis__tasks(a, &n);
	for (size_t i = 0; i < n; i++) {
		if (t[i].kind != TASK_KIND_TASK)
			continue;
		s.tasks++;
		s.polls += t[i].polls;
		s.pending += t[i].pending_polls;
		s.ready += t[i].ready_polls;
		s.busy += t[i].busy_ns;
		s.idle += t[i].idle_ns;
		s.wakes += t[i].wakes;
		s.self_wakes += t[i].self_wakes;
		if (t[i].max_poll_ns > s.max_poll)
			s.max_poll = t[i].max_poll_ns;
	}
	g = analysis__groups(a, &n);
	for (size_t i = 0; i < n; i++) {
		s.tasks += g[i].tasks;
		s.polls += g[i].polls;
		s.pending += g[i].pending_polls;
		s.ready += g[i].ready_polls;
		s.busy += g[i].busy_ns;
		s.idle += g[i].idle_ns;
		s.wakes += g[i].wakes;
		s.self_wakes += g[i].self_wakes;
		if (g[i].max_poll_ns > s.max_poll)
			s.max_poll = g[i].max_poll_ns;
	}
	return s;
}

#define N_FOLD 5000
#define LIMIT 100

/* 5000 never-freed tasks under a limit of 100: 4900 folded, the 100 most
 * recently active kept; every total and sum as without the limit. */
static void test_fold_totals(void)
{
	struct analysis *a0 = new_limited(ANALYSIS_UNLIMITED), *a1 = new_limited(LIMIT);
	struct as_trace_end end = { 0 };
	uint64_t ts0 = 1000000, ts1 = 1000000;
	const struct summary *s0, *s1;
	struct analysis_mem mem;
	struct sums x0, x1;
	const struct task_stats *t;
	size_t n, n_edges0, n_edges1;
	uint64_t wakes0 = 0, wakes1 = 0;
	const struct wake_edge *e;

	CHECK(a0 && a1);
	if (!a0 || !a1)
		goto out;
	never_freed(a0, N_FOLD, &ts0);
	never_freed(a1, N_FOLD, &ts1);
	analysis__mem(a1, &mem);
	CHECK_EQ_U64(mem.live_tasks, LIMIT);
	CHECK(mem.rows <= LIMIT);
	end.end_ns = ts1 + 5000000000ULL; /* the open idle times: 5 s more each */
	CHECK_EQ_U64(analysis__finish(a0, &end), 0);
	CHECK_EQ_U64(analysis__finish(a1, &end), 0);
	s0 = analysis__summary(a0);
	s1 = analysis__summary(a1);
	CHECK_EQ_U64(s0->folded_tasks, 0);
	CHECK_EQ_U64(s0->folded_live_tasks, 0);
	CHECK_EQ_U64(s0->max_live_tasks, 0);
	CHECK_EQ_U64(s1->folded_live_tasks, N_FOLD - LIMIT);
	CHECK_EQ_U64(s1->folded_tasks, N_FOLD - LIMIT);
	CHECK_EQ_U64(s1->max_live_tasks, LIMIT);
	CHECK_EQ_U64(s1->folded_events, 0);
	CHECK_EQ_U64(s1->tasks, s0->tasks);
	CHECK_EQ_U64(s1->tasks, N_FOLD);
	CHECK_EQ_U64(s1->user_tasks, s0->user_tasks);
	CHECK_EQ_U64(s1->polls, s0->polls);
	CHECK_EQ_U64(s1->user_polls, s0->user_polls);
	CHECK_EQ_U64(s1->long_polls, s0->long_polls);
	CHECK_EQ_U64(s1->anomalies, s0->anomalies);
	CHECK_EQ_U64(s1->anomalies, 0);
	/* 12 sites x 2 futures, but a site's futures alternate: 12 groups */
	CHECK_EQ_U64(s1->task_groups, 12);
	x0 = sums_of(a0);
	x1 = sums_of(a1);
	CHECK_EQ_U64(x1.tasks, x0.tasks);
	CHECK_EQ_U64(x1.polls, x0.polls);
	CHECK_EQ_U64(x1.pending, x0.pending);
	CHECK_EQ_U64(x1.ready, x0.ready);
	CHECK_EQ_U64(x1.busy, x0.busy);
	CHECK_EQ_U64(x1.idle, x0.idle);
	CHECK_EQ_U64(x1.wakes, x0.wakes);
	CHECK_EQ_U64(x1.self_wakes, x0.self_wakes);
	CHECK_EQ_U64(x1.max_poll, x0.max_poll);
	for (int d = 0; d < DIST__MAX; d++) {
		CHECK_EQ_U64(analysis__dist(a1, d)->count, analysis__dist(a0, d)->count);
		CHECK_EQ_U64(analysis__dist(a1, d)->sum, analysis__dist(a0, d)->sum);
	}
	e = analysis__edges(a0, &n_edges0);
	for (size_t i = 0; i < n_edges0; i++)
		wakes0 += e[i].count;
	e = analysis__edges(a1, &n_edges1);
	for (size_t i = 0; i < n_edges1; i++)
		wakes1 += e[i].count;
	CHECK_EQ_U64(wakes1, wakes0);
	CHECK(n_edges1 < n_edges0);   /* merged into group edges */
	/* the rows kept: the most recently active, all live */
	t = analysis__tasks(a1, &n);
	CHECK_EQ_U64(n, LIMIT);
	for (size_t i = 0; i < n; i++) {
		CHECK(t[i].seq > N_FOLD - LIMIT - 1);
		CHECK(t[i].state != TASK_STATE_RUNNING);
	}
	CHECK(analysis__task(a1, 1) == NULL);
	CHECK(analysis__task(a1, N_FOLD) != NULL);
out:
	analysis__free(a0);
	analysis__free(a1);
}

/* A task being polled is passed over: the next least recently active goes. */
static void test_running_kept(void)
{
	struct analysis *a = new_limited(2);
	const struct task_stats *t;

	CHECK(a);
	if (!a)
		return;
	add(a, AS_EV_WAKE, 1, 100, HDR(1), 0, 0, 0, NULL);            /* A, #1 */
	add(a, AS_EV_POLL_BEGIN, 2, 110, HDR(1), 1, P_A, 0, NULL);     /* A polled until 1000 */
	add(a, AS_EV_WAKE, 1, 120, HDR(2), 0, 0, 0, NULL);            /* B, #2 */
	add(a, AS_EV_POLL_BEGIN, 3, 130, HDR(2), 2, P_B, 0, NULL);
	add(a, AS_EV_POLL_END, 3, 140, HDR(2), 0, P_B, 0, NULL);
	add(a, AS_EV_WAKE, 1, 150, HDR(3), 0, 0, 0, NULL);            /* C, #3: B goes */
	add(a, AS_EV_POLL_END, 2, 1000, HDR(1), 0, P_A, 0, NULL);
	CHECK_EQ_U64(analysis__finish(a, &(struct as_trace_end){ .end_ns = 2000 }), 0);
	CHECK_EQ_U64(analysis__summary(a)->folded_live_tasks, 1);
	t = analysis__task(a, 1);
	CHECK(t != NULL);
	if (t) {
		CHECK_EQ_U64(t->polls, 1);
		CHECK_EQ_U64(t->busy_ns, 890);
		CHECK_EQ_U64(t->pending_polls, 1);
	}
	CHECK(analysis__task(a, 2) == NULL);
	CHECK(analysis__task(a, 3) != NULL);
	analysis__free(a);
}

/* A folded task's later events: counted, dropped (no new task, no anomaly)
 * until its FREE, after which its address is a new task's; a folded
 * completed task is not remembered: its address polled again is a new task. */
static void test_folded_events(void)
{
	struct analysis *a = new_limited(2);
	const struct summary *s;
	const struct task_group *g;
	size_t n;

	CHECK(a);
	if (!a)
		return;
	/* A (#1) Pending, B (#2) Ready without FREE, C (#3): A goes */
	add(a, AS_EV_WAKE, 1, 100, HDR(1), 0, 0, 0, NULL);
	add(a, AS_EV_POLL_BEGIN, 2, 110, HDR(1), 1, P_A, 0, NULL);
	add(a, AS_EV_POLL_END, 2, 120, HDR(1), 0, P_A, 0, NULL);
	add(a, AS_EV_WAKE, 1, 130, HDR(2), 0, 0, 0, NULL);
	add(a, AS_EV_POLL_BEGIN, 2, 140, HDR(2), 2, P_B, 0, NULL);
	add(a, AS_EV_POLL_END, 2, 150, HDR(2), 0, P_B, AS_POLL_READY, NULL);
	add(a, AS_EV_WAKE, 1, 160, HDR(3), 0, 0, 0, NULL);
	/* A's wake and poll: its events, dropped */
	add(a, AS_EV_WAKE, 1, 200, HDR(1), 0, 0, AS_WAKE_IO, NULL);
	add(a, AS_EV_POLL_BEGIN, 2, 210, HDR(1), 1, P_A, 0, NULL);
	add(a, AS_EV_POLL_END, 2, 220, HDR(1), 0, P_A, AS_POLL_READY, NULL);
	/* D (#4): B goes (least recently active; completed, not remembered) */
	add(a, AS_EV_WAKE, 1, 230, HDR(4), 0, 0, 0, NULL);
	add(a, AS_EV_FREE, 2, 240, HDR(1), 0, 0, 0, NULL);           /* dropped, forgotten */
	add(a, AS_EV_WAKE, 1, 250, HDR(1), 0, 0, 0, NULL);           /* a new task, #5 */
	add(a, AS_EV_POLL_BEGIN, 2, 260, HDR(2), 9, P_B, 0, NULL);   /* a new task, #6 */
	add(a, AS_EV_POLL_END, 2, 270, HDR(2), 0, P_B, 0, NULL);
	CHECK_EQ_U64(analysis__finish(a, &(struct as_trace_end){ .end_ns = 1000 }), 0);
	s = analysis__summary(a);
	CHECK_EQ_U64(s->folded_events, 4);
	CHECK_EQ_U64(s->tasks, 6);
	CHECK_EQ_U64(s->polls, 3);
	CHECK_EQ_U64(s->anomalies, 0);
	/* folded: A, B, then C (#5 born) and D (#6 born) */
	CHECK_EQ_U64(s->folded_live_tasks, 4);
	CHECK(analysis__task(a, 5) != NULL);
	CHECK(analysis__task(a, 6) != NULL);
	g = analysis__groups(a, &n);
	CHECK_EQ_U64(n, 3);   /* handler (A), serve (B), unnamed (C, D) */
	for (size_t i = 0; i < n; i++)
		if (g[i].name && !strcmp(g[i].name, "app::handler::{{closure}}")) {
			CHECK_EQ_U64(g[i].tasks, 1);
			CHECK_EQ_U64(g[i].polls, 1);
			CHECK_EQ_U64(g[i].busy_ns, 10);
			CHECK_EQ_U64(g[i].idle_ns, 1000 - 120);   /* idle to the end */
		}
	analysis__free(a);
}

/* Folded headers are remembered 8 per allowed live task, the most recent:
 * under a limit of 1, 19 tasks folded, the last 8 remembered; a wake at a
 * remembered one's address is dropped, one at a forgotten one's makes a new
 * task (its wake read as a spawn, as for a task never seen). */
static void test_forgotten(void)
{
	struct analysis *a = new_limited(1);
	const struct summary *s;

	CHECK(a);
	if (!a)
		return;
	for (unsigned i = 1; i <= 20; i++) {
		add(a, AS_EV_WAKE, 1, i * 100, HDR(i), 0, 0, 0, NULL);
		add(a, AS_EV_POLL_BEGIN, 2, i * 100 + 10, HDR(i), i, P_A, 0, NULL);
		add(a, AS_EV_POLL_END, 2, i * 100 + 20, HDR(i), 0, P_A, 0, NULL);
	}
	add(a, AS_EV_WAKE, 1, 3000, HDR(12), 0, 0, AS_WAKE_IO, NULL);  /* remembered */
	add(a, AS_EV_WAKE, 1, 3010, HDR(11), 0, 0, AS_WAKE_IO, NULL);  /* forgotten: #21 */
	CHECK_EQ_U64(analysis__finish(a, &(struct as_trace_end){ .end_ns = 4000 }), 0);
	s = analysis__summary(a);
	CHECK_EQ_U64(s->folded_events, 1);
	CHECK_EQ_U64(s->tasks, 21);
	CHECK_EQ_U64(s->folded_live_tasks, 20);
	CHECK(analysis__task(a, 21) != NULL);
	CHECK_EQ_U64(s->anomalies, 0);
	analysis__free(a);
}

#define N_BIG 300000

/* 300k never-freed tasks under a limit of 1000: what the analysis holds
 * after 30k is what it holds after 300k. */
static void test_memory_flat(void)
{
	struct analysis *a = new_limited(1000);
	struct analysis_mem m1, m2;
	uint64_t ts = 1000;

	CHECK(a);
	if (!a)
		return;
	for (unsigned i = 0; i < N_BIG; i++) {
		uint64_t h = 0x7f0000000000ULL + (uint64_t)i * 0x400;

		if (i == N_BIG / 10)
			analysis__mem(a, &m1);
		add(a, AS_EV_SPAWN, 1, ts, 0, (uint64_t)(i % 50) << 32 | 1, 0, 0, "src/d.rs");
		add(a, AS_EV_WAKE, 1, ts + 1, h, 0, 0, 0, NULL);
		add(a, AS_EV_POLL_BEGIN, 2, ts + 2, h, i + 1, i % 2 ? P_B : P_A, 0, NULL);
		add(a, AS_EV_POLL_END, 2, ts + 3 + i % 100, h, 0, i % 2 ? P_B : P_A,
		    i % 2 ? AS_POLL_READY : 0, NULL);
		ts += 200;
	}
	analysis__mem(a, &m2);
	CHECK_EQ_U64(m2.live_tasks, 1000);
	CHECK_EQ_U64(m2.live_tasks, m1.live_tasks);
	CHECK(m2.bytes <= m1.bytes + 64 * 1024);
	CHECK(m2.bytes < 8 * 1024 * 1024);
	CHECK_EQ_U64(analysis__finish(a, &(struct as_trace_end){ .end_ns = ts }), 0);
	CHECK_EQ_U64(analysis__summary(a)->folded_live_tasks, N_BIG - 1000);
	CHECK_EQ_U64(analysis__summary(a)->task_groups, 50);   /* the line gives the name */
	analysis__free(a);
}

static char *render(int (*fn)(FILE *, const struct analysis *, const struct as_trace_meta *,
			      const struct as_trace_end *, const struct report_opts *),
		    const struct analysis *a, const struct as_trace_end *end)
{
	struct report_opts ro = { 0 };
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	CHECK_EQ_U64(fn(f, a, &meta, end, &ro), 0);
	fclose(f);
	return buf;
}

/* The text report warns at the top with the fix, the JSON totals say it;
 * neither when nothing was folded. */
static void test_reports_say_so(void)
{
	struct as_trace_end end = { .end_ns = 0 };
	struct analysis *a[2] = { new_limited(3), new_limited(0) };

	for (int k = 0; k < 2; k++) {
		uint64_t ts = 1000;
		char *txt, *js;

		CHECK(a[k]);
		if (!a[k])
			continue;
		never_freed(a[k], 10, &ts);
		end.end_ns = ts + 10;
		CHECK_EQ_U64(analysis__finish(a[k], &end), 0);
		txt = render(report_text, a[k], &end);
		js = render(report_json, a[k], &end);
		CHECK(txt && js);
		if (!txt || !js) {
			free(txt);
			free(js);
			continue;
		}
		if (k == 0) {
			CHECK(strstr(txt, "\n!!! WARNING: 7 live tasks folded into TASK GROUPS: more than "
				     "3 tasks were live at once") != NULL);
			CHECK(strstr(txt, "--max-live-tasks N follows more, 0 all") != NULL);
			CHECK(strstr(txt, "TASK GROUPS: 7 tasks folded") != NULL);
			CHECK(strstr(txt, "every live task not folded") != NULL);
			CHECK(strstr(js, "\"folded_live_tasks\": 7,") != NULL);
			CHECK(strstr(js, "\"max_live_tasks\": 3,") != NULL);
			CHECK(strstr(js, "\"folded_events\": 0\n") != NULL);
		} else {
			CHECK(strstr(txt, "live tasks folded") == NULL);
			CHECK(strstr(js, "folded_live_tasks") == NULL);
			CHECK(strstr(js, "\"max_tasks\": 0\n") != NULL);
		}
		free(txt);
		free(js);
	}
	analysis__free(a[0]);
	analysis__free(a[1]);
}

/* The model alone: the limit is set before the first event only, 0 none,
 * and the default of analysis__new(). */
static void test_model_limit(void)
{
	struct task_model *m = task_model__new(&meta);
	struct as_event ev = { .type = AS_EV_WAKE, .tid = 1, .ts = 5, .task = HDR(1) };
	struct analysis *a = analysis__new(&meta);

	CHECK(m);
	CHECK_EQ_U64(task_model__max_live(m), 0);
	CHECK_EQ_U64(task_model__set_max_live(m, 10), 0);
	CHECK_EQ_U64(task_model__max_live(m), 10);
	CHECK_EQ_U64(task_model__add(m, &ev), 0);
	CHECK_EQ_U64(task_model__set_max_live(m, 5), (uint64_t)-EBUSY);
	CHECK_EQ_U64(task_model__folded(m), 0);
	CHECK_EQ_U64(analysis_max_live(NULL), ANALYSIS_MAX_LIVE_TASKS);
	CHECK_EQ_U64(analysis_max_live(&(struct analysis_opts){ .max_live_tasks = ANALYSIS_UNLIMITED }), 0);
	CHECK(a);
	CHECK_EQ_U64(analysis__finish(a, NULL), 0);
	CHECK_EQ_U64(analysis__summary(a)->max_live_tasks, ANALYSIS_MAX_LIVE_TASKS);
	analysis__free(a);
	task_model__free(m);
}

/* top's view under a limit of 2: 5 idle tasks, 3 dropped at the next tick
 * (counted), a dropped one not taken back from memory. */
static void test_live_view(void)
{
	struct live *l = live__new(&meta);
	const struct live_summary *s;
	size_t n;

	CHECK(l);
	if (!l)
		return;
	CHECK_EQ_U64(live__set_max_live(l, 2), 0);
	for (unsigned i = 1; i <= 5; i++) {
		struct as_event evs[] = {
			{ .type = AS_EV_WAKE, .tid = 1, .ts = i * 100, .task = HDR(i) },
			{ .type = AS_EV_POLL_BEGIN, .tid = 2, .ts = i * 100 + 10, .task = HDR(i),
			  .probe = P_A, .other = i },
			{ .type = AS_EV_POLL_END, .tid = 2, .ts = i * 100 + 20, .task = HDR(i),
			  .probe = P_A },
		};

		for (size_t k = 0; k < 3; k++)
			CHECK_EQ_U64(live__add(l, &evs[k]), 0);
	}
	live__tick(l, 10000000000ULL);
	s = live__summary(l);
	CHECK_EQ_U64(s->tasks_folded, 3);
	CHECK_EQ_U64(s->max_live, 2);
	live__tasks(l, &n);
	CHECK_EQ_U64(n, 2);
	CHECK_EQ_U64(live__note_stack(l, HDR(1), 1, NULL, "a.rs:1", "", 10000000000ULL), 0);
	live__tick(l, 11000000000ULL);
	live__tasks(l, &n);
	CHECK_EQ_U64(n, 2);
	CHECK_EQ_U64(live__note_stack(l, HDR(9), 9, NULL, "a.rs:1", "", 11000000000ULL), 0);
	live__tasks(l, &n);
	CHECK_EQ_U64(n, 3);   /* a task never seen: taken from memory */
	live__free(l);
}

int main(void)
{
	RUN(test_fold_totals);
	RUN(test_running_kept);
	RUN(test_folded_events);
	RUN(test_forgotten);
	RUN(test_memory_flat);
	RUN(test_reports_say_so);
	RUN(test_model_limit);
	RUN(test_live_view);
	TEST_MAIN_END();
}
