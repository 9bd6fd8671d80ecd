/* The ways into a live program's tasks by its events (dump_int.h): the
 * tasks a source of events saw polled and not freed by its end (a trace,
 * or a short live recording of the target when no thread's CONTEXT leads
 * to a runtime), and the probe plan's poll copies they are of. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/task_model.h"
#include "dump/dump_int.h"
#include "pipeline/pipeline.h"
#include "record/recorder.h"

/* The plan's poll copies: what a vtable's poll pointer may be. 0 or -ENOMEM. */
int dump_add_copies(struct ctx *c, const struct as_probe *probes, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct as_probe *p = &probes[i];
		if (p->role != AS_ROLE_POLL || u64map__get(&c->copy_by_addr, p->addr, NULL))
			continue;
		struct poll_copy *pc = realloc(c->copies, (c->n_copies + 1) * sizeof(*pc));
		if (!pc)
			return -ENOMEM;
		c->copies = pc;
		pc = &c->copies[c->n_copies];
		memset(pc, 0, sizeof(*pc));
		pc->addr = p->addr;
		if (p->future && *p->future && !(pc->future = strdup(p->future)))
			return -ENOMEM;
		c->n_copies++;
		if (u64map__set(&c->copy_by_addr, p->addr, c->n_copies))
			return -ENOMEM;
	}
	return 0;
}

/* Discovery from a source of events: the tasks it saw polled and not freed
 * by its end (their memory may be reused), as the task model tells a task's
 * life (an address freed and polled again is a new task). The source is a
 * live recording (dump_run), a trace, or later memory discovery. */
struct polled {
	struct ctx *c;
	struct u64map freed;      /* headers freed since their last poll */
	int err;
};

static void polled_begin(void *ctx, struct tm_task *t, struct tm_thread *th,
			 const struct as_event *ev)
{
	struct polled *p = ctx;

	(void)th;
	if (p->err || !t->header)
		return;
	u64map__del(&p->freed, t->header);   /* the address was reused */
	if (dump_add_task(p->c, t->header, ev->other ? ev->other : t->tokio_id,
		     t->name && *t->name ? t->name : NULL, true))
		p->err = -ENOMEM;
}

static void polled_gone(void *ctx, struct tm_task *t, uint64_t ts, bool freed)
{
	struct polled *p = ctx;

	(void)ts;
	if (!p->err && freed && t->polled && u64map__set(&p->freed, t->header, 1))
		p->err = -ENOMEM;
}

static const struct tm_ops polled_ops = { .poll_begin = polled_begin, .gone = polled_gone };

int dump_discover_polled(struct ctx *c, struct as_source *src, char *err, size_t errlen)
{
	const struct as_trace_meta *meta = as_source__meta(src);
	struct polled p = { .c = c };
	struct task_model *m = task_model__new(meta);
	struct pipeline_result res;
	struct as_sink sink;
	int n, ret = 0;

	if (!m || dump_add_copies(c, meta->probes, meta->n_probes) ||
	    task_model__observe(m, &polled_ops, &p, 0, NULL, 0, NULL))
		goto nomem;
	sink = task_model__sink(m);
	n = pipeline_run(src, &sink, 1, &(struct pipeline_opts){ .partial = true }, &res);
	if ((n == -ENOMEM && res.failed) || p.err)
		goto nomem;
	if (n < 0) {
		snprintf(err, errlen, "%s", as_source__error(src));
		ret = n;
		goto out;
	}
	/* drop the tasks freed before the end (their memory may be reused) */
	for (size_t i = 0; i < c->res->n;) {
		struct dump_task *t = &c->res->tasks[i];
		if (!u64map__get(&p.freed, t->header, NULL)) {
			i++;
			continue;
		}
		u64map__del(&c->task_by_header, t->header);
		free(t->name);
		c->res->seen--;
		c->res->tasks[i] = c->res->tasks[--c->res->n];
		if (i < c->res->n)
			u64map__set(&c->task_by_header, c->res->tasks[i].header, i + 1);
	}
	goto out;
nomem:
	snprintf(err, errlen, "out of memory");
	ret = -ENOMEM;
out:
	task_model__free(m);
	u64map__clear(&p.freed);
	return ret;
}

/* The tasks polled during a short recording of the target, read live
 * from the recording session (no trace file). Its notices (the "attached"
 * line) are not part of a dump: dropped; its errors come back in err. */
int dump_discover_by_recording(struct ctx *c, const struct dump_opts *o, char *err,
				 size_t errlen)
{
	struct recorder_opts ro = {
		.duration = o->duration > 0 ? o->duration : 0.3, .pid = o->pid, .stop = o->stop,
		.quiet = true, .notice = NULL,
	};
	static volatile sig_atomic_t never;
	struct rec_session *rs = NULL;
	struct as_source src = { 0 };
	int ret;

	if (!ro.stop)
		ro.stop = &never;
	ret = rec_session__open(&ro, &rs, err, errlen);
	if (ret)
		return ret;
	rec_session__source(rs, &src);
	ret = dump_discover_polled(c, &src, err, errlen);
	as_source__free(&src);
	return ret;
}

