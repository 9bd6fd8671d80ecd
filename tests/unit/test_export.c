/* Unit tests for the exporters (src/output/perfetto.c, perfetto_pb.c,
 * folded.c and its poll tracker): the recorded fixtures of tests/data/ checked against the analysis
 * (one poll slice per user-task poll, folded weights summing to user busy
 * time), tiny synthetic streams with exact slice, flow and nesting results,
 * cut polls, name escaping (JSON validated by a small parser below), and a
 * random stream with every oddity that does not nest polls, where the folded
 * sum must equal the analysis'. Run from the repository root. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "analysis/tasks.h"
#include "harness.h"
#include "output/folded.h"
#include "output/perfetto.h"
#include "output/perfetto_pb.h"
#include "trace/reader.h"

#define US 1000ULL
#define MS 1000000ULL
#define BASE 7000000000ULL

/* ---- a minimal JSON validator: 1 if s is exactly one JSON value ---- */

static const char *js_value(const char *s, int depth);

static const char *js_ws(const char *s)
{
	while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')
		s++;
	return s;
}

static const char *js_string(const char *s)
{
	if (*s++ != '"')
		return NULL;
	for (; *s != '"'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20)
			return NULL;
		if (c == '\\') {
			s++;
			if (*s == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF", s[i]) || !s[i])
						return NULL;
				s += 4;
			} else if (!*s || !strchr("\"\\/bfnrt", *s)) {
				return NULL;
			}
		}
	}
	return s + 1;
}

static const char *js_number(const char *s)
{
	const char *start = s;

	if (*s == '-')
		s++;
	if (*s < '0' || *s > '9')
		return NULL;
	while (*s >= '0' && *s <= '9')
		s++;
	if (*s == '.') {
		s++;
		if (*s < '0' || *s > '9')
			return NULL;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return s > start ? s : NULL;
}

static const char *js_value(const char *s, int depth)
{
	s = js_ws(s);
	if (depth > 32)
		return NULL;
	if (*s == '{' || *s == '[') {
		char close = *s == '{' ? '}' : ']';

		s = js_ws(s + 1);
		if (*s == close)
			return s + 1;
		for (;;) {
			if (close == '}') {
				if (!(s = js_string(js_ws(s))))
					return NULL;
				s = js_ws(s);
				if (*s++ != ':')
					return NULL;
			}
			if (!(s = js_value(s, depth + 1)))
				return NULL;
			s = js_ws(s);
			if (*s == close)
				return s + 1;
			if (*s++ != ',')
				return NULL;
		}
	}
	if (*s == '"')
		return js_string(s);
	if (!strncmp(s, "true", 4) || !strncmp(s, "null", 4))
		return s + 4;
	if (!strncmp(s, "false", 5))
		return s + 5;
	return js_number(s);
}

static int json_valid(const char *s)
{
	const char *e = js_value(s, 0);

	return e && *js_ws(e) == '\0';
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* ---- running the exporters ---- */

struct run {
	char *json, *folded, *per_task;   /* outputs (NUL-terminated) */
	size_t json_len, folded_len, per_task_len;
	char *pb;                         /* the protobuf export */
	size_t pb_len;
	uint64_t slices, flows, folded_ns, per_task_ns, folded_lines;
	struct analysis *an;
};

static void run_free(struct run *r)
{
	free(r->json);
	free(r->folded);
	free(r->per_task);
	free(r->pb);
	analysis__free(r->an);
}

/* Feeds n events (or, with evs NULL, the trace file path) to the analysis,
 * both Perfetto exporters and both folded modes; the protobuf one must
 * count the JSON one's slices and flows. */
static int run_all(struct run *r, const struct as_trace_meta *meta, const struct as_event *evs,
		   size_t n, const char *path, const struct as_trace_end *end)
{
	FILE *fj = open_memstream(&r->json, &r->json_len);
	FILE *ff = open_memstream(&r->folded, &r->folded_len);
	FILE *fp = open_memstream(&r->per_task, &r->per_task_len);
	FILE *fb = open_memstream(&r->pb, &r->pb_len);
	struct trace_reader *rd = NULL;
	struct perfetto *pf = NULL;
	struct perfetto_pb *pp = NULL;
	struct folded *fd = NULL, *fpt = NULL;
	struct as_trace_end cut = { 0 };
	struct as_event ev;
	char err[512];
	int ok = 0;

	if (path) {
		rd = trace_reader__open(path, err, sizeof(err));
		CHECK(rd != NULL);
		if (!rd)
			goto out;
		meta = trace_reader__meta(rd);
	}
	r->an = analysis__new(meta);
	pf = fj ? perfetto__new(fj, meta) : NULL;
	pp = fb ? perfetto_pb__new(fb, meta) : NULL;
	fd = ff ? folded__new(ff, meta, false) : NULL;
	fpt = fp ? folded__new(fp, meta, true) : NULL;
	CHECK(r->an && pf && pp && fd && fpt);
	if (!r->an || !pf || !pp || !fd || !fpt)
		goto out;
	for (size_t i = 0;; i++) {
		if (rd) {
			int k = trace_reader__next(rd, &ev);

			CHECK(k >= 0);
			if (k <= 0)
				break;
		} else {
			if (i == n)
				break;
			ev = evs[i];
		}
		CHECK_EQ_U64(analysis__add(r->an, &ev), 0);
		CHECK_EQ_U64(perfetto__add(pf, &ev), 0);
		CHECK_EQ_U64(perfetto_pb__add(pp, &ev), 0);
		CHECK_EQ_U64(folded__add(fd, &ev), 0);
		CHECK_EQ_U64(folded__add(fpt, &ev), 0);
		if (ev.ts > cut.end_ns)
			cut.end_ns = ev.ts;
	}
	if (rd)
		end = trace_reader__end(rd);
	if (!end)
		end = &cut;
	CHECK_EQ_U64(analysis__finish(r->an, end), 0);
	CHECK_EQ_U64(perfetto__finish(pf, end, false), 0);
	CHECK_EQ_U64(perfetto_pb__finish(pp, end, false), 0);
	CHECK_EQ_U64(perfetto_pb__finish(pp, end, false), (uint64_t)-EINVAL);
	CHECK_EQ_U64(folded__finish(fd, end->end_ns), 0);
	CHECK_EQ_U64(folded__finish(fpt, end->end_ns), 0);
	r->slices = perfetto__slices(pf);
	r->flows = perfetto__flows(pf);
	CHECK_EQ_U64(perfetto_pb__slices(pp), r->slices);
	CHECK_EQ_U64(perfetto_pb__flows(pp), r->flows);
	CHECK_EQ_U64(perfetto_pb__future_slices(pp), perfetto__future_slices(pf));
	r->folded_ns = folded__total_ns(fd);
	r->folded_lines = folded__lines(fd);
	r->per_task_ns = folded__total_ns(fpt);
	ok = 1;
out:
	perfetto__free(pf);
	perfetto_pb__free(pp);
	folded__free(fd);
	folded__free(fpt);
	trace_reader__free(rd);
	if (fj)
		fclose(fj);
	if (fb)
		fclose(fb);
	if (ff)
		fclose(ff);
	if (fp)
		fclose(fp);
	return ok && r->json && r->folded && r->per_task;
}

static uint64_t user_busy(const struct analysis *a)
{
	size_t n;
	const struct task_stats *t = analysis__tasks(a, &n);
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		if (t[i].kind == TASK_KIND_TASK)
			sum += t[i].busy_ns;
	return sum;
}

/* Sum of the weights of a folded text, -1 on a malformed line. */
static long long folded_sum(const char *text, int frames)
{
	long long sum = 0;

	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n'), *sp;
		int semis = 0;

		if (!nl)
			return -1;
		if (*line != '#') {
			for (sp = nl; sp > line && sp[-1] != ' '; sp--)
				;
			if (sp == line || sp == nl)
				return -1;
			for (const char *p = line; p < sp; p++)
				semis += *p == ';';
			if (semis != frames - 1)
				return -1;
			sum += strtoll(sp, NULL, 10);
		}
		line = nl + 1;
	}
	return sum;
}

/* ---- fixtures ---- */

static void check_fixture(const char *path)
{
	struct run r = { 0 };

	if (!run_all(&r, NULL, NULL, 0, path, NULL)) {
		fprintf(stderr, "%s: cannot run\n", path);
		CHECK(0);
		run_free(&r);
		return;
	}
	const struct summary *s = analysis__summary(r.an);

	CHECK_EQ_U64(r.slices, s->user_polls);
	CHECK_EQ_U64(count(r.json, "\"cat\":\"poll\""), s->user_polls);
	CHECK_EQ_U64(count(r.json, "\"ph\":\"s\""), r.flows);
	CHECK_EQ_U64(count(r.json, "\"ph\":\"f\""), r.flows);
	CHECK(r.flows > 0 && r.flows <= r.slices);
	CHECK(json_valid(r.json));
	CHECK_EQ_U64(r.folded_ns, user_busy(r.an));
	CHECK_EQ_U64(r.per_task_ns, user_busy(r.an));
	CHECK_EQ_U64((uint64_t)folded_sum(r.folded, 2), user_busy(r.an));
	CHECK_EQ_U64((uint64_t)folded_sum(r.per_task, 3), user_busy(r.an));
	CHECK(strstr(r.folded, "tokio-runtime-w:") || strstr(r.folded, "yields:"));
	run_free(&r);
}

static void test_fixtures(void)
{
	check_fixture("tests/data/chain-100.trace");
	check_fixture("tests/data/yields-multi-20.trace");
	check_fixture("tests/data/yields-current-20.trace");
	check_fixture("tests/data/blocker-2s.trace");
	check_fixture("tests/data/sleepers.trace");
}

static void test_chain_exact(void)
{
	struct run r = { 0 };

	CHECK(run_all(&r, NULL, NULL, 0, "tests/data/chain-100.trace", NULL));
	/* 3 tasks x 101 polls; each poll follows one wake or the spawn */
	CHECK_EQ_U64(r.slices, 303);
	CHECK_EQ_U64(r.flows, 303);
	CHECK_EQ_U64(count(r.json, "\"name\":\"chain::producer\""), 101);
	CHECK_EQ_U64(count(r.json, "\"name\":\"spawn\",\"cat\":\"wake\""), 3 * 3);
	CHECK(strstr(r.json, "\"spawned_at\":\"src/bin/chain.rs:43:17\"") != NULL);
	CHECK(strstr(r.json, "\"name\":\"task #5 chain::producer\"") != NULL);
	CHECK(strstr(r.folded, "tokio-runtime-w:12409;chain::relay 170161\n") != NULL);
	CHECK_EQ_U64(r.folded_lines, 4);
	/* worker tasks: running on their task tracks, not as poll slices */
	CHECK_EQ_U64(count(r.json, "\"name\":\"tokio::runtime"), 0);
	CHECK(strstr(r.json, "\"name\":\"task #1 tokio::runtime::blocking::task::BlockingTask") != NULL);
	run_free(&r);
}

/* ---- synthetic streams ---- */

static struct as_probe probes[] = {
	{ .role = AS_ROLE_POLL, .symbol = "poll", .future = "rt::worker::Launch" },
	{ .role = AS_ROLE_POLL, .symbol = "poll", .future = "app::handler::{async_fn_env#0}" },
	{ .role = AS_ROLE_POLL, .symbol = "poll", .future = "app::Buf<[u8; 4]>::run \"q\\" },
	{ .role = AS_ROLE_POLL, .symbol = "poll", .future = NULL },
};

static struct as_trace_meta meta = {
	.format_version = 1, .pid = 100, .target = "/bin/app", .build_id = "",
	.runtime = "tokio", .cmdline = "app", .clock_mono_ns = BASE, .probes = probes,
	.n_probes = 4,
};

#define W 0x1000ULL
#define A 0x2000ULL
#define B 0x3000ULL
#define C 0x4000ULL
#define D 0x5000ULL

#define EV(ty, t, time, ...) { .type = AS_EV_##ty, .tid = (t), .ts = BASE + (time), __VA_ARGS__ }

/* A worker on thread 101 runs A (spawned by main 100) then B, which A wakes;
 * B wakes itself; C is woken by the timer inside the worker loop. */
static const struct as_event nested[] = {
	EV(THREAD, 100, 0, .str = "app"),
	EV(THREAD, 101, 0, .str = "worker;1\n"),
	EV(POLL_BEGIN, 101, 1 * US, .task = W, .probe = 0, .other = 1),
	EV(SPAWN, 100, 2 * US, .str = "src/main.rs", .other = 7ULL << 32 | 3),
	EV(WAKE, 100, 3 * US, .task = A),
	EV(WAKE, 100, 4 * US, .task = B),
	EV(POLL_BEGIN, 101, 10 * US, .task = A, .probe = 1, .other = 2),
	EV(POLL_END, 101, 15 * US, .task = A),
	EV(POLL_BEGIN, 101, 20 * US, .task = B, .probe = 2, .other = 3),
	EV(WAKE, 101, 22 * US, .task = A, .other = B),
	EV(WAKE, 101, 23 * US, .task = A, .other = B),      /* already runnable: no flow */
	EV(WAKE, 101, 24 * US, .task = B, .other = B),      /* self-wake */
	EV(POLL_END, 101, 30 * US, .task = B),
	EV(POLL_BEGIN, 101, 40 * US, .task = A, .probe = 1, .other = 2),
	EV(POLL_END, 101, 45 * US, .task = A, .flags = AS_POLL_READY),
	EV(FREE, 101, 46 * US, .task = A),
	EV(POLL_BEGIN, 101, 50 * US, .task = B, .probe = 2, .other = 3),
	EV(POLL_END, 101, 51 * US, .task = B),
	EV(PARK, 101, 60 * US),
	EV(WAKE, 101, 70 * US, .task = C, .other = W, .flags = AS_WAKE_TIMER),
	EV(UNPARK, 101, 80 * US),
	EV(POLL_BEGIN, 101, 90 * US, .task = C, .probe = 3),
	EV(POLL_END, 101, 95 * US, .task = C),
	EV(POLL_END, 101, 200 * US, .task = W, .flags = AS_POLL_READY),
};

struct capture {
	struct ptrack_poll polls[32];
	size_t n_polls;
	size_t scheduled, idle, parked, gone, gone_freed;
	uint64_t idle_ns, sched_ns;
};

static int capture(void *ctx, const struct ptrack_out *o)
{
	struct capture *c = ctx;

	switch (o->type) {
	case PTRACK_POLL:
		if (c->n_polls < 32)
			c->polls[c->n_polls++] = *o->poll;
		break;
	case PTRACK_SCHEDULED: c->scheduled++; c->sched_ns += o->to - o->from; break;
	case PTRACK_IDLE: c->idle++; c->idle_ns += o->to - o->from; break;
	case PTRACK_PARKED: c->parked++; break;
	case PTRACK_TASK_GONE: c->gone++; c->gone_freed += o->freed; break;
	}
	return 0;
}

static void test_tracker_nested(void)
{
	struct capture c = { 0 };
	struct ptrack *t = ptrack__new(&meta, capture, &c);
	size_t n = sizeof(nested) / sizeof(nested[0]);

	CHECK(t != NULL);
	if (!t)
		return;
	for (size_t i = 0; i < n; i++)
		CHECK_EQ_U64(ptrack__add(t, &nested[i]), 0);
	CHECK_EQ_U64(ptrack__parked(t), 0);
	CHECK_EQ_U64(ptrack__finish(t, BASE + 300 * US), 0);
	CHECK_EQ_U64(c.n_polls, 6);
	/* A, B, A, B, C are user polls; W's poll (ending last) is the worker's */
	for (size_t i = 0; i < 5; i++)
		CHECK(c.polls[i].user);
	CHECK(!c.polls[5].user);
	CHECK_EQ_U64(c.polls[5].task.seq, 1);
	/* A: spawned at main.rs:7:3, first poll caused by the spawn on thread 100 */
	CHECK_EQ_U64(c.polls[0].task.seq, 2);
	CHECK_STR(c.polls[0].task.name, "app::handler");
	CHECK_STR(c.polls[0].task.spawn_file, "src/main.rs");
	CHECK_EQ_U64(c.polls[0].task.spawn_line, 7);
	CHECK(c.polls[0].has_wake && c.polls[0].wake.spawn && c.polls[0].wake.tid == 100);
	CHECK(!c.polls[0].wake.in_user_poll);
	CHECK_EQ_U64(c.polls[0].task.tokio_id, 2);
	/* B's first poll: spawn-time schedule, no spawn site (SPAWN used by A) */
	CHECK(c.polls[1].task.spawn_file == NULL);
	/* A's second poll: woken at 22 us inside B's user poll */
	CHECK_EQ_U64(c.polls[2].begin, BASE + 40 * US);
	CHECK_EQ_U64(c.polls[2].how, PTRACK_READY);
	CHECK(c.polls[2].has_wake && !c.polls[2].wake.spawn && c.polls[2].wake.in_user_poll);
	CHECK_EQ_U64(c.polls[2].wake.ts, BASE + 22 * US);
	CHECK_EQ_U64(c.polls[2].wake.waker_seq, 3);
	/* B's second poll: self-wake in its previous poll */
	CHECK(c.polls[3].has_wake && c.polls[3].wake.waker_seq == 3);
	/* C: first seen by a timer wake in the worker loop (not a user poll) */
	CHECK(c.polls[4].task.name == NULL);
	CHECK(c.polls[4].has_wake && c.polls[4].wake.spawn);
	CHECK(!c.polls[4].wake.in_user_poll && c.polls[4].wake.waker_seq == 1);
	CHECK_EQ_U64(c.parked, 1);
	CHECK_EQ_U64(c.gone, 4);
	CHECK_EQ_U64(c.gone_freed, 1);
	/* idle: A 15->22, B 51->300 (end), C 95->300 */
	CHECK_EQ_U64(c.idle, 3);
	CHECK_EQ_U64(c.idle_ns, 7 * US + 249 * US + 205 * US);
	ptrack__free(t);
}

static void test_perfetto_nested(void)
{
	struct run r = { 0 };
	struct as_trace_end end = { .end_ns = BASE + 300 * US, .lost = 3, .missed = 2 };

	CHECK(run_all(&r, &meta, nested, sizeof(nested) / sizeof(nested[0]), NULL, &end));
	CHECK(json_valid(r.json));
	CHECK_EQ_U64(r.slices, 5);
	CHECK_EQ_U64(r.flows, 5);
	CHECK_EQ_U64(r.slices, analysis__summary(r.an)->user_polls);
	/* flows from outside a user poll get a 1 ns marker: A, B (spawn on main), C (timer) */
	CHECK_EQ_U64(count(r.json, "\"dur\":0.001,\"name\":\"spawn\""), 3);
	CHECK(strstr(r.json, "\"args\":{\"task\":4,\"by\":\"spawn\"}") != NULL);
	/* A's second poll: the flow starts at the wake on B's slice, ends at A's poll */
	CHECK(strstr(r.json, "{\"ph\":\"s\",\"pid\":100,\"tid\":101,\"ts\":22.000,\"id\":3,"
			     "\"name\":\"wake\",\"cat\":\"wake\"}") != NULL);
	CHECK(strstr(r.json, "{\"ph\":\"f\",\"pid\":100,\"tid\":101,\"bp\":\"e\",\"ts\":40.000,"
			     "\"id\":3,") != NULL);
	CHECK(strstr(r.json, "{\"ph\":\"X\",\"pid\":100,\"tid\":101,\"ts\":40.000,\"dur\":5.000,"
			     "\"name\":\"app::handler\",\"cat\":\"poll\",\"args\":{\"task\":2,"
			     "\"tokio_id\":2,\"outcome\":\"Ready\",\"spawned_at\":\"src/main.rs:7:3\","
			     "\"header\":\"0x2000\"}}") != NULL);
	/* task states */
	CHECK(strstr(r.json, "\"tid\":4194306,\"ts\":15.000,\"dur\":7.000,\"name\":\"idle\"") != NULL);
	CHECK(strstr(r.json, "\"tid\":4194306,\"ts\":3.000,\"dur\":7.000,\"name\":\"scheduled\"") != NULL);
	CHECK(strstr(r.json, "\"tid\":4194305,\"ts\":1.000,\"dur\":199.000,\"name\":\"running\"") != NULL);
	CHECK(strstr(r.json, "\"name\":\"task #3 app::Buf<[u8; 4]>::run \\\"q\\\\\"") != NULL);
	/* thread names escaped; parked slice; counters; lost and missed */
	CHECK(strstr(r.json, "\"name\":\"worker;1\\u000a\"") != NULL);
	CHECK(strstr(r.json, "\"ts\":60.000,\"dur\":20.000,\"name\":\"parked\"") != NULL);
	CHECK(strstr(r.json, "\"name\":\"parked workers\",\"args\":{\"workers\":1}") != NULL);
	CHECK(strstr(r.json, "\"name\":\"runnable tasks\",\"args\":{\"tasks\":2}") != NULL);
	CHECK(strstr(r.json, "\"ts\":300.000,\"name\":\"lost 3 events\"") != NULL);
	CHECK(strstr(r.json, "\"name\":\"missed 2 events") != NULL);
	CHECK(strstr(r.json, "\"lost_events\":3,\"missed_events\":2,\"loss_counts\":\"exact\",\"truncated\":false") != NULL);
	CHECK(strstr(r.json, "\"process_name\",\"args\":{\"name\":\"/bin/app pid 100\"}") != NULL);
	/* folded: names sanitised (';' -> ',', control -> '?'), unknown future */
	CHECK_STR(r.folded, "worker,1?:101;app::Buf<[u8, 4]>::run \"q\\ 11000\n"
			    "worker,1?:101;app::handler 10000\n"
			    "worker,1?:101;unknown 5000\n");
	CHECK_EQ_U64(r.folded_ns, user_busy(r.an));
	CHECK(strstr(r.per_task, "worker,1?:101;app::handler;task #2 10000\n") != NULL);
	run_free(&r);
}

/* Polls cut short: an inner poll whose end is lost, a task freed while
 * running, a task polled again while running, and one running at the end. */
static const struct as_event cuts[] = {
	EV(THREAD, 101, 0, .str = "w"),
	EV(POLL_BEGIN, 101, 1 * US, .task = W, .probe = 0),
	EV(POLL_BEGIN, 101, 10 * US, .task = A, .probe = 1),
	EV(POLL_END, 101, 20 * US, .task = W),                  /* A cut at 20 */
	EV(POLL_BEGIN, 102, 30 * US, .task = B, .probe = 1),
	EV(FREE, 103, 35 * US, .task = B),                      /* B cut at 35 */
	EV(POLL_BEGIN, 102, 40 * US, .task = C, .probe = 2),
	EV(POLL_BEGIN, 103, 45 * US, .task = C, .probe = 2),    /* C cut at 45 on 102 */
	EV(POLL_END, 103, 50 * US, .task = C, .flags = AS_POLL_READY),
	EV(POLL_BEGIN, 103, 60 * US, .task = C, .probe = 2),    /* completed: a new task */
	EV(POLL_END, 104, 61 * US, .task = A),                  /* never begun there: ignored */
	EV(POLL_BEGIN, 104, 70 * US, .task = B, .probe = 1),    /* running at the end */
	/* D freed inside its own poll (Tokio, JoinHandle gone): gone at its end */
	EV(POLL_BEGIN, 105, 80 * US, .task = D, .probe = 1),
	EV(FREE, 105, 82 * US, .task = D),
	EV(POLL_END, 105, 85 * US, .task = D, .flags = AS_POLL_READY),
};

static void test_cuts(void)
{
	struct capture c = { 0 };
	struct ptrack *t = ptrack__new(&meta, capture, &c);
	struct run r = { 0 };
	struct as_trace_end end = { .end_ns = BASE + 100 * US };

	CHECK(t != NULL);
	if (!t)
		return;
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++)
		CHECK_EQ_U64(ptrack__add(t, &cuts[i]), 0);
	CHECK_EQ_U64(ptrack__finish(t, end.end_ns), 0);
	CHECK_EQ_U64(c.n_polls, 8);
	CHECK(c.polls[0].task.header == A && c.polls[0].how == PTRACK_CUT && c.polls[0].user);
	CHECK_EQ_U64(c.polls[0].end, BASE + 20 * US);
	CHECK(c.polls[1].task.header == W && !c.polls[1].user && c.polls[1].how == PTRACK_PENDING);
	CHECK(c.polls[2].task.header == B && c.polls[2].how == PTRACK_CUT);
	CHECK_EQ_U64(c.polls[2].end, BASE + 35 * US);
	CHECK(c.polls[3].task.header == C && c.polls[3].how == PTRACK_CUT && c.polls[3].tid == 102);
	CHECK_EQ_U64(c.polls[3].end, BASE + 45 * US);
	CHECK(c.polls[4].how == PTRACK_READY);
	CHECK(c.polls[5].task.header == D && c.polls[5].how == PTRACK_READY && c.polls[5].user);
	CHECK_EQ_U64(c.polls[5].end, BASE + 85 * US);
	CHECK_EQ_U64(c.gone_freed, 2); /* B, D (at the end of its poll) */
	CHECK_EQ_U64(c.polls[6].task.seq, c.polls[4].task.seq + 1);
	CHECK_EQ_U64(c.polls[6].how, PTRACK_TRACE_END);
	CHECK_EQ_U64(c.polls[7].how, PTRACK_TRACE_END);
	ptrack__free(t);

	CHECK(run_all(&r, &meta, cuts, sizeof(cuts) / sizeof(cuts[0]), NULL, &end));
	CHECK(json_valid(r.json));
	CHECK_EQ_U64(r.slices, analysis__summary(r.an)->user_polls);
	CHECK_EQ_U64(r.folded_ns, user_busy(r.an));
	CHECK_EQ_U64(r.per_task_ns, user_busy(r.an));
	CHECK_EQ_U64(count(r.json, "\"outcome\":\"cut short\""), 3);
	CHECK_EQ_U64(count(r.json, "\"outcome\":\"running at end\""), 2);
	run_free(&r);
}

/* An idle worker: same root future type as a worker, outermost on its
 * thread, nothing nested in it: a runtime worker too (as in the analysis). */
static const struct as_event idle_worker[] = {
	EV(POLL_BEGIN, 301, 1 * US, .task = W, .probe = 0),
	EV(POLL_BEGIN, 302, 2 * US, .task = W + 0x100, .probe = 0),
	EV(POLL_BEGIN, 301, 10 * US, .task = A, .probe = 1),
	EV(POLL_END, 301, 12 * US, .task = A),
	EV(POLL_BEGIN, 303, 20 * US, .task = W + 0x200, .probe = 0), /* a third, begun later */
};

static void test_idle_worker(void)
{
	struct run r = { 0 };
	struct as_trace_end end = { .end_ns = BASE + 50 * US };

	CHECK(run_all(&r, &meta, idle_worker, sizeof(idle_worker) / sizeof(idle_worker[0]), NULL,
		      &end));
	CHECK_EQ_U64(analysis__summary(r.an)->worker_tasks, 3);
	CHECK_EQ_U64(r.slices, 1);
	CHECK_EQ_U64(r.slices, analysis__summary(r.an)->user_polls);
	CHECK_EQ_U64(r.folded_ns, 2 * US);
	CHECK_EQ_U64(r.folded_ns, user_busy(r.an));
	run_free(&r);
}

static void test_empty(void)
{
	struct run r = { 0 };

	CHECK(run_all(&r, NULL, NULL, 0, NULL, NULL));
	CHECK(json_valid(r.json));
	CHECK_EQ_U64(r.slices, 0);
	CHECK_STR(r.folded, "");
	run_free(&r);
}

/* Random streams over 4 threads and 8 addresses with no nesting (each
 * thread runs one poll at a time; a lost end would nest the next poll), but
 * tasks freed while running or polled again elsewhere, addresses reused,
 * timestamps jittered backwards: the folded sum and the slice count must equal the analysis'. */
static void test_random(void)
{
	enum { N = 4000 };
	struct as_event *evs = calloc(N, sizeof(*evs));
	uint64_t running[4] = { 0 };
	unsigned seed = 12345;

	CHECK(evs != NULL);
	if (!evs)
		return;
	for (int round = 0; round < 20; round++) {
		struct run r = { 0 };
		uint64_t ts = BASE;

		memset(running, 0, sizeof(running));
		for (int i = 0; i < N; i++) {
			uint32_t tid = 200 + (unsigned)rand_r(&seed) % 4;
			uint64_t task = 0x100 * (1 + (unsigned)rand_r(&seed) % 8);
			int k = rand_r(&seed) % 10;
			struct as_event *e = &evs[i];

			ts += (unsigned)rand_r(&seed) % 5000;
			*e = (struct as_event){ .tid = tid, .ts = ts - (unsigned)rand_r(&seed) % 300,
						.task = task };
			if (k < 3) {
				if (running[tid - 200]) { /* end what runs there (usually) */
					e->type = AS_EV_POLL_END;
					e->task = running[tid - 200];
					e->flags = rand_r(&seed) % 4 == 0 ? AS_POLL_READY : 0;
					running[tid - 200] = 0;
				} else {
					e->type = AS_EV_POLL_BEGIN;
					e->probe = (uint16_t)(rand_r(&seed) % 4);
					e->other = task >> 8;
					running[tid - 200] = task;
				}
			} else if (k < 7) {
				e->type = AS_EV_WAKE;
				e->other = running[tid - 200];
				e->flags = (uint8_t)(rand_r(&seed) % 3 * 2);
			} else if (k < 8) {
				/* freed from another thread (its poll is cut), or from
				 * inside its own poll (retired when the poll ends) */
				e->type = AS_EV_FREE;
				for (int j = 0; j < 4; j++)
					if (running[j] == task && j != (int)tid - 200)
						running[j] = 0;
			} else if (k < 9) {
				e->type = AS_EV_SPAWN;
				e->str = "src/x.rs";
				e->other = 1ULL << 32 | 2;
				e->task = 0;
			} else {
				e->type = rand_r(&seed) % 2 ? AS_EV_PARK : AS_EV_UNPARK;
				e->task = 0;
			}
			/* a poll begin on a thread running another task would nest */
			if (e->type == AS_EV_POLL_BEGIN)
				for (int j = 0; j < 4; j++)
					if (j != (int)tid - 200 && running[j] == task)
						running[j] = 0; /* polled again elsewhere: cut */
		}
		struct as_trace_end end = { .end_ns = ts + 1000 };

		CHECK(run_all(&r, &meta, evs, N, NULL, round % 2 ? &end : NULL));
		CHECK_EQ_U64(r.slices, analysis__summary(r.an)->user_polls);
		CHECK_EQ_U64(r.folded_ns, user_busy(r.an));
		CHECK_EQ_U64(r.per_task_ns, user_busy(r.an));
		CHECK_EQ_U64(analysis__summary(r.an)->worker_tasks, 0);
		CHECK(json_valid(r.json));
		run_free(&r);
	}
	free(evs);
}

/* The protobuf of the nested stream, its threads named with invalid UTF-8
 * and quotes, through protoc and checks/perfetto_pb.py against the JSON of
 * the same stream: decodes against Perfetto's schema without a complaint,
 * references only what it defines, the same slices, flows and counters. */
static void test_perfetto_pb_checked(void)
{
	struct as_event evs[sizeof(nested) / sizeof(nested[0])];
	struct as_trace_end end = { .end_ns = BASE + 300 * US, .lost = 3, .missed = 2 };
	char pb_path[] = "/tmp/asyncscope-test-pb.XXXXXX", json_path[64], cmd[256];
	struct run r = { 0 };
	FILE *f;
	int fd;

	memcpy(evs, nested, sizeof(nested));
	evs[0].str = "app\xff\xfe \"q\"";
	evs[1].str = "w\xc3";
	CHECK(run_all(&r, &meta, evs, sizeof(evs) / sizeof(evs[0]), NULL, &end));
	CHECK_EQ_U64(r.slices, 5);
	CHECK(r.pb_len > 100 && r.pb_len < r.json_len);
	fd = mkstemp(pb_path);
	CHECK(fd >= 0);
	if (fd < 0)
		goto out;
	CHECK(write(fd, r.pb, r.pb_len) == (ssize_t)r.pb_len);
	close(fd);
	snprintf(json_path, sizeof(json_path), "%s.json", pb_path);
	f = fopen(json_path, "w");
	CHECK(f && fwrite(r.json, 1, r.json_len, f) == r.json_len);
	if (f)
		fclose(f);
	snprintf(cmd, sizeof(cmd), "python3 tests/integ/checks/perfetto_pb.py %s --json %s",
		 pb_path, json_path);
	CHECK_EQ_U64(system(cmd), 0);
	/* the invalid bytes reach the file as U+FFFD, the rest as written */
	CHECK(memmem(r.pb, r.pb_len, "app\xef\xbf\xbd\xef\xbf\xbd \"q\"", 13) != NULL);
	CHECK(memmem(r.pb, r.pb_len, "w\xef\xbf\xbd", 4) != NULL);
	unlink(json_path);
	unlink(pb_path);
out:
	run_free(&r);
}

static void test_truncated_mark(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct perfetto *p = f ? perfetto__new(f, &meta) : NULL;
	struct as_trace_end cut = { .end_ns = BASE + 5 * US };

	CHECK(p != NULL);
	if (p) {
		CHECK_EQ_U64(perfetto__add(p, &nested[2]), 0);
		CHECK_EQ_U64(perfetto__finish(p, &cut, true), 0);
		CHECK_EQ_U64(perfetto__finish(p, &cut, true), (uint64_t)-EINVAL);
		CHECK_EQ_U64(perfetto__add(p, &nested[2]), (uint64_t)-EINVAL);
	}
	perfetto__free(p);
	if (f)
		fclose(f);
	CHECK(buf && json_valid(buf));
	CHECK(buf && strstr(buf, "\"truncated\":true") && strstr(buf, "trace truncated"));
	free(buf);
}

int main(void)
{
	RUN(test_fixtures);
	RUN(test_chain_exact);
	RUN(test_tracker_nested);
	RUN(test_perfetto_nested);
	RUN(test_cuts);
	RUN(test_idle_worker);
	RUN(test_empty);
	RUN(test_random);
	RUN(test_truncated_mark);
	RUN(test_perfetto_pb_checked);
	TEST_MAIN_END();
}
