/* fuzz_drive(): one input through every reader of a trace (see
 * fuzz_drive.h). Each step is a command of src/cli/ redone on the library:
 *
 *   report (text, JSON, HTML; pass 1 the analyses on one task model, pass 2
 *   the timeline and the HTML page's zoom pass), then from the same analyses what `blocking`, `cpu` and
 *   `uring` write (text and folded);
 *   export (perfetto, perfetto-json, folded, folded --per-task,
 *   folded-futures and folded-wait, cat; pprof and speedscope, folded or
 *   with --all-frames: the pprof Profile must hold together, its gzip
 *   inflate to it, the speedscope file be strict JSON), each sink on its own model as `export` has it, with
 *   `top`'s live view beside them, ticked on the trace's clock.
 *
 * A step whose run fails (a corrupt input) writes nothing, as the command
 * would not; a truncated input is read with --partial. `events` is a
 * printer inside src/cli/events.c, not library code: not driven here.
 * Beyond what the sanitizers catch, what the outputs promise is checked
 * and a failure aborts (a crash to libFuzzer): the JSON report, the
 * Perfetto JSON export and the HTML page's data blocks are strict JSON, the
 * Perfetto protobuf is well-formed wire format down to its messages, and
 * the CAT export reads back as the events it took. */
#include "fuzz_drive.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analysis/blocking.h"
#include "analysis/findings.h"
#include "analysis/cpu_samples.h"
#include "analysis/futures.h"
#include "analysis/live.h"
#include "analysis/runq.h"
#include "analysis/task_model.h"
#include "analysis/tasks.h"
#include "analysis/timeline.h"
#include "analysis/zoom.h"
#include "analysis/uring.h"
#include "analysis/usdt_counts.h"
#include "cat/writer.h"
#include "output/blocking_report.h"
#include "output/cpu_report.h"
#include "output/folded.h"
#include "output/html.h"
#include "output/perfetto.h"
#include "output/perfetto_pb.h"
#include "output/pprof.h"
#include "output/pprof_trace.h"
#include "output/report.h"
#include "output/runq_report.h"
#include "output/speedscope.h"
#include "output/uring_report.h"
#include "output/usdt_report.h"
#include "pipeline/pipeline.h"
#include "pipeline/source_file.h"
#include "util/varint.h"
#include "analysis/stack_fold.h"

#include <zlib.h>

#include "json_check.h"

static int memfd = -1, memfd2 = -1;   /* the input; a CAT text read back */
static char path[64], path2[64];
static FILE *sink_out;   /* every output goes here and is dropped */
static bool verbose;     /* FUZZ_DRIVE_VERBOSE=1: each step's outcome on stderr */

/* The JSON outputs promise valid JSON whatever the trace's strings hold
 * (util/json.h): anything else aborts, showing where. */
static void check_json(const char *what, const char *buf, size_t len)
{
	size_t off;
	const char *why = json_check(buf, len, &off);

	if (!why)
		return;
	size_t from = off > 200 ? off - 200 : 0, to = len - off > 200 ? off + 200 : len;
	fprintf(stderr, "fuzz_drive: %s is not valid JSON: %s at byte %zu of %zu:\n%.*s<HERE>%.*s\n",
		what, why, off, len, (int)(off - from), buf + from, (int)(to - off), buf + off);
	abort();
}

/* Protobuf wire format from p to end: every field a valid tag and a value
 * inside the bounds; the fields of the TracePacket messages the Perfetto
 * export nests (msgs: 0-terminated field numbers at each depth) parsed
 * recursively. Returns NULL or what is wrong. */
static const char *pb_walk(const uint8_t *p, const uint8_t *end, int depth)
{
	/* Trace.packet; TracePacket's nested messages; below them all LEN
	 * fields but strings (names) are messages too: only bounds then */
	static const uint32_t msgs[2][8] = { { 1, 0 }, { 6, 11, 12, 59, 60, 0 } };

	while (p < end) {
		uint64_t tag, v;

		if (varint_get(&p, end, &tag) || !(tag >> 3))
			return "bad tag";
		switch (tag & 7) {
		case 0:
			if (varint_get(&p, end, &v))
				return "bad varint";
			break;
		case 1:
			if (end - p < 8)
				return "short fixed64";
			p += 8;
			break;
		case 2:
			if (varint_get(&p, end, &v) || v > (uint64_t)(end - p))
				return "length past the end";
			if (depth < 2)
				for (const uint32_t *m = msgs[depth]; *m; m++)
					if (*m == tag >> 3) {
						const char *why = pb_walk(p, p + v, depth + 1);

						if (why)
							return why;
					}
			p += v;
			break;
		default:
			return "bad wire type";
		}
	}
	return NULL;
}

static void check_pb(const char *buf, size_t len)
{
	const char *why = pb_walk((const uint8_t *)buf, (const uint8_t *)buf + len, 0);

	if (!why && (len < 2 || buf[0] != 0x0a))
		why = "no first packet";
	if (!why)
		return;
	fprintf(stderr, "fuzz_drive: export --format perfetto is not a Trace: %s (%zu bytes)\n",
		why, len);
	abort();
}

/* The HTML page's three data blocks (output/html.h): each must be valid JSON
 * up to the first "</script" a browser would see, with no "<!--" in it. */
static void check_html(const char *page, size_t len)
{
	static const char *const ids[] = { "data", "kernel", "page" };
	static const char *const what[] = { "the HTML page's data block",
					    "the HTML page's kernel block",
					    "the HTML page's page block" };
	char open[64];

	for (size_t i = 0; i < 3; i++) {
		snprintf(open, sizeof(open), "<script type=\"application/json\" id=\"%s\">", ids[i]);
		const char *b = memmem(page, len, open, strlen(open));

		if (!b) {
			fprintf(stderr, "fuzz_drive: the HTML page has no %s block\n", ids[i]);
			abort();
		}
		b += strlen(open);
		const char *e = b;
		size_t left = len - (size_t)(b - page);

		while (left >= 8 && strncasecmp(e, "</script", 8)) {
			e++;
			left--;
		}
		if (left < 8) {
			fprintf(stderr, "fuzz_drive: the HTML page's %s block does not end\n", ids[i]);
			abort();
		}
		if (memmem(b, (size_t)(e - b), "<!--", 4)) {
			fprintf(stderr, "fuzz_drive: the HTML page's %s block holds \"<!--\"\n", ids[i]);
			abort();
		}
		check_json(what[i], b, (size_t)(e - b));
	}
}

static const char *fmt_u64(uint64_t v)
{
	static char buf[24];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	return buf;
}

/* With verbose, says how a step went (replaying one input). */
static void note(const char *step, int err, const struct pipeline_result *res)
{
	if (verbose)
		fprintf(stderr, "fuzz_drive: %s: %s%s%s\n", step, err ? strerror(-err) : "ok",
			res ? (res->truncated ? ", truncated, events " : ", events ") : "",
			res ? fmt_u64(res->events) : "");
}

static ssize_t discard(void *cookie, const char *buf, size_t n)
{
	(void)cookie;
	(void)buf;
	return (ssize_t)n;
}

static void die(const char *what)
{
	fprintf(stderr, "fuzz harness: %s: %s\n", what, strerror(errno));
	abort();
}

static void setup(void)
{
	memfd = memfd_create("asyncscope-fuzz", MFD_CLOEXEC);
	if (memfd < 0)
		die("memfd_create");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	memfd2 = memfd_create("asyncscope-fuzz-cat", MFD_CLOEXEC);
	if (memfd2 < 0)
		die("memfd_create");
	snprintf(path2, sizeof(path2), "/proc/self/fd/%d", memfd2);
	sink_out = fopencookie(NULL, "w", (cookie_io_functions_t){ .write = discard });
	if (!sink_out)
		die("fopencookie");
}

static void put_file(int fd, const uint8_t *data, size_t size)
{
	size_t off = 0;

	if (ftruncate(fd, 0))
		die("ftruncate");
	while (off < size) {
		ssize_t w = pwrite(fd, data + off, size - off, (off_t)off);

		if (w <= 0)
			die("pwrite");
		off += (size_t)w;
	}
}

static const struct pipeline_opts partial = { .partial = true };

static bool open_src(struct as_source *src)
{
	char err[1024];
	int ret = source_open_file(src, path, err, sizeof(err));

	if (ret && verbose)
		fprintf(stderr, "fuzz_drive: open: %s\n", err);
	return ret == 0;
}

static bool has_futures(const struct as_trace_meta *meta)
{
	for (uint32_t i = 0; meta && meta->probes && i < meta->n_probes; i++)
		if (meta->probes[i].role == AS_ROLE_FUTURE)
			return true;
	return false;
}

/* `report` in all three formats, then the `blocking`, `cpu` and `uring`
 * reports of the same analyses (src/cli/report.c's report_run()). */
static void run_report(const struct analysis_opts *ao)
{
	struct as_source src = { 0 }, src2 = { 0 };
	struct task_model *m = NULL;
	struct analysis *an = NULL;
	struct usdt_counts *uc = NULL;
	struct blocking *bl = NULL;
	struct futures *fu = NULL;
	struct timeline *tl = NULL;
	struct zoom *zm = NULL;
	struct findings *fi = NULL;
	struct html_inputs hin = { 0 };
	struct pipeline_result res, res2;
	const struct as_trace_meta *meta;
	struct as_sink sinks[8];
	size_t n = 0, n_usdt;
	char *json = NULL, *page = NULL;
	size_t len = 0, page_len = 0;
	FILE *mem;
	int ret;

	if (!open_src(&src))
		return;
	meta = as_source__meta(&src);
	m = task_model__new(meta);
	an = m ? analysis__new_on(m, meta, ao) : NULL;
	uc = m ? usdt_counts__new_on(m, meta) : NULL;
	bl = m ? blocking__new_on(m, meta) : NULL;
	fu = m && has_futures(meta) ? futures__new_on(m, meta, NULL) : NULL;
	hin.cpu = m ? cpu_samples__new_on(m, meta) : NULL;
	hin.runq = runq__new();
	hin.uring = m ? uring__new_on(m, meta) : NULL;
	if (!an || !uc || !bl || (has_futures(meta) && !fu) || !hin.cpu || !hin.runq || !hin.uring)
		goto out;
	sinks[n++] = task_model__sink(m);
	sinks[n++] = analysis__sink(an);
	if (fu)
		sinks[n++] = futures__sink(fu);
	sinks[n++] = blocking__sink(bl);
	usdt_counts__probes(uc, &n_usdt);
	if (n_usdt)
		sinks[n++] = usdt_counts__sink(uc);
	sinks[n++] = cpu_samples__sink(hin.cpu);
	sinks[n++] = runq__sink(hin.runq);
	sinks[n++] = uring__sink(hin.uring);
	ret = pipeline_run(&src, sinks, n, &partial, &res);
	note("report pass 1", ret, &res);
	if (ret)
		goto out;
	usdt_counts__finish(uc);

	if (!open_src(&src2))
		goto out;
	tl = timeline__new(an, as_source__meta(&src2), NULL);
	zm = zoom__new(an, as_source__meta(&src2), NULL);
	if (!tl || !zm)
		goto out;
	struct as_sink tsinks[2] = { timeline__sink(tl), zoom__sink(zm) };

	ret = pipeline_run(&src2, tsinks, 2, &partial, &res2);
	note("report pass 2", ret, &res2);
	if (ret)
		goto out;
	hin.blocking = bl;
	hin.zoom = zm;
	fi = findings__new(&(struct findings_input){ .analysis = an, .blocking = bl, .futures = fu,
						     .meta = meta, .end = &res.end,
						     .truncated = res.truncated });
	if (!fi)
		goto out;
	struct report_opts ro = { .truncated = res.truncated, .usdt = uc,
				  .blocking = blocking__summary(bl)->count ? bl : NULL,
				  .futures = fu, .findings = fi };

	/* text: no timeline */
	ret = report_text(sink_out, an, meta, &res.end, &ro);
	note("report text", ret, NULL);
	usdt_report_text(sink_out, uc);
	if (ro.blocking)
		blocking_report_text(sink_out, bl, NULL);
	/* JSON and the HTML page around it */
	ro.timeline = tl;
	mem = open_memstream(&json, &len);
	if (mem) {
		int err = report_json(mem, an, meta, &res.end, &ro);

		note("report json", err, NULL);
		if (!fclose(mem) && !err) {
			check_json("report --format json", json, len);
			mem = open_memstream(&page, &page_len);
			if (mem) {
				err = report_html_write(mem, json, len, &hin);
				note("report html", err, NULL);
				if (!fclose(mem) && !err)
					check_html(page, page_len);
			}
		}
	}
	/* blocking, cpu and uring, text and folded */
	blocking_report_text(sink_out, bl, NULL);
	blocking_report_folded(sink_out, bl, FOLDED_US);
	runq_report_text(sink_out, hin.runq);
	cpu_report_text(sink_out, hin.cpu, NULL);
	cpu_report_folded(sink_out, hin.cpu);
	uring_report_text(sink_out, hin.uring, NULL);
	fflush(sink_out);
out:
	free(json);
	free(page);
	findings__free(fi);
	timeline__free(tl);
	zoom__free(zm);
	usdt_counts__free(uc);
	blocking__free(bl);
	futures__free(fu);
	analysis__free(an);
	task_model__free(m);
	cpu_samples__free(hin.cpu);
	runq__free(hin.runq);
	uring__free(hin.uring);
	as_source__free(&src);
	as_source__free(&src2);
}

/* `top`'s view fed from a trace: ticked every 64 events on the trace's
 * clock (top ticks on the wall clock) and read after each tick. */
struct live_feed {
	struct live *l;
	uint64_t events;
};

static void read_live(const struct live *l)
{
	const struct live_task *t;
	const struct live_worker *w;
	size_t n, nw;
	volatile size_t sum = 0;

	t = live__tasks(l, &n);
	for (size_t i = 0; i < n; i++) {
		const char *name = live_task__name(&t[i]);

		sum += (name ? strlen(name) : 0) + strlen(live_state__str(t[i].state));
	}
	w = live__workers(l, &nw);
	for (size_t i = 0; i < nw; i++)
		sum += strlen(w[i].name);
	sum += live__summary(l)->tasks_live;
	(void)sum;
}

static int live_add(void *impl, const struct as_event *ev, const struct as_stack *stack)
{
	struct live_feed *f = impl;
	int err = live__add(f->l, ev);

	(void)stack;
	if (!err && !(++f->events & 63)) {
		live__tick(f->l, ev->ts);
		read_live(f->l);
	}
	return err;
}

static int live_finish(void *impl, const struct as_trace_end *end)
{
	struct live_feed *f = impl;

	live__set_lost(f->l, end->lost, end->missed);
	live__tick(f->l, end->end_ns);
	read_live(f->l);
	return 0;
}

static const struct as_sink_ops live_ops = { .name = "live", .add = live_add,
					     .finish = live_finish };

/* `export --format cat` checked: "a file written by export --format cat
 * reads back as exactly the events it was written from, in the same order"
 * (docs/cat-format.md). The writer's sink is wrapped to keep a copy of each
 * event it takes (cat_writer__events() counts it; not those it leaves out:
 * types without a line, a task's name); its text is read back
 * through a second in-memory file and compared, event by event. */
struct cat_feed {
	struct cat_writer *w;
	struct as_event *evs;
	size_t n, cap;
	bool oom;
};

static int cat_add(void *impl, const struct as_event *ev, const struct as_stack *stack)
{
	struct cat_feed *f = impl;
	uint64_t taken = cat_writer__events(f->w);
	int err = cat_writer__add(f->w, ev);

	(void)stack;
	if (err || cat_writer__events(f->w) == taken || f->oom)
		return err;
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 256;
		struct as_event *e = realloc(f->evs, cap * sizeof(*e));

		if (!e) {
			f->oom = true;
			return 0;
		}
		f->evs = e;
		f->cap = cap;
	}
	f->evs[f->n] = *ev;
	f->evs[f->n].str = ev->str ? strdup(ev->str) : NULL;
	if (ev->str && !f->evs[f->n].str)
		f->oom = true;
	else
		f->n++;
	return 0;
}

static int cat_finish(void *impl, const struct as_trace_end *end)
{
	struct cat_feed *f = impl;

	return cat_writer__finish(f->w, end, end->truncated);
}

static const struct as_sink_ops cat_ops = { .name = "cat", .add = cat_add, .finish = cat_finish };

static void cat_feed__clear(struct cat_feed *f)
{
	for (size_t i = 0; i < f->n; i++)
		free((char *)f->evs[i].str);
	free(f->evs);
	memset(f, 0, sizeof(*f));
}

/* Equal as the format keeps them: a string only where the event type has
 * one (THREAD, SPAWN: event.h; no reader of other types looks at it), and
 * a spawn location's unknown file (NULL) written as the empty name, read
 * back as "" (the trace reader's convention for absent strings; no output
 * tells them apart). */
static bool same_event(const struct as_event *a, const struct as_event *b)
{
	const char *as = a->str, *bs = b->str;

	if (a->type != AS_EV_THREAD && a->type != AS_EV_SPAWN)
		as = bs = NULL;
	if (a->type == AS_EV_SPAWN && !(a->flags & AS_SPAWN_NAME)) {
		as = as ? as : "";
		bs = bs ? bs : "";
	}
	return a->type == b->type && a->flags == b->flags && a->probe == b->probe &&
	       a->tid == b->tid && a->ts == b->ts && a->task == b->task && a->other == b->other &&
	       !as == !bs && (!as || !strcmp(as, bs));
}

static void print_event(const char *what, size_t i, const struct as_event *e)
{
	fprintf(stderr, "  %s event %zu: type %u flags %u probe %u tid %u ts %llu task %#llx "
		"other %#llx str %s%s%s\n", what, i, e->type, e->flags, e->probe, e->tid,
		(unsigned long long)e->ts, (unsigned long long)e->task,
		(unsigned long long)e->other, e->str ? "\"" : "", e->str ? e->str : "NULL",
		e->str ? "\"" : "");
}

static void roundtrip_fail(const char *why, const char *text, size_t len)
{
	fprintf(stderr, "fuzz_drive: export --format cat does not read back: %s\n", why);
	if (verbose)
		fprintf(stderr, "----- the text -----\n%.*s-----\n", (int)(len < 65536 ? len : 65536),
			text);
	abort();
}

/* Reads the CAT text (len bytes) back and compares it with f's events. */
static void check_cat_roundtrip(const struct cat_feed *f, const char *text, size_t len)
{
	struct as_source src = { 0 };
	struct as_event ev;
	char err[1024], why[1200];
	size_t i = 0;
	int got;

	if (f->oom)
		return;
	put_file(memfd2, (const uint8_t *)text, len);
	if (source_open_file(&src, path2, err, sizeof(err))) {
		if (errno == ENOMEM)
			return;
		snprintf(why, sizeof(why), "open: %s", err);
		roundtrip_fail(why, text, len);
	}
	while ((got = as_source__next(&src, &ev)) == 1) {
		if (i >= f->n || !same_event(&f->evs[i], &ev)) {
			if (i < f->n)
				print_event("written", i, &f->evs[i]);
			print_event("read", i, &ev);
			snprintf(why, sizeof(why), "event %zu of %zu differs", i, f->n);
			as_source__free(&src);
			roundtrip_fail(why, text, len);
		}
		i++;
	}
	if (got == -ENOMEM) {
		as_source__free(&src);
		return;
	}
	if ((got < 0 && got != -ENODATA) || i != f->n) {
		snprintf(why, sizeof(why), "%zu of %zu events, then %s", i, f->n,
			 got < 0 ? as_source__error(&src) : "the end");
		as_source__free(&src);
		roundtrip_fail(why, text, len);
	}
	as_source__free(&src);
}

/* `export` in each format (src/cli/export.c) and the live view, one run. */
static void run_exports(bool lines)
{
	struct as_source src = { 0 };
	struct perfetto *pf = NULL;
	struct perfetto_pb *pp = NULL;
	struct folded *fd = NULL, *fdt = NULL;
	struct futures *fu = NULL;
	struct cat_writer *cw = NULL;
	struct cat_feed cf = { 0 };
	struct live_feed lf = { 0 };
	struct pipeline_result res;
	const struct as_trace_meta *meta;
	char *cat_text = NULL, *pf_text = NULL, *pp_text = NULL;
	size_t cat_len = 0, pf_len = 0, pp_len = 0;
	FILE *cat_out, *pf_out = NULL, *pp_out = NULL;

	if (!open_src(&src))
		return;
	cat_out = open_memstream(&cat_text, &cat_len);
	pf_out = open_memstream(&pf_text, &pf_len);
	pp_out = open_memstream(&pp_text, &pp_len);
	if (!cat_out || !pf_out || !pp_out)
		goto out;
	meta = as_source__meta(&src);
	pf = perfetto__new(pf_out, meta);
	pp = perfetto_pb__new(pp_out, meta);
	fd = folded__new(sink_out, meta, false);
	fdt = folded__new(sink_out, meta, true);
	fu = futures__new(meta, &(struct futures_opts){ .lines = lines });
	cf.w = cw = cat_writer__new(cat_out, meta);
	lf.l = live__new(meta);
	if (!pf || !pp || !fd || !fdt || !fu || !cw || !lf.l)
		goto out;
	struct as_sink sinks[] = {
		perfetto__sink(pf), perfetto_pb__sink(pp), folded__sink(fd), folded__sink(fdt), futures__sink(fu),
		{ &cat_ops, &cf }, { &live_ops, &lf },
	};

	int ret = pipeline_run(&src, sinks, sizeof(sinks) / sizeof(sinks[0]), &partial, &res);

	note("exports", ret, &res);
	if (ret)
		goto out;
	folded_futures_write(sink_out, fu, FUTURES_ONCPU, NULL, NULL);
	folded_futures_write(sink_out, fu, FUTURES_WAIT, NULL, NULL);
	fflush(sink_out);
	if (!fclose(cat_out))
		check_cat_roundtrip(&cf, cat_text, cat_len);
	cat_out = NULL;
	if (!fclose(pf_out))
		check_json("export --format perfetto-json", pf_text, pf_len);
	pf_out = NULL;
	if (!fclose(pp_out))
		check_pb(pp_text, pp_len);
	pp_out = NULL;
out:
	if (cat_out)
		fclose(cat_out);
	if (pf_out)
		fclose(pf_out);
	if (pp_out)
		fclose(pp_out);
	free(cat_text);
	free(pf_text);
	free(pp_text);
	cat_feed__clear(&cf);
	perfetto__free(pf);
	perfetto_pb__free(pp);
	folded__free(fd);
	folded__free(fdt);
	futures__free(fu);
	cat_writer__free(cw);
	live__free(lf.l);
	as_source__free(&src);
}

/* A pprof Profile (output/pprof.h) must hold together: fields of the
 * wire types profile.proto gives, string_table[0] "", every string index,
 * location id and function id it uses defined, one value per sample type. */
static const char *pprof_walk(const uint8_t *p, const uint8_t *end)
{
	uint64_t n_str = 0, n_types = 0, n_loc = 0, n_fn = 0;
	bool first_empty = false;

	for (int pass = 0; pass < 2; pass++) {
		const uint8_t *q = p;

		while (q < end) {
			uint64_t tag, v;

			if (varint_get(&q, end, &tag))
				return "bad tag";
			if ((tag & 7) == 0) {
				if (varint_get(&q, end, &v))
					return "bad varint";
				if (pass && ((tag >> 3) == 7 || (tag >> 3) == 8 || (tag >> 3) == 14 ||
					     (tag >> 3) == 15) && v >= n_str)
					return "a string index past the table";
				continue;
			}
			if ((tag & 7) != 2 || varint_get(&q, end, &v) || v > (uint64_t)(end - q))
				return "bad field";
			const uint8_t *m = q, *me = q + v;
			uint32_t f = (uint32_t)(tag >> 3);

			q = me;
			if (f == 6) {
				if (!n_str++)
					first_empty = v == 0;
				continue;
			}
			if (!pass) {
				n_types += f == 1;
				n_loc += f == 4;
				n_fn += f == 5;
				continue;
			}
			/* pass 2: the messages' references (comment, 13, is packed
			 * string indices) */
			uint64_t values = 0;
			while (f == 13 && m < me) {
				uint64_t x;

				if (varint_get(&m, me, &x) || x >= n_str)
					return "a comment past the string table";
			}
			while (m < me) {
				uint64_t t, x;

				if (varint_get(&m, me, &t))
					return "bad inner tag";
				if ((t & 7) == 0) {
					if (varint_get(&m, me, &x))
						return "bad inner varint";
					if ((f == 1 || f == 11 || (f == 5 && (t >> 3) >= 2)) && x >= n_str)
						return "a string index past the table";
					if (f == 4 && (t >> 3) == 1 && (x == 0 || x > n_loc))
						return "a location id out of range";
					if (f == 5 && (t >> 3) == 1 && (x == 0 || x > n_fn))
						return "a function id out of range";
					continue;
				}
				if ((t & 7) != 2 || varint_get(&m, me, &x) || x > (uint64_t)(me - m))
					return "bad inner field";
				const uint8_t *r = m, *re = m + x;

				m = re;
				while (r < re && f == 2 && (t >> 3) <= 2) {   /* packed ids, values */
					uint64_t id;

					if (varint_get(&r, re, &id))
						return "bad packed varint";
					if ((t >> 3) == 1 && (id == 0 || id > n_loc))
						return "a sample names an undefined location";
					values += (t >> 3) == 2;
				}
				while (r < re && ((f == 4 && (t >> 3) == 4) || (f == 2 && (t >> 3) == 3))) {
					uint64_t lt, lx;   /* a line's function, a label's strings */

					if (varint_get(&r, re, &lt) || (lt & 7) || varint_get(&r, re, &lx))
						return "bad line or label";
					if (f == 4 && (lt >> 3) == 1 && (lx == 0 || lx > n_fn))
						return "a line names an undefined function";
					if (f == 2 && ((lt >> 3) == 1 || (lt >> 3) == 2) && lx >= n_str)
						return "a label string past the table";
				}
			}
			if (f == 2 && values != n_types)
				return "a sample without one value per type";
		}
		if (!pass && (!first_empty || !n_types))
			return "no empty first string, or no sample type";
	}
	return NULL;
}

/* `export --format pprof` and `--format speedscope`, folded or whole. */
static void run_profiles(bool all)
{
	struct as_source src = { 0 };
	struct task_model *m = NULL;
	struct pprof_trace *pt = NULL;
	struct pprof *prof = NULL;
	struct pipeline_result res;
	uint8_t *raw = NULL, *gz = NULL, *back = NULL;
	size_t raw_len = 0, gz_len = 0;
	char *ss = NULL;
	size_t ss_len = 0;
	FILE *ss_out = NULL;

	if (!open_src(&src))
		return;
	const struct as_trace_meta *meta = as_source__meta(&src);
	if (!(m = task_model__new(meta)) || !(pt = pprof_trace__new_on(m, meta,
							 all ? STACK_FOLD_ALL : 0)))
		goto out;
	struct as_sink sinks[6] = { task_model__sink(m) };
	size_t n = 1 + pprof_trace__sinks(pt, sinks + 1, 5);
	int ret = pipeline_run(&src, sinks, n, &partial, &res);

	note("profiles", ret, &res);
	if (ret || pprof_trace__build(pt, &res.end, &prof, NULL))
		goto out;
	if (!pprof__encode(prof, &raw, &raw_len)) {
		const char *why = pprof_walk(raw, raw + raw_len);

		if (why) {
			fprintf(stderr, "fuzz_drive: export --format pprof is not a Profile: %s "
				"(%zu bytes)\n", why, raw_len);
			abort();
		}
	}
	if (raw && !pprof__write_mem(prof, &gz, &gz_len)) {
		z_stream z = { 0 };
		int zr;

		back = malloc(raw_len + 1);
		if (back && inflateInit2(&z, 15 + 16) == Z_OK) {
			z.next_in = gz;
			z.avail_in = (uInt)gz_len;
			z.next_out = back;
			z.avail_out = (uInt)raw_len + 1;
			zr = inflate(&z, Z_FINISH);
			inflateEnd(&z);
			if (zr != Z_STREAM_END || z.total_out != raw_len || memcmp(back, raw, raw_len)) {
				fprintf(stderr, "fuzz_drive: the pprof gzip does not inflate to the Profile\n");
				abort();
			}
		}
	}
	if ((ss_out = open_memstream(&ss, &ss_len))) {
		int e = speedscope_write(ss_out, prof, meta->target, NULL);

		if (!fclose(ss_out) && !e)
			check_json("export --format speedscope", ss, ss_len);
	}
out:
	free(ss);
	free(raw);
	free(gz);
	free(back);
	pprof__free(prof);
	pprof_trace__free(pt);
	task_model__free(m);
	as_source__free(&src);
}

/* FNV-1a: options from the input itself, so that a reproducer replays. */
static uint32_t hash(const uint8_t *data, size_t size)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * 16777619u;
	return h;
}

void fuzz_drive(const uint8_t *data, size_t size)
{
	uint32_t h = hash(data, size);
	struct analysis_opts ao = { 0 };

	if (memfd < 0) {
		setup();
		verbose = getenv("FUZZ_DRIVE_VERBOSE") && *getenv("FUZZ_DRIVE_VERBOSE") == '1';
	}
	put_file(memfd, data, size);
	if (h & 1)
		ao.max_tasks = 1 + (h >> 8) % 3;   /* fold finished tasks into groups */
	if (h & 2) {   /* every poll long, every wait a stall or a starve */
		ao.long_poll_ns = 1 + (h >> 12) % 1000;
		ao.stall_ns = 1 + (h >> 16) % 1000;
		ao.starve_ns = 1 + (h >> 20) % 1000;
		ao.long_poll_keep = 1 + (h >> 24) % 4;
	}
	run_report(&ao);
	run_exports(h & 4);
	run_profiles(h & 8);
}
