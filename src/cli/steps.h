/* The steps that more than one command runs, as functions (no command calls
 * another's cmd_*): the recording (record.c; also trace), the report of a
 * trace file (report.c; also trace, for its HTML page). */
#ifndef AS_CLI_STEPS_H
#define AS_CLI_STEPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/tasks.h"
#include "record/recorder.h"

/* Records by opts (borrowed; stop, progress are set here) until Ctrl-C,
 * the duration or the target's exit, then prints the summary lines on
 * stderr. Returns the exit code: 0, or 1 after printing the error. */
int record_run(const struct recorder_opts *opts);
/* The recorder's notices on stderr (record.c's rendering): "asyncscope:
 * MSG", "asyncscope: warning: MSG", the status line. */
void record_notice(void *ctx, enum rec_notice_level level, const char *msg);

/* What report writes. */
struct report_args {
	const char *path;         /* the trace (or CAT) file */
	const char *format;       /* "text", "json" or "html" */
	const char *output;       /* "-" for stdout */
	bool partial;             /* use a truncated trace's events */
	struct analysis_opts ao;  /* thresholds, --max-tasks */
};

/* Reads a->path and writes its report. Returns the exit code: 0, or 1
 * after printing the error. */
int report_run(const struct report_args *a);

#endif
