/* Which version of a crate (tokio, async-std, ...) a binary was built with,
 * from the source paths it carries: DWARF line-table file names and
 * compilation directories, and the panic-location strings in .rodata
 * ("/root/.cargo/registry/src/index.crates.io-.../tokio-1.53.1/src/...";
 * crates.io and registry builds, `cargo vendor --versioned-dirs` and
 * Debian's /usr/share/cargo/registry/tokio-1.24.2/ all have a path
 * component `<crate>-<semver>`). Plain `cargo vendor`, git dependencies and
 * --remap-path-prefix leave no version there: the answer is then "unknown"
 * (src/probe/runtime_id.c then takes a range from the profile's points).
 * libdw/libelf only; never prints; knows nothing of any runtime. */
#ifndef AS_SYM_CRATE_VERSION_H
#define AS_SYM_CRATE_VERSION_H

#include <elfutils/libdw.h>
#include <stddef.h>

#include "sym/semver.h"

/* The versioned crate directories a binary names, read once. */
struct crate_paths;

/* Reads path's DWARF file tables and compilation directories (when it has
 * DWARF) and its .rodata. Returns NULL and sets errno: from open, ENOEXEC
 * when it is not an ELF file, ENOMEM. A binary without DWARF or .rodata
 * is not an error (it simply names fewer versions). */
struct crate_paths *crate_paths__open(const char *path);
/* The same on an ELF file already open (fd borrowed, mapped, never closed;
 * e.g. elf_image__fd()) or, when dw is not NULL, on its DWARF session
 * already open (borrowed for the call only; e.g. dwarf_types__dwarf(): its
 * ELF is read and fd is unused, and the line tables libdw parses stay
 * cached in dw for later source-line lookups), so that nothing is opened
 * or parsed twice. */
struct crate_paths *crate_paths__open_fd(int fd, Dwarf *dw);
void crate_paths__free(struct crate_paths *cp);

/* One version of the crate found, and how many paths name it. */
struct crate_version_hit {
	struct semver version;
	unsigned dwarf_paths;   /* DWARF file names and compilation directories */
	unsigned panic_paths;   /* occurrences in .rodata (panic locations) */
};

#define CRATE_VERSIONS_MAX 8

/* What the binary says about one crate. n == 0: unknown (no path names a
 * version of it). Several hits: several versions are linked in (e.g.
 * through two major versions of a dependency), most named first. */
struct crate_versions {
	struct crate_version_hit hits[CRATE_VERSIONS_MAX];
	size_t n;
	size_t more;            /* further versions beyond CRATE_VERSIONS_MAX */
	bool searched_dwarf;    /* the binary has DWARF compilation units */
	bool searched_rodata;   /* the binary has a .rodata section */
};

/* The versions of crate (its name as in Cargo.toml: "tokio", "async-std")
 * named as a whole path component `<crate>-<version>` ("tokio-1.53.1" in
 * ".../tokio-1.53.1/src/..."; "tokio-util-0.7.19" is not tokio's). Fills
 * *out; returns out->n (0: unknown), or -EINVAL for an empty crate name. */
int crate_paths__versions(const struct crate_paths *cp, const char *crate,
			  struct crate_versions *out);

/* "DWARF paths", "panic locations" or "DWARF paths and panic locations":
 * where a hit came from, for messages (static string). */
const char *crate_version_hit__source(const struct crate_version_hit *h);

/* Every `<crate>-<version>` component found, for listings: the i-th crate
 * name (borrowed until crate_paths__free()) and its hit; returns 0, or
 * -ENOENT past the last. */
int crate_paths__entry(const struct crate_paths *cp, size_t i, const char **crate,
		       struct crate_version_hit *hit);


#endif
