/* A window's profile as gzip'd pprof (window.h, window__encode), built
 * with the project's pprof encoder (src/output/pprof.h), the same as
 * export --format pprof's, stacks folded as there. Each sample is one
 * (stack, task) entry of the window: its locations leaf first (kernel
 * frames, then user frames, then a root frame named after the task), its
 * values (CPU: CPU nanoseconds, samples; off-CPU: off-CPU nanoseconds,
 * intervals; the first the default), and the label task=NAME. Frames are
 * named already (the recorder symbolised them). */
#include "serve/window.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The BPF program that took the stack, at its top: not the target's. */
static bool tracing_frame(const char *s)
{
	static const char *const pre[] = { "__traceiter_", "__bpf_", "bpf_", "_einittext",
					   "perf_", "__perf_", NULL };

	if (!s || !*s)
		return true;
	for (const char *const *p = pre; *p; p++)
		if (!strncmp(s, *p, strlen(*p)))
			return true;
	return false;
}

#include "output/pprof.h"

int window__encode(const struct window *w, const struct stack_store *stacks,
		   const struct registry *reg, const char *target, uint64_t real_start_ns,
		   uint8_t **buf, size_t *len)
{
	bool cpu = w->kind == HTTP_WINDOW_CPU;
	struct pprof *p = pprof__new();
	char line[768];
	int ret = 0;

	*buf = NULL;
	*len = 0;
	if (!p)
		return -ENOMEM;
	int t0 = pprof__add_type(p, cpu ? "cpu" : "offcpu", "nanoseconds");
	if (t0 < 0 || pprof__add_type(p, cpu ? "samples" : "intervals", "count") < 0 ||
	    pprof__set_default_type(p, t0) ||
	    (cpu && pprof__set_period(p, "cpu", "nanoseconds", (int64_t)w->period_ns)) ||
	    (target && pprof__set_main_binary(p, target, NULL))) {
		ret = -ENOMEM;
		goto out;
	}
	pprof__set_time(p, (int64_t)real_start_ns, (int64_t)(w->end_ns - w->start_ns));
	snprintf(line, sizeof(line), cpu ?
		 "asyncscope serve: CPU samples of %s at %.0f Hz per CPU, by the task running "
		 "(its root frame and label task)" :
		 "asyncscope serve: time %s's threads blocked (off CPU, not preempted) inside tasks, "
		 "by stack at the switch (root frame and label task: the task)", target ? target : "?",
		 w->period_ns ? 1e9 / (double)w->period_ns : 0.0);
	if ((ret = pprof__add_comment(p, line)))
		goto out;
	if (w->folded) {
		snprintf(line, sizeof(line), "%llu samples past %d distinct stacks kept without "
			 "their stack", (unsigned long long)w->folded, WINDOW_MAX_ENTRIES);
		if ((ret = pprof__add_comment(p, line)))
			goto out;
	}
	for (size_t i = 0; i < w->n && !ret; i++) {
		const struct window_entry *en = &w->e[i];
		const struct kept_stack *k = stack_store__get(stacks, en->stack);
		const char *root[1] = { en->task < reg->n_tasks ? reg->tasks[en->task].name : "unknown" };
		struct pprof_label lab[1] = { { .key = "task", .str = root[0] } };
		int64_t v[2] = { (int64_t)en->ns, (int64_t)en->count };
		uint32_t skip = 0;
		while (k && skip < k->st.n_kernel && tracing_frame(k->st.frames[skip].sym))
			skip++;
		ret = pprof__add_stack(p, &(struct pprof_stack){ .roots = root, .n_roots = 1,
				       .stack = k ? &k->st : NULL, .skip_kernel = skip }, v, lab, 1);
	}
	if (!ret)
		ret = pprof__write_mem(p, buf, len);
out:
	pprof__free(p);
	return ret;
}

