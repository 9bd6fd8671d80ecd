/* Loading the BPF programs and attaching them at every point of a probe
 * plan. The only module besides src/record that touches libbpf. */
#ifndef AS_PROBE_ATTACH_H
#define AS_PROBE_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "probe/plan.h"

struct asyncscope_bpf;
struct raw_counters;

struct attachment;

/* Checks what the kernel must offer (BTF, ring buffers, permission to load
 * BPF). Returns 0, or -errno with a one-line message and fix in err. */
int attach_check_kernel(char *err, size_t errlen);

/* What to trace besides the plan's probes. */
struct attach_extra {
	bool offcpu;              /* off-CPU intervals inside polls (sched_switch) */
	uint64_t offcpu_min_ns;   /* shortest interval emitted */
	uint32_t sample_hz;       /* CPU-clock samples per second per CPU, 0 none */
	bool sample_dwarf;        /* samples also copy user registers and stack */
	bool offcpu_dwarf;        /* off-CPU intervals also copy user registers and stack */
	bool runq;                /* run-queue waits (sched_wakeup*, sched_switch) */
	bool uring;               /* io_uring submissions and completions */
	/* Profile mode (asyncscope profile): no uprobe loaded or attached, the
	 * plan's probes aside; samples and off-CPU intervals carry the task id
	 * read from the thread's CONTEXT (bpf/task_ctx.bpf.h), where ctx says
	 * (dump/rt_context.h's struct rt_task_id_loc; !has_ctx: the runtime
	 * has none, task 0 everywhere). */
	bool profile;
	/* serve --tasks: the plan's task probes with the in-kernel
	 * aggregation's programs (bpf/agg.bpf.c) instead of the recording ones:
	 * no record per poll; polls at least agg_long_poll_ns long are counted
	 * long, idle times at least agg_stall_ns stalls */
	bool agg;
	uint64_t agg_long_poll_ns, agg_stall_ns;
	struct {
		bool has_ctx;
		int64_t tp_off;
		uint32_t state_off, state_size;
		uint64_t state_alive;
		uint32_t tag_off, tag_size;
		uint64_t tag_none;
		uint32_t id_off;
		uint32_t loop_rt_off, loop_rt_size;   /* 0 size: no worker-loop test */
		uint64_t loop_rt_outside;
		uint32_t loop_budget_off, loop_budget_size;
		uint64_t loop_budget_none;
	} ctx;
};

/* Opens and loads the BPF object for tgid with the plan's settings and
 * extra (NULL: nothing extra). No probe is attached yet. NULL with a
 * message in err on failure. */
struct attachment *attachment__load(const struct probe_plan *plan, pid_t tgid,
				    size_t ringbuf_bytes, const struct attach_extra *extra,
				    char *err, size_t errlen);
/* ringbuf_bytes rounded up to what the kernel accepts (power of two, at
 * least a page); 0 gives the default of 8 MiB. */
size_t attach_ringbuf_size(size_t ringbuf_bytes);
/* Attaches every planned probe (none in profile mode) to binary (a path the kernel can open, e.g.
 * /proc/PID/exe; img, borrowed, is its ELF image, for file offsets), the sched_switch program when extra->offcpu, and a
 * CPU-clock perf event per online CPU when extra->sample_hz, and the
 * scheduler tracepoints of run-queue waits when extra->runq, and the
 * io_uring tracepoints when extra->uring. Returns the number of probes attached (uretprobes count
 * separately), or -errno with a message in err. */
struct elf_image;
int attachment__attach(struct attachment *a, const struct elf_image *img, const char *binary,
		       char *err, size_t errlen);
/* The loaded skeleton (borrowed until attachment__free). */
struct asyncscope_bpf *attachment__skel(struct attachment *a);
/* Current BPF-side counters, and the kernel's count of our programs' runs
 * it skipped (prog_misses, read at most once a second). */
void attachment__counters(struct attachment *a, struct raw_counters *out);
/* With extra->agg: the aggregation's maps (agg_groups, agg_tasks,
 * agg_totals; events.h), descriptors borrowed until attachment__free().
 * Returns 0, or -ENOENT without the aggregation. */
int attachment__agg_fds(const struct attachment *a, int *groups, int *tasks, int *totals);
/* Detaches and unloads. Accepts NULL. */
void attachment__free(struct attachment *a);

#endif
