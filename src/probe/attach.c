/* open -> set rodata -> load -> attach, one uprobe (and uretprobe) per plan
 * point, with the plan index, argument register and per-probe flags (task
 * id layout, pointer inside the task) in the BPF cookie. */
#include "probe/attach.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "events.h"
#include "probe/link_hold.h"
#include "asyncscope.skel.h"

/* Kernel ABI for uprobe_multi links (Linux 6.6), which libbpf 1.1 and the
 * distribution's UAPI headers predate: one link attaches a program at many
 * offsets of one binary, and is released with one grace period instead of
 * one per probe (~0.1 s each, which made stopping take seconds). */
#define AS_BPF_TRACE_UPROBE_MULTI 48
#define AS_BPF_F_UPROBE_MULTI_RETURN 1
#define AS_BPF_LINK_CREATE 28

struct uprobe_multi_attr {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u64 path;
	__u64 offsets;
	__u64 ref_ctr_offsets;
	__u64 cookies;
	__u32 cnt;
	__u32 um_flags;
	__u32 pid;
	__u8 pad[128 - 60];
};
_Static_assert(sizeof(struct uprobe_multi_attr) == 128, "link_create attr layout");

struct attachment {
	struct asyncscope_bpf *skel;
	const struct probe_plan *plan;
	pid_t tgid;
	size_t ringbuf_bytes;
	struct attach_extra extra;
	bool multi;             /* programs loaded for uprobe_multi links */
	struct bpf_link **links;
	size_t n_links;
	int *fds;               /* uprobe_multi link fds */
	size_t n_fds;
	struct link_hold *hold; /* the fds once attached, held apart (probe/link_hold.h) */
	uint64_t misses;        /* the programs' recursion_misses, summed ... */
	struct timespec misses_at; /* ... when (CLOCK_MONOTONIC; read again after 1 s) */
};

static int silent_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && getenv("ASYNCSCOPE_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

/* Effective capabilities from /proc/self/status (no libcap dependency). */
static bool may_trace(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long long eff = 0;

	if (!f)
		return geteuid() == 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	const unsigned long long sys_admin = 1ull << 21, perfmon = 1ull << 38, bpf = 1ull << 39;
	return (eff & sys_admin) || ((eff & bpf) && (eff & perfmon));
}

int attach_check_kernel(char *err, size_t errlen)
{
	libbpf_set_print(silent_print);
	if (!may_trace()) {
		snprintf(err, errlen, "not allowed to use BPF: run as root (sudo) or grant "
			 "CAP_BPF and CAP_PERFMON (setcap cap_bpf,cap_perfmon+ep asyncscope)");
		return -EPERM;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		snprintf(err, errlen, "kernel has no BTF (/sys/kernel/btf/vmlinux missing): "
			 "use a kernel built with CONFIG_DEBUG_INFO_BTF=y");
		return -ENOTSUP;
	}
	int ret = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL);
	if (ret == -EPERM || (ret < 0 && geteuid() != 0)) {
		snprintf(err, errlen, "not allowed to use BPF: run as root (sudo) or grant "
			 "CAP_BPF and CAP_PERFMON");
		return -EPERM;
	}
	if (ret == 0) {
		snprintf(err, errlen, "kernel has no BPF ring buffer: asyncscope needs Linux 5.8 or later");
		return -ENOTSUP;
	}
	return 0;
}

size_t attach_ringbuf_size(size_t bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size = page;

	if (bytes == 0)
		bytes = 8u << 20;
	while (size < bytes && size < (1u << 30))
		size <<= 1;
	return size;
}

/* uprobe_multi exists from Linux 6.6; ASYNCSCOPE_NO_UPROBE_MULTI=1 forces
 * one perf-event link per probe. */
static bool kernel_has_uprobe_multi(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (getenv("ASYNCSCOPE_NO_UPROBE_MULTI") || uname(&u) ||
	    sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 6);
}

/* serve --tasks (attach_extra.agg): the in-kernel aggregation's programs
 * (bpf/agg.bpf.c) at the same points, none for USDT and futures. */
static void agg_role_progs(struct asyncscope_bpf *skel, unsigned role, uint8_t flags,
			   struct bpf_program **entry, struct bpf_program **exit)
{
	switch (role) {
	case AS_ROLE_POLL:
		*entry = skel->progs.agg_poll_enter;
		*exit = flags & PLAN_F_NO_RETURN ? NULL : skel->progs.agg_poll_exit;
		break;
	case AS_ROLE_READY: *entry = skel->progs.agg_ready; break;
	case AS_ROLE_WAKE: *entry = skel->progs.agg_wake; break;
	case AS_ROLE_SPAWN:
		/* a task's name (PLAN_F_NAME) is not a group's: not attached */
		*entry = flags & PLAN_F_NAME ? NULL : flags & PLAN_F_STACK ?
			 skel->progs.agg_spawn_task : skel->progs.agg_spawn;
		break;
	case AS_ROLE_FREE: *entry = skel->progs.agg_free; break;
	case AS_ROLE_PARK: *entry = skel->progs.agg_park_enter; *exit = skel->progs.agg_park_exit; break;
	case AS_ROLE_IO_DRIVER:
	case AS_ROLE_TIMER:
		*entry = skel->progs.agg_driver_enter;
		*exit = skel->progs.agg_driver_exit;
		break;
	default: break;
	}
}

/* The entry and return programs serving a role (NULL where none). */
static void role_progs(const struct attachment *a, unsigned role, uint8_t flags,
		       struct bpf_program **entry, struct bpf_program **exit)
{
	struct asyncscope_bpf *skel = a->skel;

	*entry = *exit = NULL;
	if (a->extra.agg) {
		agg_role_progs(skel, role, flags, entry, exit);
		return;
	}
	if (role == AS_ROLE_SPAWN && (flags & (PLAN_F_STACK | PLAN_F_NAME))) {
		*entry = flags & PLAN_F_NAME ? skel->progs.task_name : skel->progs.task_spawn_stack;
		return;
	}
	switch (role) {
	case AS_ROLE_POLL:
		*entry = skel->progs.poll_enter;
		*exit = flags & PLAN_F_NO_RETURN ? NULL : skel->progs.poll_exit;
		break;
	case AS_ROLE_READY: *entry = skel->progs.task_ready; break;
	case AS_ROLE_WAKE: *entry = skel->progs.task_wake; break;
	case AS_ROLE_SPAWN: *entry = skel->progs.task_spawn; break;
	case AS_ROLE_FREE: *entry = skel->progs.task_free; break;
	case AS_ROLE_PARK: *entry = skel->progs.park_enter; *exit = skel->progs.park_exit; break;
	case AS_ROLE_IO_DRIVER:
	case AS_ROLE_TIMER: *entry = skel->progs.driver_enter; *exit = skel->progs.driver_exit; break;
	case AS_ROLE_USDT: *entry = skel->progs.usdt_hit; break;
	case AS_ROLE_FUTURE: *entry = skel->progs.future_enter; *exit = skel->progs.future_exit; break;
	default: break;
	}
}

static uint64_t probe_cookie(const struct probe_plan *plan, size_t idx)
{
	const struct as_probe *p = &plan->probes[idx];
	uint8_t f = plan->flags[idx];

	if (p->role == AS_ROLE_FUTURE)
		return AS_FCOOKIE(idx, p->arg_reg, p->state_off >= 0 ? (uint32_t)p->state_off + 1 : 0);
	if (p->role == AS_ROLE_USDT)
		/* the register's pt_regs offset where the usual cookie has the
		 * argument register number */
		return plan->usdt_arg[idx].kind == USDT_ARG_REG ?
		       AS_COOKIE_F(idx, plan->usdt_arg[idx].reg_off, 0, AS_CF_ARG_REG) :
		       AS_COOKIE(idx, 0, 0);
	return AS_COOKIE_F(idx, p->arg_reg, p->role == AS_ROLE_IO_DRIVER ? AS_CTX_IO :
			   p->role == AS_ROLE_TIMER ? AS_CTX_TIMER : 0,
			   (f & PLAN_F_TASK_ID ? AS_CF_TASK_ID : 0) | (f & PLAN_F_INSIDE ? AS_CF_INSIDE : 0) |
			   (f & PLAN_F_STACK ? AS_CF_STACK : 0) | (f & PLAN_F_NESTED ? AS_CF_NESTED : 0));
}

/* The tracepoint programs, attached on their own rather than at plan points. */
static bool not_uprobe(const struct asyncscope_bpf *skel, const struct bpf_program *prog)
{
	return prog == skel->progs.thread_exit || prog == skel->progs.offcpu_switch ||
	       prog == skel->progs.cpu_sample || prog == skel->progs.runq_wakeup ||
	       prog == skel->progs.runq_wakeup_new || prog == skel->progs.runq_switch ||
	       prog == skel->progs.uring_submit || prog == skel->progs.uring_complete;
}

static int open_and_load(struct attachment *a, bool multi, char *err, size_t errlen)
{
	const struct probe_plan *plan = a->plan;
	int ret;

	a->multi = multi;
	a->skel = asyncscope_bpf__open();
	if (!a->skel) {
		ret = -errno;
		snprintf(err, errlen, "failed to open BPF object: %s", strerror(errno));
		return ret;
	}
	a->skel->rodata->targ_tgid = (__u32)a->tgid;
	if (plan->id_profile) {
		a->skel->rodata->hdr_vtable_off = probe_plan__hdr_vtable_off(plan);
		a->skel->rodata->vtable_id_off_slot = probe_plan__vtable_id_off_slot(plan);
		a->skel->rodata->spawn_meta_name_off = probe_plan__spawn_meta_name_off(plan);
		/* ids kept from a task's first poll to its free: only with the
		 * free probe that ends them (a freed header is reused) */
		a->skel->rodata->cache_task_ids = probe_plan__frees_tasks(plan, plan->id_profile);
	}
	a->skel->rodata->bare_probes = getenv("ASYNCSCOPE_BARE_PROBES") != NULL;
	size_t rb = attach_ringbuf_size(a->ringbuf_bytes);
	a->skel->rodata->wakeup_bytes = rb / 4;
	bpf_map__set_max_entries(a->skel->maps.events, (__u32)rb);
	a->skel->rodata->offcpu_min_ns = a->extra.offcpu_min_ns;
	if (!a->extra.offcpu) {
		/* not loaded at all, and its map kept tiny */
		bpf_program__set_autoload(a->skel->progs.offcpu_switch, false);
		bpf_map__set_max_entries(a->skel->maps.offcpu_pending, 1);
	}
	/* one of the two pending maps is used: keep the other tiny */
	a->skel->rodata->offcpu_dwarf = a->extra.offcpu && a->extra.offcpu_dwarf;
	bpf_map__set_max_entries(a->extra.offcpu && a->extra.offcpu_dwarf ? a->skel->maps.offcpu_pending :
				 a->skel->maps.offcpu_pending_dwarf, 1);
	if (!a->extra.sample_hz)
		bpf_program__set_autoload(a->skel->progs.cpu_sample, false);
	a->skel->rodata->sample_dwarf = a->extra.sample_dwarf;
	if (!a->extra.runq) {
		bpf_program__set_autoload(a->skel->progs.runq_wakeup, false);
		bpf_program__set_autoload(a->skel->progs.runq_wakeup_new, false);
		bpf_program__set_autoload(a->skel->progs.runq_switch, false);
		bpf_map__set_max_entries(a->skel->maps.runq_start, 1);
	}
	if (!a->extra.uring) {
		bpf_program__set_autoload(a->skel->progs.uring_submit, false);
		bpf_program__set_autoload(a->skel->progs.uring_complete, false);
		bpf_map__set_max_entries(a->skel->maps.uring_inflight, 1);
	}
	if (!a->plan->per_role[AS_ROLE_FUTURE]) {
		bpf_map__set_max_entries(a->skel->maps.fut_threads, 1);
	}
	bpf_map__set_max_entries(a->skel->maps.fut_rets, a->plan->n ? (uint32_t)a->plan->n : 1);
	/* serve --tasks: the aggregating programs instead of the recording
	 * ones; else those are not loaded, their maps kept tiny */
	struct bpf_program *prog;
	bpf_object__for_each_program(prog, a->skel->obj)
		if (!not_uprobe(a->skel, prog) &&
		    !strncmp(bpf_program__name(prog), "agg_", 4) != a->extra.agg)
			bpf_program__set_autoload(prog, false);
	if (a->extra.agg) {
		a->skel->rodata->agg_long_poll_ns = a->extra.agg_long_poll_ns;
		a->skel->rodata->agg_stall_ns = a->extra.agg_stall_ns;
	} else {
		bpf_map__set_max_entries(a->skel->maps.agg_groups, 1);
		bpf_map__set_max_entries(a->skel->maps.agg_tasks, 1);
	}
	if (a->extra.profile) {
		/* no uprobe at all (but the aggregation's): the task from each
		 * thread's CONTEXT */
		bpf_object__for_each_program(prog, a->skel->obj)
			if (!not_uprobe(a->skel, prog) && !a->extra.agg)
				bpf_program__set_autoload(prog, false);
		a->skel->rodata->prof_mode = 1;
		a->skel->rodata->prof_ctx = a->extra.ctx.has_ctx;
		a->skel->rodata->prof_tp_off = a->extra.ctx.tp_off;
		a->skel->rodata->prof_state_off = a->extra.ctx.state_off;
		a->skel->rodata->prof_state_size = a->extra.ctx.state_size;
		a->skel->rodata->prof_state_alive = a->extra.ctx.state_alive;
		a->skel->rodata->prof_tag_off = a->extra.ctx.tag_off;
		a->skel->rodata->prof_tag_size = a->extra.ctx.tag_size;
		a->skel->rodata->prof_tag_none = a->extra.ctx.tag_none;
		a->skel->rodata->prof_id_off = a->extra.ctx.id_off;
		a->skel->rodata->prof_loop_rt_off = a->extra.ctx.loop_rt_off;
		a->skel->rodata->prof_loop_rt_size = a->extra.ctx.loop_rt_size;
		a->skel->rodata->prof_loop_rt_outside = a->extra.ctx.loop_rt_outside;
		a->skel->rodata->prof_loop_budget_off = a->extra.ctx.loop_budget_off;
		a->skel->rodata->prof_loop_budget_size = a->extra.ctx.loop_budget_size;
		a->skel->rodata->prof_loop_budget_none = a->extra.ctx.loop_budget_none;
	}
	if (multi) {
		bpf_object__for_each_program(prog, a->skel->obj)
			if (!not_uprobe(a->skel, prog))
				bpf_program__set_expected_attach_type(prog, AS_BPF_TRACE_UPROBE_MULTI);
	}
	ret = asyncscope_bpf__load(a->skel);
	if (ret) {
		if (ret == -EPERM || (ret == -EACCES && geteuid() != 0))
			snprintf(err, errlen, "not allowed to load BPF programs: run as root (sudo) "
				 "or grant CAP_BPF and CAP_PERFMON");
		else
			snprintf(err, errlen, "failed to load BPF programs: %s (rerun with "
				 "ASYNCSCOPE_DEBUG=1 for the verifier log)", strerror(-ret));
		asyncscope_bpf__destroy(a->skel);
		a->skel = NULL;
		return ret;
	}
	/* the overflow group, where polls go once agg_groups is full */
	if (a->extra.agg) {
		int ncpu = libbpf_num_possible_cpus();
		struct agg_key k = { .probe = AGG_PROBE_NONE };
		void *zero = ncpu > 0 ? calloc((size_t)ncpu, sizeof(struct agg_group)) : NULL;
		ret = zero ? bpf_map__update_elem(a->skel->maps.agg_groups, &k, sizeof(k), zero,
						  (size_t)ncpu * sizeof(struct agg_group), BPF_NOEXIST) :
			     -ENOMEM;
		free(zero);
		if (ret) {
			snprintf(err, errlen, "failed to set up the aggregation's maps: %s",
				 strerror(-ret));
			asyncscope_bpf__destroy(a->skel);
			a->skel = NULL;
			return ret;
		}
	}
	/* where each future poll function's returned Poll keeps its tag */
	for (size_t i = 0; i < a->plan->n; i++) {
		const struct as_probe *p = &a->plan->probes[i];
		if (p->role != AS_ROLE_FUTURE || !p->ret_kind)
			continue;
		struct fut_ret fr = { .kind = p->ret_kind, .size = p->ret_size, .off = p->ret_off,
				      .pending = p->ret_pending };
		uint32_t key = (uint32_t)i;
		ret = bpf_map__update_elem(a->skel->maps.fut_rets, &key, sizeof(key), &fr, sizeof(fr), 0);
		if (ret) {
			snprintf(err, errlen, "failed to set up future probe %s: %s", p->symbol,
				 strerror(-ret));
			asyncscope_bpf__destroy(a->skel);
			a->skel = NULL;
			return ret;
		}
	}
	return 0;
}

struct attachment *attachment__load(const struct probe_plan *plan, pid_t tgid,
				    size_t ringbuf_bytes, const struct attach_extra *extra,
				    char *err, size_t errlen)
{
	struct attachment *a = calloc(1, sizeof(*a));

	if (!a) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	a->plan = plan;
	a->tgid = tgid;
	a->ringbuf_bytes = ringbuf_bytes;
	if (extra)
		a->extra = *extra;
	bool multi = (!a->extra.profile || a->extra.agg) && kernel_has_uprobe_multi();
	if (open_and_load(a, multi, err, errlen) && (!multi || open_and_load(a, false, err, errlen))) {
		attachment__free(a);
		return NULL;
	}
	return a;
}

/* File offset of probe idx's USDT semaphore into *off (0: none): what the
 * kernel increments while the uprobe is attached. 0 or -ENOENT. */
static int sema_offset(const struct probe_plan *plan, size_t idx, const struct elf_image *img,
		       uint64_t *off)
{
	*off = 0;
	if (!plan->sema[idx])
		return 0;
	return elf_image__any_file_offset(img, plan->sema[idx], off);
}

/* One uprobe_multi link for prog at every plan point it serves, with the
 * USDT semaphores as reference counters; returns the number of points, or
 * -errno. */
static int attach_multi(struct attachment *a, struct bpf_program *prog, bool ret_probe,
			const struct elf_image *img, const char *binary)
{
	const struct probe_plan *plan = a->plan;
	uint64_t *offs = calloc(plan->n ? plan->n : 1, sizeof(*offs));
	uint64_t *cookies = calloc(plan->n ? plan->n : 1, sizeof(*cookies));
	uint64_t *refs = calloc(plan->n ? plan->n : 1, sizeof(*refs));
	size_t cnt = 0;
	bool any_ref = false;
	int ret = 0;

	if (!offs || !cookies || !refs) {
		ret = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < plan->n; i++) {
		struct bpf_program *entry, *exit;
		role_progs(a, plan->probes[i].role, plan->flags[i], &entry, &exit);
		if ((ret_probe ? exit : entry) != prog)
			continue;
		/* at the probe's site: its entry, or past it (probe/site.h) */
		ret = elf_image__file_offset(img, probe_plan__site_addr(plan, i), &offs[cnt]);
		if (!ret)
			ret = sema_offset(plan, i, img, &refs[cnt]);
		if (ret)
			goto cleanup;
		any_ref = any_ref || refs[cnt];
		cookies[cnt++] = probe_cookie(plan, i);
	}
	if (!cnt)
		goto cleanup;
	struct uprobe_multi_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = (__u32)bpf_program__fd(prog);
	attr.attach_type = AS_BPF_TRACE_UPROBE_MULTI;
	attr.path = (__u64)(uintptr_t)binary;
	attr.offsets = (__u64)(uintptr_t)offs;
	attr.cookies = (__u64)(uintptr_t)cookies;
	if (any_ref)
		attr.ref_ctr_offsets = (__u64)(uintptr_t)refs;
	attr.cnt = (__u32)cnt;
	attr.um_flags = ret_probe ? AS_BPF_F_UPROBE_MULTI_RETURN : 0;
	int fd = (int)syscall(__NR_bpf, AS_BPF_LINK_CREATE, &attr, sizeof(attr));
	if (fd < 0) {
		ret = -errno;
		goto cleanup;
	}
	a->fds[a->n_fds++] = fd;
	ret = (int)cnt;
cleanup:
	free(offs);
	free(cookies);
	free(refs);
	return ret;
}

static int attach_one(struct attachment *a, struct bpf_program *prog, bool ret,
		      const char *binary, uint64_t off, uint64_t ref_off, uint64_t cookie)
{
	/* libbpf 1.1 passes ref_ctr_offset to the uprobe PMU: the kernel
	 * increments the USDT semaphore while the probe is attached */
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = ret, .bpf_cookie = cookie,
		    .ref_ctr_offset = (size_t)ref_off);
	struct bpf_link *link = bpf_program__attach_uprobe_opts(prog, -1, binary, off, &opts);

	if (!link)
		return -errno;
	a->links[a->n_links++] = link;
	return 0;
}

/* Fallback for kernels without uprobe_multi: one perf-event link per probe. */
static int attach_each(struct attachment *a, const struct elf_image *img, const char *binary,
		       char *err, size_t errlen)
{
	const struct probe_plan *plan = a->plan;
	int ret = 0, n = 0;

	for (size_t i = 0; i < plan->n; i++) {
		const struct as_probe *p = &plan->probes[i];
		struct bpf_program *entry, *exit;
		uint64_t off, ref_off = 0;

		role_progs(a, p->role, plan->flags[i], &entry, &exit);
		if (!entry)
			continue;
		ret = elf_image__file_offset(img, probe_plan__site_addr(plan, i), &off);
		if (!ret)
			ret = sema_offset(plan, i, img, &ref_off);
		/* the return probe first, as in attachment__attach() */
		if (!ret && exit)
			ret = attach_one(a, exit, true, binary, off, 0, probe_cookie(plan, i));
		if (!ret)
			ret = attach_one(a, entry, false, binary, off, ref_off, probe_cookie(plan, i));
		if (ret) {
			snprintf(err, errlen, "failed to attach uprobe to %s at 0x%llx in %s: %s",
				 p->symbol, (unsigned long long)probe_plan__site_addr(plan, i), binary,
				 strerror(-ret));
			return ret;
		}
		n += exit ? 2 : 1;
	}
	return n;
}

static void detach_all(struct attachment *a);

/* Tracepoint programs attached on request (run-queue waits: sched_wakeup,
 * sched_wakeup_new, sched_switch; io_uring: io_uring_submit_req,
 * io_uring_complete). Returns 0 or -errno with a message in err. */
static int attach_tps(struct attachment *a, struct bpf_program **progs, size_t n,
		      const char *what, char *err, size_t errlen)
{
	struct bpf_link **l = realloc(a->links, (a->n_links + n) * sizeof(*l));

	if (!l) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	a->links = l;
	for (size_t i = 0; i < n; i++) {
		struct bpf_link *link = bpf_program__attach(progs[i]);
		if (!link) {
			int ret = -errno;
			snprintf(err, errlen, "failed to attach the %s program %s: %s", what,
				 bpf_program__name(progs[i]), strerror(-ret));
			return ret;
		}
		a->links[a->n_links++] = link;
	}
	return 0;
}

/* A CPU-clock event sampling at hz on every online CPU, each running
 * cpu_sample (which keeps the target's samples only). The links own the
 * perf event fds. Returns 0 or -errno with a message in err. */
static int attach_sampling(struct attachment *a, char *err, size_t errlen)
{
	int ncpu = libbpf_num_possible_cpus(), attached = 0;

	if (ncpu < 0) {
		snprintf(err, errlen, "cannot count CPUs (--sample): %s", strerror(-ncpu));
		return ncpu;
	}
	struct bpf_link **l = realloc(a->links, (a->n_links + (size_t)ncpu + 1) * sizeof(*l));
	if (!l) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	a->links = l;
	for (int cpu = 0; cpu < ncpu; cpu++) {
		struct perf_event_attr attr = {
			.type = PERF_TYPE_SOFTWARE, .size = sizeof(attr),
			.config = PERF_COUNT_SW_CPU_CLOCK, .freq = 1, .sample_freq = a->extra.sample_hz,
		};
		int fd = (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV)   /* a possible CPU that is offline */
				continue;
			int ret = -errno;
			snprintf(err, errlen, "failed to open a CPU-clock perf event on CPU %d (--sample): %s%s",
				 cpu, strerror(errno), errno == EINVAL ?
				 " (sample rate above kernel.perf_event_max_sample_rate?)" : "");
			return ret;
		}
		struct bpf_link *link = bpf_program__attach_perf_event(a->skel->progs.cpu_sample, fd);
		if (!link) {
			int ret = -errno;
			close(fd);
			snprintf(err, errlen, "failed to attach the sampling program on CPU %d (--sample): %s",
				 cpu, strerror(-ret));
			return ret;
		}
		a->links[a->n_links++] = link;
		attached++;
	}
	if (!attached) {
		snprintf(err, errlen, "no online CPU to sample (--sample)");
		return -ENODEV;
	}
	return 0;
}

int attachment__attach(struct attachment *a, const struct elf_image *img, const char *binary,
		       char *err, size_t errlen)
{
	const struct probe_plan *plan = a->plan;
	int ret = 0, n = 0;

	a->links = calloc(plan->n * 2 + 2, sizeof(*a->links));
	a->fds = calloc(32, sizeof(*a->fds));
	if (!a->links || !a->fds) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (a->multi) {
		struct bpf_program *prog;
		/* return probes first: a call whose entry is seen then always has
		 * its return seen too (a uretprobe takes effect at the entries
		 * after it is attached); entries first would leave the calls made
		 * in between open forever, and every later return unmatched */
		for (int pass = 0; pass < 2 && ret >= 0; pass++) {
			bpf_object__for_each_program(prog, a->skel->obj) {
				if (not_uprobe(a->skel, prog))
					continue;
				bool is_ret = !strcmp(bpf_program__section_name(prog), "uretprobe");
				if (is_ret != (pass == 0))
					continue;
				ret = attach_multi(a, prog, is_ret, img, binary);
				if (ret < 0)
					break;
				n += ret;
			}
		}
		if (ret == -EINVAL || ret == -EOPNOTSUPP || ret == -ENOSYS) {
			/* the kernel does not take uprobe_multi after all: reload */
			detach_all(a);
			asyncscope_bpf__destroy(a->skel);
			a->skel = NULL;
			ret = open_and_load(a, false, err, errlen);
			if (ret)
				goto cleanup;
			n = 0;
		} else if (ret < 0) {
			snprintf(err, errlen, "failed to attach uprobes in %s: %s", binary, strerror(-ret));
			goto cleanup;
		}
	}
	if (!a->multi && (!a->extra.profile || a->extra.agg)) {
		ret = attach_each(a, img, binary, err, errlen);
		if (ret < 0)
			goto cleanup;
		n = ret;
	}
	struct bpf_link *exit_link = bpf_program__attach(a->skel->progs.thread_exit);
	if (!exit_link) {
		ret = -errno;
		snprintf(err, errlen, "failed to attach to the sched_process_exit tracepoint: %s",
			 strerror(errno));
		goto cleanup;
	}
	a->links[a->n_links++] = exit_link;
	if (a->extra.offcpu) {
		struct bpf_link *sw = bpf_program__attach(a->skel->progs.offcpu_switch);
		if (!sw) {
			ret = -errno;
			snprintf(err, errlen, "failed to attach to the sched_switch tracepoint "
				 "(--offcpu): %s", strerror(errno));
			goto cleanup;
		}
		a->links[a->n_links++] = sw;
	}
	if (a->extra.sample_hz && (ret = attach_sampling(a, err, errlen)))
		goto cleanup;
	if (a->extra.runq) {
		struct bpf_program *p[] = { a->skel->progs.runq_wakeup, a->skel->progs.runq_wakeup_new,
					    a->skel->progs.runq_switch };
		if ((ret = attach_tps(a, p, 3, "run-queue", err, errlen)))
			goto cleanup;
	}
	if (a->extra.uring) {
		struct bpf_program *p[] = { a->skel->progs.uring_submit, a->skel->progs.uring_complete };
		if ((ret = attach_tps(a, p, 2, "io_uring (--uring)", err, errlen)))
			goto cleanup;
	}
	/* the uprobe links held apart: a SIGKILLed recorder releases them all
	 * at once, not one grace period after another */
	if (a->n_fds) {
		size_t taken;

		a->hold = link_hold__new(a->fds, a->n_fds, &taken);
		if (a->hold) {
			memmove(a->fds, a->fds + taken, (a->n_fds - taken) * sizeof(*a->fds));
			a->n_fds -= taken;
		}
	}
	ret = n;
cleanup:
	return ret;
}

struct asyncscope_bpf *attachment__skel(struct attachment *a)
{
	return a->skel;
}

/* The runs of our programs the kernel skipped (a program already running
 * on that CPU, e.g. a tracepoint hit again from inside it): events lost in
 * the kernel before any counter of ours could see them. One syscall a
 * program, so read at most once a second (the recorder ticks 50 times). */
static uint64_t prog_misses(struct attachment *a)
{
	struct timespec now;
	struct bpf_program *prog;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (a->misses_at.tv_sec && now.tv_sec - a->misses_at.tv_sec < 1)
		return a->misses;
	a->misses_at = now;
	a->misses = 0;
	bpf_object__for_each_program(prog, a->skel->obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		memset(&info, 0, sizeof(info));
		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
			a->misses += info.recursion_misses;
	}
	return a->misses;
}

void attachment__counters(struct attachment *a, struct raw_counters *out)
{
	/* .bss is memory-mapped: read each counter once */
	out->lost = __atomic_load_n(&a->skel->bss->counters.lost, __ATOMIC_RELAXED);
	out->depth_overflow = __atomic_load_n(&a->skel->bss->counters.depth_overflow, __ATOMIC_RELAXED);
	out->no_thread_slot = __atomic_load_n(&a->skel->bss->counters.no_thread_slot, __ATOMIC_RELAXED);
	out->offcpu_dropped = __atomic_load_n(&a->skel->bss->counters.offcpu_dropped, __ATOMIC_RELAXED);
	out->runq_dropped = __atomic_load_n(&a->skel->bss->counters.runq_dropped, __ATOMIC_RELAXED);
	out->uring_dropped = __atomic_load_n(&a->skel->bss->counters.uring_dropped, __ATOMIC_RELAXED);
	out->fut_depth_overflow = __atomic_load_n(&a->skel->bss->counters.fut_depth_overflow,
						  __ATOMIC_RELAXED);
	out->prog_misses = prog_misses(a);
}

int attachment__agg_fds(const struct attachment *a, int *groups, int *tasks, int *totals)
{
	*groups = *tasks = *totals = -1;
	if (!a || !a->extra.agg || !a->skel)
		return -ENOENT;
	*groups = bpf_map__fd(a->skel->maps.agg_groups);
	*tasks = bpf_map__fd(a->skel->maps.agg_tasks);
	*totals = bpf_map__fd(a->skel->maps.agg_totals);
	return 0;
}

struct detach_job {
	struct attachment *a;
	size_t start, step;
};

static void *detach_some(void *arg)
{
	struct detach_job *j = arg;

	for (size_t i = j->start; i < j->a->n_fds; i += j->step)
		close(j->a->fds[i]);
	return NULL;
}

/* Releasing a uprobe link waits for an RCU tasks-trace grace period (tens
 * to hundreds of ms under load): the multi links are released from threads
 * so the waits overlap. Perf-event links serialise in the kernel anyway. */
static void detach_all(struct attachment *a)
{
	enum { MAX_THREADS = 16 };
	pthread_t tids[MAX_THREADS];
	struct detach_job jobs[MAX_THREADS];
	size_t nt = a->n_fds < MAX_THREADS ? a->n_fds : MAX_THREADS, started = 0;

	link_hold__release(a->hold);
	a->hold = NULL;

	for (size_t k = 0; k < nt; k++) {
		jobs[k] = (struct detach_job){ .a = a, .start = k, .step = nt };
		if (pthread_create(&tids[k], NULL, detach_some, &jobs[k]))
			break;
		started++;
	}
	for (size_t k = started; k < nt; k++)
		detach_some(&jobs[k]);
	for (size_t k = 0; k < started; k++)
		pthread_join(tids[k], NULL);
	a->n_fds = 0;
	for (size_t i = 0; i < a->n_links; i++)
		bpf_link__destroy(a->links[i]);
	a->n_links = 0;
}

void attachment__free(struct attachment *a)
{
	if (!a)
		return;
	detach_all(a);
	free(a->links);
	free(a->fds);
	asyncscope_bpf__destroy(a->skel);
	free(a);
}
