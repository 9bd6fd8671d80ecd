/* The culprit of a blocking interval (culprit.h). */
#include "serve/culprit.h"

#include <stdbool.h>
#include <string.h>

static bool prefixed(const char *s, const char *const *pre)
{
	for (; *pre; pre++)
		if (!strncmp(s, *pre, strlen(*pre)))
			return true;
	return false;
}

/* The scheduler's and the tracing's frames, above the function that
 * blocked. */
static bool sched_frame(const char *s)
{
	static const char *const pre[] = {
		"__schedule", "schedule", "preempt_schedule", "__cond_resched", "_cond_resched",
		"finish_task_switch", "__traceiter_", "__bpf_", "bpf_", "io_schedule",
		"__switch_to", "context_switch", "_einittext", NULL,
	};
	return !s || !*s || prefixed(s, pre);
}

/* The runtime, the standard library, or a C function (no "::"): not the
 * program's own code. */
static bool library_frame(const char *s)
{
	static const char *const pre[] = {
		"std::", "core::", "alloc::", "tokio::", "async_task::", "async_executor::",
		"async_std::", "smol::", "futures::", "futures_util::", "futures_core::",
		"async_io::", "parking::", "polling::", "F as core::", NULL,
	};
	if (!s)
		return true;
	if (*s == '<')
		s++;
	return !strstr(s, "::") || prefixed(s, pre);
}

void culprit_of(const struct as_stack *st, const char **kernel, const char **user,
		const char **file, uint32_t *line)
{
	uint32_t nk = st ? st->n_kernel : 0, nu = st ? st->n_user : 0;

	*kernel = *user = "?";
	*file = NULL;
	*line = 0;
	for (uint32_t i = 0; i < nk; i++)
		if (!sched_frame(st->frames[i].sym)) {
			*kernel = st->frames[i].sym;
			break;
		}
	for (uint32_t i = nk; i < nk + nu; i++)
		if (!library_frame(st->frames[i].sym)) {
			*user = st->frames[i].sym;
			*file = st->frames[i].file;
			*line = *file ? st->frames[i].line : 0;
			break;
		}
}
