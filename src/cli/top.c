/* `asyncscope top -p PID`: a live, htop-like view of the target's tasks.
 * Records without a trace file, feeds a live model, redraws every second;
 * `q` (or Ctrl-C) detaches and leaves the target running untouched. */
#include <curses.h>
#include <errno.h>
#include <getopt.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/live.h"
#include "cli/commands.h"
#include "output/tui.h"
#include "record/recorder.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

struct top {
	struct live *live;
	struct tui_state ui;
	struct as_trace_meta meta;   /* what the header shows */
	uint64_t interval_ns, last_tick;
	bool screen;                 /* curses started */
	int err;
};

/* The recorder's meta carries the probe plan: task names come from it. */
static void on_start(void *ctx, const struct as_trace_meta *meta)
{
	struct top *t = ctx;

	t->meta.probes = meta->probes;
	t->meta.n_probes = meta->n_probes;
	t->meta.runtime = meta->runtime;
	t->meta.pid = meta->pid;
}

static void on_event(void *ctx, const struct as_event *ev)
{
	struct top *t = ctx;

	if (live__add(t->live, ev) && !t->err)
		t->err = -ENOMEM;
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
		live__tick(t->live, now);
		redraw = true;
	}
	while ((ch = getch()) != ERR) {
		if (tui_key(&t->ui, ch, t->live))
			return 1;
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

int cmd_top(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "interval", required_argument, NULL, 'i' },
		{ "runtime", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct top t = { .interval_ns = 1000000000ull };
	struct recorder_opts o = { .stop = &stop_requested, .quiet = true, .on_start = on_start, .on_event = on_event,
				   .on_tick = on_tick, .ctx = &t };
	struct recorder_result res;
	char err[1024] = "", exe[64], target[4096];
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:i:r:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': o.pid = atoi(optarg); break;
		case 'i': {
			double s = atof(optarg);
			if (s < 0.1 || s > 60) {
				cli_error("--interval takes seconds from 0.1 to 60, not '%s'", optarg);
				return 2;
			}
			t.interval_ns = (uint64_t)(s * 1e9);
			break;
		}
		case 'r': o.runtime = optarg; break;
		case 'h':
			printf("usage: asyncscope top (-p PID | -- CMD [ARGS...]) [--interval SEC] [--runtime NAME]\n"
			       "keys: q quit, s/S sort, t tree, / filter, enter detail, j/k or arrows move\n");
			return 0;
		default:
			return 2;
		}
	}
	if (optind < argc)
		o.argv = argv + optind;
	if ((o.pid > 0) == (o.argv != NULL)) {
		cli_error("usage: asyncscope top (-p PID | -- CMD [ARGS...]) [--interval SEC]");
		return 2;
	}
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
	t.live = live__new(&t.meta);
	if (!t.live) {
		cli_error("out of memory");
		return 1;
	}
	setlocale(LC_ALL, "");
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	int ret = recorder_run(&o, &res, err, sizeof(err));
	if (t.screen)
		endwin();
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
		(unsigned long long)res.events, (unsigned long long)res.tasks,
		(unsigned long long)res.lost, o.pid > 0 ? "; the target was left running" : "");
	return 0;
}
