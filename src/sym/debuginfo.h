/* Where a binary's DWARF and full symbol table are when they are not in
 * it (a stripped deployment): a file the user names (--debug-file), then
 * what libdwfl's standard lookup finds: /usr/lib/debug/.build-id/xx/rest
 * .debug by build id, the .gnu_debuglink name beside the binary, in its
 * .debug/ directory or under /usr/lib/debug/DIR, and debuginfod when
 * DEBUGINFOD_URLS is set. A file found must carry the binary's build id
 * (libdwfl checks its own finds; the named file is checked here). One
 * answer per binary per process (cached). */
#ifndef AS_SYM_DEBUGINFO_H
#define AS_SYM_DEBUGINFO_H

#include <stddef.h>

/* The file --debug-file names (NULL: none), for every binary looked up
 * after; not copied. */
void debuginfo_set_file(const char *path);

/* How a debug file was found. */
enum debuginfo_how {
	DEBUGINFO_NAMED = 1,   /* --debug-file */
	DEBUGINFO_BUILD_ID,    /* /usr/lib/debug/.build-id/ */
	DEBUGINFO_DEBUGLINK,   /* .gnu_debuglink */
	DEBUGINFO_DEBUGINFOD,  /* a debuginfod server (its client's cache) */
};
const char *debuginfo_how_name(enum debuginfo_how how);

/* The separate debug file of the ELF file at path whose build id is
 * build_id (hex, "" none): 0 with *out (owned by the cache, valid for the
 * process's life) and *how; -ENOENT none found; -EBADF the --debug-file
 * named does not match (why says so, in one line). */
int debuginfo_find(const char *path, const char *build_id, const char **out,
		   enum debuginfo_how *how, char *why, size_t whylen);

/* The GNU build id of the ELF file at path in hex into buf (41 bytes): 0,
 * or -ENOENT when it cannot be read or has none. */
int debuginfo_build_id(const char *path, char *buf);
/* The same from a note section already open: 0, or -ENOENT none there. */
#include <libelf.h>
int debuginfo_scn_build_id(Elf_Scn *scn, char *buf);

/* For a path under /proc/PID/ (the exe link, map_files): 1 with root
 * "/proc/PID/root" when that process sees another file system than ours
 * (another mount namespace or a chroot: its paths are valid only under
 * root), else 0 with root "". */
int debuginfo_proc_root(const char *path, char *root, size_t len);

/* Whether the DWARF in the ELF file open at fd is split (rustc's
 * split-debuginfo = "packed" or "unpacked": skeleton units naming .dwo
 * files) with its split units out of libdw's reach: 1 when no skeleton's
 * split unit is found (a .dwp package, which libdw before elfutils 0.191
 * cannot read, or .dwo files that are gone), with the first .dwo name in
 * dwo; 0 when the DWARF is whole (or readable); never an error. */
int debuginfo_split_missing(int fd, char *dwo, size_t len);

/* The version of the libdw in use ("0.188"). */
const char *debuginfo_libdw_version(void);

#endif
