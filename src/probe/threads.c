/* proc_threads__read(): load the thread iterator, attach it (an iter link,
 * limited to one process by its pid option), read its records, destroy it.
 * open -> set rodata -> load -> attach, one cleanup label. */
#include "probe/threads.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "thread_rec.h"
#include "threads.lskel.h"
#include "threads.skel.h"

#define MAX_THREADS 65536

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

struct proc_threads {
	struct threads_lbpf *lskel;   /* the light skeleton, or NULL: */
	struct threads_bpf *skel;     /* the skeleton (a kernel without in-kernel CO-RE) */
	pid_t pid;
};

struct proc_threads *proc_threads__open(pid_t pid, char *err, size_t errlen)
{
	struct proc_threads *pt = calloc(1, sizeof(*pt));
	int ret;

	if (!pt) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	libbpf_set_print(silent);
	pt->pid = pid;
	/* the light skeleton first: its loader program has the kernel do the
	 * CO-RE relocations (5.17+), where libbpf would read and index the
	 * kernel's BTF (about 10 of the 12 ms a load costs) */
	pt->lskel = threads_lbpf__open();
	if (pt->lskel) {
		pt->lskel->rodata->targ_tgid = (__u32)pid;
		if (threads_lbpf__load(pt->lskel) == 0)
			return pt;
		threads_lbpf__destroy(pt->lskel);
		pt->lskel = NULL;
	}
	pt->skel = threads_bpf__open();
	if (!pt->skel) {
		ret = errno;
		snprintf(err, errlen, "cannot open the thread iterator: %s", strerror(errno));
		free(pt);
		errno = ret;
		return NULL;
	}
	pt->skel->rodata->targ_tgid = (__u32)pid;
	ret = threads_bpf__load(pt->skel);
	if (ret) {
		snprintf(err, errlen, "cannot load the thread iterator (a BPF task iterator, "
			 "kernel 5.8 or later with BTF): %s%s", strerror(-ret),
			 ret == -EPERM ? ": run as root (sudo)" : "");
		threads_bpf__destroy(pt->skel);
		free(pt);
		errno = -ret;
		return NULL;
	}
	return pt;
}

void proc_threads__close(struct proc_threads *pt)
{
	if (!pt)
		return;
	if (pt->lskel)
		threads_lbpf__destroy(pt->lskel);
	threads_bpf__destroy(pt->skel);
	free(pt);
}

int proc_threads__read(pid_t pid, struct proc_thread **out, size_t *n, char *err, size_t errlen)
{
	struct proc_threads *pt = proc_threads__open(pid, err, errlen);
	int ret;

	*out = NULL;
	*n = 0;
	if (!pt)
		return -errno;
	ret = proc_threads__read_open(pt, out, n, err, errlen);
	proc_threads__close(pt);
	return ret;
}

int proc_threads__read_open(struct proc_threads *pt, struct proc_thread **out, size_t *n,
			    char *err, size_t errlen)
{
	struct threads_bpf *skel = pt->skel;
	pid_t pid = pt->pid;
	struct bpf_link *link = NULL;
	int link_fd = -1;
	union bpf_iter_link_info info;
	struct proc_thread *v = NULL;
	struct as_thread_rec rec;
	size_t len = 0, cap = 0, got = 0;
	int fd = -1, ret;

	*out = NULL;
	*n = 0;
	memset(&info, 0, sizeof(info));
	info.task.pid = (__u32)pid;
	LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &info, .link_info_len = sizeof(info));
	if (pt->lskel) {
		LIBBPF_OPTS(bpf_link_create_opts, lopts, .iter_info = &info,
			    .iter_info_len = sizeof(info));
		int prog = pt->lskel->progs.thread_regs.prog_fd;
		link_fd = bpf_link_create(prog, 0, BPF_TRACE_ITER, &lopts);
		if (link_fd < 0 && errno == EINVAL)
			link_fd = bpf_link_create(prog, 0, BPF_TRACE_ITER, NULL);
	} else {
		link = bpf_program__attach_iter(skel->progs.thread_regs, &opts);
		if (!link && errno == EINVAL) {
			/* a kernel before 6.1 has no pid option: every task, filtered in BPF */
			link = bpf_program__attach_iter(skel->progs.thread_regs, NULL);
		}
		if (link)
			link_fd = bpf_link__fd(link);
	}
	if (link_fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot attach the thread iterator: %s", strerror(errno));
		goto cleanup;
	}
	fd = bpf_iter_create(link_fd);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot start the thread iterator: %s", strerror(errno));
		goto cleanup;
	}
	for (;;) {
		ssize_t r = read(fd, (char *)&rec + got, sizeof(rec) - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ret = -errno;
			snprintf(err, errlen, "cannot read the thread iterator: %s", strerror(errno));
			goto cleanup;
		}
		if (r == 0)
			break;
		got += (size_t)r;
		if (got < sizeof(rec))
			continue;
		got = 0;
		if (len == MAX_THREADS)
			continue;
		if (len == cap) {
			size_t nc = cap ? cap * 2 : 32;
			struct proc_thread *nv = realloc(v, nc * sizeof(*nv));
			if (!nv) {
				ret = -ENOMEM;
				snprintf(err, errlen, "out of memory");
				goto cleanup;
			}
			v = nv;
			cap = nc;
		}
		struct proc_thread *t = &v[len++];
		memset(t, 0, sizeof(*t));
		t->tid = (pid_t)rec.tid;
		memcpy(t->comm, rec.comm, AS_THREAD_COMM);
		t->comm[AS_THREAD_COMM] = '\0';
		t->fsbase = rec.fsbase;
		t->has_regs = rec.flags & AS_THREAD_F_REGS;
		t->on_cpu = rec.flags & AS_THREAD_F_ONCPU;
		t->switches = rec.switches;
		t->ip = rec.ip;
		t->sp = rec.sp;
		t->bp = rec.bp;
		_Static_assert(sizeof(t->regs) == sizeof(rec.gpr), "proc_thread regs");
		memcpy(t->regs, rec.gpr, sizeof(t->regs));
	}
	if (!len) {
		ret = -ESRCH;
		snprintf(err, errlen, "the thread iterator found no thread of pid %d", pid);
		goto cleanup;
	}
	*out = v;
	*n = len;
	v = NULL;
	ret = 0;
cleanup:
	if (fd >= 0)
		close(fd);
	if (pt->lskel && link_fd >= 0)
		close(link_fd);
	bpf_link__destroy(link);
	free(v);
	return ret;
}
