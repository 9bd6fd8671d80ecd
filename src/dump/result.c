/* What a dump's results say of themselves (dump.h): whether the lists are
 * complete and why not, how each was found, a task's identity; freeing. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump/block_on.h"
#include "dump/dump.h"
#include "util/task_id.h"

bool dump_list_complete(const struct dump_result *r)
{
	return !r->walk_cut && !r->list_note && !r->layout_unverified && !r->lists_unread &&
	       r->shards_walked == r->shards &&
	       (!r->lists_without_tasks || (r->heap_scanned && !r->heap_scan_cut));
}

const char *dump_list_status(const struct dump_result *r, char *buf, size_t len)
{
	struct dump_result lists = *r;

	if (dump_list_complete(r))
		return NULL;
	lists.lists_without_tasks = 0;
	if (dump_list_complete(&lists)) {
		snprintf(buf, len, "%zu task list%s the program created %s not found (%s)",
			 r->lists_without_tasks, r->lists_without_tasks == 1 ? "" : "s",
			 r->lists_without_tasks == 1 ? "was" : "were",
			 r->heap_scan_cut ? "the heap scan stopped at 1 GiB" : "the heap was not scanned");
		return buf;
	}
	if (!r->lists && !r->layout_unverified)
		snprintf(buf, len, "the task list changed while it was walked");
	else if (r->layout_unverified && !r->shards)
		snprintf(buf, len, "%s: only the shards of the tasks found were walked, of an "
			 "unknown number", r->list_note);
	else if (r->layout_unverified)
		snprintf(buf, len, "%s: only the shards of the tasks found were walked, %zu of "
			 "%zu (tokio's count for the worker threads seen)", r->list_note,
			 r->shards_walked, r->shards);
	else if (!r->shards)   /* one list per runtime (tokio < 1.35, LocalSet) */
		snprintf(buf, len, "%s", r->list_note ? r->list_note : "a walk was cut");
	else
		snprintf(buf, len, "%s: %zu of %zu shards walked",
			 r->list_note ? r->list_note : "a walk was cut", r->shards_walked, r->shards);
	return buf;
}

const char *dump_via_name(enum dump_via via)
{
	switch (via) {
	case DUMP_VIA_CONTEXT: return "context";
	case DUMP_VIA_POLL: return "poll";
	case DUMP_VIA_HEAP: return "heap";
	case DUMP_VIA_STATIC: return "static";
	case DUMP_VIA_TLS: return "thread_local";
	case DUMP_VIA_OWNER: return "owner";
	}
	return "?";
}

const struct dump_task *dump_list_owner(const struct dump_result *r, const struct dump_list *l)
{
	for (size_t i = 0; l->via == DUMP_VIA_OWNER && l->owner_task && i < r->n; i++)
		if (r->tasks[i].header == l->owner_task)
			return &r->tasks[i];
	return NULL;
}

const char *dump_via_text(const struct dump_result *r, const struct dump_list *l, char *buf,
			  size_t len)
{
	const struct dump_task *owner = dump_list_owner(r, l);
	char ident[24];

	if (owner) {
		snprintf(buf, len, "the future of task %s (%s) that owns it",
			 dump_task_ident(owner, ident, sizeof(ident)), owner->name ? owner->name : "?");
		return buf;
	}
	if (l->via == DUMP_VIA_CONTEXT)
		snprintf(buf, len, "the thread-local CONTEXT of thread %d (%s)", (int)l->tid, l->comm);
	else if (l->via == DUMP_VIA_STATIC)
		snprintf(buf, len, "the static %s", l->source ? l->source : "?");
	else if (l->via == DUMP_VIA_TLS)
		snprintf(buf, len, "the thread-local %s of thread %d (%s)", l->source ? l->source : "?",
			 (int)l->tid, l->comm);
	else if (l->via == DUMP_VIA_OWNER)
		snprintf(buf, len, "the block_on future of thread %d (%s) that owns it", (int)l->tid,
			 l->comm);
	else if (l->via == DUMP_VIA_HEAP)
		snprintf(buf, len, "a task found by a heap scan");
	else
		snprintf(buf, len, "a task polled while tracing");
	return buf;
}

const char *dump_task_ident(const struct dump_task *t, char *buf, size_t len)
{
	return task_id_format(buf, len, t->id, t->seq, 0);
}

const char *dump_child_ident(const struct dump_result *r, const struct dump_child *ch, char *buf,
			     size_t len)
{
	if (ch->task)
		return dump_task_ident(&r->tasks[ch->task - 1], buf, len);
	return task_id_format(buf, len, ch->id, 0, 0);
}

void dump_result__clear(struct dump_result *res)
{
	free(res->debug_note);
	for (size_t i = 0; i < res->n; i++) {
		free(res->tasks[i].name);
		async_stack__clear(&res->tasks[i].stack);
		for (size_t j = 0; j < res->tasks[i].n_join_sets; j++)
			free(res->tasks[i].join_sets[j].tasks);
		free(res->tasks[i].join_sets);
	}
	free(res->tasks);
	dump_block_ons__free(res->block_ons, res->n_block_ons);
	free(res->running);
	free(res->task_lists);
	free(res->target);
	memset(res, 0, sizeof(*res));
}
