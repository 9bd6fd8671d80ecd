/* Outputs that never destroy a file (see cli/opts.h): a temporary file
 * beside the target, renamed over it on success; devices and FIFOs written
 * in place; a directory or the input refused; uncommitted temporary files
 * removed at exit. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cli/opts.h"

#define MAX_OUTPUTS 8

static struct pending {
	FILE *f;                  /* the stream written (stdout when redirected) */
	char *tmp;                /* the temporary file, NULL when written in place */
	char *final;              /* the file it becomes */
} pending[MAX_OUTPUTS];
static bool cleanup_registered;
static bool have_input;
static dev_t input_dev;
static ino_t input_ino;

static void remove_uncommitted(void)
{
	for (size_t i = 0; i < MAX_OUTPUTS; i++)
		if (pending[i].tmp)
			unlink(pending[i].tmp);
}

void cli_note_input(const char *path)
{
	struct stat sb;

	if (path && strcmp(path, "-") && !stat(path, &sb) && S_ISREG(sb.st_mode)) {
		have_input = true;
		input_dev = sb.st_dev;
		input_ino = sb.st_ino;
	}
}

static struct pending *slot_for(FILE *f)
{
	for (size_t i = 0; i < MAX_OUTPUTS; i++)
		if (pending[i].f == f)
			return &pending[i];
	return NULL;
}

/* Opens path as described in cli/opts.h. */
static FILE *open_output(const char *path)
{
	struct pending *p = slot_for(NULL);
	char *final = NULL, *tmp = NULL;
	struct stat sb;
	mode_t mode = 0666;
	bool replaces = false;    /* an existing regular file: keep its mode */
	FILE *f = NULL;
	int fd = -1;

	if (!p) {
		cli_error("cannot create %s: too many outputs", path);
		return NULL;
	}
	if (!stat(path, &sb)) {
		if (S_ISDIR(sb.st_mode)) {
			cli_error("cannot create %s: it is a directory: give a file name", path);
			return NULL;
		}
		if (have_input && sb.st_dev == input_dev && sb.st_ino == input_ino) {
			cli_error("cannot write %s: it is the input file: give another output name",
				  path);
			return NULL;
		}
		if (!S_ISREG(sb.st_mode)) {
			/* a device, FIFO or socket: written in place, never replaced */
			f = fopen(path, "we");
			if (!f)
				cli_error("cannot write %s: %s", path, strerror(errno));
			else
				*p = (struct pending){ .f = f };
			return f;
		}
		mode = sb.st_mode & 07777;
		replaces = true;
		final = realpath(path, NULL);   /* through a symlink: the file it names */
	} else if (errno != ENOENT) {
		cli_error("cannot create %s: %s", path, strerror(errno));
		return NULL;
	}
	if (!final)
		final = strdup(path);
	if (!final || asprintf(&tmp, "%s.asyncscope-XXXXXX", final) < 0) {
		tmp = NULL;
		cli_error("cannot create %s: out of memory", path);
		goto fail;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		cli_error("cannot create %s: %s", path, strerror(errno));
		free(tmp);
		tmp = NULL;
		goto fail;
	}
	if (!cleanup_registered) {
		atexit(remove_uncommitted);
		cleanup_registered = true;
	}
	/* the mode the replaced file had, or a new file's (umask applied) */
	if (replaces) {
		fchmod(fd, mode);
	} else {
		mode_t um = umask(0);

		umask(um);
		fchmod(fd, mode & ~um);
	}
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	f = fdopen(fd, "w");
	if (!f) {
		cli_error("cannot create %s: %s", path, strerror(errno));
		close(fd);
		unlink(tmp);
		goto fail;
	}
	*p = (struct pending){ .f = f, .tmp = tmp, .final = final };
	return f;
fail:
	free(tmp);
	free(final);
	return NULL;
}

FILE *cli_open_output(const char *path)
{
	return strcmp(path, "-") ? open_output(path) : stdout;
}

FILE *cli_open_output_fd(const char *path, int *fd)
{
	FILE *f = cli_open_output(path);

	*fd = -1;
	if (!f)
		return NULL;
	*fd = fcntl(fileno(f), F_DUPFD_CLOEXEC, 3);
	if (*fd < 0) {
		cli_error("cannot create %s: %s", path, strerror(errno));
		cli_close_output(f);
		return NULL;
	}
	return f;
}

int cli_commit_output(FILE *out)
{
	struct pending *p = slot_for(out);

	if (!p || !p->tmp)
		return 0;
	if (rename(p->tmp, p->final))
		return -errno;
	free(p->tmp);
	p->tmp = NULL;   /* in place: neither renamed again nor removed at exit */
	return 0;
}

void cli_discard_output(FILE *out)
{
	struct pending *p = slot_for(out);

	if (out && out != stdout)
		fclose(out);
	if (!p)
		return;
	if (p->tmp)
		unlink(p->tmp);
	free(p->tmp);
	free(p->final);
	*p = (struct pending){ 0 };
}

int cli_redirect_stdout(const char *path)
{
	struct pending *p;
	FILE *f;
	int ok;

	if (!strcmp(path, "-"))
		return 0;
	f = open_output(path);
	if (!f)
		return 1;
	p = slot_for(f);
	fflush(stdout);
	ok = dup2(fileno(f), STDOUT_FILENO) >= 0;
	if (!ok)
		cli_error("cannot write %s: %s", path, strerror(errno));
	fclose(f);
	if (p)
		p->f = stdout;   /* committed with cli_close_output(stdout), else removed at exit */
	return ok ? 0 : 1;
}

int cli_write_errno(int err)
{
	struct statvfs v;

	if (err == -EIO)
		for (size_t i = 0; i < MAX_OUTPUTS; i++) {
			FILE *f = pending[i].f;
			if (f && !fstatvfs(fileno(f), &v) && v.f_blocks && !v.f_bavail)
				return -ENOSPC;
		}
	return err;
}

const char *cli_write_error(int err)
{
	err = cli_write_errno(err);
	return strerror(err < 0 ? -err : err);
}

int cli_close_output(FILE *out)
{
	struct pending *p;
	int err = 0;

	if (!out)
		return 0;
	p = slot_for(out);
	if (out == stdout) {
		if (fflush(out))
			err = -errno;
		else if (ferror(out))
			err = -EIO;
		if (!err && p && p->tmp && fsync(STDOUT_FILENO) && errno != EINVAL)
			err = -errno;
	} else {
		/* fflush first: a failed write is retried and names its errno
		 * (ENOSPC, ...), which ferror() alone would not */
		if (fflush(out))
			err = -errno;
		else if (ferror(out))
			err = -EIO;
		if (!err && p && p->tmp && fsync(fileno(out)))
			err = -errno;
		if (fclose(out) && !err)
			err = -errno;
	}
	if (!p)
		return err;
	if (!err && p->tmp && rename(p->tmp, p->final))
		err = -errno;
	if (err && p->tmp)
		unlink(p->tmp);
	free(p->tmp);
	free(p->final);
	*p = (struct pending){ 0 };
	return err;
}
