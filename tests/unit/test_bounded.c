/* Unit tests for the cap on task rows (analysis_opts.max_tasks): memory stays
 * bounded on a long stream of short-lived tasks while every total stays
 * exact; the kept rows are exactly the busiest; groups add up; and a cap the
 * trace does not reach changes no byte of the reports. Recorded fixtures from
 * tests/data/, no root. */
#include <errno.h>
#include <stdlib.h>

#include "analysis/tasks.h"
#include "analysis/timeline.h"
#include "harness.h"
#include "output/report.h"
#include "trace/reader.h"

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

static void add(struct analysis *a, uint8_t type, uint32_t tid, uint64_t ts, uint64_t task,
		uint64_t other, uint16_t probe, uint8_t flags, const char *str)
{
	struct as_event ev = {
		.type = type, .flags = flags, .probe = probe, .tid = tid, .ts = ts,
		.task = task, .other = other, .str = str,
	};
	int err = analysis__add(a, &ev);

	if (err)
		CHECK_EQ_U64(err, 0); /* only on failure: 14M checks are slow */
}

/* Deterministic poll lengths 1..4000 ns: plenty of ties in busy time. */
static uint64_t rng = 0x2545f4914f6cdd1dULL;

static uint64_t poll_len(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return 1 + rng % 4000;
}

static int by_rank(const void *x, const void *y, void *ctx)
{
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y; /* seq - 1 */
	const uint64_t *busy = ctx;

	if (busy[i] != busy[j])
		return busy[i] < busy[j] ? 1 : -1;
	return i < j ? -1 : i > j;
}

#define N_TASKS 2000000
#define CHUNK 100           /* tasks alive at once */
#define CAP 10000
#define N_KEYS 12           /* seq % 12 gives the name (% 2), file (% 3), line (% 4) */

static const char *files[3] = { "src/a.rs", "src/b.rs", "src/c.rs" };

/* 2 million tasks, CHUNK at a time: spawned (a spawn site, a heap copy of the
 * file name each time), scheduled, polled Pending, polled again, Ready,
 * freed. */
static void test_two_million(void)
{
	struct analysis_opts o = { .max_tasks = CAP };
	struct analysis *a = analysis__new_opts(&meta, &o);
	uint64_t *busy = calloc(N_TASKS, sizeof(*busy));
	uint32_t *order = calloc(N_TASKS, sizeof(*order));
	bool *kept = calloc(N_TASKS, sizeof(*kept));
	uint64_t ts = 1000, total_busy = 0, key_busy[N_KEYS] = { 0 }, key_tasks[N_KEYS] = { 0 };
	uint64_t key_polls[N_KEYS] = { 0 };
	size_t peak_rows = 0, peak_bytes = 0, n_rows, n_groups;
	struct analysis_mem m;

	CHECK(a && busy && order && kept);
	if (!a || !busy || !order || !kept)
		goto out;
	for (uint64_t base = 0; base < N_TASKS; base += CHUNK) {
		for (uint64_t j = 0; j < CHUNK; j++) {
			uint64_t seq = base + j + 1;
			char *file = strdup(files[seq % 3]);

			add(a, AS_EV_SPAWN, 1, ts++, 0, (uint64_t)(10 + seq % 4) << 32 | 5, 0, 0, file);
			free(file);
			add(a, AS_EV_WAKE, 1, ts++, 0x10000 + j * 64, 0, 0, 0, NULL);
		}
		for (int k = 0; k < 2; k++)
			for (uint64_t j = 0; j < CHUNK; j++) {
				uint64_t seq = base + j + 1, d = poll_len();

				add(a, AS_EV_POLL_BEGIN, 2, ts, 0x10000 + j * 64, seq, seq % 2 ? P_B : P_A,
				    0, NULL);
				ts += d;
				add(a, AS_EV_POLL_END, 2, ts++, 0x10000 + j * 64, 0, 0,
				    k ? AS_POLL_READY : 0, NULL);
				busy[seq - 1] += d;
				total_busy += d;
			}
		for (uint64_t j = 0; j < CHUNK; j++)
			add(a, AS_EV_FREE, 2, ts++, 0x10000 + j * 64, 0, 0, 0, NULL);
		if ((base / CHUNK) % 64 == 0) {
			analysis__mem(a, &m);
			peak_rows = m.rows > peak_rows ? m.rows : peak_rows;
			peak_bytes = m.bytes > peak_bytes ? m.bytes : peak_bytes;
		}
	}
	analysis__mem(a, &m);
	CHECK(peak_rows <= CAP + CHUNK);
	CHECK(peak_bytes < 50u << 20);
	CHECK_EQ_U64(m.rows, CAP);
	CHECK_EQ_U64(m.folded_tasks, N_TASKS - CAP);
	CHECK_EQ_U64(m.groups, N_KEYS);
	CHECK_EQ_U64(m.edges, 0);
	CHECK_EQ_U64(analysis__finish(a, &(struct as_trace_end){ .end_ns = ts }), 0);

	/* Exact totals. */
	const struct summary *s = analysis__summary(a);
	CHECK_EQ_U64(s->tasks, N_TASKS);
	CHECK_EQ_U64(s->user_tasks, N_TASKS);
	CHECK_EQ_U64(s->polls, 2 * N_TASKS);
	CHECK_EQ_U64(s->user_polls, 2 * N_TASKS);
	CHECK_EQ_U64(s->folded_tasks, N_TASKS - CAP);
	CHECK_EQ_U64(s->task_groups, N_KEYS);
	CHECK_EQ_U64(s->max_tasks, CAP);
	CHECK_EQ_U64(s->anomalies, 0);
	CHECK_EQ_U64(analysis__dist(a, DIST_POLL)->count, 2 * N_TASKS);
	CHECK_EQ_U64(analysis__dist(a, DIST_POLL)->sum, total_busy);

	/* The kept rows: exactly the CAP busiest (ties: earlier seq), in seq
	 * order, found by analysis__task(); a folded seq has none. */
	for (uint32_t i = 0; i < N_TASKS; i++)
		order[i] = i;
	qsort_r(order, N_TASKS, sizeof(*order), by_rank, busy);
	for (uint32_t i = 0; i < CAP; i++)
		kept[order[i]] = true;
	const struct task_stats *t = analysis__tasks(a, &n_rows);
	uint64_t row_busy = 0, row_polls = 0, wrong = 0;
	CHECK_EQ_U64(n_rows, CAP);
	for (size_t i = 0; t && i < n_rows; i++) {
		wrong += !kept[t[i].seq - 1] || t[i].busy_ns != busy[t[i].seq - 1] ||
			 (i && t[i].seq <= t[i - 1].seq) || analysis__task(a, t[i].seq) != &t[i];
		row_busy += t[i].busy_ns;
		row_polls += t[i].polls;
	}
	CHECK_EQ_U64(wrong, 0);
	CHECK(analysis__task(a, order[N_TASKS - 1] + 1) == NULL);
	CHECK(analysis__task(a, N_TASKS + 1) == NULL);

	/* Groups: per (name, file, line), summing to the folded tasks. */
	for (uint32_t i = 0; i < N_TASKS; i++) {
		if (kept[i])
			continue;
		key_tasks[(i + 1) % N_KEYS]++;
		key_busy[(i + 1) % N_KEYS] += busy[i];
		key_polls[(i + 1) % N_KEYS] += 2;
	}
	const struct task_group *g = analysis__groups(a, &n_groups);
	uint64_t g_tasks = 0, g_busy = 0, g_polls = 0;
	const char *names[2] = { NULL, NULL };
	CHECK_EQ_U64(n_groups, N_KEYS);
	for (size_t i = 0; g && i < n_groups; i++) {
		int name = !strcmp(g[i].name, probes[P_B].future);
		int file = g[i].spawn_file[4] - 'a'; /* src/?.rs */
		size_t key;

		/* seq % 12 from seq % 2, % 3 and % 4 (lines 10..13) */
		for (key = 0; key < N_KEYS; key++)
			if (key % 2 == (size_t)name && key % 3 == (size_t)file &&
			    key % 4 == g[i].spawn_line - 10)
				break;
		CHECK(key < N_KEYS);
		if (key == N_KEYS)
			continue;
		CHECK_EQ_U64(g[i].tasks, key_tasks[key]);
		CHECK_EQ_U64(g[i].busy_ns, key_busy[key]);
		CHECK_EQ_U64(g[i].polls, key_polls[key]);
		CHECK_EQ_U64(g[i].ready_polls, key_tasks[key]);
		CHECK(i == 0 || g[i].busy_ns <= g[i - 1].busy_ns);
		/* interned: one copy of each name */
		CHECK(!names[name] || names[name] == g[i].name);
		names[name] = g[i].name;
		g_tasks += g[i].tasks;
		g_busy += g[i].busy_ns;
		g_polls += g[i].polls;
	}
	CHECK_EQ_U64(g_tasks, N_TASKS - CAP);
	CHECK_EQ_U64(row_busy + g_busy, total_busy);
	CHECK_EQ_U64(row_polls + g_polls, 2 * N_TASKS);
out:
	free(busy);
	free(order);
	free(kept);
	analysis__free(a);
}

/* 2 million short tasks, CHUNK at a time, each woken by a different
 * short-lived task: polled Pending, then in turn polled again and Ready, the
 * one polled waking the next one of its chunk (the first is woken by the
 * I/O driver). Each distinct (waker, woken) pair once: without group edges,
 * 2 million edge records. With them: the edges between kept rows, a group
 * edge per pair of identities (12 x 12 and I/O -> 12), under a fixed number
 * of bytes; every wake on them, the pairs, the timed wakes and the longest
 * delay exact. */
static void test_group_edges(void)
{
	struct analysis_opts o = { .max_tasks = CAP };
	struct analysis *a = analysis__new_opts(&meta, &o);
	uint64_t ts = 1000, max_delay = 0, wakes = 0;
	size_t peak_edges = 0, peak_bytes = 0, peak_group = 0, n, n_groups, n_rows;
	struct analysis_mem m;

	CHECK(a != NULL);
	if (!a)
		return;
	for (uint64_t base = 0; base < N_TASKS; base += CHUNK) {
		for (uint64_t j = 0; j < CHUNK; j++) {
			uint64_t seq = base + j + 1;

			add(a, AS_EV_SPAWN, 1, ts++, 0, (uint64_t)(10 + seq % 4) << 32 | 5, 0, 0,
			    files[seq % 3]);
			add(a, AS_EV_WAKE, 1, ts++, 0x10000 + j * 64, 0, 0, 0, NULL);
			add(a, AS_EV_POLL_BEGIN, 2, ts++, 0x10000 + j * 64, seq, seq % 2 ? P_B : P_A,
			    0, NULL);
			add(a, AS_EV_POLL_END, 2, ts++, 0x10000 + j * 64, 0, 0, 0, NULL);
		}
		add(a, AS_EV_WAKE, 3, ts++, 0x10000, 0, 0, AS_WAKE_IO, NULL);
		for (uint64_t j = 0; j < CHUNK; j++) {
			uint64_t seq = base + j + 1, d = poll_len(), woke = ts;

			add(a, AS_EV_POLL_BEGIN, 2, ts, 0x10000 + j * 64, seq, seq % 2 ? P_B : P_A,
			    0, NULL);
			max_delay = ts - woke > max_delay ? ts - woke : max_delay;
			if (j + 1 < CHUNK) {
				woke = ts += d;
				add(a, AS_EV_WAKE, 2, ts, 0x10000 + (j + 1) * 64, 0x10000 + j * 64, 0,
				    0, NULL);
			}
			ts += poll_len();
			add(a, AS_EV_POLL_END, 2, ts++, 0x10000 + j * 64, 0, 0, AS_POLL_READY, NULL);
			add(a, AS_EV_FREE, 2, ts++, 0x10000 + j * 64, 0, 0, 0, NULL);
			if (j + 1 < CHUNK) /* the next one's poll: its delay */
				max_delay = ts - woke > max_delay ? ts - woke : max_delay;
		}
		if ((base / CHUNK) % 64 == 0) {
			analysis__mem(a, &m);
			peak_edges = m.edges > peak_edges ? m.edges : peak_edges;
			peak_group = m.group_edges > peak_group ? m.group_edges : peak_group;
			peak_bytes = m.edge_bytes > peak_bytes ? m.edge_bytes : peak_bytes;
		}
	}
	analysis__mem(a, &m);
	CHECK(peak_edges <= CAP + CAP / 2 + 200);
	CHECK(peak_group <= 12 * 12 + 12);
	CHECK(peak_bytes < 4u << 20);
	CHECK_EQ_U64(m.folded_tasks, N_TASKS - CAP);
	CHECK_EQ_U64(analysis__finish(a, &(struct as_trace_end){ .end_ns = ts }), 0);

	/* the wakes counted per task and group */
	const struct task_stats *t = analysis__tasks(a, &n_rows);
	const struct task_group *g = analysis__groups(a, &n_groups);
	for (size_t i = 0; i < n_rows; i++)
		wakes += t[i].wakes;
	for (size_t i = 0; i < n_groups; i++)
		wakes += g[i].wakes;
	CHECK_EQ_U64(wakes, N_TASKS);

	/* an edge of its own into each kept row woken by the I/O driver or by a
	 * kept row */
	uint64_t own = 0;
	for (size_t i = 0; i < n_rows; i++)
		own += (t[i].seq - 1) % CHUNK == 0 || analysis__task(a, t[i].seq - 1);
	const struct wake_edge *e = analysis__edges(a, &n);
	uint64_t count = 0, timed = 0, pairs = 0, max = 0, group = 0, wrong = 0;
	for (size_t i = 0; i < n; i++) {
		count += e[i].count;
		timed += e[i].timed;
		pairs += e[i].tasks;
		max = e[i].delay_max_ns > max ? e[i].delay_max_ns : max;
		if (e[i].from_group || e[i].to_group) {
			group++;
			wrong += (e[i].to_group && e[i].to_seq) || (e[i].from_group && e[i].from_seq);
			continue;
		}
		/* between kept rows: the one before woke it, once */
		wrong += e[i].count != 1 || e[i].tasks != 1 ||
			 (e[i].from_kind == WAKE_FROM_TASK && e[i].from_seq + 1 != e[i].to_seq) ||
			 !analysis__task(a, e[i].to_seq);
	}
	CHECK_EQ_U64(wrong, 0);
	CHECK_EQ_U64(n - group, own);
	CHECK_EQ_U64(count, N_TASKS);
	CHECK_EQ_U64(timed, N_TASKS);
	CHECK_EQ_U64(pairs, N_TASKS);
	CHECK_EQ_U64(max, max_delay);
	CHECK(group > 0 && group <= 12 * 12 + 12);
	CHECK(n <= CAP + 12 * 12 + 12);
	analysis__free(a);
}

/* ---- recorded fixtures: a cap changes no total, and nothing at all when the
 * trace does not reach it ---- */

struct run {
	struct analysis *a;
	struct timeline *tl;
	struct as_trace_end end;
};

/* Both passes over path with max_tasks cap; false if the trace cannot be read. */
static bool run(struct run *r, const char *path, size_t cap)
{
	struct analysis_opts o = { .max_tasks = cap };
	char err[256];
	struct as_event ev;
	struct trace_reader *rd;

	memset(r, 0, sizeof(*r));
	for (int pass = 0; pass < 2; pass++) {
		rd = trace_reader__open(path, err, sizeof(err));
		if (!rd) {
			fprintf(stderr, "%s: %s\n", path, err);
			return false;
		}
		if (pass == 0)
			r->a = analysis__new_opts(trace_reader__meta(rd), &o);
		else
			r->tl = timeline__new(r->a, trace_reader__meta(rd), NULL);
		if (pass == 0 ? !r->a : !r->tl)
			goto out;
		while (trace_reader__next(rd, &ev) == 1)
			if (pass == 0 ? analysis__add(r->a, &ev) : timeline__add(r->tl, &ev))
				goto out;
		if (!trace_reader__end(rd))
			goto out;
		r->end = *trace_reader__end(rd);
		if (pass == 0 ? analysis__finish(r->a, &r->end) : timeline__finish(r->tl, &r->end))
			goto out;
		trace_reader__free(rd);
		rd = NULL;
	}
	return true;
out:
	trace_reader__free(rd);
	return false;
}

static void run_free(struct run *r)
{
	timeline__free(r->tl);
	analysis__free(r->a);
}

static char *render(int (*fn)(FILE *, const struct analysis *, const struct as_trace_meta *,
			      const struct as_trace_end *, const struct report_opts *),
		    const struct run *r, size_t *len)
{
	struct report_opts ro = { .timeline = r->tl };
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	CHECK_EQ_U64(fn(f, r->a, &meta, &r->end, &ro), 0);
	fclose(f);
	return buf;
}

/* The JSON "max_tasks": N made "max_tasks": 0, in place. */
static void unlimited(char *json)
{
	char *p = strstr(json, "\"max_tasks\": ");

	if (!p)
		return;
	p += strlen("\"max_tasks\": ");
	if (*p >= '1' && *p <= '9') {
		char *q = p;

		while (*q >= '0' && *q <= '9')
			q++;
		*p = '0';
		memmove(p + 1, q, strlen(q) + 1);
	}
}

static void same_reports(const char *path, size_t cap)
{
	struct run capped, all;
	char *t1 = NULL, *t2 = NULL, *j1 = NULL, *j2 = NULL;
	size_t n1 = 0, n2 = 0, m1 = 0, m2 = 0;

	if (!run(&capped, path, cap) || !run(&all, path, ANALYSIS_UNLIMITED)) {
		CHECK(0);
		goto out;
	}
	CHECK_EQ_U64(analysis__summary(capped.a)->folded_tasks, 0);
	t1 = render(report_text, &capped, &n1);
	t2 = render(report_text, &all, &n2);
	CHECK(t1 && t2 && n1 == n2 && !memcmp(t1, t2, n1));
	j1 = render(report_json, &capped, &m1);
	j2 = render(report_json, &all, &m2);
	CHECK(j1 && j2 && strstr(j2, "\"max_tasks\": 0,") == NULL); /* the last key of totals */
	CHECK(j2 && strstr(j2, "\"max_tasks\": 0\n"));
	if (j1 && j2) {
		unlimited(j1);
		CHECK_EQ_U64(strlen(j1), m2);
		CHECK(!strcmp(j1, j2));
	}
out:
	free(t1);
	free(t2);
	free(j1);
	free(j2);
	run_free(&capped);
	run_free(&all);
}

static void test_cap_not_reached(void)
{
	same_reports("tests/data/chain-100.trace", 10);
	same_reports("tests/data/blocker-2s.trace", 3);
	same_reports("tests/data/blocker-2s.trace", 0); /* the default, 10000 */
}

/* The name a list entry gives task seq: its row's or its group's. */
static const char *name_of(const struct analysis *a, uint64_t seq, uint32_t group)
{
	const struct task_stats *t = analysis__task(a, seq);
	const struct task_group *g;
	size_t n;

	if (t)
		return t->name;
	g = analysis__groups(a, &n);
	CHECK(group && group <= n);
	return group && group <= n ? g[group - 1].name : "(no group)";
}

static bool same_name(const char *x, const char *y)
{
	return x == y || (x && y && !strcmp(x, y));
}

static size_t folded_refs; /* edges naming a folded task, over the fixtures */

/* With a cap of 1, finished tasks are folded (only in some fixtures: live
 * tasks never are; blocker-2s has one finished task): totals, distributions, long polls,
 * stalled, starved, edges and the timeline's workers stay exactly as
 * without a cap, and every entry about a folded task names it through its
 * group. */
static void folded_same(const char *path, bool folds)
{
	struct run c, u;
	size_t n1, n2, w1, w2, t1, t2;

	if (!run(&c, path, 1) || !run(&u, path, ANALYSIS_UNLIMITED)) {
		CHECK(0);
		goto out;
	}
	const struct summary *sc = analysis__summary(c.a), *su = analysis__summary(u.a);
	CHECK(folds ? sc->folded_tasks > 0 : sc->folded_tasks == 0);
	CHECK_EQ_U64(su->folded_tasks, 0);
	CHECK_EQ_U64(sc->tasks, su->tasks);
	CHECK_EQ_U64(sc->user_tasks, su->user_tasks);
	CHECK_EQ_U64(sc->worker_tasks, su->worker_tasks);
	CHECK_EQ_U64(sc->polls, su->polls);
	CHECK_EQ_U64(sc->user_polls, su->user_polls);
	CHECK_EQ_U64(sc->long_polls, su->long_polls);
	CHECK_EQ_U64(sc->stalled_tasks, su->stalled_tasks);
	CHECK_EQ_U64(sc->starved_tasks, su->starved_tasks);
	CHECK_EQ_U64(sc->anomalies, su->anomalies);
	for (int d = 0; d < DIST__MAX; d++) {
		const struct hist *x = analysis__dist(c.a, d), *y = analysis__dist(u.a, d);

		CHECK_EQ_U64(x->count, y->count);
		CHECK_EQ_U64(x->sum, y->sum);
		CHECK_EQ_U64(hist__quantile(x, 0.99), hist__quantile(y, 0.99));
	}

	/* kept rows are the uncapped ones; the groups hold the rest */
	const struct task_stats *kc = analysis__tasks(c.a, &n1), *ku = analysis__tasks(u.a, &n2);
	const struct task_group *g = analysis__groups(c.a, &w1);
	uint64_t busy_c = 0, busy_u = 0;
	CHECK_EQ_U64(n1 + sc->folded_tasks, n2);
	for (size_t i = 0; i < n1; i++) {
		const struct task_stats *x = analysis__task(u.a, kc[i].seq);

		CHECK(x && x->busy_ns == kc[i].busy_ns && x->polls == kc[i].polls &&
		      x->idle_ns == kc[i].idle_ns && x->wakes == kc[i].wakes &&
		      x->poll_p99_ns == kc[i].poll_p99_ns && x->state == kc[i].state &&
		      same_name(x->name, kc[i].name));
		busy_c += kc[i].busy_ns;
	}
	for (size_t i = 0; i < w1; i++)
		busy_c += g[i].busy_ns;
	for (size_t i = 0; i < n2; i++)
		busy_u += ku[i].busy_ns;
	CHECK_EQ_U64(busy_c, busy_u);

	const struct long_poll *lc = analysis__long_polls(c.a, &n1), *lu = analysis__long_polls(u.a, &n2);
	CHECK_EQ_U64(n1, n2);
	for (size_t i = 0; i < n1 && i < n2; i++) {
		CHECK_EQ_U64(lc[i].seq, lu[i].seq);
		CHECK_EQ_U64(lc[i].duration_ns, lu[i].duration_ns);
		CHECK_EQ_U64(lc[i].start_ns, lu[i].start_ns);
		CHECK(same_name(name_of(c.a, lc[i].seq, lc[i].group), name_of(u.a, lu[i].seq, 0)));
	}
	const struct stall *stc = analysis__stalled(c.a, &n1), *stu = analysis__stalled(u.a, &n2);
	CHECK_EQ_U64(n1, n2);
	for (size_t i = 0; i < n1 && i < n2; i++) {
		CHECK_EQ_U64(stc[i].seq, stu[i].seq);
		CHECK_EQ_U64(stc[i].since_ns, stu[i].since_ns);
		CHECK_EQ_U64(stc[i].stalled_ns, stu[i].stalled_ns);
		CHECK(same_name(name_of(c.a, stc[i].seq, stc[i].group), name_of(u.a, stu[i].seq, 0)));
	}
	const struct starve *svc = analysis__starved(c.a, &n1), *svu = analysis__starved(u.a, &n2);
	CHECK_EQ_U64(n1, n2);
	for (size_t i = 0; i < n1 && i < n2; i++) {
		CHECK_EQ_U64(svc[i].seq, svu[i].seq);
		CHECK_EQ_U64(svc[i].max_wait_ns, svu[i].max_wait_ns);
		CHECK(same_name(name_of(c.a, svc[i].seq, svc[i].group), name_of(u.a, svu[i].seq, 0)));
	}
	/* edges between tasks with rows as without a cap; the others merged into
	 * group edges, their wakes, pairs and maximum delays all there */
	const struct wake_edge *ec = analysis__edges(c.a, &n1), *eu = analysis__edges(u.a, &n2);
	uint64_t kind_c[WAKE_FROM_THREAD + 1] = { 0 }, kind_u[WAKE_FROM_THREAD + 1] = { 0 };
	uint64_t timed_c = 0, timed_u = 0, pairs_c = 0, pairs_u = 0, max_c = 0, max_u = 0;
	CHECK(n1 <= n2);
	for (size_t i = 0; i < n2; i++) {
		CHECK_EQ_U64(eu[i].from_group + eu[i].to_group, 0);
		kind_u[eu[i].from_kind] += eu[i].count;
		timed_u += eu[i].timed;
		pairs_u += eu[i].tasks;
		max_u = eu[i].delay_max_ns > max_u ? eu[i].delay_max_ns : max_u;
	}
	for (size_t i = 0; i < n1; i++) {
		bool group = ec[i].from_group || ec[i].to_group;
		size_t k = 0;

		kind_c[ec[i].from_kind] += ec[i].count;
		timed_c += ec[i].timed;
		pairs_c += ec[i].tasks;
		max_c = ec[i].delay_max_ns > max_c ? ec[i].delay_max_ns : max_c;
		folded_refs += group;
		if (group) {
			CHECK(ec[i].to_group ? ec[i].to_seq == 0 : analysis__task(c.a, ec[i].to_seq) != NULL);
			CHECK(ec[i].from_group ? ec[i].from_seq == 0 : true);
			CHECK(name_of(c.a, ec[i].to_seq, ec[i].to_group) != NULL);
			continue;
		}
		CHECK(analysis__task(c.a, ec[i].to_seq) != NULL);
		while (k < n2 && !(eu[k].to_seq == ec[i].to_seq && eu[k].from_kind == ec[i].from_kind &&
				   eu[k].from_seq == ec[i].from_seq))
			k++;
		CHECK(k < n2);
		if (k == n2)
			continue;
		CHECK_EQ_U64(ec[i].count, eu[k].count);
		CHECK_EQ_U64(ec[i].timed, eu[k].timed);
		CHECK_EQ_U64(ec[i].delay_p50_ns, eu[k].delay_p50_ns);
		CHECK_EQ_U64(ec[i].delay_p99_ns, eu[k].delay_p99_ns);
		CHECK_EQ_U64(ec[i].delay_max_ns, eu[k].delay_max_ns);
		CHECK_EQ_U64(ec[i].tasks, eu[k].tasks);
	}
	/* and every edge between tasks that kept their rows is there on its own */
	for (size_t i = 0; i < n2; i++) {
		size_t k = 0;

		if (!analysis__task(c.a, eu[i].to_seq) ||
		    (eu[i].from_kind == WAKE_FROM_TASK && !analysis__task(c.a, eu[i].from_seq)))
			continue;
		while (k < n1 && !(ec[k].to_seq == eu[i].to_seq && ec[k].from_kind == eu[i].from_kind &&
				   ec[k].from_seq == eu[i].from_seq && !ec[k].to_group &&
				   !ec[k].from_group))
			k++;
		CHECK(k < n1);
	}
	CHECK(!memcmp(kind_c, kind_u, sizeof(kind_c)));
	CHECK_EQ_U64(timed_c, timed_u);
	CHECK_EQ_U64(pairs_c, pairs_u);
	CHECK_EQ_U64(max_c, max_u);

	/* timeline: the workers and the run queue need every task's kind */
	const struct timeline_worker *wc = timeline__workers(c.tl, &w1), *wu = timeline__workers(u.tl, &w2);
	size_t nb = timeline__buckets(c.tl);
	CHECK_EQ_U64(w1, w2);
	CHECK_EQ_U64(nb, timeline__buckets(u.tl));
	for (size_t i = 0; i < w1 && i < w2; i++) {
		CHECK(!memcmp(wc[i].busy_ns, wu[i].busy_ns, nb * sizeof(uint64_t)));
		CHECK(!memcmp(wc[i].polls, wu[i].polls, nb * sizeof(uint64_t)));
		CHECK(!memcmp(wc[i].idle_ns, wu[i].idle_ns, nb * sizeof(uint64_t)));
	}
	CHECK(!memcmp(timeline__runnable_max(c.tl), timeline__runnable_max(u.tl),
		      nb * sizeof(uint64_t)));
	CHECK(!memcmp(timeline__runnable_avg(c.tl), timeline__runnable_avg(u.tl),
		      nb * sizeof(double)));
	/* its tasks: the busiest among the kept rows, the same series */
	const struct timeline_task *tc = timeline__tasks(c.tl, &t1), *tu = timeline__tasks(u.tl, &t2);
	CHECK(t1 >= 1 && t1 <= t2);
	for (size_t i = 0; i < t1; i++) {
		size_t k = 0;

		while (k < t2 && tu[k].seq != tc[i].seq)
			k++;
		CHECK(k < t2);
		if (k < t2)
			CHECK(!memcmp(tc[i].running, tu[k].running, nb * sizeof(double)));
	}

	/* and the reports hold together */
	size_t len;
	char *txt = render(report_text, &c, &len), *js = render(report_json, &c, &len);
	CHECK(txt && !strstr(txt, "TASK GROUPS: ") == !folds && !strstr(txt, "--max-tasks") == !folds);
	CHECK(js && strstr(js, folds ? "\"task_groups\": [\n" : "\"task_groups\": [],"));
	free(txt);
	free(js);
out:
	run_free(&c);
	run_free(&u);
}

static void test_cap_reached(void)
{
	folded_same("tests/data/chain-100.trace", true);
	folded_same("tests/data/blocker-2s.trace", false);
	folded_same("tests/data/yields-multi-20.trace", true);
	CHECK(folded_refs > 0);
}

#define MS 1000000ULL

/* A task with a long poll, a stall, a starve and a wake edge, folded (cap 1,
 * a busier task after it): every list keeps its seq and names its group. */
static void test_folded_refs(void)
{
	struct analysis_opts o = { .max_tasks = 1 };
	struct analysis *a = analysis__new_opts(&meta, &o);
	size_t n;

	add(a, AS_EV_SPAWN, 1, 1, 0, (uint64_t)7 << 32 | 3, 0, 0, "src/a.rs");
	add(a, AS_EV_WAKE, 1, 2, 0xa0, 0, 0, 0, NULL);
	add(a, AS_EV_POLL_BEGIN, 2, 20 * MS, 0xa0, 11, P_A, 0, NULL);   /* starved 20 ms */
	add(a, AS_EV_POLL_END, 2, 22 * MS, 0xa0, 0, 0, 0, NULL);        /* long: 2 ms */
	add(a, AS_EV_WAKE, 2, 2100 * MS, 0xa0, 0, 0, AS_WAKE_IO, NULL); /* stalled 2.08 s */
	add(a, AS_EV_POLL_BEGIN, 2, 2101 * MS, 0xa0, 11, P_A, 0, NULL);
	add(a, AS_EV_POLL_END, 2, 2101 * MS + 1000, 0xa0, 0, 0, AS_POLL_READY, NULL);
	add(a, AS_EV_FREE, 2, 2102 * MS, 0xa0, 0, 0, 0, NULL);
	add(a, AS_EV_WAKE, 1, 2103 * MS, 0xb0, 0, 0, 0, NULL);
	add(a, AS_EV_POLL_BEGIN, 2, 2104 * MS, 0xb0, 12, P_B, 0, NULL);
	add(a, AS_EV_POLL_END, 2, 2109 * MS, 0xb0, 0, 0, AS_POLL_READY, NULL); /* 5 ms */
	add(a, AS_EV_FREE, 2, 2110 * MS, 0xb0, 0, 0, 0, NULL);
	CHECK_EQ_U64(analysis__finish(a, &(struct as_trace_end){ .end_ns = 2200 * MS }), 0);

	const struct summary *s = analysis__summary(a);
	CHECK_EQ_U64(s->tasks, 2);
	CHECK_EQ_U64(s->folded_tasks, 1);
	CHECK_EQ_U64(s->task_groups, 1);
	CHECK_EQ_U64(s->long_polls, 2);
	CHECK_EQ_U64(s->stalled_tasks, 1);
	CHECK_EQ_U64(s->starved_tasks, 1);
	CHECK(analysis__task(a, 1) == NULL);
	CHECK(analysis__task(a, 2) != NULL);
	const struct task_group *g = analysis__groups(a, &n);
	CHECK_EQ_U64(n, 1);
	if (n != 1)
		goto out;
	CHECK_STR(g[0].name, probes[P_A].future);
	CHECK_STR(g[0].spawn_file, "src/a.rs");
	CHECK_EQ_U64(g[0].spawn_line, 7);
	CHECK_EQ_U64(g[0].busy_ns, 2 * MS + 1000);
	CHECK_EQ_U64(g[0].max_poll_ns, 2 * MS);
	CHECK_EQ_U64(g[0].idle_ns, 2078 * MS);
	CHECK_EQ_U64(g[0].sched_ns, 20 * MS - 2 + 1 * MS);
	CHECK_EQ_U64(g[0].wakes, 1);
	CHECK_EQ_U64(g[0].long_polls, 1);

	const struct long_poll *lp = analysis__long_polls(a, &n);
	CHECK_EQ_U64(n, 2);
	CHECK(n == 2 && lp[0].seq == 2 && lp[0].group == 0 && lp[1].seq == 1 && lp[1].group == 1);
	const struct stall *st = analysis__stalled(a, &n);
	CHECK(n == 1 && st[0].seq == 1 && st[0].group == 1 && st[0].stalled_ns == 2078 * MS);
	CHECK(n == 1 && st[0].since_ns == 22 * MS - 1);
	const struct starve *sv = analysis__starved(a, &n);
	CHECK(n == 1 && sv[0].seq == 1 && sv[0].group == 1 && sv[0].max_wait_ns == 20 * MS - 2);
	const struct wake_edge *e = analysis__edges(a, &n);
	CHECK(n == 1 && e[0].from_kind == WAKE_FROM_IO && e[0].to_seq == 0 && e[0].to_group == 1);
	CHECK(n == 1 && e[0].count == 1 && e[0].tasks == 1 && e[0].timed == 1);
	CHECK(n == 1 && e[0].delay_max_ns == 1 * MS && e[0].delay_p50_ns == e[0].delay_p99_ns);

	size_t len;
	struct run r = { .a = a };
	char *txt = render(report_text, &r, &len), *js = render(report_json, &r, &len);
	CHECK(txt && strstr(txt, "TASK GROUPS: 1 finished task folded"));
	CHECK(txt && strstr(txt, "     ~1  app::handler::{closure}"));
	CHECK(js && strstr(js, "\"seq\": 1,\n      \"id\": null,\n      \"name\": \"app::handler::{{closure}}\""));
	CHECK(js && strstr(js, "\"group\": 0\n"));
	CHECK(js && strstr(js, "\"to_seq\": null,\n      \"to_name\": \"app::handler::{{closure}}\""));
	CHECK(js && strstr(js, "\"to_group\": 0,\n      \"tasks\": 1\n"));
	CHECK(txt && strstr(txt, "io -> app::handler::{closure}  1 wake (group edge, 1 task pair), delay"));
	CHECK(js && strstr(js, "\"spawn_location\": \"src/a.rs:7:3\""));
	free(txt);
	free(js);
out:
	analysis__free(a);
}

int main(void)
{
	RUN(test_folded_refs);
	RUN(test_cap_not_reached);
	RUN(test_cap_reached);
	RUN(test_two_million);
	RUN(test_group_edges);
	TEST_MAIN_END();
}
