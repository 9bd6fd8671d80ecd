/* The progress line commands print on stderr while they read a trace:
 *   \rasyncscope: reading trace: 42% (4.2M events)
 * from the reader's file offset against the file size, at most 10 updates a
 * second, erased at the end. Shown when stderr is a terminal, or (auto mode)
 * once a trace turns out large, so long jobs in scripts show progress too. */
#ifndef AS_CLI_PROGRESS_H
#define AS_CLI_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "pipeline/pipeline.h"

#define PROGRESS_LARGE 1000000   /* events: auto mode shows progress past this */
#define PROGRESS_LOG_SECONDS 10  /* stderr not a terminal: a line this often */

enum progress_mode { PROGRESS_AUTO = -1, PROGRESS_OFF = -2, PROGRESS_ON = 1 };

struct progress {
	const char *what;        /* "reading trace" (borrowed) */
	enum progress_mode mode;
	bool tty, shown;
	uint64_t size;           /* of the trace file, 0 unknown */
	struct timespec last;
};

/* Sets up p for the trace file at path. */
void progress__init(struct progress *p, const char *what, const char *path, enum progress_mode mode);
/* Called by pipeline_run() every PIPELINE_PROGRESS_EVERY events read from
 * src (events: the count so far); redraws at most 10 times a second. */
void progress__update(struct progress *p, const struct as_source *src, uint64_t events);
/* Erases the line if one was shown. */
void progress__end(struct progress *p);

/* After cli_run(): one line saying how many events the recording lost
 * (ring buffer full) and missed, or that the trace is truncated, so no
 * report hides them. */
void cli_print_lost(FILE *out, const struct as_source *src, uint64_t events);
/* After a run with --partial that stopped at a corrupt record
 * (res->corrupt): one warning naming where (cli_run() says it itself). */
void cli_warn_corrupt(const struct as_source *src, const struct pipeline_result *res);

struct cli_run_opts {
	const char *path;         /* the input file (the progress line's size), or NULL */
	const char *what;         /* the progress line's label (default "reading trace") */
	enum progress_mode progress; /* 0 here means PROGRESS_AUTO; PROGRESS_ON / _OFF */
	bool partial;             /* a truncated input ends the run (res->truncated) */
	const char *output;       /* named in "writing OUTPUT: ..." when a sink fails
	                             other than out of memory (default: the sink's name) */
	bool own_truncation;      /* a truncated input without partial: the caller
	                             says so itself (nothing printed here) */
};

/* Runs src into sinks[0..n) (pipeline_run()) with the progress line on
 * stderr. Returns 0; or 1 after printing one line: a sink ran out of memory
 * ("out of memory after N events"), a sink failed to write ("writing
 * OUTPUT: ..."), or the source failed (its own message: corrupt, or
 * truncated without partial unless own_truncation). *res says how far it
 * got either way. */
int cli_run(struct as_source *src, const struct cli_run_opts *o, struct as_sink *sinks, size_t n,
	    struct pipeline_result *res);

#endif
