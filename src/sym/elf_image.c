/* ELF reading with libelf: function symbols from .symtab (or .dynsym when
 * stripped), demangled once; build id from the GNU note; PT_LOAD segments. */
#include "sym/elf_image.h"
#include "sym/debuginfo.h"
#include "sym/demangle.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_sym(const void *a, const void *b)
{
	const struct elf_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int read_symbols(struct elf_image *img, Elf *elf, Elf_Scn *scn, GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	if (!data)
		return 0;
	struct elf_sym *syms = realloc(img->syms, (img->n_syms + n) * sizeof(*syms));
	if (!syms && n)
		return -ENOMEM;
	img->syms = syms;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_value == 0 ||
		    sym.st_shndx == SHN_UNDEF)
			continue;
		const char *raw = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!raw || !*raw)
			continue;
		struct elf_sym *s = &img->syms[img->n_syms];
		s->addr = sym.st_value;
		s->size = sym.st_size;
		s->name = sym_demangle(raw);
		/* a C library's versioned name ("clock_nanosleep@@GLIBC_2.17"
		 * in a debug file's .symtab): the function's name */
		char *at = s->name && !strstr(s->name, "::") ? strchr(s->name, '@') : NULL;
		if (at && at != s->name)
			*at = '\0';
		s->norm = s->name ? sym_strip_generics(s->name) : NULL;
		if (!s->name || !s->norm) {
			free(s->name);
			free(s->norm);
			return -ENOMEM;
		}
		img->n_syms++;
	}
	return 0;
}

int elf_open64(const char *path, int *fd, Elf **elf, size_t *shstrndx)
{
	*elf = NULL;
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	*elf = elf_begin(*fd, ELF_C_READ, NULL);
	if (!*elf || elf_kind(*elf) != ELF_K_ELF || gelf_getclass(*elf) != ELFCLASS64 ||
	    elf_getshdrstrndx(*elf, shstrndx)) {
		if (*elf)
			elf_end(*elf);
		*elf = NULL;
		close(*fd);
		*fd = -1;
		return -ENOEXEC;
	}
	return 0;
}

/* A stripped binary: its symbols (when it has no .symtab) and DWARF from
 * its debug file, when one is found. Not finding one is no error. */
static int open_debug_file(struct elf_image *img)
{
	enum debuginfo_how how;
	const char *dbg;
	size_t shstrndx;
	Elf *elf = NULL;
	Elf_Scn *scn = NULL, *symtab = NULL;
	GElf_Shdr symtab_sh;
	int fd, err = 0;

	int r = debuginfo_find(img->path, img->build_id, &dbg, &how, img->debug_refused,
			       sizeof(img->debug_refused));
	if (r)
		return 0;
	if (elf_open64(dbg, &fd, &elf, &shstrndx))
		return 0;
	bool dwarf = false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (sh.sh_type == SHT_SYMTAB && !img->has_symtab) {
			symtab = scn;
			symtab_sh = sh;
		} else if (name && !strcmp(name, ".debug_info") && sh.sh_type != SHT_NOBITS) {
			dwarf = true;
		}
	}
	if (!symtab && (!dwarf || img->has_debug_info)) {
		elf_end(elf);
		close(fd);
		return 0;
	}
	if (!(img->debug_path = strdup(dbg))) {
		err = -ENOMEM;
	} else if (symtab) {
		/* the binary's .dynsym symbols give way to the full table */
		for (size_t i = 0; i < img->n_syms; i++) {
			free(img->syms[i].name);
			free(img->syms[i].norm);
		}
		img->n_syms = 0;
		err = read_symbols(img, elf, symtab, &symtab_sh);
		img->has_symtab = img->debug_syms = true;
	}
	img->debug_how = (int)how;
	if (dwarf && !img->has_debug_info) {
		img->has_debug_info = img->debug_dwarf = true;
	}
	elf_end(elf);
	if (err) {
		close(fd);
		return err;
	}
	img->debug_fd1 = fd + 1;
	return 0;
}

/* path, or the file a /proc/PID/exe (or map_files) link names. */
static char *display_name(const char *path)
{
	char name[4096];
	ssize_t n = strncmp(path, "/proc/", 6) ? -1 : readlink(path, name, sizeof(name) - 1);

	if (n <= 0)
		return strdup(path);
	name[n] = '\0';
	return strdup(name);
}

/* Split DWARF whose units libdw cannot reach (debuginfo_split_missing):
 * no DWARF then, and what to say about it. */
static void check_split(struct elf_image *img, int own_fd)
{
	int fd = img->debug_dwarf && img->debug_fd1 ? img->debug_fd1 - 1 : own_fd;

	if (!debuginfo_split_missing(fd, img->split_dwo, sizeof(img->split_dwo)))
		return;
	img->dwarf_split = true;
	img->has_debug_info = img->debug_dwarf = false;
	/* rustc's package: NAME.dwp beside the binary */
	char dwp[sizeof(img->split_dwp)];
	const char *base = img->name;
	size_t n = strlen(base);
	if (n > 10 && !strcmp(base + n - 10, " (deleted)"))
		n -= 10;
	if (snprintf(dwp, sizeof(dwp), "%.*s.dwp", (int)n, base) < (int)sizeof(dwp) &&
	    !access(dwp, R_OK))
		snprintf(img->split_dwp, sizeof(img->split_dwp), "%s", dwp);
}

const char *elf_image__no_dwarf_why(const struct elf_image *img, char *buf, size_t len)
{
	if (!img || img->has_debug_info)
		return NULL;
	if (img->dwarf_split && img->split_dwp[0])
		snprintf(buf, len, "the DWARF of %s is in its package %s (split-debuginfo = "
			 "\"packed\"), which libdw %s cannot read (elfutils 0.191 can): build with "
			 "split-debuginfo = \"off\"", img->name, img->split_dwp,
			 debuginfo_libdw_version());
	else if (img->dwarf_split)
		snprintf(buf, len, "the DWARF of %s is split into .dwo files that are not found "
			 "(%s) or a .dwp package libdw %s cannot read: build with split-debuginfo = "
			 "\"off\"", img->name, img->split_dwo, debuginfo_libdw_version());
	else
		snprintf(buf, len, "%s has no DWARF and no debug file was found (by build id, "
			 ".gnu_debuglink or debuginfod): build with debug = 1 (file:line only: "
			 "debug = \"line-tables-only\"), or name its debug file with --debug-file",
			 img->name);
	return buf;
}

/* A shared library without a .symtab (a distribution's, stripped): the
 * full symbol table of its debug file when one is installed by build id
 * (/usr/lib/debug/.build-id/xx/rest.debug, as Debian's -dbg and -dbgsym
 * packages put them; its build id checked), so that its internal
 * functions (start_thread, clone3, ...) are named and not only the
 * exported ones of .dynsym. Only the symbols: a library's DWARF is not
 * read (large, and the target's is what stacks need), nor is a server
 * asked. Not finding one is no error. */
static int library_debug_symbols(struct elf_image *img)
{
	char dbg[128], bid[41];
	size_t shstrndx;
	Elf *elf = NULL;
	Elf_Scn *scn = NULL;
	int fd, err = 0;

	if (img->has_symtab || strlen(img->build_id) < 4)
		return 0;
	snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug", img->build_id,
		 img->build_id + 2);
	if (debuginfo_build_id(dbg, bid) || strcmp(bid, img->build_id) ||
	    elf_open64(dbg, &fd, &elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		/* the .dynsym symbols give way to the full table */
		for (size_t i = 0; i < img->n_syms; i++) {
			free(img->syms[i].name);
			free(img->syms[i].norm);
		}
		img->n_syms = 0;
		err = read_symbols(img, elf, scn, &sh);
		img->has_symtab = img->debug_syms = true;
		if (!err && !(img->debug_path = strdup(dbg)))
			err = -ENOMEM;
		img->debug_how = DEBUGINFO_BUILD_ID;
		break;
	}
	elf_end(elf);
	close(fd);
	return err;
}

struct elf_image *elf_image__open(const char *path)
{
	return elf_image__open_own(path, false);
}

struct elf_image *elf_image__open_own(const char *path, bool own_only)
{
	struct elf_image *img = calloc(1, sizeof(*img));
	Elf *elf = NULL;
	int fd = -1, err = 0;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr symtab_sh, dynsym_sh;
	Elf_Scn *symtab = NULL, *dynsym = NULL;
	bool maybe_split = false;

	if (!img)
		return NULL;
	img->path = strdup(path);
	img->name = display_name(path);
	if (!img->path || !img->name) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = elf_open64(path, &fd, &elf, &shstrndx);
	if (err)
		goto cleanup;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (sh.sh_type == SHT_SYMTAB) {
			symtab = scn;
			symtab_sh = sh;
		} else if (sh.sh_type == SHT_DYNSYM) {
			dynsym = scn;
			dynsym_sh = sh;
		} else if (sh.sh_type == SHT_NOTE && name && !strcmp(name, ".note.gnu.build-id")) {
			debuginfo_scn_build_id(scn, img->build_id);
		} else if (name && !strcmp(name, ".debug_info")) {
			img->has_debug_info = true;
		} else if (name && !strcmp(name, ".debug_addr")) {
			maybe_split = true;   /* split DWARF's skeletons need it */
		}
	}
	img->has_symtab = symtab != NULL;
	if (symtab)
		err = read_symbols(img, elf, symtab, &symtab_sh);
	else if (dynsym)
		err = read_symbols(img, elf, dynsym, &dynsym_sh);
	if (!err && !own_only && (!img->has_symtab || !img->has_debug_info))
		err = open_debug_file(img);
	else if (!err && own_only)
		err = library_debug_symbols(img);
	if (err)
		goto cleanup;
	if (img->has_debug_info && !own_only && (maybe_split || img->debug_dwarf))
		check_split(img, fd);
	qsort(img->syms, img->n_syms, sizeof(*img->syms), cmp_sym);

	size_t nph;
	if (elf_getphdrnum(elf, &nph)) {
		err = -ENOEXEC;
		goto cleanup;
	}
	for (size_t i = 0; i < nph && img->n_loads < 16; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		img->loads[img->n_loads++] = (struct elf_load){
			.vaddr = ph.p_vaddr, .memsz = ph.p_memsz, .offset = ph.p_offset,
			.filesz = ph.p_filesz, .exec = (ph.p_flags & PF_X) != 0,
		};
	}
cleanup:
	if (elf)
		elf_end(elf);
	if (fd >= 0 && !err) {
		img->read_fd1 = fd + 1;   /* kept: the binary is opened once */
		fd = -1;
	}
	if (fd >= 0)
		close(fd);
	if (err) {
		elf_image__free(img);
		errno = -err;
		return NULL;
	}
	return img;
}

int elf_image__fd(const struct elf_image *img)
{
	return img && img->read_fd1 ? img->read_fd1 - 1 : -1;
}

int elf_image__dwarf_fd(const struct elf_image *img)
{
	if (img && img->debug_dwarf && img->debug_fd1)
		return img->debug_fd1 - 1;
	return elf_image__fd(img);
}

const char *elf_image__debug_note(const struct elf_image *img, char *buf, size_t len)
{
	if (!img)
		return NULL;
	if (img->debug_refused[0]) {
		snprintf(buf, len, "%s", img->debug_refused);
		return buf;
	}
	if (!img->debug_path)
		return NULL;
	/* a process's binary by the name it runs, not its /proc link */
	snprintf(buf, len, "%s of %s from %s (%s)",
		 img->debug_syms && img->debug_dwarf ? "symbols and DWARF" :
		 img->debug_syms ? "symbols" : "DWARF", img->name, img->debug_path,
		 debuginfo_how_name((enum debuginfo_how)img->debug_how));
	return buf;
}

int elf_image__file_offset(const struct elf_image *img, uint64_t vaddr, uint64_t *off)
{
	for (size_t i = 0; i < img->n_loads; i++) {
		const struct elf_load *l = &img->loads[i];
		if (l->exec && vaddr >= l->vaddr && vaddr < l->vaddr + l->filesz) {
			*off = vaddr - l->vaddr + l->offset;
			return 0;
		}
	}
	return -ENOENT;
}

int elf_image__any_file_offset(const struct elf_image *img, uint64_t vaddr, uint64_t *off)
{
	for (size_t i = 0; i < img->n_loads; i++) {
		const struct elf_load *l = &img->loads[i];
		if (vaddr >= l->vaddr && vaddr < l->vaddr + l->filesz) {
			*off = vaddr - l->vaddr + l->offset;
			return 0;
		}
	}
	return -ENOENT;
}

int elf_image__read(const struct elf_image *img, uint64_t vaddr, void *buf, size_t len)
{
	uint64_t off;
	int fd, err = elf_image__file_offset(img, vaddr, &off);

	if (err)
		return err;
	if (!img->read_fd1) {
		fd = open(img->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		((struct elf_image *)img)->read_fd1 = fd + 1;   /* a cache, not a change */
	}
	fd = img->read_fd1 - 1;
	ssize_t n = pread(fd, buf, len, (off_t)off);
	return n < 0 ? -errno : (int)n;
}

void elf_image__free(struct elf_image *img)
{
	if (!img)
		return;
	for (size_t i = 0; i < img->n_syms; i++) {
		free(img->syms[i].name);
		free(img->syms[i].norm);
	}
	free(img->syms);
	free(img->path);
	free(img->name);
	free(img->debug_path);
	if (img->read_fd1)
		close(img->read_fd1 - 1);
	if (img->debug_fd1)
		close(img->debug_fd1 - 1);
	free(img);
}

const char *insn_describe(const uint8_t *code, size_t len, char *buf, size_t n)
{
	static const char *const regs[16] = { "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
					      "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15" };

	if (len >= 1 && code[0] >= 0x50 && code[0] <= 0x57)
		snprintf(buf, n, "push %%%s", regs[code[0] - 0x50]);
	else if (len >= 2 && code[0] == 0x41 && code[1] >= 0x50 && code[1] <= 0x57)
		snprintf(buf, n, "push %%%s", regs[8 + code[1] - 0x50]);
	else if (len >= 1 && (code[0] == 0xe9 || code[0] == 0xeb))
		snprintf(buf, n, "jmp %s", code[0] == 0xe9 ? "rel32" : "rel8");
	else if (len >= 1 && code[0] == 0xe8)
		snprintf(buf, n, "call rel32");
	else if (len >= 4 && code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e && code[3] == 0xfa)
		snprintf(buf, n, "endbr64");
	else if (len >= 3 && code[0] == 0x48 && (code[1] == 0x83 || code[1] == 0x81) && code[2] == 0xec)
		snprintf(buf, n, "sub $imm,%%rsp");
	else if (insn_emulated(code, len))
		snprintf(buf, n, "nop");
	else {
		size_t o = 0;
		buf[0] = '\0';
		for (size_t i = 0; i < len && i < 4 && o + 4 < n; i++)
			o += (size_t)snprintf(buf + o, n - o, "%s%02x", i ? " " : "", code[i]);
	}
	return buf;
}

int insn_probeable(const uint8_t *code, size_t len)
{
	size_t i = 0;

	/* legacy prefixes: the kernel rejects lock (f0) and the segment
	 * overrides (26 2e 36 3e 64 65) outright (arch/x86 uprobes) */
	while (i < len && i < 15) {
		uint8_t b = code[i];
		if (b == 0xf0 || b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x64 ||
		    b == 0x65)
			return 0;
		if (b != 0x66 && b != 0x67 && b != 0xf2 && b != 0xf3)
			break;
		i++;
	}
	if (i < len && (code[i] & 0xf0) == 0x40)           /* REX */
		i++;
	if (i >= len)
		return 1;
	uint8_t op = code[i];
	if (op == 0xcc || op == 0xcd || op == 0xce || op == 0xf4)   /* int3, int n, into, hlt */
		return 0;
	if (op == 0x0f && i + 1 < len && (code[i + 1] == 0x05 || code[i + 1] == 0x34 ||
					  code[i + 1] == 0x0b))  /* syscall, sysenter, ud2 */
		return 0;
	return 1;
}

int insn_emulated(const uint8_t *code, size_t len)
{
	size_t i = 0;

	if (len == 0)
		return 0;
	if (code[0] >= 0x50 && code[0] <= 0x57)           /* push r64 */
		return 1;
	if (len >= 2 && code[0] == 0x41 && code[1] >= 0x50 && code[1] <= 0x57)
		return 1;                                  /* push r8..r15 */
	if (code[0] == 0xe9 || code[0] == 0xeb || code[0] == 0xe8)
		return 1;                                  /* jmp rel32/rel8, call rel32 */
	while (i < len && code[i] == 0x66)                 /* operand-size prefixes */
		i++;
	if (i < len && code[i] == 0x90)                    /* nop, xchg ax,ax */
		return 1;
	if (i + 1 < len && code[i] == 0x0f && code[i + 1] == 0x1f)
		return 1;                                  /* multi-byte nop */
	return 0;
}

/* fn over every symbol of elf's .symtab (*seen: it has one), until fn
 * returns non-zero: that value, else 0. */
static int each_symbol(Elf *elf, int (*fn)(const struct elf_symbol *sym, void *arg), void *arg,
		       bool *seen)
{
	Elf_Scn *scn = NULL;
	int ret = 0;

	while (!ret && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(d = elf_getdata(scn, NULL)))
			continue;
		*seen = true;
		for (size_t i = 0; !ret && i < sh.sh_size / sizeof(Elf64_Sym); i++) {
			GElf_Sym gs;
			struct elf_symbol sym;
			if (!gelf_getsym(d, (int)i, &gs) || !(sym.name = elf_strptr(elf, sh.sh_link, gs.st_name)))
				continue;
			sym.value = gs.st_value;
			sym.size = gs.st_size;
			sym.type = GELF_ST_TYPE(gs.st_info);
			ret = fn(&sym, arg);
		}
	}
	return ret;
}

int elf_symbols_each(const char *path, int (*fn)(const struct elf_symbol *sym, void *arg),
		     void *arg, uint64_t *tls_off)
{
	int fd = -1, ret = 0;
	Elf *elf = NULL;
	size_t shstrndx, nph;
	bool seen = false;

	if (elf_open64(path, &fd, &elf, &shstrndx))
		return -ENOENT;
	if (tls_off) {
		*tls_off = UINT64_MAX;
		for (size_t i = 0; elf_getphdrnum(elf, &nph) == 0 && i < nph; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_TLS)
				continue;
			uint64_t align = ph.p_align ? ph.p_align : 1;
			uint64_t first = (-(ph.p_vaddr & (align - 1))) & (align - 1);
			*tls_off = ((ph.p_memsz - first + align - 1) / align) * align + first;
		}
	}
	ret = each_symbol(elf, fn, arg, &seen);
	elf_end(elf);
	close(fd);
	if (!seen) {
		/* stripped: the table of its debug file, if one is found */
		char bid[41], why[512];
		const char *dbg;
		enum debuginfo_how how;
		debuginfo_build_id(path, bid);
		if (!debuginfo_find(path, bid, &dbg, &how, why, sizeof(why)) &&
		    !elf_open64(dbg, &fd, &elf, &shstrndx)) {
			ret = each_symbol(elf, fn, arg, &seen);
			elf_end(elf);
			close(fd);
		}
	}
	return ret;
}
