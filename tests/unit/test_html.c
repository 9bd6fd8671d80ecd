/* Unit tests for the HTML report (src/output/html.c): the page around small
 * JSON inputs, and the kernel-side sections written from analyses the
 * caller ran and passed in. The rendering itself (JS in the page) is checked
 * in a browser by scripts/html-check.sh, run from the cases
 * tests/integ/cases/html_*.case.
 *
 * With arguments, `test_html REPORT.json OUT.html` runs no test: it writes the
 * page for that JSON file, for tests/integ/checks/html_page.sh until
 * `asyncscope report --html` exists. Exit 0, 1 on failure (one line on
 * stderr), 2 on usage. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "analysis/cpu_samples.h"
#include "analysis/runq.h"
#include "analysis/tasks.h"
#include "analysis/uring.h"
#include "analysis/zoom.h"
#include "output/html.h"

#define OPEN_TAG "<script type=\"application/json\" id=\"data\">"

/* Renders json into a malloc'd NUL-terminated string (caller frees); NULL on failure. */
static char *render(const char *json, size_t len, int *err)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (!f)
		return NULL;
	*err = report_html(f, json, len);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The bytes between the data block's tags, unescaped ("<\/" -> "</",
 * "\u003c!--" -> "<!--"), malloc'd; NULL if the block is missing or appears
 * twice. */
static char *embedded(const char *page)
{
	const char *start = strstr(page, OPEN_TAG), *end;
	char *out, *o;

	if (!start || strstr(start + 1, OPEN_TAG))
		return NULL;
	start += strlen(OPEN_TAG);
	end = strstr(start, "</script>");
	if (!end)
		return NULL;
	out = o = malloc(end - start + 1);
	if (!out)
		return NULL;
	for (const char *p = start; p < end;) {
		if (!strncmp(p, "<\\/", 3)) {
			*o++ = '<';
			*o++ = '/';
			p += 3;
		} else if (!strncmp(p, "\\u003c!--", 9)) {
			memcpy(o, "<!--", 4);
			o += 4;
			p += 9;
		} else {
			*o++ = *p++;
		}
	}
	*o = 0;
	return out;
}

/* The page outside the data block holds no URL: nothing can be fetched. */
static int has_url_outside_data(const char *page)
{
	const char *start = strstr(page, OPEN_TAG), *end = start ? strstr(start, "</script>") : NULL;
	char *copy = strdup(page);
	int found;

	if (!copy)
		return 1;
	if (start && end)
		memset(copy + (start - page), ' ', end - start);
	found = strstr(copy, "http://") || strstr(copy, "https://") || strstr(copy, "//cdn") ||
		strstr(copy, "src=\"") || strstr(copy, "@import") || strstr(copy, "url(http");
	free(copy);
	return found;
}

/* json without the whitespace between its tokens (the page embeds a JSON
 * object minified; anything else as it is). */
static char *minified(const char *json)
{
	char *out = malloc(strlen(json) + 1), *o = out;
	bool in_str = false;

	if (!out)
		return NULL;
	for (const char *p = json; *p; p++) {
		if (in_str) {
			*o++ = *p;
			if (*p == '\\' && p[1])
				*o++ = *++p;
			else if (*p == '"')
				in_str = false;
		} else if (*p == '"') {
			in_str = true;
			*o++ = *p;
		} else if (!strchr(" \t\n\r", *p)) {
			*o++ = *p;
		}
	}
	*o = 0;
	return out;
}

static void roundtrip(const char *json)
{
	int err = -1;
	char *page = render(json, strlen(json), &err);
	char *back = page ? embedded(page) : NULL;
	char *want = json[strspn(json, " \t\n")] == '{' ? minified(json) : strdup(json);

	CHECK(page);
	CHECK_EQ_U64(err, 0);
	if (page) {
		CHECK(!strncmp(page, "<!DOCTYPE html>\n", 16));
		CHECK(strstr(page, "</html>\n"));
		CHECK(!has_url_outside_data(page));
	}
	CHECK_STR(back, want);
	/* nothing cut: an empty "cuts" in the page block */
	CHECK(page && strstr(page, "<script type=\"application/json\" id=\"page\">{\"cuts\":{}}\n</script>"));
	free(want);
	free(back);
	free(page);
}

static void test_doctype_and_roundtrip(void)
{
	roundtrip("{\"target\": \"/srv/app\", \"pid\": 42, \"tasks\": [], \"workers\": []}\n");
	roundtrip("{\"format_version\":1,\"target\":null,\"pid\":null,\"runtime\":null,"
		  "\"duration_ns\":0,\"events\":0,\"lost_events\":0,\"missed_events\":0,"
		  "\"truncated\":false,\"tasks\":[],\"workers\":[],\"totals\":{}}");
}

static void test_minimal_and_empty(void)
{
	int err = -1;
	char *page;

	roundtrip("{}");
	roundtrip("");
	page = render(NULL, 0, &err);
	CHECK(page);
	CHECK_EQ_U64(err, 0);
	if (page)
		CHECK(strstr(page, OPEN_TAG "</script>"));
	free(page);
}

static void test_script_end_escaped(void)
{
	const char *json = "{\"name\": \"</script><script>alert(1)</script>\", "
			   "\"n2\": \"<!--<script>\", \"n3\": \"a</b\", \"n4\": \"<\"}";
	int err = -1;
	char *page = render(json, strlen(json), &err);
	const char *data;

	roundtrip(json);
	CHECK(page);
	if (!page)
		return;
	data = strstr(page, OPEN_TAG);
	CHECK(data);
	if (data) {
		data += strlen(OPEN_TAG);
		/* the first "</" after the opening tag is the block's own end */
		CHECK(!strncmp(strstr(data, "</"), "</script>\n", 10));
		CHECK(strstr(data, "\"<\\/script><script>alert(1)<\\/script>\""));
		CHECK(strstr(data, "\"\\u003c!--<script>\""));
		CHECK(strstr(data, "\"a<\\/b\""));
		CHECK(!strstr(data, "<!--<"));
	}
	free(page);
}

static void test_urls_in_data_only(void)
{
	roundtrip("{\"target\": \"https://example.com/x\", \"runtime\": \"http://y\"}");
}

static void test_not_nul_terminated(void)
{
	const char json[] = "{\"a\":1}XXXX";
	int err = -1;
	char *page = render(json, 7, &err), *back = page ? embedded(page) : NULL;

	CHECK_EQ_U64(err, 0);
	CHECK_STR(back, "{\"a\":1}");
	free(back);
	free(page);
}

static void test_errors(void)
{
	FILE *ro = fopen("/dev/null", "r");
	FILE *full = fopen("/dev/full", "w");

	CHECK_EQ_U64(report_html(NULL, "{}", 2), (unsigned long long)-EINVAL);
	CHECK_EQ_U64(report_html(stdout, NULL, 2), (unsigned long long)-EINVAL);
	if (ro) {
		CHECK_EQ_U64(report_html(ro, "{}", 2), (unsigned long long)-EIO);
		fclose(ro);
	}
	if (full) {
		CHECK_EQ_U64(report_html(full, "{}", 2), (unsigned long long)-EIO);
		fclose(full);
	}
}

/* The kernel-side block is written from the analyses the caller passes in
 * (html_inputs), each NULL one leaving its section out; a task is named by
 * its identity ("#5", "~2" without an id: the second task seen), as in
 * every output. */
static void test_inputs_from_caller(void)
{
	static struct as_probe probes[] = {
		{ .role = AS_ROLE_POLL, .addr = 0x1000, .symbol = "tokio::runtime::task::raw::poll",
		  .future = "app::heavy" },
	};
	static const struct as_trace_meta meta = { .target = "/bin/app", .runtime = "tokio",
						   .probes = probes, .n_probes = 1 };
	const struct as_event evs[] = {
		{ .type = AS_EV_THREAD, .tid = 1, .ts = 1, .str = "w" },
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 2, .task = 0xa000, .other = 5, .probe = 0 },
		{ .type = AS_EV_SAMPLE, .tid = 1, .ts = 3, .task = 0xa000 },
		{ .type = AS_EV_POLL_END, .tid = 1, .ts = 4, .task = 0xa000 },
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 5, .task = 0xb000, .probe = 0 },
		{ .type = AS_EV_SAMPLE, .tid = 1, .ts = 6, .task = 0xb000 },
		{ .type = AS_EV_POLL_END, .tid = 1, .ts = 7, .task = 0xb000 },
	};
	struct cpu_samples *c = cpu_samples__new(&meta);
	struct runq *q = runq__new();
	char *buf = NULL;
	size_t size = 0;
	FILE *f;

	CHECK(c != NULL && q != NULL);
	if (!c || !q)
		goto out;
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		CHECK_EQ_U64(cpu_samples__add(c, &evs[i], NULL), 0);
		CHECK_EQ_U64(runq__add(q, &evs[i]), 0);
	}
	f = open_memstream(&buf, &size);
	if (!f)
		goto out;
	CHECK_EQ_U64(report_html_write(f, "{}", 2, &(struct html_inputs){ .cpu = c, .runq = q }), 0);
	fclose(f);
	CHECK(buf && strstr(buf, "\"cpu\":{\"samples\":2,"));
	CHECK(buf && strstr(buf, "\"task\":\"#5\",\"header\":\"0xa000\",\"id\":5,\"name\":\"app::heavy\""));
	CHECK(buf && strstr(buf, "\"task\":\"~2\",\"header\":\"0xb000\",\"id\":null,"));
	CHECK(buf && !strstr(buf, "\"uring\":") && !strstr(buf, "\"blocking\":"));
	free(buf);
	buf = NULL;
	/* no inputs: an empty kernel block */
	f = open_memstream(&buf, &size);
	if (!f)
		goto out;
	CHECK_EQ_U64(report_html_write(f, "{}", 2, &(struct html_inputs){ 0 }), 0);
	fclose(f);
	CHECK(buf && strstr(buf, "id=\"kernel\">{}\n</script>"));
out:
	free(buf);
	cpu_samples__free(c);
	runq__free(q);
}

/* The page block from a second pass (analysis/zoom.h): lanes as one
 * base64url digit a bucket, runs written "c~N.", histograms as the
 * report's; the detailed tasks' rows kept first. In us: worker 1 polls T
 * 50..250 and U 250..300, is parked 300..700, polls T again 720..1000 (the
 * end); T woken at 0 and 600, U at 20. */
static void test_page_block(void)
{
	static struct as_probe probes[] = {
		{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll", .future = "app::t" },
		{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll", .future = "app::u" },
	};
	static const struct as_trace_meta meta = { .target = "/bin/app", .runtime = "tokio",
						   .probes = probes, .n_probes = 2 };
	const uint64_t us = 1000;
	const struct as_event evs[] = {
		{ .type = AS_EV_THREAD, .tid = 1, .ts = 0, .str = "w1" },
		{ .type = AS_EV_WAKE, .tid = 9, .ts = 0, .task = 0x100 },
		{ .type = AS_EV_WAKE, .tid = 9, .ts = 20 * us, .task = 0x200 },
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 50 * us, .task = 0x100, .other = 1, .probe = 0 },
		{ .type = AS_EV_POLL_END, .tid = 1, .ts = 250 * us, .task = 0x100 },
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 250 * us, .task = 0x200, .other = 2, .probe = 1 },
		{ .type = AS_EV_POLL_END, .tid = 1, .ts = 300 * us, .task = 0x200, .flags = AS_POLL_READY },
		{ .type = AS_EV_PARK, .tid = 1, .ts = 300 * us },
		{ .type = AS_EV_UNPARK, .tid = 1, .ts = 700 * us },
		{ .type = AS_EV_WAKE, .tid = 9, .ts = 600 * us, .task = 0x100 },
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 720 * us, .task = 0x100, .other = 1, .probe = 0 },
	};
	struct as_trace_end end = { .end_ns = 1000 * us };
	struct analysis *a = analysis__new(&meta);
	struct zoom *z = NULL;
	char *buf = NULL;
	size_t size = 0;
	FILE *f;

	CHECK(a != NULL);
	if (!a)
		return;
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		CHECK_EQ_U64(analysis__add(a, &evs[i]), 0);
	CHECK_EQ_U64(analysis__finish(a, &end), 0);
	z = zoom__new(a, &meta, NULL);
	CHECK(z != NULL);
	if (!z)
		goto out;
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		CHECK_EQ_U64(zoom__add(z, &evs[i]), 0);
	CHECK_EQ_U64(zoom__finish(z, &end), 0);
	f = open_memstream(&buf, &size);
	if (!f)
		goto out;
	CHECK_EQ_U64(report_html_write(f, "{\"tasks\": [{\"task\": \"#1\", \"seq\": 1}]}", 37,
					&(struct html_inputs){ .zoom = z }), 0);
	fclose(f);
	/* the worker: 1 us buckets; busy 50..300 and 720..1000, parked 300..700 */
	CHECK(buf && strstr(buf, "\"zoom\":{\"start_ns\":0,\"duration_ns\":1000000,\"workers\":[{\"tid\":1,"
			    "\"name\":\"w1\",\"first_ns\":0,\"lane\":{\"start_ns\":0,\"bucket_ns\":1000,"
			    "\"buckets\":1000,\"a\":\"A~49._~249.A~419._~279.\",\"b\":\"A~299._~399.A~299.\"}}]"));
	/* runnable, the most at any instant of a bucket (of 2 at most: 1 is 32
	 * 63rds, "g"): 1 from 0, 2 from 20 us to 50 (bucket 50 included), 1 to
	 * 250, none, 1 from 600 to 720 */
	CHECK(buf && strstr(buf, "\"runnable\":{\"start_ns\":0,\"bucket_ns\":1000,\"buckets\":1000,\"max\":2,"
			    "\"a\":\"g~19._~30.g~199.A~348.g~120.A~278.\"}"));
	/* T: one poll of 200 us ended, two waits of 50 and 120 us; its lane
	 * from 0 to the end (still running) */
	CHECK(buf && strstr(buf, "{\"seq\":1,\"task\":\"#1\",\"name\":\"app::t\",\"fine\":true,"
			    "\"poll\":{\"count\":1,\"min\":200000,\"max\":200000,\"mean\":200000,"));
	CHECK(buf && strstr(buf, "\"sched\":{\"count\":2,\"min\":50000,\"max\":120000,"));
	CHECK(buf && strstr(buf, "\"lane\":{\"start_ns\":0,\"bucket_ns\":1000,\"buckets\":1000,"
			    "\"a\":\"A~49._~199.A~469._~279.\",\"b\":\"_~49.A~549._~119.A~279.\"}"));
	/* U's lane: 20 .. 300 us */
	CHECK(buf && strstr(buf, "{\"seq\":2,\"task\":\"#2\",\"name\":\"app::u\""));
	CHECK(buf && strstr(buf, "\"lane\":{\"start_ns\":20000,\"bucket_ns\":1000,\"buckets\":280,"));
	CHECK(buf && strstr(buf, "\"candidates\":2,"));
out:
	free(buf);
	zoom__free(z);
	analysis__free(a);
}

/* test_html IN.json OUT.html: write the page for a JSON file (see the top). */
static int convert(const char *in_path, const char *out_path)
{
	FILE *in = fopen(in_path, "rb"), *out = NULL;
	char *json = NULL;
	size_t len = 0, cap = 0, n;
	int err = 0;

	if (!in) {
		fprintf(stderr, "test_html: cannot open %s: %s\n", in_path, strerror(errno));
		return 1;
	}
	do {
		if (len == cap) {
			char *p = realloc(json, cap = cap ? 2 * cap : 65536);
			if (!p) {
				err = -ENOMEM;
				goto out;
			}
			json = p;
		}
		n = fread(json + len, 1, cap - len, in);
		len += n;
	} while (n);
	if (ferror(in)) {
		err = -EIO;
		goto out;
	}
	out = fopen(out_path, "w");
	if (!out) {
		fprintf(stderr, "test_html: cannot create %s: %s\n", out_path, strerror(errno));
		fclose(in);
		free(json);
		return 1;
	}
	err = report_html(out, json, len);
out:
	if (out && fclose(out) && !err)
		err = -EIO;
	fclose(in);
	free(json);
	if (err)
		fprintf(stderr, "test_html: failed to write %s: %s\n", out_path, strerror(-err));
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3)
		return convert(argv[1], argv[2]);
	if (argc != 1) {
		fprintf(stderr, "usage: test_html [REPORT.json OUT.html]\n");
		return 2;
	}
	RUN(test_doctype_and_roundtrip);
	RUN(test_minimal_and_empty);
	RUN(test_script_end_escaped);
	RUN(test_urls_in_data_only);
	RUN(test_not_nul_terminated);
	RUN(test_errors);
	RUN(test_inputs_from_caller);
	RUN(test_page_block);
	TEST_MAIN_END();
}
