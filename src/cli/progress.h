/* The progress line commands print on stderr while they read a trace:
 *   \rreading trace: 42% (4.2M events)
 * from the reader's file offset against the file size, at most 10 updates a
 * second, erased at the end. Shown when stderr is a terminal, or (auto mode)
 * once a trace turns out large, so long jobs in scripts show progress too. */
#ifndef AS_CLI_PROGRESS_H
#define AS_CLI_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "pipeline/source.h"

#define PROGRESS_LARGE 1000000   /* events: auto mode shows progress past this */

enum progress_mode { PROGRESS_AUTO = -1, PROGRESS_OFF = 0, PROGRESS_ON = 1 };

struct progress {
	const char *what;        /* "reading trace" (borrowed) */
	enum progress_mode mode;
	bool tty, shown;
	uint64_t size;           /* of the trace file, 0 unknown */
	struct timespec last;
};

/* Sets up p for the trace file at path. */
void progress__init(struct progress *p, const char *what, const char *path, enum progress_mode mode);
/* Called after each event read from src, events the count so far; cheap
 * (acts every 4096 events). */
void progress__update(struct progress *p, const struct as_source *src, uint64_t events);
/* Erases the line if one was shown. */
void progress__end(struct progress *p);

/* Gives each event of src (path: its file, for the progress line) to add,
 * with the event's stack definition (NULL when it has none), counting them
 * in *events. Returns 0; or 1 after printing one line: add failed (out of
 * memory), the trace is corrupt, or it is truncated and partial is false. */
/* After cli_read_events(): one line saying how many events the recording
 * lost (ring buffer full) and missed, or that the trace is truncated, so no
 * report hides them. */
void cli_print_lost(FILE *out, const struct as_source *src, uint64_t events);

typedef int (*cli_event_fn)(void *ctx, const struct as_event *ev, const struct as_stack *stack);
int cli_read_events(struct as_source *src, const char *path, bool partial, cli_event_fn add,
		    void *ctx, uint64_t *events);

#endif
