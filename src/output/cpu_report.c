/* Text and folded forms of the CPU samples analysis. */
#include "output/cpu_report.h"
#include "output/folded.h"

#include <errno.h>
#include <inttypes.h>

#include "output/view.h"
#include "util/task_id.h"

/* Sample:
 * CPU samples (record --sample): 1910 samples, 1876 in polls of 2 tasks
 *   samples   share  where
 *      1402   73.4%  #1 cpu_split::heavy
 *       474   24.8%  #2 cpu_split::light
 *        30    1.6%  scheduler
 *         4    0.2%  outside-runtime
 */
int cpu_report_text(FILE *out, struct cpu_samples *c, const struct text_view *v)
{
	const char *bold = text_sgr(v, TS_BOLD), *rs = text_sgr(v, TS_RESET);
	char name[1024];
	size_t n, shown;
	const struct cpu_row *r = cpu_samples__rows(c, &n);
	const struct cpu_summary *s = cpu_samples__summary(c);

	if (!s || (!r && s->samples))
		return -ENOMEM;
	if (s->profile)
		/* CPU samples (profile): 405 samples, 398 in 4 tasks */
		fprintf(out, "%sCPU samples%s (profile): %" PRIu64 " samples, %" PRIu64 " in %" PRIu64
			" task%s\n", bold, rs, s->samples, s->in_tasks, s->tasks, s->tasks == 1 ? "" : "s");
	else
		fprintf(out, "%sCPU samples%s (record --sample): %" PRIu64 " samples, %" PRIu64
			" in polls of %" PRIu64 " task%s\n", bold, rs, s->samples, s->in_tasks, s->tasks,
			s->tasks == 1 ? "" : "s");
	if (!s->samples) {
		fprintf(out, s->profile ? "  none: the target did not run on a CPU while it was "
			"profiled\n" : "  none: record with --sample HZ to see where the CPU goes\n");
		return ferror(out) ? -EIO : 0;
	}
	fprintf(out, "  samples   share  where\n");
	shown = text_rows(v ? v : &text_view_default, n);
	for (size_t i = 0; i < shown; i++) {
		char id[TASK_ID_MAX];

		fprintf(out, "  %7" PRIu64 "  %5.1f%%  ", r[i].samples,
			100.0 * (double)r[i].samples / (double)s->samples);
		if (r[i].kind == CPU_ROW_TASK)
			fprintf(out, "%s ", task_id_format(id, sizeof(id), r[i].tokio_id, r[i].seq, r[i].task));
		fprintf(out, "%s\n", r[i].kind == CPU_ROW_TASK ? text_name(v, name, sizeof(name),
									  r[i].name, 0) : r[i].name);
	}
	text_more(out, v, shown, n, "rows", "  ", NULL);
	return ferror(out) ? -EIO : 0;
}

int cpu_report_folded(FILE *out, struct cpu_samples *c)
{
	size_t n;
	const struct cpu_folded *l = cpu_samples__folded(c, &n);

	if (!l && n)
		return -ENOMEM;
	fprintf(out, "# asyncscope cpu: CPU samples by task and stack\n");
	for (size_t i = 0; i < n; i++)
		folded_put(out, l[i].stack, l[i].own, l[i].kernel, true, l[i].count);
	return ferror(out) ? -EIO : 0;
}
