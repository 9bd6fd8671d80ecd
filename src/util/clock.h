/* A clock read as nanoseconds (CLOCK_MONOTONIC is the clock of the BPF
 * events' timestamps, bpf_ktime_get_ns). Header only, no state. */
#ifndef AS_UTIL_CLOCK_H
#define AS_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
