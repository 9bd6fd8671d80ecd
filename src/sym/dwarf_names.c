/* Subprogram names by address through libdw's address ranges and scopes,
 * kept across runs in the binary's memo (sym/dwarf_memo.h: the address
 * ranges of every unit cost more than the lookups). */
#include "sym/dwarf_names.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sym/dwarf_memo.h"

/* The addresses asked of one unit: each a subprogram's start, its name
 * found by one walk of the unit for them all. */
struct unit_ask {
	const uint64_t *addrs;
	char **names;
	size_t *idx;             /* indexes into addrs/names of this unit's */
	size_t n, left;
};

/* Depth-first search below die for subprograms starting at the asked
 * addresses; Rust nests them in namespaces and impl blocks (dwarf_getscopes
 * does not look inside namespaces). Subprogram bodies are not searched. */
static void find_below(Dwarf_Die *die, struct unit_ask *u, int depth)
{
	Dwarf_Die child;

	if (depth > 64 || dwarf_child(die, &child))
		return;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_subprogram) {
			Dwarf_Addr low;
			Dwarf_Attribute attr;
			if (dwarf_lowpc(&child, &low))
				continue;
			for (size_t k = 0; k < u->n; k++) {
				size_t i = u->idx[k];
				if (u->addrs[i] != low || u->names[i])
					continue;
				const char *name = dwarf_formstring(
					dwarf_attr_integrate(&child, DW_AT_name, &attr));
				if (name && (u->names[i] = strdup(name)))
					u->left--;
			}
		} else if (tag == DW_TAG_namespace || tag == DW_TAG_structure_type ||
			   tag == DW_TAG_union_type || tag == DW_TAG_enumeration_type) {
			find_below(&child, u, depth + 1);
		}
	} while (u->left && dwarf_siblingof(&child, &child) == 0);
}

int dwarf_subprogram_names_fd(int fd, const uint64_t *addrs, size_t n, char **names)
{
	struct dwarf_memo *memo;
	Dwarf_Off *unit = NULL;
	size_t *idx = NULL;
	bool *asked = NULL;
	Dwarf *dw;

	for (size_t i = 0; i < n; i++)
		names[i] = NULL;
	if (fd < 0)
		return -EBADF;
	dw = dwarf_begin(fd, DWARF_C_READ);
	if (!dw)
		return -ENODATA;
	memo = dwarf_memo__open(dwarf_getelf(dw), fd, "subprograms");   /* NULL: none */
	unit = calloc(n ? n : 1, sizeof(*unit));
	idx = calloc(n ? n : 1, sizeof(*idx));
	asked = calloc(n ? n : 1, sizeof(*asked));
	for (size_t i = 0; unit && idx && asked && i < n; i++) {
		char key[32];
		const char *val;
		Dwarf_Die cudie;
		/* "=name", or "-" when no subprogram starts there */
		snprintf(key, sizeof(key), "%llx", (unsigned long long)addrs[i]);
		if (dwarf_memo__get(memo, key, &val)) {
			names[i] = val[0] == '=' ? strdup(val + 1) : NULL;
			continue;
		}
		asked[i] = true;
		unit[i] = dwarf_addrdie(dw, addrs[i], &cudie) ? dwarf_dieoffset(&cudie) + 1 : 0;
	}
	/* one walk of each unit for all the addresses in it */
	for (size_t i = 0; unit && idx && asked && i < n; i++) {
		struct unit_ask u = { .addrs = addrs, .names = names, .idx = idx };
		Dwarf_Die cudie;
		if (!asked[i] || !unit[i])
			continue;
		for (size_t j = i; j < n; j++)
			if (asked[j] && unit[j] == unit[i]) {
				idx[u.n++] = j;
				asked[j] = false;
			}
		u.left = u.n;
		asked[i] = true;   /* put in the memo below */
		for (size_t k = 1; k < u.n; k++)
			asked[idx[k]] = true;
		if (dwarf_offdie(dw, unit[i] - 1, &cudie))
			find_below(&cudie, &u, 0);
		for (size_t k = 0; k < u.n; k++)
			unit[idx[k]] = 0;   /* walked */
	}
	for (size_t i = 0; asked && i < n; i++) {
		char key[32];
		if (!asked[i])
			continue;
		snprintf(key, sizeof(key), "%llx", (unsigned long long)addrs[i]);
		if (names[i] && !strchr(names[i], '\n')) {
			char *v;
			if (asprintf(&v, "=%s", names[i]) >= 0) {
				dwarf_memo__put(memo, key, v);
				free(v);
			}
		} else if (!names[i]) {
			dwarf_memo__put(memo, key, "-");
		}
	}
	free(unit);
	free(idx);
	free(asked);
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
