/* The CAT reader's shared state helpers (cat/reader_state.h), used by the
 * reader (cat/reader.c) and its header lines (cat/header.c): the one-line
 * error, growing an array, a new probe. Kept apart so that neither of those
 * two files calls into the other's helpers. Never prints. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cat/reader_state.h"

int cat_reader_fail(struct cat_reader *r, int err, uint64_t line, const char *fmt, ...)
{
	char what[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (err == -ENOMEM)
		snprintf(r->errmsg, sizeof(r->errmsg), "cannot read %s: out of memory", r->path);
	else if (err == -EIO)
		snprintf(r->errmsg, sizeof(r->errmsg), "cannot read %s: input/output error", r->path);
	else if (line)
		snprintf(r->errmsg, sizeof(r->errmsg), "%s: line %" PRIu64 ": %s", r->path, line, what);
	else
		snprintf(r->errmsg, sizeof(r->errmsg), "%s: %s", r->path, what);
	return err;
}

int cat_grow(void **p, uint32_t *cap, uint32_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	uint32_t c = *cap ? *cap : 8;
	while (c < need) {
		if (c > UINT32_MAX / 2)
			return -ENOMEM;
		c *= 2;
	}
	void *q = realloc(*p, (size_t)c * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

struct as_probe *cat_reader_new_probe(struct cat_reader *r)
{
	if (r->meta.n_probes >= 65536 ||
	    cat_grow((void **)&r->meta.probes, &r->cap_probes, r->meta.n_probes + 1,
		     sizeof(*r->meta.probes)))
		return NULL;
	struct as_probe *p = &r->meta.probes[r->meta.n_probes++];
	memset(p, 0, sizeof(*p));
	return p;
}

/* The probe of a function line: its index, its role (via *role); UINT32_MAX
 * with *role 0 for a function that stands for nothing. */
