/* Unit tests of USDT note reading (src/sym/usdt_notes.c): synthetic note
 * buffers (several notes, other owners, prelink adjustment, malformed and
 * cut buffers), the argument spec parser and value extraction, probe
 * selection, the notes of the built tests/apps/usdt/usdt_app, and USDT hit
 * counting (analysis/usdt_counts.c) with its text section. No root. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/usdt_counts.h"
#include "harness.h"
#include "output/usdt_report.h"
#include "sym/elf_image.h"
#include "sym/usdt_notes.h"

/* A note buffer being built: notes in host byte order, 4-byte aligned. */
struct nbuf {
	uint8_t b[4096];
	size_t len;
};

static void put(struct nbuf *n, const void *p, size_t len)
{
	memcpy(n->b + n->len, p, len);
	n->len += len;
}

static void pad4(struct nbuf *n)
{
	while (n->len % 4)
		n->b[n->len++] = 0;
}

static void note(struct nbuf *n, const char *owner, uint32_t type, const void *desc, uint32_t descsz)
{
	uint32_t namesz = (uint32_t)strlen(owner) + 1;
	put(n, &namesz, 4);
	put(n, &descsz, 4);
	put(n, &type, 4);
	put(n, owner, namesz);
	pad4(n);
	put(n, desc, descsz);
	pad4(n);
}

static void sdt(struct nbuf *n, uint64_t pc, uint64_t base, uint64_t sema,
		const char *prov, const char *name, const char *args)
{
	uint8_t d[512];
	size_t k = 0;
	memcpy(d, &pc, 8);
	memcpy(d + 8, &base, 8);
	memcpy(d + 16, &sema, 8);
	k = 24;
	memcpy(d + k, prov, strlen(prov) + 1);
	k += strlen(prov) + 1;
	memcpy(d + k, name, strlen(name) + 1);
	k += strlen(name) + 1;
	memcpy(d + k, args, strlen(args) + 1);
	k += strlen(args) + 1;
	note(n, "stapsdt", 3, d, (uint32_t)k);
}

static void test_parse_synthetic(void)
{
	struct nbuf n = { .len = 0 };
	struct usdt_notes notes = { 0 };

	sdt(&n, 0x1078, 0x203f, 0, "asyncscope_test", "tick", "-8@%rax");
	note(&n, "GNU", 3, "\x01\x02\x03\x04", 4);     /* another owner: skipped */
	sdt(&n, 0x1208, 0x203f, 0x4020, "asyncscope_test", "guarded", "-4@%edi 8@$5");
	sdt(&n, 0x1300, 0x203f, 0, "libc", "setjmp", "");
	CHECK_EQ_U64(usdt_notes__parse(&notes, n.b, n.len, 0x203f), 0);
	CHECK_EQ_U64(notes.n, 3);
	if (notes.n == 3) {
		CHECK_STR(notes.sites[0].provider, "asyncscope_test");
		CHECK_STR(notes.sites[0].name, "tick");
		CHECK_STR(notes.sites[0].args, "-8@%rax");
		CHECK_EQ_U64(notes.sites[0].addr, 0x1078);
		CHECK_EQ_U64(notes.sites[0].sema, 0);
		CHECK_EQ_U64(notes.sites[0].arg0.kind, USDT_ARG_REG);
		CHECK_EQ_U64(notes.sites[0].arg0.reg_off, 80);
		CHECK_EQ_U64(notes.sites[1].sema, 0x4020);
		CHECK_EQ_U64(notes.sites[1].arg0.kind, USDT_ARG_REG);
		CHECK_EQ_U64(notes.sites[1].arg0.reg_off, 112);
		CHECK_EQ_U64((uint64_t)(int64_t)notes.sites[1].arg0.size, (uint64_t)-4);
		CHECK_STR(notes.sites[2].args, "");
		CHECK_EQ_U64(notes.sites[2].arg0.kind, USDT_ARG_NONE);
	}
	usdt_notes__clear(&notes);

	/* prelinked: .stapsdt.base moved by 0x10000, the sites and semaphore too */
	CHECK_EQ_U64(usdt_notes__parse(&notes, n.b, n.len, 0x1203f), 0);
	CHECK_EQ_U64(notes.n, 3);
	if (notes.n == 3) {
		CHECK_EQ_U64(notes.sites[0].addr, 0x11078);
		CHECK_EQ_U64(notes.sites[1].addr, 0x11208);
		CHECK_EQ_U64(notes.sites[1].sema, 0x14020);
		CHECK_EQ_U64(notes.sites[0].sema, 0);
	}
	usdt_notes__clear(&notes);

	/* every cut of the buffer: an error or fewer notes, never a crash */
	for (size_t cut = 0; cut < n.len; cut++) {
		uint8_t *copy = malloc(cut ? cut : 1); /* exact size: ASan sees overreads */
		memcpy(copy, n.b, cut);
		int rc = usdt_notes__parse(&notes, copy, cut, 0);
		CHECK(rc == 0 || rc == -EBADMSG);
		CHECK(notes.n <= 3);
		usdt_notes__clear(&notes);
		free(copy);
	}

	/* strings not terminated inside the descriptor */
	struct nbuf bad = { .len = 0 };
	uint8_t d[30] = { 0 };
	memset(d + 24, 'x', 6);
	note(&bad, "stapsdt", 3, d, sizeof(d));
	CHECK_EQ_U64(usdt_notes__parse(&notes, bad.b, bad.len, 0), (uint64_t)-EBADMSG);
	/* a descriptor too short for the three addresses */
	bad.len = 0;
	note(&bad, "stapsdt", 3, d, 16);
	CHECK_EQ_U64(usdt_notes__parse(&notes, bad.b, bad.len, 0), (uint64_t)-EBADMSG);
	/* a huge descsz */
	bad.len = 0;
	sdt(&bad, 1, 0, 0, "p", "n", "");
	uint32_t huge = 0xfffffff0u;
	memcpy(bad.b + 4, &huge, 4);
	CHECK_EQ_U64(usdt_notes__parse(&notes, bad.b, bad.len, 0), (uint64_t)-EBADMSG);
	usdt_notes__clear(&notes);
}

static void test_arg_spec(void)
{
	struct usdt_arg a;

	CHECK_EQ_U64(usdt_arg_parse("-8@%rax", &a), 0);
	CHECK_EQ_U64(a.kind, USDT_ARG_REG);
	CHECK_EQ_U64(usdt_arg_value(&a, 999), 999);
	CHECK_EQ_U64(usdt_arg_parse("-4@%eax 8@%rdx", &a), 0);
	CHECK_EQ_U64(usdt_arg_value(&a, 0xdeadbeefffffffffULL), (uint64_t)-1);
	CHECK_EQ_U64(usdt_arg_value(&a, 0x1234500000007ULL), 7);
	CHECK_EQ_U64(usdt_arg_parse("4@%r12d", &a), 0);
	CHECK_EQ_U64(a.reg_off, 24);
	CHECK_EQ_U64(usdt_arg_value(&a, 0xffffffffffffffffULL), 0xffffffffULL);
	CHECK_EQ_U64(usdt_arg_parse("1@%ah", &a), 0);
	CHECK_EQ_U64(a.shift, 8);
	CHECK_EQ_U64(usdt_arg_value(&a, 0x1234), 0x12);
	CHECK_EQ_U64(usdt_arg_parse("%sil", &a), 0);     /* no size: the register's */
	CHECK_EQ_U64(a.size, 1);
	CHECK_EQ_U64(a.reg_off, 104);
	CHECK_EQ_U64(usdt_arg_parse("%r15", &a), 0);
	CHECK_EQ_U64(a.reg_off, 0);
	CHECK_EQ_U64(usdt_arg_parse("-4@$-5", &a), 0);
	CHECK_EQ_U64(a.kind, USDT_ARG_CONST);
	CHECK_EQ_U64(usdt_arg_value(&a, 12345), (uint64_t)-5);
	CHECK_EQ_U64(usdt_arg_parse("8@$0x10", &a), 0);
	CHECK_EQ_U64(usdt_arg_value(&a, 0), 16);
	CHECK_EQ_U64(usdt_arg_parse("-8@-24(%rbp)", &a), 0);
	CHECK_EQ_U64(a.kind, USDT_ARG_OTHER);
	CHECK_EQ_U64(usdt_arg_value(&a, 77), 0);
	CHECK_EQ_U64(usdt_arg_parse("8@foo(%rip)", &a), 0);
	CHECK_EQ_U64(a.kind, USDT_ARG_OTHER);
	CHECK_EQ_U64(usdt_arg_parse("  ", &a), 0);
	CHECK_EQ_U64(a.kind, USDT_ARG_NONE);
	CHECK_EQ_U64(usdt_arg_parse("3@%rax", &a), (uint64_t)-EINVAL);
	CHECK_EQ_U64(usdt_arg_parse("8@%xyz", &a), (uint64_t)-EINVAL);
}

static void test_match(void)
{
	struct usdt_site s = { .provider = "asyncscope_test", .name = "tick" };

	CHECK(usdt_match("asyncscope_test:tick", &s));
	CHECK(usdt_match("asyncscope_test:*", &s));
	CHECK(!usdt_match("asyncscope_test:tock", &s));
	CHECK(!usdt_match("asyncscope:tick", &s));
	CHECK(!usdt_match("asyncscope_test_x:*", &s));
	CHECK(!usdt_match("asyncscope_test", &s));
}

/* The built test program: its two probes, the guarded one with a
 * semaphore inside a writable loadable segment. */
static void test_built_app(void)
{
	const char *path = "tests/apps/usdt/usdt_app";

	if (access(path, R_OK)) {
		printf("%s not built (make apps): skipped\n", path);
		return;
	}
	struct usdt_notes *notes = usdt_notes__read(path);
	struct elf_image *img = elf_image__open(path);
	CHECK(notes != NULL);
	CHECK(img != NULL);
	if (!notes || !img)
		goto out;
	CHECK_EQ_U64(notes->n, 2);
	size_t ticks = 0, guarded = 0;
	for (size_t i = 0; i < notes->n; i++) {
		const struct usdt_site *s = &notes->sites[i];
		uint64_t off;
		uint8_t code[4];
		CHECK_STR(s->provider, "asyncscope_test");
		CHECK(s->arg0.kind == USDT_ARG_REG || s->arg0.kind == USDT_ARG_CONST);
		CHECK_EQ_U64(elf_image__file_offset(img, s->addr, &off), 0);
		CHECK(elf_image__read(img, s->addr, code, 1) == 1 && code[0] == 0x90);
		CHECK(insn_emulated(code, 1));
		if (!strcmp(s->name, "tick")) {
			ticks++;
			CHECK_EQ_U64(s->sema, 0);
		} else if (!strcmp(s->name, "guarded")) {
			guarded++;
			CHECK(s->sema != 0);
			CHECK_EQ_U64(elf_image__any_file_offset(img, s->sema, &off), 0);
			CHECK(elf_image__file_offset(img, s->sema, &off) != 0); /* not code */
		}
	}
	CHECK_EQ_U64(ticks, 1);
	CHECK_EQ_U64(guarded, 1);
out:
	usdt_notes__free(notes);
	elf_image__free(img);

	/* a binary without notes: an empty set; not ELF: ENOEXEC */
	notes = usdt_notes__read("/bin/true");
	CHECK(notes != NULL);
	if (notes)
		CHECK_EQ_U64(notes->n, 0);
	usdt_notes__free(notes);
	errno = 0;
	CHECK(usdt_notes__read("tests/unit/harness.h") == NULL);
	CHECK_EQ_U64(errno, ENOEXEC);
	CHECK(usdt_notes__read("/nonexistent") == NULL);
	CHECK_EQ_U64(errno, ENOENT);
	usdt_notes__free(NULL);
}

/* Hits per probe (two sites of one provider:name add up) and per task,
 * a freed and reused task address counted as a new task, hits outside
 * polls, a USDT event naming a non-USDT probe ignored. */
static void test_counts(void)
{
	struct as_probe probes[] = {
		{ .role = AS_ROLE_POLL, .symbol = "raw::poll", .future = "app::ticker" },
		{ .role = AS_ROLE_USDT, .symbol = "app:tick" },
		{ .role = AS_ROLE_USDT, .symbol = "app:tock" },
		{ .role = AS_ROLE_USDT, .symbol = "app:tick" },
		{ .role = AS_ROLE_FREE, .symbol = "raw::dealloc" },
	};
	struct as_trace_meta meta = { .probes = probes, .n_probes = 5 };
	struct usdt_counts *c = usdt_counts__new(&meta);
	const uint64_t A = 0x1000;
	uint64_t ts = 1;

	CHECK(c != NULL);
	if (!c)
		return;
#define EV(...) usdt_counts__add(c, &(struct as_event){ .ts = ts++, __VA_ARGS__ })
	for (int i = 0; i < 3; i++) {        /* task A (id 7): 3 ticks at site 1, 2 at site 3 */
		EV(.type = AS_EV_POLL_BEGIN, .tid = 1, .task = A, .other = 7);
		EV(.type = AS_EV_USDT, .probe = 1, .tid = 1, .task = A, .other = (uint64_t)i);
		if (i < 2)
			EV(.type = AS_EV_USDT, .probe = 3, .tid = 1, .task = A, .other = 100);
		EV(.type = AS_EV_POLL_END, .tid = 1, .task = A);
	}
	EV(.type = AS_EV_FREE, .probe = 4, .tid = 1, .task = A);
	EV(.type = AS_EV_POLL_BEGIN, .tid = 2, .task = A, .other = 8);  /* a new task at A */
	EV(.type = AS_EV_USDT, .probe = 1, .tid = 2, .task = A, .other = (uint64_t)-3);
	EV(.type = AS_EV_USDT, .probe = 2, .tid = 3, .other = 5);       /* outside any poll */
	EV(.type = AS_EV_USDT, .probe = 0, .tid = 3);                    /* not a USDT probe */
	EV(.type = AS_EV_USDT, .probe = 99, .tid = 3);                   /* no such probe */
#undef EV
	usdt_counts__finish(c);
	CHECK_EQ_U64(usdt_counts__add(c, &(struct as_event){ .type = AS_EV_USDT, .probe = 1 }),
		     (uint64_t)-EINVAL);
	CHECK_EQ_U64(usdt_counts__total(c), 7);
	CHECK_EQ_U64(usdt_counts__bad(c), 2);
	size_t np, nt;
	const struct usdt_probe_count *p = usdt_counts__probes(c, &np);
	const struct usdt_task_count *t = usdt_counts__tasks(c, &nt);
	CHECK_EQ_U64(np, 2);
	if (np == 2) {
		CHECK_STR(p[0].probe, "app:tick");
		CHECK_EQ_U64(p[0].hits, 6);
		CHECK_EQ_U64(p[0].in_task, 6);
		CHECK_EQ_U64((uint64_t)p[0].arg_min, (uint64_t)-3);
		CHECK_EQ_U64(p[0].arg_max, 100);
		CHECK_STR(p[1].probe, "app:tock");
		CHECK_EQ_U64(p[1].hits, 1);
		CHECK_EQ_U64(p[1].in_task, 0);
	}
	CHECK_EQ_U64(nt, 2);
	if (nt == 2) {
		CHECK_EQ_U64(t[0].hits, 5);
		CHECK_EQ_U64(t[0].tokio_id, 7);
		CHECK_STR(t[0].name, "app::ticker");
		CHECK_EQ_U64(t[1].hits, 1);
		CHECK_EQ_U64(t[1].tokio_id, 8);
		CHECK_EQ_U64(t[1].task, A);
	}

	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	CHECK_EQ_U64(usdt_report_text(f, c), 0);
	fclose(f);
	CHECK(strstr(text, "USDT PROBES  7 hits, 6 inside tasks") != NULL);
	CHECK(strstr(text, "app:tick                                6          6  -3..100") != NULL);
	CHECK(strstr(text, "app:tick                                5  #7 app::ticker\n") != NULL);
	CHECK(strstr(text, "2 USDT events named no USDT probe") != NULL);
	free(text);
	usdt_counts__free(c);

	/* a trace without USDT probes: no section */
	struct as_trace_meta plain = { .probes = probes, .n_probes = 1 };
	c = usdt_counts__new(&plain);
	CHECK(c != NULL);
	text = NULL;
	f = open_memstream(&text, &len);
	usdt_counts__finish(c);
	CHECK_EQ_U64(usdt_report_text(f, c), 0);
	fclose(f);
	CHECK_EQ_U64(len, 0);
	free(text);
	usdt_counts__free(c);
	usdt_counts__free(NULL);
}

int main(void)
{
	RUN(test_parse_synthetic);
	RUN(test_arg_spec);
	RUN(test_match);
	RUN(test_built_app);
	RUN(test_counts);
	TEST_MAIN_END();
}
