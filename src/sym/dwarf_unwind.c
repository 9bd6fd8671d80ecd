/* libdw unwinding over a copied stack: see dwarf_unwind.h. */
#include "sym/dwarf_unwind.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct dwarf_unwind {
	pid_t pid;
	Dwfl *dwfl;
	bool reported, attached;
	/* the sample being unwound, read by the callbacks */
	uint32_t tid;
	const uint64_t *regs;
	const uint8_t *stack;
	size_t len;
	const struct dwarf_unwind_fix *fix;
	bool given;          /* next_thread: the one thread already returned */
	uint64_t *pcs;
	int n, max;
};

static char *debuginfo_path;

/* The process whose modules libdwfl is finding now (set before each call
 * into it: the recorder unwinds on one thread). */
static pid_t finding_pid;

/* A module as the process maps it: through /proc/PID/map_files of its
 * first mapping, the very file even when deleted, replaced on disk or in
 * another mount namespace or chroot (paths valid only there); else
 * libdwfl's (by name, or a deleted file's image from memory). */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	char path[64], line[4200];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)finding_pid);
	if (name[0] == '/' && (f = fopen(path, "re"))) {
		int fd = -1;
		while (fd < 0 && fgets(line, sizeof(line), f)) {
			unsigned long long start, end;
			int pos = 0;
			if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &start, &end, &pos) < 2 || !pos)
				continue;
			line[strcspn(line, "\n")] = '\0';
			if (strcmp(line + pos, name))
				continue;
			snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)finding_pid,
				 start, end);
			fd = open(path, O_RDONLY | O_CLOEXEC);
		}
		fclose(f);
		if (fd >= 0) {
			*file_name = strdup(path);
			*elfp = NULL;   /* libdwfl reads the ELF from fd */
			return fd;
		}
	}
	return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
}

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct dwarf_unwind *u = arg;

	(void)dwfl;
	if (u->given)
		return 0;
	u->given = true;
	*thread_argp = u;
	return (pid_t)u->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct dwarf_unwind *u = arg;

	(void)dwfl;
	if ((uint32_t)tid != u->tid)
		return false;
	*thread_argp = u;
	return true;
}

/* Stack words come from the copy; nothing else is readable (the CFI
 * itself comes from the files, not from memory). */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct dwarf_unwind *u = arg;
	uint64_t sp = u->regs[7];

	(void)dwfl;
	for (int i = 0; u->fix && i < u->fix->n; i++)
		if (u->fix->slot[i] == addr) {
			*result = u->fix->orig[i];
			return true;
		}
	if (addr < sp || addr - sp + sizeof(uint64_t) > u->len)
		return false;
	uint64_t v;
	memcpy(&v, u->stack + (addr - sp), sizeof(v));
	*result = v;
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct dwarf_unwind *u = thread_arg;
	Dwarf_Word regs[DWARF_UNWIND_NREGS];

	for (int i = 0; i < DWARF_UNWIND_NREGS; i++)
		regs[i] = u->regs[i];
	dwfl_thread_state_register_pc(thread, regs[16]);
	return dwfl_thread_state_registers(thread, 0, 16, regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

struct dwarf_unwind *dwarf_unwind__new(pid_t pid)
{
	struct dwarf_unwind *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->pid = pid;
	u->dwfl = dwfl_begin(&proc_callbacks);
	if (!u->dwfl) {
		free(u);
		errno = ENOMEM;
		return NULL;
	}
	return u;
}

static int report(struct dwarf_unwind *u);

void dwarf_unwind__prime(struct dwarf_unwind *u)
{
	if (u)
		report(u);
}

static int open_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
		       void *arg)
{
	Dwarf_Addr bias;

	(void)userdata, (void)name, (void)start, (void)arg;
	dwfl_module_getelf(mod, &bias);
	return DWARF_CB_OK;
}

static int report(struct dwarf_unwind *u)
{
	/* adding to the modules already known: a zombie's maps are empty,
	 * and a report from them must not forget the modules */
	if (u->reported)
		dwfl_report_begin_add(u->dwfl);
	else
		dwfl_report_begin(u->dwfl);
	finding_pid = u->pid;
	int err = dwfl_linux_proc_report(u->dwfl, u->pid);
	dwfl_report_end(u->dwfl, NULL, NULL);
	if (err)
		return -1;
	/* each module's file opened now, while the process maps it: a deleted
	 * one is found through /proc/PID/map_files only until it exits, and
	 * stacks may be unwound after that */
	dwfl_getmodules(u->dwfl, open_module, NULL, 0);
	u->reported = true;
	if (!u->attached) {
		/* Elf NULL: the architecture comes from the first module */
		if (!dwfl_attach_state(u->dwfl, NULL, u->pid, &thread_callbacks, u))
			return -1;
		u->attached = true;
	}
	return 0;
}

static int on_frame(Dwfl_Frame *frame, void *arg)
{
	struct dwarf_unwind *u = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(frame, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	if (u->n >= u->max)
		return DWARF_CB_ABORT;
	u->pcs[u->n++] = pc;
	return DWARF_CB_OK;
}

int dwarf_unwind__stack(struct dwarf_unwind *u, uint32_t tid, const uint64_t *regs,
			const uint8_t *stack, size_t len, const struct dwarf_unwind_fix *fix,
			uint64_t *pcs, int max)
{
	if (!u || !regs || max <= 0 || !regs[16])
		return 0;
	/* a new mapping (or the program just exec'd): report the modules again */
	if (!u->reported || !dwfl_addrmodule(u->dwfl, regs[16]))
		if (report(u) && !u->attached)
			goto only_ip;
	u->tid = tid;
	u->regs = regs;
	u->stack = stack;
	u->len = len;
	u->fix = fix;
	u->given = false;
	u->pcs = pcs;
	u->n = 0;
	u->max = max;
	finding_pid = u->pid;
	dwfl_getthread_frames(u->dwfl, (pid_t)tid, on_frame, u);
	if (u->n > 0)
		return u->n;
only_ip:
	pcs[0] = regs[16];
	return 1;
}

void dwarf_unwind__free(struct dwarf_unwind *u)
{
	if (!u)
		return;
	dwfl_end(u->dwfl);
	free(u);
}
