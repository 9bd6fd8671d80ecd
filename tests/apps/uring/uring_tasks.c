/* io_uring reads inside tasks, for asyncscope's tests: a C stand-in for an
 * async runtime (as tests/apps/usdt/usdt_tasks.c) whose poll function has
 * the name of Tokio's, tokio::runtime::task::raw::poll, so that asyncscope
 * tracks which "task" (the header pointer in rdi) each thread polls. Task k
 * (0-based, N tasks) submits k + 1 reads of 512 bytes of /proc/self/exe
 * through one io_uring, one at a time, each waited for inside its poll; one
 * more read is submitted and completed outside any poll. Raw system calls
 * (io_uring_setup, io_uring_enter), no liburing. Prints each task's
 * address and reads, then the total.
 *
 * usage: uring_tasks [N] (1..8, default 4) */
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

struct fake_task {
	unsigned long words[32];   /* zeroed: no task id behind a vtable */
};

static struct fake_task tasks[8];

static struct {
	int fd, file;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
	char buf[512];
} ring;

static int ring_init(void)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	ring.fd = (int)syscall(__NR_io_uring_setup, 8, &p);
	if (ring.fd < 0)
		return -1;
	size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	size_t cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	char *sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring.fd,
			IORING_OFF_SQ_RING);
	char *cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring.fd,
			IORING_OFF_CQ_RING);
	ring.sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_POPULATE, ring.fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || ring.sqes == MAP_FAILED)
		return -1;
	ring.sq_tail = (unsigned *)(sq + p.sq_off.tail);
	ring.sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	ring.sq_array = (unsigned *)(sq + p.sq_off.array);
	ring.cq_head = (unsigned *)(cq + p.cq_off.head);
	ring.cq_tail = (unsigned *)(cq + p.cq_off.tail);
	ring.cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
	ring.cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	ring.file = open("/proc/self/exe", O_RDONLY);
	return ring.file < 0 ? -1 : 0;
}

/* One read, submitted and waited for: 0 or -1. */
static int ring_read(uint64_t off)
{
	unsigned tail = *ring.sq_tail, idx = tail & *ring.sq_mask;
	struct io_uring_sqe *sqe = &ring.sqes[idx];

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_READ;
	sqe->fd = ring.file;
	sqe->addr = (uint64_t)(uintptr_t)ring.buf;
	sqe->len = sizeof(ring.buf);
	sqe->off = off;
	sqe->user_data = off + 1;
	ring.sq_array[idx] = idx;
	__atomic_store_n(ring.sq_tail, tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, ring.fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return -1;
	unsigned head = *ring.cq_head;
	if (head == __atomic_load_n(ring.cq_tail, __ATOMIC_ACQUIRE))
		return -1;
	int res = ring.cqes[head & *ring.cq_mask].res;
	__atomic_store_n(ring.cq_head, head + 1, __ATOMIC_RELEASE);
	return res == (int)sizeof(ring.buf) ? 0 : -1;
}

void fake_poll(struct fake_task *t, long reads) __asm__("_ZN5tokio7runtime4task3raw4poll17h0123456789abcdefE");

__attribute__((noinline)) void fake_poll(struct fake_task *t, long reads)
{
	for (long i = 0; i < reads; i++)
		if (ring_read((uint64_t)i * 512))
			t->words[0]++;   /* counts failures */
	__asm__ volatile("" : : "r"(t) : "memory");
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4, total = 1;

	if (n < 1 || n > 8)
		n = 4;
	if (ring_init()) {
		perror("io_uring");
		return 1;
	}
	for (int k = 0; k < n; k++) {
		fake_poll(&tasks[k], k + 1);
		total += k + 1;
	}
	if (ring_read(0)) {
		fprintf(stderr, "read outside polls failed\n");
		return 1;
	}
	for (int k = 0; k < n; k++) {
		if (tasks[k].words[0]) {
			fprintf(stderr, "task %d: %lu reads failed\n", k, tasks[k].words[0]);
			return 1;
		}
		printf("task %p reads %d\n", (void *)&tasks[k], k + 1);
	}
	printf("total %d\n", total);
	return 0;
}
