/* text: the human-readable task report. Formatting only: every number comes
 * from the analysis. Writes only to the FILE* it is given. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/futures.h"
#include "output/report.h"
#include "output/view.h"
#include "util/fmt.h"
#include "util/rust_name.h"
#include "util/task_id.h"

#define NAME_MIN 16    /* a name column at least this wide */
#define SITE_W 24
#define TNAME_W 16

/* Copies s into buf (size n >= 4 * width + 4) for a column of `width`
 * characters, control bytes and invalid UTF-8 shown as '?'. A longer
 * string keeps its first `head` characters and its end, with "..." between
 * them: for file paths and spawn sites (names go through text_name()).
 * Returns the displayed width. */
static int fit(char *buf, size_t n, const char *s, int width, int head)
{
	int chars = 0, tail, idx = 0;
	size_t o = 0, len;

	for (const char *p = s; *p; p += len ? len : 1, chars++)
		len = fmt_utf8_len(p, strnlen(p, 4));
	if (chars <= width) {
		head = chars;
		tail = 0;
	} else {
		tail = width - head - 3;
	}
	for (const char *p = s; *p && o + 8 < n; p += len, idx++) {
		len = fmt_utf8_len(p, strnlen(p, 4));
		bool shown = len > 1 || (len == 1 && (unsigned char)*p >= 0x20 && *p != 0x7f);

		len = len ? len : 1;
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

/* Prints s (a path or a site) left-aligned in a column of width characters,
 * then a space. */
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

/* The TASK column: a task's identity (util/task_id.h), right-aligned. */
#define TASK_W 7

/* A task's name as the NAME column shows it, into buf (size n): a name
 * given at spawn first, quoted as tokio-console's ("job-3" app::job), then
 * its future's name, shortened to what is left of width. */
static char *task_display(const struct text_view *v, char *buf, size_t n,
			  const struct task_stats *t, int width)
{
	char name[4096], label[256];

	if (!t->label)
		return text_name(v, buf, n, t->name, width);
	fit(label, sizeof(label), t->label, 60, 40);
	int room = width - rust_name_width(label) - 3;

	text_name(v, name, sizeof(name), t->name, room > 12 ? room : 12);
	snprintf(buf, n, "\"%s\" %s", label, name);
	return buf;
}

/* The NAME column's width for rows[0..n). */
static int tasks_name_width(const struct text_view *v, const struct task_stats *const *rows,
			    size_t n)
{
	char buf[4400];
	int w = NAME_MIN;

	for (size_t i = 0; i < n; i++) {
		int k = rust_name_width(task_display(v, buf, sizeof(buf), rows[i], TEXT_NAME_MAX));
		if (k > w)
			w = k;
	}
	/* names are shortened to TEXT_NAME_MAX already: one still wider (its
	 * leaf alone is) widens the column rather than pushing its row's
	 * other columns out of line */
	return w;
}

static void task_header(FILE *out, int name_w)
{
	fprintf(out, "%*s  %-*s %-*s %6s %9s %9s %9s %9s %6s  %s\n", TASK_W, "TASK", name_w,
		"NAME", SITE_W, "SPAWNED AT", "POLLS", "BUSY", "MAX POLL", "MEAN POLL", "IDLE",
		"WAKES", "STATE");
}

static void task_row(FILE *out, const struct text_view *v, const struct task_stats *t, int name_w)
{
	char id[TASK_ID_MAX], site[SITE_W * 4 + 32], b1[FMT_DURATION_MAX], b2[FMT_DURATION_MAX],
		b3[FMT_DURATION_MAX], b4[FMT_DURATION_MAX], name[4400];

	if (t->spawn_file)
		snprintf(site, sizeof(site), "%s:%" PRIu32, basename_of(t->spawn_file), t->spawn_line);
	else
		snprintf(site, sizeof(site), "-");
	fprintf(out, "%*s  ", TASK_W, task_id_format(id, sizeof(id), t->tokio_id, t->seq, 0));
	task_display(v, name, sizeof(name), t, name_w);
	int w = rust_name_width(name);
	fprintf(out, "%s%*s ", name, name_w > w ? name_w - w : 0, "");
	column(out, site, SITE_W, 0);
	fprintf(out, "%6" PRIu64 " %9s %9s %9s %9s %6" PRIu64 "  %s\n", t->polls,
		dur(b1, t->busy_ns), dur(b2, t->max_poll_ns),
		t->polls ? dur(b3, t->mean_poll_ns) : "-", dur(b4, t->idle_ns), t->wakes,
		task_state__str(t->state));
}

/* A table of task rows: the header, at most v->limit rows, the line saying
 * how many more. */
static void task_table(FILE *out, const struct text_view *v, const struct task_stats *const *rows,
		       size_t n, const char *what)
{
	size_t shown = text_rows(v, n);
	int name_w = tasks_name_width(v, rows, shown);

	task_header(out, name_w);
	for (size_t i = 0; i < shown; i++)
		task_row(out, v, rows[i], name_w);
	text_more(out, v, shown, n, what, "  ", "; every one in --format json");
}

/* Groups of folded tasks, when there are any:
 *
 * TASK GROUPS: 202841 finished tasks folded by name and spawn location, by busy time
 *   NAME                                     SPAWNED AT            TASKS  POLLS      BUSY  MAX POLL  WAKES
 *   bench::service::handler_3::{async_fn_... server.rs:41            512   4421  38.2 ms   19.9 us   1623
 * (only the 10000 busiest finished tasks are listed one by one: --max-tasks N
 * raises the limit, --max-tasks 0 lists every task)
 */
static void groups_text(FILE *out, const struct text_view *v, const struct analysis *a)
{
	const struct summary *s = analysis__summary(a);
	const struct task_group *g;
	char b1[FMT_DURATION_MAX], b2[FMT_DURATION_MAX], site[SITE_W * 4 + 32];
	size_t n, shown;

	if (!s->folded_tasks)
		return;
	g = analysis__groups(a, &n);
	shown = text_rows(v, n);
	const char **names = calloc(shown ? shown : 1, sizeof(*names));
	for (size_t i = 0; names && i < shown; i++)
		names[i] = g[i].name;
	int name_w = names ? text_name_width(v, names, shown, NAME_MIN) : TEXT_NAME_MAX;
	free(names);
	fprintf(out, "\n%sTASK GROUPS:%s %" PRIu64 " %stask%s folded by name and spawn location, "
		"by busy time\n", text_sgr(v, TS_BOLD), text_sgr(v, TS_RESET), s->folded_tasks,
		s->folded_live_tasks ? "" : "finished ", s->folded_tasks == 1 ? "" : "s");
	fprintf(out, "  %-*s %-*s %7s %8s %9s %9s %8s\n", name_w, "NAME", SITE_W, "SPAWNED AT",
		"TASKS", "POLLS", "BUSY", "MAX POLL", "WAKES");
	for (size_t i = 0; i < shown; i++) {
		if (g[i].spawn_file)
			snprintf(site, sizeof(site), "%s:%" PRIu32, basename_of(g[i].spawn_file),
				 g[i].spawn_line);
		else
			snprintf(site, sizeof(site), "-");
		fputs("  ", out);
		text_name_column(out, v, g[i].name, name_w);
		column(out, site, SITE_W, 0);
		fprintf(out, "%7" PRIu64 " %8" PRIu64 " %9s %9s %8" PRIu64 "\n", g[i].tasks,
			g[i].polls, dur(b1, g[i].busy_ns), dur(b2, g[i].max_poll_ns), g[i].wakes);
	}
	text_more(out, v, shown, n, "groups", "  ", "; every one in --format json");
	fprintf(out, "(only the %" PRIu64 " busiest finished tasks are listed one by one: "
		"--max-tasks N raises the limit, --max-tasks 0 lists every task)\n", s->max_tasks);
}

#define SPARK_MAX 40   /* sparkline: one character per power of two, at most */

/* The name of task seq: its row's, or that of the group it was folded into
 * (group: index + 1 into analysis__groups(), 0 none). */
static const char *task_name(const struct analysis *a, uint64_t seq, uint32_t group)
{
	const struct task_stats *t = analysis__task(a, seq);
	const struct task_group *g;
	size_t n;

	if (t)
		return t->name ? t->name : "(unknown)";
	g = analysis__groups(a, &n);
	return group && group <= n && g[group - 1].name ? g[group - 1].name : "(unknown)";
}

/* The identity of task seq (util/task_id.h) into buf (TASK_ID_MAX bytes); a
 * folded task has no row, so no runtime id left: its seq. */
static char *task_ident(char *buf, const struct analysis *a, uint64_t seq)
{
	const struct task_stats *t = analysis__task(a, seq);

	return task_id_format(buf, TASK_ID_MAX, t ? t->tokio_id : 0, seq, 0);
}

/* The TASK column. */
static void id_column(FILE *out, const struct analysis *a, uint64_t seq)
{
	char id[TASK_ID_MAX];

	fprintf(out, "%*s  ", TASK_W, task_ident(id, a, seq));
}

/* The shape of h as one character per power of two from its min to its max,
 * " .:-=+*#%@" from none to the fullest; "" when it would be too wide. */
static void sparkline(char *buf, size_t n, const struct hist *h)
{
	static const char levels[] = " .:-=+*#%@";
	struct hist_bucket b[64];
	uint64_t per[64] = { 0 }, top = 0;
	size_t nb = hist__buckets(h, b, 64);
	int lo = 64, hi = -1, o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < nb; i++) {
		int oct = b[i].low ? 63 - __builtin_clzll(b[i].low) : 0;

		per[oct] += b[i].count;
		if (per[oct] > top)
			top = per[oct];
		lo = oct < lo ? oct : lo;
		hi = oct > hi ? oct : hi;
	}
	if (hi < 0 || hi - lo + 1 > SPARK_MAX || (size_t)(hi - lo + 4) > n)
		return;
	buf[o++] = '|';
	for (int i = lo; i <= hi; i++)
		buf[o++] = levels[per[i] ? 1 + (int)((per[i] * 8 + top - 1) / top) : 0];
	buf[o++] = '|';
	buf[o] = '\0';
}

/* One line per distribution:
 *   poll duration   count 303     p50 1.54 us   p90 2.47 us   p99 8.22 us   p99.9 44.2 us   max 44.2 us   from 512 ns |#@=::::|
 */
static void dist_line(FILE *out, const char *what, const struct hist *h)
{
	char b[6][FMT_DURATION_MAX], spark[SPARK_MAX + 4];

	fprintf(out, "  %-15s count %-7" PRIu64, what, h ? h->count : 0);
	if (!h || !h->count) {
		fputc('\n', out);
		return;
	}
	sparkline(spark, sizeof(spark), h);
	fprintf(out, " p50 %-9s p90 %-9s p99 %-9s p99.9 %-9s max %-9s", dur(b[0],
		hist__quantile(h, 0.5)), dur(b[1], hist__quantile(h, 0.9)),
		dur(b[2], hist__quantile(h, 0.99)), dur(b[3], hist__quantile(h, 0.999)),
		dur(b[4], h->max));
	if (spark[0])
		fprintf(out, " from %s %s", dur(b[5], (uint64_t)1 << (h->min > 1 ? 63 -
			__builtin_clzll(h->min) : 0)), spark);
	fputc('\n', out);
}

/* The scheduling sections (sample from chain-100.trace):
 *
 * DISTRIBUTIONS (user tasks; sparkline: one character per power of two from the smallest)
 *   poll duration   count 303     p50 1.54 us  p90 2.47 us  p99 8.22 us  p99.9 44.2 us  max 44.2 us  512 ns |@%:--|
 *
 * LONG POLLS: 1 poll over 1.00 ms, longest first
 *      TASK  NAME                                          TID     START  DURATION
 *        #3  blocker::mai...block#0}::{async_block#1}    11992  +301.2 ms  200.4 ms
 *
 * WAKE EDGES: 3 (waker -> woken), by wakes
 *   #2 chain::relay -> #3 chain::consumer  100 wakes, delay p50 1.31 us p99 3.10 us
 *
 * and past --max-tasks, wakes where a task was folded, by group:
 *   handler_2 -> handler_5  12 wakes (group edge, 9 task pairs), delay p50 21.0 us p99 86.0 us
 */
/* The NAME column's width for the names of tasks seqs[0..n) (with their
 * groups). */
static int seq_name_width(const struct text_view *v, const struct analysis *a,
			  const uint64_t *seqs, const uint32_t *groups, size_t stride, size_t n)
{
	const char **names = calloc(n ? n : 1, sizeof(*names));
	int w;

	if (!names)
		return TEXT_NAME_MAX;
	for (size_t i = 0; i < n; i++) {
		const uint64_t *seq = (const uint64_t *)((const char *)seqs + i * stride);
		const uint32_t *group = (const uint32_t *)((const char *)groups + i * stride);
		names[i] = task_name(a, *seq, *group);
	}
	w = text_name_width(v, names, n, NAME_MIN);
	free(names);
	return w;
}

#define NAME_WIDTH(v, a, arr, n) \
	seq_name_width(v, a, &(arr)[0].seq, &(arr)[0].group, sizeof((arr)[0]), n)

static void heading(FILE *out, const struct text_view *v, const char *title)
{
	fprintf(out, "\n%s%s%s", text_sgr(v, TS_BOLD), title, text_sgr(v, TS_RESET));
}

static void sched_text(FILE *out, const struct text_view *v, const struct analysis *a)
{
	const struct summary *s = analysis__summary(a);
	const struct long_poll *lp;
	const struct stall *st;
	const struct starve *sv;
	const struct wake_edge *e;
	char b1[FMT_DURATION_MAX], b2[FMT_DURATION_MAX], b3[FMT_DURATION_MAX];
	size_t n, shown;
	int name_w;

	heading(out, v, "DISTRIBUTIONS");
	fprintf(out, " (user tasks; |shape|: one character per power of two from the one shown)\n");
	dist_line(out, "poll duration", analysis__dist(a, DIST_POLL));
	dist_line(out, "sched delay", analysis__dist(a, DIST_SCHED));
	dist_line(out, "idle time", analysis__dist(a, DIST_IDLE));

	lp = analysis__long_polls(a, &n);
	shown = text_rows(v, n);
	heading(out, v, "LONG POLLS:");
	fprintf(out, " %" PRIu64 " poll%s over %s", s->long_polls, s->long_polls == 1 ? "" : "s",
		dur(b1, s->long_poll_ns));
	if (n > shown)
		fprintf(out, ", the %zu longest", shown);
	else if (n)
		fprintf(out, ", longest first");
	fputc('\n', out);
	name_w = n ? NAME_WIDTH(v, a, lp, shown) : NAME_MIN;
	if (n)
		fprintf(out, "%*s  %-*s %8s %10s %9s\n", TASK_W, "TASK", name_w, "NAME", "TID",
			"START", "DURATION");
	for (size_t i = 0; i < shown; i++) {
		id_column(out, a, lp[i].seq);
		text_name_column(out, v, task_name(a, lp[i].seq, lp[i].group), name_w);
		const struct task_stats *lt = analysis__task(a, lp[i].seq);

		/* begun before the recording (found in that poll in memory at the end) */
		if (lt && lt->before && lp[i].until_end)
			snprintf(b2, sizeof(b2), "before");
		else
			snprintf(b2, sizeof(b2), "+%s", dur(b3, lp[i].start_ns));
		fprintf(out, "%8" PRIu32 " %10s %9s%s\n", lp[i].tid, b2,
			dur(b1, lp[i].duration_ns), lp[i].until_end ? "  (still running at the end)" : "");
	}
	text_more(out, v, shown, s->long_polls > n ? s->long_polls : n, "long polls", "  ",
		  s->long_polls > n ? "; the 1000 longest in --format json" : "; all in --format json");

	st = analysis__stalled(a, &n);
	shown = text_rows(v, n);
	heading(out, v, "STALLED:");
	fprintf(out, " %zu task%s idle (last poll Pending, no wake) for over %s\n", n,
		n == 1 ? "" : "s", dur(b1, s->stall_ns));
	name_w = n ? NAME_WIDTH(v, a, st, shown) : NAME_MIN;
	if (n)
		fprintf(out, "%*s  %-*s %10s %9s %6s  %s\n", TASK_W, "TASK", name_w, "NAME", "SINCE",
			"STALLED", "TIMES", "UNTIL");
	for (size_t i = 0; i < shown; i++) {
		id_column(out, a, st[i].seq);
		text_name_column(out, v, task_name(a, st[i].seq, st[i].group), name_w);
		const struct task_stats *t = analysis__task(a, st[i].seq);

		/* idle since before the recording (found in memory at the end) */
		if (t && t->before && st[i].until_end)
			snprintf(b2, sizeof(b2), "before");
		else
			snprintf(b2, sizeof(b2), "+%s", dur(b3, st[i].since_ns));
		/* what held it at the end, when the recorder read it */
		const char *until = !st[i].until_end ? "woken or dropped" :
				    !t || !t->wakers_known ? "end of trace (still idle)" :
				    t->wakers ? "end of trace (still idle, a waker held)" :
				    "end of trace (still idle, no waker left)";

		fprintf(out, "%10s %9s %6" PRIu64 "  %s\n", b2, dur(b1, st[i].stalled_ns), st[i].count,
			until);
	}
	text_more(out, v, shown, n, "stalled tasks", "  ", "; all in --format json");

	sv = analysis__starved(a, &n);
	shown = text_rows(v, n);
	heading(out, v, "STARVED:");
	fprintf(out, " %zu task%s runnable but not polled for over %s\n", n,
		n == 1 ? "" : "s", dur(b1, s->starve_ns));
	name_w = n ? NAME_WIDTH(v, a, sv, shown) : NAME_MIN;
	if (n)
		fprintf(out, "%*s  %-*s %9s %6s\n", TASK_W, "TASK", name_w, "NAME", "MAX WAIT",
			"TIMES");
	for (size_t i = 0; i < shown; i++) {
		id_column(out, a, sv[i].seq);
		text_name_column(out, v, task_name(a, sv[i].seq, sv[i].group), name_w);
		fprintf(out, "%9s %6" PRIu64 "\n", dur(b1, sv[i].max_wait_ns), sv[i].count);
	}
	text_more(out, v, shown, n, "starved tasks", "  ", "; all in --format json");

	e = analysis__edges(a, &n);
	shown = text_rows(v, n);
	heading(out, v, "WAKE EDGES:");
	fprintf(out, " %zu (waker -> woken)", n);
	if (n > shown)
		fprintf(out, ", the %zu with most wakes\n", shown);
	else
		fprintf(out, "%s\n", n ? ", most wakes first" : "");
	for (size_t i = 0; i < shown; i++) {
		char fb[1024], tb[1024], fid[TASK_ID_MAX + 1] = "", tid[TASK_ID_MAX + 1] = "";

		if (e[i].from_kind == WAKE_FROM_TASK)
			text_name(v, fb, sizeof(fb), task_name(a, e[i].from_seq, e[i].from_group),
				  TEXT_NAME_MAX);
		else
			snprintf(fb, sizeof(fb), "%s", wake_source__str(e[i].from_kind));
		text_name(v, tb, sizeof(tb), task_name(a, e[i].to_seq, e[i].to_group), TEXT_NAME_MAX);
		/* a task end is named "#3 name"; a group end or a source by name alone */
		if (e[i].from_kind == WAKE_FROM_TASK && e[i].from_seq)
			strcat(task_ident(fid, a, e[i].from_seq), " ");
		if (e[i].to_seq)
			strcat(task_ident(tid, a, e[i].to_seq), " ");
		fprintf(out, "  %s%s -> %s%s  %" PRIu64 " wake%s", fid, fb, tid, tb, e[i].count,
			e[i].count == 1 ? "" : "s");
		if (e[i].from_group || e[i].to_group) /* a group end: folded tasks */
			fprintf(out, " (group edge, %" PRIu64 " task pair%s)", e[i].tasks,
				e[i].tasks == 1 ? "" : "s");
		if (e[i].timed)
			fprintf(out, ", delay p50 %s p99 %s", dur(b1, e[i].delay_p50_ns),
				dur(b2, e[i].delay_p99_ns));
		fputc('\n', out);
	}
	text_more(out, v, shown, n, "wake edges", "  ", "; all in --format json");
}

#define FN_W 48        /* future function names: their end is the most specific */
#define LOC_W 26
#define CHAIN_INDENT (TASK_W + 4) /* await chains: under the name, two deeper */

/* Future-level sections, only for traces recorded with --futures; sample:
 *
 * FUTURES: 129 future polls in 5 functions (record --futures); frames lost: 0 exits, 0 entries, 0 exits without entry
 *   FUNCTION                                         DEFINED AT                  POLLS  READY PENDING      SELF     TOTAL  MAX POLL
 *   futures_nested::leaf                             futures_nested.rs:127          16      4      12  183.1 ms  183.1 ms   16.4 ms
 *   <futures_nested::Checksum as Future>::poll       futures_nested.rs:115          20      4      16   70.6 ms   70.6 ms   6.01 ms
 *
 * PARKED AT: 1 task parked for good (last poll Pending, never polled again), longest waiting first, await chain outermost first
 *      TASK  NAME                                       WAITING  UNTIL
 *        #2  futures_stuck::stuck                        1.10 s  dropped
 *              futures_stuck::stuck                             at src/bin/futures_stuck.rs:89
 *              futures_stuck::wait_signal                       at src/bin/futures_stuck.rs:77  awaiting futures_stuck::Gate
 */
static void futures_text(FILE *out, const struct text_view *v, const struct analysis *a,
			 const struct futures *fu)
{
	const struct futures_summary *s = futures__summary(fu);
	const struct futures_fn *fn;
	const struct futures_parked *p;
	char b1[FMT_DURATION_MAX], b2[FMT_DURATION_MAX], b3[FMT_DURATION_MAX];
	char site[LOC_W * 4 + 32], name[1024];
	size_t n, shown;
	int name_w;

	fn = futures__fns(fu, &n);
	shown = text_rows(v, n);
	heading(out, v, "FUTURES:");
	fprintf(out, " %" PRIu64 " future poll%s in %zu function%s (record --futures); "
		"frames lost: %" PRIu64 " exits, %" PRIu64 " entries, %" PRIu64
		" exits without entry", s->frames, s->frames == 1 ? "" : "s", n, n == 1 ? "" : "s",
		s->exits_lost, s->entries_lost, s->unmatched_exits);
	if (s->bad || s->too_deep)
		fprintf(out, ", %" PRIu64 " of no future probe, %" PRIu64 " too deep", s->bad,
			s->too_deep);
	fputc('\n', out);
	const char **names = calloc(shown ? shown : 1, sizeof(*names));
	for (size_t i = 0; names && i < shown; i++)
		names[i] = fn[i].name;
	name_w = names ? text_name_width(v, names, shown, NAME_MIN) : FN_W;
	free(names);
	if (n)
		fprintf(out, "  %-*s %-*s %6s %6s %7s %9s %9s %9s\n", name_w, "FUNCTION", LOC_W,
			"DEFINED AT", "POLLS", "READY", "PENDING", "SELF", "TOTAL", "MAX POLL");
	for (size_t i = 0; i < shown; i++) {
		if (fn[i].file && fn[i].line)
			snprintf(site, sizeof(site), "%s:%" PRIu32, basename_of(fn[i].file), fn[i].line);
		else
			snprintf(site, sizeof(site), "-");
		fputs("  ", out);
		text_name_column(out, v, fn[i].name, name_w);
		column(out, site, LOC_W, 0);
		fprintf(out, "%6" PRIu64 " %6" PRIu64 " %7" PRIu64 " %9s %9s %9s\n", fn[i].polls,
			fn[i].ready, fn[i].pending, dur(b1, fn[i].self_ns), dur(b2, fn[i].total_ns),
			dur(b3, fn[i].max_ns));
	}
	text_more(out, v, shown, n, "functions", "  ", "; all in --format json");

	p = futures__parked(fu, &n);
	shown = text_rows(v, n);
	heading(out, v, "PARKED AT:");
	fprintf(out, " %" PRIu64 " task%s parked for good (last poll Pending, never "
		"polled again), longest waiting first, await chain outermost first\n",
		s->parked_tasks, s->parked_tasks == 1 ? "" : "s");
	names = calloc(shown ? shown : 1, sizeof(*names));
	for (size_t i = 0; names && i < shown; i++) {
		const struct task_stats *t = analysis__task(a, p[i].seq);
		names[i] = t && t->name ? t->name : p[i].name;
	}
	name_w = names ? text_name_width(v, names, shown, NAME_MIN) : TEXT_NAME_MAX;
	free(names);
	if (n)
		fprintf(out, "%*s  %-*s %9s  %s\n", TASK_W, "TASK", name_w, "NAME", "WAITING",
			"UNTIL");
	for (size_t i = 0; i < shown; i++) {
		const struct task_stats *t = analysis__task(a, p[i].seq);

		id_column(out, a, p[i].seq);
		text_name_column(out, v, t && t->name ? t->name : p[i].name, name_w);
		fprintf(out, "%9s  %s\n", dur(b1, p[i].waiting_ns),
			p[i].until_end ? "end of trace" : "dropped");
		if (!p[i].n_chain)
			fprintf(out, "%*s(no future frame returned Pending in its last poll)\n", CHAIN_INDENT, "");
		int chain_w = NAME_MIN;
		for (uint32_t j = 0; j < p[i].n_chain; j++) {
			int k = rust_name_width(text_name(v, name, sizeof(name), p[i].chain[j].name, FN_W));
			chain_w = k > chain_w ? k : chain_w;
		}
		for (uint32_t j = 0; j < p[i].n_chain; j++) {
			const struct futures_link *l = &p[i].chain[j];
			char loc[4 * 200 + 8];

			fprintf(out, "%*s", CHAIN_INDENT, "");
			text_name_column(out, v, l->name, chain_w);
			if (l->file || l->line) {
				fit(loc, sizeof(loc), l->file ? l->file : "?", 200, 60);
				fprintf(out, "%s %s:%" PRIu32, l->at_await ? "at" : "in", loc, l->line);
				if (!l->at_await)
					fputs(" (fn)", out);
			} else {
				fputs("-", out);
			}
			if (l->awaitee && j + 1 == p[i].n_chain) /* the others: the next link */
				fprintf(out, "  awaiting %s", text_name(v, name, sizeof(name), l->awaitee,
									 60));
			fputc('\n', out);
		}
	}
	text_more(out, v, shown, n, "parked tasks", "  ", "; all in --format json");
}

/* Sample (tests/data/golden/report.txt is the full one, lines cut here):
 *
 * asyncscope report: /srv/app/target/release/app (pid 4242, runtime tokio)
 * duration 1.00 s, 30 events, lost events 0, missed events 0
 *
 * TASKS: 4 tasks, by busy time
 *      TASK  NAME                                     SPAWNED AT            POLLS      BUSY  MAX POLL MEAN POLL      IDLE  WAKES  STATE
 *        ~6  (unknown)                                -                         1  300.0 ms  300.0 ms  300.0 ms      0 ns      0  running
 *        #3  app::handler::{{closure}}                main.rs:14                2   30.0 ms   20.0 ms   15.0 ms  278.8 ms      1  completed
 *        #5  app::connect...ream>::serve::{{closure}} handler.rs:40             1  500.0 us  500.0 us  500.0 us  593.5 ms      1  runnable
 *
 * RUNTIME WORKER TASKS: 2 (the runtime's executor loops: tasks are polled inside them)
 *      TASK  NAME                                     SPAWNED AT            POLLS      BUSY  MAX POLL MEAN POLL      IDLE  WAKES  STATE
 *        #2  tokio::runti...nch::launch::{{closure}}> -                         1  999.9 ms  999.9 ms  999.9 ms      0 ns      0  running
 *
 * WORKERS: 2 threads
 *      TID  NAME              POLLS      BUSY    PARKED  PARKS
 *     4244  tokio-runtime-?       4  301.0 ms  491.0 ms      1
 *
 * TOTALS
 * tasks 6 (4 user, 2 runtime)  polls 8 (6 user)  events 30  lost 0  missed 0  anomalies 0
 */
void report_flight_line(FILE *out, const struct as_trace_meta *meta)
{
	char b1[FMT_DURATION_MAX], b2[FMT_DURATION_MAX], b3[FMT_DURATION_MAX];

	if (!meta || !meta->flight_trigger)
		return;
	fprintf(out, "flight recorder snapshot: trigger %s (%s) at %s, window %s + %s after", meta->flight_trigger,
		meta->flight_detail && *meta->flight_detail ? meta->flight_detail : "-",
		dur(b1, meta->flight_trigger_ns > meta->clock_mono_ns ?
			 meta->flight_trigger_ns - meta->clock_mono_ns : 0),
		dur(b2, meta->flight_window_ns), dur(b3, meta->flight_after_ns));
	if (meta->flight_evicted)
		fprintf(out, "; %" PRIu64 " events of it evicted for --flight-size (not losses)",
			meta->flight_evicted);
	fputc('\n', out);
}

int report_text(FILE *out, const struct analysis *a, const struct as_trace_meta *meta,
		const struct as_trace_end *end, const struct report_opts *opts)
{
	const struct summary *s = analysis__summary(a);
	const struct task_stats *tasks, **order = NULL;
	const struct worker_stats *workers;
	const struct text_view *v = opts && opts->view ? opts->view : &text_view_default;
	const char *warn = text_sgr(v, TS_WARNING), *r = text_sgr(v, TS_RESET);
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

	fprintf(out, "%sasyncscope report:%s %s (pid %" PRIu32 ", runtime %s)\n",
		text_sgr(v, TS_BOLD), r, meta && meta->target ? meta->target : "?",
		meta ? meta->pid : 0, meta && meta->runtime && *meta->runtime ? meta->runtime : "?");
	if (meta && meta->runtime_detail && *meta->runtime_detail)
		fprintf(out, "runtime %s\n", meta->runtime_detail);
	report_flight_line(out, meta);
	if (opts && opts->truncated && end && end->counts_lower_bound)
		/* the counts of the last complete chunk: the losses are at least that */
		fprintf(out, "duration %s, %" PRIu64 " events, lost events at least %" PRIu64
			", missed events at least %" PRIu64 " (counted up to %s into the recording; "
			"truncated trace)\n", dur(b1, s->duration_ns), s->events, lost, missed,
			dur(b2, meta && end->counts_ns > meta->clock_mono_ns ?
				end->counts_ns - meta->clock_mono_ns : 0));
	else if (opts && opts->truncated)
		/* the counts are in the end record the trace lacks: not 0 */
		fprintf(out, "duration %s, %" PRIu64 " events, lost and missed events unknown "
			"(truncated trace)\n", dur(b1, s->duration_ns), s->events);
	else
		fprintf(out, "duration %s, %" PRIu64 " events, lost events %" PRIu64
			", missed events %" PRIu64 "\n", dur(b1, s->duration_ns), s->events, lost,
			missed);
	if (analysis__wakes_unrecorded(a, meta))
		fprintf(out, "no wake probe (record --lite): polls and busy time only; wakes, "
			"scheduling delays and spawn sites were not recorded (WAKES, SPAWNED AT "
			"and the wake sections are empty for that reason)\n");
	if (lost || missed)
		fprintf(out, "%s!!! WARNING: %s%" PRIu64 " events lost in the kernel (ring buffer full) "
			"and %" PRIu64 " missed by the recorder: the numbers below undercount !!!%s\n",
			warn, opts && opts->truncated ? "at least " : "", lost, missed, r);
	if (opts && opts->truncated)
		fprintf(out, "%s!!! WARNING: the trace is truncated (no end record): it stops at its "
			"last event !!!%s\n", warn, r);
	if (s->folded_live_tasks) /* (never freed: lost FREEs, detached tasks, ...) */
		fprintf(out, "%s!!! WARNING: %" PRIu64 " live tasks folded into TASK GROUPS: more than "
			"%" PRIu64 " tasks were live at once, the least recently active are summed "
			"(%" PRIu64 " later events of theirs not analysed); --max-live-tasks N follows "
			"more, 0 all (memory grows with them) !!!%s\n", warn, s->folded_live_tasks,
			s->max_live_tasks, s->folded_events, r);
	/* what is wrong, first */
	if (opts && opts->findings) {
		fputc('\n', out);
		if ((err = text_findings(out, opts->findings, v)))
			goto cleanup;
	}

	if (as_meta_profile(meta)) {
		/* asyncscope profile: no probes, so nothing that needs polls */
		fprintf(out, "\nTASKS, WORKERS, POLL AND WAKE DISTRIBUTIONS, LONG POLLS, STALLED, "
			"STARVED, WAKE EDGES: not recorded in profile mode (no probes: polls, wakes "
			"and parks need asyncscope record); CPU samples and off-CPU time per task "
			"below\n");
		heading(out, v, "TOTALS");
		fprintf(out, "\ntask ids seen %" PRIu64 "  polls not recorded in profile mode  "
			"events %" PRIu64 "  ", s->tasks, s->events);
		if (opts && opts->truncated && !(end && end->counts_lower_bound))
			fprintf(out, "lost ?  missed ?\n");
		else
			fprintf(out, "lost %s%" PRIu64 "  missed %s%" PRIu64 "\n",
				opts && opts->truncated ? ">=" : "", lost,
				opts && opts->truncated ? ">=" : "", missed);
		goto cleanup;
	}
	order = calloc(n_tasks ? n_tasks : 1, sizeof(*order));
	if (!order) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < n_tasks; i++)
		if (tasks[i].kind == TASK_KIND_TASK)
			order[n_user++] = &tasks[i];
	qsort(order, n_user, sizeof(*order), by_busy);

	heading(out, v, "TASKS:");
	if (s->folded_tasks)
		fprintf(out, " %zu of %" PRIu64 " tasks, by busy time (every live task%s and "
			"the %" PRIu64 " busiest finished ones; the others in TASK GROUPS)\n", n_user,
			s->user_tasks, s->folded_live_tasks ? " not folded" : "", s->max_tasks);
	else
		fprintf(out, " %zu task%s, by busy time\n", n_user, n_user == 1 ? "" : "s");
	if (n_user)
		task_table(out, v, order, n_user, "tasks");
	groups_text(out, v, a);
	n_runtime = 0;
	for (size_t i = 0; i < n_tasks; i++)
		if (tasks[i].kind == TASK_KIND_WORKER)
			order[n_runtime++] = &tasks[i];
	if (n_runtime) {
		heading(out, v, "RUNTIME WORKER TASKS:");
		fprintf(out, " %zu (the runtime's executor loops: tasks are polled inside them)\n", n_runtime);
		task_table(out, v, order, n_runtime, "runtime worker tasks");
	}

	size_t shown = text_rows(v, n_workers);

	heading(out, v, "WORKERS:");
	fprintf(out, " %zu thread%s\n", n_workers, n_workers == 1 ? "" : "s");
	if (n_workers)
		fprintf(out, "%8s  %-*s %6s %9s %9s %6s\n", "TID", TNAME_W, "NAME", "POLLS", "BUSY",
			"PARKED", "PARKS");
	for (size_t i = 0; i < shown; i++) {
		const struct worker_stats *w = &workers[i];

		fprintf(out, "%8" PRIu32 "  ", w->tid);
		column(out, w->name ? w->name : "-", TNAME_W, 6);
		fprintf(out, "%6" PRIu64 " %9s %9s %6" PRIu64 "\n", w->polls, dur(b1, w->busy_ns),
			dur(b2, w->parked_ns), w->parks);
	}
	text_more(out, v, shown, n_workers, "threads", "  ", "; every one in --format json");

	sched_text(out, v, a);
	if (opts && opts->futures)
		futures_text(out, v, a, opts->futures);

	heading(out, v, "TOTALS");
	fprintf(out, "\ntasks %" PRIu64 " (%" PRIu64 " user, %" PRIu64 " runtime)  polls %" PRIu64
		" (%" PRIu64 " user)  events %" PRIu64 "  ", s->tasks, s->user_tasks,
		s->worker_tasks, s->polls, s->user_polls, s->events);
	if (opts && opts->truncated && !(end && end->counts_lower_bound))
		fprintf(out, "lost ?  missed ?");
	else
		fprintf(out, "lost %s%" PRIu64 "  missed %s%" PRIu64, opts && opts->truncated ? ">=" : "",
			lost, opts && opts->truncated ? ">=" : "", missed);
	fprintf(out, "  anomalies %" PRIu64 "\n", s->anomalies);
cleanup:
	free(order);
	if (!err && (fflush(out) || ferror(out)))
		err = -EIO;
	return err;
}
