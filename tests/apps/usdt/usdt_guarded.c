/* The semaphore-guarded probe of usdt_app: compiled with semaphores, so
 * its note carries the address of asyncscope_test_guarded_semaphore, which
 * a tracer's kernel uprobe increments while it is attached. */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

__extension__ unsigned short asyncscope_test_guarded_semaphore
	__attribute__((unused)) __attribute__((section(".probes")));

int guarded_enabled(void)
{
	return *(volatile unsigned short *)&asyncscope_test_guarded_semaphore != 0;
}

/* Fires the probe with argument i for each i < n while the semaphore is
 * set; returns how many fired. */
long guarded_run(long n)
{
	long fired = 0;

	for (long i = 0; i < n; i++) {
		if (guarded_enabled()) {
			STAP_PROBE1(asyncscope_test, guarded, i);
			fired++;
		}
	}
	return fired;
}
