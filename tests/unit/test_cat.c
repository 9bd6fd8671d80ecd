/* Unit tests for the CAT / uftrace dump format (src/cat/: names, rules,
 * lines, the reader and the writer, also as a source through
 * source_open_file() and as a sink through pipeline_run()): that the
 * runtime functions CAT names agree with probe/profile.c's; uftrace's spelling of
 * Rust names both ways, header escaping, a CAT log with no asyncscope header
 * (polls by name, futures by CAT's patterns, unknown lines counted),
 * grouping per thread, exact round trips of the recorded fixtures and of
 * synthetic streams (future frames, wakes that the call stacks do not
 * explain, out-of-order threads, address reuse, truncation), one-line errors
 * with line numbers, and a little fuzzing (cut files, flipped bytes) that
 * must never crash (the test binaries run under ASan/UBSan). Run from the
 * repository root. */
#include <errno.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "pipe_from.h"
#include "cat/lines.h"
#include "cat/names.h"
#include "cat/reader.h"
#include "cat/rules.h"
#include "cat/writer.h"
#include "pipeline/pipeline.h"
#include "pipeline/source_file.h"
#include "probe/profile.h"   /* only to check CAT's own table against it */
#include "sym/demangle.h"
#include "trace/reader.h"

/* ---- helpers ---- */

struct evs {
	struct as_event *ev;
	size_t n, cap;
};

static void evs_push(struct evs *v, const struct as_event *ev)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 256;
		v->ev = realloc(v->ev, v->cap * sizeof(*v->ev));
	}
	v->ev[v->n] = *ev;
	v->ev[v->n].str = ev->str ? strdup(ev->str) : NULL;
	v->n++;
}

static void evs_free(struct evs *v)
{
	for (size_t i = 0; i < v->n; i++)
		free((char *)v->ev[i].str);
	free(v->ev);
	memset(v, 0, sizeof(*v));
}

/* Writes events (all of them, in order) as CAT text into a new temporary
 * file; returns its path (caller unlinks and frees). */
static char *write_cat(const struct as_trace_meta *meta, const struct as_event *ev, size_t n,
		       const struct as_trace_end *end, bool truncated, struct cat_writer **keep)
{
	char *path = strdup("/tmp/asyncscope-test-cat.XXXXXX");
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	struct cat_writer *w = cat_writer__new(f, meta);

	CHECK(w != NULL);
	for (size_t i = 0; w && i < n; i++)
		CHECK(cat_writer__add(w, &ev[i]) == 0);
	if (w)
		CHECK(cat_writer__finish(w, end, truncated) == 0);
	fclose(f);
	if (keep)
		*keep = w;
	else
		cat_writer__free(w);
	return path;
}

static struct cat_reader *open_cat(const char *path, char *err, size_t errlen, int *rc)
{
	struct cat_reader *r = NULL;
	FILE *f = fopen(path, "r");
	char head[16];
	size_t n;

	if (!f) {
		*rc = -errno;
		return NULL;
	}
	n = fread(head, 1, sizeof(head), f);
	*rc = cat_reader__open(f, head, n, path, &r, err, errlen);
	if (*rc == 0)
		fclose(f);   /* not CAT: still ours */
	return r;
}

/* Reads a CAT file: returns next()'s last result (0 clean end). */
static int read_cat(const char *path, struct evs *out, struct as_trace_end *end,
		    struct as_trace_meta *meta_copy_pid)
{
	char err[512];
	int rc;
	struct cat_reader *r = open_cat(path, err, sizeof(err), &rc);
	struct as_event ev;

	if (!r) {
		fprintf(stderr, "open: %d %s\n", rc, err);
		return rc ? rc : -EINVAL;
	}
	while ((rc = cat_reader__next(r, &ev)) == 1)
		evs_push(out, &ev);
	if (rc < 0 && rc != -ENODATA)
		fprintf(stderr, "next: %s\n", cat_reader__error(r));
	if (end && cat_reader__end(r))
		*end = *cat_reader__end(r);
	if (meta_copy_pid)
		meta_copy_pid->pid = cat_reader__meta(r)->pid;
	cat_reader__free(r);
	return rc;
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static int compare_events(const struct evs *a, const struct evs *b)
{
	if (a->n != b->n) {
		fprintf(stderr, "    %zu events, expected %zu\n", b->n, a->n);
		return 1;
	}
	for (size_t i = 0; i < a->n; i++) {
		const struct as_event *x = &a->ev[i], *y = &b->ev[i];
		if (x->type != y->type || x->flags != y->flags || x->probe != y->probe ||
		    x->tid != y->tid || x->ts != y->ts || x->task != y->task ||
		    x->other != y->other || !same_str(x->str, y->str) || y->stack) {
			fprintf(stderr, "    event %zu differs: type %u/%u flags %u/%u probe %u/%u "
				"tid %u/%u ts %llu/%llu task %llx/%llx other %llx/%llx str %s/%s\n", i,
				x->type, y->type, x->flags, y->flags, x->probe, y->probe, x->tid,
				y->tid, (unsigned long long)x->ts, (unsigned long long)y->ts,
				(unsigned long long)x->task, (unsigned long long)y->task,
				(unsigned long long)x->other, (unsigned long long)y->other,
				x->str ? x->str : "-", y->str ? y->str : "-");
			return 1;
		}
	}
	return 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int c;

	while (f && (c = getc(f)) != EOF)
		putc(c, m);
	fclose(m);
	if (f)
		fclose(f);
	return buf;
}

static char *write_bytes(const char *text, size_t n)
{
	char *path = strdup("/tmp/asyncscope-test-cat.XXXXXX");
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	fwrite(text, 1, n, f);
	fclose(f);
	return path;
}

static char *write_text(const char *text)
{
	return write_bytes(text, strlen(text));
}

/* ---- names ---- */

static void check_spelling(const char *rust, const char *uft)
{
	char *a = cat_spell(rust), *b = cat_unspell(uft), *c = cat_unspell(a);
	CHECK_STR(a, uft);
	CHECK_STR(b, rust);
	CHECK_STR(c, rust);
	free(a);
	free(b);
	free(c);
}

static void test_spelling(void)
{
	check_spelling("<async_std::task::builder::SupportTaskLocals<F> as core::future::future::Future>::poll::{{closure}}",
		       "_<async_std..task..builder..SupportTaskLocals<F> as core..future..future..Future>::poll::_{{closure}}");
	check_spelling("<core::future::from_generator::GenFuture<T> as core::future::future::Future>::poll",
		       "_<core..future..from_generator..GenFuture<T> as core..future..future..Future>::poll");
	check_spelling("std::rt::lang_start::{{closure}}", "std::rt::lang_start::_{{closure}}");
	check_spelling("once_cell::imp::initialize_or_wait::{{closure}}",
		       "once_cell::imp::initialize_or_wait::_{{closure}}");
	check_spelling("core::ptr::drop_in_place<alloc::boxed::Box<app::main::{{closure}}>>",
		       "core::ptr::drop_in_place<alloc..boxed..Box<app..main..{{closure}}>>");
	check_spelling("tokio::runtime::scheduler::multi_thread::worker::<impl tokio::runtime::scheduler::multi_thread::handle::Handle>::schedule_task",
		       "tokio::runtime::scheduler::multi_thread::worker::_<impl tokio..runtime..scheduler..multi_thread..handle..Handle>::schedule_task");
	check_spelling("app::f<fn() -> u8, a::B>::g::{closure#0}", "app::f<fn() -> u8, a..B>::g::_{closure#0}");
	check_spelling("tokio::runtime::task::harness::Harness<T,S>::complete",
		       "tokio::runtime::task::harness::Harness<T,S>::complete");
	check_spelling("", "");
	check_spelling("main", "main");
	/* an unbalanced '>' never makes the depth negative */
	char *x = cat_spell("a::b>::c::{{closure}}");
	CHECK_STR(x, "a::b>::c::_{{closure}}");
	free(x);
}

static void test_escape(void)
{
	char *buf = NULL, *back = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	const char *s = "a b%c\n<entry> exit reading \x01\xc3\xa9";

	CHECK(cat_escape(m, s) == 0);
	fclose(m);
	CHECK(!strchr(buf, ' ') && !strchr(buf, '\n'));
	CHECK(!strstr(buf, "entry") && !strstr(buf, "exit") && !strstr(buf, "reading"));
	CHECK(cat_unescape(buf, strlen(buf), &back) == 0);
	CHECK_STR(back, s);
	free(back);
	free(buf);
	CHECK(cat_unescape("a%2", 3, &back) == -EINVAL && !back);
	CHECK(cat_unescape("a%zz", 4, &back) == -EINVAL);
	CHECK(cat_unescape("a%00b", 5, &back) == -EINVAL);
	CHECK(cat_unescape("%41%42", 6, &back) == 0);
	CHECK_STR(back, "AB");
	free(back);
}

/* ---- a CAT log with no asyncscope header ---- */

static const char cat_log[] =
	"uftrace file header: magic         = 4674726163652100\n"
	"uftrace file header: version       = 4\n"
	"\n"
	"reading 5257.dat\n"
	"408.532238273   5257: [entry] std::rt::lang_start::_{{closure}}(636a04ffabb5) depth: 0\n"
	"408.532242401   5257: [entry] once_cell::imp::initialize_or_wait::_{{closure}}(636a05068c15) depth: 1\n"
	"408.532243204   5257: [exit ] once_cell::imp::initialize_or_wait::_{{closure}}(636a05068c15) depth: 1\n"
	"408.532243300   5257: [exit ] std::rt::lang_start::_{{closure}}(636a04ffabb5) depth: 0\n"
	"reading 5260.dat\n"
	"408.532240000   5260: [entry] _<async_std..task..builder..SupportTaskLocals<F> as core..future..future..Future>::poll::_{{closure}}(636a05000010) depth: 3\n"
	"408.532240100   5260: [entry] _<core..future..from_generator..GenFuture<T> as core..future..future..Future>::poll(636a05000020) depth: 4\n"
	"408.532240200   5260: [entry] block_example::async_main::_{{closure}}(636a05000030) depth: 5\n"
	"408.532240300   5260: [entry] block_example::helper::_{{closure}}(636a05000040) depth: 6\n"
	"  args[0] i32: 0x00000001\n"
	"408.532240400   5260: [exit ] block_example::helper::_{{closure}}(636a05000040) depth: 6\n"
	"408.532240500   5260: [exit ] block_example::async_main::_{{closure}}(636a05000030) depth: 5\n"
	"408.532240600   5260: [exit ] _<core..future..from_generator..GenFuture<T> as core..future..future..Future>::poll(636a05000020) depth: 4\n"
	"408.532240700   5260: [exit ] _<async_std..task..builder..SupportTaskLocals<F> as core..future..future..Future>::poll::_{{closure}}(636a05000010) depth: 3\n"
	"408.532240800   5260: [entry] std::thread::park(636a05000050) depth: 3\n"
	"408.532240900   5260: [exit ] std::thread::park(636a05000050) depth: 3\n"
	"408.532241000   5260: [lost ]: 7 events\n"
	"408.532241100   5260: [event] sched-out(100001) depth: 0\n"
	"something uftrace printed\n"
	"\n"
	"reading kernel-cpu0.dat\n"
	"408.532241200   5260: [entry] schedule(ffffffff81000000) depth: 0\n";

static void test_foreign(void)
{
	char *path = write_text(cat_log), err[512];
	struct evs v = { 0 };
	struct as_event ev;
	int rc;
	struct cat_reader *r = open_cat(path, err, sizeof(err), &rc);

	CHECK(rc == 1 && r);
	if (!r)
		goto out;
	const struct as_trace_meta *m = cat_reader__meta(r);
	const struct cat_stats *st = cat_reader__stats(r);
	CHECK(!st->asyncscope);
	CHECK_EQ_U64(st->sections, 3);
	CHECK_EQ_U64(st->header_lines, 2);
	CHECK_EQ_U64(st->lost_lines, 1);
	/* [event], the free text line, the kernel section's line */
	CHECK_EQ_U64(st->unknown_lines, 3);
	CHECK_EQ_U64(st->skipped_functions, 2);   /* std::thread::park entry and exit */
	CHECK_EQ_U64(m->pid, 5257);
	CHECK(!strncmp(m->target, "(uftrace dump ", 14) && strstr(m->target, path));
	CHECK_STR(m->runtime, "async-std");
	CHECK_EQ_U64(m->clock_mono_ns, 408532238273ULL);
	while ((rc = cat_reader__next(r, &ev)) == 1)
		evs_push(&v, &ev);
	CHECK(rc == 0);
	const struct as_trace_end *end = cat_reader__end(r);
	CHECK(end && end->lost == 7 && end->missed == 2 && end->end_ns == 408532243300ULL);
	/* merged by time: 5257's first frame, then 5260's poll ... */
	CHECK_EQ_U64(v.n, 12);
	if (v.n != 12)
		goto out;
	CHECK(v.ev[0].type == AS_EV_FUTURE_ENTER && v.ev[0].tid == 5257 && v.ev[0].other == 0 &&
	      v.ev[0].task == 0);
	CHECK(v.ev[1].type == AS_EV_POLL_BEGIN && v.ev[1].tid == 5260 &&
	      v.ev[1].task == 0x636a05000010ULL);
	const struct as_probe *pp = &m->probes[v.ev[1].probe];
	CHECK(pp->role == AS_ROLE_POLL);
	CHECK_STR(pp->symbol, "<async_std::task::builder::SupportTaskLocals<F> as core::future::future::Future>::poll::{{closure}}");
	/* named by the first closure it runs */
	CHECK_STR(pp->future, "block_example::async_main");
	CHECK(v.ev[2].type == AS_EV_FUTURE_ENTER && v.ev[2].other == 0 &&
	      v.ev[2].task == 0x636a05000010ULL);
	CHECK(v.ev[3].type == AS_EV_FUTURE_ENTER && v.ev[3].other == 1);
	CHECK_STR(m->probes[v.ev[3].probe].future, "block_example::async_main");
	CHECK(v.ev[4].type == AS_EV_FUTURE_ENTER && v.ev[4].other == 2);
	CHECK(v.ev[5].type == AS_EV_FUTURE_EXIT && v.ev[5].other == 2 && v.ev[5].flags == 0);
	CHECK(v.ev[8].type == AS_EV_POLL_END && v.ev[8].task == 0x636a05000010ULL);
	CHECK(v.ev[9].type == AS_EV_FUTURE_ENTER && v.ev[9].tid == 5257 && v.ev[9].other == 1);
	CHECK(v.ev[11].type == AS_EV_FUTURE_EXIT && v.ev[11].other == 0);
	/* one probe per distinct name and address */
	CHECK_EQ_U64(m->n_probes, 6);
out:
	cat_reader__free(r);
	evs_free(&v);
	unlink(path);
	free(path);
}

static void test_foreign_tokio(void)
{
	/* raw::poll jumps into Harness::poll: one poll; Harness::complete inside
	 * marks it Ready; park_timeout is a park */
	const char *text =
		"reading 10.dat\n"
		"1.000000000     10: [entry] tokio::runtime::task::raw::poll(5000) depth: 0\n"
		"1.000000100     10: [entry] tokio::runtime::task::harness::Harness<T,S>::poll(5100) depth: 1\n"
		"1.000000200     10: [entry] app::handler::_{{closure}}(6000) depth: 2\n"
		"1.000000300     10: [exit ] app::handler::_{{closure}}(6000) depth: 2\n"
		"1.000000400     10: [entry] tokio::runtime::task::harness::Harness<T,S>::complete(5200) depth: 2\n"
		"1.000000500     10: [exit ] tokio::runtime::task::harness::Harness<T,S>::complete(5200) depth: 2\n"
		"1.000000600     10: [exit ] tokio::runtime::task::harness::Harness<T,S>::poll(5100) depth: 1\n"
		"1.000000700     10: [exit ] tokio::runtime::task::raw::poll(5000) depth: 0\n"
		"1.000000800     10: [entry] tokio::runtime::scheduler::multi_thread::worker::Context::park_timeout(7000) depth: 0\n"
		"2.000000000     10: [exit ] tokio::runtime::scheduler::multi_thread::worker::Context::park_timeout(7000) depth: 0\n";
	char *path = write_text(text);
	struct evs v = { 0 };
	struct as_trace_end end = { 0 };

	CHECK(read_cat(path, &v, &end, NULL) == 0);
	CHECK_EQ_U64(v.n, 6);
	if (v.n == 6) {
		CHECK(v.ev[0].type == AS_EV_POLL_BEGIN && v.ev[0].task == 0x5000);
		CHECK(v.ev[1].type == AS_EV_FUTURE_ENTER && v.ev[1].task == 0x5000);
		CHECK(v.ev[2].type == AS_EV_FUTURE_EXIT);
		CHECK(v.ev[3].type == AS_EV_POLL_END && v.ev[3].flags == AS_POLL_READY);
		CHECK(v.ev[4].type == AS_EV_PARK && v.ev[5].type == AS_EV_UNPARK &&
		      v.ev[5].ts == 2000000000ULL);
	}
	CHECK(end.end_ns == 2000000000ULL && end.missed == 0);
	evs_free(&v);
	unlink(path);
	free(path);
}

/* A CAT log read and written again by asyncscope reads back the same. */
static void test_foreign_reexport(void)
{
	char *path = write_text(cat_log), err[512], *again = NULL;
	struct evs first = { 0 }, second = { 0 };
	struct as_event ev;
	int rc;
	struct cat_reader *r = open_cat(path, err, sizeof(err), &rc);

	CHECK(r != NULL);
	if (!r)
		goto out;
	while ((rc = cat_reader__next(r, &ev)) == 1)
		evs_push(&first, &ev);
	CHECK(rc == 0);
	again = write_cat(cat_reader__meta(r), first.ev, first.n, cat_reader__end(r), false, NULL);
	struct as_trace_end end = { 0 };
	CHECK(read_cat(again, &second, &end, NULL) == 0);
	CHECK(compare_events(&first, &second) == 0);
	CHECK(end.lost == 7 && end.missed == 2);
out:
	cat_reader__free(r);
	evs_free(&first);
	evs_free(&second);
	if (again)
		unlink(again);
	free(again);
	unlink(path);
	free(path);
}

/* ---- round trips ---- */

/* Synthetic meta: the probes of a Tokio program and three futures. */
static struct as_probe probes[] = {
	{ .role = AS_ROLE_POLL, .addr = 0x2b1e0, .symbol = "tokio::runtime::task::raw::poll", .future = "app::main::{async_block#0}" },
	{ .role = AS_ROLE_POLL, .addr = 0x2b1f0, .symbol = "tokio::runtime::task::raw::poll", .future = "app::main::{async_block#0}" },
	{ .role = AS_ROLE_POLL, .addr = 0x2b200, .symbol = "tokio::runtime::task::raw::poll", .future = NULL },
	{ .role = AS_ROLE_READY, .addr = 0x28960, .symbol = "tokio::runtime::task::harness::Harness<T,S>::complete" },
	{ .role = AS_ROLE_WAKE, .addr = 0x3b8d0, .symbol = "tokio::runtime::task::waker::wake_by_val" },
	{ .role = AS_ROLE_SPAWN, .addr = 0x47070, .symbol = "tokio::runtime::handle::Handle::current" },
	{ .role = AS_ROLE_FREE, .addr = 0x27160, .symbol = "core::ptr::drop_in_place<alloc::boxed::Box<tokio::runtime::task::core::Cell<app::main::{{closure}},alloc::sync::Arc<tokio::runtime::scheduler::current_thread::Handle>>>>" },
	{ .role = AS_ROLE_PARK, .addr = 0x32770, .symbol = "tokio::runtime::scheduler::multi_thread::worker::Context::park_timeout" },
	{ .role = AS_ROLE_IO_DRIVER, .addr = 0x33000, .symbol = "tokio::runtime::io::driver::Driver::turn" },
	{ .role = AS_ROLE_TIMER, .addr = 0x3f0c0, .symbol = "tokio::runtime::time::<impl tokio::runtime::time::handle::Handle>::process_at_time" },
	{ .role = AS_ROLE_USDT, .addr = 0x50000, .symbol = "app:tick" },
	{ .role = AS_ROLE_FUTURE, .addr = 0x60000, .symbol = "app::handler::{{closure}}", .future = "app::handler",
	  .src_file = "src/main.rs", .src_line = 10 },
	{ .role = AS_ROLE_FUTURE, .addr = 0x61000, .symbol = "app::level2::{{closure}}", .future = "app::level2",
	  .src_file = "src/main.rs", .src_line = 20 },
	{ .role = AS_ROLE_FUTURE, .addr = 0x62000, .symbol = "<app::Leaf as core::future::future::Future>::poll",
	  .future = NULL },
};
static uint32_t awaits0[] = { 12, 14, 15 };
static char *await_types0[] = { "tokio::time::Sleep", NULL, "std::collections::HashMap<K, V> entry" };

static struct as_trace_meta synth_meta(void)
{
	probes[11].await_lines = awaits0;
	probes[11].await_types = await_types0;
	probes[11].n_awaits = 3;
	return (struct as_trace_meta){
		.format_version = 7, .pid = 4242, .target = "/bin/app with space", .build_id = "ab12",
		.runtime = "tokio", .cmdline = "app --entry x", .clock_mono_ns = 1000000000ULL,
		.clock_real_ns = 1700000000000000000ULL, .probes = probes,
		.n_probes = sizeof(probes) / sizeof(probes[0]),
	};
}

#define E(...) ((struct as_event){ __VA_ARGS__ })
#define T0 1000000000ULL

static size_t synth_events(struct as_event *e)
{
	size_t n = 0;
	/* main thread: spawn two tasks, the timer wakes one, a waker outside any poll */
	e[n++] = E(.type = AS_EV_THREAD, .tid = 100, .ts = T0 + 10, .str = "app");
	e[n++] = E(.type = AS_EV_SPAWN, .tid = 100, .ts = T0 + 20, .probe = 5, .str = "src/main.rs", .other = 5ULL << 32 | 9);
	e[n++] = E(.type = AS_EV_WAKE, .tid = 100, .ts = T0 + 21, .probe = 4, .task = 0xa000);
	e[n++] = E(.type = AS_EV_SPAWN, .tid = 100, .ts = T0 + 30, .probe = 5, .str = "src/main.rs", .other = 6ULL << 32 | 9);
	e[n++] = E(.type = AS_EV_WAKE, .tid = 100, .ts = T0 + 31, .probe = 4, .task = 0xb000);
	/* worker 1: polls task a with nested futures, Pending at an await */
	e[n++] = E(.type = AS_EV_THREAD, .tid = 101, .ts = T0 + 40, .str = "tokio-runtime-w");
	e[n++] = E(.type = AS_EV_POLL_BEGIN, .tid = 101, .ts = T0 + 41, .probe = 0, .task = 0xa000, .other = 1);
	e[n++] = E(.type = AS_EV_FUTURE_ENTER, .tid = 101, .ts = T0 + 42, .probe = 11, .task = 0xa000, .other = 0);
	e[n++] = E(.type = AS_EV_FUTURE_ENTER, .tid = 101, .ts = T0 + 43, .probe = 12, .task = 0xa000, .other = 1);
	e[n++] = E(.type = AS_EV_FUTURE_ENTER, .tid = 101, .ts = T0 + 44, .probe = 13, .task = 0xa000, .other = 2);
	e[n++] = E(.type = AS_EV_FUTURE_EXIT, .tid = 101, .ts = T0 + 45, .probe = 13, .task = 0xa000, .other = 2, .flags = AS_FUTURE_PENDING);
	e[n++] = E(.type = AS_EV_FUTURE_EXIT, .tid = 101, .ts = T0 + 46, .probe = 12, .task = 0xa000, .other = AS_FUT_OTHER(1, 5), .flags = AS_FUTURE_PENDING);
	e[n++] = E(.type = AS_EV_FUTURE_EXIT, .tid = 101, .ts = T0 + 47, .probe = 11, .task = 0xa000, .other = AS_FUT_OTHER(0, 4), .flags = AS_FUTURE_PENDING);
	e[n++] = E(.type = AS_EV_USDT, .tid = 101, .ts = T0 + 48, .probe = 10, .task = 0xa000, .other = (uint64_t)-5);
	e[n++] = E(.type = AS_EV_POLL_END, .tid = 101, .ts = T0 + 49, .probe = 0, .task = 0xa000);
	/* worker 2, out of order with worker 1 by a few ns: polls b, Ready, freed */
	e[n++] = E(.type = AS_EV_THREAD, .tid = 102, .ts = T0 + 38, .str = "tokio-runtime-w");
	e[n++] = E(.type = AS_EV_POLL_BEGIN, .tid = 102, .ts = T0 + 39, .probe = 1, .task = 0xb000, .other = 2);
	e[n++] = E(.type = AS_EV_WAKE, .tid = 102, .ts = T0 + 50, .probe = 4, .task = 0xa000, .other = 0xb000);
	e[n++] = E(.type = AS_EV_POLL_END, .tid = 102, .ts = T0 + 51, .probe = 1, .task = 0xb000, .flags = AS_POLL_READY);
	e[n++] = E(.type = AS_EV_FREE, .tid = 102, .ts = T0 + 52, .probe = 6, .task = 0xb000);
	/* a wake by the I/O driver and one by the timer */
	e[n++] = E(.type = AS_EV_WAKE, .tid = 102, .ts = T0 + 53, .probe = 4, .task = 0xa000, .flags = AS_WAKE_IO);
	e[n++] = E(.type = AS_EV_WAKE, .tid = 102, .ts = T0 + 54, .probe = 4, .task = 0xa000, .flags = AS_WAKE_TIMER);
	/* an off-CPU interval: dropped */
	e[n++] = E(.type = AS_EV_OFFCPU, .tid = 102, .ts = T0 + 20, .other = 30);
	/* address b reused by a new task (id 3), equal timestamps across threads */
	e[n++] = E(.type = AS_EV_WAKE, .tid = 100, .ts = T0 + 60, .probe = 4, .task = 0xb000);
	e[n++] = E(.type = AS_EV_POLL_BEGIN, .tid = 102, .ts = T0 + 60, .probe = 1, .task = 0xb000, .other = 3);
	e[n++] = E(.type = AS_EV_PARK, .tid = 101, .ts = T0 + 60, .probe = 7);
	/* a waker that the call stack does not explain (its poll began before the
	 * recording), a future exit without entry, an unpark without park */
	e[n++] = E(.type = AS_EV_WAKE, .tid = 100, .ts = T0 + 61, .probe = 4, .task = 0xa000, .other = 0xdead);
	e[n++] = E(.type = AS_EV_FUTURE_EXIT, .tid = 100, .ts = T0 + 62, .probe = 12, .task = 0, .other = 3, .flags = AS_FUTURE_READY);
	e[n++] = E(.type = AS_EV_UNPARK, .tid = 100, .ts = T0 + 63, .probe = 7);
	/* a poll end whose begin was lost, of a probe with another role (substituted) */
	e[n++] = E(.type = AS_EV_POLL_END, .tid = 102, .ts = T0 + 64, .probe = 1, .task = 0xc000);
	e[n++] = E(.type = AS_EV_FREE, .tid = 102, .ts = T0 + 65, .probe = 4, .task = 0xc000);
	e[n++] = E(.type = AS_EV_POLL_END, .tid = 102, .ts = T0 + 66, .probe = 1, .task = 0xb000, .flags = AS_POLL_READY);
	/* a poll of task 0 with an id: no task id run for it, an [args ] record */
	e[n++] = E(.type = AS_EV_POLL_BEGIN, .tid = 102, .ts = T0 + 67, .probe = 2, .task = 0, .other = 9);
	e[n++] = E(.type = AS_EV_POLL_END, .tid = 102, .ts = T0 + 68, .probe = 2, .task = 0);
	e[n++] = E(.type = AS_EV_UNPARK, .tid = 101, .ts = T0 + 70, .probe = 7);
	/* a second THREAD event for a thread already seen: dropped */
	e[n++] = E(.type = AS_EV_THREAD, .tid = 101, .ts = T0 + 71, .str = "renamed");
	/* a thread with only a THREAD event, and one with a NULL name */
	e[n++] = E(.type = AS_EV_THREAD, .tid = 103, .ts = T0 + 72, .str = NULL);
	e[n++] = E(.type = AS_EV_THREAD, .tid = 104, .ts = T0 + 73, .str = "idle thread");
	/* a task's name: CAT has no line for it, counted as dropped */
	e[n++] = E(.type = AS_EV_SPAWN, .tid = 102, .ts = T0 + 74, .task = 0xb000, .other = 9,
		   .flags = AS_SPAWN_NAME, .str = "named");
	return n;
}

static void test_roundtrip_synthetic(void)
{
	struct as_trace_meta meta = synth_meta();
	struct as_event e[80];
	size_t n = synth_events(e);
	struct as_trace_end end = { .lost = 3, .missed = 1, .end_ns = T0 + 100 }, back_end = { 0 };
	struct cat_writer *w = NULL;
	char *path = write_cat(&meta, e, n, &end, false, &w);
	struct evs want = { 0 }, got = { 0 };
	char err[512];
	int rc;

	CHECK_EQ_U64(cat_writer__dropped(w), 3);
	CHECK_EQ_U64(cat_writer__events(w), n - 3);
	CHECK_EQ_U64(cat_writer__threads(w), 5);
	cat_writer__free(w);
	for (size_t i = 0; i < n; i++)
		if (e[i].type != AS_EV_OFFCPU && !(e[i].type == AS_EV_THREAD && e[i].ts == T0 + 71) &&
		    !(e[i].type == AS_EV_SPAWN && (e[i].flags & AS_SPAWN_NAME)))
			evs_push(&want, &e[i]);
	CHECK(read_cat(path, &got, &back_end, NULL) == 0);
	CHECK(compare_events(&want, &got) == 0);
	CHECK(back_end.lost == 3 && back_end.missed == 1 && back_end.end_ns == T0 + 100 &&
	      back_end.events == want.n);

	/* the meta comes back whole */
	struct cat_reader *r = open_cat(path, err, sizeof(err), &rc);
	CHECK(r != NULL);
	if (r) {
		const struct as_trace_meta *m = cat_reader__meta(r);
		CHECK(cat_reader__stats(r)->asyncscope);
		CHECK(m->format_version == 7 && m->pid == 4242 && m->clock_mono_ns == meta.clock_mono_ns &&
		      m->clock_real_ns == meta.clock_real_ns);
		CHECK_STR(m->target, meta.target);
		CHECK_STR(m->build_id, meta.build_id);
		CHECK_STR(m->runtime, meta.runtime);
		CHECK_STR(m->cmdline, meta.cmdline);
		CHECK_EQ_U64(m->n_probes, meta.n_probes);
		for (uint32_t i = 0; i < m->n_probes && i < meta.n_probes; i++) {
			const struct as_probe *a = &meta.probes[i], *b = &m->probes[i];
			CHECK(a->role == b->role && a->addr == b->addr && a->arg_reg == b->arg_reg &&
			      a->emulated == b->emulated && a->src_line == b->src_line &&
			      a->n_awaits == b->n_awaits && a->self_reg == b->self_reg);
			CHECK_STR(b->symbol, a->symbol);
			CHECK(same_str(a->future, b->future));
			CHECK(same_str(a->src_file, b->src_file));
			CHECK(b->state_off == -1);
			for (uint32_t k = 0; k < a->n_awaits && k < b->n_awaits; k++) {
				CHECK(a->await_lines[k] == b->await_lines[k]);
				CHECK(!a->await_types == !b->await_types);
				if (a->await_types && b->await_types)
					CHECK(same_str(a->await_types[k], b->await_types[k]));
			}
		}
		CHECK(m->probes[11].await_lines && m->probes[11].await_lines[1] == 14);
		CHECK(m->probes[12].await_types == NULL);
		cat_reader__free(r);
	}

	/* what CAT's parser looks at: the sections in order of first appearance,
	 * [entry] / [exit ] lines in time order in each, header lines that match
	 * none of its patterns */
	char *text = slurp(path);
	const char *s1 = strstr(text, "\nreading 100.dat\n"), *s2 = strstr(text, "\nreading 101.dat\n"),
		   *s3 = strstr(text, "\nreading 102.dat\n"), *s4 = strstr(text, "\nreading 103.dat\n");
	CHECK(s1 && s2 && s3 && s4 && s1 < s2 && s2 < s3 && s3 < s4);
	CHECK(strstr(text, "[entry] app::handler::_{{closure}}(60000) depth: 1\n") != NULL);
	CHECK(strstr(text, "[entry] tokio::runtime::task::raw::poll<app..main..{async_block#0}>(a000) depth: 0\n") != NULL);
	CHECK(strstr(text, "[entry] tokio::runtime::task::raw::poll<app..main..{async_block#0}>#1(b000) depth: 0\n") != NULL);
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, "# asyncscope", 12))
			continue;
		const char *nl = strchr(l, '\n');
		char *line = strndup(l, (size_t)(nl - l));
		CHECK(!strstr(line, "entry") && !strstr(line, "exit ]") && !strstr(line, "reading ") &&
		      !strstr(line, "depth: "));
		free(line);
		if (!s1 || l > s1)
			CHECK(!"header line after a section");
	}
	uint64_t last = 0;
	uint32_t tid = 0;
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		unsigned long long sec, ns;
		unsigned t;
		if (sscanf(l, "%llu.%llu %u:", &sec, &ns, &t) != 3)
			continue;
		if (t != tid)
			last = 0;
		tid = t;
		CHECK(sec * 1000000000ULL + ns >= last);
		last = sec * 1000000000ULL + ns;
	}
	free(text);
	evs_free(&want);
	evs_free(&got);
	unlink(path);
	free(path);
}

static void test_truncated(void)
{
	struct as_trace_meta meta = synth_meta();
	struct as_event e[80];
	size_t n = synth_events(e);
	char *path = write_cat(&meta, e, 10, NULL, true, NULL);
	struct evs got = { 0 };

	CHECK(read_cat(path, &got, NULL, NULL) == -ENODATA);
	CHECK_EQ_U64(got.n, 10);
	evs_free(&got);
	unlink(path);
	free(path);

	/* lines removed from the end of a complete file: truncated too */
	path = write_cat(&meta, e, n, &(struct as_trace_end){ .end_ns = T0 + 100 }, false, NULL);
	char *text = slurp(path);
	char *lastnl = strrchr(text, '\n');
	*lastnl = '\0';
	*(strrchr(text, '\n') + 1) = '\0';   /* drop the last line */
	char *p2 = write_text(text);
	CHECK(read_cat(p2, &got, NULL, NULL) == -ENODATA);
	evs_free(&got);
	free(text);
	unlink(p2);
	free(p2);

	/* a line added: more events than the header counts */
	text = slurp(path);
	size_t tl = strlen(text);
	const char *park = "1.000000080    104: [entry] tokio::runtime::scheduler::multi_thread::"
			   "worker::Context::park_timeout(0) depth: 0\n";
	text = realloc(text, tl + strlen(park) + 1);
	strcpy(text + tl, park);
	p2 = write_text(text);
	char err[512];
	int rc;
	CHECK(!open_cat(p2, err, sizeof(err), &rc) && rc == -EBADMSG);
	if (!strstr(err, "events but its header counts"))
		fprintf(stderr, "    %s\n", err);
	CHECK(strstr(err, "its sections hold 37 events but its header counts 36") != NULL);
	free(text);
	unlink(p2);
	free(p2);
	unlink(path);
	free(path);
}

/* A large stream over many threads: spill blocks, the heap, order hints. */
static void test_roundtrip_large(void)
{
	struct as_trace_meta meta = synth_meta();
	size_t n = 120000;
	struct as_event *e = calloc(n, sizeof(*e));
	uint64_t seed = 12345;
	size_t k = 0;

	for (uint32_t t = 0; t < 37; t++)
		e[k++] = E(.type = AS_EV_THREAD, .tid = 1000 + t, .ts = T0 + t, .str = "w");
	while (k < n) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		uint32_t t = (uint32_t)(seed >> 33) % 37;
		/* mostly increasing, with jitter across threads */
		uint64_t ts = T0 + 1000 + k * 10 + (seed >> 20) % 25;
		uint64_t task = 0x10000 + ((seed >> 40) % 500) * 0x100;
		switch ((seed >> 50) % 4) {
		case 0:
			e[k++] = E(.type = AS_EV_POLL_BEGIN, .tid = 1000 + t, .ts = ts, .probe = 0, .task = task, .other = task >> 8);
			break;
		case 1:
			e[k++] = E(.type = AS_EV_POLL_END, .tid = 1000 + t, .ts = ts, .probe = 0, .task = task);
			break;
		case 2:
			e[k++] = E(.type = AS_EV_WAKE, .tid = 1000 + t, .ts = ts, .probe = 4, .task = task, .other = seed & 1 ? 0x77 : 0);
			break;
		default:
			e[k++] = E(.type = AS_EV_FUTURE_ENTER, .tid = 1000 + t, .ts = ts, .probe = 11, .task = 0, .other = (seed >> 7) % 3);
			break;
		}
	}
	char *path = write_cat(&meta, e, n, &(struct as_trace_end){ .end_ns = T0 + n * 10 + 100 }, false, NULL);
	struct evs want = { 0 }, got = { 0 };
	for (size_t i = 0; i < n; i++)
		evs_push(&want, &e[i]);
	CHECK(read_cat(path, &got, NULL, NULL) == 0);
	CHECK(compare_events(&want, &got) == 0);
	evs_free(&want);
	evs_free(&got);
	free(e);
	unlink(path);
	free(path);
}

/* Every recorded fixture comes back event for event, with its meta. */
static void test_roundtrip_fixtures(void)
{
	const char *fx[] = { "tests/data/blocker-2s.trace", "tests/data/chain-100.trace",
			     "tests/data/sleepers.trace", "tests/data/yields-current-20.trace",
			     "tests/data/yields-multi-20.trace" };
	for (size_t i = 0; i < sizeof(fx) / sizeof(fx[0]); i++) {
		char err[512];
		struct trace_reader *tr = trace_reader__open(fx[i], err, sizeof(err));
		struct evs want = { 0 }, got = { 0 };
		struct as_event ev;
		int rc;

		CHECK(tr != NULL);
		if (!tr)
			continue;
		while ((rc = trace_reader__next(tr, &ev)) == 1)
			evs_push(&want, &ev);
		CHECK(rc == 0);
		const struct as_trace_meta *m = trace_reader__meta(tr);
		char *path = write_cat(m, want.ev, want.n, trace_reader__end(tr), false, NULL);
		struct as_trace_end be = { 0 };
		struct as_trace_meta pid = { 0 };
		CHECK(read_cat(path, &got, &be, &pid) == 0);
		if (compare_events(&want, &got))
			CHECK(!fx[i]);
		const struct as_trace_end *te = trace_reader__end(tr);
		CHECK(te && be.lost == te->lost && be.missed == te->missed && be.end_ns == te->end_ns &&
		      be.events == te->events);
		CHECK(pid.pid == m->pid);
		evs_free(&want);
		evs_free(&got);
		trace_reader__free(tr);
		unlink(path);
		free(path);
	}
}

/* ---- bad input ---- */

static void expect_error_n(const char *text, size_t n, const char *want)
{
	char *path = write_bytes(text, n), err[512] = "";
	int rc;
	struct cat_reader *r = open_cat(path, err, sizeof(err), &rc);

	CHECK(!r && rc == -EBADMSG);
	if (!strstr(err, want) || strchr(err, '\n') || strncmp(err, path, strlen(path)))
		fprintf(stderr, "    error '%s', expected '%s'\n", err, want);
	CHECK(strstr(err, want) != NULL);
	CHECK(!strchr(err, '\n'));
	cat_reader__free(r);
	unlink(path);
	free(path);
}

static void expect_error(const char *text, const char *want)
{
	expect_error_n(text, strlen(text), want);
}

static void test_bad_input(void)
{
	expect_error("reading 1.dat\n1.000000000      1: [entry] f(zz) depth: 0\n",
		     "line 2: malformed uftrace record: bad address");
	expect_error("reading 1.dat\n1.000000000      1: [entry] f(10)\n",
		     "line 2: malformed uftrace record: no ' depth: N'");
	expect_error("reading 1.dat\n1.000000000      1: [entry] (10) depth: 0\n",
		     "line 2: malformed uftrace record: empty function name");
	expect_error("reading 1.dat\n1.000000000      1: [entry] f(10) depth: x\n", "line 2: malformed");
	expect_error("reading 1.dat\n1.000000000      2: [entry] f(10) depth: 0\n",
		     "line 2: thread 2 in the section of thread 1");
	expect_error("x\nreading 1.dat\n1.000000000      1: [entry]f(10) depth: 0\n", "line 3: malformed");
	expect_error("reading 1.dat\n99999999999999999999.000000000      1: [entry] f(10) depth: 0\n",
		     "line 2: malformed uftrace record: timestamp out of range");
	expect_error("reading 1.dat\n1.0000000001      1: [entry] f(10) depth: 0\n",
		     "line 2: malformed uftrace record: more than 9 decimals");
	expect_error("reading 1.dat\n1.000000000      1: [entry f(10) depth: 0\n",
		     "line 2: malformed uftrace record: no ']'");
	/* our header */
	expect_error("# asyncscope cat version=9\nreading 1.dat\n", "line 1: asyncscope CAT header version 9");
	expect_error("# asyncscope cat version=1\n# asyncscope probe index=0 role=nope name=f\nreading 1.dat\n",
		     "line 2: bad 'role'");
	expect_error("# asyncscope cat version=1\n# asyncscope probe index=1 role=poll name=f\n",
		     "line 2: probe 1 out of order");
	expect_error("# asyncscope cat version=1\n# asyncscope probe index=0 role=poll name=f\n"
		     "# asyncscope probe index=1 role=poll name=f\n", "line 3: two probes have the line name 'f'");
	expect_error("# asyncscope cat version=1\n# asyncscope meta target=a%zzb\n", "line 2: bad 'target'");
	expect_error("# asyncscope cat version=1\n# asyncscope probe index=0 role=poll name=f\n"
		     "# asyncscope end events=1\nreading 1.dat\n1.000000000      1: [entry] g(10) depth: 0\n",
		     "line 5: function 'g' is not in the header's probe table");
	expect_error("# asyncscope cat version=1\n# asyncscope probe index=0 role=spawn name=s\n"
		     "# asyncscope end events=1\nreading 1.dat\n1.000000000      1: [entry] s(3) depth: 0\n",
		     "line 5: spawn location 3 is not in the header");
	expect_error("# asyncscope cat version=1\n# asyncscope probe index=0 role=poll name=f\n"
		     "# asyncscope end events=1\nreading 1.dat\n1.000000000      1: [entry] f(10) depth: 0\n"
		     "1.000000000      1: [args ] length = 32\n  args[0] u64: 0x1\n"
		     "1.000000000      1: [exit ] f(10) depth: 0\n", "line 6: an [args ] record needs 4 values");
	expect_error("# asyncscope cat version=1\nreading 1.dat\n# asyncscope end events=0\n",
		     "line 3: asyncscope header line after the first 'reading' line");
	expect_error("# asyncscope cat version=1\n# asyncscope order step=5 section=0\n"
		     "# asyncscope order step=2 section=0\n", "line 3: order steps must increase");
	expect_error("# asyncscope cat version=1\nreading 1.dat\n", "has no 'end' or 'truncated' line");
	expect_error("uftrace file header: magic = 1\n1.000000000      1: [entry] f(10) depth: 0\n",
		     "line 2: a uftrace record before the first 'reading <tid>.dat' line");
	/* NUL bytes: not text at all (the reader's "not an asyncscope trace"),
	 * or, past the first 64 KiB, a line in error */
	char *p = write_bytes("reading 1.dat\nabc\0def\n", 22), err[512];
	int rc;
	CHECK(!open_cat(p, err, sizeof(err), &rc) && rc == 0);
	unlink(p);
	free(p);
	char *nul = malloc(14 + 70000 + 5);
	memcpy(nul, "reading 1.dat\n", 14);
	for (size_t i = 0; i < 35000; i++)
		memcpy(nul + 14 + 2 * i, "x\n", 2);
	memcpy(nul + 14 + 70000, "a\0b\n", 4);
	expect_error_n(nul, 14 + 70000 + 4, "line 35002: binary data");
	free(nul);
	/* a line longer than the limit */
	size_t big = CAT_LINE_MAX + 100;
	char *t = malloc(big + 32);
	strcpy(t, "reading 1.dat\n");
	memset(t + 14, 'x', big);
	strcpy(t + 14 + big, "\n");
	expect_error(t, "line 2: line longer than");
	free(t);
}

static void test_not_cat(void)
{
	char err[512];
	int rc;
	/* a binary trace, random bytes, text without sections */
	struct cat_reader *r = open_cat("tests/data/sleepers.trace", err, sizeof(err), &rc);
	CHECK(!r && rc == 0);
	char *p = write_text("hello\nworld\n");
	r = open_cat(p, err, sizeof(err), &rc);
	CHECK(!r && rc == 0);
	unlink(p);
	free(p);
	p = write_text("");
	r = open_cat(p, err, sizeof(err), &rc);
	CHECK(!r && rc == 0);
	unlink(p);
	free(p);
}

/* Cut and damaged files: errors or events, never a crash or a leak. */
static void test_fuzz(void)
{
	struct as_trace_meta meta = synth_meta();
	struct as_event e[80];
	size_t n = synth_events(e);
	char *path = write_cat(&meta, e, n, &(struct as_trace_end){ .end_ns = T0 + 100 }, false, NULL);
	char *text = slurp(path), *full = NULL;
	size_t len = strlen(text);
	uint64_t seed = 99;
	int opened = 0, failed = 0;

	full = strdup(cat_log);
	for (int round = 0; round < 600; round++) {
		const char *src = round % 3 == 2 ? full : text;
		size_t sl = strlen(src);
		char *buf = malloc(sl + 1);
		memcpy(buf, src, sl + 1);
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		size_t cut = sl;
		if (round % 2 == 0)
			cut = (size_t)(seed >> 33) % (sl + 1);
		int flips = round % 2 ? 1 + (int)((seed >> 20) % 8) : 0;
		for (int k = 0; k < flips; k++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			static const char junk[] = "x%\n ()[]:.0123456789abcdef#=_<>{}";
			buf[(seed >> 33) % sl] = (seed & 0x100) ? (char)(seed >> 12)
							       : junk[(seed >> 40) % (sizeof(junk) - 1)];
		}
		char *p = strdup("/tmp/asyncscope-test-cat.XXXXXX");
		int fd = mkstemp(p);
		if (write(fd, buf, cut) != (ssize_t)cut)
			CHECK(!"write");
		close(fd);
		char err[512];
		int rc;
		struct cat_reader *r = open_cat(p, err, sizeof(err), &rc);
		if (r) {
			struct as_event ev;
			opened++;
			while ((rc = cat_reader__next(r, &ev)) == 1)
				CHECK(ev.type >= 1 && ev.type < AS_EV__MAX);
			CHECK(rc == 0 || rc == -ENODATA || rc == -EBADMSG);
			if (rc < 0)
				CHECK(strlen(cat_reader__error(r)) > 0);
		} else if (rc < 0) {
			failed++;
			if (!strstr(err, "line ") && !strstr(err, "header"))
				fprintf(stderr, "    error without a line: %s\n", err);
			CHECK(strstr(err, "line ") || strstr(err, "header"));
		}
		cat_reader__free(r);
		unlink(p);
		free(p);
		free(buf);
	}
	CHECK(opened > 0 && failed > 0);
	(void)len;
	free(full);
	free(text);
	unlink(path);
	free(path);
}

/* ---- CAT's runtime functions and probe/profile.c's ---- */

/* A name a glob matches: each '*' as "app::Fut" (malloc'd). */
static char *instantiate(const char *pat)
{
	char *out = malloc(strlen(pat) * 9 + 1), *o = out;

	for (const char *p = pat; *p; p++)
		if (*p == '*')
			o = stpcpy(o, "app::Fut");
		else
			*o++ = *p;
	*o = '\0';
	return out;
}

/* Every poll, completion and park point of every runtime profile is named
 * by CAT's table with its role, and every entry of the table (but the inner
 * polls, which no profile probes) is such a point, of the runtime it says
 * (the first profile, in detection order, that has it). */
static void test_rules_match_profiles(void)
{
	size_t n;
	const struct cat_runtime_fn *fns = cat_rules_runtime_fns(&n);

	CHECK(n > 0);
	for (size_t i = 0; profiles[i]; i++)
		for (size_t j = 0; j < profiles[i]->n_points; j++) {
			const struct profile_point *pt = &profiles[i]->points[j];
			if (pt->role != AS_ROLE_POLL && pt->role != AS_ROLE_READY &&
			    pt->role != AS_ROLE_PARK)
				continue;
			char *name = instantiate(pt->pattern), *spelled = cat_spell(name);
			struct cat_role cr;
			CHECK(cat_rules_classify(name, spelled, &cr) == 0);
			if (cr.role != pt->role)
				fprintf(stderr, "    %s (%s): CAT's role %u, the profile's %u\n", name,
					profiles[i]->name, cr.role, pt->role);
			CHECK(cr.role == pt->role && !cr.inner_poll && cr.runtime);
			free(spelled);
			free(name);
		}
	for (size_t k = 0; k < n; k++) {
		if (fns[k].inner) {
			CHECK(fns[k].role == AS_ROLE_POLL);
			continue;
		}
		char *name = instantiate(fns[k].name), *norm = sym_strip_generics(name);
		const char *first = NULL;
		for (size_t i = 0; profiles[i] && !first; i++)
			for (size_t j = 0; j < profiles[i]->n_points && !first; j++) {
				const struct profile_point *pt = &profiles[i]->points[j];
				if (pt->role == fns[k].role && profile_point_matches(pt, name, norm))
					first = profiles[i]->name;
			}
		if (!first || strcmp(first, fns[k].runtime))
			fprintf(stderr, "    CAT's %s (%s): in profile %s\n", fns[k].name,
				fns[k].runtime, first ? first : "none");
		CHECK(first && !strcmp(first, fns[k].runtime));
		free(norm);
		free(name);
	}
	/* CAT's patterns: futures; anything else: nothing */
	struct cat_role cr;
	CHECK(cat_rules_classify("app::handler::{{closure}}", "app::handler::_{{closure}}", &cr) == 0);
	CHECK(cr.role == AS_ROLE_FUTURE && !cr.runtime);
	CHECK(cat_rules_classify("std::thread::park", "std::thread::park", &cr) == 0);
	CHECK(cr.role == 0 && !cr.inner_poll && !cr.runtime);
}

/* ---- as a source and as a sink ---- */

/* A CAT file read through source_open_file(), from a file and from a pipe
 * (copied first), gives what the CAT reader gives; it has no stacks. A CAT
 * text's errors and a text that is not one come back as one line. */
static void test_source(void)
{
	struct as_trace_meta meta = synth_meta();
	struct as_event e[80];
	size_t n = synth_events(e);
	struct as_trace_end end = { .lost = 3, .missed = 1, .end_ns = T0 + 100 };
	char *path = write_cat(&meta, e, n, &end, false, NULL), *text = slurp(path), err[512];
	size_t len = strlen(text);
	struct evs want = { 0 };
	struct as_source src;
	struct as_event ev;
	int rc;

	CHECK(read_cat(path, &want, NULL, NULL) == 0);
	CHECK(want.n > 0);
	for (int pass = 0; pass < 2; pass++) {
		struct evs got = { 0 };
		char name[64];
		int fd = -1;
		pid_t pid = -1;

		if (pass == 0)
			snprintf(name, sizeof(name), "%s", path);
		else
			pipe_from(text, len, name, sizeof(name), &fd, &pid);
		CHECK_EQ_U64(source_open_file(&src, name, err, sizeof(err)), 0);
		if (src.ops) {
			CHECK_STR(src.name, name);
			CHECK_EQ_U64(as_source__meta(&src)->pid, 4242);
			CHECK_STR(as_source__meta(&src)->target, meta.target);
			CHECK(src.ops->stack == NULL && as_source__stack(&src, 1) == NULL);
			CHECK_EQ_U64(src.ops->size(src.impl), pass == 0 ? len : 0);
			while ((rc = as_source__next(&src, &ev)) == 1)
				evs_push(&got, &ev);
			CHECK_EQ_U64(rc, 0);
			CHECK(compare_events(&want, &got) == 0);
			const struct as_trace_end *be = as_source__end(&src);
			CHECK(be && be->lost == 3 && be->missed == 1 && be->end_ns == T0 + 100 &&
			      be->events == want.n);
			CHECK_STR(as_source__error(&src), "");
			CHECK(src.ops->offset(src.impl) > 0 && src.ops->offset(src.impl) <= len);
		}
		as_source__free(&src);
		evs_free(&got);
		if (fd >= 0)
			close(fd);
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
	/* a CAT text with an error: the line; a text that is no trace at all */
	char *bad = write_text("reading 1.dat\n1.000000000 1: [entry] f(zz) depth: 0\n");
	CHECK_EQ_U64(source_open_file(&src, bad, err, sizeof(err)), -EBADMSG);
	CHECK(src.ops == NULL);
	CHECK(strstr(err, bad) && strstr(err, "line 2: malformed uftrace record: bad address"));
	unlink(bad);
	free(bad);
	bad = write_text("hello\nworld\n");
	CHECK_EQ_U64(source_open_file(&src, bad, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "nor a CAT / uftrace dump text") != NULL);
	unlink(bad);
	free(bad);
	evs_free(&want);
	free(text);
	unlink(path);
	free(path);
}

/* The writer as a sink: pipeline_run() from a trace source (the sink's
 * finish() writes the file with the run's end) writes the very bytes the
 * writer fed by hand does. */
static void test_sink(void)
{
	const char *fx = "tests/data/blocker-2s.trace";
	char err[512];
	struct trace_reader *tr = trace_reader__open(fx, err, sizeof(err));
	struct evs evs = { 0 };
	struct as_event ev;
	struct as_source src;
	int rc;

	CHECK(tr != NULL);
	if (!tr)
		return;
	while ((rc = trace_reader__next(tr, &ev)) == 1)
		evs_push(&evs, &ev);
	CHECK(rc == 0);
	char *by_hand = write_cat(trace_reader__meta(tr), evs.ev, evs.n, trace_reader__end(tr),
				  false, NULL);

	char *path = strdup("/tmp/asyncscope-test-cat.XXXXXX");
	FILE *f = fdopen(mkstemp(path), "w");
	CHECK_EQ_U64(source_open_file(&src, fx, err, sizeof(err)), 0);
	struct cat_writer *w = src.ops ? cat_writer__new(f, as_source__meta(&src)) : NULL;
	CHECK(w != NULL);
	if (w) {
		struct as_sink sink = cat_writer__sink(w);
		struct pipeline_result res;
		CHECK_STR(sink.ops->name, "cat");
		CHECK_EQ_U64(pipeline_run(&src, &sink, 1, NULL, &res), 0);
		CHECK_EQ_U64(res.events, evs.n);
		CHECK(!res.truncated);
		/* the sink's finish() wrote the file */
		CHECK_EQ_U64(cat_writer__events(w) + cat_writer__dropped(w), evs.n);
		as_sink__free(&sink);   /* a view: the writer stays */
		CHECK(sink.ops == NULL);
		CHECK(cat_writer__lines(w) > 0);
	}
	fclose(f);
	char *a = slurp(by_hand), *b = slurp(path);
	CHECK(a && b && strlen(a) > 1000 && !strcmp(a, b));
	free(a);
	free(b);
	cat_writer__free(w);
	as_source__free(&src);
	trace_reader__free(tr);
	evs_free(&evs);
	unlink(by_hand);
	free(by_hand);
	unlink(path);
	free(path);
}

int main(void)
{
	RUN(test_spelling);
	RUN(test_escape);
	RUN(test_foreign);
	RUN(test_foreign_tokio);
	RUN(test_foreign_reexport);
	RUN(test_roundtrip_synthetic);
	RUN(test_truncated);
	RUN(test_roundtrip_large);
	RUN(test_roundtrip_fixtures);
	RUN(test_bad_input);
	RUN(test_not_cat);
	RUN(test_fuzz);
	RUN(test_rules_match_profiles);
	RUN(test_source);
	RUN(test_sink);
	TEST_MAIN_END();
}
