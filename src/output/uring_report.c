/* Text form of the io_uring analysis. */
#include "output/uring_report.h"

#include <errno.h>
#include <inttypes.h>

#include "output/view.h"
#include "util/task_id.h"

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

/* Sample:
 * io_uring requests (record --uring): 11 submitted, 11 completed, 0 failed
 *   submitted completed failed     p50 ms     p99 ms     max ms  where
 *           4         4      0      0.003      0.004      0.004  0x5633e0f765e0 ?  (no id: the address)
 *           2         2      0      0.002      0.003      0.003  #3 app::serve
 *           1         1      0      0.002      0.002      0.002  outside-polls
 */
int uring_report_text(FILE *out, struct uring *u, const struct text_view *v)
{
	char name[1024];
	size_t n, shown;
	const struct uring_task *t = uring__tasks(u, &n);
	const struct uring_summary *s = uring__summary(u);

	if (!s)
		return -EIO;
	fprintf(out, "io_uring requests (record --uring): %" PRIu64 " submitted, %" PRIu64
		" completed, %" PRIu64 " failed\n", s->submitted, s->completed, s->errors);
	if (!n) {
		fprintf(out, "  none: record with --uring to follow the target's io_uring requests\n");
		return ferror(out) ? -EIO : 0;
	}
	fprintf(out, "  %9s %9s %6s %10s %10s %10s  %s\n", "submitted", "completed", "failed",
		"p50 ms", "p99 ms", "max ms", "where");
	shown = text_rows(v ? v : &text_view_default, n);
	for (size_t i = 0; i < shown; i++) {
		char id[TASK_ID_MAX];

		fprintf(out, "  %9" PRIu64 " %9" PRIu64 " %6" PRIu64 " %10.3f %10.3f %10.3f  ",
			t[i].submitted, t[i].completed, t[i].errors, ms(t[i].p50_ns), ms(t[i].p99_ns),
			ms(t[i].max_ns));
		if (t[i].task || t[i].tokio_id) /* task 0: outside any poll */
			fprintf(out, "%s ", task_id_format(id, sizeof(id), t[i].tokio_id, t[i].seq, t[i].task));
		fprintf(out, "%s\n", t[i].task || t[i].tokio_id ? text_name(v, name, sizeof(name),
									     t[i].name, 0) : t[i].name);
	}
	text_more(out, v, shown, n, "rows", "  ", NULL);
	return ferror(out) ? -EIO : 0;
}
