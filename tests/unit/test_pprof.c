/* Unit tests for output/pprof (the profile builder and its writer) and
 * output/speedscope: samples merged by stack and labels, inlined frames one
 * location, synthetic frames their own, the string table, the gzip'd form
 * inflating to the Profile, the fields a reader needs (decoded here with a
 * small wire-format reader), a stack folded to the task's code with its
 * program_frame label, and the speedscope JSON of the same profile. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "harness.h"
#include "output/pprof.h"
#include "output/speedscope.h"
#include "util/varint.h"

/* The top-level fields of a Profile: counts and the string table. */
struct decoded {
	int types, samples, locations, functions, mappings, comments;
	char *strs[256];
	int n_strs;
	uint64_t period, default_type;
};

static void decode(const uint8_t *p, size_t n, struct decoded *d)
{
	const uint8_t *end = p + n;

	memset(d, 0, sizeof(*d));
	while (p < end) {
		uint64_t tag, v;

		if (varint_get(&p, end, &tag))
			break;
		if ((tag & 7) == 0) {
			varint_get(&p, end, &v);
			if (tag >> 3 == 12)
				d->period = v;
			if (tag >> 3 == 14)
				d->default_type = v;
			continue;
		}
		if (varint_get(&p, end, &v) || v > (uint64_t)(end - p))
			break;
		switch (tag >> 3) {
		case 1: d->types++; break;
		case 2: d->samples++; break;
		case 3: d->mappings++; break;
		case 4: d->locations++; break;
		case 5: d->functions++; break;
		case 13: d->comments++; break;
		case 6:
			if (d->n_strs < 256)
				d->strs[d->n_strs++] = strndup((const char *)p, v);
			break;
		}
		p += v;
	}
}

static void decoded_free(struct decoded *d)
{
	for (int i = 0; i < d->n_strs; i++)
		free(d->strs[i]);
}

static int find_str(const struct decoded *d, const char *s)
{
	for (int i = 0; i < d->n_strs; i++)
		if (!strcmp(d->strs[i], s))
			return i;
	return -1;
}

static void test_build(void)
{
	struct pprof *p = pprof__new();
	int64_t v[2] = { 10, 100 };
	/* leaf first: g inlined into f at 0x10, f called from main at 0x20 */
	struct pprof_frame fr[] = {
		{ .function = "app::g", .file = "src/a.rs", .line = 7, .addr = 0x10, .inlined = true },
		{ .function = "app::f", .file = "src/a.rs", .line = 3, .addr = 0x10 },
		{ .function = "app::main", .file = "src/main.rs", .line = 9, .addr = 0x20 },
		{ .function = "task app::main" },
	};
	struct pprof_label lab[] = { { .key = "task", .str = "app::main" },
				     { .key = "bytes", .num = 42, .unit = "bytes" } };

	CHECK(p != NULL);
	CHECK_EQ_U64(pprof__add_sample(p, fr, 4, v, lab, 2), (uint64_t)-EINVAL);   /* no type */
	CHECK_EQ_U64(pprof__add_type(p, "samples", "count"), 0);
	CHECK_EQ_U64(pprof__add_type(p, "cpu", "nanoseconds"), 1);
	CHECK_EQ_U64(pprof__set_default_type(p, 1), 0);
	CHECK_EQ_U64(pprof__set_default_type(p, 2), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pprof__set_period(p, "cpu", "nanoseconds", 10101010), 0);
	CHECK_EQ_U64(pprof__set_main_binary(p, "/bin/app", "abcd"), 0);
	CHECK_EQ_U64(pprof__add_comment(p, "hello"), 0);
	pprof__set_time(p, 1700000000000000000, 2000000000);
	CHECK_EQ_U64(pprof__add_sample(p, fr, 4, v, lab, 2), 0);
	CHECK_EQ_U64(pprof__add_sample(p, fr, 4, v, lab, 2), 0);      /* merged */
	CHECK_EQ_U64(pprof__add_sample(p, fr, 4, v, lab, 1), 0);      /* other labels */
	CHECK_EQ_U64(pprof__add_sample(p, fr + 1, 3, v, lab, 1), 0);  /* another stack */
	CHECK_EQ_U64(pprof__add_type(p, "late", "count"), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pprof__samples(p), 3);
	/* (g, f) at 0x10 is one location, f alone at 0x10 another; main; the task */
	CHECK_EQ_U64(pprof__locations(p), 4);
	CHECK_EQ_U64(pprof__functions(p), 4);
	const char *unit, *file;
	CHECK_STR(pprof__type(p, 1, &unit), "cpu");
	CHECK_STR(unit, "nanoseconds");
	CHECK_STR(pprof__function(p, 1, &file), "app::g");
	CHECK_STR(file, "src/a.rs");
	CHECK(pprof__function(p, 99, NULL) == NULL);

	uint8_t *raw, *gz;
	size_t raw_len, gz_len;
	struct decoded d;
	CHECK_EQ_U64(pprof__encode(p, &raw, &raw_len), 0);
	decode(raw, raw_len, &d);
	CHECK_EQ_U64(d.types, 2);
	CHECK_EQ_U64(d.samples, 3);
	CHECK_EQ_U64(d.locations, 4);
	CHECK_EQ_U64(d.functions, 4);
	CHECK_EQ_U64(d.mappings, 1);
	CHECK_EQ_U64(d.comments, 1);
	CHECK_EQ_U64(d.period, 10101010);
	CHECK(d.n_strs > 0 && d.strs[0][0] == '\0');
	CHECK(find_str(&d, "app::g") > 0 && find_str(&d, "src/main.rs") > 0 &&
	      find_str(&d, "task") > 0 && find_str(&d, "bytes") > 0 && find_str(&d, "/bin/app") > 0);
	CHECK_EQ_U64(d.default_type, (uint64_t)find_str(&d, "cpu"));
	/* every string once */
	for (int i = 0; i < d.n_strs; i++)
		for (int j = i + 1; j < d.n_strs; j++)
			CHECK(strcmp(d.strs[i], d.strs[j]));
	decoded_free(&d);

	/* gzip'd: inflates to the same Profile */
	CHECK_EQ_U64(pprof__write_mem(p, &gz, &gz_len), 0);
	CHECK(gz_len > 18 && gz[0] == 0x1f && gz[1] == 0x8b);
	uint8_t *back = malloc(raw_len + 16);
	z_stream z = { 0 };
	CHECK(inflateInit2(&z, 15 + 16) == Z_OK);
	z.next_in = gz;
	z.avail_in = (uInt)gz_len;
	z.next_out = back;
	z.avail_out = (uInt)raw_len + 16;
	CHECK(inflate(&z, Z_FINISH) == Z_STREAM_END);
	CHECK_EQ_U64(z.total_out, raw_len);
	CHECK(!memcmp(back, raw, raw_len));
	inflateEnd(&z);
	free(back);
	free(gz);
	free(raw);

	/* speedscope: a profile per type, stacks root first, weights summed */
	char *js = NULL;
	size_t jl = 0;
	uint64_t np = 0;
	FILE *f = open_memstream(&js, &jl);
	CHECK_EQ_U64(speedscope_write(f, p, "app", &np), 0);
	fclose(f);
	CHECK_EQ_U64(np, 2);
	CHECK(strstr(js, "\"$schema\":\"https://www.speedscope.app/file-format-schema.json\"") != NULL);
	CHECK(strstr(js, "\"name\":\"cpu (nanoseconds)\",\"unit\":\"nanoseconds\",\"startValue\":0,"
			 "\"endValue\":400") != NULL);
	CHECK(strstr(js, "\"name\":\"samples (count)\",\"unit\":\"none\"") != NULL);
	/* root first: the task (function 4, frame 3), main (2), f (1), g (0); the
	 * third sample starts at f */
	CHECK(strstr(js, "\"samples\":[[3,2,1,0],[3,2,1,0],[3,2,1]]") != NULL);
	CHECK(strstr(js, "\"weights\":[200,100,100]") != NULL);
	free(js);
	pprof__free(p);
	pprof__free(NULL);
}

/* A recorded stack through pprof__add_stack(): folded to the task's code,
 * inlined functions one location, kernel frames their own, program_frame */
static void test_stack(void)
{
	static const struct as_frame fr[] = {
		{ 0xffffffff81000100ull, "__schedule" },
		{ 0xffffffff81a00010ull, "do_nanosleep" },
		{ 0x7f0000001000ull, "clock_nanosleep" },
		{ 0x555500001000ull, "std::thread::sleep", "library/std/src/thread/mod.rs", 10 },
		{ 0x555500002000ull, "app::step::{{closure}}", "src/main.rs", 12 },   /* inlined */
		{ 0x555500002000ull, "app::run::{{closure}}", "src/main.rs", 20 },
		{ 0x555500003000ull, "tokio::runtime::task::raw::poll" },
		{ 0x555500004000ull, "start_thread" },
	};
	const struct as_stack st = { .id = 1, .n_kernel = 2, .n_user = 6, .frames = fr };
	struct pprof *p = pprof__new();
	int64_t v[1] = { 5 };
	const char *root[] = { "app::run" };
	uint8_t *raw;
	size_t len;
	struct decoded d;

	CHECK_EQ_U64(pprof__add_type(p, "offcpu", "nanoseconds"), 0);
	CHECK_EQ_U64(pprof__add_stack(p, &(struct pprof_stack){ .roots = root, .n_roots = 1,
			.stack = &st }, v, &(struct pprof_label){ .key = "task", .str = "app::run" }, 1), 0);
	/* task, (step inlined into run), std::thread::sleep, clock_nanosleep,
	 * do_nanosleep, __schedule: the runtime's frames left out */
	CHECK_EQ_U64(pprof__locations(p), 6);
	CHECK_EQ_U64(pprof__functions(p), 7);
	CHECK_EQ_U64(pprof__encode(p, &raw, &len), 0);
	decode(raw, len, &d);
	CHECK(find_str(&d, "program_frame") > 0);
	CHECK(find_str(&d, "tokio::runtime::task::raw::poll") < 0);
	CHECK(find_str(&d, "start_thread") < 0);
	decoded_free(&d);
	free(raw);
	pprof__free(p);
	/* --all-frames */
	p = pprof__new();
	CHECK_EQ_U64(pprof__add_type(p, "offcpu", "nanoseconds"), 0);
	CHECK_EQ_U64(pprof__add_stack(p, &(struct pprof_stack){ .roots = root, .n_roots = 1,
			.stack = &st, .flags = STACK_FOLD_ALL }, v, NULL, 0), 0);
	CHECK_EQ_U64(pprof__locations(p), 8);
	CHECK_EQ_U64(pprof__add_stack(p, NULL, v, NULL, 0), (uint64_t)-EINVAL);
	pprof__free(p);
}

int main(void)
{
	RUN(test_build);
	RUN(test_stack);
	TEST_MAIN_END();
}
