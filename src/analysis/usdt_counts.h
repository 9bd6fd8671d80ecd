/* USDT hit counts: from the decoded event stream, how often each USDT
 * probe (provider:name, all its sites together) fired, the range of its
 * first argument, and how often inside each task. Pure C: no libbpf, no
 * I/O, no globals. Fed the same events as the task analysis (it ignores
 * every type but USDT); the task of a hit is the one the task model
 * (task_model.h) says is polled on its thread then.
 *
 * Memory: one row per (probe, task) pair with at least one hit. */
#ifndef AS_ANALYSIS_USDT_COUNTS_H
#define AS_ANALYSIS_USDT_COUNTS_H

#include <stddef.h>
#include <stdint.h>

#include "pipeline/sink.h"
#include "trace/event.h"

struct usdt_probe_count {
	const char *probe;        /* "provider:name" (borrowed from the meta) */
	uint64_t hits;
	uint64_t in_task;         /* hits inside a task's poll */
	int64_t arg_min, arg_max; /* first argument as a signed number (valid with hits) */
};

struct usdt_task_count {
	size_t probe;             /* index into usdt_counts__probes() */
	uint64_t task;            /* task header address */
	uint64_t seq;             /* the model's number (1, 2, ...), 0 for a task
	                             the model never saw polled */
	uint64_t tokio_id;        /* 0 unknown */
	const char *name;         /* root future (the poll probe's future), NULL unknown */
	uint64_t hits;
	uint64_t first_ts;        /* timestamp of its first hit */
};

struct usdt_counts;

struct task_model;

/* meta is borrowed until usdt_counts__free(); its USDT probes give the
 * rows, in plan order. NULL and errno ENOMEM on failure. With a task model
 * of its own, fed by usdt_counts__add(). */
struct usdt_counts *usdt_counts__new(const struct as_trace_meta *meta);
/* The same on task model m, shared with other analyses of the run: m is
 * borrowed and must outlive c (the rows' names are its strings); the caller
 * feeds m each event before usdt_counts__add() (or puts task_model__sink(m)
 * before usdt_counts__sink(c)). */
struct usdt_counts *usdt_counts__new_on(struct task_model *m, const struct as_trace_meta *meta);
/* Takes one event (any type). Returns 0, -ENOMEM (the counts stay usable
 * but miss that event) or -EINVAL after usdt_counts__finish(). A USDT event
 * whose probe is not a USDT probe of the meta is counted in
 * usdt_counts__bad() and otherwise ignored. */
int usdt_counts__add(struct usdt_counts *c, const struct as_event *ev);
/* Ends the stream: sorts the task rows. */
void usdt_counts__finish(struct usdt_counts *c);
/* Every USDT probe of the meta, hit or not, in plan order (borrowed). */
const struct usdt_probe_count *usdt_counts__probes(const struct usdt_counts *c, size_t *n);
/* (probe, task) rows (borrowed); after usdt_counts__finish(), most hits
 * first (ties: probe, then first hit). */
const struct usdt_task_count *usdt_counts__tasks(const struct usdt_counts *c, size_t *n);
uint64_t usdt_counts__total(const struct usdt_counts *c);
uint64_t usdt_counts__bad(const struct usdt_counts *c);
/* A sink view of x (pipeline/sink.h; ops->free NULL: x stays the caller's):
 * add() is usdt_counts__add(), finish() usdt_counts__finish(). With a
 * shared model (usdt_counts__new_on()), put task_model__sink() first. */
struct as_sink usdt_counts__sink(struct usdt_counts *x);

void usdt_counts__free(struct usdt_counts *c);

#endif
