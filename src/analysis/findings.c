/* Findings (see findings.h): candidates gathered per (kind, task name[,
 * cause]) from the analyses' results, then worded, ranked and capped.
 * Depends on the analyses' result types and util/ only. */
#include "analysis/findings.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/blocking.h"
#include "analysis/futures.h"
#include "analysis/live.h"
#include "analysis/tasks.h"
#include "util/fmt.h"
#include "util/rust_name.h"
#include "util/task_id.h"
#include "util/u64map.h"

#define TEN_X 10                   /* from the threshold to an error */
#define SELF_WAKE_MIN 10           /* self wakes before a task is said to wake itself */
#define BUSY_POLL_MIN 1000         /* self wakes of a spinning task */
#define WORKER_BUSY_PCT 90
#define WORKER_MIN_NS 100000000ull /* a trace this long for the worker findings */
#define NEVER_PARKS_NS 1000000000ull
#define LIVE_STALL_NS 10000000000ull
#define CAUSES_PER_TASK 3          /* blocking causes made findings, per task */

enum fk {
	FK_LOST, FK_TRUNCATED, FK_BLOCKING, FK_LONG_POLL, FK_NEVER_WOKEN, FK_LOST_WAKER,
	FK_STARVED, FK_BUSY_POLL, FK_SELF_WAKE, FK_PREEMPTED, FK_WORKER_BUSY,
	FK_WORKER_NEVER_PARKS, FK_FOLDED, FK_ANOMALIES, FK_NO_WAKES, FK_NO_OFFCPU, FK_HANDOFF,
	FK__MAX,
};

static const char *const kind_names[FK__MAX] = {
	[FK_LOST] = "lost_events", [FK_TRUNCATED] = "truncated", [FK_BLOCKING] = "blocking",
	[FK_LONG_POLL] = "long_poll", [FK_NEVER_WOKEN] = "never_woken", [FK_STARVED] = "starved",
	[FK_BUSY_POLL] = "busy_poll", [FK_SELF_WAKE] = "self_wake", [FK_PREEMPTED] = "preempted",
	[FK_WORKER_BUSY] = "worker_busy", [FK_WORKER_NEVER_PARKS] = "worker_never_parks",
	[FK_FOLDED] = "tasks_folded", [FK_ANOMALIES] = "anomalies", [FK_NO_WAKES] = "no_wakes",
	[FK_NO_OFFCPU] = "no_offcpu", [FK_HANDOFF] = "block_in_place",
	[FK_LOST_WAKER] = "lost_waker",
};

/* One finding before it is worded: sums over the tasks of one name. */
struct cand {
	enum fk kind;
	const char *name;            /* the tasks' name, the key */
	const char *file, *call, *kernel, *user, *futures, *awaitee;
	uint32_t line;
	uint64_t tasks;
	uint64_t sum_ns;             /* impact over all its tasks */
	uint64_t max_ns;             /* the worst task's metric */
	uint64_t count, count2;      /* kind's counts (intervals, polls, wakes; never_woken:
	                                count2 its tasks a waker of which was held) */
	uint64_t since_ns;           /* never_woken: the worst's last poll, relative */
	bool flag;                   /* never_woken: until the end; long_poll: ran on CPU */
	bool once;                   /* never_woken: polled once */
	bool before;                 /* never_woken: idle since before the recording;
	                                long_poll: in that poll since then */
	/* the worst task (or the thread) */
	uint64_t seq, tokio_id, header;
	uint32_t group, tid;
	const char *task_name, *thread;
};

struct findings {
	struct cand *c;
	size_t n, cap;
	struct u64map index;         /* key hash -> index + 1 */
	struct finding *out;
	size_t n_out;
	size_t counts[FINDING__MAX], omitted;
	char **strs;                 /* owned strings of the findings */
	size_t n_strs, cap_strs;
	const char *runtime;
	uint64_t long_poll_ns, starve_ns, stall_ns;
	bool wide, offcpu, live;
	uint64_t blocked_ns;         /* off CPU blocked in polls, all tasks */
	int width;
	size_t workers;
	const struct analysis *a;    /* findings__new()'s (NULL live) */
	int err;
};

/* ---------------------------------------------------------------- strings */

static const char *keep(struct findings *f, char *s)
{
	if (!s) {
		f->err = -ENOMEM;
		return "";
	}
	if (f->n_strs == f->cap_strs) {
		size_t c = f->cap_strs ? 2 * f->cap_strs : 64;
		char **v = realloc(f->strs, c * sizeof(*v));
		if (!v) {
			free(s);
			f->err = -ENOMEM;
			return "";
		}
		f->strs = v;
		f->cap_strs = c;
	}
	f->strs[f->n_strs++] = s;
	return s;
}

__attribute__((format(printf, 2, 3)))
static const char *fmt(struct findings *f, const char *format, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, format);
	if (vasprintf(&s, format, ap) < 0)
		s = NULL;
	va_end(ap);
	return keep(f, s);
}

/* name as the outputs show it (rust_name.h) */
static const char *disp(struct findings *f, const char *name)
{
	if (!name)
		return "(unknown)";
	return keep(f, rust_name_display(name, f->width, f->wide));
}

static const char *dur(char *buf, uint64_t ns)
{
	return fmt_duration(buf, FMT_DURATION_MAX, ns);
}

/* ------------------------------------------------------------- candidates */

static uint64_t hash_str(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return (h ^ 0xff) * 0x100000001b3ull;
}

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* The candidate of (kind, name, file, line, call, kernel): found, or made
 * zeroed with those (NULL when out of memory). */
static struct cand *cand(struct findings *f, enum fk kind, const char *name, const char *file,
			 uint32_t line, const char *call, const char *kernel)
{
	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)kind, v;

	h = hash_str(hash_str(hash_str(hash_str(h, name), file), call), kernel);
	h = (h ^ line) * 0x100000001b3ull;
	if (h == 0 || h == UINT64_MAX)
		h = 1;
	if (u64map__get(&f->index, h, &v)) {
		struct cand *c = &f->c[v - 1];
		if (c->kind == kind && same(c->name, name) && same(c->file, file) && c->line == line &&
		    same(c->call, call) && same(c->kernel, kernel))
			return c;
		h = 0;   /* a collision: a candidate of its own, not indexed */
	}
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 64;
		struct cand *nc = realloc(f->c, cap * sizeof(*nc));
		if (!nc)
			goto nomem;
		f->c = nc;
		f->cap = cap;
	}
	if (h && u64map__set(&f->index, h, f->n + 1))
		goto nomem;
	f->c[f->n] = (struct cand){ .kind = kind, .name = name, .file = file, .line = line,
				    .call = call, .kernel = kernel };
	return &f->c[f->n++];
nomem:
	f->err = -ENOMEM;
	return NULL;
}

/* Counts one more task into c; when metric is its worst, it becomes c's task. */
static void add_task(struct cand *c, uint64_t metric, uint64_t seq, uint64_t tokio_id,
		     uint64_t header, uint32_t group, const char *task_name)
{
	c->tasks++;
	if (c->tasks == 1 || metric > c->max_ns) {
		c->max_ns = metric;
		c->seq = seq;
		c->tokio_id = tokio_id;
		c->header = header;
		c->group = group;
		c->task_name = task_name;
	}
}

/* ------------------------------------------------------------------ trace */

/* The off-CPU time inside the polls of task seq: blocked, and preempted. */
static uint64_t offcpu_ns_of(const struct blocking_task *bt, size_t n, uint64_t seq,
			     uint64_t *preempted)
{
	uint64_t ns = 0;

	*preempted = 0;
	for (size_t i = 0; seq && i < n; i++)
		if (bt[i].seq == seq) {
			uint64_t p = bt[i].preempted_ns < bt[i].ns ? bt[i].preempted_ns : bt[i].ns;
			ns += bt[i].ns - p;
			*preempted += p;
		}
	return ns;
}

static void from_blocking(struct findings *f, struct blocking *b, const struct as_trace_meta *meta)
{
	const struct analysis *a = f->a;
	size_t n;
	const struct blocking_task *t = blocking__tasks(b, &n);
	const struct blocking_summary *s = blocking__summary(b);

	if (!s)
		return;
	/* off-CPU data: what the recorder says it took (format 11), else
	 * whether any interval came (a worker's parking, at least) */
	if (meta && (meta->recorded & AS_REC_KNOWN))
		f->offcpu = meta->recorded & AS_REC_OFFCPU;
	else
		f->offcpu = s->count || s->parked_count || s->runtime_count;
	for (size_t i = 0; t && i < n; i++) {
		const struct task_stats *row = t[i].seq ? analysis__task(a, t[i].seq) : NULL;
		/* in block_in_place: its worker's queue went to another thread */
		enum fk kind = row && row->handoffs ? FK_HANDOFF : FK_BLOCKING;
		size_t made = 0;

		/* a blocking-pool task blocks by design, on no worker */
		if (row ? row->pool : analysis__pool_name(a, t[i].name))
			continue;
		f->blocked_ns += t[i].ns - (t[i].preempted_ns < t[i].ns ? t[i].preempted_ns : t[i].ns);

		for (size_t k = 0; k < t[i].n_causes && made < CAUSES_PER_TASK; k++) {
			const struct blocking_cause *bc = &t[i].causes[k];
			uint64_t blocked = bc->ns - (bc->preempted_ns < bc->ns ? bc->preempted_ns : bc->ns);
			uint64_t n_blocked = bc->count;
			struct cand *c;

			if (blocked < f->long_poll_ns || bc->pool)
				continue;
			c = cand(f, bc->handoff ? FK_HANDOFF : kind, t[i].name, bc->file, bc->line,
				 bc->call, bc->kernel);
			if (!c)
				return;
			c->count2 = row ? row->handoffs : 0;
			c->user = bc->user;
			c->flag |= bc->cut;
			c->futures = c->futures ? c->futures : bc->futures;
			c->sum_ns += blocked;
			c->count += n_blocked;
			add_task(c, blocked, t[i].seq, t[i].tokio_id, t[i].task, 0, t[i].name);
			made++;
		}
		if (t[i].preempted_ns >= TEN_X * f->long_poll_ns) {
			struct cand *c = cand(f, FK_PREEMPTED, t[i].name, NULL, 0, NULL, NULL);

			if (!c)
				return;
			c->sum_ns += t[i].preempted_ns;
			add_task(c, t[i].preempted_ns, t[i].seq, t[i].tokio_id, t[i].task, 0, t[i].name);
		}
	}
}

/* Long polls, self wakes of a task row or a group (g: its index + 1). */
static void from_row(struct findings *f, const struct task_stats *t, const struct task_group *gr,
		     uint32_t g, const struct blocking_task *bt, size_t nbt)
{
	const char *name = t ? t->name : gr->name;
	uint64_t seq = t ? t->seq : 0, id = t ? t->tokio_id : 0, hdr = t ? t->header : 0;
	uint64_t max_poll = t ? t->max_poll_ns : gr->max_poll_ns;
	uint64_t long_polls = t ? t->long_polls : gr->long_polls;
	uint64_t wakes = t ? t->wakes : gr->wakes, self = t ? t->self_wakes : gr->self_wakes;
	uint64_t polls = t ? t->polls : gr->polls, pending = t ? t->pending_polls : gr->pending_polls;
	uint64_t busy = t ? t->busy_ns : gr->busy_ns;
	struct cand *c;

	/* a blocking-pool task's polls are long by design, on no worker; one
	 * in block_in_place gave its worker's queue to another thread */
	bool pool = analysis__pool_name(f->a, name), handoff = t && t->handoffs;

	if (long_polls && max_poll >= f->long_poll_ns && !pool && !handoff) {
		/* what blocked off-CPU time explains is a blocking finding's;
		 * preemption does not explain it away (the worker was held all
		 * the same), it is said */
		uint64_t preempted, blocked = t ? offcpu_ns_of(bt, nbt, seq, &preempted) : 0;

		if (!t)
			preempted = 0;
		if (!(f->offcpu && blocked >= max_poll / 2)) {
			if (!(c = cand(f, FK_LONG_POLL, name, NULL, 0, NULL, NULL)))
				return;
			c->count += long_polls;
			/* a poll begun before the recording: its off-CPU time unknown */
			c->before = t && t->before;
			c->flag = f->offcpu && !c->before;
			c->count2 += preempted;
			c->sum_ns += max_poll;
			add_task(c, max_poll, seq, id, hdr, g, name);
			if (gr)
				c->tasks += gr->tasks - 1;
		}
	}
	if (self >= SELF_WAKE_MIN && 2 * self > wakes) {
		bool spin = self >= BUSY_POLL_MIN && pending * 10 >= polls * 9;

		if (!(c = cand(f, spin ? FK_BUSY_POLL : FK_SELF_WAKE, name, NULL, 0, NULL, NULL)))
			return;
		c->count += self;
		c->count2 += wakes;
		c->sum_ns += busy;
		c->since_ns += polls;   /* polls, for the wording */
		add_task(c, self, seq, id, hdr, g, name);
		if (gr)
			c->tasks += gr->tasks - 1;
	}
}

/* The name of task seq's row, or of its group (1, 2, ...; 0 none) when the
 * task was folded into one; NULL when neither is known. */
static const char *row_name(const struct analysis *a, const struct task_stats *t, uint32_t group)
{
	size_t ng;
	const struct task_group *g = analysis__groups(a, &ng);

	return t ? t->name : group && group <= ng ? g[group - 1].name : NULL;
}

static void from_stalls(struct findings *f, const struct analysis *a, const struct futures *fu)
{
	const struct summary *s = analysis__summary(a);
	size_t n;
	const struct stall *st = analysis__stalled(a, &n);

	for (size_t i = 0; i < n; i++) {
		const struct task_stats *t = analysis__task(a, st[i].seq);
		const char *name = row_name(a, t, st[i].group);
		bool dropped = false;

		if (!st[i].until_end) {
			/* woken later, or dropped while idle: its FREE ended the
			 * stall shown and nothing came after (never Ready) */
			uint64_t end = s->start_ns + st[i].since_ns + st[i].stalled_ns;

			dropped = t && t->state == TASK_STATE_COMPLETED && !t->ready_polls &&
				  t->last_ns <= end + 1000;
			if (!dropped)
				continue;
		}
		/* what held it when the recording ended, when the recorder read it:
		 * nothing (it can never be woken again), or a waker (it waits) */
		bool known = st[i].until_end && t && t->wakers_known;
		struct cand *c = cand(f, known && !t->wakers ? FK_LOST_WAKER : FK_NEVER_WOKEN, name,
				      NULL, 0, NULL, NULL);

		if (!c)
			return;
		c->count2 += known && t->wakers;
		if (!c->tasks || st[i].stalled_ns > c->max_ns) {
			const struct futures_parked *p = fu ? futures__parked_task(fu, st[i].seq) : NULL;

			c->flag = st[i].until_end;
			c->since_ns = st[i].since_ns;
			c->once = t && t->polls == 1;
			c->before = t && t->before;
			c->file = NULL;
			c->line = 0;
			c->awaitee = NULL;
			if (p && p->n_chain) {
				const struct futures_link *l = &p->chain[p->n_chain - 1];
				c->file = l->file;
				c->line = l->line;
				c->awaitee = l->awaitee;
				c->futures = l->name;
			}
		}
		c->sum_ns += st[i].stalled_ns;
		add_task(c, st[i].stalled_ns, st[i].seq, t ? t->tokio_id : 0, t ? t->header : 0,
			 t ? 0 : st[i].group, name);
	}
}

static void from_starved(struct findings *f, const struct analysis *a)
{
	size_t n;
	const struct starve *sv = analysis__starved(a, &n);

	for (size_t i = 0; i < n; i++) {
		const struct task_stats *t = analysis__task(a, sv[i].seq);
		const char *name = row_name(a, t, sv[i].group);
		struct cand *c = cand(f, FK_STARVED, name, NULL, 0, NULL, NULL);

		if (!c)
			return;
		c->count += sv[i].count;
		c->sum_ns += sv[i].max_wait_ns;
		add_task(c, sv[i].max_wait_ns, sv[i].seq, t ? t->tokio_id : 0, t ? t->header : 0,
			 t ? 0 : sv[i].group, name);
	}
}

static void from_workers(struct findings *f, const struct analysis *a)
{
	const struct summary *s = analysis__summary(a);
	size_t n;
	const struct worker_stats *w = analysis__workers(a, &n);
	bool parks_seen = false;

	for (size_t i = 0; i < n; i++)
		parks_seen |= w[i].parks > 0;
	f->workers = 0;
	for (size_t i = 0; i < n; i++)
		f->workers += w[i].polls > 0;
	if (s->duration_ns < WORKER_MIN_NS)
		return;
	for (size_t i = 0; i < n; i++) {
		struct cand *c = NULL;

		if (!w[i].polls)
			continue;
		/* busy mostly blocked off CPU: the blocking findings say it */
		if (w[i].busy_ns * 100 >= (uint64_t)WORKER_BUSY_PCT * s->duration_ns &&
		    f->blocked_ns < w[i].busy_ns / 2)
			c = cand(f, FK_WORKER_BUSY, NULL, NULL, w[i].tid, NULL, NULL);
		else if (!w[i].parks && parks_seen && s->duration_ns >= NEVER_PARKS_NS)
			c = cand(f, FK_WORKER_NEVER_PARKS, NULL, NULL, w[i].tid, NULL, NULL);
		else
			continue;
		if (!c)
			return;
		c->tid = w[i].tid;
		c->thread = w[i].name;
		c->sum_ns = w[i].busy_ns;
		c->max_ns = s->duration_ns;
		c->count = w[i].parks;
	}
}

static void from_trace(struct findings *f, const struct findings_input *in)
{
	const struct summary *s = analysis__summary(in->analysis);
	uint64_t lost = in->end ? in->end->lost : s->lost;
	uint64_t missed = in->end ? in->end->missed : s->missed;
	struct cand *c;

	if ((lost || missed) && (c = cand(f, FK_LOST, NULL, NULL, 0, NULL, NULL))) {
		c->count = lost;
		c->count2 = missed;
		c->max_ns = s->events;
		c->flag = in->truncated;
	}
	if (in->truncated && (c = cand(f, FK_TRUNCATED, NULL, NULL, 0, NULL, NULL))) {
		c->count = s->events;
		c->flag = in->end && in->end->counts_lower_bound;
	}
	if (s->folded_live_tasks && (c = cand(f, FK_FOLDED, NULL, NULL, 0, NULL, NULL))) {
		c->count = s->folded_live_tasks;
		c->count2 = s->max_live_tasks;
		c->max_ns = s->folded_events;
	}
	if (s->anomalies && (c = cand(f, FK_ANOMALIES, NULL, NULL, 0, NULL, NULL))) {
		c->count = s->anomalies;
		c->count2 = s->events;
	}
	if (!as_meta_profile(in->meta) && analysis__wakes_unrecorded(in->analysis, in->meta))
		cand(f, FK_NO_WAKES, NULL, NULL, 0, NULL, NULL);
}

/* ---------------------------------------------------------------- wording */

static const char *spawn_blocking(const struct findings *f)
{
	const char *r = f->runtime ? f->runtime : "";

	if (strstr(r, "async-std"))
		return "async_std::task::spawn_blocking";
	if (strstr(r, "smol") || strstr(r, "async-executor"))
		return "blocking::unblock";
	return "tokio::task::spawn_blocking";
}

static bool has_prefix(const char *s, const char *const *pre)
{
	for (; s && *pre; pre++)
		if (!strncmp(s, *pre, strlen(*pre)))
			return true;
	return false;
}

/* One line for a blocking cause, by the kernel function it slept in and
 * the call the program made. */
static const char *blocking_advice(struct findings *f, const struct cand *c)
{
	static const char *const sleep[] = { "do_nanosleep", "hrtimer_nanosleep", "common_nsleep",
					     "clock_nanosleep", "__x64_sys_nanosleep", NULL };
	static const char *const futex[] = { "futex", "__futex", NULL };
	static const char *const file[] = {
		"ext4_", "xfs_", "btrfs_", "vfs_", "filemap_", "folio_wait", "wait_on_page",
		"io_schedule", "blkdev_", "nfs_", "fuse_", "__lock_page", "generic_file",
		"iomap_", "jbd2_", "f2fs_", "__filemap", "do_sys_open", "path_openat", NULL,
	};
	static const char *const fault[] = { "handle_mm_fault", "do_page_fault", "exc_page_fault",
					     "__do_fault", "do_swap_page", "filemap_fault",
					     "lock_mm_and_find_vma", "rwsem_down_read", NULL };
	static const char *const net[] = { "tcp_", "inet_", "sk_wait", "sock_", "unix_stream",
					   "udp_", "wait_woken", "__skb_wait", "inet6_", NULL };
	static const char *const poll[] = { "do_sys_poll", "do_select", "ep_poll", "do_epoll_wait",
					    "core_sys_select", NULL };
	static const char *const pipe[] = { "pipe_read", "pipe_write", "wait_for_partner", NULL };
	static const char *const child[] = { "do_wait", "kernel_wait4", NULL };
	const char *k = c->kernel, *sb = spawn_blocking(f), *r = f->runtime ? f->runtime : "";
	bool tokio = !strstr(r, "async-std") && !strstr(r, "smol");

	if (has_prefix(k, sleep) || (c->call && strstr(c->call, "sleep")))
		return fmt(f, "replace std::thread::sleep with %s", strstr(r, "async-std") ?
			   "async_std::task::sleep(d).await" : strstr(r, "smol") ?
			   "smol::Timer::after(d).await" : "tokio::time::sleep(d).await");
	if (has_prefix(k, futex))
		return fmt(f, "a blocking lock, condvar or channel waited (std::sync::Mutex, "
			   "parking_lot, mpsc recv, block_on): use %s, or hold locks briefly and "
			   "never across a wait", tokio ? "tokio::sync" : "async locks and channels");
	if (has_prefix(k, fault))
		return fmt(f, "page faults (mmap'd files, swapped or first-touched memory): keep hot "
			   "data resident, or do that work in %s", sb);
	if (has_prefix(k, file))
		return fmt(f, "blocking file I/O (std::fs): use %s, or run it in %s",
			   tokio ? "tokio::fs" : "the runtime's async file API", sb);
	if (has_prefix(k, net))
		return fmt(f, "a blocking socket call (std::net, a synchronous client): use %s, or "
			   "run it in %s", tokio ? "tokio::net" : "async sockets", sb);
	if (has_prefix(k, poll))
		return fmt(f, "a blocking poll/select/epoll_wait inside a task: register the "
			   "descriptor with the runtime (tokio::io::unix::AsyncFd), or run it in %s", sb);
	if (has_prefix(k, pipe))
		return fmt(f, "blocking pipe I/O (std::process, stdin): use %s, or run it in %s",
			   tokio ? "tokio::process / tokio::io" : "async pipes", sb);
	if (has_prefix(k, child))
		return fmt(f, "waiting for a child process (Child::wait): use %s",
			   tokio ? "tokio::process" : "an async process API");
	return fmt(f, "move the blocking call off the async workers: %s, or an async equivalent", sb);
}

/* "#3 name" for one task, "12 tasks name" for several; the thread for a worker. */
static const char *who(struct findings *f, const struct cand *c)
{
	char id[TASK_ID_MAX];

	if (c->tasks > 1)
		return fmt(f, "%" PRIu64 " tasks %s", c->tasks, disp(f, c->name));
	if (!c->tokio_id && !c->seq && !c->header)   /* a group's one task: no identity left */
		return fmt(f, "a task %s", disp(f, c->name));
	return fmt(f, "%s %s", task_id_format(id, sizeof(id), c->tokio_id, c->seq, c->header),
		   disp(f, c->name));
}

/* ", #3 the worst with 200 ms" for several tasks, "" for one. */
static const char *worst(struct findings *f, const struct cand *c, const char *what)
{
	char id[TASK_ID_MAX], d[FMT_DURATION_MAX];

	if (c->tasks <= 1 || (!c->tokio_id && !c->seq && !c->header))
		return "";
	return fmt(f, "; %s the worst, %s %s", task_id_format(id, sizeof(id), c->tokio_id, c->seq,
							      c->header), what, dur(d, c->max_ns));
}

/* " It is parked at FILE:LINE in FUTURE, awaiting TYPE." of a never-woken
 * task whose chain the future probes gave, else "". */
static const char *parked_at(struct findings *f, const struct cand *c)
{
	if (!c->file)
		return "";
	return fmt(f, " It is parked at %s:%" PRIu32 "%s%s.", c->file, c->line,
		   c->futures ? fmt(f, " in %s", disp(f, c->futures)) : "",
		   c->awaitee ? fmt(f, ", awaiting %s", disp(f, c->awaitee)) : "");
}

/* "Its last poll (its only one) returned Pending at +1.20 s", or for a task
 * idle since before the recording, when its last poll came. */
static const char *pending_since(struct findings *f, const struct cand *c)
{
	char d[FMT_DURATION_MAX];
	const char *its = c->tasks > 1 ? "The worst's" : "Its";

	if (c->before)
		return fmt(f, "%s last poll returned Pending before the recording began (no event "
			   "of it was recorded: the recorder found it in the program's memory at "
			   "the end)", its);
	return fmt(f, "%s last poll %sreturned Pending at +%s", its,
		   c->once ? "(its only one) " : "", dur(d, c->since_ns));
}

static void word(struct findings *f, const struct cand *c, struct finding *o)
{
	char d1[FMT_DURATION_MAX], d2[FMT_DURATION_MAX], d3[FMT_DURATION_MAX];
	const char *its = c->tasks > 1 ? "their" : "its", *sb = spawn_blocking(f);
	bool many = c->tasks > 1;

	*o = (struct finding){ .kind = kind_names[c->kind], .severity = FINDING_WARNING,
			       .has_task = c->tasks > 0, .task_id = c->tokio_id,
			       .task_seq = c->seq, .task_header = c->header,
			       .task_name = c->task_name, .task_group = c->group,
			       .tasks = c->tasks, .file = c->file, .line = c->line,
			       .weight_ns = c->sum_ns };
	switch (c->kind) {
	case FK_LOST: {
		bool big = (c->count + c->count2) * 100 >= (c->max_ns ? c->max_ns : 1);

		o->severity = big ? FINDING_ERROR : FINDING_WARNING;
		o->weight_ns = UINT64_MAX;
		o->title = fmt(f, "%s%" PRIu64 " events lost (ring buffer full) and %" PRIu64
			       " missed by the recorder: the figures undercount",
			       c->flag ? "at least " : "", c->count, c->count2);
		o->detail = fmt(f, "The kernel could not queue %" PRIu64 " events and the recorder "
				"could not decode or place %" PRIu64 ", against %" PRIu64 " kept: polls, "
				"wakes and off-CPU intervals around them are missing or cut, and tasks "
				"may look stalled or starved that were not.", c->count, c->count2,
				c->max_ns);
		o->advice = fmt(f, "record with a larger --buffer-size (64M), or fewer events "
				"(--lite, no --futures)");
		break;
	}
	case FK_TRUNCATED:
		o->weight_ns = UINT64_MAX - 1;
		o->title = fmt(f, "the trace is truncated: the recording did not finish (%" PRIu64
			       " events read)", c->count);
		o->detail = fmt(f, "It has no end record: the recorder was killed, or its disk filled. "
				"The report covers the events up to the cut; %s", c->flag ?
				"its losses are those of its last complete chunk, a lower bound." :
				"its lost and missed events are unknown.");
		o->advice = fmt(f, "stop recordings with Ctrl-C, SIGTERM or --duration so they write "
				"their end");
		break;
	case FK_BLOCKING: {
		const char *call = c->call ? disp(f, c->call) : NULL;
		uint64_t mean = c->count ? c->sum_ns / c->count : 0;

		o->severity = c->sum_ns >= TEN_X * f->long_poll_ns || mean >= f->long_poll_ns ?
			      FINDING_ERROR : FINDING_WARNING;
		o->title = fmt(f, "%s blocked %s worker%s %s in %s%s%s%s", who(f, c), its,
			       many ? "s" : "", dur(d1, c->sum_ns), call ? call : c->kernel,
			       call ? " (" : " (in the kernel)", call ? c->kernel : "", call ? ")" : "");
		const char *where = c->user && strcmp(c->user, "?") ?
			fmt(f, "The program's frame %s%s%s%s, which slept in the kernel's %s.",
			    disp(f, c->user), c->file ? fmt(f, " at %s:%" PRIu32, c->file, c->line) : "",
			    call ? " called " : "", call ? call : "", c->kernel) :
			c->flag ? fmt(f, "The user stack ends at %s, short of the thread's start: "
				      "the frame-pointer walk stops in code built without frame "
				      "pointers (libc), so the program's frame calling it is not "
				      "known; it slept in the kernel's %s.", call ? call : "?",
				      c->kernel) :
			fmt(f, "No frame of the program's own code was on the stack (a library "
			    "blocked); it slept in the kernel's %s.", c->kernel);
		o->detail = fmt(f, "Off CPU inside %s polls, blocked (not preempted): %s in %" PRIu64
				" interval%s, %s each on average%s. %s%s%s The worker ran no other "
				"task meanwhile: every task queued on it waited.", its,
				dur(d1, c->sum_ns), c->count, fmt_plural(c->count), dur(d2, mean),
				worst(f, c, "with"), where, c->futures ? " In the futures: " : "",
				c->futures ? c->futures : "");
		o->advice = blocking_advice(f, c);
		if (c->flag && (!c->user || !strcmp(c->user, "?")))
			o->advice = fmt(f, "%s; record --dwarf to name the program's line", o->advice);
		break;
	}
	case FK_LONG_POLL: {
		/* off CPU mostly because another thread had the CPU: the poll
		 * held the worker, but not by its own work */
		bool preempted = c->flag && c->count2 * 2 >= c->sum_ns;

		o->severity = c->max_ns >= TEN_X * f->long_poll_ns ? FINDING_ERROR : FINDING_WARNING;
		o->title = fmt(f, "%s held %s worker%s %s in one poll%s", who(f, c), its,
			       many ? "s" : "", dur(d1, c->max_ns), f->live ? "" : preempted ?
			       ", mostly preempted" : c->flag ? ", on CPU" : c->before ?
			       ", since before the recording (still in it at the end)" :
			       ", cause unknown (no off-CPU data)");
		o->detail = fmt(f, "%" PRIu64 " poll%s of %s or more (the longest %s%s); the worker "
				"polled nothing else meanwhile, so every task queued on it waited. %s",
				c->count, fmt_plural(c->count), dur(d2, f->long_poll_ns), dur(d3, c->max_ns),
				worst(f, c, "with"), f->live ? "The live view records no off-CPU "
				"intervals: what it did is unknown here." : preempted ? fmt(f,
				"Neither blocking nor its own work explains it: the thread was "
				"preempted for %s of %s polls (the CPU given to another thread) and "
				"the task could not run meanwhile.", dur(d1, c->count2), its) :
				c->flag ? fmt(f, "Blocking "
				"does not explain it: it ran on the CPU (a computation, a busy loop, or "
				"blocking calls each shorter than --offcpu-min)%s.", c->count2 ?
				fmt(f, ", %s of %s polls preempted (the CPU given to another thread)",
				    dur(d1, c->count2), its) : "") : c->before ? "That poll began before "
				"the recording and had not returned when it ended (the recorder found the "
				"task in it, in the program's memory): its off-CPU time was not recorded, "
				"so what it does is unknown here." : "The trace has no off-CPU intervals, "
				"so what it did is unknown.");
		o->advice = f->live ? fmt(f, "asyncscope record -p PID names the call if it blocks "
					  "(off-CPU intervals on by default); if it computes, move "
					  "the work to %s", sb) :
			    preempted ? fmt(f, "another thread had the worker's CPU: find which "
					    "(top or perf top on the machine), keep busy threads off "
					    "the workers' CPUs or run fewer workers than CPUs; record "
					    "--offcpu also times the waits for a CPU") :
			    c->flag ? fmt(f, "split the work (tokio::task::yield_now().await in its "
					  "loop) or move it to %s; record --sample 999 shows where "
					  "the CPU goes", sb) :
			    c->before ? fmt(f, "asyncscope profile -p PID (CPU samples and off-CPU "
					    "intervals by task, no probe) shows where it runs or "
					    "blocks; then move the blocking or heavy work to %s", sb) :
			    fmt(f, "record again without --no-offcpu to name the blocking call; if "
				"it computes, move the work to %s", sb);
		break;
	}
	case FK_LOST_WAKER:
		o->severity = FINDING_ERROR;
		o->weight_ns = c->max_ns;
		o->title = fmt(f, "%s can never be woken again: no waker of %s was left (idle %s%s%s)",
			       who(f, c), many ? "them" : "it", many ? "up to " : "", dur(d1, c->max_ns),
			       f->live ? " so far" : " until the end");
		o->detail = fmt(f, "%s and nothing held a waker "
				"of %s any more: %s reference count, read from the program's memory "
				"while idle (when the recording ended; in top, at its last read), "
				"counted only %s runtime's task list and %s JoinHandle. A future that "
				"returns Pending must keep cx.waker() where its event will wake it; "
				"this one kept none, or the waker was dropped: "
				"a lost wakeup, the task hangs for good%s.%s",
				pending_since(f, c), many ? "them" : "it", many ? "each one's" : "its",
				its, its, worst(f, c, "idle"),
				parked_at(f, c));
		o->advice = fmt(f, "find what it awaits (asyncscope dump -p PID shows where it is "
				"parked): a hand-written Future must store cx.waker() and wake it, "
				"std::future::pending() and a select! whose branches are all disabled "
				"never wake");
		break;
	case FK_NEVER_WOKEN: {
		/* every one of them held a waker at the end: a wait, told as such */
		bool waits = c->count2 && c->count2 == c->tasks;

		o->severity = waits ? FINDING_INFO : FINDING_WARNING;
		o->weight_ns = c->max_ns;
		o->title = fmt(f, "%s %s never woken after %s last poll returned Pending: idle %s%s%s%s",
			       who(f, c), many ? "were" : "was", its, many ? "up to " : "",
			       dur(d1, c->max_ns), c->flag ? " until the end" : " until dropped",
			       waits ? fmt(f, "; a waker of %s was held (%s wait%s)", many ? "each" : "it",
					   many ? "they" : "it", many ? "" : "s") : "");
		o->detail = fmt(f, "%s and nothing woke it "
				"again %s%s%s.%s A future that returns Pending must have "
				"arranged to be woken: its waker was lost (not stored, or dropped), or "
				"it waits for something that never happened.", pending_since(f, c),
				c->flag ? "to the end of the trace" : "until it was dropped",
				c->once ? ": it never made progress" : "", worst(f, c, "idle"),
				parked_at(f, c));
		if (waits)
			o->detail = fmt(f, "%s A waker of %s was held (%s reference count, read "
					"from the program's memory while idle): a timer, a channel or "
					"a socket can still wake %s.", o->detail,
					many ? "each" : "it", many ? "their" : "its", many ? "them" : "it");
		o->advice = waits ?
			    fmt(f, "nothing to fix if what it awaits is to come (asyncscope dump -p "
				"PID shows its await chain and when its timer fires)") :
			    fmt(f, "check what it awaits (asyncscope dump -p PID shows each task's "
				"await chain, and marks a task no waker of which exists any more): the "
				"future must keep cx.waker() and wake it, and its sender or event must "
				"still come");
		break;
	}
	case FK_STARVED:
		o->severity = c->max_ns >= TEN_X * f->starve_ns ? FINDING_ERROR : FINDING_WARNING;
		o->weight_ns = c->max_ns;
		o->title = fmt(f, "%s waited up to %s to be polled after a wake (%" PRIu64 " time%s "
			       "over %s)", who(f, c), dur(d1, c->max_ns), c->count, fmt_plural(c->count),
			       dur(d2, f->starve_ns));
		o->detail = fmt(f, "%s runnable (woken) but no worker polled %s for that long: "
				"the workers were busy with other polls%s.%s", many ? "They were" :
				"It was", many ? "them" : "it", worst(f, c, "waiting"),
				f->workers == 1 ? " One worker thread polled tasks: a current_thread "
				"runtime (or one worker), where any long poll holds every task." : "");
		o->advice = fmt(f, "keep every poll short (the blocking calls and long polls above "
				"first); if the workers are simply saturated, more worker_threads or "
				"less work per task");
		break;
	case FK_SELF_WAKE:
	case FK_BUSY_POLL:
		o->weight_ns = c->sum_ns;
		if (c->kind == FK_BUSY_POLL)
			o->title = fmt(f, "%s spin%s: %" PRIu64 " polls woken by %s (%" PRIu64 "%% of "
				       "%s wakes)", who(f, c), many ? "" : "s", c->count,
				       many ? "themselves" : "itself",
				       c->count2 ? c->count * 100 / c->count2 : 0, its);
		else
			o->title = fmt(f, "%s woke %s %" PRIu64 " times (%" PRIu64 "%% of %s wakes)",
				       who(f, c), many ? "themselves" : "itself", c->count,
				       c->count2 ? c->count * 100 / c->count2 : 0, its);
		o->detail = fmt(f, "A task that wakes its own waker before returning Pending "
				"(yield_now, or a future calling wake_by_ref() to be polled again) is "
				"queued again at once: %" PRIu64 " polls in all, %s busy. Polling until "
				"something is ready this way spins a worker.", c->since_ns,
				dur(d1, c->sum_ns));
		o->advice = fmt(f, "if it waits for a condition, await a notification instead "
				"(tokio::sync::Notify, a channel, a watch); a yield in a long "
				"computation is fine");
		break;
	case FK_PREEMPTED:
		o->title = fmt(f, "%s: %s worker%s preempted %s inside %s polls", who(f, c), its,
			       many ? "s were" : " was", dur(d1, c->sum_ns), its);
		o->detail = fmt(f, "Off CPU while runnable: the OS ran another thread on that CPU "
				"while %s polls were in progress%s.", its, worst(f, c, "with"));
		o->advice = fmt(f, "the machine or its CPU quota is short of CPU: fewer busy threads "
				"(other processes, a spawn_blocking pool), or more CPUs; --runq shows "
				"each worker's run-queue delay");
		break;
	case FK_WORKER_BUSY:
		o->has_task = false;
		o->tid = c->tid;
		o->thread = c->thread;
		o->title = fmt(f, "worker %s (tid %" PRIu32 ") was busy in polls %" PRIu64 "%% of "
			       "the %s", c->thread ? c->thread : "?", c->tid,
			       c->max_ns ? c->sum_ns * 100 / c->max_ns : 0,
			       f->live ? "last interval" : "trace");
		o->detail = f->live ? fmt(f, "The runtime had work for it nearly all the time.") :
			    fmt(f, "%s in polls out of %s; it parked %" PRIu64 " time%s: the "
				"runtime had work for it nearly all the time.", dur(d1, c->sum_ns),
				dur(d2, c->max_ns), c->count, fmt_plural(c->count));
		o->advice = fmt(f, "the runtime is saturated: see the busiest tasks and long polls; "
				"more worker_threads, or heavy work moved to %s", sb);
		o->file = NULL;
		o->line = 0;
		break;
	case FK_WORKER_NEVER_PARKS:
		o->severity = FINDING_INFO;
		o->has_task = false;
		o->tid = c->tid;
		o->thread = c->thread;
		o->title = fmt(f, "worker %s (tid %" PRIu32 ") never parked in %s",
			       c->thread ? c->thread : "?", c->tid, dur(d1, c->max_ns));
		o->detail = fmt(f, "It polled tasks %s of that time and spent the rest in the "
				"runtime's own loop without parking, while other workers did park.",
				dur(d2, c->sum_ns));
		o->advice = fmt(f, "look at what keeps it awake: a task woken in a loop (self wakes), "
				"or the runtime's driver on that thread");
		o->file = NULL;
		o->line = 0;
		break;
	case FK_FOLDED:
		o->title = fmt(f, "%" PRIu64 " live tasks folded: more than %" PRIu64 " were live at "
			       "once", c->count, c->count2);
		o->detail = fmt(f, "The least recently active live tasks were summed into TASK GROUPS "
				"and their %" PRIu64 " later events not analysed. So many live tasks at "
				"once may be a task leak (never completed, never freed) or lost FREE "
				"events.", c->max_ns);
		o->advice = fmt(f, "--max-live-tasks N follows more (0: all; memory grows with them)");
		break;
	case FK_ANOMALIES:
		o->severity = FINDING_INFO;
		o->title = fmt(f, "%" PRIu64 " of %" PRIu64 " events did not fit the task model",
			       c->count, c->count2);
		o->detail = fmt(f, "Events out of order between threads, a poll that began before "
				"the recording, or events next to lost ones: they are counted and the "
				"durations around them clamped, never negative.");
		o->advice = fmt(f, "harmless in small numbers; many, with lost events: record with a "
				"larger --buffer-size");
		break;
	case FK_NO_WAKES:
		o->severity = FINDING_INFO;
		o->title = fmt(f, "no wakes recorded (record --lite): starved and self-waking tasks "
			       "cannot be found, and a never-woken one is one never polled again");
		o->detail = fmt(f, "The recording took polls only: wakes, scheduling delays and spawn "
				"sites were left out to cost the least.");
		o->advice = fmt(f, "record without --lite for wakes, scheduling delays and spawn sites");
		break;
	case FK_NO_OFFCPU:
		o->severity = FINDING_INFO;
		o->title = fmt(f, "no off-CPU data: the calls behind the long polls are unknown");
		o->detail = fmt(f, "The trace was recorded without off-CPU intervals (record "
				"--no-offcpu, or a trace from before they were on by default).");
		o->advice = fmt(f, "record without --no-offcpu: each blocking call is then named with "
				"its file and line");
		break;
	case FK_HANDOFF: {
		const char *call = c->call ? disp(f, c->call) : NULL;

		o->severity = FINDING_INFO;
		o->title = fmt(f, "%s blocked %s in %s%s%s%s inside block_in_place", who(f, c),
			       dur(d1, c->sum_ns), call ? call : c->kernel,
			       call ? " (" : " (in the kernel)", call ? c->kernel : "", call ? ")" : "");
		o->detail = fmt(f, "Off CPU inside %s polls, blocked: %s in %" PRIu64 " interval%s%s. "
				"%s called tokio::task::block_in_place%s, which first handed %s worker's "
				"queue to a new worker thread: the other tasks kept running, and this "
				"thread was held.%s", its, dur(d2, c->sum_ns),
				c->count, fmt_plural(c->count), worst(f, c, "with"), many ? "They" : "It",
				c->count2 ? fmt(f, " (%" PRIu64 " time%s)", c->count2, fmt_plural(c->count2))
				: "", its, c->user && strcmp(c->user, "?") ?
				fmt(f, " The program's frame: %s%s.", disp(f, c->user), c->file ?
				    fmt(f, " at %s:%" PRIu32, c->file, c->line) : "") : "");
		o->advice = fmt(f, "fine when rare; for frequent or long calls %s keeps the "
				"worker's own thread free", spawn_blocking(f));
		break;
	}
	default:
		break;
	}
}

/* Its rank among the kinds: the enum's order, causes before the
 * consequences they bring (a blocking call before the tasks it starved). */
static int rank(const char *kind)
{
	for (int i = 0; i < FK__MAX; i++)
		if (!strcmp(kind_names[i], kind))
			return i;
	return FK__MAX;
}

static int by_severity(const void *x, const void *y)
{
	const struct finding *a = x, *b = y;
	int ra = rank(a->kind), rb = rank(b->kind);

	if (a->severity != b->severity)
		return a->severity < b->severity ? -1 : 1;
	if (ra != rb)
		return ra < rb ? -1 : 1;
	if (a->weight_ns != b->weight_ns)
		return a->weight_ns > b->weight_ns ? -1 : 1;
	int k = strcmp(a->kind, b->kind);
	if (k)
		return k;
	if (a->task_seq != b->task_seq)
		return a->task_seq < b->task_seq ? -1 : 1;
	return strcmp(a->title, b->title);
}

static int finish(struct findings *f)
{
	bool long_polls = false;

	for (size_t i = 0; i < f->n; i++)
		long_polls |= f->c[i].kind == FK_LONG_POLL;
	if (long_polls && !f->offcpu && !f->live)
		cand(f, FK_NO_OFFCPU, NULL, NULL, 0, NULL, NULL);
	if (f->err)
		return f->err;
	f->out = calloc(f->n ? f->n : 1, sizeof(*f->out));
	if (!f->out)
		return -ENOMEM;
	for (size_t i = 0; i < f->n; i++)
		word(f, &f->c[i], &f->out[i]);
	if (f->err)
		return f->err;
	qsort(f->out, f->n, sizeof(*f->out), by_severity);
	f->n_out = f->n < FINDINGS_MAX ? f->n : FINDINGS_MAX;
	f->omitted = f->n - f->n_out;
	for (size_t i = 0; i < f->n_out; i++)
		f->counts[f->out[i].severity]++;
	return 0;
}

static struct findings *alloc_findings(bool wide, int width)
{
	struct findings *f = calloc(1, sizeof(*f));

	if (f) {
		f->wide = wide;
		f->width = width > 0 ? width : RUST_NAME_WIDTH;
	}
	return f;
}

struct findings *findings__new(const struct findings_input *in)
{
	const struct summary *s = in && in->analysis ? analysis__summary(in->analysis) : NULL;
	struct findings *f;
	size_t n, nbt = 0;
	int err;

	if (!s) {
		errno = EINVAL;
		return NULL;
	}
	f = alloc_findings(in->wide, in->name_width);
	if (!f)
		return NULL;
	f->runtime = in->meta ? in->meta->runtime : NULL;
	f->long_poll_ns = s->long_poll_ns ? s->long_poll_ns : ANALYSIS_LONG_POLL_NS;
	f->starve_ns = s->starve_ns ? s->starve_ns : ANALYSIS_STARVE_NS;
	f->stall_ns = s->stall_ns ? s->stall_ns : ANALYSIS_STALL_NS;
	f->a = in->analysis;
	from_trace(f, in);
	const struct blocking_task *bt = in->blocking ? blocking__tasks(in->blocking, &nbt) : NULL;

	if (in->blocking)
		from_blocking(f, in->blocking, in->meta);
	if (!as_meta_profile(in->meta)) {
		const struct task_stats *t = analysis__tasks(in->analysis, &n);
		size_t ng;
		const struct task_group *g = analysis__groups(in->analysis, &ng);

		for (size_t i = 0; i < n; i++)
			if (t[i].kind == TASK_KIND_TASK)
				from_row(f, &t[i], NULL, 0, bt, nbt);
		for (size_t i = 0; i < ng; i++)
			from_row(f, NULL, &g[i], (uint32_t)i + 1, bt, nbt);
		from_stalls(f, in->analysis, in->futures);
		from_starved(f, in->analysis);
		from_workers(f, in->analysis);
	}
	err = finish(f);
	if (err) {
		findings__free(f);
		errno = -err;
		return NULL;
	}
	return f;
}

/* ------------------------------------------------------------------- live */

struct findings *findings__new_live(const struct live *l, const struct findings_live_opts *o)
{
	const struct live_summary *s = l ? live__summary(l) : NULL;
	struct findings *f;
	size_t n, nw;
	int err;

	if (!s) {
		errno = EINVAL;
		return NULL;
	}
	f = alloc_findings(o && o->wide, o ? o->name_width : 0);
	if (!f)
		return NULL;
	f->live = true;
	f->runtime = o ? o->runtime : NULL;
	f->long_poll_ns = o && o->long_poll_ns ? o->long_poll_ns : ANALYSIS_LONG_POLL_NS;
	f->starve_ns = o && o->starve_ns ? o->starve_ns : ANALYSIS_STARVE_NS;
	f->stall_ns = o && o->stall_ns ? o->stall_ns : LIVE_STALL_NS;

	struct cand *c;
	if ((s->lost || s->missed) && (c = cand(f, FK_LOST, NULL, NULL, 0, NULL, NULL))) {
		c->count = s->lost;
		c->count2 = s->missed;
		c->max_ns = s->events;
	}
	if (s->tasks_folded && (c = cand(f, FK_FOLDED, NULL, NULL, 0, NULL, NULL))) {
		c->count = s->tasks_folded;
		c->count2 = s->max_live;
	}
	const struct live_task *t = live__tasks(l, &n);

	for (size_t i = 0; i < n && !f->err; i++) {
		const struct live_task *lt = &t[i];
		const char *name = live_task__name(lt);
		uint64_t self = lt->waker_counts[LIVE_WAKER_SELF];

		if (lt->worker)
			continue;
		if (lt->max_poll_ns >= f->long_poll_ns && !lt->pool &&
		    (c = cand(f, FK_LONG_POLL, name, NULL, 0, NULL, NULL))) {
			c->count++;
			c->sum_ns += lt->max_poll_ns;
			add_task(c, lt->max_poll_ns, lt->seq, lt->tokio_id, lt->header, 0, name);
		}
		if (lt->sched_hist.count && lt->sched_hist.max >= f->starve_ns &&
		    (c = cand(f, FK_STARVED, name, NULL, 0, NULL, NULL))) {
			c->count++;
			c->sum_ns += lt->sched_hist.max;
			add_task(c, lt->sched_hist.max, lt->seq, lt->tokio_id, lt->header, 0, name);
		}
		if (self >= SELF_WAKE_MIN && 2 * self > lt->wakes &&
		    (c = cand(f, FK_SELF_WAKE, name, NULL, 0, NULL, NULL))) {
			c->count += self;
			c->count2 += lt->wakes;
			c->sum_ns += lt->busy_ns;
			c->since_ns += lt->polls;
			add_task(c, self, lt->seq, lt->tokio_id, lt->header, 0, name);
		}
		uint64_t idle = lt->state == LIVE_ST_IDLE && s->now_ns > lt->since ?
				s->now_ns - lt->since : 0;
		/* its memory read while idle: no waker of it left, whatever its
		 * polls (it can never be woken again), or one held (it waits) */
		bool lost = lt->state == LIVE_ST_IDLE && lt->wakers_known && !lt->wakers;

		if ((lost || (idle >= f->stall_ns && lt->idle_exact && lt->polls == 1 && !lt->wakes)) &&
		    (c = cand(f, lost ? FK_LOST_WAKER : FK_NEVER_WOKEN, name, NULL, 0, NULL, NULL))) {
			c->flag = true;
			c->once = lt->polls == 1;
			c->since_ns = lt->since > s->first_ns ? lt->since - s->first_ns : 0;
			c->sum_ns += idle;
			c->count2 += lt->wakers_known && lt->wakers;
			add_task(c, idle, lt->seq, lt->tokio_id, lt->header, 0, name);
		}
	}
	const struct live_worker *w = live__workers(l, &nw);

	for (size_t i = 0; i < nw; i++)
		f->workers += w[i].polled;
	for (size_t i = 0; i < nw && !f->err; i++)
		if (w[i].polled && w[i].busy_pct >= WORKER_BUSY_PCT &&
		    (c = cand(f, FK_WORKER_BUSY, NULL, NULL, w[i].tid, NULL, NULL))) {
			c->tid = w[i].tid;
			c->thread = w[i].name;
			c->max_ns = 1000;
			c->sum_ns = (uint64_t)(w[i].busy_pct * 10);
			c->count = w[i].polls;
		}
	err = finish(f);
	if (err) {
		findings__free(f);
		errno = -err;
		return NULL;
	}
	return f;
}

/* ---------------------------------------------------------------- access */

const struct finding *findings__list(const struct findings *f, size_t *n)
{
	*n = f ? f->n_out : 0;
	return f ? f->out : NULL;
}

size_t findings__count(const struct findings *f, enum finding_severity s)
{
	return f && s < FINDING__MAX ? f->counts[s] : 0;
}

size_t findings__omitted(const struct findings *f)
{
	return f ? f->omitted : 0;
}

const char *finding_severity__str(enum finding_severity s)
{
	static const char *const names[FINDING__MAX] = { "error", "warning", "info" };

	return s < FINDING__MAX ? names[s] : "?";
}

void findings__free(struct findings *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n_strs; i++)
		free(f->strs[i]);
	free(f->strs);
	free(f->c);
	free(f->out);
	u64map__clear(&f->index);
	free(f);
}
