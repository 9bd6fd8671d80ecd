/* /proc/PID/maps plus ELF symbol tables: address -> function name for a
 * live process, and with DWARF line tables (libdw) address -> file:line.
 * Depends on sym/elf_image, libdw and libc. */
#include "sym/proc_syms.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sym/async_stack.h"
#include "sym/demangle.h"
#include "sym/elf_image.h"

struct mapping {
	uint64_t start, end, off;
	char *path;
	struct elf_image *img;   /* opened on first use */
	bool tried;
	Dwarf *dw;               /* its DWARF, opened on the first line lookup */
	int dw_fd;
	bool dw_tried;
	bool lent;               /* img (and dw, when lent) are proc_syms__lend()'s */
};

struct proc_syms {
	pid_t pid;
	char *maps_path;
	struct mapping *maps;
	size_t n;
	bool loaded;
	unsigned rereads;        /* maps read again after a miss (bounded) */
	/* one file already open elsewhere (proc_syms__lend) */
	char *lent_path;
	const struct elf_image *lent_img;
	Dwarf *lent_dw;
};

#define MAX_REREADS 64

static void clear_maps(struct proc_syms *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		free(ps->maps[i].path);
		if (!ps->maps[i].lent)
			elf_image__free(ps->maps[i].img);
		if (ps->maps[i].dw && !(ps->maps[i].lent && ps->lent_dw))
			dwarf_end(ps->maps[i].dw);
		if (ps->maps[i].dw_fd >= 0)
			close(ps->maps[i].dw_fd);
	}
	free(ps->maps);
	ps->maps = NULL;
	ps->n = 0;
}

/* Executable file mappings only. Keeps the old table when the file is gone
 * or holds none (the process exited, or is a zombie whose maps are empty). */
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
	struct mapping *maps = NULL;
	size_t n = 0, cap = 0;
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
		if (n == cap) {
			size_t c = cap ? cap * 2 : 32;
			struct mapping *m = realloc(maps, c * sizeof(*m));
			if (!m)
				break;
			maps = m;
			cap = c;
		}
		char *dup = strdup(file);
		if (!dup)
			break;
		maps[n++] = (struct mapping){ .start = start, .end = end, .off = off, .path = dup,
					      .dw_fd = -1 };
	}
	fclose(f);
	if (!n) {
		free(maps);
		return;
	}
	/* a mapping read again keeps what was opened for it: its image and
	 * DWARF (a library's compressed debug sections inflated once) */
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < ps->n; k++) {
			struct mapping *o = &ps->maps[k];
			if (o->start != maps[i].start || o->off != maps[i].off || !o->path ||
			    strcmp(o->path, maps[i].path))
				continue;
			maps[i].img = o->img;
			maps[i].tried = o->tried;
			maps[i].dw = o->dw;
			maps[i].dw_fd = o->dw_fd;
			maps[i].dw_tried = o->dw_tried;
			maps[i].lent = o->lent;
			*o = (struct mapping){ .path = o->path, .dw_fd = -1, .lent = true };
			break;
		}
	clear_maps(ps);
	ps->maps = maps;
	ps->n = n;
}

void proc_syms__prime(struct proc_syms *ps)
{
	if (!ps)
		return;
	read_maps(ps);
	ps->loaded = true;
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

/* The mapping of addr, its ELF image opened; *vaddr the address in the
 * file's own virtual addresses (0 when no loadable segment holds it). */
static struct mapping *locate(struct proc_syms *ps, uint64_t addr, uint64_t *foff, uint64_t *vaddr)
{
	*vaddr = 0;
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
		return NULL;
	*foff = addr - m->start + m->off;
	if (!m->tried) {
		m->tried = true;
		if (ps->lent_path && !strcmp(m->path, ps->lent_path)) {
			m->img = (struct elf_image *)ps->lent_img;
			m->lent = true;
		} else {
			/* the file the process maps, as the kernel sees it: right
			 * even when deleted, replaced or in another mount namespace
			 * (a replayed maps file: its path) */
			char mf[96];
			if (!ps->maps_path) {
				snprintf(mf, sizeof(mf), "/proc/%d/map_files/%llx-%llx", (int)ps->pid,
					 (unsigned long long)m->start, (unsigned long long)m->end);
				m->img = elf_image__open_own(mf, true);   /* the target's is lent */
			}
			if (!m->img)
				m->img = elf_image__open_own(m->path, true);
		}
	}
	for (size_t i = 0; m->img && i < m->img->n_loads; i++) {
		const struct elf_load *l = &m->img->loads[i];
		if (*foff >= l->offset && *foff < l->offset + l->filesz) {
			*vaddr = *foff - l->offset + l->vaddr;
			break;
		}
	}
	return m;
}

/* The unit of addr in m's DWARF (opened on first use); *vaddr its address
 * in the file. Returns false when there is none. */
static bool unit_of(struct proc_syms *ps, uint64_t addr, struct mapping **mp, uint64_t *vaddr,
		    Dwarf_Die *cu)
{
	uint64_t foff;
	struct mapping *m = locate(ps, addr, &foff, vaddr);

	if (!m || !*vaddr || !m->img || !m->img->has_debug_info)
		return false;
	if (!m->dw_tried && m->lent && ps->lent_dw) {
		m->dw_tried = true;
		m->dw = ps->lent_dw;
	}
	if (!m->dw_tried) {
		m->dw_tried = true;
		/* the binary's DWARF, or its debug file's (sym/debuginfo.h) */
		int fd = elf_image__dwarf_fd(m->img);
		m->dw_fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
		if (m->dw_fd >= 0 && !(m->dw = dwarf_begin(m->dw_fd, DWARF_C_READ))) {
			close(m->dw_fd);
			m->dw_fd = -1;
		}
	}
	*mp = m;
	return m->dw && dwarf_addrdie(m->dw, *vaddr, cu);
}

/* src relative to the unit's compilation directory, its end kept when
 * longer than flen - 1. */
static void set_file(Dwarf_Die *cu, const char *src, char *file, size_t flen)
{
	Dwarf_Attribute a;
	char *rel = async_stack_rel_path(src, dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a)));

	if (!rel)
		return;
	size_t n = strlen(rel);
	snprintf(file, flen, "%s", n >= flen ? rel + (n - flen + 1) : rel);
	free(rel);
}

/* file:line of the code at vaddr in unit cu, from its line table. */
static void line_at(Dwarf_Die *cu, uint64_t vaddr, char *file, size_t flen, uint32_t *line,
		    uint32_t *col)
{
	Dwarf_Line *l = dwarf_getsrc_die(cu, vaddr);
	const char *src = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
	int ln = 0, c = 0;

	if (!src || dwarf_lineno(l, &ln) || ln <= 0)
		return;
	set_file(cu, src, file, flen);
	if (file[0])
		*line = (uint32_t)ln;
	if (file[0] && col && !dwarf_linecol(l, &c) && c > 0)
		*col = (uint32_t)c;
}

/* file:line of the call that inlined subroutine inl stands for. */
static void call_site(Dwarf_Die *cu, Dwarf_Files *files, size_t nfiles, Dwarf_Die *inl,
		      char *file, size_t flen, uint32_t *line, uint32_t *col)
{
	Dwarf_Attribute a;
	Dwarf_Word f, l;
	const char *src;

	if (files && !dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &a), &f) &&
	    !dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &a), &l) && f < nfiles &&
	    (src = dwarf_filesrc(files, f, NULL, NULL))) {
		set_file(cu, src, file, flen);
		*line = file[0] ? (uint32_t)l : 0;
		if (file[0] && col && !dwarf_formudata(dwarf_attr(inl, DW_AT_call_column, &a), &l))
			*col = (uint32_t)l;
	}
}

int proc_syms__line(struct proc_syms *ps, uint64_t addr, char *file, size_t flen, uint32_t *line)
{
	struct mapping *m;
	uint64_t vaddr;
	Dwarf_Die cu;

	*line = 0;
	if (!flen)
		return 0;
	file[0] = '\0';
	if (unit_of(ps, addr, &m, &vaddr, &cu))
		line_at(&cu, vaddr, file, flen, line, NULL);
	return *line != 0;
}

/* The chain of scopes holding pc below die: a subprogram (found through
 * namespaces and impl blocks: dwarf_getscopes does not enter them) and the
 * inlined subroutines nested in it, outermost first. Returns how many. */
static size_t scope_chain(Dwarf_Die *die, Dwarf_Addr pc, Dwarf_Die *chain, size_t max, int depth)
{
	Dwarf_Die c;

	if (depth > 32 || dwarf_child(die, &c))
		return 0;
	do {
		int tag = dwarf_tag(&c);
		if (tag == DW_TAG_namespace || tag == DW_TAG_structure_type ||
		    tag == DW_TAG_union_type || tag == DW_TAG_enumeration_type) {
			if (depth == 0 || dwarf_tag(die) != DW_TAG_subprogram) {
				size_t n = scope_chain(&c, pc, chain, max, depth + 1);
				if (n)
					return n;
			}
			continue;
		}
		if ((tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
		     tag == DW_TAG_lexical_block) && dwarf_haspc(&c, pc) == 1) {
			size_t n = 0;
			if (tag != DW_TAG_lexical_block && max) {
				chain[0] = c;
				n = 1;
			}
			return n + scope_chain(&c, pc, chain + n, max - n, depth + 1);
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return 0;
}

/* The demangled name of an inlined subroutine's function, hash removed. */
static void inline_name(Dwarf_Die *inl, char *buf, size_t len)
{
	Dwarf_Attribute a;
	const char *link = dwarf_formstring(dwarf_attr_integrate(inl, DW_AT_linkage_name, &a));
	char *d = link ? sym_demangle(link) : NULL;

	if (d) {
		snprintf(buf, len, "%s", d);
		free(d);
		return;
	}
	const char *n = dwarf_diename(inl);
	snprintf(buf, len, "%s", n ? n : "?");
}

size_t proc_syms__inlined(struct proc_syms *ps, uint64_t addr, struct proc_sym_inline *out,
			  size_t max, char *call_file, size_t cflen, uint32_t *call_line,
			  uint32_t *call_col)
{
	struct mapping *m;
	uint64_t vaddr;
	Dwarf_Die cu, chain[PROC_SYMS_INLINE_MAX + 1];
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;

	bool want_call = call_file && cflen && call_line;
	if (want_call) {
		call_file[0] = '\0';
		*call_line = 0;
	}
	if (call_col)
		*call_col = 0;
	if (!max || !unit_of(ps, addr, &m, &vaddr, &cu))
		return 0;
	size_t n = scope_chain(&cu, vaddr, chain, PROC_SYMS_INLINE_MAX + 1, 0);
	if (n < 2) {
		/* nothing inlined at addr: the function's own line */
		if (want_call)
			line_at(&cu, vaddr, call_file, cflen, call_line, call_col);
		return 0;
	}
	dwarf_getsrcfiles(&cu, &files, &nfiles);
	/* innermost first: each inlined subroutine named, at the location the
	 * next one in was called from (the innermost at the line table's) */
	size_t k = 0;
	for (size_t i = n - 1; i >= 1 && k < max; i--, k++) {
		struct proc_sym_inline *o = &out[k];
		inline_name(&chain[i], o->name, sizeof(o->name));
		o->file[0] = '\0';
		o->line = o->col = 0;
		if (i == n - 1)
			line_at(&cu, vaddr, o->file, sizeof(o->file), &o->line, &o->col);
		else
			call_site(&cu, files, nfiles, &chain[i + 1], o->file, sizeof(o->file), &o->line,
				  &o->col);
	}
	/* where the outermost inlined subroutine was called from, in the
	 * function itself */
	if (want_call)
		call_site(&cu, files, nfiles, &chain[1], call_file, cflen, call_line, call_col);
	return k;
}

int proc_syms__name(struct proc_syms *ps, uint64_t addr, char *buf, size_t len)
{
	uint64_t foff, vaddr;

	if (!len)
		return 0;
	buf[0] = '\0';
	struct mapping *m = locate(ps, addr, &foff, &vaddr);
	if (!m)
		return 0;
	const struct elf_sym *s = vaddr && m->img ? sym_at(m->img, vaddr) : NULL;
	if (s) {
		snprintf(buf, len, "%s", s->name);
		return 1;
	}
	const char *base = strrchr(m->path, '/');
	snprintf(buf, len, "%s+0x%llx", base ? base + 1 : m->path, (unsigned long long)foff);
	return 0;
}

int proc_syms__lend(struct proc_syms *ps, const char *path, const struct elf_image *img,
		    struct Dwarf *dw)
{
	char *p = strdup(path);

	if (!p)
		return -ENOMEM;
	free(ps->lent_path);
	ps->lent_path = p;
	ps->lent_img = img;
	ps->lent_dw = dw;
	return 0;
}

void proc_syms__free(struct proc_syms *ps)
{
	if (!ps)
		return;
	clear_maps(ps);
	free(ps->lent_path);
	free(ps->maps_path);
	free(ps);
}
