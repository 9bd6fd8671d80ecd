/* Off-CPU events and stack definitions in the trace format (version 3):
 * deduplication in the writer, round trip through the reader, what older
 * versions reject. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "harness.h"
#include "stamp.h"
#include "analysis/blocking.h"
#include "analysis/stack_fold.h"
#include "sym/kallsyms.h"
#include "sym/proc_syms.h"
#include "trace/event.h"
#include "trace/reader.h"
#include "trace/writer.h"

static struct as_probe probes[] = {
	{ .role = AS_ROLE_POLL, .addr = 0x1000, .symbol = "tokio::runtime::task::raw::poll",
	  .future = "sleeper_in_poll::blocker" },
};
static const struct as_trace_meta meta = {
	.pid = 7, .target = "/bin/app", .build_id = "", .runtime = "tokio", .cmdline = "app",
	.probes = probes, .n_probes = 1,
};

/* The line of this file holding the comment marker ("INLINED_CALL"). */
static uint32_t marker_line(const char *marker)
{
	FILE *f = fopen(__FILE__, "r");
	char l[512], want[64];
	uint32_t n = 0, found = 0;

	snprintf(want, sizeof(want), "/* %s */", marker);
	while (f && fgets(l, sizeof(l), f)) {
		n++;
		if (strstr(l, want) && !strstr(l, "snprintf")) {
			found = n;
			break;
		}
	}
	if (f)
		fclose(f);
	return found;
}

static void tmp_path(char *buf)
{
	static int n;
	snprintf(buf, 64, "/tmp/as-test-offcpu-%d-%d.trace", (int)getpid(), n++);
}

static const struct as_frame sleep_frames[] = {
	{ 0xffffffff81a00010ull, "do_nanosleep" },
	{ 0xffffffff81a00200ull, "hrtimer_nanosleep" },
	{ 0x7f00000010ull, "clock_nanosleep" },
	{ 0x555500001234ull, "std::thread::sleep" },
	{ 0x555500002000ull, "sleeper_in_poll::blocker::{{closure}}", "src/bin/sleeper_in_poll.rs", 17 },
};

/* The same addresses give the same id, whatever the symbols; another
 * split between kernel and user frames is another stack. */
static void test_dedup(void)
{
	char path[64];
	uint32_t id1 = 0, id2 = 0, id3 = 0, id4 = 0;
	tmp_path(path);
	struct trace_writer *w = trace_writer__new(path, &meta);
	CHECK(w != NULL);
	if (!w)
		return;
	struct as_stack s = { .n_kernel = 2, .n_user = 3, .frames = sleep_frames };
	CHECK_EQ_U64(trace_writer__stack(w, &s, &id1), 0);
	CHECK_EQ_U64(id1, 1);
	uint64_t bytes = trace_writer__bytes(w);
	CHECK_EQ_U64(trace_writer__stack(w, &s, &id2), 0);
	CHECK_EQ_U64(id2, 1);
	CHECK_EQ_U64(trace_writer__bytes(w), bytes);   /* nothing written again */
	s.n_kernel = 1;
	s.n_user = 4;
	CHECK_EQ_U64(trace_writer__stack(w, &s, &id3), 0);
	CHECK_EQ_U64(id3, 2);
	struct as_stack empty = { 0 };
	CHECK_EQ_U64(trace_writer__stack(w, &empty, &id4), 0);
	CHECK_EQ_U64(id4, 3);
	CHECK_EQ_U64(trace_writer__stacks(w), 3);
	/* bad stacks: refused, the writer stays usable */
	struct as_stack big = { .n_kernel = AS_STACK_MAX_FRAMES + 1, .frames = sleep_frames };
	CHECK_EQ_U64(trace_writer__stack(w, &big, &id4), -EINVAL);
	struct as_stack none = { .n_user = 1 };
	CHECK_EQ_U64(trace_writer__stack(w, &none, &id4), -EINVAL);
	char longsym[AS_FRAME_SYM_MAX + 2];
	memset(longsym, 'x', sizeof(longsym) - 1);
	longsym[sizeof(longsym) - 1] = '\0';
	struct as_frame lf = { 1, longsym };
	struct as_stack lst = { .n_user = 1, .frames = &lf };
	CHECK_EQ_U64(trace_writer__stack(w, &lst, &id4), -EINVAL);
	/* an event may only name a defined stack */
	struct as_event ev = { .type = AS_EV_OFFCPU, .tid = 1, .ts = 5, .stack = 4 };
	CHECK_EQ_U64(trace_writer__write(w, &ev), -EINVAL);
	ev.stack = 3;
	CHECK_EQ_U64(trace_writer__write(w, &ev), 0);
	CHECK_EQ_U64(trace_writer__finish(w, &(struct as_trace_end){ 0 }), 0);
	trace_writer__free(w);
	unlink(path);
}

/* Off-CPU events inside polls, with stacks defined between them, read back
 * exactly; a stack is available once an event referring to it is read. */
static void test_roundtrip(void)
{
	char path[64], err[512];
	tmp_path(path);
	struct trace_writer *w = trace_writer__new(path, &meta);
	CHECK(w != NULL);
	if (!w)
		return;
	const uint64_t task = 0x55aa00001000ull;
	struct as_event in[40];
	size_t n = 0;
	in[n++] = (struct as_event){ .type = AS_EV_THREAD, .tid = 10, .ts = 100, .str = "worker" };
	CHECK_EQ_U64(trace_writer__write(w, &in[0]), 0);
	uint64_t ts = 1000;
	for (int i = 0; i < 10; i++) {
		struct as_stack s = { .n_kernel = 2, .n_user = 3, .frames = sleep_frames };
		uint32_t id;
		if (i >= 5)
			s.n_user = 2;   /* a second stack from half way */
		CHECK_EQ_U64(trace_writer__stack(w, &s, &id), 0);
		CHECK_EQ_U64(id, i < 5 ? 1 : 2);
		in[n++] = (struct as_event){ .type = AS_EV_POLL_BEGIN, .tid = 10, .ts = ts, .task = task };
		in[n++] = (struct as_event){ .type = AS_EV_OFFCPU, .tid = 10, .ts = ts + 10,
					     .task = task, .other = 50000000, .stack = id };
		in[n++] = (struct as_event){ .type = AS_EV_POLL_END, .tid = 10, .ts = ts + 50000020,
					     .task = task };
		for (size_t k = n - 3; k < n; k++)
			CHECK_EQ_U64(trace_writer__write(w, &in[k]), 0);
		ts += 60000000;
	}
	/* an off-CPU interval outside any poll, no stack */
	in[n] = (struct as_event){ .type = AS_EV_OFFCPU, .tid = 11, .ts = ts, .other = 7 };
	CHECK_EQ_U64(trace_writer__write(w, &in[n]), 0);
	n++;
	CHECK_EQ_U64(trace_writer__finish(w, &(struct as_trace_end){ 0 }), 0);
	trace_writer__free(w);

	struct trace_reader *r = trace_reader__open(path, err, sizeof(err));
	CHECK(r != NULL);
	if (!r)
		return;
	CHECK_EQ_U64(trace_reader__meta(r)->format_version, AS_TRACE_FORMAT_VERSION);
	struct as_event ev;
	size_t got = 0, offcpu = 0;
	uint64_t off_ns = 0;
	int rc;
	while ((rc = trace_reader__next(r, &ev)) == 1) {
		got++;
		if (ev.type != AS_EV_OFFCPU)
			continue;
		offcpu++;
		off_ns += ev.other;
		if (ev.tid == 11) {
			CHECK_EQ_U64(ev.task, 0);
			CHECK_EQ_U64(ev.stack, 0);
			CHECK(trace_reader__stack(r, 0) == NULL);
			continue;
		}
		CHECK_EQ_U64(ev.task, task);
		const struct as_stack *s = trace_reader__stack(r, ev.stack);
		CHECK(s != NULL);
		if (!s)
			continue;
		CHECK_EQ_U64(s->id, ev.stack);
		CHECK_EQ_U64(s->n_kernel, 2);
		CHECK_EQ_U64(s->n_user, ev.stack == 1 ? 3 : 2);
		for (uint32_t i = 0; i < (uint32_t)s->n_kernel + s->n_user; i++) {
			CHECK_EQ_U64(s->frames[i].addr, sleep_frames[i].addr);
			CHECK_STR(s->frames[i].sym, sleep_frames[i].sym);
			if (sleep_frames[i].file)
				CHECK_STR(s->frames[i].file, sleep_frames[i].file);
			else
				CHECK(s->frames[i].file == NULL);
			CHECK_EQ_U64(s->frames[i].line, sleep_frames[i].line);
		}
	}
	CHECK_EQ_U64(rc, 0);
	CHECK_EQ_U64(got, 32);
	CHECK_EQ_U64(offcpu, 11);
	CHECK_EQ_U64(off_ns, 500000007);
	CHECK(trace_reader__stack(r, 3) == NULL);
	trace_reader__free(r);
	unlink(path);
}

/* Version 2 has neither stacks nor off-CPU events; a version 3 header
 * whose version field is damaged to 2 fails its checksum. */
static void test_older_versions(void)
{
	char path[64], err[512];
	struct as_event ev;
	tmp_path(path);

	/* a stack definition in version 2 */
	struct trace_writer *w = trace_writer__new(path, &meta);
	uint32_t id;
	struct as_stack s = { .n_kernel = 2, .frames = sleep_frames };
	CHECK_EQ_U64(trace_writer__write(w, &(struct as_event){ .type = AS_EV_THREAD, .tid = 1, .ts = 1 }), 0);
	CHECK_EQ_U64(trace_writer__stack(w, &s, &id), 0);
	CHECK_EQ_U64(trace_writer__write(w, &(struct as_event){ .type = AS_EV_OFFCPU, .tid = 1, .ts = 2,
							       .other = 3, .stack = id }), 0);
	CHECK_EQ_U64(trace_writer__finish(w, &(struct as_trace_end){ 0 }), 0);
	trace_writer__free(w);

	FILE *f = fopen(path, "r+b");
	if (f) {
		fseek(f, 8, SEEK_SET);
		fputc(2, f);   /* damaged version: the checksum catches it */
		fclose(f);
	}
	struct trace_reader *r = trace_reader__open(path, err, sizeof(err));
	CHECK(r == NULL);
	CHECK(strstr(err, "checksum") != NULL);
	trace_reader__free(r);
	f = fopen(path, "r+b");
	if (f) {
		fseek(f, 8, SEEK_SET);
		fputc(AS_TRACE_FORMAT_VERSION, f);   /* repaired */
		fclose(f);
	}

	stamp_version(path, 2);
	r = trace_reader__open(path, err, sizeof(err));
	CHECK(r != NULL);
	if (r) {
		CHECK_EQ_U64(trace_reader__next(r, &ev), 1);
		CHECK_EQ_U64(trace_reader__next(r, &ev), -EBADMSG);
		CHECK(strstr(trace_reader__error(r), "stack definition before version 3") != NULL);
	}
	trace_reader__free(r);

	/* an off-CPU event in version 2 */
	w = trace_writer__new(path, &meta);
	CHECK_EQ_U64(trace_writer__write(w, &(struct as_event){ .type = AS_EV_THREAD, .tid = 1, .ts = 1 }), 0);
	CHECK_EQ_U64(trace_writer__write(w, &(struct as_event){ .type = AS_EV_OFFCPU, .tid = 1, .ts = 2 }), 0);
	CHECK_EQ_U64(trace_writer__finish(w, &(struct as_trace_end){ 0 }), 0);
	trace_writer__free(w);
	stamp_version(path, 2);
	r = trace_reader__open(path, err, sizeof(err));
	CHECK(r != NULL);
	if (r) {
		CHECK_EQ_U64(trace_reader__next(r, &ev), 1);
		CHECK_EQ_U64(trace_reader__next(r, &ev), -EBADMSG);
		CHECK(strstr(trace_reader__error(r), "unknown event type") != NULL);
	}
	trace_reader__free(r);
	unlink(path);
}

/* Kernel symbols: text symbols only, nearest at or below the address. */
static void test_kallsyms(void)
{
	char path[64];
	tmp_path(path);
	FILE *f = fopen(path, "w");
	if (!f)
		return;
	fputs("ffffffff81000000 T _stext\n"
	      "ffffffff81a00200 t hrtimer_nanosleep\n"
	      "ffffffff81a00000 T do_nanosleep\n"
	      "ffffffff82000000 D some_data\n"
	      "ffffffffc0001000 t mod_fn\t[somemod]\n"
	      "0000000000000000 T hidden\n", f);
	fclose(f);
	struct kallsyms *k = kallsyms__load(path);
	CHECK(k != NULL);
	CHECK(kallsyms__lookup(k, 0xffffffff80000000ull) == NULL);
	CHECK_STR(kallsyms__lookup(k, 0xffffffff81a00010ull), "do_nanosleep");
	CHECK_STR(kallsyms__lookup(k, 0xffffffff81a00200ull), "hrtimer_nanosleep");
	CHECK_STR(kallsyms__lookup(k, 0xffffffff82000010ull), "hrtimer_nanosleep"); /* data skipped */
	CHECK_STR(kallsyms__lookup(k, 0xffffffffc0001004ull), "mod_fn");
	kallsyms__free(k);
	/* all addresses hidden (no privilege): nothing usable */
	f = fopen(path, "w");
	if (f) {
		fputs("0000000000000000 T do_nanosleep\n", f);
		fclose(f);
	}
	CHECK(kallsyms__load(path) == NULL);
	CHECK_EQ_U64(errno, ENODATA);
	unlink(path);
}

/* User addresses through a saved maps file: this test binary's own main. */
/* A call site inside a function inlined into another (for proc_syms__inlined):
 * where() returns the address its call returns to, inside outer_fn, in the
 * code inlined from inlined_site. */
static volatile uint64_t inline_sink;
__attribute__((noinline)) static uint64_t where(void)
{
	return (uint64_t)(uintptr_t)__builtin_return_address(0);
}
static inline __attribute__((always_inline)) uint64_t inlined_site(void)
{
	uint64_t ra = where();   /* INLINED_CALL */
	inline_sink = ra;
	return ra;
}
__attribute__((noinline)) static uint64_t outer_fn(void)
{
	uint64_t ra = inlined_site();   /* OUTER_CALL */
	inline_sink = ra + 1;
	return ra;
}

static void test_proc_syms(void)
{
	char path[64], buf[256];
	FILE *in = fopen("/proc/self/maps", "r");
	tmp_path(path);
	FILE *out = fopen(path, "w");
	if (!in || !out) {
		if (in)
			fclose(in);
		if (out)
			fclose(out);
		CHECK(0);
		return;
	}
	while (fgets(buf, sizeof(buf), in))
		fputs(buf, out);
	fclose(in);
	fclose(out);
	struct proc_syms *ps = proc_syms__new(getpid(), path);
	CHECK(ps != NULL);
	CHECK_EQ_U64(proc_syms__name(ps, (uint64_t)(uintptr_t)&test_proc_syms + 4, buf, sizeof(buf)), 1);
	CHECK_STR(buf, "test_proc_syms");
	CHECK_EQ_U64(proc_syms__name(ps, 8, buf, sizeof(buf)), 0);   /* not mapped */
	CHECK_STR(buf, "");
	/* this file and this line, from the test binary's own DWARF */
	uint32_t line = 0;
	uint64_t here = 0;
here_label:
	here = (uint64_t)(uintptr_t)&&here_label;
	CHECK_EQ_U64(proc_syms__line(ps, here, buf, sizeof(buf), &line), 1);
	CHECK(strstr(buf, "test_offcpu.c") != NULL);
	CHECK(line >= (uint32_t)__LINE__ - 6 && line <= (uint32_t)__LINE__);
	CHECK_EQ_U64(proc_syms__line(ps, 8, buf, sizeof(buf), &line), 0);
	CHECK_EQ_U64(line, 0);
	/* the functions inlined at an address, and where the outer one calls them */
	struct proc_sym_inline inl[4];
	char call_file[201];
	uint32_t call_line = 0;
	uint64_t ra = outer_fn();
	size_t ni = proc_syms__inlined(ps, ra - 1, inl, 4, call_file, sizeof(call_file), &call_line, NULL);
	CHECK_EQ_U64(ni, 1);
	if (ni == 1) {
		CHECK_STR(inl[0].name, "inlined_site");
		CHECK(strstr(inl[0].file, "test_offcpu.c") != NULL);
		CHECK_EQ_U64(inl[0].line, marker_line("INLINED_CALL"));
		CHECK(strstr(call_file, "test_offcpu.c") != NULL);
		CHECK_EQ_U64(call_line, marker_line("OUTER_CALL"));
	}
	CHECK_EQ_U64(proc_syms__inlined(ps, here, inl, 4, NULL, 0, NULL, NULL), 0);   /* nothing inlined */
	/* nothing inlined: the function's own line is the line table's */
	uint32_t here_line = 0;
	proc_syms__line(ps, here, buf, sizeof(buf), &here_line);
	CHECK_EQ_U64(proc_syms__inlined(ps, here, inl, 4, call_file, sizeof(call_file), &call_line, NULL), 0);
	CHECK_EQ_U64(call_line, here_line);
	CHECK(strstr(call_file, "test_offcpu.c") != NULL);
	proc_syms__free(ps);
	unlink(path);
}

/* The blocking analysis: per task and cause, parked intervals apart,
 * folded lines with the task first and the frames outermost first. */
static void test_blocking_analysis(void)
{
	static const struct as_frame frames[] = {
		{ 0xffffffffc0000000ull, "_einittext" },       /* the BPF program */
		{ 0xffffffff81000100ull, "__schedule" },
		{ 0xffffffff81000200ull, "schedule" },
		{ 0xffffffff81a00010ull, "do_nanosleep" },
		{ 0xffffffff81a00200ull, "hrtimer_nanosleep" },
		{ 0x7f0000001000ull, "clock_nanosleep" },
		{ 0x555500001000ull, "std::thread::sleep" },
		{ 0x555500002000ull, "app::step::{{closure}}" },
		{ 0x555500003000ull, "tokio::runtime::task::raw::poll" },
	};
	const struct as_stack sleep = { .id = 1, .n_kernel = 5, .n_user = 4, .frames = frames };
	const struct as_stack futex = { .id = 2, .n_kernel = 0, .n_user = 0, .frames = frames };
	struct blocking *b = blocking__new(&meta);
	const uint64_t A = 0x1000, B = 0x2000;
	struct as_event evs[] = {
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 1, .task = A, .other = 3, .probe = 0 },
		{ .type = AS_EV_OFFCPU, .tid = 1, .ts = 2, .task = A, .other = 50000000, .stack = 1 },
		{ .type = AS_EV_OFFCPU, .tid = 1, .ts = 3, .task = A, .other = 30000000, .stack = 1 },
		{ .type = AS_EV_OFFCPU, .tid = 1, .ts = 4, .task = A, .other = 1000000, .stack = 2,
		  .flags = AS_OFFCPU_PREEMPTED },
		{ .type = AS_EV_POLL_END, .tid = 1, .ts = 5, .task = A },
		{ .type = AS_EV_PARK, .tid = 2, .ts = 6 },
		{ .type = AS_EV_OFFCPU, .tid = 2, .ts = 7, .task = B, .other = 900000000, .stack = 2 },
		{ .type = AS_EV_UNPARK, .tid = 2, .ts = 8 },
		{ .type = AS_EV_OFFCPU, .tid = 2, .ts = 9, .task = B, .other = 2000000, .stack = 2 },
	};
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		CHECK_EQ_U64(blocking__add(b, &evs[i], evs[i].stack == 1 ? &sleep :
					   evs[i].stack == 2 ? &futex : NULL), 0);
	const struct blocking_summary *s = blocking__summary(b);
	CHECK_EQ_U64(s->ns, 83000000);
	CHECK_EQ_U64(s->count, 4);
	CHECK_EQ_U64(s->parked_ns, 900000000);
	CHECK_EQ_U64(s->parked_count, 1);
	CHECK_EQ_U64(s->tasks, 2);
	size_t n;
	const struct blocking_task *t = blocking__tasks(b, &n);
	CHECK_EQ_U64(n, 2);
	if (n == 2) {
		CHECK_EQ_U64(t[0].task, A);
		CHECK_STR(t[0].name, "sleeper_in_poll::blocker");
		CHECK_EQ_U64(t[0].tokio_id, 3);
		CHECK_EQ_U64(t[0].ns, 81000000);
		CHECK_EQ_U64(t[0].preempted_ns, 1000000);
		CHECK_EQ_U64(t[0].n_causes, 2);
		CHECK_STR(t[0].causes[0].kernel, "do_nanosleep");
		CHECK_STR(t[0].causes[0].user, "app::step::{{closure}}");
		CHECK_EQ_U64(t[0].causes[0].count, 2);
		CHECK_EQ_U64(t[0].causes[0].ns, 80000000);
		/* the call the program's frame made, and no preempted time */
		CHECK_STR(t[0].causes[0].call, "std::thread::sleep");
		CHECK_EQ_U64(t[0].causes[0].preempted_ns, 0);
		CHECK_STR(t[0].causes[1].kernel, "?");
		CHECK(t[0].causes[1].call == NULL);
		CHECK_EQ_U64(t[0].causes[1].preempted_ns, 1000000);
		CHECK_STR(t[1].name, "?");
		CHECK_EQ_U64(t[1].ns, 2000000);
	}
	const struct blocking_folded *l = blocking__folded(b, &n);
	CHECK_EQ_U64(n, 3);
	if (n == 3) {
		/* the runtime's frames leading to the task's code are folded away */
		CHECK_STR(l[0].stack, "sleeper_in_poll::blocker;"
			  "app::step::{{closure}};std::thread::sleep;clock_nanosleep;"
			  "hrtimer_nanosleep;do_nanosleep;schedule;__schedule");
		CHECK_EQ_U64(l[0].ns, 80000000);
		CHECK_EQ_U64(l[0].own, 1);      /* app::step::{{closure}} */
		CHECK_EQ_U64(l[0].kernel, 4);   /* hrtimer_nanosleep */
		CHECK_STR(l[1].stack, "?");
		CHECK_EQ_U64(l[1].ns, 2000000);
	}
	CHECK_EQ_U64(blocking__add(b, NULL, NULL), -EINVAL);
	CHECK_EQ_U64(blocking__set_fold(b, STACK_FOLD_ALL), -EINVAL);   /* too late */
	blocking__free(b);
	/* --all-frames: every frame */
	b = blocking__new(&meta);
	CHECK_EQ_U64(blocking__set_fold(b, STACK_FOLD_ALL), 0);
	for (size_t i = 0; i < 3; i++)
		CHECK_EQ_U64(blocking__add(b, &evs[i], &sleep), 0);
	l = blocking__folded(b, &n);
	CHECK_EQ_U64(n, 1);
	if (n == 1) {
		CHECK_STR(l[0].stack, "sleeper_in_poll::blocker;tokio::runtime::task::raw::poll;"
			  "app::step::{{closure}};std::thread::sleep;clock_nanosleep;"
			  "hrtimer_nanosleep;do_nanosleep;schedule;__schedule");
		CHECK_EQ_U64(l[0].own, 2);
		CHECK_EQ_U64(l[0].kernel, 5);
	}
	blocking__free(b);
	/* nothing off CPU */
	b = blocking__new(&meta);
	CHECK(blocking__tasks(b, &n) != NULL);
	CHECK_EQ_U64(n, 0);
	blocking__folded(b, &n);
	CHECK_EQ_U64(n, 0);
	blocking__free(b);
	blocking__free(NULL);

	/* a worker's own loop: its launch task W polls task U; W's intervals
	 * outside U's polls (one before W is known to be a worker, one after)
	 * are the runtime's, not counted; U's is */
	const uint64_t W = 0x3000, U = 0x4000;
	b = blocking__new(&meta);
	struct as_event wevs[] = {
		{ .type = AS_EV_POLL_BEGIN, .tid = 3, .ts = 1, .task = W, .probe = 0 },
		{ .type = AS_EV_OFFCPU, .tid = 3, .ts = 2, .task = W, .other = 100000, .stack = 1 },
		{ .type = AS_EV_POLL_BEGIN, .tid = 3, .ts = 3, .task = U, .probe = 0 },
		{ .type = AS_EV_OFFCPU, .tid = 3, .ts = 4, .task = U, .other = 5000000, .stack = 1 },
		{ .type = AS_EV_POLL_END, .tid = 3, .ts = 5, .task = U },
		{ .type = AS_EV_OFFCPU, .tid = 3, .ts = 6, .task = W, .other = 200000, .stack = 2 },
	};
	for (size_t i = 0; i < sizeof(wevs) / sizeof(wevs[0]); i++)
		CHECK_EQ_U64(blocking__add(b, &wevs[i], wevs[i].stack == 1 ? &sleep : &futex), 0);
	t = blocking__tasks(b, &n);
	CHECK_EQ_U64(n, 1);
	if (n == 1)
		CHECK_EQ_U64(t[0].task, U);
	s = blocking__summary(b);
	CHECK_EQ_U64(s->ns, 5000000);
	CHECK_EQ_U64(s->count, 1);
	CHECK_EQ_U64(s->tasks, 1);
	CHECK_EQ_U64(s->runtime_ns, 300000);
	CHECK_EQ_U64(s->runtime_count, 2);
	CHECK_EQ_U64(s->parked_count, 0);
	blocking__folded(b, &n);
	CHECK_EQ_U64(n, 1);
	blocking__free(b);

	/* the wait for a CPU after the wakeup: an interval and the thread's
	 * run-queue wait ending at the same switch-in, in either order; a wait
	 * ending elsewhere is not the interval's */
	b = blocking__new(&meta);
	struct as_event qevs[] = {
		{ .type = AS_EV_POLL_BEGIN, .tid = 5, .ts = 1000, .task = A, .probe = 0 },
		/* off 2 us .. 50.002 ms, woken at 48.002 ms: 2 ms waiting */
		{ .type = AS_EV_OFFCPU, .tid = 5, .ts = 2000, .task = A, .other = 50000000, .stack = 1 },
		{ .type = AS_EV_RUNQ, .tid = 5, .ts = 48002000, .task = A, .other = 2000000 },
		/* the run-queue record first: off 60000000..+30 ms, woken 1 ms before */
		{ .type = AS_EV_RUNQ, .tid = 5, .ts = 89000000, .task = A, .other = 1000000 },
		{ .type = AS_EV_OFFCPU, .tid = 5, .ts = 60000000, .task = A, .other = 30000000, .stack = 1 },
		/* a wait ending 5 ms after the interval: another switch */
		{ .type = AS_EV_OFFCPU, .tid = 5, .ts = 100000000, .task = A, .other = 10000000, .stack = 1 },
		{ .type = AS_EV_RUNQ, .tid = 5, .ts = 112000000, .task = A, .other = 3000000 },
		{ .type = AS_EV_POLL_END, .tid = 5, .ts = 200000000, .task = A },
	};
	for (size_t i = 0; i < sizeof(qevs) / sizeof(qevs[0]); i++)
		CHECK_EQ_U64(blocking__add(b, &qevs[i], qevs[i].stack ? &sleep : NULL), 0);
	t = blocking__tasks(b, &n);
	CHECK_EQ_U64(n, 1);
	if (n == 1) {
		CHECK_EQ_U64(t[0].ns, 90000000);
		CHECK_EQ_U64(t[0].runnable_ns, 2000000 + 1000000);
		CHECK_EQ_U64(t[0].n_causes, 1);
		if (t[0].n_causes == 1)
			CHECK_EQ_U64(t[0].causes[0].runnable_ns, 3000000);
	}
	CHECK_EQ_U64(blocking__summary(b)->runnable_ns, 3000000);
	blocking__free(b);

	/* with future frames (record --futures): the chain polled at the switch
	 * joins the cause and the folded line, and goes with the frame's exit */
	static struct as_probe fprobes[] = {
		{ .role = AS_ROLE_POLL, .symbol = "tokio::runtime::task::raw::poll", .future = "app::main" },
		{ .role = AS_ROLE_FUTURE, .symbol = "app::handler::{{closure}}", .future = "app::handler" },
		{ .role = AS_ROLE_FUTURE, .symbol = "app::step::{{closure}}", .future = "app::step" },
	};
	const struct as_trace_meta fmeta = { .probes = fprobes, .n_probes = 3 };
	b = blocking__new(&fmeta);
	struct as_event fevs[] = {
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 1, .task = A, .probe = 0 },
		{ .type = AS_EV_FUTURE_ENTER, .tid = 1, .ts = 2, .task = A, .probe = 1, .other = 0 },
		{ .type = AS_EV_FUTURE_ENTER, .tid = 1, .ts = 3, .task = A, .probe = 2, .other = 1 },
		{ .type = AS_EV_OFFCPU, .tid = 1, .ts = 4, .task = A, .other = 7000, .stack = 1 },
		{ .type = AS_EV_FUTURE_EXIT, .tid = 1, .ts = 5, .task = A, .probe = 2, .other = 1 },
		{ .type = AS_EV_OFFCPU, .tid = 1, .ts = 6, .task = A, .other = 5000, .stack = 1 },
		{ .type = AS_EV_FUTURE_EXIT, .tid = 1, .ts = 7, .task = A, .probe = 1, .other = 0 },
		{ .type = AS_EV_OFFCPU, .tid = 1, .ts = 8, .task = A, .other = 3000, .stack = 1 },
		{ .type = AS_EV_POLL_END, .tid = 1, .ts = 9, .task = A },
	};
	for (size_t i = 0; i < sizeof(fevs) / sizeof(fevs[0]); i++)
		CHECK_EQ_U64(blocking__add(b, &fevs[i], fevs[i].stack == 1 ? &sleep : NULL), 0);
	t = blocking__tasks(b, &n);
	CHECK_EQ_U64(n, 1);
	if (n == 1) {
		CHECK_EQ_U64(t[0].n_causes, 3);
		if (t[0].n_causes == 3) {
			CHECK_STR(t[0].causes[0].futures, "app::handler;app::step");
			CHECK_EQ_U64(t[0].causes[0].ns, 7000);
			CHECK_STR(t[0].causes[1].futures, "app::handler");
			CHECK(t[0].causes[2].futures == NULL);
		}
	}
	l = blocking__folded(b, &n);
	CHECK_EQ_U64(n, 3);
	if (n == 3)
		CHECK_STR(l[0].stack, "app::main;app::handler;app::step;"
			  "app::step::{{closure}};std::thread::sleep;clock_nanosleep;"
			  "hrtimer_nanosleep;do_nanosleep;schedule;__schedule");
	if (n == 3)
		CHECK_EQ_U64(l[0].own, 3);   /* after the task and its two future frames */
	blocking__free(b);

	/* a thread first seen deep inside futures (entries lost, or recorded
	 * from the middle): the levels never entered are unknown, not garbage */
	b = blocking__new(&fmeta);
	struct as_event gevs[] = {
		{ .type = AS_EV_POLL_BEGIN, .tid = 2, .ts = 1, .task = B, .probe = 0 },
		{ .type = AS_EV_FUTURE_ENTER, .tid = 2, .ts = 2, .task = B, .probe = 2, .other = 2 },
		{ .type = AS_EV_OFFCPU, .tid = 2, .ts = 3, .task = B, .other = 1000, .stack = 1 },
	};
	for (size_t i = 0; i < sizeof(gevs) / sizeof(gevs[0]); i++)
		CHECK_EQ_U64(blocking__add(b, &gevs[i], gevs[i].stack == 1 ? &sleep : NULL), 0);
	t = blocking__tasks(b, &n);
	CHECK_EQ_U64(n, 1);
	if (n == 1 && t[0].n_causes == 1)
		CHECK_STR(t[0].causes[0].futures, "?;?;app::step");
	blocking__free(b);
}

int main(void)
{
	RUN(test_dedup);
	RUN(test_roundtrip);
	RUN(test_older_versions);
	RUN(test_kallsyms);
	RUN(test_proc_syms);
	RUN(test_blocking_analysis);
	TEST_MAIN_END();
}
