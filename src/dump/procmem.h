/* Another process's memory, read without stopping it: process_vm_readv
 * (needs the ptrace access a root caller has), and where the target's
 * executable is loaded (its load bias, from /proc/PID/maps). No libbpf. */
#ifndef AS_DUMP_PROCMEM_H
#define AS_DUMP_PROCMEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sym/elf_image.h"

struct procmem {
	pid_t pid;
	uint64_t reads;        /* calls that reached the kernel */
	uint64_t failed;       /* of which failed */
	/* An optional snapshot of [snap_addr, snap_addr + snap_len): reads that
	 * fall inside it are served from it, others go to the process. */
	const uint8_t *snap;
	uint64_t snap_addr;
	size_t snap_len;
};

/* Copies len bytes at addr of the process into buf (all or nothing).
 * Returns 0, -EFAULT (not mapped, or a short read), -ESRCH (gone), -EPERM. */
int procmem_read_raw(pid_t pid, uint64_t addr, void *buf, size_t len);

/* mem_read_fn over a struct procmem (ctx), honouring its snapshot. */
int procmem_read(void *ctx, uint64_t addr, void *buf, size_t len);

/* The load bias of img in process pid (runtime address - ELF virtual
 * address; 0 for a non-PIE executable): from the mapping of the executable
 * (/proc/PID/exe's device and inode) that covers a loadable segment.
 * Returns 0 or -errno (-ENOENT: not mapped). */
int procmem_load_bias(pid_t pid, const struct elf_image *img, uint64_t *bias);

#endif
