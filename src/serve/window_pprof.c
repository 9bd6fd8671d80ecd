/* A window's profile as gzip'd pprof (window.h, window__encode): the
 * messages of profile.proto (../shared/pprof/profile.proto) written with
 * util/pb.h. Each sample is one (stack, task) entry of the window: its
 * locations leaf first (kernel frames, then user frames, then a root frame
 * named after the task, as export --format pprof roots them), its values
 * (CPU: CPU nanoseconds, samples; off-CPU: off-CPU nanoseconds, intervals;
 * the first the default), and the label task=NAME. Frames are
 * named already (the recorder symbolised them): every function carries
 * its name, file and line, and the target's mapping says so
 * (has_functions), so pprof never symbolises again.
 *
 * With the project's pprof encoder (src/output/pprof.h) in the tree, the
 * profile is built with it (the same encoder as export --format pprof,
 * stacks folded as there); without it, by the writer below (written while
 * that module was not on main: to be dropped once it is). */
#include "serve/window.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/window.h"

/* The BPF program that took the stack, at its top: not the target's. */
static bool tracing_frame(const char *s)
{
	static const char *const pre[] = { "__traceiter_", "__bpf_", "bpf_", "_einittext",
					   "perf_", "__perf_", NULL };

	if (!s || !*s)
		return true;
	for (const char *const *p = pre; *p; p++)
		if (!strncmp(s, *p, strlen(*p)))
			return true;
	return false;
}

#if __has_include("output/pprof.h")
#include "output/pprof.h"

int window__encode(const struct window *w, const struct stack_store *stacks,
		   const struct registry *reg, const char *target, uint64_t real_start_ns,
		   uint8_t **buf, size_t *len)
{
	bool cpu = w->kind == HTTP_WINDOW_CPU;
	struct pprof *p = pprof__new();
	char line[768];
	int ret = 0;

	*buf = NULL;
	*len = 0;
	if (!p)
		return -ENOMEM;
	int t0 = pprof__add_type(p, cpu ? "cpu" : "offcpu", "nanoseconds");
	if (t0 < 0 || pprof__add_type(p, cpu ? "samples" : "intervals", "count") < 0 ||
	    pprof__set_default_type(p, t0) ||
	    (cpu && pprof__set_period(p, "cpu", "nanoseconds", (int64_t)w->period_ns)) ||
	    (target && pprof__set_main_binary(p, target, NULL))) {
		ret = -ENOMEM;
		goto out;
	}
	pprof__set_time(p, (int64_t)real_start_ns, (int64_t)(w->end_ns - w->start_ns));
	snprintf(line, sizeof(line), cpu ?
		 "asyncscope serve: CPU samples of %s at %.0f Hz per CPU, by the task running "
		 "(its root frame and label task)" :
		 "asyncscope serve: time %s's threads blocked (off CPU, not preempted) inside tasks, "
		 "by stack at the switch (root frame and label task: the task)", target ? target : "?",
		 w->period_ns ? 1e9 / (double)w->period_ns : 0.0);
	if ((ret = pprof__add_comment(p, line)))
		goto out;
	if (w->folded) {
		snprintf(line, sizeof(line), "%llu samples past %d distinct stacks kept without "
			 "their stack", (unsigned long long)w->folded, WINDOW_MAX_ENTRIES);
		if ((ret = pprof__add_comment(p, line)))
			goto out;
	}
	for (size_t i = 0; i < w->n && !ret; i++) {
		const struct window_entry *en = &w->e[i];
		const struct kept_stack *k = stack_store__get(stacks, en->stack);
		const char *root[1] = { en->task < reg->n_tasks ? reg->tasks[en->task].name : "unknown" };
		struct pprof_label lab[1] = { { .key = "task", .str = root[0] } };
		int64_t v[2] = { (int64_t)en->ns, (int64_t)en->count };
		uint32_t skip = 0;
		while (k && skip < k->st.n_kernel && tracing_frame(k->st.frames[skip].sym))
			skip++;
		ret = pprof__add_stack(p, &(struct pprof_stack){ .roots = root, .n_roots = 1,
				       .stack = k ? &k->st : NULL, .skip_kernel = skip }, v, lab, 1);
	}
	if (!ret)
		ret = pprof__write_mem(p, buf, len);
out:
	pprof__free(p);
	return ret;
}

#else
#include <zlib.h>

#include "util/pb.h"
#include "util/strtab.h"
#include "util/u64map.h"

/* profile.proto field numbers */
enum {
	P_SAMPLE_TYPE = 1, P_SAMPLE, P_MAPPING, P_LOCATION, P_FUNCTION, P_STRING_TABLE,
	P_TIME_NANOS = 9, P_DURATION_NANOS, P_PERIOD_TYPE, P_PERIOD, P_COMMENT,
	P_DEFAULT_SAMPLE_TYPE,
};

struct enc {
	struct pb b;
	struct strtab strs;          /* the string table (index 0 "") */
	struct u64map loc_by_addr;   /* address -> location id */
	struct u64map loc_by_task;   /* task row + 1 -> location id of its root frame */
	struct u64map fn_by_str;     /* strtab index of "name\x1ffile" + 1 -> function id */
	uint64_t n_loc, n_fn;
	int err;
};

static int64_t str(struct enc *e, const char *s)
{
	uint32_t idx;
	size_t len = strlen(s);

	if (!strtab__find(&e->strs, s, len, &idx) && strtab__add(&e->strs, s, len, &idx)) {
		e->err = -ENOMEM;
		return 0;
	}
	return idx;
}

static void value_type(struct enc *e, uint32_t field, const char *type, const char *unit)
{
	size_t at = pb_open(&e->b, field);

	pb_int(&e->b, 1, str(e, type));
	pb_int(&e->b, 2, str(e, unit));
	pb_close(&e->b, at);
}

/* The function of (name, file): its id, written when new. */
static uint64_t function(struct enc *e, const char *name, const char *file)
{
	char key[1024];
	uint32_t idx;
	uint64_t v;

	snprintf(key, sizeof(key), "%s\x1f%s", name, file ? file : "");
	if (strtab__find(&e->strs, key, strlen(key), &idx) && u64map__get(&e->fn_by_str, idx + 1ull, &v))
		return v;
	idx = (uint32_t)str(e, key);
	v = ++e->n_fn;
	if (u64map__set(&e->fn_by_str, idx + 1ull, v))
		e->err = -ENOMEM;
	size_t at = pb_open(&e->b, P_FUNCTION);
	pb_uint(&e->b, 1, v);
	pb_int(&e->b, 2, str(e, name));
	pb_int(&e->b, 3, str(e, name));
	pb_int(&e->b, 4, str(e, file ? file : ""));
	pb_close(&e->b, at);
	return v;
}

/* The location of frame f (kernel: no mapping): its id, written when new. */
static uint64_t location(struct enc *e, const struct as_frame *f, bool kernel)
{
	uint64_t v, key = f->addr ? f->addr : 1;

	if (key == UINT64_MAX)
		key--;
	if (u64map__get(&e->loc_by_addr, key, &v))
		return v;
	uint64_t fn = function(e, f->sym && *f->sym ? f->sym : "?", f->file);
	v = ++e->n_loc;
	if (u64map__set(&e->loc_by_addr, key, v))
		e->err = -ENOMEM;
	size_t at = pb_open(&e->b, P_LOCATION);
	pb_uint(&e->b, 1, v);
	pb_uint(&e->b, 2, kernel ? 0 : 1);
	pb_uint(&e->b, 3, f->addr);
	size_t ln = pb_open(&e->b, 4);
	pb_uint(&e->b, 1, fn);
	pb_int(&e->b, 2, f->file ? f->line : 0);
	pb_close(&e->b, ln);
	pb_close(&e->b, at);
	return v;
}

/* The root frame of task row t: its name. */
static uint64_t task_location(struct enc *e, uint32_t t, const char *name)
{
	uint64_t v;

	if (u64map__get(&e->loc_by_task, (uint64_t)t + 1, &v))
		return v;
	uint64_t f = function(e, name, NULL);
	v = ++e->n_loc;
	if (u64map__set(&e->loc_by_task, (uint64_t)t + 1, v))
		e->err = -ENOMEM;
	size_t at = pb_open(&e->b, P_LOCATION);
	pb_uint(&e->b, 1, v);
	size_t ln = pb_open(&e->b, 4);
	pb_uint(&e->b, 1, f);
	pb_close(&e->b, ln);
	pb_close(&e->b, at);
	return v;
}

static int gzip(const uint8_t *in, size_t n, uint8_t **out, size_t *out_len)
{
	z_stream z = { 0 };
	size_t cap = compressBound((uLong)n) + 64;
	uint8_t *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(buf);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	z.next_out = buf;
	z.avail_out = (uInt)cap;
	int r = deflate(&z, Z_FINISH);
	deflateEnd(&z);
	if (r != Z_STREAM_END) {
		free(buf);
		return -EIO;
	}
	*out = buf;
	*out_len = z.total_out;
	return 0;
}

int window__encode(const struct window *w, const struct stack_store *stacks,
		   const struct registry *reg, const char *target, uint64_t real_start_ns,
		   uint8_t **buf, size_t *len)
{
	struct enc e = { 0 };
	bool cpu = w->kind == HTTP_WINDOW_CPU;
	uint64_t *locs = malloc((2 * AS_STACK_MAX_FRAMES + 1) * sizeof(*locs));
	char line[768];
	int ret;

	*buf = NULL;
	*len = 0;
	if (!locs)
		return -ENOMEM;
	str(&e, "");
	value_type(&e, P_SAMPLE_TYPE, cpu ? "cpu" : "offcpu", "nanoseconds");
	value_type(&e, P_SAMPLE_TYPE, cpu ? "samples" : "intervals", "count");
	/* the target's mapping: symbolised already */
	size_t at = pb_open(&e.b, P_MAPPING);
	pb_uint(&e.b, 1, 1);
	pb_int(&e.b, 5, str(&e, target ? target : ""));
	pb_uint(&e.b, 7, 1);
	pb_uint(&e.b, 8, 1);
	pb_uint(&e.b, 9, 1);
	pb_close(&e.b, at);
	for (size_t i = 0; i < w->n; i++) {
		const struct window_entry *en = &w->e[i];
		const struct kept_stack *k = stack_store__get(stacks, en->stack);
		const char *task = en->task < reg->n_tasks ? reg->tasks[en->task].name : "unknown";
		size_t n = 0;
		if (k) {
			uint32_t nk = k->st.n_kernel, skip = 0;
			while (skip < nk && tracing_frame(k->st.frames[skip].sym))
				skip++;
			for (uint32_t f = skip; f < nk; f++)
				locs[n++] = location(&e, &k->st.frames[f], true);
			for (uint32_t f = nk; f < nk + k->st.n_user; f++)
				locs[n++] = location(&e, &k->st.frames[f], false);
		}
		locs[n++] = task_location(&e, en->task, task);
		size_t s = pb_open(&e.b, P_SAMPLE);
		size_t p = pb_open(&e.b, 1);
		for (size_t j = 0; j < n; j++)
			pb_raw_varint(&e.b, locs[j]);
		pb_close(&e.b, p);
		p = pb_open(&e.b, 2);
		pb_raw_varint(&e.b, en->ns);
		pb_raw_varint(&e.b, en->count);
		pb_close(&e.b, p);
		size_t l = pb_open(&e.b, 3);
		pb_int(&e.b, 1, str(&e, "task"));
		pb_int(&e.b, 2, str(&e, task));
		pb_close(&e.b, l);
		pb_close(&e.b, s);
	}
	pb_int(&e.b, P_TIME_NANOS, (int64_t)real_start_ns);
	pb_int(&e.b, P_DURATION_NANOS, (int64_t)(w->end_ns - w->start_ns));
	value_type(&e, P_PERIOD_TYPE, cpu ? "cpu" : "offcpu", "nanoseconds");
	pb_int(&e.b, P_PERIOD, cpu ? (int64_t)w->period_ns : 0);
	snprintf(line, sizeof(line), cpu ?
		 "asyncscope serve: CPU samples of %s at %.0f Hz per CPU, by the task running "
		 "(its root frame and label task)" :
		 "asyncscope serve: time %s's threads blocked (off CPU, not preempted) inside tasks, "
		 "by stack at the switch (root frame and label task: the task)", target ? target : "?",
		 w->period_ns ? 1e9 / (double)w->period_ns : 0.0);
	pb_int(&e.b, P_COMMENT, str(&e, line));
	if (w->folded) {
		snprintf(line, sizeof(line), "%llu samples past %d distinct stacks kept without "
			 "their stack", (unsigned long long)w->folded, WINDOW_MAX_ENTRIES);
		pb_int(&e.b, P_COMMENT, str(&e, line));
	}
	pb_int(&e.b, P_DEFAULT_SAMPLE_TYPE, str(&e, cpu ? "cpu" : "offcpu"));
	for (uint32_t i = 0; i < e.strs.n; i++)
		pb_bytes(&e.b, P_STRING_TABLE, strtab__get(&e.strs, i), e.strs.lens[i]);
	ret = e.err ? e.err : e.b.err;
	if (!ret)
		ret = gzip(e.b.buf, e.b.len, buf, len);
	pb__free(&e.b);
	strtab__clear(&e.strs);
	u64map__clear(&e.loc_by_addr);
	u64map__clear(&e.loc_by_task);
	u64map__clear(&e.fn_by_str);
	free(locs);
	return ret;
}

#endif
