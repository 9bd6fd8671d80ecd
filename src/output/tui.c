/* The `top` screen with ncurses. Works in 80x24 and larger terminals.
 *
 *  asyncscope top  pid 4242 chain (tokio)  12.3 s  5.2k ev/s  lost 0  sort busy
 *  FINDINGS 1 error, 1 warning (f: all, with what to do)
 *  error   #3 app::blocker held its worker 200.0 ms in one poll
 *  warning #5 app::waiter waited up to 45.0 ms to be polled after a wake (3 times over 10.0 ms)
 *  tokio-runtime-w 4243 [#####.......] busy  41%  parked  57%
 *  TASK STATE    POLL/S BUSY% MAX POLL IDLE FOR WAKE/S NAME
 *    #5 idle         101   0.3  22.1 us   3.1 ms    100 chain::producer
 *    #4 idle         101   0.2   9.2 us   3.1 ms    100  chain::relay
 *  q quit  s sort  t tree  / filter  enter detail  j/k move
 *
 * A task is named as in every output (util/task_id.h): #ID, else ~SEQ, in a
 * column as wide as the seq column it replaces (wider ids push the row). */
#include "output/tui.h"

#include <ctype.h>
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/findings.h"
#include "util/fmt.h"
#include "util/rust_name.h"
#include "util/task_id.h"

#define TREE_MAX 4000   /* beyond this many rows the tree is drawn flat */
#define DETAIL_H 13     /* lines of the detail pane */
#define FINDINGS_LINES 3 /* findings shown until f opens them all */

enum { PAIR_ERROR = 1, PAIR_WARNING, PAIR_INFO, PAIR_ADVICE };

const char *tui_sort__str(enum tui_sort s)
{
	static const char *const names[TUI_SORT__MAX] = { "busy", "polls", "wakes", "idle", "seq" };
	return s < TUI_SORT__MAX ? names[s] : "?";
}

static bool contains_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	if (!n)
		return true;
	for (; hay && *hay; hay++)
		if (!strncasecmp(hay, needle, n))
			return true;
	return false;
}

static uint64_t idle_for(const struct live_task *t, uint64_t now)
{
	return t->state == LIVE_ST_IDLE && now > t->since ? now - t->since : 0;
}

static const struct live_summary *g_sum;   /* for the comparator (qsort has no context) */
static enum tui_sort g_sort;
static const struct live_task *g_tasks;

static int cmp_rows(const void *a, const void *b)
{
	const struct live_task *x = &g_tasks[*(const size_t *)a], *y = &g_tasks[*(const size_t *)b];
	double kx = 0, ky = 0;

	switch (g_sort) {
	case TUI_SORT_BUSY: kx = x->busy_pct; ky = y->busy_pct;
		if (kx == ky) { kx = (double)x->busy_ns; ky = (double)y->busy_ns; }
		break;
	case TUI_SORT_POLLS: kx = x->polls_per_s; ky = y->polls_per_s;
		if (kx == ky) { kx = (double)x->polls; ky = (double)y->polls; }
		break;
	case TUI_SORT_WAKES: kx = x->wakes_per_s; ky = y->wakes_per_s;
		if (kx == ky) { kx = (double)x->wakes; ky = (double)y->wakes; }
		break;
	case TUI_SORT_IDLE: kx = (double)idle_for(x, g_sum->now_ns);
		ky = (double)idle_for(y, g_sum->now_ns);
		break;
	default: break;
	}
	if (kx != ky)
		return kx > ky ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Indexes of the rows to show, in display order, with their tree depth.
 * Worker tasks (the runtime's loops) are left out: the WORKERS lines show
 * them. Caller frees *rows and *depth. */
static size_t visible_rows(const struct tui_state *st, const struct live *l,
			   size_t **rows, int **depth)
{
	size_t n, k = 0;
	const struct live_task *t = live__tasks(l, &n);
	size_t *r = calloc(n ? n : 1, sizeof(*r)), *out = calloc(n ? n : 1, sizeof(*out));
	int *d = calloc(n ? n : 1, sizeof(*d));

	*rows = NULL;
	*depth = NULL;
	if (!r || !out || !d) {
		free(r);
		free(out);
		free(d);
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		if (!t[i].worker && (contains_ci(live_task__name(&t[i]), st->filter) ||
				     contains_ci(t[i].spawn, st->filter)))
			r[k++] = i;
	g_sum = live__summary(l);
	g_sort = st->sort;
	g_tasks = t;
	qsort(r, k, sizeof(*r), cmp_rows);
	if (!st->tree || k > TREE_MAX) {
		memcpy(out, r, k * sizeof(*r));
		free(r);
		*rows = out;
		*depth = d;
		return k;
	}
	/* tree: roots (parent not shown) in sort order, each followed by its
	 * descendants depth first, siblings in sort order */
	size_t o = 0;
	size_t *stack = calloc(k ? k : 1, sizeof(*stack));
	int *sdepth = calloc(k ? k : 1, sizeof(*sdepth));
	bool *done = calloc(k ? k : 1, sizeof(*done));
	if (!stack || !sdepth || !done) {
		memcpy(out, r, k * sizeof(*r));
		o = k;
		goto tree_done;
	}
	for (size_t i = 0; i < k; i++) {
		bool parent_shown = false;
		for (size_t j = 0; j < k && t[r[i]].parent; j++)
			if (t[r[j]].seq == t[r[i]].parent)
				parent_shown = true;
		if (parent_shown || done[i])
			continue;
		size_t sp = 0;
		stack[sp] = i;
		sdepth[sp++] = 0;
		while (sp) {
			size_t cur = stack[--sp];
			int cd = sdepth[sp];
			if (done[cur])
				continue;
			done[cur] = true;
			out[o] = r[cur];
			d[o++] = cd;
			/* push children in reverse sort order so they pop in order */
			for (size_t j = k; j-- > 0;)
				if (!done[j] && t[r[j]].parent == t[r[cur]].seq && sp < k) {
					stack[sp] = j;
					sdepth[sp++] = cd + 1;
				}
		}
	}
	for (size_t i = 0; i < k; i++)   /* cycles or leftovers: flat at the end */
		if (!done[i])
			out[o++] = r[i];
tree_done:
	free(stack);
	free(sdepth);
	free(done);
	free(r);
	*rows = out;
	*depth = d;
	return o;
}

static const char *dur(char *buf, uint64_t ns)
{
	return fmt_duration(buf, FMT_DURATION_MAX, ns);
}

static void draw_bar(int y, int x, int width, double busy, double parked)
{
	int b = (int)(busy * width / 100.0 + 0.5), p = (int)(parked * width / 100.0 + 0.5);

	if (b > width)
		b = width;
	if (p > width - b)
		p = width - b;
	mvaddch(y, x, '[');
	for (int i = 0; i < width; i++)
		addch(i < b ? '#' : i < b + p ? '.' : ' ');
	addch(']');
}

/* parent_id: the runtime id of t's parent task (t->parent), 0 unknown. */
static void draw_detail(int y0, const struct live_task *t, uint64_t parent_id,
			const struct live_summary *s)
{
	char a[FMT_DURATION_MAX], b[FMT_DURATION_MAX], c[FMT_DURATION_MAX], d[FMT_DURATION_MAX];
	char id[TASK_ID_MAX];
	int y = y0;

	mvhline(y++, 0, '-', COLS);
	attron(A_BOLD);
	char *name = rust_name_display(live_task__name(t) ? live_task__name(t) : "(unknown)",
				       COLS - 24, false);
	mvprintw(y++, 0, "task %s  %s", task_id_format(id, sizeof(id), t->tokio_id, t->seq, 0),
		 name ? name : "(unknown)");
	free(name);
	attroff(A_BOLD);
	mvprintw(y++, 0, "state %s for %s   spawned at %s",
		 live_state__str(t->state), dur(a, s->now_ns > t->since ? s->now_ns - t->since : 0),
		 t->spawn[0] ? t->spawn : "unknown");
	if (t->parent)
		printw(" by task %s", task_id_format(id, sizeof(id), parent_id, t->parent, 0));
	mvprintw(y++, 0, "polls %llu   busy %s   max poll %s   wakes %llu",
		 (unsigned long long)t->polls, dur(a, t->busy_ns), dur(b, t->max_poll_ns),
		 (unsigned long long)t->wakes);
	mvprintw(y++, 0, "poll time    p50 %-9s p90 %-9s p99 %-9s max %s",
		 dur(a, hist__quantile(&t->poll_hist, 0.5)), dur(b, hist__quantile(&t->poll_hist, 0.9)),
		 dur(c, hist__quantile(&t->poll_hist, 0.99)), dur(d, t->poll_hist.max));
	mvprintw(y++, 0, "sched delay  p50 %-9s p90 %-9s p99 %-9s max %s",
		 dur(a, hist__quantile(&t->sched_hist, 0.5)), dur(b, hist__quantile(&t->sched_hist, 0.9)),
		 dur(c, hist__quantile(&t->sched_hist, 0.99)), dur(d, t->sched_hist.max));
	mvprintw(y++, 0, "woken by     task %llu  self %llu  io %llu  timer %llu  runtime %llu  thread %llu",
		 (unsigned long long)t->waker_counts[LIVE_WAKER_TASK],
		 (unsigned long long)t->waker_counts[LIVE_WAKER_SELF],
		 (unsigned long long)t->waker_counts[LIVE_WAKER_IO],
		 (unsigned long long)t->waker_counts[LIVE_WAKER_TIMER],
		 (unsigned long long)t->waker_counts[LIVE_WAKER_RUNTIME],
		 (unsigned long long)t->waker_counts[LIVE_WAKER_THREAD]);
	/* the async stack read from its memory, innermost last */
	mvprintw(y++, 0, "async stack  %s", t->stack[0] ? "" : "(not read yet: idle tasks are read every few seconds)");
	for (const char *p = t->stack; *p && y < y0 + DETAIL_H; y++) {
		const char *nl = strchr(p, '\n');
		int len = nl ? (int)(nl - p) : (int)strlen(p);
		mvprintw(y, 2, "%.*s", len < COLS - 2 ? len : COLS - 2, p);
		p += len + (nl ? 1 : 0);
	}
}

static void colors_init(struct tui_state *st)
{
	if (st->colors_ready || !st->color || !has_colors())
		return;
	start_color();
	use_default_colors();
	init_pair(PAIR_ERROR, COLOR_RED, -1);
	init_pair(PAIR_WARNING, COLOR_YELLOW, -1);
	init_pair(PAIR_INFO, COLOR_CYAN, -1);
	init_pair(PAIR_ADVICE, COLOR_GREEN, -1);
	st->colors_ready = true;
}

static void attr_pair(const struct tui_state *st, int pair, bool on)
{
	if (!st->colors_ready)
		return;
	if (on)
		attron(COLOR_PAIR(pair) | A_BOLD);
	else
		attroff(COLOR_PAIR(pair) | A_BOLD);
}

/* Writes s from (y, x) to the end of the line at most. */
static void line_text(int y, int x, const char *s)
{
	if (x < COLS)
		mvaddnstr(y, x, s, COLS - x);
}

/* Merges the view's findings now into st->recent: each kept (kind, task or
 * thread) updated, new ones added (the oldest, least severe going when
 * full), those unseen for TUI_FINDINGS_KEEP_NS dropped. */
static void remember(struct tui_state *st, const struct findings *f, uint64_t now)
{
	size_t n;
	const struct finding *x = findings__list(f, &n);

	for (int i = 0; i < st->n_recent; i++)
		st->recent[i].now = false;
	for (size_t i = 0; i < n; i++) {
		struct tui_finding *r = NULL;

		for (int k = 0; k < st->n_recent && !r; k++)
			if (!strcmp(st->recent[k].kind, x[i].kind) && st->recent[k].seq == x[i].task_seq &&
			    st->recent[k].tid == x[i].tid)
				r = &st->recent[k];
		if (!r && st->n_recent < TUI_FINDINGS_MAX)
			r = &st->recent[st->n_recent++];
		for (int k = 0; !r && k < st->n_recent; k++)
			if (!st->recent[k].now && st->recent[k].severity >= (int)x[i].severity &&
			    (!r || st->recent[k].seen_ns < r->seen_ns))
				r = &st->recent[k];
		if (!r)
			continue;
		snprintf(r->kind, sizeof(r->kind), "%s", x[i].kind);
		r->seq = x[i].task_seq;
		r->tid = x[i].tid;
		r->severity = (int)x[i].severity;
		snprintf(r->title, sizeof(r->title), "%s", x[i].title);
		snprintf(r->advice, sizeof(r->advice), "%s", x[i].advice);
		r->seen_ns = now;
		r->now = true;
	}
	for (int i = 0; i < st->n_recent;)
		if (!st->recent[i].now && now - st->recent[i].seen_ns > TUI_FINDINGS_KEEP_NS)
			st->recent[i] = st->recent[--st->n_recent];
		else
			i++;
}

static int by_recent(const void *a, const void *b)
{
	const struct tui_finding *x = a, *y = b;

	if (x->severity != y->severity)
		return x->severity < y->severity ? -1 : 1;
	if (x->now != y->now)
		return x->now ? -1 : 1;
	return x->seen_ns > y->seen_ns ? -1 : x->seen_ns < y->seen_ns;
}

/* The findings of the view (analysis/findings.h) and those seen in the
 * last minute, from line y: a heading, then one line per finding
 * (FINDINGS_LINES of them, or with f all that fit in half the screen, each
 * with its advice); one no longer in the view says how long ago it was.
 * Returns the next line. */
static int draw_findings(struct tui_state *st, const struct live *l, int y)
{
	struct findings *f = findings__new_live(l, &(struct findings_live_opts){
		.runtime = st->runtime, .wide = st->wide });
	uint64_t now = live__summary(l)->now_ns;
	size_t counts[FINDING__MAX] = { 0 };
	int room = st->findings_all ? (LINES - y) / 2 : FINDINGS_LINES, shown = 0;
	char d[FMT_DURATION_MAX];

	if (f)
		remember(st, f, now);
	findings__free(f);
	if (!st->n_recent)
		return y;
	qsort(st->recent, (size_t)st->n_recent, sizeof(st->recent[0]), by_recent);
	for (int i = 0; i < st->n_recent; i++)
		counts[st->recent[i].severity]++;
	attron(A_BOLD);
	mvprintw(y, 0, "FINDINGS");
	attroff(A_BOLD);
	for (int s = FINDING_ERROR; s < FINDING__MAX; s++) {
		if (!counts[s])
			continue;
		printw(" ");
		attr_pair(st, PAIR_ERROR + s, true);
		printw("%zu %s%s", counts[s], finding_severity__str((enum finding_severity)s),
		       counts[s] == 1 || s == FINDING_INFO ? "" : "s");
		attr_pair(st, PAIR_ERROR + s, false);
	}
	printw("  (f: %s)", st->findings_all ? "fewer" : "all, with what to do");
	y++;
	for (int i = 0; i < st->n_recent && room > 0; i++, shown++) {
		const struct tui_finding *x = &st->recent[i];

		attr_pair(st, PAIR_ERROR + x->severity, true);
		mvprintw(y, 0, "%-7s", finding_severity__str((enum finding_severity)x->severity));
		attr_pair(st, PAIR_ERROR + x->severity, false);
		line_text(y, 8, x->title);
		if (!x->now)
			printw("  (%s ago)", fmt_duration(d, sizeof(d), now - x->seen_ns));
		y++;
		room--;
		if (st->findings_all && room > 0) {
			attr_pair(st, PAIR_ADVICE, true);
			mvprintw(y, 8, "-> ");
			line_text(y++, 11, x->advice);
			attr_pair(st, PAIR_ADVICE, false);
			room--;
		}
	}
	if (shown < st->n_recent)
		mvprintw(y++, 8, "... %d more (f)", st->n_recent - shown);
	return y;
}

void tui_draw(struct tui_state *st, const struct live *l, const struct as_trace_meta *meta)
{
	const struct live_summary *s = live__summary(l);
	size_t nw, n_rows, n_tasks;
	const struct live_worker *w = live__workers(l, &nw);
	const struct live_task *t = live__tasks(l, &n_tasks);
	size_t *rows;
	int *depth;
	char a[FMT_DURATION_MAX], b[FMT_DURATION_MAX];
	int y = 0;

	colors_init(st);
	/* repaint everything: the target may write to the same terminal */
	clearok(stdscr, TRUE);
	erase();
	const char *target = meta && meta->target ? meta->target : "?";
	const char *base = strrchr(target, '/');
	attron(A_REVERSE);
	mvprintw(y, 0, " %s %u (%s) %s  %llu ev/s  lost %llu  sort %s%s%s",
		 base ? base + 1 : target, meta ? meta->pid : 0, meta && meta->runtime ? meta->runtime : "?",
		 dur(a, s->now_ns > s->first_ns ? s->now_ns - s->first_ns : 0),
		 (unsigned long long)s->events_per_s, (unsigned long long)s->lost,
		 tui_sort__str(st->sort), st->tree ? " tree" : "",
		 st->filter[0] || st->editing ? "  filter " : "");
	if (st->filter[0] || st->editing)
		printw("%s%s", st->filter, st->editing ? "_" : "");
	for (int x = getcurx(stdscr); x < COLS && getcury(stdscr) == y; x++)
		addch(' ');
	attroff(A_REVERSE);
	y++;
	if (s->lost || s->missed) {
		attron(A_BOLD);
		mvprintw(y++, 0, "!! %llu events lost, %llu missed: rates undercount",
			 (unsigned long long)s->lost, (unsigned long long)s->missed);
		attroff(A_BOLD);
	}
	if (s->tasks_folded) {
		attron(A_BOLD);
		mvprintw(y++, 0, "!! %llu live tasks dropped: more than %llu were live at once "
			 "(never freed?); top --max-live-tasks N follows more, 0 all",
			 (unsigned long long)s->tasks_folded, (unsigned long long)s->max_live);
		attroff(A_BOLD);
	}
	y = draw_findings(st, l, y);
	int shown_workers = 0;
	for (size_t i = 0; i < nw && shown_workers < 8; i++) {
		if (!w[i].polled)
			continue;
		mvprintw(y, 0, "%-15.15s %6u ", w[i].name[0] ? w[i].name : "?", w[i].tid);
		draw_bar(y, 23, COLS >= 100 ? 40 : 20, w[i].busy_pct, w[i].parked_pct);
		printw(" busy %3.0f%%  parked %3.0f%%", w[i].busy_pct, w[i].parked_pct);
		y++;
		shown_workers++;
	}
	attron(A_BOLD);
	mvprintw(y++, 0, "%4s %-8s %6s %5s %8s %8s %6s %s", "TASK", "STATE", "POLL/S", "BUSY%",
		 "MAX POLL", "IDLE FOR", "WAKE/S", "NAME");
	attroff(A_BOLD);

	n_rows = visible_rows(st, l, &rows, &depth);
	int bottom = LINES - 1 - (st->detail ? DETAIL_H : 0);
	int space = bottom - y;
	int sel = 0;
	for (size_t i = 0; i < n_rows; i++)
		if (t[rows[i]].seq == st->selected)
			sel = (int)i;
	if (!st->selected && n_rows)
		st->selected = t[rows[0]].seq;
	if (sel < st->top_row)
		st->top_row = sel;
	if (space > 0 && sel >= st->top_row + space)
		st->top_row = sel - space + 1;
	for (int i = st->top_row; i < (int)n_rows && y < bottom; i++, y++) {
		const struct live_task *r = &t[rows[i]];
		char idle[FMT_DURATION_MAX + 4];
		if (r->state == LIVE_ST_IDLE && r->idle_exact) {
			dur(idle, idle_for(r, s->now_ns));
		} else if (r->state == LIVE_ST_IDLE) {
			/* not polled since the view began: at least that long */
			char d[FMT_DURATION_MAX];
			snprintf(idle, sizeof(idle), ">%s", dur(d, idle_for(r, s->now_ns)));
		} else
			snprintf(idle, sizeof(idle), "%s", r->state == LIVE_ST_RUNNING ? "running" :
				 r->state == LIVE_ST_DONE ? "done" : "-");
		if (r->seq == st->selected)
			attron(A_REVERSE);
		char id[TASK_ID_MAX];

		mvprintw(y, 0, "%4s %-8s %6.0f %5.1f %8s %8s %6.0f %*s",
			 task_id_format(id, sizeof(id), r->tokio_id, r->seq, 0),
			 live_state__str(r->state), r->polls_per_s,
			 r->busy_pct, dur(b, r->max_poll_ns), idle, r->wakes_per_s,
			 depth[i] > 8 ? 8 : depth[i], "");
		/* the name gets what is left of the line, its end kept */
		/* name, then where an idle task is parked; a name that does not
		 * fit keeps its end, the location is shown whole */
		const char *name = live_task__name(r) ? live_task__name(r) : "(unknown)";
		char where[112] = "";
		size_t at_len = 0;   /* of where, the " @ file:line" part */
		int room = COLS - getcurx(stdscr);
		if (r->parked[0] && r->state == LIVE_ST_IDLE) {
			const char *p = r->parked;
			if ((int)strlen(name) + 3 + (int)strlen(p) > room && strrchr(p, '/'))
				p = strrchr(p, '/') + 1;
			snprintf(where, sizeof(where), " @ %s", p);
			at_len = strlen(where);
			if (r->wakers_known && !r->wakers) {
				/* nothing holds a waker of it: it hangs for good */
				size_t wl = strlen(where);
				snprintf(where + wl, sizeof(where) - wl, ", no waker left");
			} else if (r->wakes_at) {
				/* a timer's deadline, on the events' clock */
				char d[FMT_DURATION_MAX];
				size_t wl = strlen(where);
				if (r->wakes_at > s->now_ns)
					snprintf(where + wl, sizeof(where) - wl, ", wakes in %s",
						 dur(d, r->wakes_at - s->now_ns));
				else
					snprintf(where + wl, sizeof(where) - wl, ", timer due");
			}
		}
		int name_room = room - (int)strlen(where);
		if (name_room < 8 && at_len) {
			/* the timer's note goes first, the location stays */
			where[at_len] = '\0';
			name_room = room - (int)at_len;
		}
		if (name_room < 8) {
			name_room = room;
			where[0] = '\0';
		}
		/* too long: shortened from the left as every output does
		 * ("...::main::{async_block#0}"); if its leaf is still too wide
		 * for the screen, its end is what stays */
		char *shown = rust_name_display(name, name_room, st->wide);
		const char *nm = shown ? shown : name;
		int nw = rust_name_width(nm);
		if (nw > name_room && !strncmp(nm, "...::", 5) && nw - 3 <= name_room) {
			/* tighter still: ".." for the dropped segments */
			addstr("..");
			addstr(nm + 5);
		} else if (nw > name_room && !strncmp(nm, "...::", 5) && nw - 5 <= name_room) {
			addstr(nm + 5);   /* the leaf alone, as the screen has room for */
		} else if (nw > name_room && name_room > 3) {
			if (!strncmp(nm, "...::", 5)) {
				nm += 5;
				nw -= 5;
			}
			const char *p = nm;
			for (int skip = nw - (name_room - 2); *p && skip > 0; p++)
				skip -= ((unsigned char)p[1] & 0xc0) != 0x80;
			addstr("..");
			addstr(p);
		} else if (name_room > 0) {
			addnstr(nm, name_room);
		}
		free(shown);
		if (where[0])
			addstr(where);
		for (int x = getcurx(stdscr); x < COLS && getcury(stdscr) == y; x++)
			addch(' ');
		if (r->seq == st->selected)
			attroff(A_REVERSE);
	}
	if (!n_rows)
		mvprintw(y, 0, "  (no tasks%s)", st->filter[0] ? " match the filter" : " seen yet");
	if (st->detail) {
		for (size_t i = 0; i < n_rows; i++) {
			const struct live_task *sel_t = &t[rows[i]];
			uint64_t parent_id = 0;

			if (sel_t->seq != st->selected)
				continue;
			for (size_t j = 0; sel_t->parent && j < n_tasks; j++)
				if (t[j].seq == sel_t->parent)
					parent_id = t[j].tokio_id;
			draw_detail(LINES - 1 - DETAIL_H, sel_t, parent_id, s);
		}
	}
	attron(A_REVERSE);
	mvprintw(LINES - 1, 0, " q quit  s sort  t tree  / filter  enter detail  f findings  j/k move  %zu tasks (%llu live) ",
		 n_rows, (unsigned long long)s->tasks_live);
	for (int x = getcurx(stdscr); x < COLS && getcury(stdscr) == LINES - 1; x++)
		addch(' ');
	attroff(A_REVERSE);
	free(rows);
	free(depth);
	refresh();
}

int tui_key(struct tui_state *st, int ch, const struct live *l)
{
	if (st->editing) {
		size_t n = strlen(st->filter);
		if (ch == '\n' || ch == KEY_ENTER) {
			st->editing = false;
		} else if (ch == 27) {             /* Esc: clear */
			st->editing = false;
			st->filter[0] = '\0';
		} else if ((ch == KEY_BACKSPACE || ch == 127 || ch == 8) && n) {
			st->filter[n - 1] = '\0';
		} else if (isprint(ch) && n + 1 < sizeof(st->filter)) {
			st->filter[n] = (char)ch;
			st->filter[n + 1] = '\0';
		}
		st->top_row = 0;
		st->selected = 0;
		return 0;
	}
	size_t *rows, n_rows, n_tasks;
	int *depth, sel = 0;
	const struct live_task *t = live__tasks(l, &n_tasks);

	switch (ch) {
	case 'q': case 'Q':
		return 1;
	case 's':
		st->sort = (enum tui_sort)((st->sort + 1) % TUI_SORT__MAX);
		return 0;
	case 'S':
		st->sort = (enum tui_sort)((st->sort + TUI_SORT__MAX - 1) % TUI_SORT__MAX);
		return 0;
	case 't':
		st->tree = !st->tree;
		return 0;
	case 'f':
		st->findings_all = !st->findings_all;
		return 0;
	case '/':
		st->editing = true;
		return 0;
	case '\n': case KEY_ENTER: case 'd':
		st->detail = !st->detail;
		return 0;
	case 27:
		st->detail = false;
		return 0;
	case 'j': case KEY_DOWN: case 'k': case KEY_UP: case KEY_NPAGE: case KEY_PPAGE:
		n_rows = visible_rows(st, l, &rows, &depth);
		for (size_t i = 0; i < n_rows; i++)
			if (t[rows[i]].seq == st->selected)
				sel = (int)i;
		if (ch == 'j' || ch == KEY_DOWN)
			sel++;
		else if (ch == 'k' || ch == KEY_UP)
			sel--;
		else if (ch == KEY_NPAGE)
			sel += LINES / 2;
		else
			sel -= LINES / 2;
		if (sel >= (int)n_rows)
			sel = (int)n_rows - 1;
		if (sel < 0)
			sel = 0;
		if (n_rows)
			st->selected = t[rows[sel]].seq;
		free(rows);
		free(depth);
		return 0;
	default:
		return 0;
	}
}
