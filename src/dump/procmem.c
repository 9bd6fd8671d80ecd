/* Process memory reads and the load bias of the executable. */
#include "dump/procmem.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>

int procmem_read_raw(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n;

	if (!len)
		return 0;
	if (!addr || addr + len < addr)
		return -EFAULT;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

int procmem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct procmem *pm = ctx;
	int err;

	if (pm->snap && addr >= pm->snap_addr && len <= pm->snap_len &&
	    addr - pm->snap_addr <= pm->snap_len - len) {
		memcpy(buf, pm->snap + (addr - pm->snap_addr), len);
		return 0;
	}
	pm->reads++;
	err = procmem_read_raw(pm->pid, addr, buf, len);
	if (err)
		pm->failed++;
	return err;
}

int procmem_load_bias(pid_t pid, const struct elf_image *img, uint64_t *bias)
{
	char path[64], line[4096];
	struct stat st;
	FILE *f;
	int ret = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	if (stat(path, &st))
		return -errno;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (ret == -ENOENT && fgets(line, sizeof(line), f)) {
		uint64_t start, end, off, ino;
		unsigned maj, min;
		char perms[8];

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64,
			   &start, &end, perms, &off, &maj, &min, &ino) != 7)
			continue;
		if (ino != (uint64_t)st.st_ino || makedev(maj, min) != st.st_dev)
			continue;
		for (size_t i = 0; i < img->n_loads; i++) {
			const struct elf_load *l = &img->loads[i];
			uint64_t poff = l->offset & ~UINT64_C(0xfff);
			if (off < poff || off >= l->offset + l->filesz)
				continue;
			/* start maps file offset off; the segment maps offset
			 * l->offset at l->vaddr (congruent modulo the page size) */
			*bias = start - off - ((l->vaddr & ~UINT64_C(0xfff)) - poff);
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}
