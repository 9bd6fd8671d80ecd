/* A recording session (recorder.h): set-up (target, plan, BPF, trace
 * file), the ring-buffer poll loop, and the session read as a source of
 * decoded events. The one module of src/record that touches libbpf's ring
 * buffer; decoding, fix-ups, stack naming and counting are the other
 * files'. Never prints. */
#include "record/recorder.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "events.h"
#include "asyncscope.skel.h"
#include "dump/rt_context.h"
#include "record/idle_refs.h"
#include "probe/attach.h"
#include "record/agg.h"
#include "record/decode.h"
#include "record/fixup.h"
#include "record/launch.h"
#include "record/notice.h"
#include "record/stacks.h"
#include "record/stats.h"
#include "trace/writer.h"
#include "util/clock.h"
#include "util/strtab.h"
#include "util/u64map.h"

enum state { ST_RUNNING, ST_ENDED };

struct rec_session {
	char runtime_detail[1024];    /* the header's: each runtime's release, "; " between */
	const struct recorder_opts *o;
	struct rec_target t;
	struct probe_plan *plan;
	struct attachment *att;
	struct ring_buffer *rb;
	struct trace_writer *w;
	struct as_trace_meta meta;
	struct rec_decoder dec;
	struct rec_fixup fx;
	struct rec_stacks *stacks;    /* --offcpu, --sample */
	struct rec_stats st;
	struct recorder_result res;   /* plan figures now, counts at the end */
	struct as_trace_end end;
	uint64_t start, last_flush, deadline;
	int out_fd;                   /* o->output_fd until the writer has it, else -1 */
	enum state state;
	int err;                      /* what ended the session, 0 none */
	char errmsg[1024];
	/* as a source: events decoded and not yet returned, their strings */
	bool queue_on;
	struct as_event *q;
	size_t q_head, q_len, q_cap;
	struct strtab strs;
	bool queue_failed;
	/* as a source: the stacks named, stk[id - 1], each with its frames and
	 * (interned) strings; without a trace file, ids by a hash of the
	 * counts and addresses (the writer's rule: same addresses, same id) */
	struct as_stack **stk;
	size_t n_stk, cap_stk;
	struct u64map stk_by_hash;
	/* profile mode: names given (id -> index + 1 of the name in strs, bit
	 * 62 the runtime's own) and ids declared (id -> tid << 8 | 1 unnamed,
	 * 2 named) */
	struct u64map prof_known, prof_declared;
	struct u64map prof_threads;   /* tids named (AS_EV_THREAD sent), + 1 */
	bool prof_offcpu;             /* off-CPU intervals taken (a task id to read) */
	/* with a trace file, task mode: the tasks idle at the end and what
	 * holds them (AS_SPAWN_WAKERS), the tasks found in memory at the end
	 * of no event (AS_SPAWN_BEFORE) */
	struct rec_idle idle;
	bool idle_on;
};

#define PROF_RUNTIME (1ull << 62)
#define PROF_NAME_MASK ((1ull << 62) - 1)


/* Queues a copy of ev for next(); its string interned (lent until free). */
static void enqueue(struct rec_session *s, const struct as_event *ev)
{
	struct as_event e = *ev;

	if (e.str) {
		uint32_t idx;
		size_t len = strlen(e.str);
		if (strtab__intern(&s->strs, e.str, len, &idx) < 0) {
			s->queue_failed = true;
			return;
		}
		e.str = strtab__get(&s->strs, idx);
	}
	if (s->q_head && s->q_head == s->q_len) {
		s->q_head = s->q_len = 0;
	}
	if (s->q_len == s->q_cap) {
		if (s->q_head) {
			memmove(s->q, s->q + s->q_head, (s->q_len - s->q_head) * sizeof(*s->q));
			s->q_len -= s->q_head;
			s->q_head = 0;
		}
		if (s->q_len == s->q_cap) {
			size_t cap = s->q_cap ? s->q_cap * 2 : 1024;
			struct as_event *q = realloc(s->q, cap * sizeof(*q));
			if (!q) {
				s->queue_failed = true;
				return;
			}
			s->q = q;
			s->q_cap = cap;
		}
	}
	s->q[s->q_len++] = e;
}

/* Hands one event on: the live consumer, the trace file, the queue. */
/* A write or flush of the trace failed: a full disk or an I/O error stops
 * the recording at once (finish cuts the file after its last whole chunk,
 * with its trailer); a lack of memory is only counted. */
static void write_failed(struct rec_session *s, int werr)
{
	if (werr != -ENOMEM && !s->err) {
		s->err = werr;
		snprintf(s->errmsg, sizeof(s->errmsg), "writing trace file %s: %s: recording "
			 "stopped", s->o->output, strerror(-werr));
	}
}

static void emit(void *ctx, const struct as_event *ev)
{
	struct rec_session *s = ctx;

	s->st.events++;
	rec_stats__note_task(&s->st, ev);   /* as fixed up: what the report sees */
	if (s->idle_on && rec_idle__note(&s->idle, ev))
		s->idle_on = false;   /* out of memory: no notes */
	if (s->o->on_event)
		s->o->on_event(s->o->ctx, ev);
	int werr = s->w ? trace_writer__write(s->w, ev) : 0;
	if (werr) {
		s->st.write_errors++;
		write_failed(s, werr);
	}
	if (s->queue_on)
		enqueue(s, ev);
}

/* Profile mode: task id declared, with what is known of it. */
static void declare(struct rec_session *s, uint64_t id, uint32_t tid, uint64_t ts,
		    const char *name, bool runtime)
{
	struct as_event ev = { .type = AS_EV_SPAWN, .tid = tid, .ts = ts, .task = id, .other = id,
			       .str = name, .flags = AS_SPAWN_NAME | AS_SPAWN_TASK |
						     (runtime ? AS_SPAWN_RUNTIME : 0) };

	emit(s, &ev);
}

/* What rec_session__name_task() said of id: 1 with *name (NULL none) and
 * *runtime, 0 nothing. */
static int prof_known(const struct rec_session *s, uint64_t id, const char **name, bool *runtime)
{
	uint64_t v;

	*name = NULL;
	*runtime = false;
	if (!u64map__get(&s->prof_known, id, &v))
		return 0;
	if (v & PROF_NAME_MASK)
		*name = strtab__get(&s->strs, (uint32_t)((v & PROF_NAME_MASK) - 1));
	*runtime = (v & PROF_RUNTIME) != 0;
	return 1;
}

/* Profile mode: no probe names the threads (the poll programs do): a
 * thread's first record names it first, from /proc (nameless when gone). */
static void prof_thread(struct rec_session *s, const struct as_event *ev)
{
	char path[64], comm[32] = "";
	FILE *f;

	if (u64map__get(&s->prof_threads, (uint64_t)ev->tid + 1, NULL))
		return;
	if (u64map__set(&s->prof_threads, (uint64_t)ev->tid + 1, 1)) {
		s->st.missed++;
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%u/comm", (int)s->t.tgid, ev->tid);
	if ((f = fopen(path, "re"))) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	struct as_event th = { .type = AS_EV_THREAD, .tid = ev->tid, .ts = ev->ts, .str = comm };
	emit(s, &th);
}

/* Profile mode: id held by a worker in its own loop (BPF's test: inside
 * the runtime, outside any coop budget) is its launch task, the runtime's;
 * unless the task lists (asked first) name it: a user task whose future
 * the worker drops outside a poll (at shutdown) holds its id there too. */
static void prof_worker_loop(struct rec_session *s, uint64_t id)
{
	const char *name;
	bool runtime;

	if (prof_known(s, id, &name, &runtime))
		return;
	if (s->o->on_unknown_task)
		s->o->on_unknown_task(s->o->hook_ctx, id);
	if (!prof_known(s, id, &name, &runtime) && rec_session__name_task(s, id, NULL, true))
		s->st.missed++;
}

/* Profile mode: the first record of a task id declares it first. */
static void prof_first_sight(struct rec_session *s, const struct as_event *ev)
{
	const char *name;
	bool runtime;

	if (!ev->task || ev->task == UINT64_MAX || u64map__get(&s->prof_declared, ev->task, NULL))
		return;
	if (!prof_known(s, ev->task, &name, &runtime) && s->o->on_unknown_task) {
		s->o->on_unknown_task(s->o->hook_ctx, ev->task);   /* may name it */
		prof_known(s, ev->task, &name, &runtime);
	}
	if (u64map__set(&s->prof_declared, ev->task,
			(uint64_t)ev->tid << 8 | (name || runtime ? 2 : 1))) {
		s->st.missed++;
		return;
	}
	s->st.tasks++;
	declare(s, ev->task, ev->tid, ev->ts, name, runtime);
}

int rec_session__name_task(struct rec_session *s, uint64_t id, const char *name, bool runtime)
{
	uint64_t v, idx = 0;

	if (!id || id == UINT64_MAX || u64map__get(&s->prof_known, id, NULL))
		return 0;
	if (name) {
		/* interned: a root future type is stored once for all its tasks */
		uint32_t si;
		size_t len = strlen(name);
		if (strtab__intern(&s->strs, name, len, &si) < 0)
			return -ENOMEM;
		idx = (uint64_t)si + 1;
	}
	if (u64map__set(&s->prof_known, id, idx | (runtime ? PROF_RUNTIME : 0)))
		return -ENOMEM;
	/* declared unnamed before: again, named */
	if ((name || runtime) && u64map__get(&s->prof_declared, id, &v) && (v & 0xff) == 1) {
		if (u64map__set(&s->prof_declared, id, (v & ~0xffull) | 2))
			return -ENOMEM;
		declare(s, id, (uint32_t)(v >> 8), clock_ns(CLOCK_MONOTONIC), name, runtime);
	}
	return 0;
}

void rec_session__forget_tasks(struct rec_session *s)
{
	u64map__clear(&s->prof_known);
	u64map__clear(&s->prof_declared);
}

bool rec_session__profile_offcpu(const struct rec_session *s)
{
	return s->prof_offcpu;
}

uint64_t *rec_session__unnamed(const struct rec_session *s, size_t *n)
{
	const struct u64map *m = &s->prof_declared;
	uint64_t *ids = NULL;

	*n = 0;
	for (size_t i = 0; i < m->cap; i++) {
		if (m->keys[i] == 0 || m->keys[i] == UINT64_MAX || (m->vals[i] & 0xff) != 1)
			continue;
		if (!ids && !(ids = calloc(m->len, sizeof(*ids))))
			return NULL;
		ids[(*n)++] = m->keys[i];
	}
	return ids;
}

static const char *intern(struct rec_session *s, const char *str)
{
	uint32_t idx;
	size_t len;

	if (!str)
		return NULL;
	len = strlen(str);
	if (strtab__intern(&s->strs, str, len, &idx) < 0)
		return NULL;
	return strtab__get(&s->strs, idx);
}

/* FNV-1a over the counts and addresses, never 0 or UINT64_MAX (not keys) */
static uint64_t stack_hash(const struct as_stack *st)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t n = (size_t)st->n_kernel + st->n_user;

	h = (h ^ ((uint64_t)st->n_kernel << 16 | st->n_user)) * 0x100000001b3ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ st->frames[i].addr) * 0x100000001b3ull;
	h |= 1;
	return h == UINT64_MAX ? h - 2 : h;
}

static bool same_stack(const struct as_stack *a, const struct as_stack *b)
{
	size_t n = (size_t)a->n_kernel + a->n_user;

	if (a->n_kernel != b->n_kernel || a->n_user != b->n_user)
		return false;
	for (size_t i = 0; i < n; i++)
		if (a->frames[i].addr != b->frames[i].addr)
			return false;
	return true;
}

/* Keeps a copy of st as stack id n_stk + 1. 0 or -ENOMEM. */
static int keep_stack(struct rec_session *s, const struct as_stack *st)
{
	size_t n = (size_t)st->n_kernel + st->n_user;
	struct as_stack *c;
	struct as_frame *f;

	if (s->n_stk == s->cap_stk) {
		size_t cap = s->cap_stk ? s->cap_stk * 2 : 64;
		struct as_stack **k = realloc(s->stk, cap * sizeof(*k));
		if (!k)
			return -ENOMEM;
		s->stk = k;
		s->cap_stk = cap;
	}
	c = calloc(1, sizeof(*c) + n * sizeof(*f));
	if (!c)
		return -ENOMEM;
	f = (struct as_frame *)(c + 1);
	for (size_t i = 0; i < n; i++) {
		f[i] = st->frames[i];
		f[i].sym = intern(s, st->frames[i].sym ? st->frames[i].sym : "");
		f[i].file = intern(s, st->frames[i].file);
		if (!f[i].sym || (st->frames[i].file && !f[i].file)) {
			free(c);
			return -ENOMEM;
		}
	}
	*c = (struct as_stack){ .id = (uint32_t)s->n_stk + 1, .n_kernel = st->n_kernel,
				.n_user = st->n_user, .frames = f };
	s->stk[s->n_stk++] = c;
	return 0;
}

/* The stack of an off-CPU interval or sample, its id: the trace file's
 * (kept too when read as a source), or as a source without a file the
 * session's own; 0 when neither is wanted or the writer refuses it. */
static uint32_t stack_id(struct rec_session *s, const struct raw_offcpu *o)
{
	struct as_stack st;
	uint32_t id = 0;
	uint64_t h, v;

	bool hook = !s->w && !s->queue_on && s->o->on_stack;   /* the flight recorder's */

	if ((!s->w && !s->queue_on && !hook) || !s->stacks || !rec_stacks__name(s->stacks, o, &st))
		return 0;
	if (hook)
		return s->o->on_stack(s->o->ctx, &st);
	if (s->w) {
		if (trace_writer__stack(s->w, &st, &id)) {
			s->st.stack_errors++;
			return 0;
		}
		if (s->queue_on && id == s->n_stk + 1 && keep_stack(s, &st))
			s->queue_failed = true;
		return id;
	}
	h = stack_hash(&st);
	if (u64map__get(&s->stk_by_hash, h, &v) && same_stack(s->stk[v - 1], &st))
		return (uint32_t)v;
	if (keep_stack(s, &st)) {
		s->queue_failed = true;
		return 0;
	}
	if (!u64map__get(&s->stk_by_hash, h, NULL) && u64map__set(&s->stk_by_hash, h, s->n_stk))
		s->queue_failed = true;
	return (uint32_t)s->n_stk;
}

/* The call site of a spawn seen without its &Location, by unwinding the
 * stack copied at it to the program's frame (stacks.h); without one the
 * spawn still gives the task its parent, with no file. */
static void spawn_site(struct rec_session *s, struct rec_decoded *d)
{
	const struct runtime_profile *prof = s->plan->profiles[s->plan->owner[d->ev.probe]];
	uint32_t line = 0, col = 0;

	if (!s->t.img->has_debug_info) {
		/* no file:line without DWARF: off, as the start said once */
		d->str[0] = '\0';
		return;
	}
	if (rec_stacks__call_site(s->stacks, d->spawn, prof->library, d->str, sizeof(d->str), &line,
				  &col)) {
		s->st.spawn_sites++;
		d->ev.other = (uint64_t)line << 32 | col;
	} else {
		s->st.spawn_sites_unknown++;
		d->str[0] = '\0';
	}
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct rec_session *s = ctx;
	struct rec_decoded d;
	struct raw_offcpu unwound;

	if (rec_decode(&s->dec, data, size, &d) <= 0) {
		s->st.missed++;
		return 0;
	}
	rec_stats__count(&s->st, &d.ev);
	switch (d.path) {
	case REC_PATH_PROBE:
		rec_fixup__push(&s->fx, &d.ev);
		break;
	case REC_PATH_STACKED: {
		const struct raw_offcpu *o = d.stack;
		if (d.regs) {
			rec_stacks__unwind(s->stacks, d.regs, &unwound,
					   d.ev.type == AS_EV_OFFCPU ? &s->st.uw_offcpu : &s->st.uw_samples);
			o = &unwound;
		}
		d.ev.stack = stack_id(s, o);
		if (s->o->profile) {
			s->st.profile_no_id += d.no_id;
			prof_thread(s, &d.ev);
			if (d.rt_loop)
				prof_worker_loop(s, d.ev.task);
			prof_first_sight(s, &d.ev);
		}
		emit(s, &d.ev);
		break;
	}
	case REC_PATH_DIRECT:
		emit(s, &d.ev);
		break;
	case REC_PATH_SPAWN_SITE:
		spawn_site(s, &d);
		rec_fixup__push(&s->fx, &d.ev);
		break;
	case REC_PATH_SPAWN_CALLER:
		/* the program's own Handle::current() call: no spawn */
		if (rec_stacks__called_from_spawn(s->stacks, d.caller,
						  s->plan->profiles[s->plan->owner[d.ev.probe]]->library))
			rec_fixup__push(&s->fx, &d.ev);
		break;
	}
	return 0;
}

/* "attached 12 probes (4 poll, ...) to pid 123 (/path, tokio); recording
 * to FILE, Ctrl-C to stop" */
static void notify_attached(struct rec_session *s, int attached)
{
	const struct probe_plan *plan = s->plan;
	char usdt[64] = "";

	if (s->o->profile) {
		/* "profiling pid 123 (/path, tokio) without probes: CPU samples at
		 * 99 Hz, off-CPU intervals of tasks over 100 us; recording to FILE" */
		char off[96] = "";
		if (s->prof_offcpu)
			snprintf(off, sizeof(off), ", off-CPU intervals of tasks over %.0f us",
				 (double)(s->o->offcpu_min_ns ? s->o->offcpu_min_ns : 100000) / 1e3);
		char probes[96] = "without probes";
		if (s->o->agg)
			snprintf(probes, sizeof(probes), "with %d task probes counting in the kernel",
				 attached);
		rec_notify(s->o, REC_NOTICE_INFO, "profiling pid %d (%s, %s) %s: CPU samples at %u "
			   "Hz%s; recording to %s, Ctrl-C to stop", s->t.tgid, s->t.binary,
			   plan->runtime, probes, s->o->sample_hz, off,
			   s->o->output ? s->o->output : "no file");
		return;
	}

	if (plan->per_role[AS_ROLE_USDT])
		snprintf(usdt, sizeof(usdt), ", %zu usdt", plan->per_role[AS_ROLE_USDT]);
	if (plan->per_role[AS_ROLE_FUTURE])
		snprintf(usdt + strlen(usdt), sizeof(usdt) - strlen(usdt), ", %zu future",
			 plan->per_role[AS_ROLE_FUTURE]);
	rec_notify(s->o, REC_NOTICE_INFO, "attached %d probes (%zu poll, %zu wake, %zu spawn, "
		   "%zu free, %zu park%s) to pid %d (%s, %s); recording to %s, Ctrl-C to stop",
		   attached, plan->per_role[AS_ROLE_POLL], plan->per_role[AS_ROLE_WAKE],
		   plan->per_role[AS_ROLE_SPAWN], plan->per_role[AS_ROLE_FREE],
		   plan->per_role[AS_ROLE_PARK], usdt, s->t.tgid, s->t.binary, plan->runtime,
		   s->o->output ? s->o->output : "no file");
}

/* Profile mode: where each thread's current task id is (tokio's CONTEXT,
 * dump/rt_context.h), or a warning that the records are the threads'. */
static int profile_ctx(struct rec_session *s, struct attach_extra *extra, char *err, size_t errlen)
{
	struct dwarf_types *dt = rec_target__dwarf(&s->t);
	const char *why = NULL;   /* no DWARF: said with the other features off */
	struct rt_context *rc = NULL;
	struct rt_task_id_loc l;
	bool tokio = false;

	for (size_t i = 0; i < s->plan->n_profiles; i++)
		tokio |= !strcmp(s->plan->profiles[i]->name, "tokio");
	if (!tokio) {
		/* nothing tells a thread's task: off-CPU intervals (kept only in a
		 * task) are not taken at all */
		rec_notify(s->o, REC_NOTICE_WARNING, "%s keeps no thread-local task id to read: "
			   "CPU samples are attributed to threads, not tasks, and off-CPU "
			   "intervals are not recorded", s->plan->runtime);
		extra->offcpu = extra->offcpu_dwarf = false;
		return 0;
	}
	/* its symbols through the file the process runs (/proc/PID/exe when
	 * attached: deleted, replaced or in another mount namespace) */
	if (dt && (rc = rt_context__open(dt, s->t.attach_path, &why)) && rt_context__task_id_loc(rc, &l))
		why = "the binary's DWARF does not describe tokio's Context.current_task_id";
	else if (rc) {
		extra->ctx.has_ctx = true;
		extra->ctx.tp_off = l.tp_off;
		extra->ctx.state_off = l.state_off;
		extra->ctx.state_size = l.state_size;
		extra->ctx.state_alive = l.state_alive;
		extra->ctx.tag_off = l.tag_off;
		extra->ctx.tag_size = l.tag_size;
		extra->ctx.tag_none = l.tag_none;
		extra->ctx.id_off = l.id_off;
		extra->ctx.loop_rt_off = l.loop_rt_off;
		extra->ctx.loop_rt_size = l.loop_rt_size;
		extra->ctx.loop_rt_outside = l.loop_rt_outside;
		extra->ctx.loop_budget_off = l.loop_budget_off;
		extra->ctx.loop_budget_size = l.loop_budget_size;
		extra->ctx.loop_budget_none = l.loop_budget_none;
	}
	if (!rc && errno == ENOMEM) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rt_context__free(rc);
	if (!extra->ctx.has_ctx) {
		if (why)
			rec_notify(s->o, REC_NOTICE_WARNING, "%s: CPU samples are attributed to "
				   "threads, not tasks, and off-CPU intervals are not recorded", why);
		extra->offcpu = extra->offcpu_dwarf = false;
	}
	return 0;
}

int rec_session__agg(struct rec_session *s, struct rec_agg **out)
{
	int g, t, tot;

	*out = NULL;
	if (attachment__agg_fds(s->att, &g, &t, &tot))
		return -ENOENT;
	uint64_t bias = 0;
	/* attached: the binary is mapped already (a launched one: not yet) */
	if (rec_target__load_bias(&s->t, &bias))
		bias = s->dec.bias;
	*out = rec_agg__new(g, t, tot, s->plan->probes, s->plan->n, s->t.tgid, s->t.binary, bias);
	return *out ? 0 : -errno;
}

pid_t rec_session__pid(const struct rec_session *s)
{
	return s->t.tgid;
}

bool rec_session__attached(const struct rec_session *s)
{
	return s->t.child <= 0;
}

int rec_session__before_task(struct rec_session *s, const struct idle_before *b)
{
	if (!s->idle_on || u64map__get(&s->st.live, b->header, NULL))
		return 0;   /* seen: its events tell */
	if (b->queued && s->o->lite)
		return 0;   /* no wake recorded: woken since the start, or before, unknown */
	int err = rec_idle__before(&s->idle, b);

	if (err)
		s->idle_on = false;   /* out of memory: no notes */
	return err;
}

int rec_session__open(const struct recorder_opts *o, struct rec_session **out,
		      char *err, size_t errlen)
{
	const struct runtime_profile *profs[PLAN_MAX_PROFILES];
	struct rec_session *s;
	int n_profs, ret;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s) {
		if (o->output_fd > 0)
			close(o->output_fd);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->o = o;
	s->out_fd = o->output_fd > 0 ? o->output_fd : -1;
	s->t.child = -1;
	s->t.go_fd = s->t.exec_fd = -1;
	s->res.target_status = -1;
	n_profs = rec_parse_runtime(o, profs, err, errlen);
	if (n_profs < 0) {
		ret = n_profs;
		goto fail;
	}
	ret = attach_check_kernel(err, errlen);
	if (ret)
		goto fail;
	ret = rec_target__find(&s->t, o, err, errlen);
	if (ret)
		goto fail;
	ret = rec_target__plan(&s->t, o, profs, (size_t)n_profs, &s->plan, &s->res, err, errlen);
	if (ret)
		goto fail;
	ret = rec_target__spawn(&s->t, o, err, errlen);
	if (ret)
		goto fail;

	/* off-CPU intervals inside polls: on by default (record), where polls
	 * are traced (not for USDT probes alone) */
	bool offcpu = o->offcpu && !(o->offcpu_default && !o->profile &&
				     !s->plan->per_role[AS_ROLE_POLL]);
	struct attach_extra extra = { .offcpu = offcpu,
				      .offcpu_min_ns = o->offcpu_min_ns ? o->offcpu_min_ns : 100000,
				      .sample_hz = o->sample_hz, .sample_dwarf = o->sample_hz && o->dwarf,
				      .offcpu_dwarf = offcpu && o->dwarf,
				      .runq = !o->profile && o->runq,
				      .uring = o->uring, .profile = o->profile,
				      .agg = o->profile && o->agg,
				      .agg_long_poll_ns = o->agg_long_poll_ns,
				      .agg_stall_ns = o->agg_stall_ns };
	if (o->profile && (ret = profile_ctx(s, &extra, err, errlen)))
		goto fail;
	s->prof_offcpu = extra.offcpu;
	s->res.offcpu_on = extra.offcpu;
	bool spawn_stacks = false;
	for (size_t i = 0; i < s->plan->n; i++)
		spawn_stacks |= (s->plan->flags[i] & PLAN_F_STACK) != 0;
	if (offcpu || o->sample_hz || s->plan->per_role[AS_ROLE_SPAWN]) {
		/* spawns seen without a &Location need the DWARF unwinder, and
		 * those with one who called the function that saw it */
		s->stacks = rec_stacks__new(s->t.tgid, s->t.binary, s->t.img, rec_target__dwarf(&s->t),
					    o->dwarf || spawn_stacks, offcpu || o->sample_hz, o);
		if (!s->stacks) {
			ret = -ENOMEM;
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
	}
	s->att = attachment__load(s->plan, s->t.tgid, o->ringbuf_bytes, &extra, err, errlen);
	if (!s->att) {
		ret = -EPERM;
		goto fail;
	}
	s->meta.format_version = 0; /* the writer stamps its own */
	s->meta.pid = (uint32_t)s->t.tgid;
	s->meta.cmdline = s->t.cmdline;
	s->meta.target = s->t.binary;
	s->meta.build_id = s->t.img->build_id;
	s->meta.runtime = s->plan->runtime;
	for (size_t i = 0; i < s->plan->n_profiles; i++) {
		size_t n = strlen(s->runtime_detail);
		if (!s->plan->profiles[i]->crate || n + 4 >= sizeof(s->runtime_detail))
			continue;
		if (n)
			n += (size_t)snprintf(s->runtime_detail + n, sizeof(s->runtime_detail) - n, "; ");
		runtime_id__describe(s->plan->profiles[i], &s->plan->ids[i], s->runtime_detail + n,
				     sizeof(s->runtime_detail) - n);
	}
	s->meta.runtime_detail = s->runtime_detail[0] ? s->runtime_detail : NULL;
	s->meta.recorded = AS_REC_KNOWN | (extra.offcpu ? AS_REC_OFFCPU : 0) |
			   (o->sample_hz ? AS_REC_SAMPLE : 0) | (extra.runq ? AS_REC_RUNQ : 0) |
			   (o->uring ? AS_REC_URING : 0);
	/* profile mode: the plan only identified the runtime; no probe */
	s->meta.probes = o->profile ? NULL : s->plan->probes;
	s->meta.n_probes = o->profile ? 0 : (uint32_t)s->plan->n;
	s->meta.clock_mono_ns = clock_ns(CLOCK_MONOTONIC);
	s->meta.clock_real_ns = clock_ns(CLOCK_REALTIME);
	s->dec = (struct rec_decoder){ .plan = s->plan, .tgid = s->t.tgid, .offcpu = offcpu,
				       .sample = o->sample_hz != 0, .runq = o->runq, .uring = o->uring,
				       .dwarf = o->dwarf, .profile = o->profile };
	s->fx.emit = emit;
	s->fx.ctx = s;
	s->fx.missed = &s->st.missed;
	s->fx.probe_flags = s->plan->flags;
	s->fx.n_probes = s->plan->n;
	if (s->out_fd >= 0) {
		s->w = trace_writer__new_fd(s->out_fd, &s->meta);
		s->out_fd = -1;   /* the writer's now, also on failure */
	} else if (o->output) {
		s->w = trace_writer__new(o->output, &s->meta);
	}
	if (o->output && !s->w) {
		ret = -errno;
		snprintf(err, errlen, "cannot write trace file %s: %s", o->output, strerror(errno));
		goto fail;
	}
	/* the idle tasks followed (their wakers read where the runtime's
	 * profile describes its state word), and the tasks found in memory at
	 * the end of an attached recording noted, for any runtime */
	s->idle_on = s->w && !o->profile;
	/* attach first: it may reload the programs (and their maps) */
	ret = attachment__attach(s->att, s->t.img, s->t.attach_path, err, errlen);
	if (ret < 0)
		goto fail;
	int attached = ret;
	s->rb = ring_buffer__new(bpf_map__fd(attachment__skel(s->att)->maps.events), on_record, s, NULL);
	if (!s->rb) {
		ret = -errno;
		snprintf(err, errlen, "failed to open the BPF ring buffer: %s", strerror(errno));
		goto fail;
	}
	if (!o->quiet)
		notify_attached(s, attached);
	if (o->on_start)
		o->on_start(o->ctx, &s->meta);
	if (o->on_session)
		o->on_session(o->hook_ctx, s);
	ret = rec_target__go(&s->t, err, errlen);
	if (ret)
		goto fail;
	/* the maps once the launched command is exec'd (the pipe closes
	 * then): stacks, spawn sites and spawn files of a short-lived target
	 * are named after it exited */
	bool ran = !(s->t.child > 0 && rec_target__exec_error(&s->t));
	rec_stacks__prime(s->stacks);
	if (!rec_target__load_bias(&s->t, &s->dec.bias))
		s->dec.img = s->t.img;
	rec_target__resume(&s->t);   /* held at its exec until the maps were read */
	s->start = s->last_flush = clock_ns(CLOCK_MONOTONIC);
	s->deadline = o->duration > 0 ? s->start + (uint64_t)(o->duration * 1e9) : 0;
	if (o->on_running && ran)
		o->on_running(o->ctx);
	*out = s;
	return 0;
fail:
	s->state = ST_ENDED;   /* nothing to finish: free only */
	rec_session__free(s);
	return ret;
}

/* One round of the loop: drain the ring buffer (BPF wakes us only when it
 * fills up: drain on a 20 ms timer), then the checks. Returns 0 to go on,
 * 1 at the end of the recording, or -errno. */
static int step(struct rec_session *s)
{
	const struct recorder_opts *o = s->o;

	if (*o->stop || s->err)
		return 1;
	/* profile mode: a few hundred records a second, read every 100 ms
	 * (a wakeup costs more than the records) */
	int n = ring_buffer__poll(s->rb, o->profile ? 100 : 20);
	if (n >= 0 || n == -EINTR)
		n = ring_buffer__consume(s->rb);
	if (n < 0 && n != -EINTR) {
		s->err = n;
		snprintf(s->errmsg, sizeof(s->errmsg), "reading the ring buffer: %s", strerror(-n));
		return n;
	}
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	if (s->deadline && now >= s->deadline)
		return 1;
	if (o->on_tick) {
		struct raw_counters c;
		attachment__counters(s->att, &c);
		if (o->on_tick(o->ctx, now, c.lost, rec_stats__missed(&s->st, &c)))
			return 1;
	}
	if (o->on_hook_tick)
		o->on_hook_tick(o->hook_ctx, now);
	if (rec_target__gone(&s->t))
		return 1;
	if (now - s->last_flush >= 1000000000ull) {
		struct raw_counters c;
		s->last_flush = now;
		attachment__counters(s->att, &c);
		if (s->w) {
			/* every chunk carries the losses so far: a recorder killed
			 * later leaves a lower bound of them, never 0 */
			trace_writer__counts(s->w, c.lost, rec_stats__missed(&s->st, &c), now);
			int werr = trace_writer__flush(s->w);
			if (werr)
				write_failed(s, werr);
		}
		if (o->progress)
			rec_notify(o, REC_NOTICE_PROGRESS, "%.0f s, %llu events, %llu tasks, %llu lost ",
				   (double)(now - s->start) / 1e9, (unsigned long long)s->st.events,
				   (unsigned long long)s->st.tasks, (unsigned long long)c.lost);
	}
	return 0;
}

/* The end of the recording: the last records drained, a launched command
 * ended, held frees released, the trace file finished, the counts made. */
static void finish(struct rec_session *s)
{
	struct raw_counters c;
	int e;

	if (s->state == ST_ENDED)
		return;
	s->state = ST_ENDED;
	if (s->o->progress)
		rec_notify(s->o, REC_NOTICE_PROGRESS, "%s", "");
	ring_buffer__consume(s->rb);
	if (s->o->on_end) {
		s->o->on_end(s->o->hook_ctx);   /* a launched command still runs */
		/* what came meanwhile: tasks the hook found in memory whose events
		 * were on their way are seen after all */
		ring_buffer__consume(s->rb);
	}
	/* what holds the idle tasks, read while the target still runs; told
	 * after the last events, for those still idle as they were */
	if (s->idle_on && rec_idle__read(&s->idle, s->t.tgid, s->plan))
		s->idle_on = false;
	if (s->t.child > 0) {
		rec_target__stop(&s->t);
		ring_buffer__consume(s->rb);
		s->res.target_status = s->t.status;
		s->res.target_stopped = s->t.stopped;
		if ((e = rec_target__exec_error(&s->t)))
			rec_notify(s->o, REC_NOTICE_ERROR, "cannot run %s: %s", s->o->argv[0], strerror(e));
	}
	rec_fixup__flush(&s->fx);
	if (s->idle_on) {
		struct idle_emitted ie;

		rec_idle__emit(&s->idle, clock_ns(CLOCK_MONOTONIC), (uint32_t)s->t.tgid, emit, s,
			       &ie);
		s->res.idle_notes = ie.notes;
		s->res.idle_no_waker = ie.no_waker;
		s->res.before_idle = ie.before_idle;
		s->res.before_no_waker = ie.before_no_waker;
		s->res.before_queued = ie.before_queued;
		s->res.before_running = ie.before_running;
	}
	attachment__counters(s->att, &c);
	s->end = (struct as_trace_end){
		.events = s->w ? trace_writer__events(s->w) : s->st.events,
		.lost = c.lost,
		.missed = rec_stats__missed(&s->st, &c),
		.end_ns = clock_ns(CLOCK_MONOTONIC),
	};
	if (s->w)
		trace_writer__counts(s->w, s->end.lost, s->end.missed, s->end.end_ns);
	int fret = s->w ? trace_writer__finish(s->w, &s->end) : 0;
	if (fret && !s->err) {
		s->err = fret;
		snprintf(s->errmsg, sizeof(s->errmsg), "writing trace file %s: %s", s->o->output,
			 strerror(-fret));
	}
	if (s->w && trace_writer__salvaged(s->w)) {
		size_t n = strlen(s->errmsg);
		s->end.events = trace_writer__events(s->w);
		snprintf(s->errmsg + n, sizeof(s->errmsg) - n, "; %s ends after its last whole chunk, "
			 "with its trailer (%llu events)", s->o->output,
			 (unsigned long long)s->end.events);
	}
	rec_stats__result(&s->st, &s->end, &s->res);
	if (s->o->profile) {
		const struct u64map *m = &s->prof_declared;
		s->res.profile_tasks = m->len;
		s->res.profile_no_id = s->st.profile_no_id;
		s->res.profile_offcpu = s->prof_offcpu;
		for (size_t i = 0; i < m->cap; i++) {
			const char *name;
			bool rt;
			if (m->keys[i] == 0 || m->keys[i] == UINT64_MAX)
				continue;
			s->res.profile_unnamed += (m->vals[i] & 0xff) == 1;
			s->res.profile_runtime += prof_known(s, m->keys[i], &name, &rt) && rt;
		}
	}
	s->res.stacks = s->w ? trace_writer__stacks(s->w) : 0;
	s->res.bytes = s->w ? trace_writer__bytes(s->w) : 0;
}

int rec_session__run(struct rec_session *s)
{
	while (s->state == ST_RUNNING && !step(s))
		;
	finish(s);
	return s->err;
}

void rec_session__result(const struct rec_session *s, struct recorder_result *res)
{
	*res = s->res;
}

const char *rec_session__error(const struct rec_session *s)
{
	return s->errmsg;
}

/* the session as a source */

static int src_next(void *impl, struct as_event *ev)
{
	struct rec_session *s = impl;

	while (s->q_head == s->q_len) {
		if (s->state == ST_ENDED)
			return s->err ? s->err : 0;
		if (step(s))
			finish(s);
		if (s->queue_failed && !s->err) {
			s->err = -ENOMEM;
			snprintf(s->errmsg, sizeof(s->errmsg), "recording: out of memory");
			finish(s);
		}
	}
	*ev = s->q[s->q_head++];
	return 1;
}

static const struct as_trace_meta *src_meta(void *impl)
{
	return &((struct rec_session *)impl)->meta;
}

static const struct as_stack *src_stack(void *impl, uint32_t id)
{
	struct rec_session *s = impl;

	return id && id <= s->n_stk ? s->stk[id - 1] : NULL;
}

static const struct as_trace_end *src_end(void *impl)
{
	struct rec_session *s = impl;

	return s->state == ST_ENDED && !s->err && s->q_head == s->q_len ? &s->end : NULL;
}

static const char *src_error(void *impl)
{
	return ((struct rec_session *)impl)->errmsg;
}

static void src_free(void *impl)
{
	rec_session__free(impl);
}

static const struct as_source_ops session_ops = {
	.next = src_next, .meta = src_meta, .stack = src_stack, .end = src_end, .error = src_error,
	.free = src_free,
};

void rec_session__source(struct rec_session *s, struct as_source *src)
{
	s->queue_on = true;
	src->ops = &session_ops;
	src->impl = s;
	src->name = s->t.binary;
}

void rec_session__free(struct rec_session *s)
{
	if (!s)
		return;
	finish(s);
	ring_buffer__free(s->rb);
	trace_writer__free(s->w);
	if (s->out_fd >= 0)
		close(s->out_fd);
	attachment__free(s->att);
	rec_stacks__free(s->stacks);
	rec_fixup__clear(&s->fx);
	rec_stats__clear(&s->st);
	probe_plan__free(s->plan);
	rec_target__release(&s->t);
	free(s->q);
	for (size_t i = 0; i < s->n_stk; i++)
		free(s->stk[i]);
	free(s->stk);
	u64map__clear(&s->stk_by_hash);
	u64map__clear(&s->prof_known);
	u64map__clear(&s->prof_declared);
	u64map__clear(&s->prof_threads);
	rec_idle__free(&s->idle);
	strtab__clear(&s->strs);
	free(s);
}

int recorder_run(const struct recorder_opts *o, struct recorder_result *res,
		 char *err, size_t errlen)
{
	struct rec_session *s = NULL;
	int ret;

	memset(res, 0, sizeof(*res));
	res->target_status = -1;
	ret = rec_session__open(o, &s, err, errlen);
	if (ret)
		return ret;
	ret = rec_session__run(s);
	if (ret)
		snprintf(err, errlen, "%s", rec_session__error(s));
	rec_session__result(s, res);
	res->started = true;
	rec_session__free(s);
	return ret;
}
