/* task_id: formats a task's identity (rule in task_id.h). Depends on
 * nothing but libc. */
#include "util/task_id.h"

#include <inttypes.h>
#include <stdio.h>

char *task_id_format(char *buf, size_t n, uint64_t id, uint64_t seq, uint64_t header)
{
	if (!buf || !n)
		return buf;
	if (id)
		snprintf(buf, n, "#%" PRIu64, id);
	else if (seq)
		snprintf(buf, n, "~%" PRIu64, seq);
	else if (header)
		snprintf(buf, n, "0x%" PRIx64, header);
	else
		snprintf(buf, n, "?");
	return buf;
}
