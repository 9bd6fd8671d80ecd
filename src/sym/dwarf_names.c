/* Subprogram names by address through libdw's address ranges and scopes,
 * kept across runs in the binary's memo (sym/dwarf_memo.h: the address
 * ranges of every unit cost more than the lookups). */
#include "sym/dwarf_names.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sym/dwarf_memo.h"

/* Depth-first search below die for a subprogram starting at addr; Rust
 * nests them in namespaces and impl blocks (dwarf_getscopes does not look
 * inside namespaces). Subprogram bodies are not searched. */
static char *find_below(Dwarf_Die *die, uint64_t addr)
{
	Dwarf_Die child;

	if (dwarf_child(die, &child))
		return NULL;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_subprogram) {
			Dwarf_Addr low;
			Dwarf_Attribute attr;
			if (dwarf_lowpc(&child, &low) == 0 && low == addr) {
				const char *name = dwarf_formstring(
					dwarf_attr_integrate(&child, DW_AT_name, &attr));
				if (name)
					return strdup(name);
			}
		} else if (tag == DW_TAG_namespace || tag == DW_TAG_structure_type ||
			   tag == DW_TAG_union_type || tag == DW_TAG_enumeration_type) {
			char *found = find_below(&child, addr);
			if (found)
				return found;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return NULL;
}

static char *name_at(Dwarf *dw, uint64_t addr)
{
	Dwarf_Die cudie;

	if (!dwarf_addrdie(dw, addr, &cudie))
		return NULL;
	return find_below(&cudie, addr);
}

int dwarf_subprogram_names_fd(int fd, const uint64_t *addrs, size_t n, char **names)
{
	struct dwarf_memo *memo;
	Dwarf *dw;

	for (size_t i = 0; i < n; i++)
		names[i] = NULL;
	if (fd < 0)
		return -EBADF;
	dw = dwarf_begin(fd, DWARF_C_READ);
	if (!dw)
		return -ENODATA;
	memo = dwarf_memo__open(dwarf_getelf(dw), fd, "subprograms");   /* NULL: none */
	for (size_t i = 0; i < n; i++) {
		char key[32];
		const char *val;
		/* "=name", or "-" when no subprogram starts there */
		snprintf(key, sizeof(key), "%llx", (unsigned long long)addrs[i]);
		if (dwarf_memo__get(memo, key, &val)) {
			names[i] = val[0] == '=' ? strdup(val + 1) : NULL;
			continue;
		}
		errno = 0;
		names[i] = name_at(dw, addrs[i]);
		if (names[i] && !strchr(names[i], '\n')) {
			char *v;
			if (asprintf(&v, "=%s", names[i]) >= 0) {
				dwarf_memo__put(memo, key, v);
				free(v);
			}
		} else if (!names[i] && errno != ENOMEM) {
			dwarf_memo__put(memo, key, "-");
		}
	}
	dwarf_memo__save(memo);   /* a cache: a failed write costs the next run time */
	dwarf_memo__free(memo);
	dwarf_end(dw);
	return 0;
}

char *sym_first_generic_arg(const char *name)
{
	const char *p = strchr(name, '<');
	int depth = 0;

	/* skip qualified-path brackets at the start ("<X as Y>::f<...>") */
	while (p && p == name) {
		const char *q = p;
		for (depth = 0; *q; q++) {
			if (*q == '<')
				depth++;
			else if (*q == '>' && q[-1] != '-' && --depth == 0)
				break;
		}
		p = *q ? strchr(q + 1, '<') : NULL;
	}
	if (!p) {
		errno = ENOENT;
		return NULL;
	}
	const char *start = p + 1, *q = start;
	for (depth = 0; *q; q++) {
		if (*q == '<' || *q == '(' || *q == '[')
			depth++;
		else if ((*q == '>' && q[-1] != '-') || *q == ')' || *q == ']') {
			if (depth == 0)
				break;
			depth--;
		} else if (*q == ',' && depth == 0) {
			break;
		}
	}
	if (!*q || q == start) {
		errno = ENOENT;
		return NULL;
	}
	return strndup(start, (size_t)(q - start));
}
