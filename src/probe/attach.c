/* open -> set rodata -> load -> attach, one uprobe (and uretprobe) per plan
 * point, with the plan index and argument register in the BPF cookie. */
#include "probe/attach.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "events.h"
#include "asyncscope.skel.h"

struct attachment {
	struct asyncscope_bpf *skel;
	const struct probe_plan *plan;
	struct bpf_link **links;
	size_t n_links;
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

struct attachment *attachment__load(const struct probe_plan *plan, pid_t tgid,
				    size_t ringbuf_bytes, char *err, size_t errlen)
{
	struct attachment *a = calloc(1, sizeof(*a));
	int ret;

	if (!a) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	a->plan = plan;
	a->skel = asyncscope_bpf__open();
	if (!a->skel) {
		snprintf(err, errlen, "failed to open BPF object: %s", strerror(errno));
		goto fail;
	}
	a->skel->rodata->targ_tgid = (__u32)tgid;
	a->skel->rodata->hdr_vtable_off = plan->profile->hdr_vtable_off;
	a->skel->rodata->vtable_id_off_slot = plan->profile->vtable_id_off_slot;
	a->skel->rodata->bare_probes = getenv("ASYNCSCOPE_BARE_PROBES") != NULL;
	size_t rb = attach_ringbuf_size(ringbuf_bytes);
	a->skel->rodata->wakeup_bytes = rb / 4;
	bpf_map__set_max_entries(a->skel->maps.events, (__u32)rb);
	ret = asyncscope_bpf__load(a->skel);
	if (ret) {
		if (ret == -EPERM || (ret == -EACCES && geteuid() != 0))
			snprintf(err, errlen, "not allowed to load BPF programs: run as root (sudo) "
				 "or grant CAP_BPF and CAP_PERFMON");
		else
			snprintf(err, errlen, "failed to load BPF programs: %s (rerun with "
				 "ASYNCSCOPE_DEBUG=1 for the verifier log)", strerror(-ret));
		goto fail;
	}
	return a;
fail:
	attachment__free(a);
	return NULL;
}

static int attach_one(struct attachment *a, struct bpf_program *prog, bool ret,
		      const char *binary, uint64_t off, uint64_t cookie)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = ret, .bpf_cookie = cookie);
	struct bpf_link *link = bpf_program__attach_uprobe_opts(prog, -1, binary, off, &opts);

	if (!link)
		return -errno;
	a->links[a->n_links++] = link;
	return 0;
}

int attachment__attach(struct attachment *a, const char *binary, char *err, size_t errlen)
{
	const struct probe_plan *plan = a->plan;
	struct elf_image *img = NULL;
	int ret = 0;

	a->links = calloc(plan->n * 2 + 2, sizeof(*a->links));
	if (!a->links) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	img = elf_image__open(binary);
	if (!img) {
		ret = -errno;
		snprintf(err, errlen, "cannot read %s: %s", binary, strerror(errno));
		return ret;
	}
	struct bpf_link *exit_link = bpf_program__attach(a->skel->progs.thread_exit);
	if (!exit_link) {
		ret = -errno;
		snprintf(err, errlen, "failed to attach to the sched_process_exit tracepoint: %s",
			 strerror(errno));
		elf_image__free(img);
		return ret;
	}
	a->links[a->n_links++] = exit_link;
	for (size_t i = 0; i < plan->n; i++) {
		const struct as_probe *p = &plan->probes[i];
		uint64_t off, cookie = AS_COOKIE(i, p->arg_reg, p->role == AS_ROLE_IO_DRIVER ? AS_CTX_IO :
					   p->role == AS_ROLE_TIMER ? AS_CTX_TIMER : 0);
		struct bpf_program *entry = NULL, *exit = NULL;

		switch (p->role) {
		case AS_ROLE_POLL: entry = a->skel->progs.poll_enter; exit = a->skel->progs.poll_exit; break;
		case AS_ROLE_READY: entry = a->skel->progs.task_ready; break;
		case AS_ROLE_WAKE: entry = a->skel->progs.task_wake; break;
		case AS_ROLE_SPAWN: entry = a->skel->progs.task_spawn; break;
		case AS_ROLE_FREE: entry = a->skel->progs.task_free; break;
		case AS_ROLE_PARK: entry = a->skel->progs.park_enter; exit = a->skel->progs.park_exit; break;
		case AS_ROLE_IO_DRIVER:
		case AS_ROLE_TIMER: entry = a->skel->progs.driver_enter; exit = a->skel->progs.driver_exit; break;
		default: continue;
		}
		ret = elf_image__file_offset(img, p->addr, &off);
		if (!ret)
			ret = attach_one(a, entry, false, binary, off, cookie);
		if (!ret && exit)
			ret = attach_one(a, exit, true, binary, off, cookie);
		if (ret) {
			snprintf(err, errlen, "failed to attach uprobe to %s at 0x%llx in %s: %s",
				 p->symbol, (unsigned long long)p->addr, binary, strerror(-ret));
			break;
		}
	}
	elf_image__free(img);
	return ret ? ret : (int)a->n_links;
}

struct asyncscope_bpf *attachment__skel(struct attachment *a)
{
	return a->skel;
}

void attachment__counters(const struct attachment *a, struct raw_counters *out)
{
	/* .bss is memory-mapped: read each counter once */
	out->lost = __atomic_load_n(&a->skel->bss->counters.lost, __ATOMIC_RELAXED);
	out->depth_overflow = __atomic_load_n(&a->skel->bss->counters.depth_overflow, __ATOMIC_RELAXED);
	out->no_thread_slot = __atomic_load_n(&a->skel->bss->counters.no_thread_slot, __ATOMIC_RELAXED);
}

void attachment__free(struct attachment *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n_links; i++)
		bpf_link__destroy(a->links[i]);
	free(a->links);
	asyncscope_bpf__destroy(a->skel);
	free(a);
}
