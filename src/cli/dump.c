/* `asyncscope dump -p PID [--format text|json] [--duration DURATION]`: the async
 * backtrace of every live task of a Tokio, async-std or smol program, like a thread dump,
 * without stopping it (src/dump/dump.h finds and reads the tasks; this file
 * parses arguments and prints). With `--every INTERVAL [--duration D]
 * [--format text|folded|json]`, the await profile: a dump every INTERVAL
 * for D, every task's chain counted (src/dump/await_profile.h). */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/text_view.h"
#include "cli/opts.h"
#include "dump/await_profile.h"
#include "dump/dump.h"
#include "probe/threads.h"
#include "sym/elf_image.h"
#include "sym/debuginfo.h"
#include "util/clock.h"
#include "util/fmt.h"
#include "util/json.h"

enum { D_FORMAT = 1, D_DURATION, D_OUTPUT, D_PID, D_TRACE, D_EVERY, D_DEBUG_FILE };

static const struct cli_opt dump_opts[] = {
	{ "pid", 'p', CLI_PID, D_PID, NULL, "the running process to read", 0, 0, true },
	{ "format", 'f', CLI_CHOICE, D_FORMAT, "text|json|folded",
	  "text (default), JSON, or with --every folded stacks (flame graphs, in ns)" },
	{ "output", 'o', CLI_STRING, D_OUTPUT, "FILE", "write the dump to FILE (default -: stdout)" },
	{ "duration", 'd', CLI_DURATION, D_DURATION, NULL,
	  "when no runtime is found through the threads' thread-local CONTEXT\n"
	  "(no probe), trace this long to find the tasks being polled, up to 1h\n(default 300ms);"
	  " with --every: how long to sample (default 10s)",
	  1, 3600000000000ull },
	{ "every", 0, CLI_DURATION, D_EVERY, "INTERVAL",
	  "the await profile: a dump every INTERVAL (10ms to 1m) for --duration, every\n"
	  "task's await chain counted, idle tasks included (text: a table of chains;\n"
	  "folded: wall-clock flame graph stacks)", 10000000ull, 60000000000ull },
	{ "trace", 0, CLI_FLAG, D_TRACE, NULL,
	  "find the tasks by tracing (--duration: uprobes attached meanwhile) instead of\n"
	  "through the threads' thread-local CONTEXT" },
	DEBUG_FILE_OPT(D_DEBUG_FILE),
	{ 0 },
};

static const struct cli_opt *const tables[] = { dump_opts, cli_color_opts, cli_wide_opts,
						  cli_limit_opts, NULL };

/* How the text shows names (shortened past DUMP_NAME_W, one per line: only
 * the longest are) and how many tasks it lists; set once stdout is the
 * output. */
#define DUMP_NAME_W 80
static struct text_view view;

/* name as the text shows it, into one of a few rotating buffers (a line
 * names up to three things) */
static const char *dname(const char *name)
{
	static char bufs[4][1024];
	static unsigned next;
	char *b = bufs[next++ % 4];

	return name ? text_name(&view, b, sizeof(bufs[0]), name, DUMP_NAME_W) : NULL;
}

const struct cli_command dump_command = {
	.name = "dump",
	.summary = "The async backtrace of every live task of a running Tokio, async-std or smol\n"
		   "program, like a thread dump, without stopping it (needs the binary's debug info).",
	.operands = "-p PID",
	.tables = tables,
};

struct dump_args {
	struct dump_opts *o;
	const char *format, *output;
	uint64_t every_ns, duration_ns;   /* --every, and --duration as given (0 none) */
};

static int on_opt(void *ctx, const struct cli_opt *opt, const struct cli_val *v)
{
	struct dump_args *a = ctx;

	switch (opt->key) {
	case D_PID: a->o->pid = (pid_t)v->num; break;
	case D_FORMAT: a->format = v->str; break;
	case D_OUTPUT: a->output = v->str; break;
	case D_DURATION:
		a->o->duration = (double)v->num / 1e9;
		a->duration_ns = v->num;
		break;
	case D_EVERY: a->every_ns = v->num; break;
	case D_TRACE: a->o->trace = true; break;
	case D_DEBUG_FILE: debuginfo_set_file(v->str); break;
	}
	return 0;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* What a frame is doing, for the frame's line: "Suspend0" -> NULL (the
 * usual case, said by the location alone), else a few words. */
static const char *frame_note(const struct async_frame *f)
{
	if (!strncmp(f->state, "Suspend", 7))
		return NULL;
	if (!strcmp(f->state, "Unresumed"))
		return "not started";
	if (!strcmp(f->state, "Returned"))
		return "returned";
	if (!strcmp(f->state, "Panicked"))
		return "panicked";
	return f->state;
}

/* How the tasks were found, one line per task list, after the header:
 *
 * task list 1 (multi_thread runtime, id 1): 3 tasks, 8 of 8 shards walked, complete;
 *   found through the thread-local CONTEXT of thread 7919 (local_set), 3 threads in it
 * task list 2 (LocalSet, id 2): 5 tasks, complete; found through a task found by a
 *   heap scan
 * task list 3 (async-executor executor): 3 tasks, complete; found through the static
 *   smol::spawn::spawn::GLOBAL
 * no runtime found in any thread's CONTEXT (no thread's thread-local CONTEXT holds
 *   a runtime handle): tasks found by tracing 300 ms
 */
static void print_lists(const struct dump_result *r)
{
	char via[192];

	for (size_t i = 0; i < r->n_task_lists; i++) {
		const struct dump_list *l = &r->task_lists[i];
		const char *kind = !l->runtime ? "" : !strcmp(l->runtime, "local_set") ? "LocalSet, "
				 : !strcmp(l->runtime, "multi_thread") ? "multi_thread runtime, "
				 : !strcmp(l->runtime, "current_thread") ? "current_thread runtime, "
				 : "runtime, ";
		if (l->runtime && !strcmp(l->runtime, "executor"))   /* async-executor: no id */
			printf("task list %zu (async-executor executor): ", i + 1);
		else
			printf("task list %zu (%sid %" PRIu64 "): ", i + 1, kind, l->id);
		printf("%zu task%s, ", l->tasks, l->tasks == 1 ? "" : "s");
		if (l->shards > 1)
			printf("%zu of %zu shards walked, ", l->walked, l->shards);
		printf("%s; found through %s", l->complete ? "complete" : "not complete",
		       dump_via_text(r, l, via, sizeof(via)));
		if (l->via == DUMP_VIA_CONTEXT)
			printf(", %zu thread%s in it", l->threads, l->threads == 1 ? "" : "s");
		if (l->note)
			printf(" (%s)", l->note);
		printf("\n");
	}
	if (r->context_note)
		printf("no runtime found in any thread's CONTEXT (%s)%s\n", r->context_note,
		       r->traced ? ": tasks found by tracing" : "");
	if (r->lists_without_tasks)
		printf("%zu more task list%s the program created: %s\n", r->lists_without_tasks,
		       r->lists_without_tasks == 1 ? "" : "s",
		       r->heap_scanned && !r->heap_scan_cut
			       ? "no task of them in the heap (dropped runtimes, or empty LocalSets)"
		       : r->heap_scan_cut ? "not found (the heap scan stopped at 1 GiB)"
					  : "not found (the heap was not scanned)");
}

/* Text, one block per task, outermost frame first, innermost last (parked):
 *
 * asyncscope dump of pid 11961 (/work/main/tests/apps/target/release/parked): 6 tasks
 *
 * task #3 parked::deep_outer  [idle]
 *     parked::deep_outer at src/bin/parked.rs:14
 *     parked::deep_middle at src/bin/parked.rs:18
 *     parked::deep_inner at src/bin/parked.rs:23  (awaiting core::future::pending::Pending<()>)
 *
 * task #6 parked::nap  [idle]
 *     parked::nap at src/bin/parked.rs:40  (awaiting tokio::time::sleep::Sleep)
 *
 * task #7 parked::busy  [running]
 *     (running, not sampled)
 *
 * A task is named as everywhere: #ID, the runtime's task id, or ~N (its
 * number in order of first sight) when it has none.
 * Files below the unit's compilation directory are relative to it; others
 * (dependencies) stay absolute.
 */
/* The JoinSets frame k of t holds, below it: "JoinSet of 3 tasks: #5 #6
 * #7 (done)". */
static void print_join_sets(const struct dump_result *r, const struct dump_task *t, size_t k,
			    int indent)
{
	char ident[24];

	for (size_t j = 0; t && j < t->n_join_sets; j++) {
		const struct dump_join_set *js = &t->join_sets[j];
		if (js->frame != k)
			continue;
		printf("%*sJoinSet of %zu task%s%s", indent + 2, "", js->n, js->n == 1 ? "" : "s",
		       js->n ? ":" : "");
		for (size_t i = 0; i < js->n; i++) {
			const struct dump_child *ch = &js->tasks[i];
			printf(" %s", dump_child_ident(r, ch, ident, sizeof(ident)));
			if (ch->done)
				printf(" (done)");
			else if (!ch->task)
				printf(" (in no task list)");
		}
		printf("%s\n", js->cut ? " ... (more not read)" : "");
	}
}

/* The frames of s (of task t, NULL for a branch), indented (branches of an
 * await macro below their frame, two more spaces each level). */
static void print_chain(const struct dump_result *r, const struct dump_task *t,
			const struct async_stack *s, int indent)
{
	/* the root future itself a combinator (a task spawned as
	 * fut.map(..)): said once, at the top of a task's chain */
	if (s->via && indent == 4)
		printf("%*s(through %s)\n", indent, "", s->via);
	for (size_t k = 0; k < s->n; k++) {
		const struct async_frame *f = &s->frames[k];
		const char *note = frame_note(f);
		bool last = k + 1 == s->n;
		printf("%*s%s at %s:%u", indent, "", f->future ? dname(f->future) : "(null)",
		       f->file ? f->file : "?", f->line);
		if (note)
			printf("  (%s)", note);
		else if (f->via && last && s->macro)
			printf("  (through %s; in %s, %zu branch%s)", f->via, s->macro, s->n_branches,
			       s->n_branches == 1 ? "" : "es");
		else if (f->via)
			printf("  (through %s)", f->via);
		else if (last && s->macro)
			printf("  (in %s, %zu branch%s)", s->macro, s->n_branches,
			       s->n_branches == 1 ? "" : "es");
		else if (last && s->leaf)
			printf("  (awaiting %s)", dname(s->leaf));
		printf("\n");
		print_join_sets(r, t, k, indent);
	}
	if (!s->n && s->macro)
		printf("%*s(in %s, %zu branch%s)\n", indent, "", s->macro, s->n_branches,
		       s->n_branches == 1 ? "" : "es");
	else if (!s->n && s->leaf && indent > 4)
		printf("%*s(awaiting %s)\n", indent, "", dname(s->leaf));   /* a branch's own future */
	else if (!s->n && s->leaf)
		printf("%*s%s  (not an async fn or block: no source location)\n", indent, "",
		       dname(s->leaf));
	for (size_t b = 0; b < s->n_branches; b++) {
		const struct async_branch *br = &s->branches[b];
		printf("%*sbranch %zu: %s\n", indent + 2, "", b, br->state);
		print_chain(r, NULL, &br->stack, indent + 4);
	}
	if (s->truncated)
		printf("%*s... (deeper frames not shown)\n", indent, "");
	if (s->error)
		printf("%*s... (could not read further: %s)\n", indent, "", strerror(-s->error));
}

/* The futures of the threads blocked in a block_on, after the tasks, each
 * with its chain as a task's, or why there is none:
 *
 * block_on on thread block_on_ways (tid 4242): block_on_ways::main::{async_block#2}
 *     (location optimized out at the pc: the future found by a scan of its frame)
 *     block_on_ways::main::{async_block#2} at src/bin/block_on_ways.rs:72  (through ...)
 *
 * block_on on thread side-rt (tid 4245): block_on_ways::main::{closure#0}::{async_block#0}
 *     (location optimized out)
 */
static void print_block_ons(const struct dump_result *r)
{
	for (size_t i = 0; i < r->n_block_ons; i++) {
		const struct dump_block_on *b = &r->block_ons[i];
		printf("\nblock_on on thread %s (tid %d): %s\n", b->comm, (int)b->tid,
		       b->name ? dname(b->name) : "?");
		if (b->note)
			printf("    (%s)\n", b->note);
		if (b->located)
			print_chain(r, NULL, &b->stack, 4);
	}
	for (size_t i = 0; i < r->n_running; i++)
		printf("\nthread %s (tid %d) ran on a CPU throughout: its stack not read (a block_on "
		       "future it drives is not shown)\n", r->running[i].comm, (int)r->running[i].tid);
}

/* Idle tasks no waker of which exists (struct dump_task's wakers). */
static size_t no_waker(const struct dump_result *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n; i++)
		n += r->tasks[i].wakers_known && !r->tasks[i].wakers;
	return n;
}

static void print_text(const struct dump_result *r)
{
	char why[320];
	const char *incomplete = dump_list_status(r, why, sizeof(why));

	printf("asyncscope dump of pid %d (%s): %zu task%s\n", r->pid, r->target, r->n,
	       r->n == 1 ? "" : "s");
	/* e.g. "(a task of the list was freed while it was walked: 7 of 8
	 * shards walked: some tasks may be missing)" */
	if (incomplete)
		printf("(%s: some tasks may be missing)\n", incomplete);
	size_t lost = no_waker(r);

	if (lost)
		printf("%s%zu idle task%s with no waker: nothing can wake %s again (a lost wakeup; "
		       "marked below)%s\n", text_sgr(&view, TS_WARNING), lost, fmt_plural(lost),
		       lost == 1 ? "it" : "them", text_sgr(&view, TS_RESET));
	print_lists(r);
	size_t shown = text_rows(&view, r->n);

	for (size_t i = 0; i < shown; i++) {
		const struct dump_task *t = &r->tasks[i];
		const struct async_stack *s = &t->stack;
		char ident[24];

		printf("\n%stask %s %s%s  [%s]", text_sgr(&view, TS_BOLD),
		       dump_task_ident(t, ident, sizeof(ident)), t->name ? dname(t->name) : "?",
		       text_sgr(&view, TS_RESET), t->state);
		if (t->parent)
			printf("  (in a JoinSet of task %s)",
			       dump_task_ident(&r->tasks[t->parent - 1], ident, sizeof(ident)));
		printf("\n");
		if (t->note) {
			printf("    (%s)\n", t->note);
			continue;
		}
		print_chain(r, t, s, 4);
		if (t->wakes_at_ns) {
			/* its timer's deadline against the clock it is on */
			uint64_t now = clock_ns(CLOCK_MONOTONIC);
			char d[FMT_DURATION_MAX];
			if (t->wakes_at_ns > now)
				printf("    (its timer fires in %s)\n",
				       fmt_duration(d, sizeof(d), t->wakes_at_ns - now));
			else
				printf("    (its timer is due: the task should be woken)\n");
		}
		if (t->wakers_known && !t->wakers)
			printf("    %s(no waker of it exists: nothing can wake it again)%s\n",
			       text_sgr(&view, TS_WARNING), text_sgr(&view, TS_RESET));
	}
	if (shown < r->n)
		putchar('\n');
	text_more(stdout, &view, shown, r->n, "tasks", "",
		  "; every one in --format json");
	print_block_ons(r);
}

/* "parent" (the task whose JoinSet holds this one, or null) and
 * "join_sets": [{"frame" (the index of the frame holding it), "tasks":
 * [{"task", "id", "done" (not yet joined), "listed" (among the tasks)}],
 * "complete"}]. */
static void join_sets_json(struct json_writer *w, const struct dump_result *r,
			   const struct dump_task *t)
{
	char ident[24];

	json_writer__kv_string(w, "parent", t->parent ? dump_task_ident(&r->tasks[t->parent - 1], ident,
									 sizeof(ident)) : NULL);
	json_writer__key(w, "join_sets");
	json_writer__begin_array(w);
	for (size_t j = 0; j < t->n_join_sets; j++) {
		const struct dump_join_set *js = &t->join_sets[j];
		json_writer__begin_object(w);
		json_writer__kv_u64(w, "frame", js->frame);
		json_writer__key(w, "tasks");
		json_writer__begin_array(w);
		for (size_t i = 0; i < js->n; i++) {
			const struct dump_child *ch = &js->tasks[i];
			json_writer__begin_object(w);
			json_writer__kv_string(w, "task", ch->task || ch->id ?
					       dump_child_ident(r, ch, ident, sizeof(ident)) : NULL);
			json_writer__kv_u64_or_null(w, "id", ch->id, ch->id);
			json_writer__kv_bool(w, "done", ch->done);
			json_writer__kv_bool(w, "listed", ch->task != 0);
			json_writer__end_object(w);
		}
		json_writer__end_array(w);
		json_writer__kv_bool(w, "complete", !js->cut);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
}

/* "via" (the combinators the root is walked through to its first frame,
 * or null), "frames", "leaf", "truncated" and, for an await macro or a
 * combinator of several futures, "macro" and "branches": [{"state", the
 * same fields}]. */
static void chain_json(struct json_writer *w, const struct async_stack *s)
{
	json_writer__kv_string(w, "via", s->via);
	json_writer__key(w, "frames");
	json_writer__begin_array(w);
	for (size_t k = 0; k < s->n; k++) {
		const struct async_frame *f = &s->frames[k];
		json_writer__begin_object(w);
		json_writer__kv_string(w, "future", f->future);
		json_writer__kv_string(w, "type", f->type);
		json_writer__kv_string(w, "file", f->file);
		json_writer__kv_u64(w, "line", f->line);
		json_writer__kv_string(w, "state", f->state);
		json_writer__kv_string(w, "via", f->via);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	json_writer__kv_string(w, "leaf", s->leaf);
	json_writer__kv_bool(w, "truncated", s->truncated);
	if (!s->macro)
		return;
	json_writer__kv_string(w, "macro", s->macro);
	json_writer__key(w, "branches");
	json_writer__begin_array(w);
	for (size_t b = 0; b < s->n_branches; b++) {
		json_writer__begin_object(w);
		json_writer__kv_string(w, "state", s->branches[b].state);
		chain_json(w, &s->branches[b].stack);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
}

/* JSON: {"pid", "target", "tasks": [{"task" ("#3" or "~5", as in the
 * text), "id", "header", "name", "state", "note",
 * "seen", "list" (the task list it was found in, numbered as "task list N"
 * is, null none), "frames": [{"future", "type", "file", "line", "state", "via" (the
 * combinators awaited through to the next frame, "A > B", or null)}], "leaf",
 * "truncated", "via" (the root's combinators, or null), and when the
 * innermost frame awaits several futures "macro" ("tokio::select!",
 * "tokio::join!", "futures::join!", "futures::select!",
 * "futures::stream::FuturesUnordered", a combinator's type such as
 * "futures_util::future::select::Select") and "branches":
 * [{"state" (pending, done, gone, disabled), "frames", "leaf", ...}]}],
 * "list_complete"}, "parent" and "join_sets" (join_sets_json()), "wakers" (an
 * idle Tokio task: the wakers of it held, abort handles counted too; 0:
 * nothing can wake it again; null not known); header as "0x..." hex; id, name, note, leaf null when
 * unknown. With a sharded task list (tokio >= 1.35) also "shards",
 * "shards_walked" and "list_note" (why not complete, or null). Then
 * "lists_created" (the task lists the program created, null unknown),
 * "lists_without_tasks" (of which none walked) and "heap_scan" ("none",
 * "whole", "cut": the heap scanned for the lists nothing else reached).
 * Last, "block_on": the threads in a block_on, each with its future's
 * chain, and "threads_running": the threads on a CPU through every read
 * (their stacks not read). */
static int print_json(const struct dump_result *r)
{
	struct json_writer *w = json_writer__new(stdout, true);
	char hex[32], ident[24], why[320];

	if (!w)
		return -errno;
	json_writer__begin_object(w);
	json_writer__kv_u64(w, "pid", (uint64_t)r->pid);
	json_writer__kv_string(w, "target", r->target);
	json_writer__kv_bool(w, "list_complete", dump_list_complete(r));
	json_writer__kv_u64(w, "tasks_without_waker", no_waker(r));
	if (r->lists || r->layout_unverified) {
		json_writer__kv_u64(w, "shards", r->shards);
		json_writer__kv_u64(w, "shards_walked", r->shards_walked);
		json_writer__kv_string(w, "list_note", dump_list_status(r, why, sizeof(why)));
	}
	json_writer__kv_bool(w, "traced", r->traced);
	json_writer__kv_string(w, "context_note", r->context_note);
	json_writer__kv_u64_or_null(w, "lists_created", r->lists_counted, r->lists_created);
	json_writer__kv_u64(w, "lists_without_tasks", r->lists_without_tasks);
	json_writer__kv_string(w, "heap_scan", !r->heap_scanned ? "none"
				   : r->heap_scan_cut ? "cut" : "whole");
	json_writer__key(w, "task_lists");
	json_writer__begin_array(w);
	for (size_t i = 0; i < r->n_task_lists; i++) {
		const struct dump_list *l = &r->task_lists[i];
		json_writer__begin_object(w);
		json_writer__kv_string(w, "via", dump_via_name(l->via));
		json_writer__kv_string(w, "found_through", dump_via_text(r, l, why, sizeof(why)));
		const struct dump_task *owner = dump_list_owner(r, l);
		json_writer__kv_u64_or_null(w, "thread", l->via == DUMP_VIA_CONTEXT ||
					    l->via == DUMP_VIA_TLS ||
					    (l->via == DUMP_VIA_OWNER && !l->owner_task),
					    (uint64_t)l->tid);
		/* a LocalSet a task's future owns: that task */
		json_writer__kv_string(w, "owner_task", owner ? dump_task_ident(owner, ident, sizeof(ident))
							      : NULL);
		json_writer__kv_u64(w, "threads", l->threads);
		json_writer__kv_string(w, "runtime", l->runtime);
		json_writer__kv_u64(w, "id", l->id);
		snprintf(hex, sizeof(hex), "0x%" PRIx64, l->addr);
		json_writer__kv_string(w, "address", hex);
		json_writer__kv_u64(w, "shards", l->shards);
		json_writer__kv_u64(w, "shards_walked", l->walked);
		json_writer__kv_u64(w, "tasks", l->tasks);
		json_writer__kv_bool(w, "complete", l->complete);
		json_writer__kv_string(w, "note", l->note);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	json_writer__key(w, "tasks");
	json_writer__begin_array(w);
	for (size_t i = 0; i < r->n; i++) {
		const struct dump_task *t = &r->tasks[i];
		json_writer__begin_object(w);
		json_writer__kv_string(w, "task", dump_task_ident(t, ident, sizeof(ident)));
		json_writer__kv_u64_or_null(w, "id", t->id, t->id);
		snprintf(hex, sizeof(hex), "0x%" PRIx64, t->header);
		json_writer__kv_string(w, "header", hex);
		json_writer__kv_string(w, "name", t->name);
		json_writer__kv_string(w, "state", t->state);
		json_writer__kv_string(w, "note", t->note);
		json_writer__kv_bool(w, "seen", t->seen);
		/* the task list it was found in: 1 is task_lists[0] ("task list 1") */
		json_writer__kv_u64_or_null(w, "list", t->list != 0, t->list);
		chain_json(w, &t->stack);
		join_sets_json(w, r, t);
		/* an idle Tokio task: the wakers of it held (and abort handles),
		 * 0 when nothing can wake it again; null not known */
		json_writer__kv_u64_or_null(w, "wakers", t->wakers_known, t->wakers);
		/* a timer's deadline (CLOCK_MONOTONIC ns) and how far off it was */
		json_writer__kv_u64_or_null(w, "deadline_ns", t->wakes_at_ns, t->wakes_at_ns);
		json_writer__key(w, "wakes_in_ns");
		if (t->wakes_at_ns) {
			uint64_t now = clock_ns(CLOCK_MONOTONIC);
			json_writer__u64(w, t->wakes_at_ns > now ? t->wakes_at_ns - now : 0);
		} else {
			json_writer__null(w);
		}
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	/* the threads in a block_on: "block_on": [{"thread", "comm", "function",
	 * "name", "location" ("dwarf", "frame_scan", or null: not found),
	 * "address", "note", "frames", "leaf", ...}] */
	json_writer__key(w, "block_on");
	json_writer__begin_array(w);
	for (size_t i = 0; i < r->n_block_ons; i++) {
		const struct dump_block_on *b = &r->block_ons[i];
		json_writer__begin_object(w);
		json_writer__kv_u64(w, "thread", (uint64_t)b->tid);
		json_writer__kv_string(w, "comm", b->comm);
		json_writer__kv_string(w, "function", b->function);
		json_writer__kv_string(w, "name", b->name);
		json_writer__kv_string(w, "location", b->located);
		json_writer__key(w, "address");
		if (b->addr) {
			snprintf(hex, sizeof(hex), "0x%" PRIx64, b->addr);
			json_writer__string(w, hex);
		} else {
			json_writer__null(w);
		}
		json_writer__kv_string(w, "note", b->note);
		chain_json(w, &b->stack);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	/* "threads_running": [{"thread", "comm"}]: on a CPU through every read,
	 * their stacks not read (a block_on they may drive not listed) */
	json_writer__key(w, "threads_running");
	json_writer__begin_array(w);
	for (size_t i = 0; i < r->n_running; i++) {
		json_writer__begin_object(w);
		json_writer__kv_u64(w, "thread", (uint64_t)r->running[i].tid);
		json_writer__kv_string(w, "comm", r->running[i].comm);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	json_writer__end_object(w);
	int err = json_writer__finish(w);
	json_writer__free(w);
	return err;
}


/* JSON of the await profile: {"samples", "interval_ns", "late" (ticks
 * missed: a dump took longer than the interval), "chains": [{"stack"
 * (';' between: root, frames, awaited), "ns", "tasks", "task_samples"}]}. */
static int profile_json(struct await_profile *p, uint64_t every, uint64_t late)
{
	struct json_writer *w = json_writer__new(stdout, true);
	size_t n;
	const struct await_chain *c = await_profile__chains(p, &n);

	if (!w)
		return -errno;
	json_writer__begin_object(w);
	json_writer__kv_u64(w, "samples", await_profile__samples(p));
	json_writer__kv_u64(w, "interval_ns", every);
	json_writer__kv_u64(w, "late", late);
	json_writer__key(w, "chains");
	json_writer__begin_array(w);
	for (size_t i = 0; i < n; i++) {
		json_writer__begin_object(w);
		json_writer__kv_string(w, "stack", c[i].stack);
		json_writer__kv_u64(w, "ns", c[i].ns);
		json_writer__kv_u64(w, "tasks", c[i].tasks);
		json_writer__kv_u64(w, "task_samples", c[i].task_samples);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	json_writer__end_object(w);
	int err = json_writer__finish(w);
	json_writer__free(w);
	return err;
}

/* dump --every: a dump every a->every_ns for --duration (10 s), or until
 * stopped; the chains counted; the profile printed in a->format. A dump
 * longer than the interval skips the ticks it overran (counted as late). */
static int await_profile_run(struct dump_args *a)
{
	struct dump_opts o = *a->o;
	uint64_t every = a->every_ns, total = a->duration_ns ? a->duration_ns : 10000000000ull;
	uint64_t start = clock_ns(CLOCK_MONOTONIC), next = start, late = 0, last_note = start;
	struct await_profile *p = await_profile__new(every);
	bool tty = isatty(STDERR_FILENO);
	char err[1024] = "";
	int ret = 0;

	if (!p) {
		cli_error("out of memory");
		return 1;
	}
	o.duration = 0.3;   /* the fallback recording's, when CONTEXT finds no runtime */
	/* the binary and its DWARF kept open: their caches serve every sample */
	char exe[64];
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)o.pid);
	o.img = elf_image__open(exe);
	char note[600];
	if (o.img && o.img->debug_refused[0]) {
		cli_error("%s", o.img->debug_refused);
		elf_image__free(o.img);
		free(p);
		return 1;
	}
	if (elf_image__debug_note(o.img, note, sizeof(note)))
		cli_error("%s", note);
	o.dt = o.img ? dwarf_types__open_fd(elf_image__dwarf_fd(o.img)) : NULL;
	o.threads = proc_threads__open(o.pid, err, sizeof(err));   /* NULL: each dump loads it */
	while (!stop) {
		struct dump_result res;
		uint64_t now = clock_ns(CLOCK_MONOTONIC);

		if (now - start >= total)
			break;
		if (now < next) {
			struct timespec ts = { .tv_sec = (time_t)((next - now) / 1000000000ull),
					       .tv_nsec = (long)((next - now) % 1000000000ull) };
			nanosleep(&ts, NULL);
			continue;
		}
		ret = dump_run(&o, &res, err, sizeof(err));
		if (ret) {
			if (!await_profile__samples(p)) {
				cli_error("%s", err);
				ret = 1;
				goto out;
			}
			/* the target ended while sampling: what was sampled stands */
			cli_error("warning: sampling stopped after %llu samples: %s",
				  (unsigned long long)await_profile__samples(p), err);
			break;
		}
		ret = await_profile__add(p, &res);
		dump_result__clear(&res);
		if (ret) {
			cli_error("out of memory after %llu samples",
				  (unsigned long long)await_profile__samples(p));
			ret = 1;
			goto out;
		}
		next += every;
		now = clock_ns(CLOCK_MONOTONIC);
		while (next <= now) {   /* overran: the ticks missed */
			next += every;
			late++;
		}
		if (now - last_note >= 1000000000ull) {
			/* long work shows progress (a line a second, on a terminal in place) */
			last_note = now;
			fprintf(stderr, "%sasyncscope: %llu samples, %.0f of %.0f s%s", tty ? "\r" : "",
				(unsigned long long)await_profile__samples(p), (double)(now - start) / 1e9,
				(double)total / 1e9, tty ? " " : "\n");
		}
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
	if (late)
		cli_error("warning: %llu of the %llu ticks were late (a dump took longer than %.0f ms): "
			  "use a longer --every", (unsigned long long)late,
			  (unsigned long long)(await_profile__samples(p) + late), (double)every / 1e6);
	if (cli_redirect_stdout(a->output)) {
		ret = 1;
		goto out;
	}
	if (!strcmp(a->format, "json"))
		ret = profile_json(p, every, late);
	else if (!strcmp(a->format, "folded"))
		ret = await_profile__write_folded(p, stdout);
	else
		ret = await_profile__write_table(p, stdout, 50);
	if (!ret)
		ret = cli_close_output(stdout);
	if (ret) {
		cli_error("writing the await profile: %s", cli_write_error(ret));
		ret = 1;
	}
out:
	await_profile__free(p);
	proc_threads__close(o.threads);
	dwarf_types__free(o.dt);
	elf_image__free(o.img);
	return ret;
}

int cmd_dump(int argc, char **argv)
{
	struct dump_opts o = { .duration = 0.3, .stop = &stop };
	struct dump_result res;
	struct dump_args a = { .o = &o, .format = "text", .output = "-" };
	const char *format;
	char err[1024] = "";
	int first, ret = cli_parse(&dump_command, argc, argv, on_opt, &a, &first);

	if (ret >= 0)
		return ret;
	format = a.format;
	if (!o.pid)
		return cli_usage_error(&dump_command, "dump needs -p PID");
	if (first != argc)
		return cli_usage_error(&dump_command, "dump takes no operand, not '%s'", argv[first]);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGQUIT, on_signal);
	if (a.every_ns)
		return await_profile_run(&a);
	if (!strcmp(format, "folded"))
		return cli_usage_error(&dump_command, "--format folded needs --every INTERVAL (the "
				       "await profile)");
	ret = dump_run(&o, &res, err, sizeof(err));
	if (ret) {
		cli_error("%s", err);
		return 1;
	}
	if (res.debug_note)
		cli_error("%s", res.debug_note);
	if (cli_redirect_stdout(a.output)) {
		dump_result__clear(&res);
		return 1;
	}
	if (!strcmp(format, "json")) {
		ret = print_json(&res);
	} else {
		view = cli_text_view(stdout);
		print_text(&res);
		ret = 0;
	}
	dump_result__clear(&res);
	if (!ret)
		ret = cli_close_output(stdout);   /* -o FILE: put in place now */
	if (ret) {
		cli_error("writing the dump: %s", strerror(-ret));
		return 1;
	}
	return 0;
}
