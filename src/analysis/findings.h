/* Findings: what a trace (or a live view) says is wrong, most severe first,
 * each with one line saying what to do, in the spirit of tokio-console's
 * lints. Computed from the results of the analyses `report` runs on one
 * task model (tasks.h, blocking.h, futures.h) or from top's live view
 * (live.h); they compute nothing new from events. Pure C: no I/O, no
 * globals.
 *
 * Kinds (finding.kind), and when:
 *   "blocking"      a task's worker thread was off CPU inside its polls,
 *                   blocked (not preempted) at least the long-poll threshold
 *                   in all: the call (blocking.h's cause: the function the
 *                   program's frame called, the kernel function it slept
 *                   in, the frame's file:line); error when it blocked 10x
 *                   the threshold or a long poll's worth each time
 *   "long_poll"     a poll at least the long-poll threshold that blocked
 *                   off-CPU time (half its length) does not explain (on CPU,
 *                   preempted or not, or no off-CPU data: the trace's
 *                   `recorded` says, else any off-CPU interval at all is
 *                   taken to mean they were recorded); error from 10x the
 *                   threshold
 *   "never_woken"   a task idle past the stall threshold after a Pending,
 *                   never woken again (to the end of the trace, or until it
 *                   was dropped): a lost waker, or an event that never came;
 *                   with its await chain's innermost .await when the trace
 *                   has future probes; info when a waker of each was held
 *                   at the end (the recorder read it in the program's
 *                   memory: a wait)
 *   "lost_waker"    one idle to the end that no waker was left of (read as
 *                   above): it can never be woken again; error
 *   "starved"       woken but not polled for the starve threshold or longer
 *   "self_wake"     more than half of its wakes (and at least 10) from inside
 *                   its own poll; "busy_poll" when that is 1000 or more at
 *                   90% or more of Pending polls: it spins
 *   "preempted"     its worker was preempted (runnable, off CPU) inside its
 *                   polls for 10x the long-poll threshold or more
 *   "worker_busy"   a worker thread busy in polls 90% of a trace of 100 ms or
 *                   more (not when half of that is blocked off-CPU time: the
 *                   blocking findings say why); "worker_never_parks" a worker
 *                   that never parked in 1 s or more while another did
 *   "lost_events", "truncated", "tasks_folded" (live tasks past
 *                   --max-live-tasks), "anomalies" (events that did not fit),
 *   "no_wakes" (record --lite), "no_offcpu" (long polls, no off-CPU data)
 * Tasks of one name (and cause, for blocking) make one finding: its task
 * the worst of them, `tasks` how many. Severity: error > warning > info;
 * within one, the larger impact (ns) first. At most FINDINGS_MAX are kept,
 * the others counted. */
#ifndef AS_ANALYSIS_FINDINGS_H
#define AS_ANALYSIS_FINDINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/event.h"

#define FINDINGS_MAX 500

enum finding_severity { FINDING_ERROR = 0, FINDING_WARNING, FINDING_INFO, FINDING__MAX };

struct finding {
	const char *kind;              /* static: "blocking", "never_woken", ... */
	enum finding_severity severity;
	bool has_task;                 /* false: about the trace or a thread */
	uint64_t task_id;              /* the runtime's id, 0 unknown */
	uint64_t task_seq;             /* the analysis' seq, 0 unknown */
	uint64_t task_header;          /* address, 0 unknown */
	const char *task_name;         /* full name (the analyses' string), NULL unknown */
	uint32_t task_group;           /* a folded task: index + 1 into analysis__groups(),
	                                  0 none */
	uint64_t tasks;                /* tasks it covers (same name), 1 or more; 0 none */
	uint32_t tid;                  /* a worker finding's thread, 0 none */
	const char *thread;            /* its name, NULL unknown */
	const char *title;             /* one line, names shortened as asked */
	const char *detail;            /* more, one paragraph */
	const char *advice;            /* one line: what to do */
	const char *file;              /* where, NULL unknown */
	uint32_t line;                 /* 0 unknown */
	uint64_t weight_ns;            /* the impact that orders one severity */
};

struct analysis;
struct blocking;
struct futures;
struct live;

/* What the findings of a trace come from; all borrowed. */
struct findings_input {
	const struct analysis *analysis;     /* finished (required) */
	struct blocking *blocking;           /* off-CPU analysis of the same trace, or NULL */
	const struct futures *futures;       /* future-level analysis, or NULL */
	const struct as_trace_meta *meta;    /* NULL: unknown */
	const struct as_trace_end *end;      /* lost / missed; NULL: the analysis' */
	bool truncated;                      /* no end record */
	bool wide;                           /* full names in titles and details */
	int name_width;                      /* else shortened to this (0: default) */
};

/* The thresholds of a live view's findings (0: the defaults). */
struct findings_live_opts {
	uint64_t long_poll_ns;               /* ANALYSIS_LONG_POLL_NS */
	uint64_t starve_ns;                  /* ANALYSIS_STARVE_NS */
	uint64_t stall_ns;                   /* 10 s: an idle task polled once */
	const char *runtime;                 /* meta's runtime name, NULL tokio */
	bool wide;
	int name_width;
};

struct findings;

/* The findings of a trace. Returns NULL with errno set (EINVAL without a
 * finished analysis, ENOMEM). Strings are the findings' own but for the
 * task names and files, the analyses' (they must outlive the findings). */
struct findings *findings__new(const struct findings_input *in);
/* The findings of top's live view now (live.h); opts may be NULL. */
struct findings *findings__new_live(const struct live *l, const struct findings_live_opts *opts);
/* Most severe first; owned by f. */
const struct finding *findings__list(const struct findings *f, size_t *n);
/* How many of severity s (the kept ones), and how many more there were
 * past FINDINGS_MAX. */
size_t findings__count(const struct findings *f, enum finding_severity s);
size_t findings__omitted(const struct findings *f);
/* "error", "warning", "info". */
const char *finding_severity__str(enum finding_severity s);
/* Accepts NULL. */
void findings__free(struct findings *f);

#endif
