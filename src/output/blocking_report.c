/* Text and folded forms of the blocking analysis. */
#include "output/blocking_report.h"

#include <errno.h>
#include <inttypes.h>

#include "output/view.h"
#include "util/fmt.h"
#include "util/task_id.h"

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

/* Sample:
 * Blocking inside polls (off CPU): 503.412 ms in 10 intervals, 1 task
 *   #3 sleeper_in_poll::blocker  off-CPU 503.412 ms  10 intervals  (blocked 501.102 ms, waiting for a CPU 2.310 ms)
 *       503.412 ms   10x  do_nanosleep <- sleeper_in_poll::sleep_blocking::{closure} at src/bin/sleeper_in_poll.rs:12  (called std::thread::sleep)
 *   parked in the runtime (not counted): 11 intervals, 520.100 ms
 */
int blocking_report_text(FILE *out, struct blocking *b, const struct text_view *v)
{
	const struct blocking_summary *s = blocking__summary(b);
	size_t n, shown;
	const struct blocking_task *t = blocking__tasks(b, &n);
	const char *bold = text_sgr(v, TS_BOLD), *r = text_sgr(v, TS_RESET);
	char name[1024];

	if (!s || (!t && s->tasks))
		return -ENOMEM;
	shown = text_rows(v ? v : &text_view_default, n);
	if (s->profile)
		/* Blocking in tasks (off CPU, profile): 503.412 ms in 10 intervals, 1 task */
		fprintf(out, "%sBlocking in tasks%s (off CPU, profile: by each thread's CONTEXT): %.3f ms "
			"in %" PRIu64 " interval%s, %" PRIu64 " task%s\n", bold, r, ms(s->ns), s->count,
			fmt_plural(s->count), s->tasks, fmt_plural(s->tasks));
	else
		fprintf(out, "%sBlocking inside polls%s (off CPU): %.3f ms in %" PRIu64
			" interval%s, %" PRIu64 " task%s\n", bold, r, ms(s->ns), s->count,
			fmt_plural(s->count), s->tasks, fmt_plural(s->tasks));
	for (size_t i = 0; i < shown; i++) {
		char id[TASK_ID_MAX];

		fprintf(out, "  %s %s", task_id_format(id, sizeof(id), t[i].tokio_id, t[i].seq, t[i].task),
			text_name(v, name, sizeof(name), t[i].name, 0));
		fprintf(out, "  off-CPU %.3f ms  %" PRIu64 " interval%s", ms(t[i].ns), t[i].count,
			fmt_plural(t[i].count));
		if (t[i].runnable_ns)
			fprintf(out, "  (blocked %.3f ms, waiting for a CPU %.3f ms)",
				ms(t[i].ns - t[i].runnable_ns), ms(t[i].runnable_ns));
		if (t[i].preempted_ns)
			fprintf(out, "  (preempted %.3f ms)", ms(t[i].preempted_ns));
		fputc('\n', out);
		for (size_t c = 0; c < t[i].n_causes && c < BLOCKING_REPORT_CAUSES; c++) {
			const struct blocking_cause *bc = &t[i].causes[c];
			fprintf(out, "      %10.3f ms %5" PRIu64 "x  %s <- %s", ms(bc->ns), bc->count,
				bc->kernel, text_name(v, name, sizeof(name), bc->user, 0));
			if (bc->file)
				fprintf(out, " at %s:%" PRIu32, bc->file, bc->line);
			if (bc->call)
				fprintf(out, "  (called %s)", text_name(v, name, sizeof(name), bc->call, 0));
			if (bc->futures)
				fprintf(out, "  in futures %s", bc->futures);
			if (bc->cut)
				fputs("  (stack cut short: record --dwarf for the program's frame)", out);
			fputc('\n', out);
		}
		if (t[i].n_causes > BLOCKING_REPORT_CAUSES)
			fprintf(out, "      ... %zu more causes\n", t[i].n_causes - BLOCKING_REPORT_CAUSES);
	}
	text_more(out, v, shown, n, "tasks", "  ", "; all in report --format json");
	if (s->parked_count)
		fprintf(out, "  parked in the runtime (not counted): %" PRIu64 " interval%s, %.3f ms\n",
			s->parked_count, fmt_plural(s->parked_count), ms(s->parked_ns));
	if (s->runtime_count)
		fprintf(out, "  in the runtime's own loop, outside polls (not counted): %" PRIu64
			" interval%s, %.3f ms%s\n", s->runtime_count, fmt_plural(s->runtime_count),
			ms(s->runtime_ns),
			s->profile ? " (its parking included)" : "");
	if (!s->count && !s->parked_count && !s->runtime_count)
		fprintf(out, "  none (a trace recorded with --no-offcpu has no off-CPU intervals: "
			"record without it to see where polls block)\n");
	return ferror(out) ? -EIO : 0;
}

int blocking_report_folded(FILE *out, struct blocking *b, enum folded_unit unit)
{
	size_t n;
	const struct blocking_folded *l = blocking__folded(b, &n);

	if (!l && n)
		return -ENOMEM;
	uint64_t dropped = 0, dropped_ns = 0;

	fprintf(out, "# asyncscope blocking: off-CPU time inside polls in %s (%s), by task and "
		"stack\n", folded_unit_name(unit), unit == FOLDED_MS ? "milliseconds" :
		unit == FOLDED_US ? "microseconds" : "nanoseconds");
	for (size_t i = 0; i < n; i++) {
		uint64_t w = folded_scale(l[i].ns, unit);

		if (!w) {
			dropped++;
			dropped_ns += l[i].ns;
			continue;
		}
		folded_put(out, l[i].stack, l[i].own, l[i].kernel, true, w);
	}
	if (dropped)
		fprintf(out, "# asyncscope: %" PRIu64 " stacks under half a unit left out (%" PRIu64
			" ns in all): --unit ns keeps them\n", dropped, dropped_ns);
	return ferror(out) ? -EIO : 0;
}
