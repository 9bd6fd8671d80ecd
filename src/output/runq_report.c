/* Text form of the run-queue analysis. */
#include "output/runq_report.h"

#include <errno.h>
#include <inttypes.h>

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

/* Sample:
 * Run-queue delay per worker (record --runq or --offcpu): time runnable before running
 *   thread                         waits     p50 ms     p99 ms     max ms   total ms
 *   15812 tokio-runtime-w             14      0.044      0.086      0.086      0.557
 *   15811 sleeper_in_poll (other)       4      0.014      0.032      0.032      0.077
 */
int runq_report_text(FILE *out, struct runq *q)
{
	size_t n;
	const struct runq_thread *t = runq__threads(q, &n);

	fprintf(out, "Run-queue delay per worker (record --runq or --offcpu): time runnable before running\n");
	if (!n) {
		fprintf(out, "  none: record with --runq (or --offcpu) to see how long threads wait for a CPU\n");
		return ferror(out) ? -EIO : 0;
	}
	fprintf(out, "  %-28s %7s %10s %10s %10s %10s\n", "thread", "waits", "p50 ms", "p99 ms",
		"max ms", "total ms");
	for (size_t i = 0; i < n && i < RUNQ_REPORT_THREADS; i++) {
		char name[64];
		snprintf(name, sizeof(name), "%u %s%s", t[i].tid, t[i].name, t[i].worker ? "" : " (other)");
		fprintf(out, "  %-28s %7" PRIu64 " %10.3f %10.3f %10.3f %10.3f\n", name,
			t[i].count, ms(t[i].p50_ns), ms(t[i].p99_ns), ms(t[i].max_ns), ms(t[i].total_ns));
	}
	if (n > RUNQ_REPORT_THREADS)
		fprintf(out, "  ... %zu more threads\n", n - RUNQ_REPORT_THREADS);
	return ferror(out) ? -EIO : 0;
}
