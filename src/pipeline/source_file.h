/* A source (pipeline/source.h) on a file named by the user: an asyncscope
 * trace (trace/reader.h) or a CAT / uftrace dump text (cat/reader.h), told
 * apart by content as docs/cat-format.md says, never by name. The file may
 * be a pipe (`report /dev/stdin < trace`): a trace is read as it streams, a
 * CAT text is copied to a temporary file first (its reader merges threads
 * by seeking).
 *
 * Owned by the pipeline; the only code that knows both file formats. Never
 * prints. */
#ifndef AS_PIPELINE_SOURCE_FILE_H
#define AS_PIPELINE_SOURCE_FILE_H

#include <stddef.h>

#include "pipeline/source.h"

/* Opens path into *src. Returns 0, or a negative errno (also in errno) with
 * a one-line lowercase message in err (when errlen > 0) that names the file,
 * the problem and the fix: cannot open (open's errno), cannot read (-EIO),
 * neither a trace nor a CAT / uftrace text (-EINVAL), a trace's version
 * (-EPROTONOSUPPORT), a corrupt trace header or CAT text (-EBADMSG; for
 * CAT, the line), -ENOMEM. *src is zeroed on failure. Free with
 * as_source__free(src); src->name is path (a copy, until then).
 *
 * The source: meta never NULL; stack() the trace's stacks (a CAT text has
 * none); offset() the bytes read so far and size() the file's size (0 for
 * a pipe), for progress; next(), end() and error() as source.h says, with
 * the trace reader's and the CAT reader's own messages. */
int source_open_file(struct as_source *src, const char *path, char *err, size_t errlen);

#endif
