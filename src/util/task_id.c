/* task_id: formats a task's identity (rule in task_id.h). Depends on
 * nothing but libc. */
#include "util/task_id.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* prefix then v in base 10 or 16 into buf (n > 0), cut as snprintf() cuts. */
static char *put(char *buf, size_t n, const char *prefix, uint64_t v, unsigned base)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[24], *p = tmp + sizeof(tmp);
	size_t plen = strlen(prefix), len;

	if (base)   /* 0: the prefix alone */
		do
			*--p = digits[v % base];
		while (v /= base);
	len = (size_t)(tmp + sizeof(tmp) - p);
	if (plen >= n) {
		memcpy(buf, prefix, n - 1);
		buf[n - 1] = '\0';
		return buf;
	}
	memcpy(buf, prefix, plen);
	if (len > n - 1 - plen)
		len = n - 1 - plen;
	memcpy(buf + plen, p, len);
	buf[plen + len] = '\0';
	return buf;
}

/* Without printf: every output names tasks, the JSON report both ends of
 * every wake edge. */
char *task_id_format(char *buf, size_t n, uint64_t id, uint64_t seq, uint64_t header)
{
	if (!buf || !n)
		return buf;
	if (id)
		return put(buf, n, "#", id, 10);
	if (seq)
		return put(buf, n, "~", seq, 10);
	if (header)
		return put(buf, n, "0x", header, 16);
	return put(buf, n, "?", 0, 0);
}
