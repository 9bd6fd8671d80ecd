/* source_open_file(): a trace or a CAT / uftrace text behind one source
 * (see pipeline/source_file.h). The first bytes decide: the trace magic (or
 * a prefix of it: a cut trace) goes to the trace reader, anything else to
 * the CAT reader, which says whether it is such a text. */
#include "pipeline/source_file.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cat/reader.h"
#include "trace/reader.h"

struct file_source {
	struct trace_reader *tr;  /* one of the two */
	struct cat_reader *cr;
	uint64_t size;            /* of a regular file, else 0 */
	char name[];              /* the path */
};

/* ---- an asyncscope trace ---- */

static int tr_next(void *impl, struct as_event *ev)
{
	return trace_reader__next(((struct file_source *)impl)->tr, ev);
}

static int tr_next_batch(void *impl, struct as_event *ev, size_t max)
{
	return trace_reader__next_batch(((struct file_source *)impl)->tr, ev, max);
}

static const struct as_trace_meta *tr_meta(void *impl)
{
	return trace_reader__meta(((struct file_source *)impl)->tr);
}

static const struct as_stack *tr_stack(void *impl, uint32_t id)
{
	return trace_reader__stack(((struct file_source *)impl)->tr, id);
}

static const struct as_trace_end *tr_end(void *impl)
{
	return trace_reader__end(((struct file_source *)impl)->tr);
}

static int tr_counts(void *impl, struct as_trace_end *out)
{
	return trace_reader__counts(((struct file_source *)impl)->tr, out);
}

static const char *tr_error(void *impl)
{
	return trace_reader__error(((struct file_source *)impl)->tr);
}

static uint64_t tr_offset(void *impl)
{
	return trace_reader__offset(((struct file_source *)impl)->tr);
}

/* ---- a CAT / uftrace dump text ---- */

static int cat_next(void *impl, struct as_event *ev)
{
	return cat_reader__next(((struct file_source *)impl)->cr, ev);
}

static const struct as_trace_meta *cat_meta(void *impl)
{
	return cat_reader__meta(((struct file_source *)impl)->cr);
}

static const struct as_trace_end *cat_end(void *impl)
{
	return cat_reader__end(((struct file_source *)impl)->cr);
}

static int cat_counts(void *impl, struct as_trace_end *out)
{
	return cat_reader__counts(((struct file_source *)impl)->cr, out);
}

static const char *cat_error(void *impl)
{
	return cat_reader__error(((struct file_source *)impl)->cr);
}

static uint64_t cat_offset(void *impl)
{
	return cat_reader__offset(((struct file_source *)impl)->cr);
}

/* ---- both ---- */

static uint64_t file_size(void *impl)
{
	return ((struct file_source *)impl)->size;
}

static void file_free(void *impl)
{
	struct file_source *fs = impl;

	if (!fs)
		return;
	trace_reader__free(fs->tr);
	cat_reader__free(fs->cr);
	free(fs);
}

static const struct as_source_ops trace_ops = {
	.next = tr_next, .next_batch = tr_next_batch, .meta = tr_meta, .stack = tr_stack, .end = tr_end, .counts = tr_counts,
	.error = tr_error,
	.offset = tr_offset, .size = file_size, .free = file_free,
};

static const struct as_source_ops cat_ops = {
	.next = cat_next, .meta = cat_meta, .stack = NULL, .end = cat_end, .counts = cat_counts,
	.error = cat_error,
	.offset = cat_offset, .size = file_size, .free = file_free,
};

static void set_msg(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_msg(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int source_open_file(struct as_source *src, const char *path, char *err, size_t errlen)
{
	unsigned char head[TRACE_READER_HEAD_LEN];
	size_t len = strlen(path), n;
	struct file_source *fs;
	struct stat sb;
	FILE *f;
	int eno, rc;

	memset(src, 0, sizeof(*src));
	set_msg(err, errlen, "%s", "");
	fs = calloc(1, sizeof(*fs) + len + 1);
	if (!fs) {
		set_msg(err, errlen, "cannot read %s: out of memory", path);
		errno = ENOMEM;
		return -ENOMEM;
	}
	memcpy(fs->name, path, len + 1);
	f = fopen(path, "rbe");
	if (!f) {
		eno = errno;
		set_msg(err, errlen, "cannot open %s: %s: check the path and that you may read it",
			path, strerror(eno));
		goto fail;
	}
	if (!fstat(fileno(f), &sb) && S_ISDIR(sb.st_mode)) {
		fclose(f);
		eno = EISDIR;
		set_msg(err, errlen, "%s is a directory: give a trace file (asyncscope record -o FILE)",
			path);
		goto fail;
	}
	if (!fstat(fileno(f), &sb) && S_ISREG(sb.st_mode))
		fs->size = (uint64_t)sb.st_size;
	n = fread(head, 1, sizeof(head), f);
	if (n < sizeof(head) && ferror(f)) {
		fclose(f);
		eno = EIO;
		set_msg(err, errlen, "cannot read %s: input/output error", path);
		goto fail;
	}
	if (trace_reader__is_trace(head, n)) {
		fs->tr = trace_reader__fopen(f, head, n, path, err, errlen);
		if (!fs->tr) {
			eno = errno;
			goto fail;
		}
		*src = (struct as_source){ .ops = &trace_ops, .impl = fs, .name = fs->name };
		return 0;
	}
	/* CAT's dumped_data.txt or any uftrace dump: read as text */
	rc = cat_reader__open(f, head, n, path, &fs->cr, err, errlen);
	if (rc == 1) {
		*src = (struct as_source){ .ops = &cat_ops, .impl = fs, .name = fs->name };
		return 0;
	}
	if (rc < 0) {
		eno = -rc;   /* f closed by the CAT reader */
		goto fail;
	}
	fclose(f);
	eno = EINVAL;
	set_msg(err, errlen, "%s is not an asyncscope trace (bad magic) nor a CAT / uftrace "
		"dump text: give a file written by asyncscope record or uftrace dump", path);
fail:
	free(fs);
	errno = eno;
	return -eno;
}
