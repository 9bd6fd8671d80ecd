/* The progress line of the commands that read a trace, and cli_run(): a
 * source drained into sinks through pipeline_run() with that line and the
 * one-line errors. */
#include "cli/progress.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/opts.h"

void progress__init(struct progress *p, const char *what, const char *path, enum progress_mode mode)
{
	struct stat sb;

	p->what = what;
	p->mode = mode;
	p->tty = isatty(STDERR_FILENO);
	p->shown = false;
	p->size = path && stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
	clock_gettime(CLOCK_MONOTONIC, &p->last);
}

void progress__update(struct progress *p, const struct as_source *src, uint64_t events)
{
	struct timespec now;
	double pct;

	if (p->mode == PROGRESS_OFF ||
	    (p->mode == PROGRESS_AUTO && !p->tty && events < PROGRESS_LARGE))
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	/* a terminal gets one line redrawn ten times a second; a log (stderr
	 * redirected) a plain line every PROGRESS_LOG_SECONDS, never a \r */
	long every = p->tty ? 100000000L : PROGRESS_LOG_SECONDS * 1000000000L;
	if ((now.tv_sec - p->last.tv_sec) * 1000000000L + (now.tv_nsec - p->last.tv_nsec) < every)
		return;
	p->last = now;
	p->shown = p->tty;
	pct = p->size && src->ops->offset ? 100.0 * (double)src->ops->offset(src->impl) /
					      (double)p->size : 0;
	fprintf(stderr, "%sasyncscope: %s: %3.0f%% (%.1fM events)%s", p->tty ? "\r" : "", p->what,
		pct > 100 ? 100 : pct, (double)events / 1e6, p->tty ? "" : "\n");
}

void progress__end(struct progress *p)
{
	if (p->shown && p->tty)
		fputs("\r\033[K", stderr);
	p->shown = false;
}

static void on_progress(void *ctx, const struct as_source *src, uint64_t events)
{
	progress__update(ctx, src, events);
}

void cli_warn_corrupt(const struct as_source *src, const struct pipeline_result *res)
{
	if (!res->corrupt)
		return;
	/* the reader's words, less its advice to do what was done */
	const char *msg = as_source__error(src), *cut = strstr(msg, ": use ");
	cli_error("warning: %.*s: the %llu events before it are used (--partial), marked as "
		  "truncated", cut ? (int)(cut - msg) : (int)strlen(msg), msg,
		  (unsigned long long)res->events);
}

int cli_run(struct as_source *src, const struct cli_run_opts *o, struct as_sink *sinks, size_t n,
	    struct pipeline_result *res)
{
	struct progress pg;
	struct pipeline_opts po = { .partial = o->partial, .on_progress = on_progress, .ctx = &pg };
	int err;

	progress__init(&pg, o->what ? o->what : "reading trace", o->path,
		       o->progress ? o->progress : PROGRESS_AUTO);
	err = pipeline_run(src, sinks, n, &po, res);
	progress__end(&pg);
	if (!err)
		cli_warn_corrupt(src, res);
	if (!err)
		return 0;
	if (res->failed && err == -ENOMEM)
		cli_error("out of memory after %llu events", (unsigned long long)res->events);
	else if (res->failed)
		cli_error("writing %s: %s", o->output ? o->output : res->failed, cli_write_error(err));
	else if (!(err == -ENODATA && o->own_truncation))
		cli_error("%s", as_source__error(src));
	return 1;
}

void cli_print_lost(FILE *out, const struct as_source *src, uint64_t events)
{
	const struct as_trace_end *end = as_source__end(src);

	/* on stderr it is a message like any other; in a report, a line of it */
	const char *prefix = out == stderr ? "asyncscope: " : "";

	struct as_trace_end counts;

	if (!end && as_source__counts(src, &counts)) {
		fprintf(out, "%strace truncated after %llu events (the recording did not finish): "
			"lost events at least %llu, missed events at least %llu: the numbers above "
			"undercount\n", prefix, (unsigned long long)events,
			(unsigned long long)counts.lost, (unsigned long long)counts.missed);
		return;
	}
	if (!end) {
		fprintf(out, "%strace truncated after %llu events (the recording did not finish): "
			"lost and missed events unknown\n", prefix,
			(unsigned long long)events);
		return;
	}
	fprintf(out, "%slost events %llu, missed events %llu%s\n", prefix,
		(unsigned long long)end->lost,
		(unsigned long long)end->missed,
		end->lost || end->missed ? ": the numbers above undercount" : "");
}
