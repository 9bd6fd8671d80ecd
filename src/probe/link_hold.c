/* Link holders (see link_hold.h): one thread per descriptor, unshared file
 * table, woken by an eventfd to close it. */
#include "probe/link_hold.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct holder {
	pthread_t tid;
	int fd;            /* the link */
	int efd;           /* eventfd: written to close it */
	bool started;      /* the thread runs */
	bool apart;        /* it has its own file table holding fd */
	sem_t ready;       /* posted once apart is known */
};

struct link_hold {
	size_t n;
	struct holder h[LINK_HOLD_MAX];
};

/* Closes every descriptor of the calling thread's (own) table but a and
 * b. */
static void close_others(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a;

	if (lo > 0)
		close_range(0, (unsigned)lo - 1, 0);
	if (hi > lo + 1)
		close_range((unsigned)lo + 1, (unsigned)hi - 1, 0);
	close_range((unsigned)hi + 1, ~0u, 0);
}

static void *hold(void *arg)
{
	struct holder *h = arg;
	uint64_t v;

	/* a private copy of the table: keep the link and the eventfd only */
	if (!unshare(CLONE_FILES)) {
		close_others(h->fd, h->efd);
		h->apart = true;
	}
	sem_post(&h->ready);
	while (read(h->efd, &v, sizeof(v)) < 0 && errno == EINTR)
		;
	close(h->fd);   /* waits for the grace periods */
	if (h->apart)
		close(h->efd);
	return NULL;
}

struct link_hold *link_hold__new(const int *fds, size_t n, size_t *taken)
{
	struct link_hold *lh = calloc(1, sizeof(*lh));

	*taken = 0;
	if (!lh)
		return NULL;
	if (n > LINK_HOLD_MAX)
		n = LINK_HOLD_MAX;
	for (size_t i = 0; i < n; i++) {
		struct holder *h = &lh->h[i];

		h->fd = fds[i];
		h->efd = eventfd(0, EFD_CLOEXEC);
		sem_init(&h->ready, 0, 0);
		if (h->efd >= 0 && !pthread_create(&h->tid, NULL, hold, h)) {
			h->started = true;
			while (sem_wait(&h->ready) && errno == EINTR)
				;
			if (h->apart)
				close(h->fd);   /* the thread's table has it now */
		}
	}
	lh->n = n;
	*taken = n;
	return lh;
}

void link_hold__release(struct link_hold *lh)
{
	uint64_t one = 1;

	if (!lh)
		return;
	/* wake them all first: the closes overlap */
	for (size_t i = 0; i < lh->n; i++) {
		struct holder *h = &lh->h[i];

		if (h->started) {
			if (write(h->efd, &one, sizeof(one)) < 0) {
				/* cannot fail on a fresh eventfd; join below regardless */
			}
		} else {
			close(h->fd);
		}
	}
	for (size_t i = 0; i < lh->n; i++) {
		struct holder *h = &lh->h[i];

		if (h->started)
			pthread_join(h->tid, NULL);
		if (h->efd >= 0)
			close(h->efd);
		sem_destroy(&h->ready);
	}
	free(lh);
}
