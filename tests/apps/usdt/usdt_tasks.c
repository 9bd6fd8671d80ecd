/* USDT probes inside tasks, for asyncscope's tests: a C stand-in for an
 * async runtime whose poll function carries the (legacy-mangled) name of
 * Tokio's, tokio::runtime::task::raw::poll, so that asyncscope plans its
 * poll probe and tracks which "task" (the header pointer in rdi) each
 * thread is polling. Task k (0-based, N tasks) is polled once and fires
 * asyncscope_test:in_task k + 1 times inside that poll; one more hit comes
 * from outside any poll, with argument -1. Not an async program: only the
 * poll probe of the Tokio profile is found.
 *
 * usage: usdt_tasks [N] (1..8, default 8) */
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>

/* Zeroed: asyncscope's task id read (through a vtable pointer) finds none. */
struct fake_task {
	unsigned long words[32];
};

static struct fake_task tasks[8];

void fake_poll(struct fake_task *t, long hits) __asm__("_ZN5tokio7runtime4task3raw4poll17h0123456789abcdefE");

__attribute__((noinline)) void fake_poll(struct fake_task *t, long hits)
{
	for (long i = 0; i < hits; i++)
		DTRACE_PROBE1(asyncscope_test, in_task, i);
	__asm__ volatile("" : : "r"(t) : "memory");
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 8;

	if (n < 1 || n > 8)
		n = 8;
	for (int k = 0; k < n; k++)
		fake_poll(&tasks[k], k + 1);
	DTRACE_PROBE1(asyncscope_test, in_task, -1);
	printf("polled %d tasks\n", n);
	for (int k = 0; k < n; k++)
		printf("task %p hits %d\n", (void *)&tasks[k], k + 1);
	return 0;
}
