/* Notices of the recorder's modules: formatted here, handed to the
 * caller's recorder_opts.notice (which renders or drops them). Nothing in
 * src/record prints. Internal to src/record. */
#ifndef AS_RECORD_NOTICE_H
#define AS_RECORD_NOTICE_H

#include "record/recorder.h"

/* Formats one notice and gives it to o->notice; nothing when o or
 * o->notice is NULL. */
void rec_notify(const struct recorder_opts *o, enum rec_notice_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
