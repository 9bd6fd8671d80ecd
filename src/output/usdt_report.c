/* USDT text section. */
#include "output/usdt_report.h"

#include <errno.h>
#include <inttypes.h>

#include "util/task_id.h"

/* Sample:
 * USDT PROBES  1000 hits, 120 inside tasks
 * PROBE                                HITS   IN TASKS  ARG MIN..MAX
 * asyncscope_test:tick                 1000        120  0..999
 * asyncscope_test:guarded                 0          0  -
 *
 * USDT HITS BY TASK  top 20 of 3
 * PROBE                                HITS  TASK
 * asyncscope_test:tick                   80  #3 app::ticker
 */
int usdt_report_text(FILE *out, const struct usdt_counts *c)
{
	size_t np, nt;
	const struct usdt_probe_count *p = usdt_counts__probes(c, &np);
	const struct usdt_task_count *t = usdt_counts__tasks(c, &nt);
	uint64_t in_task = 0;

	if (!np)
		return 0;
	for (size_t i = 0; i < np; i++)
		in_task += p[i].in_task;
	fprintf(out, "\nUSDT PROBES  %" PRIu64 " hits, %" PRIu64 " inside tasks\n",
		usdt_counts__total(c), in_task);
	fprintf(out, "%-34s %6s %10s  %s\n", "PROBE", "HITS", "IN TASKS", "ARG MIN..MAX");
	for (size_t i = 0; i < np; i++) {
		fprintf(out, "%-34s %6" PRIu64 " %10" PRIu64 "  ", p[i].probe, p[i].hits, p[i].in_task);
		if (p[i].hits)
			fprintf(out, "%" PRId64 "..%" PRId64 "\n", p[i].arg_min, p[i].arg_max);
		else
			fprintf(out, "-\n");
	}
	if (nt) {
		size_t shown = nt < USDT_REPORT_TASK_ROWS ? nt : USDT_REPORT_TASK_ROWS;
		fprintf(out, "\nUSDT HITS BY TASK  top %zu of %zu\n", shown, nt);
		fprintf(out, "%-34s %6s  %s\n", "PROBE", "HITS", "TASK");
		for (size_t i = 0; i < shown; i++) {
			char id[TASK_ID_MAX];

			fprintf(out, "%-34s %6" PRIu64 "  %s %s\n", p[t[i].probe].probe, t[i].hits,
				task_id_format(id, sizeof(id), t[i].tokio_id, t[i].seq, t[i].task),
				t[i].name ? t[i].name : "?");
		}
	}
	if (usdt_counts__bad(c))
		fprintf(out, "(%" PRIu64 " USDT events named no USDT probe: ignored)\n",
			usdt_counts__bad(c));
	return ferror(out) ? -EIO : 0;
}
