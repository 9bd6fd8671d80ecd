/* stamp_version(): rewrites a trace file as another format version (the
 * writer's trace_writer__new_version()), events, stacks and trailer kept, so
 * that tests check what an older version's reader accepts. Header only;
 * include after harness.h. */
#ifndef AS_TEST_STAMP_H
#define AS_TEST_STAMP_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "trace/reader.h"
#include "trace/writer.h"

static void stamp_version(const char *path, uint8_t version)
{
	char err[512], tmp[4200];
	struct trace_reader *r = trace_reader__open(path, err, sizeof(err));
	struct trace_writer *w = NULL;
	uint32_t *ids = NULL, n_ids = 0;
	struct as_event ev;
	int rc;

	if (!r) {
		fprintf(stderr, "stamp_version: %s\n", err);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.stamp", path);
	w = trace_writer__new_version(tmp, trace_reader__meta(r), version);
	if (!w)
		goto out;
	while ((rc = trace_reader__next(r, &ev)) == 1) {
		if (ev.stack) {
			if (ev.stack > n_ids) {
				uint32_t *n = realloc(ids, ev.stack * sizeof(*ids));
				if (!n)
					goto out;
				for (uint32_t i = n_ids; i < ev.stack; i++)
					n[i] = 0;
				ids = n;
				n_ids = ev.stack;
			}
			if (!ids[ev.stack - 1] &&
			    trace_writer__stack(w, trace_reader__stack(r, ev.stack), &ids[ev.stack - 1]))
				goto out;
			ev.stack = ids[ev.stack - 1];
		}
		if (trace_writer__write(w, &ev))
			goto out;
	}
	if (rc == 0)
		trace_writer__finish(w, trace_reader__end(r));
	trace_writer__free(w);
	w = NULL;
	rename(tmp, path);
out:
	if (w) {
		trace_writer__free(w);
		unlink(tmp);
	}
	free(ids);
	trace_reader__free(r);
}

#endif
