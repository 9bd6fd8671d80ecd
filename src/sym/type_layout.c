/* Layout facts from DWARF (see type_layout.h): one dwarf_types__find_norm()
 * pass for every queried type, then the member lookups of dwarf_types. */
#include "sym/type_layout.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym/demangle.h"

static int member_type_name(struct dwarf_types *dt, Dwarf_Die *type, char *buf, size_t n)
{
	const char *name = dwarf_types__name(dt, type);
	char *stripped;

	buf[0] = '\0';
	if (!name)
		return 0;
	stripped = sym_strip_generics(name);
	if (!stripped)
		return -ENOMEM;
	snprintf(buf, n, "%s", stripped);
	free(stripped);
	return 0;
}

int type_layout__query(struct dwarf_types *dt, const struct type_layout_query *q, size_t n,
		       struct type_layout_fact *out)
{
	const char **names = NULL;
	Dwarf_Die *dies = NULL;
	int *found = NULL, ret = 0, err;

	for (size_t i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		out[i].size = out[i].member_size = -1;
	}
	if (!n)
		return 0;
	names = calloc(n, sizeof(*names));
	dies = calloc(n, sizeof(*dies));
	found = calloc(n, sizeof(*found));
	if (!names || !dies || !found) {
		ret = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++)
		names[i] = q[i].type ? q[i].type : "";
	err = dwarf_types__find_norm(dt, names, n, dies, found);
	if (err < 0) {
		ret = err;
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++) {
		struct type_layout_fact *f = &out[i];
		Dwarf_Die type;
		uint64_t off;
		bool have_type = true;

		if (!found[i])
			continue;
		f->type_found = true;
		f->size = dwt_byte_size(&dies[i]);
		if (!q[i].member) {
			ret++;
			continue;
		}
		if (dwt_member(&dies[i], q[i].member, NULL, &off, &type) == 0) {
			/* a direct member */
		} else if (dwt_member(&dies[i], q[i].member, NULL, &off, NULL) == 0) {
			have_type = false;   /* its type does not resolve */
		} else if (!q[i].deep || dwt_member_deep(&dies[i], q[i].member, &off, &type)) {
			continue;
		}
		f->member_found = true;
		f->offset = off;
		if (have_type) {
			f->member_size = dwt_byte_size(&type);
			err = member_type_name(dt, &type, f->member_type, sizeof(f->member_type));
			if (err) {
				ret = err;
				goto cleanup;
			}
		}
		ret++;
	}
cleanup:
	free(names);
	free(dies);
	free(found);
	return ret;
}
