/* /proc/PID/maps plus ELF symbol tables: address -> function name for a
 * live process. Depends on sym/elf_image and libc. */
#include "sym/proc_syms.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym/elf_image.h"

struct mapping {
	uint64_t start, end, off;
	char *path;
	struct elf_image *img;   /* opened on first use */
	bool tried;
};

struct proc_syms {
	pid_t pid;
	char *maps_path;
	struct mapping *maps;
	size_t n;
	bool loaded;
	unsigned rereads;        /* maps read again after a miss (bounded) */
};

#define MAX_REREADS 64

static void clear_maps(struct proc_syms *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		free(ps->maps[i].path);
		elf_image__free(ps->maps[i].img);
	}
	free(ps->maps);
	ps->maps = NULL;
	ps->n = 0;
}

/* Executable file mappings only. Keeps the old table when the file is gone
 * (the process exited). */
static void read_maps(struct proc_syms *ps)
{
	char path[64], line[4096];
	const char *p = ps->maps_path;
	if (!p) {
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)ps->pid);
		p = path;
	}
	FILE *f = fopen(p, "re");
	if (!f)
		return;
	clear_maps(ps);
	size_t cap = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char perms[8];
		int pos = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off, &pos) < 4 ||
		    !pos || perms[2] != 'x')
			continue;
		char *file = line + pos;
		file[strcspn(file, "\n")] = '\0';
		if (file[0] != '/')
			continue;
		if (ps->n == cap) {
			size_t c = cap ? cap * 2 : 32;
			struct mapping *m = realloc(ps->maps, c * sizeof(*m));
			if (!m)
				break;
			ps->maps = m;
			cap = c;
		}
		char *dup = strdup(file);
		if (!dup)
			break;
		ps->maps[ps->n++] = (struct mapping){ .start = start, .end = end, .off = off, .path = dup };
	}
	fclose(f);
}

struct proc_syms *proc_syms__new(pid_t pid, const char *maps_path)
{
	struct proc_syms *ps = calloc(1, sizeof(*ps));
	if (!ps)
		return NULL;
	ps->pid = pid;
	if (maps_path && !(ps->maps_path = strdup(maps_path))) {
		free(ps);
		errno = ENOMEM;
		return NULL;
	}
	return ps;
}

static struct mapping *find(struct proc_syms *ps, uint64_t addr)
{
	for (size_t i = 0; i < ps->n; i++)
		if (addr >= ps->maps[i].start && addr < ps->maps[i].end)
			return &ps->maps[i];
	return NULL;
}

/* The symbol containing vaddr (or the nearest below it when sizes are 0). */
static const struct elf_sym *sym_at(const struct elf_image *img, uint64_t vaddr)
{
	size_t lo = 0, hi = img->n_syms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (img->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct elf_sym *s = &img->syms[lo - 1];
	return !s->size || vaddr < s->addr + s->size ? s : NULL;
}

int proc_syms__name(struct proc_syms *ps, uint64_t addr, char *buf, size_t len)
{
	if (!len)
		return 0;
	buf[0] = '\0';
	if (!ps->loaded) {
		read_maps(ps);
		ps->loaded = true;
	}
	struct mapping *m = find(ps, addr);
	if (!m && ps->rereads < MAX_REREADS) {
		ps->rereads++;
		read_maps(ps);
		m = find(ps, addr);
	}
	if (!m)
		return 0;
	uint64_t foff = addr - m->start + m->off;
	if (!m->tried) {
		m->tried = true;
		m->img = elf_image__open(m->path);
	}
	if (m->img) {
		for (size_t i = 0; i < m->img->n_loads; i++) {
			const struct elf_load *l = &m->img->loads[i];
			if (foff < l->offset || foff >= l->offset + l->filesz)
				continue;
			const struct elf_sym *s = sym_at(m->img, foff - l->offset + l->vaddr);
			if (s) {
				snprintf(buf, len, "%s", s->name);
				return 1;
			}
			break;
		}
	}
	const char *base = strrchr(m->path, '/');
	snprintf(buf, len, "%s+0x%llx", base ? base + 1 : m->path, (unsigned long long)foff);
	return 0;
}

void proc_syms__free(struct proc_syms *ps)
{
	if (!ps)
		return;
	clear_maps(ps);
	free(ps->maps_path);
	free(ps);
}
