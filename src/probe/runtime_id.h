/* Which release of a runtime a binary was built with, and whether the
 * layout its profile assumes holds there: the exact version from the
 * binary's source paths (crate_version.h), else a range from the symbols
 * of the profile's points and the layout DWARF shows; the profile's layout
 * facts checked against DWARF (DWARF wins: the values to use are DWARF's);
 * builds with extra task fields (tokio_unstable, tracing) told apart.
 * Messages are returned as text, never printed. No libbpf. */
#ifndef AS_PROBE_RUNTIME_ID_H
#define AS_PROBE_RUNTIME_ID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probe/profile.h"
#include "sym/elf_image.h"

struct dwarf_types;

#define RUNTIME_ID_MAX_WARNINGS 4

struct runtime_id {
	char version[48];       /* "1.53.1", "1.49 or later", "unknown" */
	char source[48];        /* "DWARF paths", "symbols and DWARF layout", "" */
	bool exact;             /* version is one release */
	bool untested;          /* inside the profile's range, not a tested release */
	bool outside;           /* outside the profile's range (traced with it anyway) */
	char features[48];      /* "tokio_unstable, tracing", "" none seen */
	bool layout_checked;    /* the profile's layout facts were found in DWARF */
	/* The header layout to read task ids with: the profile's, or DWARF's
	 * where they disagree. */
	uint32_t hdr_vtable_off, vtable_id_off_slot, spawn_meta_name_off;
	char warnings[RUNTIME_ID_MAX_WARNINGS][256];
	size_t n_warnings;
};

/* Identifies prof's runtime in img (dt: its DWARF, may be NULL). Always
 * fills *id (version "unknown" when nothing tells). Returns 0 or -ENOMEM. */
int runtime_id__identify(const struct runtime_profile *prof, const struct elf_image *img,
			 struct dwarf_types *dt, struct runtime_id *id);

/* "tokio 1.53.1 (DWARF paths; profile 1.24 to 1.53, tested 1.24.2, 1.53.1;
 * layout checked against DWARF)": one line for record, probes and the
 * trace header. */
void runtime_id__describe(const struct runtime_profile *prof, const struct runtime_id *id,
			  char *buf, size_t len);

#endif
