/* html: writes the HTML report page: the embedded template (html_assets.h,
 * generated from html_template.html) with the report JSON and the
 * kernel-side JSON in its two data blocks, escaped for a <script> element.
 * The kernel-side data comes from the analyses the caller ran and passes in
 * (struct html_inputs: blocking, cpu_samples, runq, uring, the same as
 * `asyncscope blocking`, `cpu` and `uring` print); this module creates and
 * feeds none, it only formats their results. Writes only to the FILE* it is
 * given.
 *
 * The kernel-side JSON (the block with the id "kernel"; "{}" when there is
 * none), each key present only when the trace holds such events:
 * {"blocking": {"offcpu_ns", "intervals", "parked_ns", "parked_intervals",
 *     "runtime_ns", "runtime_intervals",
 *     "tasks" (count; the tasks themselves are the report's "blocking.tasks"),
 *     "stacks": [["task;user frames;kernel frames", ns, own, kernel], ...]
 *     (heaviest first, at most HTML_STACKS_MAX; frames folded to start at
 *     the task's code, analysis/stack_fold.h; own: the index of the
 *     program's first frame in the line, kernel: of the first kernel frame,
 *     -1 none), "stacks_total", "stacks_omitted_ns" (weight of the stacks
 *     left out)},
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
 *     "max_ns"}] (most submissions first), "tasks_total"}} */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/blocking.h"
#include "analysis/cpu_samples.h"
#include "analysis/runq.h"
#include "analysis/uring.h"
#include "output/html.h"
#include "output/html_assets.h"
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

/* "stacks": [[folded line, weight, own, kernel], ...] for the first
 * HTML_STACKS_MAX of n flame-graph lines (heaviest first), then
 * "stacks_total" and, under omitted_key, the weight of those left out. The
 * lines are structures of size stride with a const char * at stack_off, a
 * uint64_t weight at weight_off and two int32_t frame indices at own_off
 * and kernel_off (struct blocking_folded, struct cpu_folded): the
 * program's first frame and the first kernel frame in the line, -1 none
 * (a page may mark them; one reading [line, weight] sees the same stacks). */
static void stacks_json(struct json_writer *w, const void *lines, size_t n, size_t stride,
			size_t stack_off, size_t weight_off, size_t own_off, size_t kernel_off,
			const char *omitted_key)
{
	uint64_t omitted = 0;

	json_writer__key(w, "stacks");
	json_writer__begin_array(w);
	for (size_t i = 0; i < n; i++) {
		const char *line = (const char *)lines + i * stride;
		uint64_t weight;
		const char *stack;
		memcpy(&weight, line + weight_off, sizeof(weight));
		memcpy(&stack, line + stack_off, sizeof(stack));
		if (i >= HTML_STACKS_MAX) {
			omitted += weight;
			continue;
		}
		int32_t own, kernel;
		memcpy(&own, line + own_off, sizeof(own));
		memcpy(&kernel, line + kernel_off, sizeof(kernel));
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

int report_html_write(FILE *out, const char *json, size_t len, const struct html_inputs *in)
{
	char *kjson = NULL;
	size_t klen = 0;
	int err;

	if (!out || (!json && len))
		return -EINVAL;
	if ((err = kernel_json(in, &kjson, &klen)))
		return err;
	if (fputs(html_head, out) == EOF || (err = write_escaped(out, json, len)) ||
	    fputs(html_mid, out) == EOF || (err = write_escaped(out, kjson, klen)) ||
	    fputs(html_tail, out) == EOF || fflush(out) == EOF || ferror(out))
		err = err ? err : -EIO;
	free(kjson);
	return err;
}

int report_html(FILE *out, const char *json, size_t len)
{
	return report_html_write(out, json, len, NULL);
}
