/* json: the task report as one JSON document with a stable schema, for
 * scripts and tests. Formatting only; writes only to the FILE* it is given.
 *
 * {"format_version", "target", "pid", "runtime", "duration_ns", "events",
 *  "lost_events", "missed_events", "truncated" (no end record),
 *  "tasks": [{"id" (tokio id or null), "seq", "header" ("0x..."), "name" (or null),
 *             "kind" ("task"|"worker"), "spawn_location" ("file:line:col" or null),
 *             "spawned_in_trace", "parent" (seq or null), "polls", "pending_polls",
 *             "ready_polls", "busy_ns", "max_poll_ns", "mean_poll_ns", "idle_ns",
 *             "sched_ns", "wakes", "self_wakes",
 *             "state" ("completed"|"running"|"runnable"|"idle"),
 *             "first_seen_ns", "last_seen_ns"}],
 *  "workers": [{"tid", "name" (or null), "polls", "busy_ns", "parked_ns", "parks"}],
 *  "totals": {"tasks", "user_tasks", "worker_tasks", "polls", "user_polls", "workers",
 *             "events", "lost_events", "missed_events", "anomalies"}}
 * Keys are only ever added, never renamed or removed. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/report.h"
#include "util/json.h"

static void task_json(struct json_writer *w, const struct task_stats *t)
{
	char buf[64];

	json_writer__begin_object(w);
	json_writer__key(w, "id");
	if (t->tokio_id)
		json_writer__u64(w, t->tokio_id);
	else
		json_writer__null(w);
	json_writer__kv_u64(w, "seq", t->seq);
	snprintf(buf, sizeof(buf), "0x%" PRIx64, t->header);
	json_writer__kv_string(w, "header", buf);
	json_writer__kv_string(w, "name", t->name);
	json_writer__kv_string(w, "kind", task_kind__str(t->kind));
	json_writer__key(w, "spawn_location");
	if (t->spawn_file) {
		size_t n = strlen(t->spawn_file) + 24; /* ":" u32 ":" u32 NUL */
		char *loc = malloc(n);

		if (loc) {
			snprintf(loc, n, "%s:%" PRIu32 ":%" PRIu32, t->spawn_file, t->spawn_line,
				 t->spawn_col);
			json_writer__string(w, loc);
		} else {
			json_writer__string(w, t->spawn_file); /* out of memory: file only */
		}
		free(loc);
	} else {
		json_writer__null(w);
	}
	json_writer__kv_bool(w, "spawned_in_trace", t->spawned_in_trace);
	json_writer__key(w, "parent");
	if (t->parent)
		json_writer__u64(w, t->parent);
	else
		json_writer__null(w);
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
	json_writer__kv_u64(w, "first_seen_ns", t->first_ns);
	json_writer__kv_u64(w, "last_seen_ns", t->last_ns);
	json_writer__end_object(w);
}

int report_json(FILE *out, const struct analysis *a, const struct as_trace_meta *meta,
		const struct as_trace_end *end, const struct report_opts *opts)
{
	const struct summary *s = analysis__summary(a);
	const struct task_stats *tasks;
	const struct worker_stats *workers;
	struct json_writer *w = NULL;
	size_t n_tasks, n_workers;
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
	json_writer__key(w, "format_version");
	if (meta)
		json_writer__u64(w, meta->format_version);
	else
		json_writer__null(w);
	json_writer__kv_string(w, "target", meta ? meta->target : NULL);
	json_writer__key(w, "pid");
	if (meta)
		json_writer__u64(w, meta->pid);
	else
		json_writer__null(w);
	json_writer__kv_string(w, "runtime", meta ? meta->runtime : NULL);
	json_writer__kv_u64(w, "duration_ns", s->duration_ns);
	json_writer__kv_u64(w, "events", s->events);
	json_writer__kv_u64(w, "lost_events", lost);
	json_writer__kv_u64(w, "missed_events", missed);
	json_writer__kv_bool(w, "truncated", opts && opts->truncated);

	json_writer__key(w, "tasks");
	json_writer__begin_array(w);
	for (size_t i = 0; i < n_tasks; i++)
		task_json(w, &tasks[i]);
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
	json_writer__kv_u64(w, "lost_events", lost);
	json_writer__kv_u64(w, "missed_events", missed);
	json_writer__kv_u64(w, "anomalies", s->anomalies);
	json_writer__end_object(w);
	json_writer__end_object(w);

	err = json_writer__finish(w);
	json_writer__free(w);
	return err;
}
