/* json: the task report as one JSON document with a stable schema, for
 * scripts, tests and the HTML report (html.c reads exactly these names).
 * Formatting only; writes only to the FILE* it is given.
 *
 * Times: keys ending in _ns are durations in integer ns, except "start_ns"
 * and "since_ns" inside long_polls and stalled, which are instants in ns
 * relative to the start of the trace (the first event, or the recording
 * start if earlier), and timeline.start_ns, which is that start itself,
 * absolute CLOCK_MONOTONIC ns (the clock of "first_seen_ns"). Bucket i of
 * the timeline covers [start_ns + i * bucket_ns, start_ns + (i + 1) *
 * bucket_ns), the last one clipped to the end of the trace.
 *
 * Tasks: every object about a task has "task", its identity as every output
 * shows it (util/task_id.h): "#3", the runtime's id (Tokio's task id), else
 * "~7", its seq (1, 2, ... in order of first sight in the trace), else, where
 * only the address is known (a blocking or usdt task whose polls' begins
 * the task model lost), "0x..."; null where no task
 * (a group end, a waker that is no task). "id", "seq" and "header" stay as
 * they were.
 *
 * {"schema_version" (this document's version, REPORT_SCHEMA_VERSION: 1;
 *     "format_version" is the trace file's),
 *  "format_version", "target", "pid", "runtime", "runtime_detail"
 *  (which release of the runtime the recorder found, null unknown), "wakes_recorded"
 *  (false: no wake probe, record --lite), "flight" (a flight recorder's
 *  snapshot: {"trigger" (signal|snapshot|blocking|busy), "detail", "trigger_ns"
 *  (since the trace's start), "window_ns", "after_ns", "evicted_events" (of
 *  the snapshot's range, evicted for --flight-size)}; null otherwise),
 *  "duration_ns", "events",
 *  "lost_events", "missed_events" (null when unknown: a truncated trace of
 *  format version 8 or older), "loss_counts" ("exact": from the end record;
 *  "lower_bound": a truncated trace, the counts of its last complete chunk;
 *  "unknown"), "truncated" (no end record),
 *  "findings": [{"kind" (blocking, long_poll, never_woken, lost_waker, starved, self_wake,
 *     busy_poll, preempted, worker_busy, worker_never_parks, lost_events,
 *     truncated, tasks_folded, anomalies, no_wakes, no_offcpu: analysis/findings.h),
 *     "severity" ("error"|"warning"|"info"), "task" (null, or the task it is
 *     about, the worst of "tasks" when several of its name: {"task" (identity,
 *     as everywhere, null for a folded group), "id" (null unknown), "seq" (null
 *     unknown), "name" (the full name, null unknown), "short_name" (as the text
 *     shows it), "group" (index in task_groups of a folded task, or null)}),
 *     "tasks" (how many tasks of that name it covers, 0 none), "thread" ({"tid",
 *     "name"} for a worker finding, else null), "title" (one line), "detail",
 *     "advice" (one line: what to do), "file" (null unknown), "line" (null
 *     unknown)}] (most severe first; at most 500, "findings_omitted" the others),
 *  "tasks": [{"task", "id" (tokio id or null), "seq", "task_name" (the name given at
 *  spawn, task::Builder::name, or null), "header" ("0x..."), "name" (or null),
 *  "short_name" (the name as the text report shows it, shortened from the left),
 *             "kind" ("task"|"worker"), "spawn_location" ("file:line:col" or null),
 *             "spawned_in_trace", "parent" (seq or null), "polls", "pending_polls",
 *             "ready_polls", "busy_ns", "max_poll_ns", "mean_poll_ns", "idle_ns",
 *             "sched_ns", "wakes", "self_wakes",
 *             "state" ("completed"|"running"|"runnable"|"idle"), "wakers" (idle
 *             at the end: the wakers of it held then, read by the recorder in
 *             the program's memory, 0 none left: it can never be woken; null
 *             not known), "before_recording" (found in the program's memory when
 *             the recording ended, no event of it recorded: idle or runnable
 *             since before the recording began), "first_seen_ns", "last_seen_ns",
 *             "poll_p50_ns", "poll_p99_ns", "sched_p50_ns", "sched_p99_ns",
 *             "sched_max_ns", "idle_p50_ns", "idle_p99_ns",
 *             "pending_ratio" (pending polls / polls), "self_wake_ratio"
 *             (self wakes / wakes), "long_polls"}] (every live task, every worker
 *             task and the max_tasks busiest finished user tasks: the others
 *             are only in task_groups, and so are the least recently active
 *             live tasks past max_live_tasks),
 *  "task_groups": [{"name", "spawn_location", "tasks", "polls", "busy_ns",
 *             "max_poll_ns", "idle_ns", "sched_ns", "wakes", "self_wakes"}]
 *             (finished user tasks without an entry in "tasks", summed by
 *             name and spawn location, most busy first; empty when none),
 *  "workers": [{"tid", "name" (or null), "polls", "busy_ns", "parked_ns", "parks"}],
 *  "totals": {"tasks", "user_tasks", "worker_tasks", "polls", "user_polls", "workers",
 *             "events", "lost_events", "missed_events", "loss_counts", "anomalies",
 *             "folded_tasks" (tasks only in task_groups), "max_tasks" (the cap,
 *             0 none); when live tasks were folded (--max-live-tasks) also
 *             "folded_live_tasks" (of folded_tasks), "max_live_tasks" (the
 *             cap) and "folded_events" (their later events, not analysed)},
 *  "histograms": {"poll_ns": H, "sched_ns": H, "idle_ns": H} (user tasks), with
 *     H = {"count", "min", "max", "mean", "p50", "p90", "p99", "p999",
 *          "buckets": [[low_ns, high_ns (inclusive), count], ...] (non-empty,
 *          at most 200, lowest first)},
 *  "long_poll_threshold_ns", "long_polls_total",
 *  "long_polls": [{"task", "seq", "id", "name", "tid", "start_ns", "duration_ns",
 *                  "until_end" (still running at the end), "group"}] (longest
 *                  first, <= 1000),
 *  "stall_threshold_ns",
 *  "stalled": [{"task", "seq", "id", "name", "since_ns", "stalled_ns", "until_end",
 *               "count", "group", "wakers" (until the end: the wakers of it held then,
 *               0 none left; null not known)}] (longest first),
 *  "starve_threshold_ns", "starved": [{"task", "seq", "id", "name", "max_wait_ns", "count",
 *               "group"}],
 *  "wake_edges": [{"from_task", "to_task" (identities; null for a group end
 *                  or a waker that is no task),
 *                  "from_kind" ("task"|"io"|"timer"|"runtime"|"blocking"|"thread"),
 *                  "from_seq" (null unless task, or a group), "from_name" (task
 *                  or group name, or from_kind), "to_seq" (null for a group),
 *                  "to_name", "count", "timed" (wakes with a delay sample),
 *                  "delay_p50_ns", "delay_p99_ns", "delay_max_ns", "from_group",
 *                  "to_group", and for a group edge "tasks" (the (waker,
 *                  woken) task pairs it merges)}] (most wakes first; wakes
 *                  where a task was folded are merged into group edges, see
 *                  struct wake_edge in analysis/tasks.h),
 *  where "group", "from_group", "to_group": null when the task has its entry
 *  in "tasks", else the index in task_groups of the group it was folded into
 *  (its "id" is then null, its name that of the group); in a group edge, a
 *  group end (seq null) names the group of its tasks,
 *  "timeline" (only when computed): {"start_ns", "bucket_ns", "buckets",
 *     "workers": [{"tid", "name", "busy_ns": [..], "idle_ns": [..],
 *                  "parked_ns": [..], "polls": [..]}],
 *     "runnable_max": [..], "runnable_avg": [..],
 *     "tasks": [{"task", "seq", "name", "running": [..], "scheduled": [..],
 *                "idle": [..]}] (fractions 0..1 of each bucket; the 50
 *                busiest user tasks)}}
 *  "blocking" (only with record --offcpu data): {"offcpu_ns", "intervals",
 *     "parked_ns", "runtime_ns" and "runtime_intervals" (a worker's own loop outside
 *     polls, not counted), "tasks": [{"task", "header", "id", "name", "offcpu_ns", "intervals",
 *     "preempted_ns", "runnable_ns" (of offcpu_ns, woken or preempted and waiting for a
 *     CPU: from the run-queue records, record --offcpu), "causes": [{"kernel", "user",
 *     "file" and "line" (of the user frame,
 *     when known), "futures" (the future frames polled then, "outer;...;inner",
 *     with record --futures), "call" (the function the user frame called, when
 *     known; with no user frame, the innermost user function), "stack_cut"
 *     (true only: no user frame and the user stack stopped short of the
 *     thread's start: --dwarf unwinds further), "ns", "count", "preempted_ns", "runnable_ns"}]}]},
 *  "usdt" (only in traces with USDT probes): {"total", "bad" (hits of no
 *     known probe), "probes": [{"probe" ("provider:name"), "hits", "in_task",
 *     "arg_min", "arg_max" (first argument; null without hits)}],
 *     "tasks": [{"task", "probe", "header", "id" (tokio id or null), "name", "hits"}]
 *     (most hits first)}}
 *  "futures" (only in traces with future events, record --futures; see
 *     analysis/futures.h): {"frames" (future polls), "ready", "pending",
 *     "unknown" (outcome not recorded), "exits_lost", "entries_lost",
 *     "unmatched_exits", "open_at_end", "bad" (events of no future probe),
 *     "too_deep", "outside_tasks" (frames outside any task poll),
 *     "oncpu_ns", "wait_ns" (the sums of the two flame graphs),
 *     "functions": [{"name", "file" (or null), "line" (0 unknown), "polls",
 *         "ready", "pending", "unknown", "self_ns", "total_ns", "max_poll_ns"}]
 *         (most self time first),
 *     "parked_tasks" (tasks parked for good: last poll Pending, never polled
 *         again), "parked": [{"task", "seq", "id", "name", "since_ns" (relative, as
 *         in stalled), "waiting_ns", "until_end" (still pending at the end;
 *         false: dropped while pending), "chain": [{"name", "file" (or null), "line",
 *         "at_await" (line is the .await's, else the function's),
 *         "awaiting" (the future awaited there, or null)}] (outermost
 *         first)}] (longest waiting first, at most 10000),
 *     "oncpu_stacks", "wait_stacks": [{"frames": [root, future, ...], "ns"}]
 *         (the flame graphs of export --format folded-futures / folded-wait,
 *         sorted by frames)}
 * Keys are only ever added, never renamed or removed. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/blocking.h"
#include "analysis/findings.h"
#include "analysis/futures.h"
#include "analysis/usdt_counts.h"
#include "output/hist_json.h"
#include "output/report.h"
#include "util/json.h"
#include "util/rust_name.h"
#include "util/task_id.h"

/* The JSON report's own schema version: raised when a key changes meaning
 * or goes (keys are only added within a version). */
#define REPORT_SCHEMA_VERSION 1

/* A non-negative decimal with at most `decimals` digits after the point.
 * util/json writes integers only: the integer part goes through the writer
 * (separators, state), the fraction is appended right after it, before the
 * writer writes anything else, so the output stays one valid number. */
static void number(struct json_writer *w, FILE *out, double v, int decimals)
{
	uint64_t scale = 1, x, frac;
	char buf[24];
	int len;

	for (int i = 0; i < decimals; i++)
		scale *= 10;
	if (!(v > 0))
		v = 0;
	if (v > 1e12)
		v = 1e12;
	x = (uint64_t)(v * (double)scale + 0.5);
	json_writer__u64(w, x / scale);
	frac = x % scale;
	if (!frac)
		return;
	len = snprintf(buf, sizeof(buf), "%0*" PRIu64, decimals, frac);
	while (len > 0 && buf[len - 1] == '0')
		buf[--len] = '\0';
	fprintf(out, ".%s", buf);
}

static void kv_number(struct json_writer *w, FILE *out, const char *key, double v)
{
	json_writer__key(w, key);
	number(w, out, v, 4);
}

/* "task": the identity of a task (util/task_id.h). */
static void task_key(struct json_writer *w, const char *key, uint64_t id, uint64_t seq,
		     uint64_t header)
{
	char buf[TASK_ID_MAX];

	json_writer__kv_string(w, key, task_id_format(buf, sizeof(buf), id, seq, header));
}

/* key: the identity of task seq (null for seq 0: a group end or no task);
 * a folded task has no row, so no runtime id left: its seq. */
static void seq_task_key(struct json_writer *w, const struct analysis *a, const char *key,
			 uint64_t seq)
{
	const struct task_stats *t = analysis__task(a, seq);

	if (seq)
		task_key(w, key, t ? t->tokio_id : 0, seq, 0);
	else
		json_writer__kv_string(w, key, NULL);
}

static void id_or_null(struct json_writer *w, const char *key, const struct task_stats *t)
{
	json_writer__kv_u64_or_null(w, key, t && t->tokio_id, t ? t->tokio_id : 0);
}

/* The name of task seq: its row's, or that of the group it was folded into
 * (group: index + 1 into analysis__groups(), 0 none). */
static const char *task_name(const struct analysis *a, uint64_t seq, uint32_t group)
{
	const struct task_stats *t = analysis__task(a, seq);
	const struct task_group *g;
	size_t n;

	if (t)
		return t->name;
	g = analysis__groups(a, &n);
	return group && group <= n ? g[group - 1].name : NULL;
}

static void group_or_null(struct json_writer *w, const char *key, uint32_t group)
{
	json_writer__kv_u64_or_null(w, key, group, group - 1);
}

/* "file:line:col", or the file alone when out of memory, or null. */
static void spawn_location(struct json_writer *w, const char *file, uint32_t line, uint32_t col)
{
	json_writer__key(w, "spawn_location");
	if (file) {
		size_t n = strlen(file) + 24; /* ":" u32 ":" u32 NUL */
		char *loc = malloc(n);

		if (loc) {
			/* column 0: unknown (a call site found by unwinding) */
			if (col)
				snprintf(loc, n, "%s:%" PRIu32 ":%" PRIu32, file, line, col);
			else
				snprintf(loc, n, "%s:%" PRIu32, file, line);
			json_writer__string(w, loc);
		} else {
			json_writer__string(w, file); /* out of memory: file only */
		}
		free(loc);
	} else {
		json_writer__null(w);
	}
}

/* "short_name": name as the text outputs show it (util/rust_name.h), null
 * for none; the full name when out of memory. */
static void short_name(struct json_writer *w, const char *name)
{
	char *d = rust_name_display(name, 0, false);

	json_writer__kv_string(w, "short_name", d ? d : name);
	free(d);
}

/* "findings" (analysis/findings.h): always, empty when none were found. */
static void findings_json(struct json_writer *w, const struct findings *f)
{
	size_t n;
	const struct finding *l = findings__list(f, &n);
	char id[TASK_ID_MAX];

	json_writer__key(w, "findings");
	json_writer__begin_array(w);
	for (size_t i = 0; i < n; i++) {
		const struct finding *x = &l[i];
		bool ident = x->task_id || x->task_seq || x->task_header;

		json_writer__begin_object(w);
		json_writer__kv_string(w, "kind", x->kind);
		json_writer__kv_string(w, "severity", finding_severity__str(x->severity));
		json_writer__key(w, "task");
		if (x->has_task) {
			json_writer__begin_object(w);
			json_writer__kv_string(w, "task", ident ? task_id_format(id, sizeof(id),
						x->task_id, x->task_seq, x->task_header) : NULL);
			json_writer__kv_u64_or_null(w, "id", x->task_id, x->task_id);
			json_writer__kv_u64_or_null(w, "seq", x->task_seq, x->task_seq);
			json_writer__kv_string(w, "name", x->task_name);
			short_name(w, x->task_name);
			json_writer__kv_u64_or_null(w, "group", x->task_group, x->task_group - 1);
			json_writer__end_object(w);
		} else {
			json_writer__null(w);
		}
		json_writer__kv_u64(w, "tasks", x->tasks);
		json_writer__key(w, "thread");
		if (x->tid) {
			json_writer__begin_object(w);
			json_writer__kv_u64(w, "tid", x->tid);
			json_writer__kv_string(w, "name", x->thread);
			json_writer__end_object(w);
		} else {
			json_writer__null(w);
		}
		json_writer__kv_string(w, "title", x->title);
		json_writer__kv_string(w, "detail", x->detail);
		json_writer__kv_string(w, "advice", x->advice);
		json_writer__kv_string(w, "file", x->file);
		json_writer__kv_u64_or_null(w, "line", x->line, x->line);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	json_writer__kv_u64(w, "findings_omitted", findings__omitted(f));
}

static void task_json(struct json_writer *w, FILE *out, const struct task_stats *t)
{
	char buf[64];

	json_writer__begin_object(w);
	task_key(w, "task", t->tokio_id, t->seq, 0);
	json_writer__kv_u64_or_null(w, "id", t->tokio_id, t->tokio_id);
	json_writer__kv_u64(w, "seq", t->seq);
	json_writer__kv_string(w, "task_name", t->label);
	snprintf(buf, sizeof(buf), "0x%" PRIx64, t->header);
	json_writer__kv_string(w, "header", buf);
	json_writer__kv_string(w, "name", t->name);
	short_name(w, t->name);
	json_writer__kv_string(w, "kind", task_kind__str(t->kind));
	spawn_location(w, t->spawn_file, t->spawn_line, t->spawn_col);
	json_writer__kv_bool(w, "spawned_in_trace", t->spawned_in_trace);
	json_writer__kv_u64_or_null(w, "parent", t->parent, t->parent);
	json_writer__kv_u64(w, "polls", t->polls);
	json_writer__kv_u64(w, "pending_polls", t->pending_polls);
	json_writer__kv_u64(w, "ready_polls", t->ready_polls);
	json_writer__kv_u64(w, "busy_ns", t->busy_ns);
	json_writer__kv_u64(w, "max_poll_ns", t->max_poll_ns);
	json_writer__kv_u64(w, "mean_poll_ns", t->mean_poll_ns);
	json_writer__kv_u64(w, "idle_ns", t->idle_ns);
	json_writer__kv_u64(w, "sched_ns", t->sched_ns);
	json_writer__kv_u64(w, "wakes", t->wakes);
	json_writer__kv_u64(w, "self_wakes", t->self_wakes);
	json_writer__kv_string(w, "state", task_state__str(t->state));
	/* idle at the end: the wakers of it held then (0: nothing could wake it
	 * again), as the recorder read them; null not known */
	json_writer__kv_u64_or_null(w, "wakers", t->wakers_known, t->wakers);
	/* found in the program's memory at the end, no event of it recorded */
	json_writer__kv_bool(w, "before_recording", t->before);
	json_writer__kv_u64(w, "first_seen_ns", t->first_ns);
	json_writer__kv_u64(w, "last_seen_ns", t->last_ns);
	json_writer__kv_u64(w, "poll_p50_ns", t->poll_p50_ns);
	json_writer__kv_u64(w, "poll_p99_ns", t->poll_p99_ns);
	json_writer__kv_u64(w, "sched_p50_ns", t->sched_p50_ns);
	json_writer__kv_u64(w, "sched_p99_ns", t->sched_p99_ns);
	json_writer__kv_u64(w, "sched_max_ns", t->sched_max_ns);
	json_writer__kv_u64(w, "idle_p50_ns", t->idle_p50_ns);
	json_writer__kv_u64(w, "idle_p99_ns", t->idle_p99_ns);
	kv_number(w, out, "pending_ratio", t->pending_ratio);
	kv_number(w, out, "self_wake_ratio", t->self_wake_ratio);
	json_writer__kv_u64(w, "long_polls", t->long_polls);
	json_writer__end_object(w);
}

static void group_json(struct json_writer *w, const struct task_group *g)
{
	json_writer__begin_object(w);
	json_writer__kv_string(w, "name", g->name);
	spawn_location(w, g->spawn_file, g->spawn_line, g->spawn_col);
	json_writer__kv_u64(w, "tasks", g->tasks);
	json_writer__kv_u64(w, "polls", g->polls);
	json_writer__kv_u64(w, "busy_ns", g->busy_ns);
	json_writer__kv_u64(w, "max_poll_ns", g->max_poll_ns);
	json_writer__kv_u64(w, "idle_ns", g->idle_ns);
	json_writer__kv_u64(w, "sched_ns", g->sched_ns);
	json_writer__kv_u64(w, "wakes", g->wakes);
	json_writer__kv_u64(w, "self_wakes", g->self_wakes);
	json_writer__end_object(w);
}

static void u64_array(struct json_writer *w, const char *key, const uint64_t *v, size_t n)
{
	json_writer__key(w, key);
	json_writer__begin_array(w);
	for (size_t i = 0; i < n; i++)
		json_writer__u64(w, v[i]);
	json_writer__end_array(w);
}

static void frac_array(struct json_writer *w, FILE *out, const char *key, const double *v,
		       size_t n)
{
	json_writer__key(w, key);
	json_writer__begin_array(w);
	for (size_t i = 0; i < n; i++)
		number(w, out, v[i], 4);
	json_writer__end_array(w);
}

static void timeline_json(struct json_writer *w, FILE *out, const struct analysis *a,
			  const struct timeline *tl)
{
	size_t nb = timeline__buckets(tl), nw, nt;
	const struct timeline_worker *ws = timeline__workers(tl, &nw);
	const struct timeline_task *ts = timeline__tasks(tl, &nt);

	if (!timeline__runnable_max(tl))
		return; /* not finished: no section */
	json_writer__key(w, "timeline");
	json_writer__begin_object(w);
	json_writer__kv_u64(w, "start_ns", timeline__start_ns(tl));
	json_writer__kv_u64(w, "bucket_ns", timeline__bucket_ns(tl));
	json_writer__kv_u64(w, "buckets", nb);
	json_writer__key(w, "workers");
	json_writer__begin_array(w);
	for (size_t i = 0; i < nw; i++) {
		json_writer__begin_object(w);
		json_writer__kv_u64(w, "tid", ws[i].tid);
		json_writer__kv_string(w, "name", ws[i].name);
		u64_array(w, "busy_ns", ws[i].busy_ns, nb);
		u64_array(w, "idle_ns", ws[i].idle_ns, nb);
		u64_array(w, "parked_ns", ws[i].parked_ns, nb);
		u64_array(w, "polls", ws[i].polls, nb);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	u64_array(w, "runnable_max", timeline__runnable_max(tl), nb);
	json_writer__key(w, "runnable_avg");
	json_writer__begin_array(w);
	for (size_t i = 0; i < nb; i++)
		number(w, out, timeline__runnable_avg(tl)[i], 3);
	json_writer__end_array(w);
	json_writer__key(w, "tasks");
	json_writer__begin_array(w);
	for (size_t i = 0; i < nt; i++) {
		json_writer__begin_object(w);
		seq_task_key(w, a, "task", ts[i].seq);
		json_writer__kv_u64(w, "seq", ts[i].seq);
		json_writer__kv_string(w, "name", ts[i].name);
		frac_array(w, out, "running", ts[i].running, nb);
		frac_array(w, out, "scheduled", ts[i].scheduled, nb);
		frac_array(w, out, "idle", ts[i].idle, nb);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	json_writer__end_object(w);
}

/* The scheduling sections: histograms, long polls, stalled, starved, edges. */
static void sched_json(struct json_writer *w, const struct analysis *a)
{
	const struct summary *s = analysis__summary(a);
	const struct long_poll *lp;
	const struct stall *st;
	const struct starve *sv;
	const struct wake_edge *e;
	size_t n;

	json_writer__key(w, "histograms");
	json_writer__begin_object(w);
	hist_json__write(w, "poll_ns", analysis__dist(a, DIST_POLL), HIST_JSON_MAX_BUCKETS);
	hist_json__write(w, "sched_ns", analysis__dist(a, DIST_SCHED), HIST_JSON_MAX_BUCKETS);
	hist_json__write(w, "idle_ns", analysis__dist(a, DIST_IDLE), HIST_JSON_MAX_BUCKETS);
	json_writer__end_object(w);

	json_writer__kv_u64(w, "long_poll_threshold_ns", s->long_poll_ns);
	json_writer__kv_u64(w, "long_polls_total", s->long_polls);
	json_writer__key(w, "long_polls");
	json_writer__begin_array(w);
	lp = analysis__long_polls(a, &n);
	for (size_t i = 0; i < n; i++) {
		const struct task_stats *t = analysis__task(a, lp[i].seq);

		json_writer__begin_object(w);
		seq_task_key(w, a, "task", lp[i].seq);
		json_writer__kv_u64(w, "seq", lp[i].seq);
		id_or_null(w, "id", t);
		json_writer__kv_string(w, "name", task_name(a, lp[i].seq, lp[i].group));
		json_writer__kv_u64(w, "tid", lp[i].tid);
		json_writer__kv_u64(w, "start_ns", lp[i].start_ns);
		json_writer__kv_u64(w, "duration_ns", lp[i].duration_ns);
		json_writer__kv_bool(w, "until_end", lp[i].until_end);
		group_or_null(w, "group", lp[i].group);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);

	json_writer__kv_u64(w, "stall_threshold_ns", s->stall_ns);
	json_writer__key(w, "stalled");
	json_writer__begin_array(w);
	st = analysis__stalled(a, &n);
	for (size_t i = 0; i < n; i++) {
		const struct task_stats *t = analysis__task(a, st[i].seq);

		json_writer__begin_object(w);
		seq_task_key(w, a, "task", st[i].seq);
		json_writer__kv_u64(w, "seq", st[i].seq);
		id_or_null(w, "id", t);
		json_writer__kv_string(w, "name", task_name(a, st[i].seq, st[i].group));
		json_writer__kv_u64(w, "since_ns", st[i].since_ns);
		json_writer__kv_u64(w, "stalled_ns", st[i].stalled_ns);
		json_writer__kv_bool(w, "until_end", st[i].until_end);
		json_writer__kv_u64(w, "count", st[i].count);
		group_or_null(w, "group", st[i].group);
		json_writer__kv_u64_or_null(w, "wakers", st[i].until_end && t && t->wakers_known,
					    t ? t->wakers : 0);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);

	json_writer__kv_u64(w, "starve_threshold_ns", s->starve_ns);
	json_writer__key(w, "starved");
	json_writer__begin_array(w);
	sv = analysis__starved(a, &n);
	for (size_t i = 0; i < n; i++) {
		const struct task_stats *t = analysis__task(a, sv[i].seq);

		json_writer__begin_object(w);
		seq_task_key(w, a, "task", sv[i].seq);
		json_writer__kv_u64(w, "seq", sv[i].seq);
		id_or_null(w, "id", t);
		json_writer__kv_string(w, "name", task_name(a, sv[i].seq, sv[i].group));
		json_writer__kv_u64(w, "max_wait_ns", sv[i].max_wait_ns);
		json_writer__kv_u64(w, "count", sv[i].count);
		group_or_null(w, "group", sv[i].group);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);

	json_writer__key(w, "wake_edges");
	json_writer__begin_array(w);
	e = analysis__edges(a, &n);
	for (size_t i = 0; i < n; i++) {
		json_writer__begin_object(w);
		seq_task_key(w, a, "from_task", e[i].from_kind == WAKE_FROM_TASK ? e[i].from_seq : 0);
		seq_task_key(w, a, "to_task", e[i].to_seq);
		json_writer__kv_string(w, "from_kind", wake_source__str(e[i].from_kind));
		json_writer__kv_u64_or_null(w, "from_seq", e[i].from_kind == WAKE_FROM_TASK && e[i].from_seq,
					    e[i].from_seq);
		json_writer__kv_string(w, "from_name", e[i].from_kind == WAKE_FROM_TASK
				       ? task_name(a, e[i].from_seq, e[i].from_group)
				       : wake_source__str(e[i].from_kind));
		json_writer__kv_u64_or_null(w, "to_seq", e[i].to_seq, e[i].to_seq);
		json_writer__kv_string(w, "to_name", task_name(a, e[i].to_seq, e[i].to_group));
		json_writer__kv_u64(w, "count", e[i].count);
		json_writer__kv_u64(w, "timed", e[i].timed);
		json_writer__kv_u64(w, "delay_p50_ns", e[i].delay_p50_ns);
		json_writer__kv_u64(w, "delay_p99_ns", e[i].delay_p99_ns);
		json_writer__kv_u64(w, "delay_max_ns", e[i].delay_max_ns);
		group_or_null(w, "from_group", e[i].from_group);
		group_or_null(w, "to_group", e[i].to_group);
		if (e[i].from_group || e[i].to_group)
			json_writer__kv_u64(w, "tasks", e[i].tasks);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
}

/* Off-CPU time inside polls (record --offcpu), per task and cause. */
static void blocking_json(struct json_writer *w, struct blocking *b)
{
	const struct blocking_summary *s = blocking__summary(b);
	size_t n;
	const struct blocking_task *t = blocking__tasks(b, &n);
	char hex[24];

	json_writer__key(w, "blocking");
	json_writer__begin_object(w);
	json_writer__kv_u64(w, "offcpu_ns", s->ns);
	json_writer__kv_u64(w, "intervals", s->count);
	json_writer__kv_u64(w, "runnable_ns", s->runnable_ns);
	json_writer__kv_u64(w, "parked_ns", s->parked_ns);
	json_writer__kv_u64(w, "runtime_ns", s->runtime_ns);
	json_writer__kv_u64(w, "runtime_intervals", s->runtime_count);
	json_writer__key(w, "tasks");
	json_writer__begin_array(w);
	for (size_t i = 0; i < n; i++) {
		json_writer__begin_object(w);
		task_key(w, "task", t[i].tokio_id, t[i].seq, t[i].task);
		snprintf(hex, sizeof(hex), "0x%" PRIx64, t[i].task);
		json_writer__kv_string(w, "header", hex);
		json_writer__kv_u64_or_null(w, "id", t[i].tokio_id, t[i].tokio_id);
		json_writer__kv_string(w, "name", t[i].name);
		json_writer__kv_u64(w, "offcpu_ns", t[i].ns);
		json_writer__kv_u64(w, "intervals", t[i].count);
		json_writer__kv_u64(w, "preempted_ns", t[i].preempted_ns);
		json_writer__kv_u64(w, "runnable_ns", t[i].runnable_ns);
		json_writer__key(w, "causes");
		json_writer__begin_array(w);
		for (size_t c = 0; c < t[i].n_causes; c++) {
			json_writer__begin_object(w);
			json_writer__kv_string(w, "kernel", t[i].causes[c].kernel);
			json_writer__kv_string(w, "user", t[i].causes[c].user);
			if (t[i].causes[c].file) {
				json_writer__kv_string(w, "file", t[i].causes[c].file);
				json_writer__kv_u64(w, "line", t[i].causes[c].line);
			}
			if (t[i].causes[c].futures)
				json_writer__kv_string(w, "futures", t[i].causes[c].futures);
			if (t[i].causes[c].call)
				json_writer__kv_string(w, "call", t[i].causes[c].call);
			if (t[i].causes[c].cut)
				json_writer__kv_bool(w, "stack_cut", true);
			json_writer__kv_u64(w, "ns", t[i].causes[c].ns);
			json_writer__kv_u64(w, "count", t[i].causes[c].count);
			json_writer__kv_u64(w, "preempted_ns", t[i].causes[c].preempted_ns);
			json_writer__kv_u64(w, "runnable_ns", t[i].causes[c].runnable_ns);
			json_writer__end_object(w);
		}
		json_writer__end_array(w);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	json_writer__end_object(w);
}

/* USDT hit counts, when the trace has USDT probes. */
static void usdt_json(struct json_writer *w, const struct usdt_counts *uc)
{
	size_t np, nt;
	const struct usdt_probe_count *p = usdt_counts__probes(uc, &np);
	const struct usdt_task_count *t = usdt_counts__tasks(uc, &nt);
	char hex[24];

	if (!np)
		return;
	json_writer__key(w, "usdt");
	json_writer__begin_object(w);
	json_writer__kv_u64(w, "total", usdt_counts__total(uc));
	json_writer__kv_u64(w, "bad", usdt_counts__bad(uc));
	json_writer__key(w, "probes");
	json_writer__begin_array(w);
	for (size_t i = 0; i < np; i++) {
		json_writer__begin_object(w);
		json_writer__kv_string(w, "probe", p[i].probe);
		json_writer__kv_u64(w, "hits", p[i].hits);
		json_writer__kv_u64(w, "in_task", p[i].in_task);
		json_writer__key(w, "arg_min");
		if (p[i].hits)
			json_writer__i64(w, p[i].arg_min);
		else
			json_writer__null(w);
		json_writer__key(w, "arg_max");
		if (p[i].hits)
			json_writer__i64(w, p[i].arg_max);
		else
			json_writer__null(w);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	json_writer__key(w, "tasks");
	json_writer__begin_array(w);
	for (size_t i = 0; i < nt; i++) {
		json_writer__begin_object(w);
		task_key(w, "task", t[i].tokio_id, t[i].seq, t[i].task);
		json_writer__kv_string(w, "probe", t[i].probe < np ? p[t[i].probe].probe : NULL);
		snprintf(hex, sizeof(hex), "0x%" PRIx64, t[i].task);
		json_writer__kv_string(w, "header", hex);
		json_writer__kv_u64_or_null(w, "id", t[i].tokio_id, t[i].tokio_id);
		json_writer__kv_string(w, "name", t[i].name);
		json_writer__kv_u64(w, "hits", t[i].hits);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	json_writer__end_object(w);
}

static void stacks_json(struct json_writer *w, const char *key, const struct futures *fu,
			enum futures_graph g)
{
	size_t n;
	const struct futures_stack *st = futures__stacks(fu, g, &n);

	json_writer__key(w, key);
	json_writer__begin_array(w);
	for (size_t i = 0; i < n; i++) {
		json_writer__begin_object(w);
		json_writer__key(w, "frames");
		json_writer__begin_array(w);
		for (uint32_t j = 0; j < st[i].n; j++)
			json_writer__string(w, st[i].frames[j]);
		json_writer__end_array(w);
		json_writer__kv_u64(w, "ns", st[i].ns);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
}

/* Future-level results (record --futures). */
static void futures_json(struct json_writer *w, const struct analysis *a,
			 const struct futures *fu)
{
	const struct futures_summary *s = futures__summary(fu);
	uint64_t start = analysis__summary(a)->start_ns;
	size_t n;

	json_writer__key(w, "futures");
	json_writer__begin_object(w);
	json_writer__kv_u64(w, "frames", s->frames);
	json_writer__kv_u64(w, "ready", s->ready);
	json_writer__kv_u64(w, "pending", s->pending);
	json_writer__kv_u64(w, "unknown", s->unknown);
	json_writer__kv_u64(w, "exits_lost", s->exits_lost);
	json_writer__kv_u64(w, "entries_lost", s->entries_lost);
	json_writer__kv_u64(w, "unmatched_exits", s->unmatched_exits);
	json_writer__kv_u64(w, "open_at_end", s->open_at_end);
	json_writer__kv_u64(w, "bad", s->bad);
	json_writer__kv_u64(w, "too_deep", s->too_deep);
	json_writer__kv_u64(w, "outside_tasks", s->outside_tasks);
	json_writer__kv_u64(w, "oncpu_ns", s->oncpu_ns);
	json_writer__kv_u64(w, "wait_ns", s->wait_ns);

	const struct futures_fn *fn = futures__fns(fu, &n);

	json_writer__key(w, "functions");
	json_writer__begin_array(w);
	for (size_t i = 0; i < n; i++) {
		json_writer__begin_object(w);
		json_writer__kv_string(w, "name", fn[i].name);
		json_writer__kv_string(w, "file", fn[i].file);
		json_writer__kv_u64(w, "line", fn[i].line);
		json_writer__kv_u64(w, "polls", fn[i].polls);
		json_writer__kv_u64(w, "ready", fn[i].ready);
		json_writer__kv_u64(w, "pending", fn[i].pending);
		json_writer__kv_u64(w, "unknown", fn[i].unknown);
		json_writer__kv_u64(w, "self_ns", fn[i].self_ns);
		json_writer__kv_u64(w, "total_ns", fn[i].total_ns);
		json_writer__kv_u64(w, "max_poll_ns", fn[i].max_ns);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);

	const struct futures_parked *p = futures__parked(fu, &n);

	json_writer__kv_u64(w, "parked_tasks", s->parked_tasks);
	json_writer__key(w, "parked");
	json_writer__begin_array(w);
	for (size_t i = 0; i < n; i++) {
		const struct task_stats *t = analysis__task(a, p[i].seq);

		json_writer__begin_object(w);
		seq_task_key(w, a, "task", p[i].seq);
		json_writer__kv_u64(w, "seq", p[i].seq);
		id_or_null(w, "id", t);
		json_writer__kv_string(w, "name", t && t->name ? t->name : p[i].name);
		json_writer__kv_u64(w, "since_ns", p[i].since_ns > start ? p[i].since_ns - start : 0);
		json_writer__kv_u64(w, "waiting_ns", p[i].waiting_ns);
		json_writer__kv_bool(w, "until_end", p[i].until_end);
		json_writer__key(w, "chain");
		json_writer__begin_array(w);
		for (uint32_t j = 0; j < p[i].n_chain; j++) {
			const struct futures_link *l = &p[i].chain[j];

			json_writer__begin_object(w);
			json_writer__kv_string(w, "name", l->name);
			json_writer__kv_string(w, "file", l->file);
			json_writer__kv_u64(w, "line", l->line);
			json_writer__kv_bool(w, "at_await", l->at_await);
			json_writer__kv_string(w, "awaiting", l->awaitee);
			json_writer__end_object(w);
		}
		json_writer__end_array(w);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	stacks_json(w, "oncpu_stacks", fu, FUTURES_ONCPU);
	stacks_json(w, "wait_stacks", fu, FUTURES_WAIT);
	json_writer__end_object(w);
}

/* "lost_events", "missed_events" and "loss_counts" (see above). */
static void loss_json(struct json_writer *w, const struct as_trace_end *end, bool truncated,
		      uint64_t lost, uint64_t missed)
{
	bool known = !truncated || (end && end->counts_lower_bound);

	json_writer__kv_u64_or_null(w, "lost_events", known, lost);
	json_writer__kv_u64_or_null(w, "missed_events", known, missed);
	json_writer__kv_string(w, "loss_counts", !truncated ? "exact" : known ? "lower_bound" :
			       "unknown");
}

/* A profile trace (asyncscope profile, no probes): "mode": "profile", the
 * tasks by id and name only, every section that needs polls null (not 0)
 * and named in "not_recorded"; off-CPU time per task as for a recording. */
static void profile_json(struct json_writer *w, const struct analysis *a,
			 const struct task_stats *tasks, size_t n_tasks,
			 const struct as_trace_end *end, const struct report_opts *opts,
			 uint64_t lost, uint64_t missed)
{
	static const char *const absent[] = { "task_groups", "workers", "polls", "wakes",
					      "parks", "histograms", "long_polls", "stalls",
					      "starved", "wake_edges", "timeline" };
	const struct summary *s = analysis__summary(a);

	json_writer__kv_string(w, "mode", "profile");
	json_writer__key(w, "not_recorded");
	json_writer__begin_array(w);
	for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++)
		json_writer__string(w, absent[i]);
	json_writer__end_array(w);
	json_writer__key(w, "tasks");
	json_writer__begin_array(w);
	for (size_t i = 0; i < n_tasks; i++) {
		json_writer__begin_object(w);
		task_key(w, "task", tasks[i].tokio_id, tasks[i].seq, 0);
		json_writer__kv_u64_or_null(w, "id", tasks[i].tokio_id, tasks[i].tokio_id);
		json_writer__kv_string(w, "name", tasks[i].name);
		json_writer__kv_string(w, "kind", task_kind__str(tasks[i].kind));
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	for (size_t i = 0; i < 2; i++) {
		json_writer__key(w, absent[i]);
		json_writer__null(w);
	}
	json_writer__key(w, "totals");
	json_writer__begin_object(w);
	json_writer__kv_u64(w, "tasks", s->tasks);
	json_writer__key(w, "polls");
	json_writer__null(w);
	json_writer__kv_u64(w, "events", s->events);
	loss_json(w, end, opts && opts->truncated, lost, missed);
	json_writer__end_object(w);
	if (opts && opts->blocking)
		blocking_json(w, opts->blocking);
}

int report_json(FILE *out, const struct analysis *a, const struct as_trace_meta *meta,
		const struct as_trace_end *end, const struct report_opts *opts)
{
	const struct summary *s = analysis__summary(a);
	const struct task_stats *tasks;
	const struct task_group *groups;
	const struct worker_stats *workers;
	struct json_writer *w = NULL;
	size_t n_tasks, n_groups, n_workers;
	uint64_t lost, missed;
	int err;

	if (!out || !s)
		return -EINVAL;
	w = json_writer__new(out, true);
	if (!w)
		return -errno;
	tasks = analysis__tasks(a, &n_tasks);
	workers = analysis__workers(a, &n_workers);
	lost = end ? end->lost : s->lost;
	missed = end ? end->missed : s->missed;

	json_writer__begin_object(w);
	json_writer__kv_u64(w, "schema_version", REPORT_SCHEMA_VERSION);
	json_writer__kv_u64_or_null(w, "format_version", meta, meta ? meta->format_version : 0);
	json_writer__kv_string(w, "target", meta ? meta->target : NULL);
	json_writer__kv_u64_or_null(w, "pid", meta, meta ? meta->pid : 0);
	json_writer__kv_string(w, "runtime", meta ? meta->runtime : NULL);
	json_writer__kv_string(w, "runtime_detail", meta && meta->runtime_detail &&
			       *meta->runtime_detail ? meta->runtime_detail : NULL);
	/* no wake probe (record --lite): wakes, scheduling delays and spawn
	 * sites not recorded */
	json_writer__kv_bool(w, "wakes_recorded", !analysis__wakes_unrecorded(a, meta));
	/* a flight recorder's snapshot: what triggered it (null: not one) */
	json_writer__key(w, "flight");
	if (meta && meta->flight_trigger) {
		json_writer__begin_object(w);
		json_writer__kv_string(w, "trigger", meta->flight_trigger);
		json_writer__kv_string(w, "detail", meta->flight_detail);
		json_writer__kv_u64(w, "trigger_ns", meta->flight_trigger_ns > meta->clock_mono_ns ?
				    meta->flight_trigger_ns - meta->clock_mono_ns : 0);
		json_writer__kv_u64(w, "window_ns", meta->flight_window_ns);
		json_writer__kv_u64(w, "after_ns", meta->flight_after_ns);
		json_writer__kv_u64(w, "evicted_events", meta->flight_evicted);
		json_writer__end_object(w);
	} else {
		json_writer__null(w);
	}
	json_writer__kv_u64(w, "duration_ns", s->duration_ns);
	json_writer__kv_u64(w, "events", s->events);
	loss_json(w, end, opts && opts->truncated, lost, missed);
	json_writer__kv_bool(w, "truncated", opts && opts->truncated);
	findings_json(w, opts ? opts->findings : NULL);

	if (as_meta_profile(meta)) {
		profile_json(w, a, tasks, n_tasks, end, opts, lost, missed);
		goto done;
	}
	json_writer__key(w, "tasks");
	json_writer__begin_array(w);
	for (size_t i = 0; i < n_tasks; i++)
		task_json(w, out, &tasks[i]);
	json_writer__end_array(w);

	json_writer__key(w, "task_groups");
	json_writer__begin_array(w);
	groups = analysis__groups(a, &n_groups);
	for (size_t i = 0; i < n_groups; i++)
		group_json(w, &groups[i]);
	json_writer__end_array(w);

	json_writer__key(w, "workers");
	json_writer__begin_array(w);
	for (size_t i = 0; i < n_workers; i++) {
		json_writer__begin_object(w);
		json_writer__kv_u64(w, "tid", workers[i].tid);
		json_writer__kv_string(w, "name", workers[i].name);
		json_writer__kv_u64(w, "polls", workers[i].polls);
		json_writer__kv_u64(w, "busy_ns", workers[i].busy_ns);
		json_writer__kv_u64(w, "parked_ns", workers[i].parked_ns);
		json_writer__kv_u64(w, "parks", workers[i].parks);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);

	json_writer__key(w, "totals");
	json_writer__begin_object(w);
	json_writer__kv_u64(w, "tasks", s->tasks);
	json_writer__kv_u64(w, "user_tasks", s->user_tasks);
	json_writer__kv_u64(w, "worker_tasks", s->worker_tasks);
	json_writer__kv_u64(w, "polls", s->polls);
	json_writer__kv_u64(w, "user_polls", s->user_polls);
	json_writer__kv_u64(w, "workers", s->workers);
	json_writer__kv_u64(w, "events", s->events);
	loss_json(w, end, opts && opts->truncated, lost, missed);
	json_writer__kv_u64(w, "anomalies", s->anomalies);
	json_writer__kv_u64(w, "folded_tasks", s->folded_tasks);
	json_writer__kv_u64(w, "max_tasks", s->max_tasks);
	if (s->folded_live_tasks) {
		json_writer__kv_u64(w, "folded_live_tasks", s->folded_live_tasks);
		json_writer__kv_u64(w, "max_live_tasks", s->max_live_tasks);
		json_writer__kv_u64(w, "folded_events", s->folded_events);
	}
	json_writer__end_object(w);
	sched_json(w, a);
	if (opts && opts->timeline)
		timeline_json(w, out, a, opts->timeline);
	if (opts && opts->usdt)
		usdt_json(w, opts->usdt);
	if (opts && opts->blocking)
		blocking_json(w, opts->blocking);
	if (opts && opts->futures)
		futures_json(w, a, opts->futures);
done:
	json_writer__end_object(w);

	err = json_writer__finish(w);
	json_writer__free(w);
	return err;
}
