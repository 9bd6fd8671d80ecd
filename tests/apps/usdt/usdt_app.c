/* USDT test program for asyncscope (no async runtime): fires
 * asyncscope_test:tick exactly N times with the loop index as its argument
 * (an unguarded probe, always a nop at its site), then the semaphore-guarded
 * asyncscope_test:guarded N times, but only while its semaphore is set
 * (a tracer attached to it increments the semaphore). Prints whether the
 * semaphore was set and how many guarded probes fired.
 *
 * usage: usdt_app [N] (default 1000)
 *
 * Semaphores: <sys/sdt.h> (systemtap-sdt-dev) puts a semaphore address in
 * the notes of every probe of a translation unit compiled with
 * _SDT_HAS_SEMAPHORES, naming the variable PROVIDER_NAME_semaphore (what
 * `dtrace -G` would generate): the guarded probe lives in usdt_guarded.c,
 * which defines its semaphore, so that the tick probe here has none. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>

long guarded_run(long n);
int guarded_enabled(void);

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;

	for (long i = 0; i < n; i++)
		DTRACE_PROBE1(asyncscope_test, tick, i);
	int set = guarded_enabled();
	long fired = guarded_run(n);
	printf("tick fired %ld\nsemaphore %s\nguarded fired %ld\n", n, set ? "set" : "clear", fired);
	return 0;
}
