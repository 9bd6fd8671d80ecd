/* pipe_from(): a pipe fed by a child process, for tests that read a trace
 * or CAT text from a pipe (a source with no size and no seeking). Header
 * only; include after harness.h. */
#ifndef AS_TEST_PIPE_FROM_H
#define AS_TEST_PIPE_FROM_H

#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>

/* Writes len bytes of buf into a pipe from a child process; returns the
 * read end's /dev/fd path in path (the caller closes *fd and waits *pid). */
static void pipe_from(const void *buf, size_t len, char *path, size_t pathlen, int *fd, pid_t *pid)
{
	int p[2];

	*fd = -1;
	*pid = -1;
	if (pipe(p)) {
		CHECK(!"pipe");
		return;
	}
	*pid = fork();
	if (*pid == 0) {
		close(p[0]);
		size_t off = 0;
		while (off < len) {
			ssize_t w = write(p[1], (const char *)buf + off, len - off);
			if (w <= 0)
				_exit(1);
			off += (size_t)w;
		}
		_exit(0);
	}
	close(p[1]);
	*fd = p[0];
	snprintf(path, pathlen, "/dev/fd/%d", p[0]);
}

#endif
