/* html: writes the HTML report page: the embedded template (html_assets.h,
 * generated from html_template.html) with three JSON documents in its data
 * blocks, escaped for a <script> element:
 * - "data": the report JSON (json.c's), bounded by html_bound.c: minified,
 *   its long arrays cut to their most important elements;
 * - "kernel": the kernel-side data, from the analyses the caller ran and
 *   passes in (struct html_inputs: blocking, cpu_samples, runq, uring, the
 *   same as `asyncscope blocking`, `cpu` and `uring` print);
 * - "page": what the page alone shows: what html_bound cut, and the second
 *   pass of analysis/zoom.h (the zoomable timeline's lanes, the detailed
 *   tasks' histograms and lanes).
 * This module creates and feeds no analysis, it only formats their results.
 * Writes only to the FILE* it is given. Every part is bounded whatever the
 * trace's size (limits below and in html_bound.c): the page stays under
 * 10 MB.
 *
 * The kernel-side JSON (the block with the id "kernel"; "{}" when there is
 * none), each key present only when the trace holds such events:
 * {"blocking": {"offcpu_ns", "intervals", "parked_ns", "parked_intervals",
 *     "runtime_ns", "runtime_intervals",
 *     "tasks" (count; the tasks themselves are the report's "blocking.tasks"),
 *     "stacks": [["task;user frames;kernel frames", ns, own, kernel], ...]
 *     (heaviest first, at most HTML_STACKS_MAX and HTML_STACKS_BYTES; frames
 *     folded to start at the task's code, analysis/stack_fold.h; own: the
 *     index of the program's first frame in the line, kernel: of the first
 *     kernel frame, -1 none), "stacks_total", "stacks_omitted_ns" (weight of
 *     the stacks left out)},
 *  "cpu": {"samples", "in_tasks", "tasks", "rows": [{"kind" ("task"|
 *     "scheduler"|"idle"|"outside-runtime"), "task" (the identity,
 *     util/task_id.h: "#3", "~7", or the address; null for other kinds), "header"
 *     ("0x..." or null), "id" (tokio id or null), "name", "samples"}] (most
 *     first, at most HTML_ROWS_MAX), "rows_total", "rows_omitted_samples",
 *     "stacks": [[line, samples, own, kernel], ...] (as blocking's),
 *     "stacks_total", "stacks_omitted" (samples)},
 *  "runq": {"threads": [{"tid", "name", "worker", "waits", "in_poll",
 *     "p50_ns", "p99_ns", "max_ns", "total_ns"}] (workers first, then most
 *     total delay), "threads_total"},
 *  "uring": {"submitted", "completed", "failed", "tasks": [{"task" (as
 *     in cpu; null outside polls), "header" (null outside polls), "id",
 *     "name", "submitted", "completed", "failed", "p50_ns", "p99_ns",
 *     "max_ns"}] (most submissions first), "tasks_total"}}
 *
 * The page JSON (the block with the id "page"):
 * {"cuts": {PATH: {"total", "kept", "omitted": {KEY: sum}}} (html_bound.h;
 *     {} when nothing was cut),
 *  "zoom" (with the second pass): {"start_ns" (absolute, the trace's start),
 *     "duration_ns",
 *     "workers": [{"tid", "name", "first_ns", "lane": L (a: busy, b: parked)}],
 *     "runnable": L (a: the most runnable user tasks at any instant, as a
 *         share of "max"),
 *     "candidates" (user tasks with a row in the report),
 *     "tasks": [{"seq", "task", "name", "fine" (a lane of fine buckets),
 *         "poll": H, "sched": H, "lane": L (a: running, b: scheduled)}]
 *         (the detailed tasks, analysis/zoom.h: fine lanes first)}}
 * with L = {"start_ns" (from the trace's start), "bucket_ns", "buckets",
 *     "max" (runnable only), "a", "b"}: a and b one character a bucket, the
 *     share of the bucket (of "max" for runnable) in 64 steps, "A" none, then
 *     "B".."_" (base64url digits 1..63: any non-zero share is at least "B"),
 *     a run of 5 or more of one character c written "c~N." (c, then N more),
 * and H = {"count", "min", "max", "mean", "p50", "p90", "p99", "p999",
 *     "buckets": [[low_ns, high_ns, count], ...]} (as the report's
 *     histograms, at most HTML_HIST_BUCKETS buckets). Times in ns. */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/blocking.h"
#include "analysis/cpu_samples.h"
#include "analysis/runq.h"
#include "analysis/uring.h"
#include "analysis/zoom.h"
#include "output/html.h"
#include "output/html_assets.h"
#include "output/html_bound.h"
#include "output/hist_json.h"
#include "util/json.h"
#include "util/task_id.h"

/* Writes the len bytes of json, with "</" as "<\/" and "<!--" as "\u003c!--".
 * In valid JSON "<" only occurs inside strings, where both forms are valid
 * escapes of the same characters. Without them, "</script>" in a task name
 * would end the script element, and "<!--" followed by "<script" would make
 * the parser overlook the real end tag. */
static int write_escaped(FILE *out, const char *json, size_t len)
{
	size_t start = 0;

	for (size_t i = 0; i < len; i++) {
		const char *esc = NULL;
		size_t skip = 0;

		if (json[i] != '<')
			continue;
		if (i + 1 < len && json[i + 1] == '/') {
			esc = "<\\/";
			skip = 2;
		} else if (len - i >= 4 && !memcmp(json + i, "<!--", 4)) {
			esc = "\\u003c!--";
			skip = 4;
		} else {
			continue;
		}
		if (fwrite(json + start, 1, i - start, out) != i - start || fputs(esc, out) == EOF)
			return -EIO;
		i += skip - 1;
		start = i + 1;
	}
	if (len > start && fwrite(json + start, 1, len - start, out) != len - start)
		return -EIO;
	return 0;
}

/* "task", "header" and "id" of a task: its identity (null when none is
 * known), its address ("0x...", null for 0) and its tokio id (null when
 * unknown). */
static void task_ids(struct json_writer *w, uint64_t task, uint64_t seq, uint64_t tokio_id)
{
	char hex[24], id[TASK_ID_MAX];

	json_writer__kv_string(w, "task", task || seq || tokio_id ?
			       task_id_format(id, sizeof(id), tokio_id, seq, task) : NULL);
	snprintf(hex, sizeof(hex), "0x%" PRIx64, task);
	json_writer__kv_string(w, "header", task ? hex : NULL);
	json_writer__kv_u64_or_null(w, "id", tokio_id, tokio_id);
}

/* "stacks": [[folded line, weight, own, kernel], ...] for the heaviest of
 * n flame-graph lines (heaviest first), at most HTML_STACKS_MAX of them and
 * HTML_STACKS_BYTES of their text, then "stacks_total" and, under
 * omitted_key, the weight of those left out. The lines are structures of
 * size stride with a const char * at stack_off, a uint64_t weight at
 * weight_off and two int32_t frame indices at own_off and kernel_off
 * (struct blocking_folded, struct cpu_folded): the program's first frame
 * and the first kernel frame in the line, -1 none (a page may mark them;
 * one reading [line, weight] sees the same stacks). */
static void stacks_json(struct json_writer *w, const void *lines, size_t n, size_t stride,
			size_t stack_off, size_t weight_off, size_t own_off, size_t kernel_off,
			const char *omitted_key)
{
	uint64_t omitted = 0;
	size_t kept = 0, bytes = 0;

	json_writer__key(w, "stacks");
	json_writer__begin_array(w);
	for (size_t i = 0; i < n; i++) {
		const char *line = (const char *)lines + i * stride;
		uint64_t weight;
		const char *stack;
		memcpy(&weight, line + weight_off, sizeof(weight));
		memcpy(&stack, line + stack_off, sizeof(stack));
		if (kept >= HTML_STACKS_MAX || (stack && bytes + strlen(stack) > HTML_STACKS_BYTES)) {
			omitted += weight;
			continue;
		}
		int32_t own, kernel;
		memcpy(&own, line + own_off, sizeof(own));
		memcpy(&kernel, line + kernel_off, sizeof(kernel));
		kept++;
		bytes += stack ? strlen(stack) : 0;
		json_writer__begin_array(w);
		json_writer__string(w, stack);
		json_writer__u64(w, weight);
		json_writer__i64(w, own);
		json_writer__i64(w, kernel);
		json_writer__end_array(w);
	}
	json_writer__end_array(w);
	json_writer__kv_u64(w, "stacks_total", n);
	json_writer__kv_u64(w, omitted_key, omitted);
}

static int blocking_json(struct json_writer *w, struct blocking *b)
{
	const struct blocking_summary *s = blocking__summary(b);
	size_t n;
	const struct blocking_folded *l;

	if (!s || (!s->count && !s->parked_count && !s->runtime_count))
		return 0;
	l = blocking__folded(b, &n);
	if (!l && s->count)
		return -ENOMEM;
	json_writer__key(w, "blocking");
	json_writer__begin_object(w);
	json_writer__kv_u64(w, "offcpu_ns", s->ns);
	json_writer__kv_u64(w, "intervals", s->count);
	json_writer__kv_u64(w, "parked_ns", s->parked_ns);
	json_writer__kv_u64(w, "parked_intervals", s->parked_count);
	json_writer__kv_u64(w, "runtime_ns", s->runtime_ns);
	json_writer__kv_u64(w, "runtime_intervals", s->runtime_count);
	json_writer__kv_u64(w, "tasks", s->tasks);
	stacks_json(w, l, n, sizeof(*l), offsetof(struct blocking_folded, stack),
		    offsetof(struct blocking_folded, ns), offsetof(struct blocking_folded, own),
		    offsetof(struct blocking_folded, kernel), "stacks_omitted_ns");
	json_writer__end_object(w);
	return 0;
}

static int cpu_json(struct json_writer *w, struct cpu_samples *c)
{
	static const char *const kinds[] = {
		[CPU_ROW_TASK] = "task", [CPU_ROW_SCHEDULER] = "scheduler",
		[CPU_ROW_IDLE] = "idle", [CPU_ROW_OTHER] = "outside-runtime",
	};
	const struct cpu_summary *s = cpu_samples__summary(c);
	size_t nr, nl;
	const struct cpu_row *r;
	const struct cpu_folded *l;
	uint64_t omitted = 0;

	if (!s || !s->samples)
		return 0;
	r = cpu_samples__rows(c, &nr);
	l = cpu_samples__folded(c, &nl);
	if (!r || !l)
		return -ENOMEM;
	json_writer__key(w, "cpu");
	json_writer__begin_object(w);
	json_writer__kv_u64(w, "samples", s->samples);
	json_writer__kv_u64(w, "in_tasks", s->in_tasks);
	json_writer__kv_u64(w, "tasks", s->tasks);
	json_writer__key(w, "rows");
	json_writer__begin_array(w);
	for (size_t i = 0; i < nr; i++) {
		if (i >= HTML_ROWS_MAX) {
			omitted += r[i].samples;
			continue;
		}
		json_writer__begin_object(w);
		json_writer__kv_string(w, "kind", (unsigned)r[i].kind < sizeof(kinds) / sizeof(kinds[0])
				       ? kinds[r[i].kind] : NULL);
		task_ids(w, r[i].kind == CPU_ROW_TASK ? r[i].task : 0,
			 r[i].kind == CPU_ROW_TASK ? r[i].seq : 0,
			 r[i].kind == CPU_ROW_TASK ? r[i].tokio_id : 0);
		json_writer__kv_string(w, "name", r[i].name);
		json_writer__kv_u64(w, "samples", r[i].samples);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	json_writer__kv_u64(w, "rows_total", nr);
	json_writer__kv_u64(w, "rows_omitted_samples", omitted);
	stacks_json(w, l, nl, sizeof(*l), offsetof(struct cpu_folded, stack),
		    offsetof(struct cpu_folded, count), offsetof(struct cpu_folded, own),
		    offsetof(struct cpu_folded, kernel), "stacks_omitted");
	json_writer__end_object(w);
	return 0;
}

static void runq_json(struct json_writer *w, struct runq *q)
{
	size_t n;
	const struct runq_thread *t = runq__threads(q, &n);

	if (!t || !n)
		return;
	json_writer__key(w, "runq");
	json_writer__begin_object(w);
	json_writer__key(w, "threads");
	json_writer__begin_array(w);
	for (size_t i = 0; i < n && i < HTML_ROWS_MAX; i++) {
		json_writer__begin_object(w);
		json_writer__kv_u64(w, "tid", t[i].tid);
		json_writer__kv_string(w, "name", t[i].name);
		json_writer__kv_bool(w, "worker", t[i].worker);
		json_writer__kv_u64(w, "waits", t[i].count);
		json_writer__kv_u64(w, "in_poll", t[i].in_poll);
		json_writer__kv_u64(w, "p50_ns", t[i].p50_ns);
		json_writer__kv_u64(w, "p99_ns", t[i].p99_ns);
		json_writer__kv_u64(w, "max_ns", t[i].max_ns);
		json_writer__kv_u64(w, "total_ns", t[i].total_ns);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	json_writer__kv_u64(w, "threads_total", n);
	json_writer__end_object(w);
}

static int uring_json(struct json_writer *w, struct uring *u)
{
	const struct uring_summary *s = uring__summary(u);
	size_t n;
	const struct uring_task *t;

	if (!s || (!s->submitted && !s->completed))
		return 0;
	t = uring__tasks(u, &n);
	if (!t)
		return -ENOMEM;
	json_writer__key(w, "uring");
	json_writer__begin_object(w);
	json_writer__kv_u64(w, "submitted", s->submitted);
	json_writer__kv_u64(w, "completed", s->completed);
	json_writer__kv_u64(w, "failed", s->errors);
	json_writer__key(w, "tasks");
	json_writer__begin_array(w);
	for (size_t i = 0; i < n && i < HTML_ROWS_MAX; i++) {
		json_writer__begin_object(w);
		task_ids(w, t[i].task, t[i].seq, t[i].tokio_id);
		json_writer__kv_string(w, "name", t[i].name);
		json_writer__kv_u64(w, "submitted", t[i].submitted);
		json_writer__kv_u64(w, "completed", t[i].completed);
		json_writer__kv_u64(w, "failed", t[i].errors);
		json_writer__kv_u64(w, "p50_ns", t[i].p50_ns);
		json_writer__kv_u64(w, "p99_ns", t[i].p99_ns);
		json_writer__kv_u64(w, "max_ns", t[i].max_ns);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	json_writer__kv_u64(w, "tasks_total", n);
	json_writer__end_object(w);
	return 0;
}

/* ---------------------------------------------------------- page block */

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* The share v / of in 64 steps: 0 none, any non-zero share at least 1. */
static unsigned step64(uint64_t v, uint64_t of)
{
	double f;
	unsigned q;

	if (!v || !of)
		return 0;
	f = (double)v / (double)of;
	q = (unsigned)(f * 63 + 0.5);
	return q < 1 ? 1 : q > 63 ? 63 : q;
}

/* key: the n buckets of v (denominators: of[i] when of, else the bucket's
 * length in l, else max) encoded as the top of this file says. */
static int lane_string(struct json_writer *w, const char *key, const struct zoom_lane *l,
		       const uint64_t *v, uint64_t max)
{
	char *buf = malloc(l->buckets + 1);
	size_t o = 0;
	char *enc = NULL;
	size_t enc_len = 0;
	FILE *mem;

	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < l->buckets; i++) {
		uint64_t b = l->start_ns + (uint64_t)i * l->bucket_ns;
		uint64_t e = i + 1 == l->buckets ? l->end_ns : b + l->bucket_ns;

		buf[o++] = B64[step64(v[i], max ? max : e > b ? e - b : 1)];
	}
	mem = open_memstream(&enc, &enc_len);
	if (!mem) {
		free(buf);
		return -ENOMEM;
	}
	for (size_t i = 0; i < o;) {
		size_t j = i + 1;

		while (j < o && buf[j] == buf[i])
			j++;
		if (j - i >= 5)
			fprintf(mem, "%c~%zu.", buf[i], j - i - 1);
		else
			fwrite(buf + i, 1, j - i, mem);
		i = j;
	}
	free(buf);
	if (fclose(mem)) {
		free(enc);
		return -ENOMEM;
	}
	json_writer__key(w, key);
	json_writer__string_len(w, enc, enc_len);
	free(enc);
	return 0;
}

/* L (see the top) of lane l, times from start. */
static int lane_json(struct json_writer *w, const struct zoom_lane *l, uint64_t start,
		     uint64_t max)
{
	int err;

	json_writer__begin_object(w);
	json_writer__kv_u64(w, "start_ns", l->start_ns > start ? l->start_ns - start : 0);
	json_writer__kv_u64(w, "bucket_ns", l->bucket_ns);
	json_writer__kv_u64(w, "buckets", l->buckets);
	if (max)
		json_writer__kv_u64(w, "max", max);
	err = lane_string(w, "a", l, l->a, max);
	if (!err && l->b)
		err = lane_string(w, "b", l, l->b, 0);
	json_writer__end_object(w);
	return err;
}

static int zoom_json(struct json_writer *w, const struct zoom *z)
{
	size_t nw, nt;
	const struct zoom_worker *ws = zoom__workers(z, &nw);
	const struct zoom_task *ts = zoom__tasks(z, &nt);
	const struct zoom_lane *rl = zoom__runnable(z);
	uint64_t rmax = 0, start, end;
	int err = 0;

	if (!rl)
		return 0;
	start = rl->start_ns;   /* every lane of the pass spans the trace or less */
	end = rl->end_ns;
	json_writer__key(w, "zoom");
	json_writer__begin_object(w);
	json_writer__kv_u64(w, "start_ns", start);
	json_writer__kv_u64(w, "duration_ns", end > start ? end - start : 0);
	json_writer__key(w, "workers");
	json_writer__begin_array(w);
	for (size_t i = 0; i < nw && !err; i++) {
		json_writer__begin_object(w);
		json_writer__kv_u64(w, "tid", ws[i].tid);
		json_writer__kv_string(w, "name", ws[i].name);
		json_writer__kv_u64(w, "first_ns", ws[i].first_ns > start ? ws[i].first_ns - start : 0);
		json_writer__key(w, "lane");
		err = lane_json(w, &ws[i].lane, start, 0);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	for (size_t i = 0; i < rl->buckets; i++)
		rmax = rl->a[i] > rmax ? rl->a[i] : rmax;
	json_writer__key(w, "runnable");
	if (!err)
		err = lane_json(w, rl, start, rmax ? rmax : 1);
	json_writer__kv_u64(w, "candidates", zoom__candidates(z));
	json_writer__key(w, "tasks");
	json_writer__begin_array(w);
	for (size_t i = 0; i < nt && !err; i++) {
		char id[TASK_ID_MAX];

		json_writer__begin_object(w);
		json_writer__kv_u64(w, "seq", ts[i].seq);
		json_writer__kv_string(w, "task", task_id_format(id, sizeof(id), ts[i].row->tokio_id,
								 ts[i].seq, 0));
		json_writer__kv_string(w, "name", ts[i].row->name);
		json_writer__kv_bool(w, "fine", ts[i].fine);
		hist_json__write(w, "poll", &ts[i].poll, HTML_HIST_BUCKETS);
		hist_json__write(w, "sched", &ts[i].sched, HTML_HIST_BUCKETS);
		json_writer__key(w, "lane");
		err = lane_json(w, &ts[i].lane, start, 0);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	json_writer__end_object(w);
	return err;
}

/* The seqs of the detailed tasks (malloc'd into *out, caller frees). */
static int keep_seqs(const struct zoom *z, uint64_t **out, size_t *n)
{
	const struct zoom_task *ts = zoom__tasks(z, n);

	*out = calloc(*n ? *n : 1, sizeof(uint64_t));
	if (!*out)
		return -ENOMEM;
	for (size_t i = 0; i < *n; i++)
		(*out)[i] = ts[i].seq;
	return 0;
}

/* Writes the kernel-side JSON (see the top) of in (NULL: none) into a
 * malloc'd buffer *buf (caller frees) of *len bytes. Returns 0, -ENOMEM or
 * -EIO. */
static int kernel_json(const struct html_inputs *in, char **buf, size_t *len)
{
	struct json_writer *w = NULL;
	FILE *mem;
	int err;

	*buf = NULL;
	*len = 0;
	mem = open_memstream(buf, len);
	if (!mem)
		return -ENOMEM;
	w = json_writer__new(mem, false);
	if (!w) {
		err = -ENOMEM;
		goto out;
	}
	json_writer__begin_object(w);
	err = in && in->blocking ? blocking_json(w, in->blocking) : 0;
	if (!err && in && in->cpu)
		err = cpu_json(w, in->cpu);
	if (!err && in && in->runq)
		runq_json(w, in->runq);
	if (!err && in && in->uring)
		err = uring_json(w, in->uring);
	json_writer__end_object(w);
	if (!err)
		err = json_writer__finish(w);
out:
	json_writer__free(w);
	if (fclose(mem) && !err)
		err = -EIO;
	if (err) {
		free(*buf);
		*buf = NULL;
		*len = 0;
	}
	return err;
}

/* The report json bounded (html_bound.h) into a malloc'd *rep (*rep_len
 * bytes; the json as it is when it is not one JSON object, for the page to
 * say so) and the page JSON (see the top) into *page; both caller frees. */
static int page_json(const struct html_inputs *in, const char *json, size_t len, char **rep,
		     size_t *rep_len, char **page, size_t *page_len)
{
	struct html_bound_opts bo = { 0 };
	struct json_writer *w = NULL;
	uint64_t *keep = NULL;
	FILE *rmem = NULL, *pmem = NULL;
	int err = -ENOMEM;

	*rep = *page = NULL;
	*rep_len = *page_len = 0;
	if (in && in->zoom && keep_seqs(in->zoom, &keep, &bo.n_keep))
		return -ENOMEM;
	bo.keep = keep;
	rmem = open_memstream(rep, rep_len);
	pmem = open_memstream(page, page_len);
	w = pmem ? json_writer__new(pmem, false) : NULL;
	if (!rmem || !w)
		goto out;
	json_writer__begin_object(w);
	json_writer__key(w, "cuts");
	err = html_bound(rmem, json, len, &bo, w);
	if (err == -EINVAL) {
		/* not a JSON object: as it is, nothing cut */
		json_writer__begin_object(w);
		json_writer__end_object(w);
		err = len && fwrite(json, 1, len, rmem) != len ? -EIO : 0;
	}
	if (!err && in && in->zoom)
		err = zoom_json(w, in->zoom);
	json_writer__end_object(w);
	if (!err)
		err = json_writer__finish(w);
out:
	json_writer__free(w);
	if (rmem && fclose(rmem) && !err)
		err = -EIO;
	if (pmem && fclose(pmem) && !err)
		err = -EIO;
	free(keep);
	if (err) {
		free(*rep);
		free(*page);
		*rep = *page = NULL;
	}
	return err;
}

int report_html_write(FILE *out, const char *json, size_t len, const struct html_inputs *in)
{
	char *kjson = NULL, *rjson = NULL, *pjson = NULL;
	size_t klen = 0, rlen = 0, plen = 0;
	int err;

	if (!out || (!json && len))
		return -EINVAL;
	if ((err = kernel_json(in, &kjson, &klen)) ||
	    (err = page_json(in, json, len, &rjson, &rlen, &pjson, &plen)))
		goto out;
	if (fputs(html_head, out) == EOF || (err = write_escaped(out, rjson, rlen)) ||
	    fputs(html_mid, out) == EOF || (err = write_escaped(out, kjson, klen)) ||
	    fputs(html_mid2, out) == EOF || (err = write_escaped(out, pjson, plen)) ||
	    fputs(html_tail, out) == EOF || fflush(out) == EOF || ferror(out))
		err = err ? err : -EIO;
out:
	free(kjson);
	free(rjson);
	free(pjson);
	return err;
}

int report_html(FILE *out, const char *json, size_t len)
{
	return report_html_write(out, json, len, NULL);
}
