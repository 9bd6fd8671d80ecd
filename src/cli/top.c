/* `asyncscope top -p PID`: a live, htop-like view of the target's tasks.
 * Records without a trace file, feeds a live model, redraws every second;
 * `q` (or Ctrl-C) detaches and leaves the target running untouched. */
#include <curses.h>
#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/live.h"
#include "analysis/task_stats.h"
#include "cli/commands.h"
#include "cli/record_opts.h"
#include "dump/dump.h"
#include "output/tui.h"
#include "pipeline/pipeline.h"
#include "record/recorder.h"
#include "util/clock.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

struct top {
	/* where the symbols came from, what is off without DWARF: said on
	 * stderr once the screen is gone (bounded) */
	char notes[4096];
	size_t n_notes;
	struct live *live;
	struct tui_state ui;
	struct as_trace_meta meta;   /* what the header shows */
	uint64_t interval_ns, last_tick;
	uint64_t stacks_every_ns, last_stacks;   /* async stacks from memory */
	uint64_t stacks_cost_ns;                 /* what the last read took */
	bool stacks_off;                         /* failed once (no debug info ...) */
	bool screen;                 /* curses started */
	size_t max_live;             /* --max-live-tasks, 0 none */
	int err;
};

/* A view on meta with the live-task limit. */
static struct live *view_new(struct top *t)
{
	struct live *l = live__new(&t->meta);

	if (l && live__set_max_live(l, t->max_live)) {
		live__free(l);
		l = NULL;
	}
	return l;
}

/* The recorder's meta carries the probe plan: task names come from it. */
static void on_start(void *ctx, const struct as_trace_meta *meta)
{
	struct top *t = ctx;

	t->meta.probes = meta->probes;
	t->meta.n_probes = meta->n_probes;
	t->meta.runtime = meta->runtime;
	t->meta.pid = meta->pid;
	t->ui.runtime = meta->runtime;
	/* before the first event: the view (and its task model, which copies
	 * the probes' root future names when made) made again with the plan */
	struct live *l = view_new(t);

	if (l) {
		live__free(t->live);
		t->live = l;
	}
}

/* Reads every live task's async stack from the target's memory (the dump
 * machinery, seeded with the tasks the view knows, no extra tracing) and
 * notes where each is parked; tasks not polled since the view started are
 * found through Tokio's task lists. */
static void refresh_stacks(struct top *t, uint64_t now)
{
	struct dump_result res;
	size_t n, k = 0;
	const struct live_task *lt = live__tasks(t->live, &n);
	uint64_t *headers = calloc(n ? n : 1, sizeof(*headers));
	char err[512];

	if (!headers)
		return;
	for (size_t i = 0; i < n; i++)
		if (!lt[i].worker && lt[i].state != LIVE_ST_DONE)
			headers[k++] = lt[i].header;
	struct dump_opts o = { .pid = (pid_t)t->meta.pid, .attempts = 2, .no_trace = true,
			       .headers = headers, .n_headers = k,
			       .probes = t->meta.probes, .n_probes = t->meta.n_probes };
	if (dump_run(&o, &res, err, sizeof(err))) {
		t->stacks_off = true;
		free(headers);
		return;
	}
	free(headers);
	for (size_t i = 0; i < res.n; i++) {
		const struct dump_task *d = &res.tasks[i];
		char parked[96] = "", stack[640] = "";
		size_t o2 = 0;
		/* the innermost .await in the program's own code (its files are
		 * relative to the build directory; dependencies' are absolute),
		 * else the innermost of all */
		for (size_t f = d->stack.n; f-- > 0 && !parked[0];) {
			const struct async_frame *fr = &d->stack.frames[f];
			if (fr->file && fr->line && fr->file[0] != '/')
				snprintf(parked, sizeof(parked), "%s:%u", fr->file, fr->line);
		}
		if (!parked[0] && d->stack.n) {
			const struct async_frame *in = &d->stack.frames[d->stack.n - 1];
			if (in->file && in->line)
				snprintf(parked, sizeof(parked), "%s:%u", in->file, in->line);
		}
		if (!parked[0] && d->stack.leaf)
			snprintf(parked, sizeof(parked), "%s", d->stack.leaf);
		for (size_t f = 0; f < d->stack.n && o2 + 1 < sizeof(stack); f++) {
			const struct async_frame *fr = &d->stack.frames[f];
			o2 += (size_t)snprintf(stack + o2, sizeof(stack) - o2, "%s at %s:%u\n",
					       fr->future ? fr->future : "?", fr->file ? fr->file : "?",
					       fr->line);
		}
		if (o2 + 1 < sizeof(stack) && (d->stack.leaf || d->note))
			snprintf(stack + o2, sizeof(stack) - o2, d->note ? "(%s)" : "awaiting %s",
				 d->note ? d->note : d->stack.leaf);
		if (live__note_stack(t->live, d->header, d->id, d->name, parked, stack, now))
			t->err = -ENOMEM;
		live__note_wakeup(t->live, d->header, d->wakes_at_ns, d->wakers_known, d->wakers);
	}
	dump_result__clear(&res);
}

/* Records through a live session read as a source: each event into the
 * live model; the session calls on_tick while it waits for the ring
 * buffer (keys, redraws, stack reads). Returns 0 or -errno with err. */
static int run_live(struct top *t, const struct recorder_opts *o, struct recorder_result *res,
		    char *err, size_t errlen)
{
	struct rec_session *rs = NULL;
	struct as_source src = { 0 };
	struct as_sink sink;
	struct pipeline_result pr;
	int n, ret;

	ret = rec_session__open(o, &rs, err, errlen);
	if (ret)
		return ret;
	sink = live__sink(t->live);   /* the one on_start() made, with the plan */
	rec_session__source(rs, &src);
	n = pipeline_run(&src, &sink, 1, NULL, &pr);
	if (n < 0 && pr.failed)
		t->err = n;           /* the live model: out of memory */
	else if (n < 0)
		snprintf(err, errlen, "%s", as_source__error(&src));
	rec_session__result(rs, res);
	as_source__free(&src);
	return n < 0 && !pr.failed ? n : 0;
}

static int on_tick(void *ctx, uint64_t now, uint64_t lost, uint64_t missed)
{
	struct top *t = ctx;
	bool redraw = false;
	int ch;

	if (!t->screen) {
		initscr();
		cbreak();
		noecho();
		keypad(stdscr, TRUE);
		nodelay(stdscr, TRUE);
		set_escdelay(25);
		curs_set(0);
		t->screen = true;
		t->last_tick = now;
		t->last_stacks = now - t->stacks_every_ns + 1000000000ull;   /* first read in 1 s */
		live__tick(t->live, now);
		redraw = true;
	}
	while ((ch = getch()) != ERR) {
		if (tui_key(&t->ui, ch, t->live))
			return 1;
		redraw = true;
	}
	if (!t->stacks_off && t->meta.pid && now - t->last_stacks >= t->stacks_every_ns) {
		uint64_t t0 = now;
		refresh_stacks(t, now);
		t->last_stacks = clock_ns(CLOCK_MONOTONIC);
		t->stacks_cost_ns = t->last_stacks - t0;
		/* keep reading stacks under 5% of the time */
		if (t->stacks_every_ns < 20 * t->stacks_cost_ns)
			t->stacks_every_ns = 20 * t->stacks_cost_ns;
		redraw = true;
	}
	if (now - t->last_tick >= t->interval_ns) {
		live__set_lost(t->live, lost, missed);
		live__tick(t->live, now);
		t->last_tick = now;
		redraw = true;
	}
	if (redraw)
		tui_draw(&t->ui, t->live, &t->meta);
	return t->err ? 1 : 0;
}

enum { TOP_INTERVAL = 1, TOP_MAX_LIVE };

static const struct cli_opt top_opts[] = {
	{ "interval", 'i', CLI_DURATION, TOP_INTERVAL, NULL,
	  "redraw the figures every DURATION, from 100ms to 60s (default 1s)",
	  100000000ull, 60000000000ull },
	{ "max-live-tasks", 0, CLI_COUNT, TOP_MAX_LIVE, NULL,
	  "tasks followed at once (default 20000, 0 no limit): past it the least\n"
	  "recently active live tasks are dropped from the view, counted in its header" },
	{ 0 },
};

static const struct cli_opt *const tables[] = { record_target_opts, top_opts, cli_color_opts,
						  cli_wide_opts, NULL };

const struct cli_command top_command = {
	.name = "top",
	.summary = "A live, htop-like view of the tasks of a running or launched program, what is\n"
		   "wrong first (long polls, starved and self-waking tasks, saturated workers, lost\n"
		   "events); q quits and leaves an attached target running. A launched command's\n"
		   "output is discarded (attach with -p to keep it).",
	.operands = RECORD_OPERANDS,
	.tables = tables,
	.notes = "keys: q quit, s/S sort, t tree, / filter, enter detail, f findings (all, with\n"
		 "what to do), j/k or arrows move",
	.stop_at_operand = true,
};

struct top_args {
	struct record_args rec;
	struct top *t;
};

static int on_opt(void *ctx, const struct cli_opt *opt, const struct cli_val *v)
{
	struct top_args *ta = ctx;

	if (opt->key == TOP_INTERVAL) {
		ta->t->interval_ns = v->num;
		return 0;
	}
	if (opt->key == TOP_MAX_LIVE) {
		if (v->num > SIZE_MAX - 1) {
			cli_error("--max-live-tasks takes a number up to %zu, not '%s'", SIZE_MAX - 1,
				  v->str);
			return 2;
		}
		ta->t->max_live = (size_t)v->num;
		return 0;
	}
	return record_args__set(&ta->rec, opt, v);
}

static void on_notice(void *ctx, enum rec_notice_level level, const char *msg)
{
	struct top *t = ctx;

	if (level != REC_NOTICE_INFO && level != REC_NOTICE_WARNING)
		return;
	int n = snprintf(t->notes + t->n_notes, sizeof(t->notes) - t->n_notes, "asyncscope: %s%s\n",
			 level == REC_NOTICE_WARNING ? "warning: " : "", msg);
	if (n > 0 && t->n_notes + (size_t)n < sizeof(t->notes))
		t->n_notes += (size_t)n;
	else
		t->notes[t->n_notes] = '\0';   /* what did not fit is not shown */
}

int cmd_top(int argc, char **argv)
{
	struct top t = { .interval_ns = 1000000000ull, .stacks_every_ns = 3000000000ull,
			 .max_live = ANALYSIS_MAX_LIVE_TASKS };
	struct recorder_opts o = { .stop = &stop_requested, .quiet = true, .child_stdio = "/dev/null",
				   .on_start = on_start, .on_tick = on_tick, .ctx = &t,
				   .notice = on_notice, .notice_ctx = &t };
	struct top_args ta = { .rec = { .o = o }, .t = &t };
	struct recorder_result res = { 0 };
	char err[1024] = "", exe[64], target[4096];
	int first, c = cli_parse(&top_command, argc, argv, on_opt, &ta, &first);

	if (c < 0 && record_args__finish(&ta.rec, &top_command, argc, argv, first))
		c = 2;
	o = ta.rec.o;
	record_args__free(&ta.rec);   /* top takes no repeatable option */
	if (c >= 0)
		return c;
	if (!isatty(STDOUT_FILENO)) {
		cli_error("top needs a terminal: use 'asyncscope record' to record to a file");
		return 2;
	}
	if (o.pid > 0) {
		snprintf(exe, sizeof(exe), "/proc/%d/exe", o.pid);
		ssize_t n = readlink(exe, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
	} else {
		snprintf(target, sizeof(target), "%s", o.argv[0]);
	}
	t.meta.pid = (uint32_t)o.pid;
	t.meta.target = target;
	t.meta.runtime = (char *)"tokio";
	t.live = view_new(&t);
	if (!t.live) {
		cli_error("out of memory");
		return 1;
	}
	setlocale(LC_ALL, "");
	t.ui.color = cli_color(stdout);
	t.ui.wide = cli_view()->wide;
	struct sigaction sa = { .sa_handler = on_signal };
	static const int stops[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE };
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
		sigaction(stops[i], &sa, NULL);

	int ret = run_live(&t, &o, &res, err, sizeof(err));
	if (t.screen)
		endwin();
	fputs(t.notes, stderr);
	/* what the screen showed: the tasks the live view followed (those
	 * found in memory at the start too), not only the ones spawned since */
	const struct live_summary *ls = t.live ? live__summary(t.live) : NULL;
	uint64_t seen = ls ? ls->tasks_live + ls->tasks_done + ls->tasks_folded : res.tasks;
	live__free(t.live);
	if (ret) {
		cli_error("%s", err);
		return 1;
	}
	if (t.err) {
		cli_error("out of memory: stopped");
		return 1;
	}
	fprintf(stderr, "asyncscope: top saw %llu events, %llu tasks, %llu lost%s\n",
		(unsigned long long)res.events, (unsigned long long)(seen > res.tasks ? seen : res.tasks),
		(unsigned long long)res.lost, o.pid > 0 ? "; the target was left running" : "");
	return 0;
}
