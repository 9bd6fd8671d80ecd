/* Crate versions from the source paths a binary carries (see
 * crate_version.h). One pass at open collects every path component of the
 * form `<crate>-<MAJOR.MINOR.PATCH[-pre]>` with its counts; queries then
 * filter by crate name. DWARF strings are whole paths (libdw joins the
 * line table's directories and names), and a path naming a crate twice
 * counts once; .rodata holds the panic-location file names back to back
 * without separators, so there a component must start after a '/', a NUL
 * or a non-printable byte and end at a '/', and each occurrence counts.
 * Only '/' separates (Linux paths). */
#include "sym/crate_version.h"

#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#define CRATE_NAME_MAX 64    /* crates.io's limit */
#define COMPONENT_MAX 160    /* longer components are not crate directories */

struct crate_entry {
	char crate[CRATE_NAME_MAX + 1];
	struct crate_version_hit hit;
};

struct crate_paths {
	struct crate_entry *entries;
	size_t n, cap;
	bool searched_dwarf, searched_rodata;
};

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

static bool name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

/* Splits a whole component "tokio-util-0.7.19" into its crate name and
 * full version: the first '-' after which a three-number version takes the
 * rest of the component. */
static bool split_component(const char *comp, size_t len, char *crate, struct semver *v)
{
	char buf[COMPONENT_MAX + 1];

	if (len < 7 || len > COMPONENT_MAX || !name_start(comp[0]))
		return false;
	memcpy(buf, comp, len);
	buf[len] = '\0';
	for (size_t k = 1; k + 1 < len; k++) {
		const char *end;
		if (!name_char(buf[k]))
			return false;
		if (buf[k] != '-' || buf[k + 1] < '0' || buf[k + 1] > '9' || k > CRATE_NAME_MAX)
			continue;
		if (semver_parse_prefix(buf + k + 1, v, &end) == 0 && !*end && v->parts == 3) {
			memcpy(crate, buf, k);
			crate[k] = '\0';
			return true;
		}
	}
	return false;
}

static struct crate_entry *entry_for(struct crate_paths *cp, const char *crate,
				     const struct semver *v)
{
	for (size_t i = 0; i < cp->n; i++)
		if (!strcmp(cp->entries[i].crate, crate) &&
		    !semver_cmp(&cp->entries[i].hit.version, v))
			return &cp->entries[i];
	if (cp->n == cp->cap) {
		size_t cap = cp->cap ? cp->cap * 2 : 16;
		struct crate_entry *e = realloc(cp->entries, cap * sizeof(*e));
		if (!e)
			return NULL;
		cp->entries = e;
		cp->cap = cap;
	}
	struct crate_entry *e = &cp->entries[cp->n++];
	memset(e, 0, sizeof(*e));
	strcpy(e->crate, crate);
	e->hit.version = *v;
	return e;
}

/* Counts a component if it is a versioned crate directory; *last (the
 * entry the same path counted last) keeps a path from counting twice. */
static int add_component(struct crate_paths *cp, const char *comp, size_t len, bool dwarf,
			 struct crate_entry **last)
{
	char crate[CRATE_NAME_MAX + 1];
	struct semver v;
	struct crate_entry *e;

	if (!split_component(comp, len, crate, &v))
		return 0;
	e = entry_for(cp, crate, &v);
	if (!e)
		return -ENOMEM;
	if (e != *last) {
		if (dwarf)
			e->hit.dwarf_paths++;
		else
			e->hit.panic_paths++;
	}
	*last = e;
	return 0;
}

/* A whole path (NUL-terminated): every component between separators. */
static int add_path(struct crate_paths *cp, const char *path)
{
	struct crate_entry *last = NULL;
	const char *p = path;

	if (!path)
		return 0;
	for (;;) {
		size_t len = strcspn(p, "/");
		int err = add_component(cp, p, len, true, &last);
		if (err)
			return err;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

static int scan_dwarf(struct crate_paths *cp, Dwarf *dw)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	int err;

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Attribute attr;
		Dwarf_Files *files;
		size_t nfiles;

		if (dwarf_offdie(dw, off + hsize, &cu)) {
			cp->searched_dwarf = true;
			err = add_path(cp, dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &attr)));
			if (err)
				return err;
			if (dwarf_getsrcfiles(&cu, &files, &nfiles) == 0) {
				for (size_t i = 0; i < nfiles; i++) {
					err = add_path(cp, dwarf_filesrc(files, i, NULL, NULL));
					if (err)
						return err;
				}
			}
		}
		off = next;
	}
	return 0;
}

static bool component_boundary(unsigned char c)
{
	return c == '/' || c < 0x20 || c >= 0x7f;
}

/* Panic locations in .rodata: every component that ends at a '/' and
 * starts at a boundary. The strings have no separators, so each occurrence
 * counts. */
static int scan_rodata(struct crate_paths *cp, const char *d, size_t len)
{
	size_t start = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)d[i];
		struct crate_entry *last = NULL;
		if (!component_boundary(c))
			continue;
		if (c == '/' && i > start) {
			int err = add_component(cp, d + start, i - start, false, &last);
			if (err)
				return err;
		}
		start = i + 1;
	}
	return 0;
}

static int read_rodata(struct crate_paths *cp, Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *data;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".rodata"))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			return 0;
		cp->searched_rodata = true;
		return scan_rodata(cp, data->d_buf, data->d_size);
	}
	return 0;
}

static int cmp_entries(const void *pa, const void *pb)
{
	const struct crate_entry *a = pa, *b = pb;
	unsigned na = a->hit.dwarf_paths + a->hit.panic_paths;
	unsigned nb = b->hit.dwarf_paths + b->hit.panic_paths;
	int c = strcmp(a->crate, b->crate);

	if (c)
		return c;
	if (na != nb)
		return na > nb ? -1 : 1;
	return -semver_cmp(&a->hit.version, &b->hit.version);
}

struct crate_paths *crate_paths__open_fd(int fd, Dwarf *dw)
{
	struct crate_paths *cp = NULL;
	Dwarf *own_dw = NULL;
	Elf *elf = NULL;
	/* .rodata from the binary (fd): a stripped binary's debug file, where
	 * its DWARF may be, has no section contents but the debug ones */
	bool own_elf = fd >= 0;
	int err = 0;

	if (!dw && fd < 0) {
		errno = EBADF;
		return NULL;
	}
	cp = calloc(1, sizeof(*cp));
	if (!cp) {
		errno = ENOMEM;
		return NULL;
	}
	elf_version(EV_CURRENT);
	elf = own_elf ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : dwarf_getelf(dw);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto cleanup;
	}
	if (!dw)
		dw = own_dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);   /* NULL: no DWARF */
	if (dw && (err = scan_dwarf(cp, dw)))
		goto cleanup;
	if ((err = read_rodata(cp, elf)))
		goto cleanup;
	if (cp->n)
		qsort(cp->entries, cp->n, sizeof(*cp->entries), cmp_entries);
cleanup:
	if (own_dw)
		dwarf_end(own_dw);
	if (own_elf && elf)
		elf_end(elf);
	if (err) {
		crate_paths__free(cp);
		errno = -err;
		return NULL;
	}
	return cp;
}

struct crate_paths *crate_paths__open(const char *path)
{
	struct crate_paths *cp;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return NULL;
	cp = crate_paths__open_fd(fd, NULL);
	err = errno;
	close(fd);
	errno = err;
	return cp;
}

void crate_paths__free(struct crate_paths *cp)
{
	if (!cp)
		return;
	free(cp->entries);
	free(cp);
}

int crate_paths__versions(const struct crate_paths *cp, const char *crate,
			  struct crate_versions *out)
{
	memset(out, 0, sizeof(*out));
	if (!crate || !*crate)
		return -EINVAL;
	out->searched_dwarf = cp->searched_dwarf;
	out->searched_rodata = cp->searched_rodata;
	/* entries are sorted by crate, then most named first */
	for (size_t i = 0; i < cp->n; i++) {
		if (strcmp(cp->entries[i].crate, crate))
			continue;
		if (out->n < CRATE_VERSIONS_MAX)
			out->hits[out->n++] = cp->entries[i].hit;
		else
			out->more++;
	}
	return (int)out->n;
}

const char *crate_version_hit__source(const struct crate_version_hit *h)
{
	if (h->dwarf_paths && h->panic_paths)
		return "DWARF paths and panic locations";
	return h->dwarf_paths ? "DWARF paths" : "panic locations";
}

int crate_paths__entry(const struct crate_paths *cp, size_t i, const char **crate,
		       struct crate_version_hit *hit)
{
	if (i >= cp->n)
		return -ENOENT;
	*crate = cp->entries[i].crate;
	*hit = cp->entries[i].hit;
	return 0;
}
