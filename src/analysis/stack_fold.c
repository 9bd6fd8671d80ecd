/* Folding a stack definition into flame-graph frames, shared by the
 * blocking (off-CPU) and CPU-sample analyses. */
#include "analysis/stack_fold.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *stack_fold(const struct as_stack *st, uint32_t skip_kernel)
{
	uint32_t nk = st ? st->n_kernel : 0, nu = st ? st->n_user : 0;
	size_t len = 1;

	if (skip_kernel > nk)
		skip_kernel = nk;
	for (uint32_t i = 0; i < nk + nu; i++)
		len += strlen(st->frames[i].sym) + 20;
	char *folded = malloc(len), *p = folded;
	if (!folded)
		return NULL;
	*p = '\0';
	for (uint32_t k = 0; k < nu + nk - skip_kernel; k++) {
		uint32_t i = k < nu ? nk + nu - 1 - k : nk - 1 - (k - nu);
		const char *s = st->frames[i].sym;
		if (p != folded)
			*p++ = ';';
		if (*s)
			p += sprintf(p, "%s", s);
		else
			p += sprintf(p, "0x%llx", (unsigned long long)st->frames[i].addr);
	}
	for (char *c = folded; *c; c++)
		if (*c == '\n')
			*c = ' ';
	return folded;
}
