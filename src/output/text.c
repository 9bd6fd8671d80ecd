/* text: the human-readable task report. Formatting only: every number comes
 * from the analysis. Writes only to the FILE* it is given. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/futures.h"
#include "output/report.h"
#include "util/fmt.h"
#include "util/task_id.h"

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

/* A type name that does not fit keeps its path and loses its generic
 * arguments first: "hyper::server::server::new_svc::NewSvcTask<..>" says
 * more than the middle of the argument list would. Writes into buf. */
static const char *collapse_generics(char *buf, size_t n, const char *s, int width)
{
	size_t o = 0;
	int depth = 0;

	if ((int)strlen(s) <= width || !strchr(s, '<'))
		return s;
	for (const char *p = s; *p && o + 4 < n; p++) {
		if (*p == '<' && (p == s || p[-1] != '-')) {
			if (depth++ == 0) {
				memcpy(buf + o, "<..", 3);
				o += 3;
			}
			continue;
		}
		if (*p == '>' && depth > 0 && p[-1] != '-') {
			if (--depth == 0)
				buf[o++] = '>';
			continue;
		}
		if (depth == 0)
			buf[o++] = *p;
	}
	buf[o] = '\0';
	return buf;
}

/* Prints s left-aligned in a column of width characters, then a space. */
static void column(FILE *out, const char *s, int width, int head)
{
	char buf[256], shorter[256];
	s = collapse_generics(shorter, sizeof(shorter), s, width);
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

static void task_header(FILE *out)
{
	fprintf(out, "%*s  %-*s %-*s %6s %9s %9s %9s %9s %6s  %s\n", TASK_W, "TASK", NAME_W,
		"NAME", SITE_W, "SPAWNED AT", "POLLS", "BUSY", "MAX POLL", "MEAN POLL", "IDLE",
		"WAKES", "STATE");
}

static void task_row(FILE *out, const struct task_stats *t)
{
	char id[TASK_ID_MAX], site[SITE_W * 4 + 32], b1[FMT_DURATION_MAX], b2[FMT_DURATION_MAX],
		b3[FMT_DURATION_MAX], b4[FMT_DURATION_MAX];

	if (t->spawn_file)
		snprintf(site, sizeof(site), "%s:%" PRIu32, basename_of(t->spawn_file), t->spawn_line);
	else
		snprintf(site, sizeof(site), "-");
	fprintf(out, "%*s  ", TASK_W, task_id_format(id, sizeof(id), t->tokio_id, t->seq, 0));
	/* a name given at spawn first, quoted as tokio-console's: "job-3" app::job */
	char named[NAME_W * 4 + 8];
	const char *name = t->name ? t->name : "(unknown)";
	if (t->label)
		snprintf(named, sizeof(named), "\"%s\" %s", t->label, name);
	int keep = t->label ? (int)strlen(t->label) + 3 : 12;   /* the quoted name stays whole */
	column(out, t->label ? named : name, NAME_W, keep < NAME_W - 8 ? keep : NAME_W - 8);
	column(out, site, SITE_W, 0);
	fprintf(out, "%6" PRIu64 " %9s %9s %9s %9s %6" PRIu64 "  %s\n", t->polls,
		dur(b1, t->busy_ns), dur(b2, t->max_poll_ns),
		t->polls ? dur(b3, t->mean_poll_ns) : "-", dur(b4, t->idle_ns), t->wakes,
		task_state__str(t->state));
}

/* Groups of folded tasks, when there are any:
 *
 * TASK GROUPS: 202841 finished tasks folded by name and spawn location, by busy time
 *   NAME                                     SPAWNED AT            TASKS  POLLS      BUSY  MAX POLL  WAKES
 *   bench::service::handler_3::{async_fn_... server.rs:41            512   4421  38.2 ms   19.9 us   1623
 * (only the 10000 busiest finished tasks are listed one by one: --max-tasks N
 * raises the limit, --max-tasks 0 lists every task)
 */
static void groups_text(FILE *out, const struct analysis *a)
{
	const struct summary *s = analysis__summary(a);
	const struct task_group *g;
	char b1[FMT_DURATION_MAX], b2[FMT_DURATION_MAX], site[SITE_W * 4 + 32];
	size_t n;

	if (!s->folded_tasks)
		return;
	g = analysis__groups(a, &n);
	fprintf(out, "\nTASK GROUPS: %" PRIu64 " %stask%s folded by name and spawn location, "
		"by busy time\n", s->folded_tasks, s->folded_live_tasks ? "" : "finished ",
		s->folded_tasks == 1 ? "" : "s");
	fprintf(out, "  %-*s %-*s %7s %8s %9s %9s %8s\n", NAME_W, "NAME", SITE_W, "SPAWNED AT",
		"TASKS", "POLLS", "BUSY", "MAX POLL", "WAKES");
	for (size_t i = 0; i < n; i++) {
		if (g[i].spawn_file)
			snprintf(site, sizeof(site), "%s:%" PRIu32, basename_of(g[i].spawn_file),
				 g[i].spawn_line);
		else
			snprintf(site, sizeof(site), "-");
		fputs("  ", out);
		column(out, g[i].name ? g[i].name : "(unknown)", NAME_W, 12);
		column(out, site, SITE_W, 0);
		fprintf(out, "%7" PRIu64 " %8" PRIu64 " %9s %9s %8" PRIu64 "\n", g[i].tasks,
			g[i].polls, dur(b1, g[i].busy_ns), dur(b2, g[i].max_poll_ns), g[i].wakes);
	}
	fprintf(out, "(only the %" PRIu64 " busiest finished tasks are listed one by one: "
		"--max-tasks N raises the limit, --max-tasks 0 lists every task)\n", s->max_tasks);
}

#define TOP_LONG_POLLS 10
#define TOP_EDGES 10
#define TOP_STALLS 20  /* stalled and starved tasks listed (JSON has them all) */
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
static void sched_text(FILE *out, const struct analysis *a)
{
	const struct summary *s = analysis__summary(a);
	const struct long_poll *lp;
	const struct stall *st;
	const struct starve *sv;
	const struct wake_edge *e;
	char b1[FMT_DURATION_MAX], b2[FMT_DURATION_MAX], b3[FMT_DURATION_MAX];
	size_t n;

	fprintf(out, "\nDISTRIBUTIONS (user tasks; |shape|: one character per power of two "
		"from the one shown)\n");
	dist_line(out, "poll duration", analysis__dist(a, DIST_POLL));
	dist_line(out, "sched delay", analysis__dist(a, DIST_SCHED));
	dist_line(out, "idle time", analysis__dist(a, DIST_IDLE));

	lp = analysis__long_polls(a, &n);
	fprintf(out, "\nLONG POLLS: %" PRIu64 " poll%s over %s", s->long_polls,
		s->long_polls == 1 ? "" : "s", dur(b1, s->long_poll_ns));
	if (n > TOP_LONG_POLLS)
		fprintf(out, ", the %d longest", TOP_LONG_POLLS);
	else if (n)
		fprintf(out, ", longest first");
	fputc('\n', out);
	if (n)
		fprintf(out, "%*s  %-*s %8s %10s %9s\n", TASK_W, "TASK", NAME_W, "NAME", "TID",
			"START", "DURATION");
	for (size_t i = 0; i < n && i < TOP_LONG_POLLS; i++) {
		id_column(out, a, lp[i].seq);
		column(out, task_name(a, lp[i].seq, lp[i].group), NAME_W, 12);
		snprintf(b2, sizeof(b2), "+%s", dur(b3, lp[i].start_ns));
		fprintf(out, "%8" PRIu32 " %10s %9s%s\n", lp[i].tid, b2,
			dur(b1, lp[i].duration_ns), lp[i].until_end ? "  (still running at the end)" : "");
	}

	st = analysis__stalled(a, &n);
	fprintf(out, "\nSTALLED: %zu task%s idle (last poll Pending, no wake) for over %s\n", n,
		n == 1 ? "" : "s", dur(b1, s->stall_ns));
	if (n)
		fprintf(out, "%*s  %-*s %10s %9s %6s  %s\n", TASK_W, "TASK", NAME_W, "NAME", "SINCE",
			"STALLED", "TIMES", "UNTIL");
	for (size_t i = 0; i < n && i < TOP_STALLS; i++) {
		id_column(out, a, st[i].seq);
		column(out, task_name(a, st[i].seq, st[i].group), NAME_W, 12);
		snprintf(b2, sizeof(b2), "+%s", dur(b3, st[i].since_ns));
		fprintf(out, "%10s %9s %6" PRIu64 "  %s\n", b2, dur(b1, st[i].stalled_ns), st[i].count,
			st[i].until_end ? "end of trace (still idle)" : "woken or dropped");
	}
	if (n > TOP_STALLS)
		fprintf(out, "  ... and %zu more (all in --format json)\n", n - TOP_STALLS);

	sv = analysis__starved(a, &n);
	fprintf(out, "\nSTARVED: %zu task%s runnable but not polled for over %s\n", n,
		n == 1 ? "" : "s", dur(b1, s->starve_ns));
	if (n)
		fprintf(out, "%*s  %-*s %9s %6s\n", TASK_W, "TASK", NAME_W, "NAME", "MAX WAIT",
			"TIMES");
	for (size_t i = 0; i < n && i < TOP_STALLS; i++) {
		id_column(out, a, sv[i].seq);
		column(out, task_name(a, sv[i].seq, sv[i].group), NAME_W, 12);
		fprintf(out, "%9s %6" PRIu64 "\n", dur(b1, sv[i].max_wait_ns), sv[i].count);
	}
	if (n > TOP_STALLS)
		fprintf(out, "  ... and %zu more (all in --format json)\n", n - TOP_STALLS);

	e = analysis__edges(a, &n);
	fprintf(out, "\nWAKE EDGES: %zu (waker -> woken)%s\n", n,
		n > TOP_EDGES ? ", the 10 with most wakes" : n ? ", most wakes first" : "");
	for (size_t i = 0; i < n && i < TOP_EDGES; i++) {
		char fb[4 * 60 + 8], tb[4 * 60 + 8], fid[TASK_ID_MAX + 1] = "", tid[TASK_ID_MAX + 1] = "";

		fit(fb, sizeof(fb), e[i].from_kind == WAKE_FROM_TASK
		    ? task_name(a, e[i].from_seq, e[i].from_group)
		    : wake_source__str(e[i].from_kind), 60, 20);
		fit(tb, sizeof(tb), task_name(a, e[i].to_seq, e[i].to_group), 60, 20);
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
}

#define TOP_FUTURE_FNS 20
#define TOP_PARKED 20
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
static void futures_text(FILE *out, const struct analysis *a, const struct futures *fu)
{
	const struct futures_summary *s = futures__summary(fu);
	const struct futures_fn *fn;
	const struct futures_parked *p;
	char b1[FMT_DURATION_MAX], b2[FMT_DURATION_MAX], b3[FMT_DURATION_MAX];
	char site[LOC_W * 4 + 32], name[FN_W * 4 + 8];
	size_t n;

	fn = futures__fns(fu, &n);
	fprintf(out, "\nFUTURES: %" PRIu64 " future poll%s in %zu function%s (record --futures); "
		"frames lost: %" PRIu64 " exits, %" PRIu64 " entries, %" PRIu64
		" exits without entry", s->frames, s->frames == 1 ? "" : "s", n, n == 1 ? "" : "s",
		s->exits_lost, s->entries_lost, s->unmatched_exits);
	if (s->bad || s->too_deep)
		fprintf(out, ", %" PRIu64 " of no future probe, %" PRIu64 " too deep", s->bad,
			s->too_deep);
	fputc('\n', out);
	if (n)
		fprintf(out, "  %-*s %-*s %6s %6s %7s %9s %9s %9s\n", FN_W, "FUNCTION", LOC_W,
			"DEFINED AT", "POLLS", "READY", "PENDING", "SELF", "TOTAL", "MAX POLL");
	for (size_t i = 0; i < n && i < TOP_FUTURE_FNS; i++) {
		int w = fit(name, sizeof(name), fn[i].name, FN_W, 16);

		if (fn[i].file && fn[i].line)
			snprintf(site, sizeof(site), "%s:%" PRIu32, basename_of(fn[i].file), fn[i].line);
		else
			snprintf(site, sizeof(site), "-");
		fprintf(out, "  %s%*s ", name, FN_W - w, "");
		column(out, site, LOC_W, 0);
		fprintf(out, "%6" PRIu64 " %6" PRIu64 " %7" PRIu64 " %9s %9s %9s\n", fn[i].polls,
			fn[i].ready, fn[i].pending, dur(b1, fn[i].self_ns), dur(b2, fn[i].total_ns),
			dur(b3, fn[i].max_ns));
	}
	if (n > TOP_FUTURE_FNS)
		fprintf(out, "  ... and %zu more (all in --format json)\n", n - TOP_FUTURE_FNS);

	p = futures__parked(fu, &n);
	fprintf(out, "\nPARKED AT: %" PRIu64 " task%s parked for good (last poll Pending, never "
		"polled again), longest waiting first, await chain outermost first\n",
		s->parked_tasks, s->parked_tasks == 1 ? "" : "s");
	if (n)
		fprintf(out, "%*s  %-*s %9s  %s\n", TASK_W, "TASK", NAME_W, "NAME", "WAITING",
			"UNTIL");
	for (size_t i = 0; i < n && i < TOP_PARKED; i++) {
		const struct task_stats *t = analysis__task(a, p[i].seq);

		id_column(out, a, p[i].seq);
		column(out, t && t->name ? t->name : p[i].name, NAME_W, 12);
		fprintf(out, "%9s  %s\n", dur(b1, p[i].waiting_ns),
			p[i].until_end ? "end of trace" : "dropped");
		if (!p[i].n_chain)
			fprintf(out, "%*s(no future frame returned Pending in its last poll)\n", CHAIN_INDENT, "");
		for (uint32_t j = 0; j < p[i].n_chain; j++) {
			const struct futures_link *l = &p[i].chain[j];
			char loc[4 * 200 + 8];
			int w = fit(name, sizeof(name), l->name, FN_W, 16);

			fprintf(out, "%*s%s%*s ", CHAIN_INDENT, "", name, FN_W - w, "");
			if (l->file || l->line) {
				fit(loc, sizeof(loc), l->file ? l->file : "?", 200, 60);
				fprintf(out, "%s %s:%" PRIu32, l->at_await ? "at" : "in", loc, l->line);
				if (!l->at_await)
					fputs(" (fn)", out);
			} else {
				fputs("-", out);
			}
			if (l->awaitee && j + 1 == p[i].n_chain) { /* the others: the next link */
				char shorter[256];

				fit(loc, sizeof(loc), collapse_generics(shorter, sizeof(shorter),
									l->awaitee, 60), 100, 40);
				fprintf(out, "  awaiting %s", loc);
			}
			fputc('\n', out);
		}
	}
	if (n > TOP_PARKED)
		fprintf(out, "  ... and %zu more (all in --format json)\n", n - TOP_PARKED);
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
 * RUNTIME WORKER TASKS: 2 (executor loops: other tasks were polled inside them)
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
		fprintf(out, "!!! WARNING: %s%" PRIu64 " events lost in the kernel (ring buffer full) "
			"and %" PRIu64 " missed by the recorder: the numbers below undercount !!!\n",
			opts && opts->truncated ? "at least " : "", lost, missed);
	if (opts && opts->truncated)
		fprintf(out, "!!! WARNING: the trace is truncated (no end record): it stops at its "
			"last event !!!\n");
	if (s->folded_live_tasks) /* (never freed: lost FREEs, detached tasks, ...) */
		fprintf(out, "!!! WARNING: %" PRIu64 " live tasks folded into TASK GROUPS: more than "
			"%" PRIu64 " tasks were live at once, the least recently active are summed "
			"(%" PRIu64 " later events of theirs not analysed); --max-live-tasks N follows "
			"more, 0 all (memory grows with them) !!!\n", s->folded_live_tasks,
			s->max_live_tasks, s->folded_events);

	if (as_meta_profile(meta)) {
		/* asyncscope profile: no probes, so nothing that needs polls */
		fprintf(out, "\nTASKS, WORKERS, POLL AND WAKE DISTRIBUTIONS, LONG POLLS, STALLED, "
			"STARVED, WAKE EDGES: not recorded in profile mode (no probes: polls, wakes "
			"and parks need asyncscope record); CPU samples and off-CPU time per task "
			"below\n");
		fprintf(out, "\nTOTALS\ntask ids seen %" PRIu64 "  polls not recorded in profile mode  "
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

	if (s->folded_tasks)
		fprintf(out, "\nTASKS: %zu of %" PRIu64 " tasks, by busy time (every live task%s and "
			"the %" PRIu64 " busiest finished ones; the others in TASK GROUPS)\n", n_user,
			s->user_tasks, s->folded_live_tasks ? " not folded" : "", s->max_tasks);
	else
		fprintf(out, "\nTASKS: %zu task%s, by busy time\n", n_user, n_user == 1 ? "" : "s");
	if (n_user) {
		task_header(out);
		for (size_t i = 0; i < n_user; i++)
			task_row(out, order[i]);
	}
	groups_text(out, a);
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

	sched_text(out, a);
	if (opts && opts->futures)
		futures_text(out, a, opts->futures);

	fprintf(out, "\nTOTALS\n");
	fprintf(out, "tasks %" PRIu64 " (%" PRIu64 " user, %" PRIu64 " runtime)  polls %" PRIu64
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
