/* The Prometheus text exposition of serve's metrics (expo.h). */
#include "serve/expo.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_S 1000000000ull

char *expo_seconds(char *buf, uint64_t ns)
{
	int n = snprintf(buf, 32, "%" PRIu64, (uint64_t)(ns / NS_PER_S));
	uint64_t frac = ns % NS_PER_S;

	if (frac) {
		char f[16];
		snprintf(f, sizeof(f), "%09" PRIu64, (uint64_t)frac);
		for (int i = 8; i >= 0 && f[i] == '0'; i--)
			f[i] = '\0';
		snprintf(buf + n, 32 - (size_t)n, ".%s", f);
	}
	return buf;
}

void expo_label_value(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\')
			fputs("\\\\", f);
		else if (*v == '"')
			fputs("\\\"", f);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{k1="v1",...} (n pairs, NULL values skipped) */
static void series(FILE *f, const char *name, const char *suffix, const char *const *kv, size_t n)
{
	bool any = false;

	fprintf(f, "%s%s", name, suffix ? suffix : "");
	for (size_t i = 0; i < n; i++) {
		if (!kv[2 * i + 1])
			continue;
		fprintf(f, "%s%s=\"", any ? "," : "{", kv[2 * i]);
		expo_label_value(f, kv[2 * i + 1]);
		fputc('"', f);
		any = true;
	}
	if (any)
		fputc('}', f);
	fputc(' ', f);
}

static void value_u64(FILE *f, uint64_t v)
{
	fprintf(f, "%" PRIu64 "\n", v);
}

static void value_s(FILE *f, uint64_t ns)
{
	char b[32];

	fprintf(f, "%s\n", expo_seconds(b, ns));
}

/* One histogram of the aggregation (kernel buckets merged by twos: the
 * upper bounds 2^10, 2^12, ... 2^36 ns, then +Inf). */
static void histogram(FILE *f, const char *name, const char *const *kv, size_t n,
		      const __u64 *hist, uint64_t sum_ns)
{
	const char *lkv[16];
	char le[32];
	uint64_t cum = 0;

	memcpy(lkv, kv, 2 * n * sizeof(*kv));
	lkv[2 * n] = "le";
	for (uint32_t k = 0; k < AGG_BUCKETS; k++) {
		cum += hist[k];
		if (k == AGG_BUCKETS - 1)
			lkv[2 * n + 1] = "+Inf";
		else if (k % 2 == 0)
			lkv[2 * n + 1] = expo_seconds(le, 1ull << (AGG_BUCKET_MIN_LOG2 + k));
		else
			continue;
		series(f, name, "_bucket", lkv, n + 1);
		value_u64(f, cum);
	}
	series(f, name, "_sum", kv, n);
	value_s(f, sum_ns);
	series(f, name, "_count", kv, n);
	value_u64(f, cum);
}

static void tasks_families(FILE *f, const struct expo_state *st)
{
	const struct registry *r = st->reg;
	struct agg_group *sums = calloc(r->n_groups ? r->n_groups : 1, sizeof(*sums));
	char help[512], b1[32], b2[32];

	if (!sums)
		return;
	for (size_t i = 0; i < r->n_groups; i++)
		registry__group_sum(r, i, &sums[i]);
#define GROUPS(cond)                                                                        \
	for (size_t i = 0; i < r->n_groups; i++)                                            \
		if (cond)
#define KV(i) (const char *[]){ "task", r->groups[i].task, "spawn", \
				r->groups[i].spawn[0] ? r->groups[i].spawn : NULL }
	family(f, "asyncscope_task_polls_total", "counter",
	       "Polls of the target's tasks that ended, by task group (root future, spawn site); "
	       "serve --tasks, counted in the kernel");
	GROUPS(sums[i].polls || r->groups[i].live) {
		series(f, "asyncscope_task_polls_total", NULL, KV(i), 2);
		value_u64(f, sums[i].polls);
	}
	family(f, "asyncscope_task_poll_duration_seconds", "histogram",
	       "Duration of each poll of the target's tasks, by task group");
	GROUPS(sums[i].polls || r->groups[i].live)
		histogram(f, "asyncscope_task_poll_duration_seconds", KV(i), 2, sums[i].poll_hist,
			  sums[i].poll_ns);
	family(f, "asyncscope_task_scheduling_delay_seconds", "histogram",
	       "Time from a task becoming runnable (woken or spawned) to the start of its next "
	       "poll, by task group");
	GROUPS(sums[i].polls || r->groups[i].live)
		histogram(f, "asyncscope_task_scheduling_delay_seconds", KV(i), 2, sums[i].sched_hist,
			  sums[i].sched_ns);
	family(f, "asyncscope_task_wakes_total", "counter",
	       "Wakes of the target's tasks (not the spawn's first schedule), by task group and "
	       "source: task (inside a poll), io (the I/O driver), timer, other (a thread outside "
	       "any poll)");
	static const char *const src[AGG_WAKE__MAX] = { "task", "io", "timer", "other" };
	GROUPS(sums[i].polls || r->groups[i].live) for (int s = 0; s < AGG_WAKE__MAX; s++) {
		const char *kv[] = { "task", r->groups[i].task, "spawn",
				     r->groups[i].spawn[0] ? r->groups[i].spawn : NULL, "source", src[s] };
		series(f, "asyncscope_task_wakes_total", NULL, kv, 3);
		value_u64(f, sums[i].wakes[s]);
	}
	snprintf(help, sizeof(help), "Polls that lasted %s s or more (serve --long-poll), by task group",
		 expo_seconds(b1, st->long_poll_ns));
	family(f, "asyncscope_task_long_polls_total", "counter", help);
	GROUPS(sums[i].polls || r->groups[i].live) {
		series(f, "asyncscope_task_long_polls_total", NULL, KV(i), 2);
		value_u64(f, sums[i].long_polls);
	}
	snprintf(help, sizeof(help), "Stalls ended: idle times (last poll Pending, no wake) of %s s "
		 "or more (serve --stall) that a wake ended, by task group", expo_seconds(b2, st->stall_ns));
	family(f, "asyncscope_task_stalls_total", "counter", help);
	GROUPS(sums[i].polls || r->groups[i].live) {
		series(f, "asyncscope_task_stalls_total", NULL, KV(i), 2);
		value_u64(f, sums[i].stalls);
	}
	snprintf(help, sizeof(help), "Tasks stalled now: idle (last poll Pending, no wake since) for "
		 "%s s or more, by task group", b2);
	family(f, "asyncscope_tasks_stalled", "gauge", help);
	GROUPS(sums[i].polls || r->groups[i].live) {
		series(f, "asyncscope_tasks_stalled", NULL, KV(i), 2);
		value_u64(f, r->groups[i].stalled);
	}
	family(f, "asyncscope_tasks", "gauge", "Tasks alive now (followed since their spawn or "
	       "first poll), by task group");
	GROUPS(sums[i].polls || r->groups[i].live) {
		series(f, "asyncscope_tasks", NULL, KV(i), 2);
		value_u64(f, r->groups[i].live);
	}
	family(f, "asyncscope_tasks_spawned_total", "counter",
	       "Tasks spawned under the probes (counted at their first poll), by task group");
	GROUPS(sums[i].polls || r->groups[i].live) {
		series(f, "asyncscope_tasks_spawned_total", NULL, KV(i), 2);
		value_u64(f, sums[i].spawned);
	}
	family(f, "asyncscope_tasks_completed_total", "counter",
	       "Tasks completed (a poll returned Ready), by task group");
	GROUPS(sums[i].polls || r->groups[i].live) {
		series(f, "asyncscope_tasks_completed_total", NULL, KV(i), 2);
		value_u64(f, sums[i].ready);
	}
#undef GROUPS
#undef KV
	struct agg_totals t;
	registry__totals_sum(r, &t);
	family(f, "asyncscope_worker_parked_seconds_total", "counter",
	       "Time the runtime's worker threads spent parked (idle), summed over the workers");
	series(f, "asyncscope_worker_parked_seconds_total", NULL, NULL, 0);
	value_s(f, t.parked_ns);
	family(f, "asyncscope_worker_parks_total", "counter", "Times a worker thread parked");
	series(f, "asyncscope_worker_parks_total", NULL, NULL, 0);
	value_u64(f, t.parks);
	family(f, "asyncscope_runtime_polls_total", "counter",
	       "Polls that polled other tasks inside (a worker's own loop: the runtime's, not "
	       "counted as a task's poll)");
	series(f, "asyncscope_runtime_polls_total", NULL, NULL, 0);
	uint64_t nested = 0;
	for (size_t i = 0; i < r->n_groups; i++)
		nested += sums[i].nested;
	value_u64(f, nested);
	family(f, "asyncscope_tasks_unfollowed_total", "counter",
	       "Tasks whose wakes and scheduling delays could not be followed (the kernel's task "
	       "map was full); their polls are still counted");
	series(f, "asyncscope_tasks_unfollowed_total", NULL, NULL, 0);
	value_u64(f, t.tasks_full);
	free(sums);
}

int expo_write(FILE *f, const struct expo_state *st)
{
	const struct registry *r = st->reg;
	char help[512];

	family(f, "asyncscope_info", "gauge", "The agent: its version and mode (profile: CPU samples "
	       "and off-CPU intervals, no probes; tasks: and the task probes counting in the kernel)");
	series(f, "asyncscope_info", NULL, (const char *[]){ "version", st->version, "mode",
			       st->tasks ? "tasks" : "profile" }, 2);
	value_u64(f, 1);
	family(f, "asyncscope_target_up", "gauge", "1 while a target process is attached");
	series(f, "asyncscope_target_up", NULL, NULL, 0);
	value_u64(f, st->up);
	if (st->follow) {
		family(f, "asyncscope_target_restarts_total", "counter",
		       "Target processes attached after the first (serve --name follows restarts)");
		series(f, "asyncscope_target_restarts_total", NULL, NULL, 0);
		value_u64(f, st->attaches ? st->attaches - 1 : 0);
	}
	if (st->target_cpu_known) {
		family(f, "asyncscope_target_cpu_seconds_total", "counter",
		       "CPU time of the target processes (user and system, every thread; from /proc)");
		series(f, "asyncscope_target_cpu_seconds_total", NULL, NULL, 0);
		value_s(f, st->target_cpu_ns);
	}
	family(f, "asyncscope_cpu_samples_total", "counter", "CPU samples of the target taken");
	series(f, "asyncscope_cpu_samples_total", NULL, NULL, 0);
	value_u64(f, st->samples);
	snprintf(help, sizeof(help), "CPU time of the target by the task running, by root future "
		 "(rows runtime: a worker's own loop, none: outside any task%s, unknown: a task never "
		 "named, other: past the cap), estimated from CPU samples at %" PRIu64 " Hz per CPU",
		 st->by_task ? "" : "; this runtime keeps no task id: every sample is none",
		 st->sample_hz);
	family(f, "asyncscope_task_cpu_seconds_total", "counter", help);
	for (size_t i = 0; i < r->n_tasks; i++) {
		if (!r->tasks[i].samples)
			continue;
		series(f, "asyncscope_task_cpu_seconds_total", NULL,
		       (const char *[]){ "task", r->tasks[i].name }, 1);
		value_s(f, st->sample_hz ? r->tasks[i].samples * (NS_PER_S / st->sample_hz) : 0);
	}
	if (st->tasks || st->offcpu) {
		family(f, "asyncscope_worker_busy_seconds_total", "counter", st->tasks ?
		       "Time the target's threads spent inside polls of tasks (polls that polled no "
		       "other task; counted in the kernel), summed over the threads" :
		       "Time the target's threads spent inside tasks, estimated: CPU samples in tasks "
		       "(not the runtime's own loop) times the sample period, plus their off-CPU "
		       "intervals inside tasks");
		series(f, "asyncscope_worker_busy_seconds_total", NULL, NULL, 0);
		struct agg_totals t;
		registry__totals_sum(r, &t);
		value_s(f, st->tasks ? t.busy_ns : st->busy_est_ns);
	}
	if (st->offcpu) {
		char b[32];
		family(f, "asyncscope_offcpu_intervals_total", "counter",
		       "Off-CPU intervals of the target's threads inside tasks recorded");
		series(f, "asyncscope_offcpu_intervals_total", NULL, NULL, 0);
		value_u64(f, st->offcpu_intervals);
		snprintf(help, sizeof(help), "Time the target's threads blocked (off CPU, not preempted) "
			 "inside tasks, by culprit: the innermost kernel function that is not the "
			 "scheduler's, and the first user frame of the program's own code with its "
			 "source line; intervals of %s s or more", expo_seconds(b, st->offcpu_min_ns));
		family(f, "asyncscope_blocking_seconds_total", "counter", help);
		for (size_t i = 0; i < r->n_culprits; i++) {
			const struct reg_culprit *c = &r->culprits[i];
			if (!c->count)
				continue;
			series(f, "asyncscope_blocking_seconds_total", NULL,
			       (const char *[]){ "kernel_fn", c->kernel, "user_fn", c->user, "user_src",
						 c->src[0] ? c->src : NULL }, 3);
			value_s(f, c->ns);
		}
		family(f, "asyncscope_blocking_intervals_total", "counter",
		       "Blocking intervals inside tasks, by culprit (as asyncscope_blocking_seconds_total)");
		for (size_t i = 0; i < r->n_culprits; i++) {
			const struct reg_culprit *c = &r->culprits[i];
			if (!c->count)
				continue;
			series(f, "asyncscope_blocking_intervals_total", NULL,
			       (const char *[]){ "kernel_fn", c->kernel, "user_fn", c->user, "user_src",
						 c->src[0] ? c->src : NULL }, 3);
			value_u64(f, c->count);
		}
		family(f, "asyncscope_task_blocking_seconds_total", "counter",
		       "Time the target's threads blocked (off CPU, not preempted) inside tasks, by "
		       "root future");
		for (size_t i = 0; i < r->n_tasks; i++) {
			if (!r->tasks[i].blocked)
				continue;
			series(f, "asyncscope_task_blocking_seconds_total", NULL,
			       (const char *[]){ "task", r->tasks[i].name }, 1);
			value_s(f, r->tasks[i].blocked_ns);
		}
		family(f, "asyncscope_task_preempted_seconds_total", "counter",
		       "Time the target's threads were preempted (runnable, waiting for a CPU) inside "
		       "tasks, by root future");
		for (size_t i = 0; i < r->n_tasks; i++) {
			if (!r->tasks[i].preempted_ns)
				continue;
			series(f, "asyncscope_task_preempted_seconds_total", NULL,
			       (const char *[]){ "task", r->tasks[i].name }, 1);
			value_s(f, r->tasks[i].preempted_ns);
		}
	}
	if (st->tasks)
		tasks_families(f, st);
	family(f, "asyncscope_events_lost_total", "counter",
	       "Events the kernel could not hand over (the BPF ring buffer was full)");
	series(f, "asyncscope_events_lost_total", NULL, NULL, 0);
	value_u64(f, st->lost);
	family(f, "asyncscope_events_missed_total", "counter",
	       "Events dropped or not attributable (malformed records, full BPF maps, polls "
	       "nested too deep)");
	series(f, "asyncscope_events_missed_total", NULL, NULL, 0);
	value_u64(f, st->missed);
	snprintf(help, sizeof(help), "Label values of each bounded label set (task: root futures, "
		 "group: root future and spawn site, culprit), out of asyncscope_label_values_max");
	family(f, "asyncscope_label_values", "gauge", help);
	series(f, "asyncscope_label_values", NULL, (const char *[]){ "set", "task" }, 1);
	value_u64(f, r->n_tasks - REG_TASK__FIXED);
	if (st->tasks) {
		series(f, "asyncscope_label_values", NULL, (const char *[]){ "set", "group" }, 1);
		value_u64(f, r->n_groups - 1);
	}
	if (st->offcpu) {
		series(f, "asyncscope_label_values", NULL, (const char *[]){ "set", "culprit" }, 1);
		value_u64(f, r->n_culprits - 1);
	}
	family(f, "asyncscope_label_values_max", "gauge",
	       "The cap of each bounded label set (serve --max-groups); past it values are summed in "
	       "the row other");
	series(f, "asyncscope_label_values_max", NULL, NULL, 0);
	value_u64(f, r->cap);
	family(f, "asyncscope_label_overflow_total", "counter",
	       "Records counted in a row other because their label set was full");
	series(f, "asyncscope_label_overflow_total", NULL, (const char *[]){ "set", "task" }, 1);
	value_u64(f, r->tasks_over);
	if (st->tasks) {
		series(f, "asyncscope_label_overflow_total", NULL, (const char *[]){ "set", "group" }, 1);
		value_u64(f, r->groups_over);
	}
	if (st->offcpu) {
		series(f, "asyncscope_label_overflow_total", NULL, (const char *[]){ "set", "culprit" }, 1);
		value_u64(f, r->culprits_over);
	}
	family(f, "asyncscope_pprof_stacks_dropped_total", "counter",
	       "Stacks of CPU samples and off-CPU intervals not kept for /debug/pprof (the stack "
	       "store was full)");
	series(f, "asyncscope_pprof_stacks_dropped_total", NULL, NULL, 0);
	value_u64(f, st->stacks_dropped);
	/* the agent itself, as the Prometheus client libraries' process collector */
	family(f, "process_cpu_seconds_total", "counter", "Total user and system CPU time of the "
	       "agent (asyncscope serve itself) in seconds");
	series(f, "process_cpu_seconds_total", NULL, NULL, 0);
	value_s(f, st->self_cpu_ns);
	family(f, "process_resident_memory_bytes", "gauge", "Resident memory size of the agent in bytes");
	series(f, "process_resident_memory_bytes", NULL, NULL, 0);
	value_u64(f, st->self_rss);
	family(f, "process_virtual_memory_bytes", "gauge", "Virtual memory size of the agent in bytes");
	series(f, "process_virtual_memory_bytes", NULL, NULL, 0);
	value_u64(f, st->self_vsize);
	family(f, "process_open_fds", "gauge", "Open file descriptors of the agent");
	series(f, "process_open_fds", NULL, NULL, 0);
	value_u64(f, st->self_open_fds);
	family(f, "process_max_fds", "gauge", "Maximum open file descriptors of the agent");
	series(f, "process_max_fds", NULL, NULL, 0);
	value_u64(f, st->self_max_fds);
	family(f, "process_start_time_seconds", "gauge",
	       "Start time of the agent since the Unix epoch in seconds");
	series(f, "process_start_time_seconds", NULL, NULL, 0);
	fprintf(f, "%.3f\n", st->self_start_s);
	return ferror(f) ? -EIO : 0;
}
