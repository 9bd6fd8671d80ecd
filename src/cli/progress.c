/* The progress line shared by report and export. */
#include "cli/progress.h"

#include <errno.h>
#include <stdio.h>
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

	if ((events & 4095) || p->mode == PROGRESS_OFF ||
	    (p->mode == PROGRESS_AUTO && !p->tty && events < PROGRESS_LARGE))
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((now.tv_sec - p->last.tv_sec) * 1000000000L + (now.tv_nsec - p->last.tv_nsec) < 100000000L)
		return;
	p->last = now;
	p->shown = true;
	pct = p->size && src->ops->offset ? 100.0 * (double)src->ops->offset(src->impl) /
					      (double)p->size : 0;
	fprintf(stderr, "\r%s: %3.0f%% (%.1fM events)", p->what, pct > 100 ? 100 : pct,
		(double)events / 1e6);
}

void progress__end(struct progress *p)
{
	if (p->shown)
		fputs("\r\033[K", stderr);
	p->shown = false;
}

int cli_read_events(struct as_source *src, const char *path, bool partial, cli_event_fn add,
		    void *ctx, uint64_t *events)
{
	struct progress pg;
	struct as_event ev;
	int n;

	progress__init(&pg, "reading trace", path, PROGRESS_AUTO);
	*events = 0;
	while ((n = as_source__next(src, &ev)) == 1) {
		if (add(ctx, &ev, ev.stack ? as_source__stack(src, ev.stack) : NULL)) {
			progress__end(&pg);
			cli_error("out of memory");
			return 1;
		}
		progress__update(&pg, src, ++*events);
	}
	progress__end(&pg);
	if (n < 0 && !(n == -ENODATA && partial)) {
		cli_error("%s", as_source__error(src));
		return 1;
	}
	return 0;
}

void cli_print_lost(FILE *out, const struct as_source *src, uint64_t events)
{
	const struct as_trace_end *end = as_source__end(src);

	if (!end) {
		fprintf(out, "trace truncated after %llu events (the recording did not finish): "
			"lost and missed events unknown\n",
			(unsigned long long)events);
		return;
	}
	fprintf(out, "lost events %llu, missed events %llu%s\n", (unsigned long long)end->lost,
		(unsigned long long)end->missed,
		end->lost || end->missed ? ": the numbers above undercount" : "");
}
