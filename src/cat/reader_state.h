/* The CAT reader's insides, shared by cat/reader.c (open, sections, merge)
 * and cat/header.c (asyncscope's header lines) only: nothing else includes
 * this file. See cat/reader.h for the interface. */
#ifndef AS_CAT_READER_IMPL_H
#define AS_CAT_READER_IMPL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cat/heap.h"
#include "cat/lines.h"
#include "cat/reader.h"
#include "cat/rules.h"
#include "trace/event.h"
#include "util/strtab.h"
#include "util/u64map.h"

struct section {
	uint64_t start, end;  /* byte offsets: its first line, past its last */
	uint64_t line;        /* line number of its first line */
	uint32_t tid;
	int32_t thread;       /* its header thread entry (first section of the tid), or -1 */
};

struct hdr_thread {
	uint32_t tid;
	struct as_event ev;   /* the THREAD event (str owned) */
	bool used;
};

struct spawn_loc {
	char *file;
	uint32_t line, col;
};

struct task_run {
	uint64_t id, polls;
	uint32_t next;        /* next run of the same address, UINT32_MAX none */
};

struct order_hint {
	uint64_t step, count; /* events step .. step + count - 1 */
	uint32_t section;
	uint64_t line;        /* its header line */
};

/* Per-name facts of a file with no asyncscope header. */
struct fname {
	uint16_t role;        /* 0: stands for nothing */
	uint8_t inner_poll;   /* a poll function entered by another one for the same task */
	char *rust;           /* the Rust spelling (owned) */
};

/* What turns one section's lines into events: the call stacks and the event
 * being completed (args / retval lines may follow its line). */
struct proc {
	uint32_t tid;
	struct cat_state st;
	bool pending;
	struct as_event ev;
	uint64_t ev_line;
	bool overridden;      /* its fields came from an args block */
	int blk;              /* 0, CAT_LINE_ARGS or CAT_LINE_RETVAL: a block being read */
	uint64_t blk_line;
	uint32_t nargs;
	uint64_t args[4];
	bool have_ret;
	uint64_t ret;
	bool index_pass;      /* the open's check: also names the foreign polls */
};

struct cursor {
	struct cat_line_reader l;
	uint64_t line;        /* number of the next line */
	struct proc pr;
	bool thread_pending;
	bool have;            /* head holds the next event */
	bool head_overridden;
	struct as_event head;
	bool done;
};

struct cat_reader {
	FILE *f;
	int fd;
	char *path;
	uint64_t size;
	bool own;
	struct as_trace_meta meta;
	uint32_t cap_probes;
	struct as_trace_end end;
	bool have_end, truncated_mark;
	bool have_counts;         /* the truncated line's loss counts (end.lost, ...) */
	uint64_t hdr_events;  /* events the header announces */
	uint64_t counted;     /* events the sections hold (open's count) */
	struct cat_stats stats;
	uint64_t unknown_in_sections;
	struct section *secs;
	uint32_t n_secs, cap_secs;
	struct hdr_thread *threads;
	uint32_t n_threads, cap_threads;
	struct spawn_loc *spawns;
	uint32_t n_spawns, cap_spawns;
	struct task_run *runs;
	uint32_t n_runs, cap_runs;
	struct u64map run_head;   /* address -> first unused run + 1 */
	struct u64map run_tail;   /* address -> last run + 1 (open only) */
	struct order_hint *hints;
	size_t n_hints, cap_hints, next_hint;
	struct strtab names;      /* line names */
	uint32_t *name_probe;     /* own: per name, its probe */
	struct fname *fnames;     /* foreign: per name */
	uint32_t cap_names;
	struct strtab keys;       /* foreign: "name\0addr" -> probe */
	uint64_t min_ts, max_ts;
	/* merging */
	struct cursor *curs;
	struct cat_heap heap;
	uint64_t events;
	uint64_t consumed;
	int err;
	bool started, done;
	char msg[512];
	char errmsg[512];         /* open: what went wrong */
};

static inline int oom(void) { return -ENOMEM; }

/* Records a one-line message "PATH: line N: WHAT" (line 0: no line) for
 * the open's or the merge's error, and returns err. */
int cat_reader_fail(struct cat_reader *r, int err, uint64_t line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* its short name inside the reader's two files */
#define rfail cat_reader_fail
/* Grows the array *p of *cap elements of size bytes to hold need. Returns
 * 0 or -ENOMEM. */
int cat_grow(void **p, uint32_t *cap, uint32_t need, size_t size);
/* A zeroed new probe at the end of r's meta, or NULL (65536 probes, or out
 * of memory). */
struct as_probe *cat_reader_new_probe(struct cat_reader *r);

/* Applies one "# asyncscope KEYWORD k=v ..." line ([s, end): after "#
 * asyncscope "), line number line. Returns 0 or a negative errno, the
 * message recorded. */
int cat_header_line(struct cat_reader *r, const char *s, const char *end, uint64_t line);

#endif
