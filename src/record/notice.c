/* Notices: one formatted line for the caller's callback (notice.h). */
#include "record/notice.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void rec_notify(const struct recorder_opts *o, enum rec_notice_level level, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;
	int n;

	if (!o || !o->notice)
		return;
	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);   /* paths may be long: no fixed buffer */
	va_end(ap);
	if (n < 0)
		return;
	o->notice(o->notice_ctx, level, msg);
	free(msg);
}
