/* Unit tests of the trace file writer and reader (src/trace/writer.c,
 * src/trace/reader.c): exact round trips, compactness, robustness against
 * truncated and corrupted files; and a trace read through the file source
 * (src/pipeline/source_file.c), also from a pipe. Temporary files live
 * under /tmp. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "harness.h"
#include "pipe_from.h"
#include "pipeline/pipeline.h"
#include "pipeline/source_file.h"
#include "trace/event.h"
#include "trace/reader.h"
#include "trace/writer.h"

#define OPEN_FAILED (-100000)

static bool quiet; /* fuzzing: differences are expected, do not print them */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static uint64_t rnd_below(uint64_t n) { return rnd() % n; }

static void tmp_path(char *buf)
{
	strcpy(buf, "/tmp/asyncscope-trace-XXXXXX");
	int fd = mkstemp(buf);
	if (fd >= 0)
		close(fd);
}

static struct as_probe test_probes[] = {
	{ .role = AS_ROLE_POLL, .arg_reg = 0, .emulated = 1, .addr = 0x4a2b10,
	  .symbol = "tokio::runtime::task::harness::Harness<T,S>::poll", .future = "app::main::{{closure}}" },
	{ .role = AS_ROLE_POLL, .arg_reg = 0, .emulated = 0, .addr = 0x4a3c20,
	  .symbol = "tokio::runtime::task::harness::Harness<T,S>::poll", .future = "" },
	{ .role = AS_ROLE_WAKE, .arg_reg = 1, .emulated = 1, .addr = 0x4b0000,
	  .symbol = "tokio::runtime::task::waker::wake_by_ref", .future = NULL },
	{ .role = AS_ROLE_SPAWN, .arg_reg = 2, .emulated = 0, .addr = 0xffffffffffffff00ULL,
	  .symbol = NULL, .future = NULL },
	{ .role = AS_ROLE_FREE, .arg_reg = 3, .emulated = 1, .addr = 0x4c0000,
	  .symbol = "tokio::runtime::task::raw::dealloc", .future = NULL },
	{ .role = AS_ROLE_PARK, .arg_reg = 0, .emulated = 0, .addr = 0x4d0000,
	  .symbol = "park", .future = NULL },
	{ .role = AS_ROLE_FUTURE, .emulated = 1, .addr = 0x4e0000, .symbol = "app::handler::{{closure}}",
	  .future = "app::handler", .src_file = "src/main.rs", .src_line = 12, .n_awaits = 3,
	  .await_lines = (uint32_t[]){ 14, 15, 19 },
	  .await_types = (char *[]){ "tokio::time::sleep::Sleep", NULL, "app::fetch" } },
};
#define TEST_FUTURE_PROBE 6

static struct as_trace_meta test_meta = {
	.format_version = 99, /* ignored by the writer */
	.pid = 4242,
	.target = "/usr/local/bin/app",
	.build_id = "0123456789abcdef0123456789abcdef01234567",
	.runtime = "tokio",
	.cmdline = "app --port 8080",
	.clock_mono_ns = 123456789012345ULL,
	.clock_real_ns = 1700000000123456789ULL,
	.recorded = AS_REC_KNOWN | AS_REC_OFFCPU | AS_REC_URING,
	.probes = test_probes,
	.n_probes = sizeof(test_probes) / sizeof(test_probes[0]),
};

static bool ev_eq(const struct as_event *a, const struct as_event *b)
{
	if (a->type != b->type || a->flags != b->flags || a->probe != b->probe ||
	    a->tid != b->tid || a->ts != b->ts || a->task != b->task || a->other != b->other)
		return false;
	if (!a->str || !b->str)
		return a->str == b->str;
	return !strcmp(a->str, b->str);
}

static void ev_print(const char *what, size_t i, const struct as_event *e)
{
	fprintf(stderr, "%s %zu: type %u flags %u probe %u tid %u ts %llu task %#llx other %#llx str %s\n",
		what, i, e->type, e->flags, e->probe, e->tid, (unsigned long long)e->ts,
		(unsigned long long)e->task, (unsigned long long)e->other, e->str ? e->str : "(null)");
}

/* Writes evs, flushing every flush_every events (0: never), then finishes
 * unless finish is false (then the writer is just freed). Returns 0 or the
 * first error; *bytes gets trace_writer__bytes(). */
/* Format version write_trace() stamps (0: the current one). */
static uint32_t write_version;

static int write_trace(const char *path, const struct as_trace_meta *meta,
		       const struct as_event *evs, size_t n, size_t flush_every, bool finish,
		       uint64_t *bytes)
{
	struct trace_writer *w = write_version ? trace_writer__new_version(path, meta, write_version) :
				 trace_writer__new(path, meta);
	int err = 0;
	if (!w)
		return -errno;
	for (size_t i = 0; i < n && !err; i++) {
		err = trace_writer__write(w, &evs[i]);
		if (!err && flush_every && (i + 1) % flush_every == 0)
			err = trace_writer__flush(w);
	}
	if (!err && finish) {
		struct as_trace_end end = { .events = 12345, .lost = 7, .missed = 3, .end_ns = 999 };
		err = trace_writer__finish(w, &end);
	}
	if (bytes)
		*bytes = trace_writer__bytes(w);
	trace_writer__free(w);
	return err;
}

/* Reads path to its end, comparing with evs. Returns the final next() value
 * (0, -errno) or OPEN_FAILED; *n_read gets the events read, *bad the number
 * of events that differ from evs (or lie beyond n). */
static int read_trace(const char *path, const struct as_event *evs, size_t n,
		      size_t *n_read, size_t *bad)
{
	char err[512];
	struct trace_reader *r = trace_reader__open(path, err, sizeof(err));
	struct as_event ev;
	int rc;
	*n_read = *bad = 0;
	if (!r)
		return OPEN_FAILED;
	while ((rc = trace_reader__next(r, &ev)) == 1) {
		size_t i = (*n_read)++;
		if (i >= n || !ev_eq(&ev, &evs[i])) {
			if (!quiet && *bad < 3 && i < n) {
				ev_print("want", i, &evs[i]);
				ev_print("got ", i, &ev);
			}
			(*bad)++;
		}
	}
	if (rc == 0 && !trace_reader__end(r))
		(*bad)++;
	if (rc < 0 && !trace_reader__error(r)[0])
		(*bad)++;
	trace_reader__free(r);
	return rc;
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	*len = 0;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n)
		*len = (size_t)n;
	fclose(f);
	return buf;
}

static void write_file(const char *path, const uint8_t *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return;
	if (len)
		fwrite(buf, 1, len, f);
	fclose(f);
}

/* ---- streams ---- */

static const char *str_pool[] = {
	"tokio-runtime-w", "main", "src/main.rs", "/home/user/.cargo/registry/src/tokio-1.38.0/src/task/spawn.rs",
	"", "x", "héllo wörld", "blocking-1",
};
#define N_POOL (sizeof(str_pool) / sizeof(str_pool[0]))

static char **owned_strs;
static size_t n_owned;

static const char *new_rand_str(void)
{
	size_t len = rnd_below(300);
	char *s = malloc(len + 1);
	for (size_t i = 0; i < len; i++)
		s[i] = (char)(1 + rnd_below(255));
	s[len] = '\0';
	owned_strs = realloc(owned_strs, (n_owned + 1) * sizeof(*owned_strs));
	owned_strs[n_owned++] = s;
	return s;
}

static void free_owned(void)
{
	for (size_t i = 0; i < n_owned; i++)
		free(owned_strs[i]);
	free(owned_strs);
	owned_strs = NULL;
	n_owned = 0;
}

static uint64_t rand_u64_edge(void)
{
	switch (rnd_below(8)) {
	case 0: return 0;
	case 1: return UINT64_MAX;
	case 2: return UINT64_MAX - rnd_below(1000);
	case 3: return rnd_below(1000);
	default: return rnd();
	}
}

/* Pseudo-random events of every type with arbitrary field values. */
static struct as_event *random_stream(size_t n)
{
	struct as_event *evs = calloc(n, sizeof(*evs));
	uint64_t pool[64];
	uint32_t tids[8] = { 100, 101, 102, 103, 0, UINT32_MAX, 7, 65536 };
	uint64_t ts = 1000000;

	for (size_t i = 0; i < 64; i++)
		pool[i] = i < 48 ? 0x55d1c3a0f2c0ULL + i * 0x140 : rand_u64_edge();
	for (size_t i = 0; i < n; i++) {
		struct as_event *e = &evs[i];
		e->type = (uint8_t)(1 + rnd_below(AS_EV__MAX - 1));
		e->flags = rnd_below(5) ? (e->type == AS_EV_POLL_END ? (uint8_t)rnd_below(2) : 0)
					: (uint8_t)rnd();
		if (e->type == AS_EV_POLL_BEGIN)
			e->probe = (uint16_t)rnd_below(test_meta.n_probes);
		else if (e->type == AS_EV_FUTURE_ENTER || e->type == AS_EV_FUTURE_EXIT)
			e->probe = TEST_FUTURE_PROBE;
		else
			e->probe = rnd_below(3) ? (uint16_t)rnd_below(8) : (uint16_t)rnd();
		e->tid = rnd_below(20) ? tids[rnd_below(4)] : (rnd_below(2) ? tids[rnd_below(8)] : (uint32_t)rnd());
		switch (rnd_below(50)) {
		case 0: ts = rand_u64_edge(); break;
		case 1: ts -= rnd_below(100000); break;
		default: ts += rnd_below(6000) - 500; break;
		}
		e->ts = ts;
		uint64_t r = rnd_below(100);
		e->task = r < 10 ? 0 : r < 95 ? pool[rnd_below(64)] : rand_u64_edge();
		r = rnd_below(10);
		e->other = r < 4 ? 0 : r < 7 ? rnd_below(5000) : r < 8 ? pool[rnd_below(64)] : rand_u64_edge();
		r = rnd_below(100);
		e->str = r < 70 ? NULL : r < 80 ? "" : r < 95 ? str_pool[rnd_below(N_POOL)] : new_rand_str();
		if (e->type == AS_EV_FREE && rnd_below(4) == 0)
			pool[rnd_below(64)] = 0x7f0000000000ULL + (rnd() & 0xffffff8ULL);
	}
	return evs;
}

/* A realistic Tokio stream: 4 workers, ~300 live tasks with 8-byte-aligned
 * heap addresses, polls a few microseconds apart, wakes inside and outside
 * polls, tasks completing, freed and replaced (addresses reused LIFO). */
static struct as_event *realistic_stream(size_t n, size_t *n_out)
{
	struct as_event *evs = calloc(n + 16, sizeof(*evs));
	struct { uint64_t addr, id; uint16_t probe; } tasks[300];
	uint64_t freed[64];
	size_t n_freed = 0, k = 0;
	uint64_t next_id = 1, ts = 5000000000ULL;
	const uint32_t tids[4] = { 31337, 31338, 31339, 31340 };
	const size_t n_tasks = 300;

#define EMIT(...) do { evs[k++] = (struct as_event){ __VA_ARGS__ }; } while (0)
#define TS() (ts + rnd_below(1000) - 500) /* per-CPU clocks arrive slightly out of order */
	for (size_t t = 0; t < 4; t++)
		EMIT(.type = AS_EV_THREAD, .tid = tids[t], .ts = ts + t, .str = "tokio-runtime-w");
	for (size_t i = 0; i < n_tasks; i++) {
		tasks[i].addr = 0x55d1c3a0f2c0ULL + (rnd_below(1 << 20) & ~7ULL);
		tasks[i].id = next_id++;
		tasks[i].probe = (uint16_t)rnd_below(2);
	}
	while (k < n) {
		uint32_t tid = tids[rnd_below(4)];
		size_t ti = rnd_below(n_tasks);
		uint64_t cur = tasks[ti].addr;
		ts += 500 + rnd_below(3000);
		EMIT(.type = AS_EV_POLL_BEGIN, .probe = tasks[ti].probe, .tid = tid, .ts = TS(),
		     .task = cur, .other = tasks[ti].id);
		if (rnd_below(10) < 3) {
			ts += 200 + rnd_below(1500);
			EMIT(.type = AS_EV_WAKE, .probe = 2, .tid = tid, .ts = TS(),
			     .task = tasks[rnd_below(n_tasks)].addr, .other = cur);
		}
		if (rnd_below(20) == 0) {
			ts += 100 + rnd_below(500);
			EMIT(.type = AS_EV_WAKE, .probe = 2, .tid = tid, .ts = TS(), .task = cur, .other = cur);
		}
		ts += 300 + rnd_below(4000);
		bool ready = rnd_below(100) == 0;
		EMIT(.type = AS_EV_POLL_END, .flags = ready ? AS_POLL_READY : 0, .probe = tasks[ti].probe,
		     .tid = tid, .ts = TS(), .task = cur);
		if (ready) {
			ts += 200 + rnd_below(800);
			EMIT(.type = AS_EV_FREE, .probe = 4, .tid = tid, .ts = TS(), .task = cur);
			if (n_freed < 64)
				freed[n_freed++] = cur;
			/* a new task replaces it: spawned from another task's poll */
			uint64_t addr = n_freed && rnd_below(2) ? freed[--n_freed]
				: 0x55d1c3a0f2c0ULL + (rnd_below(1 << 22) & ~7ULL);
			tasks[ti].addr = addr;
			tasks[ti].id = next_id++;
			ts += 300 + rnd_below(800);
			EMIT(.type = AS_EV_SPAWN, .probe = 3, .tid = tid, .ts = TS(), .str = "src/server.rs",
			     .other = (uint64_t)(40 + rnd_below(3)) << 32 | 9);
			EMIT(.type = AS_EV_WAKE, .probe = 2, .tid = tid, .ts = TS(), .task = addr);
		}
		if (rnd_below(50) == 0) { /* I/O driver wakes outside any poll */
			ts += 1000 + rnd_below(2000);
			EMIT(.type = AS_EV_WAKE, .probe = 2, .tid = tid, .ts = TS(),
			     .task = tasks[rnd_below(n_tasks)].addr);
		}
		if (rnd_below(100) == 0) {
			ts += 1000;
			EMIT(.type = AS_EV_PARK, .probe = 5, .tid = tid, .ts = TS());
			ts += 20000 + rnd_below(50000);
			EMIT(.type = AS_EV_UNPARK, .probe = 5, .tid = tid, .ts = TS());
		}
	}
#undef EMIT
#undef TS
	*n_out = k;
	return evs;
}

/* ---- tests ---- */

static void test_roundtrip_random(void)
{
	char path[64];
	size_t n = 200000, n_read, bad;
	rng_state = 0x9e3779b97f4a7c15ULL;
	struct as_event *evs = random_stream(n);
	tmp_path(path);
	CHECK_EQ_U64(write_trace(path, &test_meta, evs, n, 0, true, NULL), 0);
	int rc = read_trace(path, evs, n, &n_read, &bad);
	CHECK_EQ_U64(rc, 0);
	CHECK_EQ_U64(n_read, n);
	CHECK_EQ_U64(bad, 0);
	/* and again with a flush every 1000 events */
	CHECK_EQ_U64(write_trace(path, &test_meta, evs, n, 1000, true, NULL), 0);
	rc = read_trace(path, evs, n, &n_read, &bad);
	CHECK_EQ_U64(rc, 0);
	CHECK_EQ_U64(n_read, n);
	CHECK_EQ_U64(bad, 0);
	unlink(path);
	free(evs);
	free_owned();
}

static void test_compact_realistic(void)
{
	char path[64];
	size_t n, n_read, bad;
	uint64_t bytes = 0;
	rng_state = 0x123456789abcdefULL;
	struct as_event *evs = realistic_stream(200000, &n);
	tmp_path(path);
	CHECK_EQ_U64(write_trace(path, &test_meta, evs, n, 0, true, &bytes), 0);
	size_t len;
	uint8_t *file = read_file(path, &len);
	free(file);
	CHECK_EQ_U64(bytes, len);
	double per = (double)len / (double)n;
	printf("realistic stream: %zu events in %zu bytes: %.2f bytes/event (header included)\n",
	       n, len, per);
	CHECK(per <= 16.0);
	CHECK_EQ_U64(read_trace(path, evs, n, &n_read, &bad), 0);
	CHECK_EQ_U64(n_read, n);
	CHECK_EQ_U64(bad, 0);
	unlink(path);
	free(evs);
}

/* A version 10 file has no "recorded": it reads as 0 (unknown). */
static void test_meta_recorded_v10(void)
{
	char path[64], err[512];
	struct trace_writer *w;

	tmp_path(path);
	w = trace_writer__new_version(path, &test_meta, 10);
	CHECK(w != NULL);
	if (!w)
		return;
	CHECK_EQ_U64(trace_writer__finish(w, &(struct as_trace_end){ 0 }), 0);
	trace_writer__free(w);
	struct trace_reader *r = trace_reader__open(path, err, sizeof(err));
	CHECK(r != NULL);
	if (r) {
		CHECK_EQ_U64(trace_reader__meta(r)->format_version, 10);
		CHECK_EQ_U64(trace_reader__meta(r)->recorded, 0);
		trace_reader__free(r);
	}
	unlink(path);
}

static void test_meta_roundtrip(void)
{
	char path[64], err[512];
	tmp_path(path);
	CHECK_EQ_U64(write_trace(path, &test_meta, NULL, 0, 0, true, NULL), 0);
	struct trace_reader *r = trace_reader__open(path, err, sizeof(err));
	CHECK(r != NULL);
	if (r) {
		const struct as_trace_meta *m = trace_reader__meta(r);
		CHECK_EQ_U64(m->format_version, AS_TRACE_FORMAT_VERSION);
		CHECK_EQ_U64(m->pid, 4242);
		CHECK_STR(m->target, test_meta.target);
		CHECK_STR(m->build_id, test_meta.build_id);
		CHECK_STR(m->runtime, "tokio");
		CHECK_STR(m->cmdline, "app --port 8080");
		CHECK_EQ_U64(m->clock_mono_ns, test_meta.clock_mono_ns);
		CHECK_EQ_U64(m->clock_real_ns, test_meta.clock_real_ns);
		/* version 11: what the recorder took */
		CHECK_EQ_U64(m->recorded, AS_REC_KNOWN | AS_REC_OFFCPU | AS_REC_URING);
		CHECK_EQ_U64(m->n_probes, test_meta.n_probes);
		for (uint32_t i = 0; i < m->n_probes && i < test_meta.n_probes; i++) {
			const struct as_probe *a = &m->probes[i], *b = &test_probes[i];
			CHECK_EQ_U64(a->role, b->role);
			CHECK_EQ_U64(a->arg_reg, b->arg_reg);
			CHECK_EQ_U64(a->emulated, b->emulated);
			CHECK_EQ_U64(a->addr, b->addr);
			CHECK_STR(a->symbol, b->symbol ? b->symbol : "");
			if (b->future)
				CHECK_STR(a->future, b->future);
			else
				CHECK(a->future == NULL);
			if (b->src_file)
				CHECK_STR(a->src_file, b->src_file);
			else
				CHECK(a->src_file == NULL);
			CHECK_EQ_U64(a->src_line, b->src_line);
			CHECK_EQ_U64(a->n_awaits, b->n_awaits);
			for (uint32_t k = 0; k < a->n_awaits && k < b->n_awaits; k++) {
				CHECK_EQ_U64(a->await_lines[k], b->await_lines[k]);
				if (b->await_types && b->await_types[k])
					CHECK_STR(a->await_types[k], b->await_types[k]);
				else
					CHECK(a->await_types[k] == NULL);
			}
		}
	}
	trace_reader__free(r);

	/* NULL strings and no probes */
	struct as_trace_meta bare = { .pid = 1 };
	CHECK_EQ_U64(write_trace(path, &bare, NULL, 0, 0, true, NULL), 0);
	r = trace_reader__open(path, err, sizeof(err));
	CHECK(r != NULL);
	if (r) {
		const struct as_trace_meta *m = trace_reader__meta(r);
		CHECK_STR(m->target, "");
		CHECK_STR(m->build_id, "");
		CHECK_STR(m->runtime, "");
		CHECK_STR(m->cmdline, "");
		CHECK_EQ_U64(m->n_probes, 0);
	}
	trace_reader__free(r);

	/* bad meta */
	struct as_probe bad_probe = { .role = 0 };
	struct as_trace_meta bad = { .probes = &bad_probe, .n_probes = 1 };
	errno = 0;
	CHECK(trace_writer__new(path, &bad) == NULL);
	CHECK_EQ_U64(errno, EINVAL);
	bad.probes = NULL;
	CHECK(trace_writer__new(path, &bad) == NULL);
	unlink(path);
}

static void test_free_reuse(void)
{
	char path[64];
	size_t n_read, bad;
	const uint64_t a = 0x55d1c3a0f2c0ULL, b = 0x55d1c3a0f400ULL;
	struct as_event evs[] = {
		{ .type = AS_EV_WAKE, .tid = 1, .ts = 10, .task = a },
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 20, .task = a, .other = 7 },
		{ .type = AS_EV_WAKE, .tid = 1, .ts = 25, .task = a, .other = a },
		{ .type = AS_EV_POLL_END, .tid = 1, .ts = 30, .task = a, .flags = AS_POLL_READY },
		{ .type = AS_EV_FREE, .tid = 2, .ts = 40, .task = a },
		{ .type = AS_EV_WAKE, .tid = 2, .ts = 50, .task = b },
		/* same address, new task: its tokio id must not be inherited */
		{ .type = AS_EV_WAKE, .tid = 2, .ts = 60, .task = a },
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 70, .task = a, .other = 0 },
		{ .type = AS_EV_POLL_END, .tid = 1, .ts = 80, .task = a },
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 90, .task = a, .other = 8, .probe = 1 },
		/* freed while being polled: the thread's current task goes away */
		{ .type = AS_EV_FREE, .tid = 2, .ts = 95, .task = a },
		{ .type = AS_EV_WAKE, .tid = 1, .ts = 96, .task = b, .other = a },
		{ .type = AS_EV_POLL_END, .tid = 1, .ts = 97, .task = a },
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 98, .task = a, .other = 8 },
		{ .type = AS_EV_POLL_END, .tid = 1, .ts = 99, .task = 0 },
		{ .type = AS_EV_FREE, .tid = 1, .ts = 100, .task = a },
		{ .type = AS_EV_FREE, .tid = 1, .ts = 101, .task = b },
		{ .type = AS_EV_FREE, .tid = 1, .ts = 102, .task = b },
		{ .type = AS_EV_FREE, .tid = 1, .ts = 103, .task = UINT64_MAX },
		{ .type = AS_EV_WAKE, .tid = 1, .ts = 104, .task = UINT64_MAX },
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 105, .task = UINT64_MAX, .other = 3 },
		{ .type = AS_EV_POLL_END, .tid = 1, .ts = 106, .task = UINT64_MAX },
	};
	size_t n = sizeof(evs) / sizeof(evs[0]);
	tmp_path(path);
	CHECK_EQ_U64(write_trace(path, &test_meta, evs, n, 0, true, NULL), 0);
	CHECK_EQ_U64(read_trace(path, evs, n, &n_read, &bad), 0);
	CHECK_EQ_U64(n_read, n);
	CHECK_EQ_U64(bad, 0);
	unlink(path);
}

/* More live tasks than the slot table holds: the writer resets it. */
static void gen_many(size_t i, struct as_event *e)
{
	*e = (struct as_event){ .type = AS_EV_WAKE, .tid = 9, .ts = i * 1000,
				.task = 0x10000000ULL + (i % 1100000) * 64 };
	if (i % 7 == 0)
		e->other = 0x10000000ULL + ((i * 31) % 1100000) * 64;
}

static void test_task_table_reset(void)
{
	char path[64], err[512];
	const size_t n = 1300000;
	struct as_event e, got;
	tmp_path(path);
	struct trace_writer *w = trace_writer__new(path, &test_meta);
	CHECK(w != NULL);
	if (!w)
		return;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		gen_many(i, &e);
		rc = trace_writer__write(w, &e);
	}
	CHECK_EQ_U64(rc, 0);
	struct as_trace_end end = { 0 };
	CHECK_EQ_U64(trace_writer__finish(w, &end), 0);
	trace_writer__free(w);
	struct trace_reader *r = trace_reader__open(path, err, sizeof(err));
	CHECK(r != NULL);
	size_t i = 0, bad = 0;
	while (r && (rc = trace_reader__next(r, &got)) == 1) {
		gen_many(i++, &e);
		bad += !ev_eq(&e, &got);
	}
	CHECK_EQ_U64(rc, 0);
	CHECK_EQ_U64(i, n);
	CHECK_EQ_U64(bad, 0);
	trace_reader__free(r);
	unlink(path);
}

static void test_strings(void)
{
	char path[64];
	size_t n_read, bad, n = 0;
	static char big[65536];
	memset(big, 'z', 65535);
	big[65535] = '\0';
	struct as_event *evs = calloc(30000, sizeof(*evs));
	char (*names)[16] = calloc(10000, 16);
	for (int rep = 0; rep < 3; rep++) {
		evs[n++] = (struct as_event){ .type = AS_EV_THREAD, .tid = 1, .ts = n, .str = NULL };
		evs[n++] = (struct as_event){ .type = AS_EV_THREAD, .tid = 1, .ts = n, .str = "" };
		evs[n++] = (struct as_event){ .type = AS_EV_SPAWN, .tid = 1, .ts = n, .str = "a" };
		evs[n++] = (struct as_event){ .type = AS_EV_SPAWN, .tid = 1, .ts = n, .str = big };
		evs[n++] = (struct as_event){ .type = AS_EV_POLL_END, .tid = 1, .ts = n, .str = "ünïcödé" };
	}
	for (int i = 0; i < 10000; i++) {
		snprintf(names[i], 16, "worker-%u", (unsigned)i % 100000);
		evs[n++] = (struct as_event){ .type = AS_EV_THREAD, .tid = (uint32_t)(1000 + i),
					      .ts = n, .str = names[i] };
		evs[n++] = (struct as_event){ .type = AS_EV_SPAWN, .tid = 1, .ts = n,
					      .str = names[(i * 7) % (i + 1)] };
	}
	tmp_path(path);
	CHECK_EQ_U64(write_trace(path, &test_meta, evs, n, 0, true, NULL), 0);
	CHECK_EQ_U64(read_trace(path, evs, n, &n_read, &bad), 0);
	CHECK_EQ_U64(n_read, n);
	CHECK_EQ_U64(bad, 0);

	/* a string over 65535 bytes, a bad type or probe: -EINVAL, writer usable */
	static char huge[65537];
	memset(huge, 'q', 65536);
	struct trace_writer *w = trace_writer__new(path, &test_meta);
	struct as_event bad_evs[] = {
		{ .type = AS_EV_SPAWN, .tid = 1, .str = huge },
		{ .type = 0, .tid = 1 },
		{ .type = AS_EV__MAX, .tid = 1 },
		{ .type = AS_EV_POLL_BEGIN, .tid = 1, .probe = (uint16_t)test_meta.n_probes },
	};
	struct as_event good = { .type = AS_EV_POLL_BEGIN, .tid = 1, .ts = 5, .task = 8,
				 .probe = (uint16_t)(test_meta.n_probes - 1) };
	CHECK(w != NULL);
	if (w) {
		for (size_t i = 0; i < 4; i++)
			CHECK_EQ_U64(trace_writer__write(w, &bad_evs[i]), -EINVAL);
		CHECK_EQ_U64(trace_writer__write(w, &good), 0);
		CHECK_EQ_U64(trace_writer__events(w), 1);
		struct as_trace_end end = { 0 };
		CHECK_EQ_U64(trace_writer__finish(w, &end), 0);
		CHECK_EQ_U64(trace_writer__write(w, &good), -EINVAL);
		trace_writer__free(w);
	}
	CHECK_EQ_U64(read_trace(path, &good, 1, &n_read, &bad), 0);
	CHECK_EQ_U64(n_read, 1);
	CHECK_EQ_U64(bad, 0);
	unlink(path);
	free(evs);
	free(names);
}

static void test_empty(void)
{
	char path[64], err[512];
	struct as_event ev;
	tmp_path(path);
	CHECK_EQ_U64(write_trace(path, &test_meta, NULL, 0, 0, true, NULL), 0);
	struct trace_reader *r = trace_reader__open(path, err, sizeof(err));
	CHECK(r != NULL);
	if (r) {
		CHECK(trace_reader__end(r) == NULL);
		CHECK_EQ_U64(trace_reader__next(r, &ev), 0);
		CHECK_EQ_U64(trace_reader__next(r, &ev), 0);
		const struct as_trace_end *end = trace_reader__end(r);
		CHECK(end != NULL);
		if (end) {
			CHECK_EQ_U64(end->events, 0); /* the writer's count, not the caller's */
			CHECK_EQ_U64(end->lost, 7);
			CHECK_EQ_U64(end->missed, 3);
			CHECK_EQ_U64(end->end_ns, 999);
		}
		CHECK_STR(trace_reader__error(r), "");
	}
	trace_reader__free(r);
	unlink(path);
}

static void test_unfinished(void)
{
	char path[64], err[512];
	size_t n, n_read, bad;
	rng_state = 42;
	struct as_event *evs = realistic_stream(3000, &n);
	tmp_path(path);

	/* freed without finish: pending events are flushed, no trailer */
	CHECK_EQ_U64(write_trace(path, &test_meta, evs, n, 1000, false, NULL), 0);
	CHECK_EQ_U64(read_trace(path, evs, n, &n_read, &bad), -ENODATA);
	CHECK_EQ_U64(n_read, n);
	CHECK_EQ_U64(bad, 0);

	/* a recorder that dies: only flushed chunks survive */
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		struct trace_writer *w = trace_writer__new(path, &test_meta);
		for (size_t i = 0; w && i < 1500; i++) {
			trace_writer__write(w, &evs[i]);
			if (i == 999)
				trace_writer__flush(w);
		}
		_exit(w ? 0 : 1);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	struct trace_reader *r = trace_reader__open(path, err, sizeof(err));
	CHECK(r != NULL);
	if (r) {
		struct as_event ev;
		int rc;
		size_t i = 0;
		bad = 0;
		while ((rc = trace_reader__next(r, &ev)) == 1)
			bad += !ev_eq(&ev, &evs[i++]);
		CHECK_EQ_U64(rc, -ENODATA);
		CHECK_EQ_U64(i, 1000);
		CHECK_EQ_U64(bad, 0);
		CHECK_EQ_U64(trace_reader__next(r, &ev), -ENODATA);
		CHECK(trace_reader__end(r) == NULL);
		CHECK(strstr(trace_reader__error(r), "truncated after 1000 events") != NULL);
		CHECK(strstr(trace_reader__error(r), "--partial") != NULL);
	}
	trace_reader__free(r);
	unlink(path);
	free(evs);
}

static void test_open_errors(void)
{
	char path[64], err[512];
	tmp_path(path);

	CHECK(trace_reader__open("/nonexistent/trace.bin", err, sizeof(err)) == NULL);
	CHECK_EQ_U64(errno, ENOENT);
	CHECK(strstr(err, "cannot open /nonexistent/trace.bin") != NULL);
	CHECK(strstr(err, strerror(ENOENT)) != NULL);

	write_file(path, (const uint8_t *)"hello, this is not a trace", 26);
	CHECK(trace_reader__open(path, err, sizeof(err)) == NULL);
	CHECK_EQ_U64(errno, EINVAL);
	CHECK(strstr(err, "not an asyncscope trace") != NULL);

	write_file(path, NULL, 0);
	CHECK(trace_reader__open(path, err, sizeof(err)) == NULL);
	CHECK_EQ_U64(errno, EBADMSG);
	CHECK(strstr(err, "corrupt header") != NULL);

	CHECK_EQ_U64(write_trace(path, &test_meta, NULL, 0, 0, true, NULL), 0);
	size_t len;
	uint8_t *file = read_file(path, &len);
	CHECK(len > 16);
	if (len > 16) {
		file[8] = AS_TRACE_FORMAT_VERSION + 1; /* the version after ours */
		write_file(path, file, len);
		CHECK(trace_reader__open(path, err, sizeof(err)) == NULL);
		CHECK_EQ_U64(errno, EPROTONOSUPPORT);
		char want[32];
		snprintf(want, sizeof(want), "version %d", AS_TRACE_FORMAT_VERSION + 1);
		CHECK(strstr(err, want) != NULL);
		CHECK(strstr(err, "newer") != NULL);
		file[8] = 0;
		write_file(path, file, len);
		CHECK(trace_reader__open(path, err, sizeof(err)) == NULL);
		CHECK(strstr(err, "older") != NULL);
		file[8] = 1;
		file[20] ^= 0x10; /* inside the header payload */
		write_file(path, file, len);
		CHECK(trace_reader__open(path, err, sizeof(err)) == NULL);
		CHECK_EQ_U64(errno, EBADMSG);
		CHECK(strstr(err, "corrupt header") != NULL);
	}
	free(file);
	/* a NULL err buffer is fine */
	CHECK(trace_reader__open("/nonexistent/trace.bin", NULL, 0) == NULL);
	unlink(path);
}

static void test_crc_flip(void)
{
	char path[64];
	size_t n, n_read, bad, len;
	uint64_t hdr_bytes = 0, bytes = 0;
	rng_state = 7;
	struct as_event *evs = realistic_stream(2000, &n);
	tmp_path(path);
	CHECK_EQ_U64(write_trace(path, &test_meta, NULL, 0, 0, false, &hdr_bytes), 0);
	CHECK_EQ_U64(write_trace(path, &test_meta, evs, n, 1000, true, &bytes), 0);
	uint8_t *file = read_file(path, &len);
	CHECK_EQ_U64(len, bytes);
	/* flip a bit inside the second chunk: the first chunk's 1000 events come first */
	size_t first_chunk = 0;
	{
		/* chunk header: 'C', seq, len, count, crc */
		uint8_t *c = file + hdr_bytes;
		first_chunk = 17 + (c[5] | c[6] << 8 | c[7] << 16 | (size_t)c[8] << 24);
	}
	file[hdr_bytes + first_chunk + 17 + 10] ^= 4;
	write_file(path, file, len);
	char err[512];
	struct trace_reader *r = trace_reader__open(path, err, sizeof(err));
	CHECK(r != NULL);
	if (r) {
		struct as_event ev;
		int rc;
		size_t i = 0;
		bad = 0;
		while ((rc = trace_reader__next(r, &ev)) == 1)
			bad += !ev_eq(&ev, &evs[i++]);
		CHECK_EQ_U64(rc, -EBADMSG);
		CHECK_EQ_U64(i, 1000);
		CHECK_EQ_U64(bad, 0);
		CHECK(strstr(trace_reader__error(r), "chunk 1 at offset") != NULL);
		CHECK(strstr(trace_reader__error(r), "fails its checksum") != NULL);
	}
	trace_reader__free(r);

	/* bytes after the trailer */
	file[hdr_bytes + first_chunk + 17 + 10] ^= 4;
	uint8_t *longer = malloc(len + 1);
	memcpy(longer, file, len);
	longer[len] = 0;
	write_file(path, longer, len + 1);
	CHECK_EQ_U64(read_trace(path, evs, n, &n_read, &bad), -EBADMSG);
	CHECK_EQ_U64(n_read, n);
	CHECK_EQ_U64(bad, 0);
	free(longer);
	free(file);
	free(evs);
	unlink(path);
}

/* A small trace with three chunks, strings, new and freed tasks. */
static struct as_event *small_trace(const char *path, size_t *n, uint8_t **file, size_t *len,
				    uint64_t *hdr_end, uint64_t chunk_end[3])
{
	rng_state = 99;
	struct as_event *evs = realistic_stream(60, n);
	struct trace_writer *w = trace_writer__new(path, &test_meta);
	*hdr_end = trace_writer__bytes(w);
	size_t per = *n / 3 + 1, c = 0;
	for (size_t i = 0; i < *n; i++) {
		trace_writer__write(w, &evs[i]);
		if ((i + 1) % per == 0 || i + 1 == *n) {
			trace_writer__flush(w);
			chunk_end[c++] = trace_writer__bytes(w);
		}
	}
	struct as_trace_end end = { .lost = 1 };
	trace_writer__finish(w, &end);
	trace_writer__free(w);
	*file = read_file(path, len);
	return evs;
}

static void test_truncate_every_offset(void)
{
	char path[64], cut[64];
	size_t n, len, n_read, bad;
	uint8_t *file;
	uint64_t hdr_end, chunk_end[3] = { 0 };
	tmp_path(path);
	tmp_path(cut);
	struct as_event *evs = small_trace(path, &n, &file, &len, &hdr_end, chunk_end);
	size_t per = n / 3 + 1;
	CHECK(len > hdr_end);
	for (size_t off = 0; off < len; off++) {
		write_file(cut, file, off);
		int rc = read_trace(cut, evs, n, &n_read, &bad);
		if (off < hdr_end) {
			CHECK(rc == OPEN_FAILED);
			continue;
		}
		size_t want = 0;
		for (int c = 0; c < 3; c++)
			if (chunk_end[c] <= off)
				want = c == 2 ? n : per * (size_t)(c + 1);
		if (rc != -ENODATA || n_read != want || bad) {
			fprintf(stderr, "cut at %zu: rc %d, %zu events (want %zu), %zu bad\n",
				off, rc, n_read, want, bad);
			CHECK(0);
			break;
		}
	}
	CHECK_EQ_U64(read_trace(path, evs, n, &n_read, &bad), 0);
	CHECK_EQ_U64(n_read, n);
	free(file);
	free(evs);
	unlink(path);
	unlink(cut);
}

static void test_flip_every_offset(void)
{
	char path[64], mut[64];
	size_t n, len, n_read, bad;
	uint8_t *file;
	uint64_t hdr_end, chunk_end[3];
	tmp_path(path);
	tmp_path(mut);
	struct as_event *evs = small_trace(path, &n, &file, &len, &hdr_end, chunk_end);
	for (size_t off = 0; off < len; off++) {
		for (int v = 0; v < 2; v++) {
			uint8_t mask = v ? 0xff : (uint8_t)(1u << (off % 8));
			file[off] ^= mask;
			write_file(mut, file, len);
			file[off] ^= mask;
			int rc = read_trace(mut, evs, n, &n_read, &bad);
			bool ok = off < hdr_end ? rc == OPEN_FAILED
				: (rc == -EBADMSG || rc == -ENODATA) && !bad && n_read <= n;
			if (!ok) {
				fprintf(stderr, "flip %#x at %zu: rc %d, %zu events, %zu bad\n",
					mask, off, rc, n_read, bad);
				CHECK(0);
				goto out;
			}
		}
	}
out:
	free(file);
	free(evs);
	unlink(path);
	unlink(mut);
}

/* Corrupt payloads with valid checksums reach the event decoder: it must
 * reject or accept them without crashing or leaking. */
static void test_decoder_fuzz(void)
{
	char path[64], mut[64];
	size_t n, len, n_read, bad;
	uint8_t *file;
	uint64_t hdr_end, chunk_end[3];
	int counts[4] = { 0 };
	tmp_path(path);
	tmp_path(mut);
	struct as_event *evs = small_trace(path, &n, &file, &len, &hdr_end, chunk_end);
	uint8_t *copy = malloc(len + 4096);
	rng_state = 1234;
	quiet = true;
	for (int iter = 0; iter < 3000; iter++) {
		memcpy(copy, file, len);
		size_t clen = len;
		if (iter < 1000) {
			/* flip bytes in the first chunk, then fix its checksum */
			size_t pl = chunk_end[0] - hdr_end - 17;
			for (int k = 0; k < 1 + iter % 3; k++)
				copy[hdr_end + 17 + rnd_below(pl)] ^= (uint8_t)(1 + rnd_below(255));
			uLong crc = crc32(0, copy + hdr_end + 1, 12);
			crc = crc32(crc, copy + hdr_end + 17, (uInt)pl);
			for (int b = 0; b < 4; b++)
				copy[hdr_end + 13 + b] = (uint8_t)(crc >> (8 * b));
		} else {
			/* a random payload with a random count and a valid checksum */
			size_t pl = rnd_below(4000);
			uint8_t *c = copy + hdr_end;
			uint32_t count = (uint32_t)rnd_below(200);
			c[0] = 'C';
			memset(c + 1, 0, 4);
			for (int b = 0; b < 4; b++) {
				c[5 + b] = (uint8_t)(pl >> (8 * b));
				c[9 + b] = (uint8_t)(count >> (8 * b));
			}
			for (size_t i = 0; i < pl; i++)
				c[17 + i] = iter % 2 ? (uint8_t)rnd() : (uint8_t)(rnd() & 0x3f);
			uLong crc = crc32(0, c + 1, 12);
			crc = crc32(crc, c + 17, (uInt)pl);
			for (int b = 0; b < 4; b++)
				c[13 + b] = (uint8_t)(crc >> (8 * b));
			clen = hdr_end + 17 + pl;
		}
		write_file(mut, copy, clen);
		int rc = read_trace(mut, evs, n, &n_read, &bad);
		CHECK(rc == 0 || rc == -EBADMSG || rc == -ENODATA);
		counts[rc == 0 ? 0 : rc == -EBADMSG ? 1 : rc == -ENODATA ? 2 : 3]++;
	}
	quiet = false;
	printf("decoder fuzz: %d clean, %d corrupt, %d truncated\n", counts[0], counts[1], counts[2]);
	free(copy);
	free(file);
	free(evs);
	unlink(path);
	unlink(mut);
}

/* ---- format version 2: USDT events; version 1 files still read ---- */

static struct as_probe usdt_probes[] = {
	{ .role = AS_ROLE_POLL, .arg_reg = 0, .emulated = 1, .addr = 0x4a2b10,
	  .symbol = "tokio::runtime::task::raw::poll", .future = "app::main::{{closure}}" },
	{ .role = AS_ROLE_USDT, .emulated = 1, .addr = 0x1139, .symbol = "asyncscope_test:tick" },
	{ .role = AS_ROLE_USDT, .emulated = 1, .addr = 0x1180, .symbol = "asyncscope_test:guarded" },
};

static struct as_trace_meta usdt_meta = {
	.pid = 7, .target = "/bin/usdt_app", .runtime = "tokio",
	.probes = usdt_probes, .n_probes = 3,
};

/* USDT hits inside and outside polls, on two threads, with arguments
 * 0..n-1, negative ones and a task never polled: an exact round trip, the
 * meta's USDT role kept, and a few bytes per hit (the task defaults to the
 * thread's current one, the argument is a small delta). */
static void test_usdt_roundtrip(void)
{
	char path[64], err[512];
	size_t n = 0, n_read, bad;
	struct as_event *evs = calloc(4200, sizeof(*evs));
	uint64_t ts = 1000, task = 0x55d1c3a0f2c0ULL;
	uint64_t bytes_no_usdt = 0, bytes = 0;

	tmp_path(path);
	evs[n++] = (struct as_event){ .type = AS_EV_THREAD, .tid = 10, .ts = ts, .str = "main" };
	for (uint64_t i = 0; i < 1000; i++) {
		bool in_poll = i % 2;
		ts += 100;
		if (in_poll)
			evs[n++] = (struct as_event){ .type = AS_EV_POLL_BEGIN, .tid = 10, .ts = ts,
						      .task = task, .other = 1 };
		evs[n++] = (struct as_event){ .type = AS_EV_USDT, .probe = 1, .tid = 10, .ts = ts + 10,
					      .task = in_poll ? task : 0, .other = i };
		if (in_poll)
			evs[n++] = (struct as_event){ .type = AS_EV_POLL_END, .tid = 10, .ts = ts + 20,
						      .task = task };
	}
	evs[n++] = (struct as_event){ .type = AS_EV_USDT, .probe = 2, .tid = 11, .ts = ts + 50,
				      .other = (uint64_t)-5 };
	evs[n++] = (struct as_event){ .type = AS_EV_USDT, .probe = 2, .tid = 11, .ts = ts + 60,
				      .task = 0x7f0000001000ULL, .other = UINT64_MAX };
	CHECK_EQ_U64(write_trace(path, &usdt_meta, evs, n, 0, true, &bytes), 0);
	CHECK_EQ_U64(read_trace(path, evs, n, &n_read, &bad), 0);
	CHECK_EQ_U64(n_read, n);
	CHECK_EQ_U64(bad, 0);

	struct trace_reader *r = trace_reader__open(path, err, sizeof(err));
	CHECK(r != NULL);
	if (r) {
		const struct as_trace_meta *m = trace_reader__meta(r);
		CHECK_EQ_U64(m->format_version, AS_TRACE_FORMAT_VERSION);
		CHECK_EQ_U64(m->n_probes, 3);
		if (m->n_probes == 3) {
			CHECK_EQ_U64(m->probes[1].role, AS_ROLE_USDT);
			CHECK_STR(m->probes[1].symbol, "asyncscope_test:tick");
		}
	}
	trace_reader__free(r);

	/* the same stream without its USDT hits: each hit costs a few bytes */
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (evs[i].type != AS_EV_USDT)
			evs[k++] = evs[i];
	CHECK_EQ_U64(write_trace(path, &usdt_meta, evs, k, 0, true, &bytes_no_usdt), 0);
	CHECK(bytes > bytes_no_usdt);
	CHECK((bytes - bytes_no_usdt) / 1002 <= 4);
	free(evs);
	unlink(path);
}


/* A version 1 file (the writer's output without USDT, stamped 1: the
 * encoding is the same) reads exactly, with format_version 1; USDT events or
 * USDT probes in a version 1 file are corrupt. */
static void test_read_version1(void)
{
	char path[64], err[512];
	size_t n_evs, n_read, bad;
	struct as_event *evs = realistic_stream(5000, &n_evs);
	struct as_trace_meta old_meta = test_meta;
	old_meta.n_probes = TEST_FUTURE_PROBE; /* no future probe before version 7 */

	tmp_path(path);
	write_version = 1;
	CHECK_EQ_U64(write_trace(path, &old_meta, evs, n_evs, 1000, true, NULL), 0);
	write_version = 0;
	CHECK_EQ_U64(read_trace(path, evs, n_evs, &n_read, &bad), 0);
	CHECK_EQ_U64(n_read, n_evs);
	CHECK_EQ_U64(bad, 0);
	struct trace_reader *r = trace_reader__open(path, err, sizeof(err));
	CHECK(r != NULL);
	if (r)
		CHECK_EQ_U64(trace_reader__meta(r)->format_version, 1);
	trace_reader__free(r);

	/* a USDT event in version 1 */
	struct as_event usdt[] = {
		{ .type = AS_EV_THREAD, .tid = 1, .ts = 1, .str = "main" },
		{ .type = AS_EV_USDT, .tid = 1, .ts = 2, .other = 3 },
	};
	CHECK_EQ_U64(write_trace(path, &old_meta, usdt, 2, 0, true, NULL), 0);
	CHECK_EQ_U64(read_trace(path, usdt, 2, &n_read, &bad), 0);
	write_version = 1;
	CHECK_EQ_U64(write_trace(path, &old_meta, usdt, 2, 0, true, NULL), 0);
	write_version = 0;
	CHECK_EQ_U64(read_trace(path, usdt, 2, &n_read, &bad), -EBADMSG);
	CHECK_EQ_U64(n_read, 1);
	r = trace_reader__open(path, err, sizeof(err));
	CHECK(r != NULL);
	if (r) {
		struct as_event ev;
		CHECK_EQ_U64(trace_reader__next(r, &ev), 1);
		CHECK_EQ_U64(trace_reader__next(r, &ev), -EBADMSG);
		CHECK(strstr(trace_reader__error(r), "unknown event type") != NULL);
	}
	trace_reader__free(r);

	/* a USDT probe in a version 1 header */
	write_version = 1;
	CHECK_EQ_U64(write_trace(path, &usdt_meta, NULL, 0, 0, true, NULL), 0);
	write_version = 0;
	CHECK(trace_reader__open(path, err, sizeof(err)) == NULL);
	CHECK_EQ_U64(errno, EBADMSG);
	CHECK(strstr(err, "unknown probe role") != NULL);
	free(evs);
	unlink(path);
}

/* The recorded fixtures of tests/data are version 1 and read to their end. */
static void test_read_version1_fixtures(void)
{
	static const char *const fixtures[] = {
		"tests/data/yields-multi-20.trace", "tests/data/yields-current-20.trace",
		"tests/data/chain-100.trace", "tests/data/blocker-2s.trace",
		"tests/data/sleepers.trace",
	};
	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		char err[512];
		struct as_event ev;
		uint64_t n = 0;
		int rc;
		struct trace_reader *r = trace_reader__open(fixtures[i], err, sizeof(err));
		CHECK(r != NULL);
		if (!r) {
			fprintf(stderr, "%s\n", err);
			continue;
		}
		CHECK_EQ_U64(trace_reader__meta(r)->format_version, 1);
		while ((rc = trace_reader__next(r, &ev)) == 1) {
			n++;
			CHECK(ev.type != AS_EV_USDT);
		}
		CHECK_EQ_U64(rc, 0);
		CHECK(trace_reader__end(r) != NULL);
		CHECK(n > 0);
		trace_reader__free(r);
	}
}

/* A trace read through source_open_file() gives what trace_reader gives:
 * the events, the stacks they name, the end; from a file and from a pipe
 * (read as it streams: no size). What is neither a trace nor a CAT text,
 * and a file that cannot be opened, are one-line errors naming the file. */
static void test_source_file(void)
{
	static const struct as_frame frames[] = {
		{ .addr = 0xffffffff81000010ull, .sym = "schedule" },
		{ .addr = 0x55aa00002000ull, .sym = "app::work", .file = "src/main.rs", .line = 7 },
	};
	char path[64], err[512];
	struct as_source src;
	struct as_event ev;
	uint32_t id = 0;
	int rc;

	tmp_path(path);
	struct trace_writer *w = trace_writer__new(path, &test_meta);
	CHECK(w != NULL);
	if (!w)
		return;
	struct as_stack st = { .n_kernel = 1, .n_user = 1, .frames = frames };
	struct as_event in[] = {
		{ .type = AS_EV_THREAD, .tid = 10, .ts = 100, .str = "worker" },
		{ .type = AS_EV_POLL_BEGIN, .tid = 10, .ts = 200, .task = 0x1000, .other = 3 },
		{ .type = AS_EV_OFFCPU, .tid = 10, .ts = 210, .task = 0x1000, .other = 5000 },
		{ .type = AS_EV_POLL_END, .tid = 10, .ts = 9000, .task = 0x1000, .flags = AS_POLL_READY },
	};
	CHECK_EQ_U64(trace_writer__stack(w, &st, &id), 0);
	in[2].stack = id;
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		CHECK_EQ_U64(trace_writer__write(w, &in[i]), 0);
	CHECK_EQ_U64(trace_writer__finish(w, &(struct as_trace_end){ .lost = 2, .end_ns = 9999 }), 0);
	trace_writer__free(w);
	size_t len;
	uint8_t *file = read_file(path, &len);

	for (int pass = 0; pass < 2; pass++) {
		char name[64];
		int fd = -1;
		pid_t pid = -1;

		if (pass == 0)
			snprintf(name, sizeof(name), "%s", path);
		else
			pipe_from(file, len, name, sizeof(name), &fd, &pid);
		CHECK_EQ_U64(source_open_file(&src, name, err, sizeof(err)), 0);
		if (!src.ops)
			goto next;
		CHECK_STR(src.name, name);
		CHECK_EQ_U64(as_source__meta(&src)->pid, 4242);
		CHECK_STR(as_source__meta(&src)->target, "/usr/local/bin/app");
		CHECK(as_source__end(&src) == NULL);
		CHECK_EQ_U64(src.ops->size(src.impl), pass == 0 ? len : 0);
		size_t i = 0;
		while ((rc = as_source__next(&src, &ev)) == 1) {
			CHECK(i < sizeof(in) / sizeof(in[0]) && ev_eq(&ev, &in[i]));
			CHECK_EQ_U64(ev.stack, in[i].stack);
			if (ev.stack) {
				const struct as_stack *s = as_source__stack(&src, ev.stack);
				CHECK(s && s->n_kernel == 1 && s->n_user == 1);
				if (s)
					CHECK_STR(s->frames[1].sym, "app::work");
			}
			i++;
		}
		CHECK_EQ_U64(rc, 0);
		CHECK_EQ_U64(i, sizeof(in) / sizeof(in[0]));
		CHECK(as_source__stack(&src, 0) == NULL);
		CHECK(as_source__stack(&src, id + 1) == NULL);
		const struct as_trace_end *end = as_source__end(&src);
		CHECK(end && end->events == 4 && end->lost == 2 && end->end_ns == 9999);
		CHECK_STR(as_source__error(&src), "");
		CHECK_EQ_U64(src.ops->offset(src.impl), len);
		as_source__free(&src);
		CHECK(src.ops == NULL && src.impl == NULL);
next:
		if (fd >= 0)
			close(fd);
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}

	/* a cut trace: the events before the cut, then -ENODATA */
	write_file(path, file, len - 3);
	CHECK_EQ_U64(source_open_file(&src, path, err, sizeof(err)), 0);
	if (src.ops) {
		size_t i = 0;
		while ((rc = as_source__next(&src, &ev)) == 1)
			i++;
		CHECK_EQ_U64(rc, -ENODATA);
		CHECK_EQ_U64(i, 4);
		CHECK(strstr(as_source__error(&src), "truncated") != NULL);
		as_source__free(&src);
	}
	free(file);

	/* neither a trace nor a CAT text */
	write_file(path, (const uint8_t *)"hello, this is not a trace", 26);
	errno = 0;
	CHECK_EQ_U64(source_open_file(&src, path, err, sizeof(err)), -EINVAL);
	CHECK_EQ_U64(errno, EINVAL);
	CHECK(src.ops == NULL);
	CHECK(strstr(err, path) != NULL);
	CHECK(strstr(err, "not an asyncscope trace (bad magic) nor a CAT / uftrace dump text") != NULL);
	as_source__free(&src);   /* a zeroed source is fine */
	/* the trace reader alone knows no CAT and says so */
	CHECK(trace_reader__open(path, err, sizeof(err)) == NULL);
	CHECK_EQ_U64(errno, EINVAL);
	CHECK(strstr(err, "not an asyncscope trace (bad magic)") != NULL);
	CHECK(strstr(err, "CAT") == NULL);
	/* an empty file is a cut trace */
	write_file(path, NULL, 0);
	CHECK_EQ_U64(source_open_file(&src, path, err, sizeof(err)), -EBADMSG);
	CHECK(strstr(err, "corrupt header (the file is empty)") != NULL);
	unlink(path);
	CHECK_EQ_U64(source_open_file(&src, "/nonexistent/trace.bin", err, sizeof(err)), -ENOENT);
	CHECK(strstr(err, "cannot open /nonexistent/trace.bin") != NULL);
	CHECK_EQ_U64(source_open_file(&src, "/nonexistent/trace.bin", NULL, 0), -ENOENT);
}

/* Version 9: every chunk ends with the cumulative loss counts given so
 * far; a recorder that dies leaves those of its last complete chunk, which
 * a cut trace reports (pipeline_run: a lower bound, never 0); a flush with
 * nothing pending still writes the counts when they changed; a version 8
 * file carries none (unknown). */
static void test_loss_counts(void)
{
	char path[64], err[512];
	size_t n;
	rng_state = 7;
	struct as_event *evs = realistic_stream(3000, &n);
	tmp_path(path);

	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		struct trace_writer *w = trace_writer__new(path, &test_meta);
		for (size_t i = 0; w && i < 1500; i++) {
			trace_writer__write(w, &evs[i]);
			if (i == 499) {
				trace_writer__counts(w, 10, 1, 5000);
				trace_writer__flush(w);
			}
			if (i == 999) {
				trace_writer__counts(w, 250, 4, 9000);
				trace_writer__flush(w);
				/* nothing pending, the counts changed: a chunk of them only */
				trace_writer__counts(w, 300, 4, 9500);
				trace_writer__flush(w);
				trace_writer__flush(w);   /* unchanged: nothing written */
			}
			if (i == 1200)
				trace_writer__counts(w, 999, 9, 12000); /* never flushed */
		}
		_exit(w ? 0 : 1);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	struct as_source src;
	CHECK_EQ_U64(source_open_file(&src, path, err, sizeof(err)), 0);
	if (src.ops) {
		struct pipeline_result res;
		CHECK_EQ_U64(pipeline_run(&src, NULL, 0, &(struct pipeline_opts){ .partial = true },
					  &res), 0);
		CHECK_EQ_U64(res.events, 1000);
		CHECK(res.truncated);
		CHECK_EQ_U64(res.end.truncated, 1);
		CHECK_EQ_U64(res.end.counts_lower_bound, 1);
		CHECK_EQ_U64(res.end.lost, 300);
		CHECK_EQ_U64(res.end.missed, 4);
		CHECK_EQ_U64(res.end.counts_ns, 9500);
		as_source__free(&src);
	}
	/* the chunks: 500 events, 500 events, the counts alone */
	struct trace_reader *r = trace_reader__open(path, err, sizeof(err));
	CHECK(r != NULL);
	if (r) {
		struct as_event ev;
		struct as_trace_end c = { 0 };
		size_t i = 0;
		CHECK_EQ_U64(trace_reader__counts(r, &c), 0);
		while (trace_reader__next(r, &ev) == 1)
			if (++i == 501) {
				CHECK_EQ_U64(trace_reader__counts(r, &c), 1);
				CHECK_EQ_U64(c.lost, 10);
				CHECK_EQ_U64(c.counts_ns, 5000);
			}
		CHECK_EQ_U64(i, 1000);
		CHECK_EQ_U64(trace_reader__offset(r) > 0, 1);
		trace_reader__free(r);
	}

	/* a finished trace: the trailer's counts, the chunks' agree */
	struct trace_writer *w = trace_writer__new(path, &test_meta);
	CHECK(w != NULL);
	for (size_t i = 0; w && i < n; i++)
		trace_writer__write(w, &evs[i]);
	if (w) {
		trace_writer__counts(w, 5, 6, 7);
		CHECK_EQ_U64(trace_writer__finish(w, &(struct as_trace_end){ .lost = 5, .missed = 6,
									.end_ns = 8 }), 0);
		trace_writer__free(w);
	}
	size_t n_read, bad;
	CHECK_EQ_U64(read_trace(path, evs, n, &n_read, &bad), 0);
	CHECK_EQ_U64(n_read, n);

	/* version 8 has no counts: a cut one reports them unknown */
	w = trace_writer__new_version(path, &test_meta, 8);
	CHECK(w != NULL);
	for (size_t i = 0; w && i < 700; i++) {
		trace_writer__write(w, &evs[i]);
		if (i == 499) {
			trace_writer__counts(w, 10, 1, 5000);
			trace_writer__flush(w);
		}
	}
	trace_writer__free(w);   /* no trailer */
	CHECK_EQ_U64(source_open_file(&src, path, err, sizeof(err)), 0);
	if (src.ops) {
		struct pipeline_result res;
		CHECK_EQ_U64(pipeline_run(&src, NULL, 0, &(struct pipeline_opts){ .partial = true },
					  &res), 0);
		CHECK_EQ_U64(res.events, 700);
		CHECK_EQ_U64(res.end.truncated, 1);
		CHECK_EQ_U64(res.end.counts_lower_bound, 0);
		CHECK_EQ_U64(res.end.lost, 0);
		as_source__free(&src);
	}
	unlink(path);
	free(evs);
}

/* The committed cut traces (tests/data/cut-v8.trace, cut-v9.trace: 300
 * polls each, chunks flushed after 100 and 200 with the counts 40/2, then
 * 75/3, the last 100 polls without a trailer): version 9 reports the last
 * complete chunk's counts, version 8 none. */
static void test_cut_fixtures(void)
{
	for (int v = 8; v <= 9; v++) {
		char path[64], err[512];
		struct as_source src;
		struct pipeline_result res;

		snprintf(path, sizeof(path), "tests/data/cut-v%d.trace", v);
		CHECK_EQ_U64(source_open_file(&src, path, err, sizeof(err)), 0);
		if (!src.ops)
			continue;
		CHECK_EQ_U64(as_source__meta(&src)->format_version, (uint64_t)v);
		CHECK_EQ_U64(pipeline_run(&src, NULL, 0, &(struct pipeline_opts){ .partial = true },
					  &res), 0);
		CHECK_EQ_U64(res.events, 600);
		CHECK_EQ_U64(res.end.truncated, 1);
		CHECK_EQ_U64(res.end.counts_lower_bound, v == 9);
		CHECK_EQ_U64(res.end.lost, v == 9 ? 75 : 0);
		CHECK_EQ_U64(res.end.missed, v == 9 ? 3 : 0);
		as_source__free(&src);
	}
}

int main(void)
{
	RUN(test_roundtrip_random);
	RUN(test_compact_realistic);
	RUN(test_meta_roundtrip);
	RUN(test_meta_recorded_v10);
	RUN(test_free_reuse);
	RUN(test_task_table_reset);
	RUN(test_strings);
	RUN(test_empty);
	RUN(test_unfinished);
	RUN(test_loss_counts);
	RUN(test_cut_fixtures);
	RUN(test_open_errors);
	RUN(test_crc_flip);
	RUN(test_truncate_every_offset);
	RUN(test_flip_every_offset);
	RUN(test_decoder_fuzz);
	RUN(test_usdt_roundtrip);
	RUN(test_read_version1);
	RUN(test_read_version1_fixtures);
	RUN(test_source_file);
	TEST_MAIN_END();
}
