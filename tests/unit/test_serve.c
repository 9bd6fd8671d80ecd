/* serve's pure modules: the bounded label tables and their base across
 * sessions (registry), the Prometheus exposition (expo), the stack store
 * and the pprof windows (accumulation, the cap, the gzip'd profile). */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "harness.h"
#include "serve/culprit.h"
#include "serve/expo.h"
#include "serve/registry.h"
#include "serve/stacks.h"
#include "serve/window.h"

static void test_registry_cap(void)
{
	struct registry *r = registry__new(3);

	CHECK(r != NULL);
	int a = registry__task(r, "app::a"), b = registry__task(r, "app::b");
	CHECK(a >= REG_TASK__FIXED && b == a + 1);
	CHECK_EQ_U64(registry__task(r, "app::a"), a);
	CHECK_EQ_U64(registry__task(r, NULL), REG_TASK_UNKNOWN);
	int c = registry__task(r, "app::c");
	CHECK_EQ_U64(c, b + 1);
	/* past the cap: other, for good, counted */
	CHECK_EQ_U64(registry__task(r, "app::d"), REG_TASK_OTHER);
	CHECK_EQ_U64(registry__task(r, "app::e"), REG_TASK_OTHER);
	CHECK_EQ_U64(registry__task(r, "app::c"), c);
	CHECK_EQ_U64(r->tasks_over, 2);
	CHECK_STR(r->tasks[REG_TASK_OTHER].name, "other");
	CHECK_STR(r->tasks[REG_TASK_RUNTIME].name, "runtime");
	/* groups: (task, spawn), distinct spawn sites distinct rows */
	int g1 = registry__group(r, "app::a", "src/main.rs:1:1");
	int g2 = registry__group(r, "app::a", "src/main.rs:2:1");
	CHECK(g1 >= 1 && g2 == g1 + 1);
	CHECK_EQ_U64(registry__group(r, "app::a", "src/main.rs:1:1"), g1);
	CHECK_EQ_U64(registry__group(r, NULL, NULL), 3);
	CHECK_STR(r->groups[3].task, "unknown");
	CHECK_EQ_U64(registry__group(r, "app::z", ""), 0);
	CHECK_EQ_U64(r->groups_over, 1);
	/* culprits */
	int k = registry__culprit(r, "do_nanosleep", "app::f", "src/main.rs:9");
	CHECK(k >= 1);
	CHECK_EQ_U64(registry__culprit(r, "do_nanosleep", "app::f", "src/main.rs:9"), k);
	CHECK(registry__culprit(r, "do_nanosleep", "app::f", "src/main.rs:10") != k);
	registry__free(r);
}

static void test_registry_fold(void)
{
	struct registry *r = registry__new(0);
	struct agg_group sum;
	struct agg_totals t;

	CHECK_EQ_U64(r->cap, REG_CAP_DEFAULT);
	int g = registry__group(r, "app::a", "");
	/* session 1: two reads, the second the larger: cur is the last read */
	registry__agg_begin(r);
	r->groups[g].cur.polls = 5;
	r->agg_cur.parks = 2;
	registry__agg_begin(r);
	r->groups[g].cur.polls = 7;
	r->agg_cur.parks = 3;
	registry__group_sum(r, (size_t)g, &sum);
	CHECK_EQ_U64(sum.polls, 7);
	registry__agg_fold(r);
	/* session 2 starts from 0: the sum goes on from 7 */
	registry__agg_begin(r);
	r->groups[g].cur.polls = 1;
	registry__group_sum(r, (size_t)g, &sum);
	CHECK_EQ_U64(sum.polls, 8);
	registry__totals_sum(r, &t);
	CHECK_EQ_U64(t.parks, 3);
	registry__free(r);
}

static void test_expo_numbers(void)
{
	char b[32];
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	CHECK_STR(expo_seconds(b, 0), "0");
	CHECK_STR(expo_seconds(b, 1024), "0.000001024");
	CHECK_STR(expo_seconds(b, 1500000000ull), "1.5");
	CHECK_STR(expo_seconds(b, 2000000000ull), "2");
	CHECK_STR(expo_seconds(b, 68719476736ull), "68.719476736");
	f = open_memstream(&text, &len);
	expo_label_value(f, "a\"b\\c\nd");
	fclose(f);
	CHECK_STR(text, "a\\\"b\\\\c\\nd");
	free(text);
}

/* The lines of text starting with prefix, counted. */
static size_t count_lines(const char *text, const char *prefix)
{
	size_t n = 0, pl = strlen(prefix);

	for (const char *p = text; p && *p;) {
		if (!strncmp(p, prefix, pl))
			n++;
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	return n;
}

static char *render(const struct expo_state *st)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK_EQ_U64(expo_write(f, st), 0);
	fclose(f);
	return text;
}

static void test_expo_families(void)
{
	struct registry *r = registry__new(100);
	struct expo_state st = { .reg = r, .version = "t", .sample_hz = 100, .long_poll_ns = 1000000,
				 .stall_ns = 1000000000, .offcpu_min_ns = 100000 };
	char *text;

	int t = registry__task(r, "app::hot");
	r->tasks[t].samples = 150;   /* 1.5 s at 100 Hz */
	int g = registry__group(r, "app::h\"x", "src/main.rs:3:5");
	r->groups[g].base.polls = 6;
	r->groups[g].base.poll_ns = 6000;
	r->groups[g].base.poll_hist[0] = 4;   /* under 1.024 us */
	r->groups[g].base.poll_hist[3] = 1;   /* [4.096, 8.192) us: le 16.384 us */
	r->groups[g].base.poll_hist[AGG_BUCKETS - 1] = 1;   /* over 68.7 s: +Inf only */
	/* profile mode, no off-CPU: neither the task families nor blocking */
	text = render(&st);
	CHECK(strstr(text, "asyncscope_task_cpu_seconds_total{task=\"app::hot\"} 1.5\n") != NULL);
	CHECK(!strstr(text, "asyncscope_task_polls_total"));
	CHECK(!strstr(text, "asyncscope_blocking_seconds_total"));
	CHECK(!strstr(text, "asyncscope_worker_busy_seconds_total"));
	CHECK(!strstr(text, "asyncscope_target_restarts_total"));
	CHECK_EQ_U64(count_lines(text, "# HELP asyncscope_task_cpu_seconds_total "), 1);
	CHECK_EQ_U64(count_lines(text, "# TYPE asyncscope_task_cpu_seconds_total counter"), 1);
	CHECK_EQ_U64(count_lines(text, "# TYPE process_resident_memory_bytes gauge"), 1);
	free(text);
	/* task mode: the histograms, cumulative, +Inf the count, labels escaped */
	st.tasks = st.offcpu = st.follow = true;
	st.attaches = 3;
	text = render(&st);
	const char *k = "{task=\"app::h\\\"x\",spawn=\"src/main.rs:3:5\"";
	char line[256];
	snprintf(line, sizeof(line), "asyncscope_task_polls_total%s} 6\n", k);
	CHECK(strstr(text, line) != NULL);
	snprintf(line, sizeof(line), "asyncscope_task_poll_duration_seconds_bucket%s,le=\"0.000001024\"} 4\n", k);
	CHECK(strstr(text, line) != NULL);
	snprintf(line, sizeof(line), "asyncscope_task_poll_duration_seconds_bucket%s,le=\"0.000004096\"} 4\n", k);
	CHECK(strstr(text, line) != NULL);
	snprintf(line, sizeof(line), "asyncscope_task_poll_duration_seconds_bucket%s,le=\"0.000016384\"} 5\n", k);
	CHECK(strstr(text, line) != NULL);
	snprintf(line, sizeof(line), "asyncscope_task_poll_duration_seconds_bucket%s,le=\"68.719476736\"} 5\n", k);
	CHECK(strstr(text, line) != NULL);
	snprintf(line, sizeof(line), "asyncscope_task_poll_duration_seconds_bucket%s,le=\"+Inf\"} 6\n", k);
	CHECK(strstr(text, line) != NULL);
	snprintf(line, sizeof(line), "asyncscope_task_poll_duration_seconds_count%s} 6\n", k);
	CHECK(strstr(text, line) != NULL);
	snprintf(line, sizeof(line), "asyncscope_task_poll_duration_seconds_sum%s} 0.000006\n", k);
	CHECK(strstr(text, line) != NULL);
	/* 14 finite bounds and +Inf */
	snprintf(line, sizeof(line), "asyncscope_task_poll_duration_seconds_bucket%s", k);
	CHECK_EQ_U64(count_lines(text, line), 15);
	CHECK(strstr(text, "asyncscope_target_restarts_total 2\n") != NULL);
	CHECK(strstr(text, "# TYPE asyncscope_task_poll_duration_seconds histogram\n") != NULL);
	CHECK(strstr(text, "# TYPE asyncscope_blocking_seconds_total counter\n") != NULL);
	/* every family once: as many HELP as TYPE lines, no sample before its TYPE */
	CHECK_EQ_U64(count_lines(text, "# HELP "), count_lines(text, "# TYPE "));
	free(text);
	registry__free(r);
}

static void test_stack_store(void)
{
	struct stack_store ss = { 0 };
	struct as_frame fr[2] = { { .addr = 0x10, .sym = "do_nanosleep" },
				  { .addr = 0x20, .sym = "app::f", .file = "src/main.rs", .line = 9 } };
	struct as_stack st = { .n_kernel = 1, .n_user = 1, .frames = fr };

	uint32_t id = stack_store__add(&ss, &st, -1);
	CHECK(id == 1);
	CHECK_EQ_U64(stack_store__add(&ss, &st, -1), 1);
	const struct kept_stack *k = stack_store__get(&ss, id);
	CHECK(k && k->st.n_user == 1);
	CHECK_STR(k->st.frames[1].file, "src/main.rs");
	fr[1].addr = 0x30;
	CHECK_EQ_U64(stack_store__add(&ss, &st, 4), 2);
	CHECK_EQ_U64(stack_store__culprit(&ss, 2), 4);
	CHECK_EQ_U64(stack_store__culprit(&ss, STACKS_CULPRIT_ONLY | 8), 7);
	/* full: nothing kept, counted */
	for (uint64_t a = 0x100; !stack_store__full(&ss); a++) {
		fr[1].addr = a;
		stack_store__add(&ss, &st, -1);
	}
	fr[1].addr = 0xdead;
	CHECK_EQ_U64(stack_store__add(&ss, &st, -1), 0);
	CHECK_EQ_U64(ss.dropped, 1);
	stack_store__reset(&ss);
	CHECK_EQ_U64(stack_store__add(&ss, &st, -1), 1);
	stack_store__clear(&ss);
}

/* Inflates a gzip buffer. */
static uint8_t *gunzip(const uint8_t *in, size_t n, size_t *out_len)
{
	size_t cap = 1 << 20;
	uint8_t *out = malloc(cap);
	z_stream z = { 0 };

	inflateInit2(&z, 15 + 16);
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	int r = inflate(&z, Z_FINISH);
	inflateEnd(&z);
	*out_len = z.total_out;
	if (r != Z_STREAM_END) {
		free(out);
		return NULL;
	}
	return out;
}

static bool contains(const uint8_t *b, size_t n, const char *s)
{
	return memmem(b, n, s, strlen(s)) != NULL;
}

static void test_window(void)
{
	struct registry *r = registry__new(10);
	struct stack_store ss = { 0 };
	struct as_frame fr[2] = { { .addr = 0x10, .sym = "bpf_prog_1" },
				  { .addr = 0x20, .sym = "app::burn", .file = "src/main.rs", .line = 5 } };
	struct as_stack st = { .n_kernel = 1, .n_user = 1, .frames = fr };
	int t = registry__task(r, "app::hot");
	uint32_t id = stack_store__add(&ss, &st, -1);
	struct window *w = window__new(1, HTTP_WINDOW_CPU, 1000, 2, 10000000, NULL);
	uint8_t *buf = NULL;
	size_t len = 0, n;

	CHECK_EQ_U64(w->end_ns, 1000 + 2000000000ull);
	CHECK_EQ_U64(window__add(w, id, (uint32_t)t, 1, 10000000), 0);
	CHECK_EQ_U64(window__add(w, id, (uint32_t)t, 1, 10000000), 0);
	CHECK_EQ_U64(window__add(w, 0, REG_TASK_NONE, 1, 10000000), 0);
	CHECK_EQ_U64(w->n, 2);
	CHECK_EQ_U64(w->e[0].count, 2);
	CHECK_EQ_U64(window__encode(w, &ss, r, "/bin/app", 5, &buf, &len), 0);
	CHECK(len > 20 && buf[0] == 0x1f && buf[1] == 0x8b);
	uint8_t *pb = gunzip(buf, len, &n);
	CHECK(pb != NULL);
	if (pb) {
		CHECK(contains(pb, n, "app::hot"));
		CHECK(contains(pb, n, "none"));
		CHECK(contains(pb, n, "app::burn"));
		CHECK(contains(pb, n, "src/main.rs"));
		CHECK(!contains(pb, n, "bpf_prog_1"));   /* the tracing frame left out */
		CHECK(contains(pb, n, "nanoseconds"));
		CHECK(contains(pb, n, "/bin/app"));
	}
	free(pb);
	free(buf);
	/* the cap on entries: the rest in one entry without a stack, counted */
	for (uint32_t s = 1; s <= WINDOW_MAX_ENTRIES + 10; s++)
		window__add(w, s + 100, 1, 1, 1);
	CHECK(w->n <= WINDOW_MAX_ENTRIES + 1);
	CHECK(w->folded >= 10);
	window__free(w);
	stack_store__clear(&ss);
	registry__free(r);
}

/* blocking's rule: the innermost kernel function not the scheduler's nor
 * the tracing's; the first user frame of the program's own code */
static void test_culprit(void)
{
	struct as_frame fr[] = {
		{ .addr = 1, .sym = "bpf_prog_abc" }, { .addr = 2, .sym = "__schedule" },
		{ .addr = 3, .sym = "schedule" }, { .addr = 4, .sym = "do_nanosleep" },
		{ .addr = 5, .sym = "hrtimer_nanosleep" },
		{ .addr = 6, .sym = "clock_nanosleep" },
		{ .addr = 7, .sym = "std::thread::sleep", .file = "library/std/src/thread/mod.rs", .line = 3 },
		{ .addr = 8, .sym = "<tokio::task::Yield as core::future::Future>::poll" },
		{ .addr = 9, .sym = "app::block_here", .file = "src/main.rs", .line = 50 },
		{ .addr = 10, .sym = "app::blocker::{{closure}}", .file = "src/main.rs", .line = 55 },
	};
	struct as_stack st = { .n_kernel = 5, .n_user = 5, .frames = fr };
	const char *k, *u, *f;
	uint32_t line;

	culprit_of(&st, &k, &u, &f, &line);
	CHECK_STR(k, "do_nanosleep");
	CHECK_STR(u, "app::block_here");
	CHECK_STR(f, "src/main.rs");
	CHECK_EQ_U64(line, 50);
	culprit_of(NULL, &k, &u, &f, &line);
	CHECK_STR(k, "?");
	CHECK_STR(u, "?");
	CHECK(f == NULL && line == 0);
	/* only the runtime and a C library: no user frame */
	st.n_user = 3;
	culprit_of(&st, &k, &u, &f, &line);
	CHECK_STR(u, "?");
}

int main(void)
{
	RUN(test_registry_cap);
	RUN(test_registry_fold);
	RUN(test_expo_numbers);
	RUN(test_expo_families);
	RUN(test_stack_store);
	RUN(test_window);
	RUN(test_culprit);
	TEST_MAIN_END();
}
