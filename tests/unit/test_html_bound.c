/* Unit tests for src/output/html_bound.c: the report JSON as the page
 * embeds it. Small documents come out minified and otherwise unchanged;
 * long arrays are cut to the elements that matter (named tasks, workers,
 * tasks a finding names, then the busiest; the most frequent wake edges and
 * the named tasks'), in their order, with exact sums of what was left out;
 * invalid JSON is refused. Limits are scaled down (opts.scale) to keep the
 * documents small. */
#include <errno.h>
#include <stdlib.h>

#include "harness.h"
#include "output/html_bound.h"
#include "util/json.h"

struct out {
	char *doc, *cuts;
	int err;
};

static struct out bound(const char *json, const uint64_t *keep, size_t n_keep, double scale)
{
	struct out o = { 0 };
	size_t dl = 0, cl = 0;
	FILE *d = open_memstream(&o.doc, &dl), *c = open_memstream(&o.cuts, &cl);
	struct json_writer *w = c ? json_writer__new(c, false) : NULL;
	struct html_bound_opts opts = { .keep = keep, .n_keep = n_keep, .scale = scale };

	CHECK(d && w);
	if (!d || !w) {
		o.err = -ENOMEM;
		return o;
	}
	o.err = html_bound(d, json, strlen(json), &opts, w);
	if (!o.err)
		CHECK_EQ_U64(json_writer__finish(w), 0);
	json_writer__free(w);
	fclose(d);
	fclose(c);
	/* the writer ends with a newline */
	if (o.cuts && *o.cuts && o.cuts[strlen(o.cuts) - 1] == '\n')
		o.cuts[strlen(o.cuts) - 1] = 0;
	return o;
}

static void out_free(struct out *o)
{
	free(o->doc);
	free(o->cuts);
}

static void test_minified_unchanged(void)
{
	struct out o = bound(" {\"a\" : [1, 2 ,{\"b\": \"x y\\\" \\\\ z\"}],\n\t\"c\": -1.5e+3,"
			     " \"d\": null, \"e\": true, \"f\": {}, \"g\": []} \n", NULL, 0, 0);

	CHECK_EQ_U64(o.err, 0);
	CHECK_STR(o.doc, "{\"a\":[1,2,{\"b\":\"x y\\\" \\\\ z\"}],\"c\":-1.5e+3,\"d\":null,\"e\":true,"
		  "\"f\":{},\"g\":[]}");
	CHECK_STR(o.cuts, "{}");
	out_free(&o);
	/* under the limits, a bounded array and a nested one stay whole */
	o = bound("{\"tasks\": [{\"seq\": 1}], \"futures\": {\"parked\": [1, 2], \"x\": 3}}", NULL, 0, 0);
	CHECK_STR(o.doc, "{\"tasks\":[{\"seq\":1}],\"futures\":{\"parked\":[1,2],\"x\":3}}");
	CHECK_STR(o.cuts, "{}");
	out_free(&o);
}

static void test_invalid(void)
{
	static const char *const bad[] = {
		"", "   ", "[]", "1", "\"s\"", "{", "{\"a\":}", "{\"a\":1,}", "{\"a\":1} x",
		"{\"a\":\"\\x\"}", "{\"a\":\"\x01\"}", "{\"a\":01}", "{\"a\":1.}", "{\"a\":tru}",
		"{\"a\":[1 2]}", "{a:1}", "{\"a\":\"\\u12g4\"}", "{\"a\":-}", "{\"a\":1e}",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct out o = bound(bad[i], NULL, 0, 0);

		if (o.err != -EINVAL)
			fprintf(stderr, "accepted: %s\n", bad[i]);
		CHECK_EQ_U64(o.err, (unsigned long long)-EINVAL);
		CHECK(!o.doc || !*o.doc);
		out_free(&o);
	}
	/* nesting: 512 levels refused, 500 accepted */
	char deep[1100];
	size_t n = 0;

	n += (size_t)sprintf(deep, "{\"a\":");
	for (int i = 0; i < 500; i++)
		deep[n++] = '[';
	for (int i = 0; i < 500; i++)
		deep[n++] = ']';
	deep[n++] = '}';
	deep[n] = 0;
	struct out o = bound(deep, NULL, 0, 0);
	CHECK_EQ_U64(o.err, 0);
	out_free(&o);
	n = (size_t)sprintf(deep, "{\"a\":");
	for (int i = 0; i < 520; i++)
		deep[n++] = '[';
	deep[n] = 0;
	o = bound(deep, NULL, 0, 0);
	CHECK_EQ_U64(o.err, (unsigned long long)-EINVAL);
	out_free(&o);
	CHECK_EQ_U64(html_bound(NULL, "{}", 2, NULL, NULL), (unsigned long long)-EINVAL);
}

/* 40 task rows: seq i, busy_ns 1000 * i (seq 40 the busiest), polls i;
 * seqs 1 and 2 workers. With scale 0.01 at most 10 rows are kept. */
static char *tasks_doc(const char *findings)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fputs("{\"tasks\": [", f);
	for (int i = 1; i <= 40; i++)
		fprintf(f, "%s{\"task\": \"#%d\", \"id\": %d, \"seq\": %d, \"kind\": \"%s\", "
			"\"busy_ns\": %d, \"polls\": %d, \"wakes\": 1, \"sched_ns\": 0}",
			i > 1 ? ", " : "", i + 100, i + 100, i, i <= 2 ? "worker" : "task", 1000 * i, i);
	fprintf(f, "], \"findings\": %s}", findings);
	fclose(f);
	return buf;
}

/* The seqs of the rows kept, in order, as "1,2,..." (before "findings"). */
static void kept_seqs(const char *doc, char *out, size_t size)
{
	const char *p = doc, *end = doc ? strstr(doc, "\"findings\"") : NULL;
	size_t o = 0;

	out[0] = 0;
	while (p && (p = strstr(p, "\"seq\":")) && (!end || p < end)) {
		p += 6;
		o += (size_t)snprintf(out + o, size - o, "%s%ld", o ? "," : "", strtol(p, NULL, 10));
	}
}

static void test_tasks(void)
{
	static const uint64_t keep[] = { 5, 6 };
	char *doc = tasks_doc("[{\"kind\": \"x\", \"task\": {\"seq\": 7, \"name\": \"a\"}}, "
			      "{\"kind\": \"y\", \"task\": {\"task\": \"#108\", \"id\": 108}}, "
			      "{\"kind\": \"z\", \"task\": null}]");
	struct out o = bound(doc, keep, 2, 0.01);
	char seqs[256];

	CHECK_EQ_U64(o.err, 0);
	kept_seqs(o.doc, seqs, sizeof(seqs));
	/* workers 1, 2; named 5, 6; findings 7 (seq) and 8 (id 108); then the
	 * busiest 40, 39, 38, 37: in the array's order */
	CHECK_STR(seqs, "1,2,5,6,7,8,37,38,39,40");
	/* left out: seqs 3, 4, 9..36: polls and busy summed exactly */
	uint64_t polls = 3 + 4, busy;

	for (int i = 9; i <= 36; i++)
		polls += (uint64_t)i;
	busy = polls * 1000;
	char want[256];

	snprintf(want, sizeof(want), "{\"tasks\":{\"total\":40,\"kept\":10,\"omitted\":{\"polls\":%llu,"
		 "\"busy_ns\":%llu,\"wakes\":30,\"sched_ns\":0}}}", (unsigned long long)polls,
		 (unsigned long long)busy);
	CHECK_STR(o.cuts, want);
	/* the findings themselves are copied whole */
	CHECK(o.doc && strstr(o.doc, "\"findings\":[{\"kind\":\"x\",\"task\":{\"seq\":7,\"name\":\"a\"}},"));
	out_free(&o);
	/* without a named task: workers, the findings' tasks, then the busiest */
	o = bound(doc, NULL, 0, 0.01);
	kept_seqs(o.doc, seqs, sizeof(seqs));
	CHECK_STR(seqs, "1,2,7,8,35,36,37,38,39,40");
	out_free(&o);
	free(doc);
}

/* Wake edges, most frequent first: 60 edges from task 1000 + i to task
 * 2000 + i (count 100 - i), then 20 into task 5 (count 1). Scale 0.01: at
 * most 30 kept, the top 10 by count first, then at most 8 of task 5's. */
static void test_edges(void)
{
	static const uint64_t keep[] = { 5 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	char seqs[512];

	fputs("{\"wake_edges\": [", f);
	for (int i = 0; i < 60; i++)
		fprintf(f, "%s{\"from_seq\": %d, \"to_seq\": %d, \"count\": %d, \"timed\": 1}",
			i ? ", " : "", 1000 + i, 2000 + i, 100 - i);
	for (int i = 0; i < 20; i++)
		fprintf(f, ", {\"from_seq\": %d, \"to_seq\": 5, \"count\": 1, \"timed\": 0}", 3000 + i);
	fputs("]}", f);
	fclose(f);
	struct out o = bound(buf, keep, 1, 0.01);

	CHECK_EQ_U64(o.err, 0);
	/* top 10, task 5's first 8, then the next most frequent (10..21) */
	int n10 = 0, n5 = 0;
	const char *p = o.doc;

	while (p && (p = strstr(p, "\"to_seq\":"))) {
		long to = strtol(p + 9, NULL, 10);

		n5 += to == 5;
		n10 += to >= 2000 && to < 2022;
		p += 9;
	}
	CHECK_EQ_U64(n5, 8);
	CHECK_EQ_U64(n10, 22);
	/* the others: counts of edges 22..59 (78 .. 41) and 12 of task 5's */
	uint64_t cnt = 12;

	for (int i = 22; i < 60; i++)
		cnt += (uint64_t)(100 - i);
	snprintf(seqs, sizeof(seqs), "{\"wake_edges\":{\"total\":80,\"kept\":30,\"omitted\":"
		 "{\"count\":%llu,\"timed\":38}}}", (unsigned long long)cnt);
	CHECK_STR(o.cuts, seqs);
	out_free(&o);
	free(buf);
}

/* A nested array (futures.parked, kept in order) and the byte limit: an
 * element too large for the budget is left out, smaller ones after it kept. */
static void test_nested_and_bytes(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fputs("{\"futures\": {\"frames\": 3, \"parked\": [", f);
	for (int i = 0; i < 12; i++)
		fprintf(f, "%s{\"seq\": %d, \"waiting_ns\": 10}", i ? "," : "", i + 1);
	fputs("], \"oncpu_stacks\": [{\"frames\": [\"", f);
	for (int i = 0; i < 6000; i++)
		fputc('x', f);
	fputs("\"], \"ns\": 900}", f);
	for (int i = 0; i < 40; i++)
		fprintf(f, ", {\"frames\": [\"f%d\"], \"ns\": %d}", i, 100 - i);
	fputs("]}, \"after\": [1]}", f);
	fclose(f);
	struct out o = bound(buf, NULL, 0, 0.01);
	char seqs[256];

	CHECK_EQ_U64(o.err, 0);
	kept_seqs(o.doc, seqs, sizeof(seqs));
	CHECK_STR(seqs, "1,2,3,4,5");   /* 500 * 0.01, the array's order */
	CHECK(o.doc && !strstr(o.doc, "xxxx"));   /* 6 kB: over 400000 * 0.01 bytes */
	CHECK(o.doc && strstr(o.doc, "\"frames\":[\"f0\"]"));
	CHECK(o.doc && strstr(o.doc, "\"frames\":3,"));
	CHECK(o.doc && strstr(o.doc, "},\"after\":[1]}"));
	CHECK(o.cuts && strstr(o.cuts, "\"futures.parked\":{\"total\":12,\"kept\":5,\"omitted\":{\"waiting_ns\":70}}"));
	/* 30 of 41 stacks (3000 * 0.01), the 6 kB one left out by its size:
	 * 900 + the lightest 10 (ns 70 .. 61) */
	CHECK(o.cuts && strstr(o.cuts, "\"futures.oncpu_stacks\":{\"total\":41,\"kept\":30,\"omitted\":{\"ns\":1555}}"));
	out_free(&o);
	free(buf);
}

int main(void)
{
	RUN(test_minified_unchanged);
	RUN(test_invalid);
	RUN(test_tasks);
	RUN(test_edges);
	RUN(test_nested_and_bytes);
	TEST_MAIN_END();
}
