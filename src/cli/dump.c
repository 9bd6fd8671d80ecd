/* `asyncscope dump -p PID [--format text|json] [--duration SEC]`: the async
 * backtrace of every live task of a Tokio program, like a thread dump,
 * without stopping it (src/dump/dump.h finds and reads the tasks; this file
 * parses arguments and prints). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "dump/dump.h"
#include "util/json.h"

#define USAGE "usage: asyncscope dump -p PID [--format text|json] [--duration SEC]"

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
static void print_text(const struct dump_result *r)
{
	printf("asyncscope dump of pid %d (%s): %zu task%s\n", r->pid, r->target, r->n,
	       r->n == 1 ? "" : "s");
	if (r->walk_cut)
		printf("(the task list changed while it was walked: some tasks may be missing)\n");
	for (size_t i = 0; i < r->n; i++) {
		const struct dump_task *t = &r->tasks[i];
		const struct async_stack *s = &t->stack;
		char ident[24];

		printf("\ntask %s %s  [%s]\n", dump_task_ident(t, ident, sizeof(ident)),
		       t->name ? t->name : "?", t->state);
		if (t->note) {
			printf("    (%s)\n", t->note);
			continue;
		}
		for (size_t k = 0; k < s->n; k++) {
			const struct async_frame *f = &s->frames[k];
			const char *note = frame_note(f);
			printf("    %s at %s:%u", f->future, f->file ? f->file : "?", f->line);
			if (note)
				printf("  (%s)", note);
			else if (k + 1 == s->n && s->leaf)
				printf("  (awaiting %s)", s->leaf);
			printf("\n");
		}
		if (!s->n && s->leaf)
			printf("    %s  (not an async fn or block: no source location)\n", s->leaf);
		if (s->truncated)
			printf("    ... (deeper frames not shown)\n");
		if (s->error)
			printf("    ... (could not read further: %s)\n", strerror(-s->error));
	}
}

/* JSON: {"pid", "target", "tasks": [{"task" ("#3" or "~5", as in the
 * text), "id", "header", "name", "state", "note",
 * "seen", "frames": [{"future", "type", "file", "line", "state"}], "leaf"}],
 * "list_complete"}; header as "0x..." hex; id, name, note, leaf null when
 * unknown. */
static int print_json(const struct dump_result *r)
{
	struct json_writer *w = json_writer__new(stdout, true);
	char hex[32], ident[24];

	if (!w)
		return -errno;
	json_writer__begin_object(w);
	json_writer__kv_u64(w, "pid", (uint64_t)r->pid);
	json_writer__kv_string(w, "target", r->target);
	json_writer__kv_bool(w, "list_complete", !r->walk_cut);
	json_writer__key(w, "tasks");
	json_writer__begin_array(w);
	for (size_t i = 0; i < r->n; i++) {
		const struct dump_task *t = &r->tasks[i];
		json_writer__begin_object(w);
		json_writer__kv_string(w, "task", dump_task_ident(t, ident, sizeof(ident)));
		json_writer__key(w, "id");
		if (t->id)
			json_writer__u64(w, t->id);
		else
			json_writer__null(w);
		snprintf(hex, sizeof(hex), "0x%" PRIx64, t->header);
		json_writer__kv_string(w, "header", hex);
		json_writer__kv_string(w, "name", t->name);
		json_writer__kv_string(w, "state", t->state);
		json_writer__kv_string(w, "note", t->note);
		json_writer__kv_bool(w, "seen", t->seen);
		json_writer__key(w, "frames");
		json_writer__begin_array(w);
		for (size_t k = 0; k < t->stack.n; k++) {
			const struct async_frame *f = &t->stack.frames[k];
			json_writer__begin_object(w);
			json_writer__kv_string(w, "future", f->future);
			json_writer__kv_string(w, "type", f->type);
			json_writer__kv_string(w, "file", f->file);
			json_writer__kv_u64(w, "line", f->line);
			json_writer__kv_string(w, "state", f->state);
			json_writer__end_object(w);
		}
		json_writer__end_array(w);
		json_writer__kv_string(w, "leaf", t->stack.leaf);
		json_writer__kv_bool(w, "truncated", t->stack.truncated);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	json_writer__end_object(w);
	int err = json_writer__finish(w);
	json_writer__free(w);
	return err;
}

int cmd_dump(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "format", required_argument, NULL, 'f' },
		{ "duration", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct dump_opts o = { .duration = 0.3, .stop = &stop };
	struct dump_result res;
	const char *format = "text";
	char err[1024] = "", *end;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "p:f:d:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			errno = 0;
			long pid = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || pid <= 0 || pid > INT32_MAX) {
				cli_error("bad pid '%s': %s", optarg, USAGE);
				return 2;
			}
			o.pid = (pid_t)pid;
			break;
		case 'f':
			format = optarg;
			break;
		case 'd':
			errno = 0;
			o.duration = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(o.duration > 0) || o.duration > 3600) {
				cli_error("bad duration '%s': seconds, e.g. 0.3", optarg);
				return 2;
			}
			break;
		case 'h':
			printf("%s\n", USAGE);
			return 0;
		default:
			return 2;
		}
	}
	if (strcmp(format, "text") && strcmp(format, "json")) {
		cli_error("unknown format '%s': use --format text or --format json", format);
		return 2;
	}
	if (!o.pid || optind != argc) {
		cli_error("%s", USAGE);
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	ret = dump_run(&o, &res, err, sizeof(err));
	if (ret) {
		cli_error("%s", err);
		return 1;
	}
	if (!strcmp(format, "json")) {
		ret = print_json(&res);
	} else {
		print_text(&res);
		ret = fflush(stdout) ? -EIO : 0;
	}
	dump_result__clear(&res);
	if (ret) {
		cli_error("writing the dump: %s", strerror(-ret));
		return 1;
	}
	return 0;
}
