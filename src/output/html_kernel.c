/* html_kernel: the CPU-sample, run-queue and io_uring analyses of the HTML
 * page bundled for an event-by-event caller (see html_kernel.h). */
#include "output/html_kernel.h"

#include <errno.h>
#include <stdlib.h>

#include "analysis/cpu_samples.h"
#include "analysis/runq.h"
#include "analysis/uring.h"
#include "output/html.h"

struct html_kernel {
	struct cpu_samples *cpu;
	struct runq *runq;
	struct uring *uring;
};

struct html_kernel *html_kernel__new(const struct as_trace_meta *meta)
{
	struct html_kernel *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->cpu = cpu_samples__new(meta);
	k->runq = runq__new();
	k->uring = uring__new(meta);
	if (!k->cpu || !k->runq || !k->uring) {
		html_kernel__free(k);
		errno = ENOMEM;
		return NULL;
	}
	return k;
}

int html_kernel__add(struct html_kernel *k, const struct as_event *ev, const struct as_stack *stack)
{
	int err;

	if (!k || !ev)
		return -EINVAL;
	if ((err = cpu_samples__add(k->cpu, ev, ev->type == AS_EV_SAMPLE ? stack : NULL)) ||
	    (err = runq__add(k->runq, ev)))
		return err;
	return uring__add(k->uring, ev);
}

void html_kernel__free(struct html_kernel *k)
{
	if (!k)
		return;
	cpu_samples__free(k->cpu);
	runq__free(k->runq);
	uring__free(k->uring);
	free(k);
}

int report_html_kernel(FILE *out, const char *json, size_t len, struct blocking *b,
		       struct html_kernel *k)
{
	struct html_inputs in = { .blocking = b };

	if (k) {
		in.cpu = k->cpu;
		in.runq = k->runq;
		in.uring = k->uring;
	}
	return report_html_write(out, json, len, &in);
}
