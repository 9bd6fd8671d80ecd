/* text: the human-readable task report. Formatting only: every number comes
 * from the analysis. Writes only to the FILE* it is given. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "output/report.h"
#include "util/fmt.h"

#define NAME_W 40
#define SITE_W 20
#define TNAME_W 16

/* One displayed character at s: its byte length (an invalid UTF-8 byte or a
 * control byte counts as one byte, shown as '?'). */
static size_t char_len(const char *s, bool *shown)
{
	size_t len = fmt_utf8_len(s, strnlen(s, 4));

	*shown = len > 1 || (len == 1 && (unsigned char)*s >= 0x20 && *s != 0x7f);
	return len ? len : 1;
}

/* Copies s into buf (size n >= 4 * width + 4) for a column of `width`
 * characters, control bytes and invalid UTF-8 shown as '?'. A longer string
 * keeps its first `head` characters and its end, with "..." between them:
 * the end of a Rust type path is its most specific part. Returns the
 * displayed width. */
static int fit(char *buf, size_t n, const char *s, int width, int head)
{
	int chars = 0, tail, idx = 0;
	size_t o = 0, len;
	bool shown;

	for (const char *p = s; *p; p += char_len(p, &shown))
		chars++;
	if (chars <= width) {
		head = chars;
		tail = 0;
	} else {
		tail = width - head - 3;
	}
	for (const char *p = s; *p && o + 8 < n; p += len, idx++) {
		len = char_len(p, &shown);
		if (idx == head && tail)
			o += (size_t)snprintf(buf + o, n - o, "...");
		if (idx >= head && idx < chars - tail)
			continue;
		if (shown) {
			memcpy(buf + o, p, len);
			o += len;
		} else {
			buf[o++] = '?';
		}
	}
	buf[o] = '\0';
	return chars <= width ? chars : width;
}

/* Prints s left-aligned in a column of width characters, then a space. */
static void column(FILE *out, const char *s, int width, int head)
{
	char buf[256];
	int w = fit(buf, sizeof(buf), s, width, head);

	fprintf(out, "%s%*s ", buf, width > w ? width - w : 0, "");
}

static const char *dur(char *buf, uint64_t ns)
{
	return fmt_duration(buf, FMT_DURATION_MAX, ns);
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static int by_busy(const void *x, const void *y)
{
	const struct task_stats *a = *(const struct task_stats *const *)x;
	const struct task_stats *b = *(const struct task_stats *const *)y;

	if (a->busy_ns != b->busy_ns)
		return a->busy_ns < b->busy_ns ? 1 : -1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void task_header(FILE *out)
{
	fprintf(out, "%5s %6s  %-*s %-*s %6s %9s %9s %9s %9s %6s  %s\n", "SEQ", "ID", NAME_W,
		"NAME", SITE_W, "SPAWNED AT", "POLLS", "BUSY", "MAX POLL", "MEAN POLL", "IDLE",
		"WAKES", "STATE");
}

static void task_row(FILE *out, const struct task_stats *t)
{
	char id[24], site[SITE_W * 4 + 32], b1[FMT_DURATION_MAX], b2[FMT_DURATION_MAX],
		b3[FMT_DURATION_MAX], b4[FMT_DURATION_MAX];

	if (t->tokio_id)
		snprintf(id, sizeof(id), "%" PRIu64, t->tokio_id);
	else
		snprintf(id, sizeof(id), "-");
	if (t->spawn_file)
		snprintf(site, sizeof(site), "%s:%" PRIu32, basename_of(t->spawn_file), t->spawn_line);
	else
		snprintf(site, sizeof(site), "-");
	fprintf(out, "%5" PRIu64 " %6s  ", t->seq, id);
	column(out, t->name ? t->name : "(unknown)", NAME_W, 12);
	column(out, site, SITE_W, 0);
	fprintf(out, "%6" PRIu64 " %9s %9s %9s %9s %6" PRIu64 "  %s\n", t->polls,
		dur(b1, t->busy_ns), dur(b2, t->max_poll_ns),
		t->polls ? dur(b3, t->mean_poll_ns) : "-", dur(b4, t->idle_ns), t->wakes,
		task_state__str(t->state));
}

/* Sample (tests/data/golden/report.txt is the full one, lines cut here):
 *
 * asyncscope report: /srv/app/target/release/app (pid 4242, runtime tokio)
 * duration 1.00 s, 30 events, lost events 0, missed events 0
 *
 * TASKS: 4 tasks, by busy time
 *   SEQ     ID  NAME                                     SPAWNED AT            POLLS      BUSY  MAX POLL MEAN POLL      IDLE  WAKES  STATE
 *     6      -  (unknown)                                -                         1  300.0 ms  300.0 ms  300.0 ms      0 ns      0  running
 *     3      3  app::handler::{{closure}}                main.rs:14                2   30.0 ms   20.0 ms   15.0 ms  278.8 ms      1  completed
 *     5      5  app::connect...ream>::serve::{{closure}} handler.rs:40             1  500.0 us  500.0 us  500.0 us  593.5 ms      1  runnable
 *
 * RUNTIME WORKER TASKS: 2 (executor loops: other tasks were polled inside them)
 *   SEQ     ID  NAME                                     SPAWNED AT            POLLS      BUSY  MAX POLL MEAN POLL      IDLE  WAKES  STATE
 *     2      2  tokio::runti...nch::launch::{{closure}}> -                         1  999.9 ms  999.9 ms  999.9 ms      0 ns      0  running
 *
 * WORKERS: 2 threads
 *      TID  NAME              POLLS      BUSY    PARKED  PARKS
 *     4244  tokio-runtime-?       4  301.0 ms  491.0 ms      1
 *
 * TOTALS
 * tasks 6 (4 user, 2 runtime)  polls 8 (6 user)  events 30  lost 0  missed 0  anomalies 0
 */
int report_text(FILE *out, const struct analysis *a, const struct as_trace_meta *meta,
		const struct as_trace_end *end, const struct report_opts *opts)
{
	const struct summary *s = analysis__summary(a);
	const struct task_stats *tasks, **order = NULL;
	const struct worker_stats *workers;
	size_t n_tasks, n_workers, n_user = 0, n_runtime = 0;
	uint64_t lost, missed;
	char b1[FMT_DURATION_MAX], b2[FMT_DURATION_MAX];
	int err = 0;

	if (!out || !s)
		return -EINVAL;
	tasks = analysis__tasks(a, &n_tasks);
	workers = analysis__workers(a, &n_workers);
	lost = end ? end->lost : s->lost;
	missed = end ? end->missed : s->missed;

	fprintf(out, "asyncscope report: %s (pid %" PRIu32 ", runtime %s)\n",
		meta && meta->target ? meta->target : "?", meta ? meta->pid : 0,
		meta && meta->runtime && *meta->runtime ? meta->runtime : "?");
	fprintf(out, "duration %s, %" PRIu64 " events, lost events %" PRIu64
		", missed events %" PRIu64 "\n", dur(b1, s->duration_ns), s->events, lost, missed);
	if (lost || missed)
		fprintf(out, "!!! WARNING: %" PRIu64 " events lost in the kernel (ring buffer full) and "
			"%" PRIu64 " missed by the recorder: the numbers below undercount !!!\n",
			lost, missed);
	if (opts && opts->truncated)
		fprintf(out, "!!! WARNING: the trace is truncated (no end record): it stops at its "
			"last event !!!\n");

	order = calloc(n_tasks ? n_tasks : 1, sizeof(*order));
	if (!order) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < n_tasks; i++)
		if (tasks[i].kind == TASK_KIND_TASK)
			order[n_user++] = &tasks[i];
	qsort(order, n_user, sizeof(*order), by_busy);

	fprintf(out, "\nTASKS: %zu task%s, by busy time\n", n_user, n_user == 1 ? "" : "s");
	if (n_user) {
		task_header(out);
		for (size_t i = 0; i < n_user; i++)
			task_row(out, order[i]);
	}
	n_runtime = n_tasks - n_user;
	if (n_runtime) {
		fprintf(out, "\nRUNTIME WORKER TASKS: %zu (executor loops: other tasks were polled "
			"inside them)\n", n_runtime);
		task_header(out);
		for (size_t i = 0; i < n_tasks; i++)
			if (tasks[i].kind == TASK_KIND_WORKER)
				task_row(out, &tasks[i]);
	}

	fprintf(out, "\nWORKERS: %zu thread%s\n", n_workers, n_workers == 1 ? "" : "s");
	if (n_workers)
		fprintf(out, "%8s  %-*s %6s %9s %9s %6s\n", "TID", TNAME_W, "NAME", "POLLS", "BUSY",
			"PARKED", "PARKS");
	for (size_t i = 0; i < n_workers; i++) {
		const struct worker_stats *w = &workers[i];

		fprintf(out, "%8" PRIu32 "  ", w->tid);
		column(out, w->name ? w->name : "-", TNAME_W, 6);
		fprintf(out, "%6" PRIu64 " %9s %9s %6" PRIu64 "\n", w->polls, dur(b1, w->busy_ns),
			dur(b2, w->parked_ns), w->parks);
	}

	fprintf(out, "\nTOTALS\n");
	fprintf(out, "tasks %" PRIu64 " (%" PRIu64 " user, %" PRIu64 " runtime)  polls %" PRIu64
		" (%" PRIu64 " user)  events %" PRIu64 "  lost %" PRIu64 "  missed %" PRIu64
		"  anomalies %" PRIu64 "\n", s->tasks, s->user_tasks, s->worker_tasks, s->polls,
		s->user_polls, s->events, lost, missed, s->anomalies);
cleanup:
	free(order);
	if (!err && (fflush(out) || ferror(out)))
		err = -EIO;
	return err;
}
