/* Unit tests for the outputs (src/output/text.c, json.c) and their helpers
 * (src/util/json.c, fmt.c): a small fixed event stream rendered as text and
 * JSON and compared with golden files in tests/data/golden/ (reviewed by eye;
 * regenerate with UPDATE_GOLDEN=1 and review the diff), JSON validity, JSON
 * string escaping, duration formatting, the task identity (util/task_id.c). Run from the repository root. */
#include <errno.h>
#include <stdlib.h>

#include "analysis/findings.h"
#include "analysis/tasks.h"
#include "harness.h"
#include "output/report.h"
#include "output/view.h"
#include "util/fmt.h"
#include "util/json.h"
#include "util/task_id.h"

#define GOLDEN_DIR "tests/data/golden/"
#define MS 1000000ULL
#define US 1000ULL
#define BASE 5000000000ULL /* CLOCK_MONOTONIC at recording start */

static struct as_probe probes[] = {
	{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "tokio::runtime::blocking::task::BlockingTask<tokio::runtime::scheduler::"
		    "multi_thread::worker::Launch::launch::{{closure}}>" },
	{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "app::handler::{{closure}}" },
	{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "app::main::{{closure}}::{{closure}}" },
	{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "app::connection::Connection<tokio::net::tcp::stream::TcpStream>::serve::"
		    "{{closure}}" },
	{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll", .future = NULL },
};

static struct as_trace_meta meta = {
	.format_version = 1, .pid = 4242, .target = "/srv/app/target/release/app",
	.build_id = "", .runtime = "tokio", .cmdline = "app --port 8080",
	.clock_mono_ns = BASE, .probes = probes, .n_probes = 5,
};

#define W1 0x7f3a2c000b80ULL
#define W2 0x7f3a2c001100ULL
#define H1 0x55d0e1a0c300ULL
#define H2 0x55d0e1a0c500ULL
#define H3 0x55d0e1a0c700ULL
#define H4 0x55d0e1a0c900ULL

static const struct as_event stream[] = {
	{ .type = AS_EV_THREAD, .tid = 4242, .ts = BASE + 10 * US, .str = "app" },
	{ .type = AS_EV_THREAD, .tid = 4243, .ts = BASE + 20 * US, .str = "tokio-runtime-w" },
	{ .type = AS_EV_THREAD, .tid = 4244, .ts = BASE + 20 * US, .str = "tokio-runtime-\xff" },
	{ .type = AS_EV_POLL_BEGIN, .tid = 4243, .ts = BASE + 100 * US, .task = W1, .probe = 0,
	  .other = 1 },
	{ .type = AS_EV_POLL_BEGIN, .tid = 4244, .ts = BASE + 110 * US, .task = W2, .probe = 0,
	  .other = 2 },
	/* main() (block_on, not a task) spawns two tasks */
	{ .type = AS_EV_SPAWN, .tid = 4242, .ts = BASE + 1 * MS, .str = "src/main.rs",
	  .other = 14ULL << 32 | 5 },
	{ .type = AS_EV_WAKE, .tid = 4242, .ts = BASE + 1 * MS + 10 * US, .task = H1 },
	{ .type = AS_EV_SPAWN, .tid = 4242, .ts = BASE + 1 * MS + 20 * US,
	  .str = "src/\"odd\"\\dir/main.rs", .other = 21ULL << 32 | 9 },
	{ .type = AS_EV_WAKE, .tid = 4242, .ts = BASE + 1 * MS + 30 * US, .task = H2 },
	/* H1 runs 20 ms on 4243 and spawns H3 */
	{ .type = AS_EV_POLL_BEGIN, .tid = 4243, .ts = BASE + 1200 * US, .task = H1, .probe = 1,
	  .other = 3 },
	{ .type = AS_EV_SPAWN, .tid = 4243, .ts = BASE + 5 * MS,
	  .str = "/home/dev/app/src/handler.rs", .other = 40ULL << 32 | 13 },
	{ .type = AS_EV_WAKE, .tid = 4243, .ts = BASE + 5 * MS + 5 * US, .task = H3, .other = H1 },
	{ .type = AS_EV_POLL_END, .tid = 4243, .ts = BASE + 21200 * US, .task = H1 },
	/* H3 and H2 on 4244 */
	{ .type = AS_EV_POLL_BEGIN, .tid = 4244, .ts = BASE + 6 * MS, .task = H3, .probe = 3,
	  .other = 5 },
	{ .type = AS_EV_POLL_END, .tid = 4244, .ts = BASE + 6500 * US, .task = H3 },
	{ .type = AS_EV_POLL_BEGIN, .tid = 4244, .ts = BASE + 7 * MS, .task = H2, .probe = 2,
	  .other = 4 },
	{ .type = AS_EV_WAKE, .tid = 4244, .ts = BASE + 7100 * US, .task = H2, .other = H2 },
	{ .type = AS_EV_POLL_END, .tid = 4244, .ts = BASE + 7200 * US, .task = H2 },
	{ .type = AS_EV_POLL_BEGIN, .tid = 4244, .ts = BASE + 8 * MS, .task = H2, .probe = 2,
	  .other = 4 },
	{ .type = AS_EV_POLL_END, .tid = 4244, .ts = BASE + 8300 * US, .task = H2,
	  .flags = AS_POLL_READY },
	{ .type = AS_EV_FREE, .tid = 4244, .ts = BASE + 8400 * US, .task = H2 },
	{ .type = AS_EV_PARK, .tid = 4244, .ts = BASE + 9 * MS },
	{ .type = AS_EV_UNPARK, .tid = 4244, .ts = BASE + 500 * MS },
	/* H1 woken by the driver in 4243's worker loop, completes */
	{ .type = AS_EV_WAKE, .tid = 4243, .ts = BASE + 300 * MS, .task = H1, .other = W1 },
	{ .type = AS_EV_POLL_BEGIN, .tid = 4243, .ts = BASE + 300050 * US, .task = H1, .probe = 1,
	  .other = 3 },
	{ .type = AS_EV_POLL_END, .tid = 4243, .ts = BASE + 310050 * US, .task = H1,
	  .flags = AS_POLL_READY },
	{ .type = AS_EV_FREE, .tid = 4243, .ts = BASE + 310100 * US, .task = H1 },
	{ .type = AS_EV_PARK, .tid = 4243, .ts = BASE + 311 * MS },
	/* H3 woken, never polled again; H4 (older than the trace) still running */
	{ .type = AS_EV_WAKE, .tid = 4244, .ts = BASE + 600 * MS, .task = H3, .other = W2 },
	{ .type = AS_EV_POLL_BEGIN, .tid = 4244, .ts = BASE + 700 * MS, .task = H4, .probe = 4 },
};

static struct analysis *analyse(uint64_t lost, uint64_t missed, struct as_trace_end *end)
{
	struct analysis *a = analysis__new(&meta);

	*end = (struct as_trace_end){ .events = sizeof(stream) / sizeof(stream[0]), .lost = lost,
				      .missed = missed, .end_ns = BASE + 1000 * MS };
	CHECK(a != NULL);
	for (size_t i = 0; a && i < sizeof(stream) / sizeof(stream[0]); i++)
		CHECK_EQ_U64(analysis__add(a, &stream[i]), 0);
	CHECK_EQ_U64(analysis__finish(a, end), 0);
	return a;
}

/* Runs fn into a memory buffer; returns it (caller frees) or NULL. */
static char *render(int (*fn)(FILE *, const struct analysis *, const struct as_trace_meta *,
			      const struct as_trace_end *, const struct report_opts *),
		    const struct analysis *a, const struct as_trace_end *end,
		    const struct report_opts *opts, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	CHECK(f != NULL);
	if (!f)
		return NULL;
	CHECK_EQ_U64(fn(f, a, &meta, end, opts), 0);
	fclose(f);
	return buf;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n) {
			buf[n] = '\0';
			*len = (size_t)n;
		} else {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}

static void check_golden(const char *name, const char *got, size_t len)
{
	char path[256];
	size_t want_len = 0;
	char *want;

	snprintf(path, sizeof(path), GOLDEN_DIR "%s", name);
	if (getenv("UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "wb");

		CHECK(f && fwrite(got, 1, len, f) == len);
		if (f)
			fclose(f);
		fprintf(stderr, "updated %s\n", path);
		return;
	}
	want = slurp(path, &want_len);
	if (!want) {
		fprintf(stderr, "cannot read %s (run from the repository root)\n", path);
		th_failed_checks++;
		return;
	}
	if (want_len != len || memcmp(want, got, len)) {
		size_t i = 0;

		while (i < len && i < want_len && want[i] == got[i])
			i++;
		fprintf(stderr, "%s differs at byte %zu; got:\n%s\n", path, i, got);
		th_failed_checks++;
	}
	free(want);
}

/* Minimal strict JSON checker: one value, whitespace around, valid UTF-8. */
struct jp { const char *p, *end; int depth; };

static void ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r'))
		j->p++;
}

static bool lit(struct jp *j, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, s, n))
		return false;
	j->p += n;
	return true;
}

static bool str(struct jp *j)
{
	if (j->p >= j->end || *j->p != '"')
		return false;
	j->p++;
	while (j->p < j->end && *j->p != '"') {
		unsigned char c = (unsigned char)*j->p;

		if (c < 0x20)
			return false;
		if (c == '\\') {
			j->p++;
			if (j->p >= j->end || !strchr("\"\\/bfnrtu", *j->p))
				return false;
			if (*j->p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (j->p + i >= j->end || !strchr("0123456789abcdefABCDEF", j->p[i]))
						return false;
				j->p += 4;
			}
			j->p++;
			continue;
		}
		size_t len = fmt_utf8_len(j->p, (size_t)(j->end - j->p));
		if (!len)
			return false;
		j->p += len;
	}
	if (j->p >= j->end)
		return false;
	j->p++;
	return true;
}

static bool value(struct jp *j);

static bool container(struct jp *j, char open, char close, bool object)
{
	if (*j->p != open || ++j->depth > 100)
		return false;
	j->p++;
	ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		j->depth--;
		return true;
	}
	for (;;) {
		ws(j);
		if (object) {
			if (!str(j))
				return false;
			ws(j);
			if (!lit(j, ":"))
				return false;
		}
		if (!value(j))
			return false;
		ws(j);
		if (lit(j, ","))
			continue;
		if (j->p < j->end && *j->p == close) {
			j->p++;
			j->depth--;
			return true;
		}
		return false;
	}
}

static bool value(struct jp *j)
{
	ws(j);
	if (j->p >= j->end)
		return false;
	switch (*j->p) {
	case '{': return container(j, '{', '}', true);
	case '[': return container(j, '[', ']', false);
	case '"': return str(j);
	case 't': return lit(j, "true");
	case 'f': return lit(j, "false");
	case 'n': return lit(j, "null");
	default: break;
	}
	const char *start = j->p;
	if (*j->p == '-')
		j->p++;
	if (j->p < j->end && *j->p == '0')
		j->p++;
	else
		while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
			j->p++;
	if (j->p == start || j->p[-1] == '-')
		return false;
	if (j->p < j->end && *j->p == '.') {     /* fraction: at least one digit */
		const char *f = ++j->p;

		while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
			j->p++;
		if (j->p == f)
			return false;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		const char *e;

		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		e = j->p;
		while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
			j->p++;
		if (j->p == e)
			return false;
	}
	return true;
}

static bool json_valid(const char *s, size_t len)
{
	struct jp j = { s, s + len, 0 };

	if (!value(&j))
		return false;
	ws(&j);
	return j.p == j.end;
}

/* The golden reports, with their findings: the 20 ms and the 300 ms polls
 * (no off-CPU data), the task starved 400 ms. */
static void test_text_golden(void)
{
	struct as_trace_end end;
	struct analysis *a = analyse(0, 0, &end);
	struct findings *fi = findings__new(&(struct findings_input){ .analysis = a, .meta = &meta,
								      .end = &end });
	struct report_opts ro = { .findings = fi };
	size_t len = 0;
	char *out = render(report_text, a, &end, &ro, &len);

	if (out) {
		check_golden("report.txt", out, len);
		CHECK(strstr(out, "lost events 0") != NULL);
		CHECK(strstr(out, "WARNING") == NULL);
		/* what is wrong before the tables */
		CHECK(strstr(out, "FINDINGS: ") && strstr(out, "FINDINGS: ") < strstr(out, "TASKS:"));
	}
	free(out);
	findings__free(fi);
	analysis__free(a);
}

/* Colour (--color) and rows per table (--limit): the severities in colour,
 * one row a table, each cut table saying how many more and how to see
 * them; --limit 0 everything. */
static void test_text_view(void)
{
	struct as_trace_end end;
	struct analysis *a = analyse(0, 0, &end);
	struct findings *fi = findings__new(&(struct findings_input){ .analysis = a, .meta = &meta,
								      .end = &end });
	struct text_view v = { .color = true, .limit = 1 };
	struct report_opts ro = { .findings = fi, .view = &v };
	size_t len = 0;
	char *out = render(report_text, a, &end, &ro, &len);

	CHECK(out && strstr(out, "\033[1mFINDINGS:\033[0m \033[1;31m3 errors\033[0m, \033[1;36m1 info"
			    "\033[0m, most severe first"));
	CHECK(out && strstr(out, "\n  \033[1;31merror   \033[0m \033[1m~6 (unknown) held its worker"));
	CHECK(out && strstr(out, "           \033[32m-> record again without --no-offcpu"));
	CHECK(out && strstr(out, "\n  ... 3 more findings (--limit N shows more, --limit 0 all; all in "
			    "--format json)\n"));
	CHECK(out && strstr(out, "\n  ... 3 more tasks (--limit N shows more, --limit 0 all; every one "
			    "in --format json)\n"));
	CHECK(out && strstr(out, "\n  ... 2 more long polls"));
	CHECK(out && strstr(out, "\033[1mTASKS:\033[0m 4 tasks"));
	free(out);
	v = (struct text_view){ .limit = 0 };
	out = render(report_text, a, &end, &ro, &len);
	CHECK(out && !strstr(out, "... ") && !strchr(out, '\033'));
	free(out);
	findings__free(fi);
	analysis__free(a);
}

static void test_text_lost_warning(void)
{
	struct as_trace_end end;
	struct analysis *a = analyse(12, 3, &end);
	size_t len = 0;
	char *out = render(report_text, a, &end, NULL, &len);

	if (out) {
		CHECK(strstr(out, "lost events 12") != NULL);
		CHECK(strstr(out, "WARNING: 12 events lost") != NULL);
		CHECK(strstr(out, "3 missed") != NULL);
	}
	free(out);
	analysis__free(a);
}

static void test_truncated(void)
{
	struct as_trace_end end;
	struct analysis *a = analyse(0, 0, &end);
	struct report_opts ro = { .truncated = true };
	size_t len = 0;
	char *out = render(report_text, a, &end, &ro, &len);

	CHECK(out && strstr(out, "WARNING: the trace is truncated") != NULL);
	free(out);
	out = render(report_json, a, &end, &ro, &len);
	CHECK(out && json_valid(out, len) && strstr(out, "\"truncated\": true") != NULL);
	free(out);
	analysis__free(a);
}

static void test_json_golden(void)
{
	struct as_trace_end end;
	struct analysis *a = analyse(0, 0, &end);
	struct findings *fi = findings__new(&(struct findings_input){ .analysis = a, .meta = &meta,
								      .end = &end });
	struct report_opts ro = { .findings = fi };
	size_t len = 0;
	char *out = render(report_json, a, &end, &ro, &len);

	if (out) {
		CHECK(json_valid(out, len));
		check_golden("report.json", out, len);
	}
	free(out);
	/* without findings: an empty array, still there */
	out = render(report_json, a, &end, NULL, &len);
	CHECK(out && strstr(out, "\"findings\": []") != NULL);
	free(out);
	findings__free(fi);
	analysis__free(a);
}

static void test_reports_unfinished(void)
{
	struct analysis *a = analysis__new(&meta);
	struct as_trace_end end = { 0 };

	CHECK_EQ_U64(report_text(stdout, a, &meta, &end, NULL), -EINVAL);
	CHECK_EQ_U64(report_json(stdout, a, &meta, &end, NULL), -EINVAL);
	CHECK_EQ_U64(report_json(stdout, NULL, &meta, &end, NULL), -EINVAL);
	analysis__free(a);
}

/* An empty trace without meta still gives valid, sensible output. */
static void test_reports_empty(void)
{
	struct analysis *a = analysis__new(NULL);
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	CHECK_EQ_U64(analysis__finish(a, NULL), 0);
	f = open_memstream(&buf, &len);
	CHECK_EQ_U64(report_json(f, a, NULL, NULL, NULL), 0);
	fclose(f);
	CHECK(json_valid(buf, len));
	CHECK(strstr(buf, "\"target\": null") != NULL);
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	CHECK_EQ_U64(report_text(f, a, NULL, NULL, NULL), 0);
	fclose(f);
	CHECK(strstr(buf, "TASKS: 0 tasks") != NULL);
	free(buf);
	analysis__free(a);
}

/* Names in the text table: compiler-internal segments rewritten, a long
 * name shortened from the left by whole segments (its leaf kept), control
 * bytes shown as '?', multi-byte characters kept whole, columns aligned;
 * --wide keeps the whole name. */
static void test_text_names(void)
{
	struct as_probe p[] = {
		{ .role = AS_ROLE_POLL, .future = "caf\xc3\xa9::a\nb::handler::{async_fn_env#0}" },
		{ .role = AS_ROLE_POLL, .future = "app::0123456789012345678901234567890123456789::"
		  "leaf::{async_block_env#1}" },
	};
	struct as_trace_meta m = { .target = "t", .runtime = "tokio", .probes = p, .n_probes = 2 };
	struct as_event ev[] = {
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 10, .task = 0x10 },
		{ .type = AS_EV_POLL_BEGIN, .tid = 2, .ts = 20, .task = 0x20, .probe = 1 },
	};
	struct analysis *a = analysis__new(&m);
	struct text_view wide = { .wide = true, .limit = 5 };
	struct report_opts ro = { .view = &wide };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	for (size_t i = 0; i < 2; i++)
		CHECK_EQ_U64(analysis__add(a, &ev[i]), 0);
	CHECK_EQ_U64(analysis__finish(a, NULL), 0);
	f = open_memstream(&buf, &len);
	CHECK_EQ_U64(report_text(f, a, &m, NULL, NULL), 0);
	fclose(f);
	/* the column as wide as the widest name shown: 26 characters */
	CHECK(buf && strstr(buf, "\n     ~1  caf\xc3\xa9::a?b::handler         -     ") != NULL);
	CHECK(buf && strstr(buf, "\n     ~2  ...::leaf::{async_block#1} -     ") != NULL);
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	CHECK_EQ_U64(report_text(f, a, &m, NULL, &ro), 0);
	fclose(f);
	CHECK(buf && strstr(buf, "\n     ~2  app::0123456789012345678901234567890123456789::leaf::"
			    "{async_block#1} -     ") != NULL);
	free(buf);
	analysis__free(a);
}

/* Writes one string value and returns the output (caller frees). */
static char *json_str(const char *s, size_t len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	struct json_writer *w = json_writer__new(f, false);

	json_writer__string_len(w, s, len);
	CHECK_EQ_U64(json_writer__finish(w), 0);
	json_writer__free(w);
	fclose(f);
	CHECK(json_valid(buf, n));
	return buf;
}

static void test_json_escapes(void)
{
	static const struct { const char *in; size_t len; const char *out; } cases[] = {
		{ "plain", 5, "\"plain\"\n" },
		{ "a\"b\\c/", 6, "\"a\\\"b\\\\c/\"\n" },
		{ "\n\t\r\b\f\x01\x1f\x7f", 8, "\"\\n\\t\\r\\b\\f\\u0001\\u001f\\u007f\"\n" },
		{ "nul\0byte", 8, "\"nul\\u0000byte\"\n" },
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\xa6\x80", 14,
		  "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\xa6\x80\"\n" },
		{ "bad\xff", 4, "\"bad\\ufffd\"\n" },
		{ "\xc3", 1, "\"\\ufffd\"\n" },                  /* truncated */
		{ "\xc0\xaf", 2, "\"\\ufffd\\ufffd\"\n" },        /* overlong */
		{ "\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"\n" }, /* surrogate */
		{ "\xf4\x90\x80\x80", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\"\n" }, /* > U+10FFFF */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = json_str(cases[i].in, cases[i].len);

		CHECK_STR(got, cases[i].out);
		free(got);
	}
	/* every single byte gives valid JSON */
	for (int c = 0; c < 256; c++) {
		char in[3] = { 'x', (char)c, 'y' };
		free(json_str(in, 3));
	}
}

static void test_json_structure(void)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	struct json_writer *w = json_writer__new(f, true);

	json_writer__begin_object(w);
	json_writer__kv_u64(w, "a", 18446744073709551615ULL);
	json_writer__key(w, "b");
	json_writer__begin_array(w);
	json_writer__i64(w, -5);
	json_writer__bool(w, false);
	json_writer__string(w, NULL);
	json_writer__begin_object(w);
	json_writer__end_object(w);
	json_writer__begin_array(w);
	json_writer__end_array(w);
	json_writer__end_array(w);
	json_writer__end_object(w);
	CHECK_EQ_U64(json_writer__finish(w), 0);
	json_writer__free(w);
	fclose(f);
	CHECK_STR(buf, "{\n  \"a\": 18446744073709551615,\n  \"b\": [\n    -5,\n    false,\n"
		       "    null,\n    {},\n    []\n  ]\n}\n");
	CHECK(json_valid(buf, n));
	free(buf);

	/* misuse is reported, never crashes */
	buf = NULL;
	f = open_memstream(&buf, &n);
	w = json_writer__new(f, false);
	json_writer__begin_object(w);
	json_writer__u64(w, 1);                  /* value without key */
	CHECK_EQ_U64(json_writer__finish(w), -EINVAL);
	json_writer__free(w);
	w = json_writer__new(f, false);
	json_writer__begin_array(w);
	json_writer__end_object(w);              /* wrong close */
	CHECK_EQ_U64(json_writer__finish(w), -EINVAL);
	json_writer__free(w);
	w = json_writer__new(f, false);
	json_writer__begin_array(w);             /* unclosed */
	CHECK_EQ_U64(json_writer__finish(w), -EINVAL);
	json_writer__free(w);
	json_writer__free(NULL);
	fclose(f);
	free(buf);
	errno = 0;
	CHECK(json_writer__new(NULL, false) == NULL);
	CHECK_EQ_U64(errno, EINVAL);
}

static void test_fmt_duration(void)
{
	static const struct { uint64_t ns; const char *s; } cases[] = {
		{ 0, "0 ns" }, { 999, "999 ns" }, { 1000, "1.00 us" }, { 1234, "1.23 us" },
		{ 1235, "1.24 us" }, { 9994, "9.99 us" }, { 9995, "10.0 us" }, { 12345, "12.3 us" },
		{ 999949, "999.9 us" }, { 999950, "1.00 ms" }, { 1230000, "1.23 ms" },
		{ 200100000, "200.1 ms" }, { 3000000000ULL, "3.00 s" }, { 754200000000ULL, "754.2 s" },
		{ 12345678900000ULL, "12345.7 s" }, { UINT64_MAX, "18446744073.7 s" },
	};
	char buf[FMT_DURATION_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_STR(fmt_duration(buf, sizeof(buf), cases[i].ns), cases[i].s);
	CHECK_STR(fmt_duration(buf, 4, 1230000), "1.2");  /* truncated, terminated */
}

/* One identity per task: the runtime's id first, then the trace's number,
 * then the address; truncated, never overrun. */
static void test_task_id(void)
{
	char buf[TASK_ID_MAX], small[3];

	CHECK_STR(task_id_format(buf, sizeof(buf), 3, 7, 0x55d4), "#3");
	CHECK_STR(task_id_format(buf, sizeof(buf), 0, 7, 0x55d4), "~7");
	CHECK_STR(task_id_format(buf, sizeof(buf), 0, 0, 0x55d4ae37480ull), "0x55d4ae37480");
	CHECK_STR(task_id_format(buf, sizeof(buf), 0, 0, 0), "?");
	CHECK_STR(task_id_format(buf, sizeof(buf), UINT64_MAX, 0, 0), "#18446744073709551615");
	CHECK_STR(task_id_format(buf, sizeof(buf), 0, 0, UINT64_MAX), "0xffffffffffffffff");
	CHECK_STR(task_id_format(small, sizeof(small), 123, 0, 0), "#1");
	CHECK(task_id_format(NULL, 0, 1, 1, 1) == NULL);
}

int main(void)
{
	RUN(test_text_golden);
	RUN(test_text_view);
	RUN(test_text_lost_warning);
	RUN(test_json_golden);
	RUN(test_truncated);
	RUN(test_reports_unfinished);
	RUN(test_reports_empty);
	RUN(test_text_names);
	RUN(test_json_escapes);
	RUN(test_json_structure);
	RUN(test_fmt_duration);
	RUN(test_task_id);
	TEST_MAIN_END();
}
