/* /proc/kallsyms parsing: "ADDR TYPE NAME [MODULE]" lines; text symbols
 * (t, T, w, W) only, sorted by address. Depends on libc only. */
#include "sym/kallsyms.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ksym {
	uint64_t addr;
	char *name;
};

struct kallsyms {
	struct ksym *syms;
	size_t n, cap;
};

static int by_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

struct kallsyms *kallsyms__load(const char *path)
{
	struct kallsyms *k = calloc(1, sizeof(*k));
	FILE *f = NULL;
	char line[512], name[256], type;
	unsigned long long addr;
	int err = ENOMEM;

	if (!k)
		goto fail;
	f = fopen(path ? path : "/proc/kallsyms", "re");
	if (!f) {
		err = errno;
		goto fail;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || !addr)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (k->n == k->cap) {
			size_t cap = k->cap ? k->cap * 2 : 4096;
			struct ksym *s = realloc(k->syms, cap * sizeof(*s));
			if (!s)
				goto fail;
			k->syms = s;
			k->cap = cap;
		}
		k->syms[k->n].addr = addr;
		if (!(k->syms[k->n].name = strdup(name)))
			goto fail;
		k->n++;
	}
	fclose(f);
	f = NULL;
	if (!k->n) {
		err = ENODATA;
		goto fail;
	}
	qsort(k->syms, k->n, sizeof(*k->syms), by_addr);
	return k;
fail:
	if (f)
		fclose(f);
	kallsyms__free(k);
	errno = err;
	return NULL;
}

const char *kallsyms__lookup(const struct kallsyms *k, uint64_t addr)
{
	size_t lo = 0, hi = k ? k->n : 0;

	/* the last symbol whose address is <= addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? k->syms[lo - 1].name : NULL;
}

void kallsyms__free(struct kallsyms *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->n; i++)
		free(k->syms[i].name);
	free(k->syms);
	free(k);
}
