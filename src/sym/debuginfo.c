/* Finding a stripped binary's debug file (see debuginfo.h): libdwfl's
 * offline reporting with its standard find-debuginfo callback does the
 * build-id, .gnu_debuglink and debuginfod lookups and checks what it
 * finds; this file adds the named file, says how each was found, and
 * remembers the answer per binary. */
#include "sym/debuginfo.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/debuginfod.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *named_file;

void debuginfo_set_file(const char *path)
{
	named_file = path;
}

const char *debuginfo_how_name(enum debuginfo_how how)
{
	switch (how) {
	case DEBUGINFO_NAMED: return "--debug-file";
	case DEBUGINFO_BUILD_ID: return "by build id";
	case DEBUGINFO_DEBUGLINK: return ".gnu_debuglink";
	case DEBUGINFO_DEBUGINFOD: return "debuginfod";
	}
	return "?";
}

int debuginfo_scn_build_id(Elf_Scn *scn, char *buf)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp((char *)d->d_buf + name_off, "GNU", 4) || !nh.n_descsz)
			continue;
		const unsigned char *b = (unsigned char *)d->d_buf + desc_off;
		for (size_t i = 0; i < nh.n_descsz && i < 20; i++)
			snprintf(buf + 2 * i, 3, "%02x", b[i]);
		return 0;
	}
	return -ENOENT;
}

int debuginfo_build_id(const char *path, char *buf)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -ENOENT;
	Elf *elf;
	Elf_Scn *scn = NULL;

	buf[0] = '\0';
	if (fd < 0)
		return -ENOENT;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && ret && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE)
			ret = debuginfo_scn_build_id(scn, buf);
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

static bool same_file(const char *a, const char *b)
{
	struct stat x, y;

	return !stat(a, &x) && !stat(b, &y) && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

int debuginfo_proc_root(const char *path, char *root, size_t len)
{
	int pid, end = 0;
	char ns[64], dir[64];

	if (len)
		root[0] = '\0';
	if (sscanf(path, "/proc/%d/%n", &pid, &end) < 1 || !end || pid <= 0)
		return 0;
	snprintf(ns, sizeof(ns), "/proc/%d/ns/mnt", pid);
	snprintf(dir, sizeof(dir), "/proc/%d/root/", pid);
	/* our own view when the process shares our mount namespace and root */
	if (same_file(ns, "/proc/self/ns/mnt") && same_file(dir, "/"))
		return 0;
	snprintf(root, len, "/proc/%d/root", pid);
	return 1;
}

/* What libdwfl finds for path: its debug file's name (malloc'd), or NULL. */
static char *dwfl_find(const char *path)
{
	/* libdwfl's default: beside, .debug/, /usr/lib/debug (by build id and
	 * by the binary's directory); a process in another mount namespace
	 * adds its own /usr/lib/debug */
	char search[128] = ":.debug:/usr/lib/debug", root[64];
	char *search_p = search;
	const Dwfl_Callbacks cb = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &search_p,
	};
	const char *main_file = NULL, *debug_file = NULL;
	Dwarf_Addr bias;
	char *out = NULL;
	Dwfl *dwfl;
	int fd;

	/* read through path (a /proc/PID/exe link reads the file the process
	 * runs, even replaced or in another mount namespace), looked up by the
	 * name it links to (a .gnu_debuglink file lies beside that), in the
	 * process's own file system (/proc/PID/root) when it is not ours */
	char name[4096], link[4000];
	ssize_t n = strncmp(path, "/proc/", 6) ? -1 : readlink(path, link, sizeof(link) - 1);
	if (n > 0) {
		link[n] = '\0';
		if (n > 10 && !strcmp(link + n - 10, " (deleted)"))
			link[n - 10] = '\0';
		if (debuginfo_proc_root(path, root, sizeof(root)))
			snprintf(search + strlen(search), sizeof(search) - strlen(search),
				 ":%s/usr/lib/debug", root);
		snprintf(name, sizeof(name), "%s%s", root, link);
	} else {
		snprintf(name, sizeof(name), "%s", path);
	}
	if (!(dwfl = dwfl_begin(&cb)))
		return NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		Dwfl_Module *m = dwfl_report_offline(dwfl, "", name, fd);   /* takes fd */
		dwfl_report_end(dwfl, NULL, NULL);
		if (m && dwfl_module_getdwarf(m, &bias) &&
		    dwfl_module_info(m, NULL, NULL, NULL, NULL, NULL, &main_file, &debug_file) &&
		    debug_file && strcmp(debug_file, name))
			out = strdup(debug_file);
	}
	dwfl_end(dwfl);
	return out;
}

/* A debuginfod server's copy, when DEBUGINFOD_URLS names servers (libdwfl
 * fetches it too but keeps no name of it): its path in the client's
 * cache (malloc'd), or NULL. libdebuginfod (and the HTTP and TLS libraries
 * under it, some 6 MiB of every process that links it) is loaded only
 * then, as libdw itself does. */
static char *debuginfod_find(const char *build_id)
{
	static void *lib;
	static debuginfod_client *(*begin)(void);
	static int (*find)(debuginfod_client *, const unsigned char *, int, char **);
	static void (*end)(debuginfod_client *);
	const char *urls = getenv("DEBUGINFOD_URLS");
	char *path = NULL;

	if (!urls || !*urls || !build_id || !*build_id)
		return NULL;
	if (!lib && (lib = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_LOCAL))) {
		begin = (debuginfod_client * (*)(void))dlsym(lib, "debuginfod_begin");
		find = (int (*)(debuginfod_client *, const unsigned char *, int, char **))
			dlsym(lib, "debuginfod_find_debuginfo");
		end = (void (*)(debuginfod_client *))dlsym(lib, "debuginfod_end");
	}
	if (!begin || !find || !end)
		return NULL;
	debuginfod_client *c = begin();
	if (!c)
		return NULL;
	int fd = find(c, (const unsigned char *)build_id, 0, &path);
	end(c);
	if (fd < 0) {
		free(path);
		return NULL;
	}
	close(fd);
	return path;
}

static enum debuginfo_how how_of(const char *file)
{
	const char *cache = getenv("DEBUGINFOD_CACHE_PATH");

	if (strstr(file, "/usr/lib/debug/.build-id/"))
		return DEBUGINFO_BUILD_ID;
	if ((cache && *cache && !strncmp(file, cache, strlen(cache))) ||
	    strstr(file, "/debuginfod_client/") || strstr(file, "/debuginfod/"))
		return DEBUGINFO_DEBUGINFOD;
	return DEBUGINFO_DEBUGLINK;
}

struct answer {
	char *path, *build_id, *found;   /* found NULL: none */
	enum debuginfo_how how;
};
static struct answer *answers;
static size_t n_answers;

int debuginfo_find(const char *path, const char *build_id, const char **out,
		   enum debuginfo_how *how, char *why, size_t whylen)
{
	char bid[41];

	*out = NULL;
	if (named_file) {
		/* the user's word, checked: never DWARF of another build */
		if (debuginfo_build_id(named_file, bid)) {
			snprintf(why, whylen, "--debug-file %s: not an ELF file with a build id",
				 named_file);
			return -EBADF;
		}
		if (build_id && *build_id && strcmp(bid, build_id)) {
			snprintf(why, whylen, "--debug-file %s: its build id %s is not %s's (%s): "
				 "name the debug file of this build", named_file, bid, path, build_id);
			return -EBADF;
		}
		*out = named_file;
		*how = DEBUGINFO_NAMED;
		return 0;
	}
	for (size_t i = 0; i < n_answers; i++)
		if (!strcmp(answers[i].path, path) && !strcmp(answers[i].build_id, build_id ? build_id : "")) {
			*out = answers[i].found;
			*how = answers[i].how;
			return *out ? 0 : -ENOENT;
		}
	char *found = dwfl_find(path);
	if (!found)
		found = debuginfod_find(build_id);
	struct answer *a = realloc(answers, (n_answers + 1) * sizeof(*a));
	if (a) {
		answers = a;
		a = &answers[n_answers];
		a->path = strdup(path);
		a->build_id = strdup(build_id ? build_id : "");
		a->found = found;
		a->how = found ? how_of(found) : 0;
		if (a->path && a->build_id) {
			n_answers++;
		} else {
			free(a->path);
			free(a->build_id);
		}
	}
	if (!found)
		return -ENOENT;
	*out = found;
	*how = how_of(found);
	return 0;
}

int debuginfo_split_missing(int fd, char *dwo, size_t len)
{
	Dwarf *dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;   /* fd stays open */
	Dwarf_CU *cu = NULL;
	Dwarf_Half ver;
	uint8_t type;
	Dwarf_Die cudie, sub;
	size_t units = 0, skeletons = 0, found = 0;

	if (len)
		dwo[0] = '\0';
	if (!dw)
		return 0;
	/* the first units tell: rustc splits all of a build's or none */
	while (units < 16 && !dwarf_get_units(dw, cu, &cu, &ver, &type, &cudie, &sub)) {
		units++;
		if (type != DW_UT_skeleton)
			continue;
		skeletons++;
		found += sub.addr != NULL;
		Dwarf_Attribute a;
		const char *name = dwarf_formstring(dwarf_attr(&cudie, DW_AT_dwo_name, &a));
		if (!name)
			name = dwarf_formstring(dwarf_attr(&cudie, DW_AT_GNU_dwo_name, &a));
		if (name && len && !dwo[0])
			snprintf(dwo, len, "%s", name);
	}
	dwarf_end(dw);
	return skeletons && !found;
}

const char *debuginfo_libdw_version(void)
{
	const char *v = dwfl_version(NULL);

	return v ? v : "?";
}
