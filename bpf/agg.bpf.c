/* Task mode aggregated in the kernel (serve --tasks): the same probe points
 * as record's task mode (poll entry and return, completion, wake, spawn,
 * free, park, drivers; their cookies as task.bpf.c's), but no record per
 * event: each poll adds to its task group's counters and log2 histograms
 * (struct agg_group, events.h) in a per-CPU hash map, read by user space at
 * scrape time. A group is the poll probe (the root future type of that
 * copy of raw::poll) and the spawn call site (the &'static Location the
 * spawn probe saw before the new task's first schedule on that thread; 0
 * where the runtime gives none). Per live task a small state (struct
 * agg_task): its group, when it became runnable (scheduling delay), since
 * when it is idle (stalls). Nothing goes through the ring buffer.
 *
 * Loaded only for serve --tasks (attach_extra.agg); the record programs of
 * task.bpf.c and worker.bpf.c are not loaded then. */
#include "common.bpf.h"

/* Thresholds, set before load. */
const volatile __u64 agg_long_poll_ns = 1000000;
const volatile __u64 agg_stall_ns = 1000000000;

struct agg_level {
	__u64 task;
	__u64 start;
	struct agg_site site;
	__u64 delay;       /* runnable -> this poll's start, + 1 (0: not measured) */
	__u32 probe;
	__u8 ready;
	__u8 nested;       /* another task was polled inside */
	__u8 spawned;      /* the task's first poll after its spawn */
	__u8 pad;
};

struct agg_thread {
	__u32 depth;
	__u8 in_io, in_timer, spawn_pending, pad;
	__u64 park_ts;     /* parked since, 0 not parked */
	__u64 last_wake;   /* the task the thread's last wake probe named, 0 after
	                      any other probe: a nested report of it is not a wake */
	struct agg_site spawn_site;  /* the last spawn's, for the next new task woken */
	struct agg_level lv[AS_MAX_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct agg_thread);
} agg_threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1024);
	__type(key, struct agg_key);
	__type(value, struct agg_group);
} agg_groups SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 262144);
	__type(key, __u64);
	__type(value, struct agg_task);
} agg_tasks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct agg_totals);
} agg_totals SEC(".maps");

/* A zeroed group, the value a new key is inserted with (too large for the
 * BPF stack). Never written. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct agg_group);
} agg_zero SEC(".maps");

static __always_inline struct agg_totals *totals(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&agg_totals, &zero);
}

/* floor(log2(v)) for v > 0 */
static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0, s;

	s = (v > 0xffffffffull) << 5; v >>= s; r |= s;
	s = (v > 0xffff) << 4; v >>= s; r |= s;
	s = (v > 0xff) << 3; v >>= s; r |= s;
	s = (v > 0xf) << 2; v >>= s; r |= s;
	s = (v > 0x3) << 1; v >>= s; r |= s;
	r |= (__u32)(v >> 1);
	return r;
}

/* The histogram bucket of ns (events.h, AGG_BUCKET_MIN_LOG2). */
static __always_inline __u32 agg_bucket(__u64 ns)
{
	__u32 l;

	if (ns < (1ull << AGG_BUCKET_MIN_LOG2))
		return 0;
	l = log2_u64(ns) - (AGG_BUCKET_MIN_LOG2 - 1);
	return l >= AGG_BUCKETS - 1 ? AGG_BUCKETS - 1 : l;
}

static __always_inline void hist_add(__u64 *hist, __u64 ns)
{
	__u32 b = agg_bucket(ns);

	/* keep the verifier's bound: clang may fold the clamp above */
	asm volatile("" : "+r"(b));
	if (b >= AGG_BUCKETS)
		b = AGG_BUCKETS - 1;
	hist[b]++;
}

/* The group of key, inserted when new; the overflow group when the map is
 * full (counted), NULL when even that is missing. */
static __always_inline struct agg_group *group_of(__u32 probe, const struct agg_site *site)
{
	struct agg_key k = { .site = *site, .probe = probe };
	struct agg_group *g = bpf_map_lookup_elem(&agg_groups, &k);
	__u32 zero = 0;

	if (g)
		return g;
	struct agg_group *z = bpf_map_lookup_elem(&agg_zero, &zero);
	if (z && !bpf_map_update_elem(&agg_groups, &k, z, BPF_NOEXIST))
		return bpf_map_lookup_elem(&agg_groups, &k);
	g = bpf_map_lookup_elem(&agg_groups, &k);   /* another CPU inserted it */
	if (g)
		return g;
	struct agg_totals *t = totals();
	if (t)
		t->groups_full++;
	__builtin_memset(&k.site, 0, sizeof(k.site));
	k.probe = AGG_PROBE_NONE;
	return bpf_map_lookup_elem(&agg_groups, &k);   /* put there by user space */
}

static __always_inline struct agg_thread *thread_get(bool create)
{
	return bpf_task_storage_get(&agg_threads, bpf_get_current_task_btf(), 0,
				    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

/* A task seen for the first time (not spawned under the probes, or its
 * spawn missed): followed from now. NULL when the map is full. */
static __always_inline struct agg_task *task_new(__u64 task, const struct agg_site *site,
						 __u8 spawned)
{
	struct agg_task v = { .probe = AGG_PROBE_NONE, .spawned = spawned };

	if (site)
		v.site = *site;
	if (bpf_map_update_elem(&agg_tasks, &task, &v, BPF_ANY)) {
		struct agg_totals *t = totals();
		if (t)
			t->tasks_full++;
		return NULL;
	}
	return bpf_map_lookup_elem(&agg_tasks, &task);
}

SEC("uprobe")
int agg_poll_enter(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 task = arg_reg(ctx, AS_COOKIE_REG(cookie));
	__u64 now = bpf_ktime_get_ns();
	__u32 tid;

	if (!is_target(&tid))
		return 0;
	struct agg_thread *st = thread_get(true);
	if (!st)
		return 0;
	st->last_wake = 0;
	__u32 d = st->depth;
	if (d > 0 && d <= AS_MAX_DEPTH)
		st->lv[(d - 1) & (AS_MAX_DEPTH - 1)].nested = 1;
	st->depth = d + 1;
	if (d >= AS_MAX_DEPTH) {
		struct agg_totals *t = totals();
		if (t)
			t->depth_overflow++;
		return 0;
	}
	struct agg_level *lv = &st->lv[d & (AS_MAX_DEPTH - 1)];
	lv->task = task;
	lv->start = now;
	lv->probe = AS_COOKIE_IDX(cookie);
	lv->ready = lv->nested = lv->spawned = 0;
	__builtin_memset(&lv->site, 0, sizeof(lv->site));
	lv->delay = 0;
	struct agg_task *t = bpf_map_lookup_elem(&agg_tasks, &task);
	if (!t)
		t = task_new(task, NULL, 0);
	if (!t)
		return 0;
	lv->site = t->site;
	if (t->woken_at && now >= t->woken_at)
		lv->delay = now - t->woken_at + 1;
	lv->spawned = t->spawned;
	t->spawned = 0;
	t->woken_at = 0;
	t->idle_since = 0;
	t->woken_in_poll = 0;
	t->running = 1;
	t->probe = lv->probe;
	return 0;
}

SEC("uretprobe")
int agg_poll_exit(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 tid;

	if (!is_target(&tid))
		return 0;
	struct agg_thread *st = thread_get(false);
	struct agg_totals *tot = totals();
	if (!st || !tot)
		return 0;
	st->last_wake = 0;
	__u32 d = st->depth;
	if (d == 0) {
		tot->unmatched++;
		return 0;
	}
	d--;
	st->depth = d;
	if (d >= AS_MAX_DEPTH)
		return 0;
	struct agg_level *lv = &st->lv[d & (AS_MAX_DEPTH - 1)];
	__u64 dur = now >= lv->start ? now - lv->start : 0;
	__u64 task = lv->task;
	struct agg_group *g = group_of(lv->probe, &lv->site);
	if (g) {
		if (lv->nested) {
			g->nested++;
		} else {
			g->polls++;
			g->poll_ns += dur;
			hist_add(g->poll_hist, dur);
			if (dur >= agg_long_poll_ns)
				g->long_polls++;
			if (lv->ready)
				g->ready++;
			if (lv->spawned)
				g->spawned++;
			if (lv->delay) {
				__u64 delay = lv->delay - 1;
				g->sched_count++;
				g->sched_ns += delay;
				hist_add(g->sched_hist, delay);
			}
		}
	}
	if (!lv->nested) {
		tot->busy_ns += dur;
		tot->leaf_polls++;
	}
	struct agg_task *t = bpf_map_lookup_elem(&agg_tasks, &task);
	if (!t)
		return 0;
	if (lv->ready) {
		bpf_map_delete_elem(&agg_tasks, &task);   /* done: its free may be late */
		return 0;
	}
	t->running = 0;
	if (t->woken_in_poll) {
		t->woken_in_poll = 0;
		t->woken_at = now;   /* runnable from the end of this poll */
	} else {
		t->idle_since = now;
	}
	return 0;
}

/* Entered only when the task being polled completes (task.bpf.c's
 * task_ready: AS_CF_INSIDE, the register points into the task). */
SEC("uprobe")
int agg_ready(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 task = arg_reg(ctx, AS_COOKIE_REG(cookie));
	__u64 slack = AS_COOKIE_FLAGS(cookie) & AS_CF_INSIDE ? AS_INSIDE_MAX : 0;
	__u32 tid;

	if (!is_target(&tid))
		return 0;
	struct agg_thread *st = thread_get(false);
	if (!st)
		return 0;
	__u32 d = st->depth;
	if (d == 0 || d > AS_MAX_DEPTH)
		return 0;
	struct agg_level *lv = &st->lv[(d - 1) & (AS_MAX_DEPTH - 1)];
	if (task - lv->task <= slack)
		lv->ready = 1;
	return 0;
}

SEC("uprobe")
int agg_wake(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 task = arg_reg(ctx, AS_COOKIE_REG(cookie));
	__u64 now = bpf_ktime_get_ns();
	__u32 tid;

	if (!task || !is_target(&tid))
		return 0;
	struct agg_thread *st = thread_get(true);
	if (st) {
		/* a waker call, then the scheduler function it reaches out of
		 * line, nothing between: one wake (as record's fix-up) */
		if ((AS_COOKIE_FLAGS(cookie) & AS_CF_NESTED) && st->last_wake == task) {
			st->last_wake = 0;
			return 0;
		}
		st->last_wake = task;
	}
	struct agg_task *t = bpf_map_lookup_elem(&agg_tasks, &task);
	if (!t) {
		/* a new task's first schedule (its spawn's, when a spawn was
		 * seen on this thread since), or a task older than the probes */
		__u8 spawned = st && st->spawn_pending;
		t = task_new(task, spawned ? &st->spawn_site : NULL, spawned);
		if (st)
			st->spawn_pending = 0;
		if (t)
			t->woken_at = now;
		if (spawned)
			return 0;   /* the spawn's schedule: not a wake */
		if (!t)
			return 0;
	}
	if (t->running) {
		t->woken_in_poll = 1;
	} else if (!t->woken_at) {
		t->woken_at = now;
	}
	__u32 src = AGG_WAKE_OTHER;
	if (st && st->in_io)
		src = AGG_WAKE_IO;
	else if (st && st->in_timer)
		src = AGG_WAKE_TIMER;
	else if (st && st->depth)
		src = AGG_WAKE_TASK;
	__u64 idle = t->idle_since && now > t->idle_since ? now - t->idle_since : 0;
	t->idle_since = 0;
	if (t->probe == AGG_PROBE_NONE)
		return 0;   /* never polled yet: no group to count it in */
	struct agg_group *g = group_of(t->probe, &t->site);
	if (!g)
		return 0;
	g->wakes[src & 3]++;
	if (idle >= agg_stall_ns)
		g->stalls++;
	return 0;
}

/* A spawn call site (&'static Location in the cookie's register): the next
 * new task woken on this thread is the one spawned there. */
SEC("uprobe")
int agg_spawn(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 loc = arg_reg(ctx, AS_COOKIE_REG(cookie));
	__u32 tid;

	if (!is_target(&tid))
		return 0;
	struct { __u64 ptr, len; __u32 line, col; } l;
	struct agg_thread *st = thread_get(true);
	struct agg_totals *tot = totals();
	if (tot)
		tot->spawned++;
	if (!st)
		return 0;
	if (bpf_probe_read_user(&l, sizeof(l), (void *)loc))
		__builtin_memset(&l, 0, sizeof(l));
	st->spawn_site.file = l.ptr;
	st->spawn_site.file_len = l.len < 0xffffffffull ? (__u32)l.len : 0xffffffffu;
	st->spawn_site.line = l.line;
	st->spawn_site.col = l.col;
	st->spawn_site.pad = 0;
	st->spawn_pending = 1;
	return 0;
}

/* A spawn seen where the register holds the new task and no &Location
 * (tokio 1.53's bind_inner): the task followed from here, site unknown. */
SEC("uprobe")
int agg_spawn_task(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 task = arg_reg(ctx, AS_COOKIE_REG(cookie));
	__u32 tid;

	if (!task || !is_target(&tid))
		return 0;
	struct agg_totals *tot = totals();
	if (tot)
		tot->spawned++;
	task_new(task, NULL, 1);
	return 0;
}

SEC("uprobe")
int agg_free(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 task = arg_reg(ctx, AS_COOKIE_REG(cookie));
	__u32 tid;

	if (!is_target(&tid))
		return 0;
	bpf_map_delete_elem(&agg_tasks, &task);
	return 0;
}

SEC("uprobe")
int agg_park_enter(struct pt_regs *ctx)
{
	__u32 tid;

	if (!is_target(&tid))
		return 0;
	struct agg_thread *st = thread_get(true);
	if (st)
		st->park_ts = bpf_ktime_get_ns();
	return 0;
}

SEC("uretprobe")
int agg_park_exit(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 tid;

	if (!is_target(&tid))
		return 0;
	struct agg_thread *st = thread_get(false);
	struct agg_totals *tot = totals();
	if (!st || !tot || !st->park_ts)
		return 0;
	if (now > st->park_ts)
		tot->parked_ns += now - st->park_ts;
	tot->parks++;
	st->park_ts = 0;
	return 0;
}

/* Runtime driver context (I/O driver turn, timer processing): wakes made
 * inside are counted by that source. */
static __always_inline int agg_driver(struct pt_regs *ctx, int delta)
{
	__u32 kind = AS_COOKIE_KIND(bpf_get_attach_cookie(ctx));
	__u32 tid;

	if (!is_target(&tid))
		return 0;
	struct agg_thread *st = thread_get(delta > 0);
	if (!st)
		return 0;
	driver_nest(kind, delta, &st->in_io, &st->in_timer);
	return 0;
}

SEC("uprobe")
int agg_driver_enter(struct pt_regs *ctx)
{
	return agg_driver(ctx, 1);
}

SEC("uretprobe")
int agg_driver_exit(struct pt_regs *ctx)
{
	return agg_driver(ctx, -1);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
