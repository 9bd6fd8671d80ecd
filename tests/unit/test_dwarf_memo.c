/* Unit tests for sym/dwarf_memo.c and its users (dwarf_types, dwarf_names,
 * rt_context) on a copy of a real test program (tests/apps, `make apps`)
 * in a private cache directory: what a second session reads from the memo
 * is what the first one computed (DIE offsets, qualified names, subprogram
 * names, CONTEXT's layout); a memo is not trusted for a rebuilt binary (an
 * other modification time), when others may write it, or when a line is
 * malformed; ASYNCSCOPE_CACHE_DIR="" keeps no file. */
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dump/rt_context.h"
#include "harness.h"
#include "sym/dwarf_memo.h"
#include "sym/dwarf_names.h"
#include "sym/dwarf_types.h"
#include "sym/elf_image.h"

#define SRC "tests/apps/target/release/idle_many"

static char dir[64], bin[96];

static int copy_file(const char *from, const char *to)
{
	char buf[1 << 16];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ssize_t n = 0;

	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return in < 0 || out < 0 || n < 0 ? -1 : 0;
}

static struct dwarf_memo *memo_of(const char *path, const char *kind, Elf **elf, int *fd)
{
	*fd = open(path, O_RDONLY);
	*elf = *fd >= 0 ? elf_begin(*fd, ELF_C_READ, NULL) : NULL;
	return dwarf_memo__open(*elf, *fd, kind);
}

static void memo_close(struct dwarf_memo *m, Elf *elf, int fd)
{
	dwarf_memo__free(m);
	elf_end(elf);
	if (fd >= 0)
		close(fd);
}

static void test_round_trip(void)
{
	Elf *elf;
	int fd;
	const char *v;
	struct dwarf_memo *m = memo_of(bin, "test", &elf, &fd);

	CHECK(m != NULL);
	CHECK(dwarf_memo__path(m) != NULL);
	CHECK(!strncmp(dwarf_memo__path(m) ? dwarf_memo__path(m) : "", dir, strlen(dir)));
	CHECK(!dwarf_memo__get(m, "a", &v));
	CHECK(dwarf_memo__put(m, "a", "x y") == 0);
	CHECK(dwarf_memo__put(m, "b:c<d, e>", "") == 0);
	CHECK(dwarf_memo__put(m, "a", "z") == 0);   /* replaced */
	CHECK(dwarf_memo__put(m, "t\tab", "1") == -EINVAL);
	CHECK(dwarf_memo__put(m, "nl", "1\n2") == -EINVAL);
	CHECK(dwarf_memo__get(m, "a", &v) && !strcmp(v, "z"));
	CHECK(dwarf_memo__save(m) == 0);
	memo_close(m, elf, fd);

	m = memo_of(bin, "test", &elf, &fd);
	CHECK(dwarf_memo__get(m, "a", &v) && !strcmp(v, "z"));
	CHECK(dwarf_memo__get(m, "b:c<d, e>", &v) && !strcmp(v, ""));
	CHECK(!dwarf_memo__get(m, "t\tab", &v));
	memo_close(m, elf, fd);
}

/* The memo of bin for kind "test" holds key "a" */
static bool holds_a(void)
{
	Elf *elf;
	int fd;
	const char *v;
	struct dwarf_memo *m = memo_of(bin, "test", &elf, &fd);
	bool r = dwarf_memo__get(m, "a", &v);

	memo_close(m, elf, fd);
	return r;
}

static void test_not_trusted(void)
{
	char path[256];
	struct timespec ts[2] = { { 0, UTIME_OMIT }, { 1000000000, 0 } };
	FILE *f;

	CHECK(holds_a());
	/* writable by others: not read */
	{
		Elf *elf;
		int fd;
		struct dwarf_memo *m = memo_of(bin, "test", &elf, &fd);
		snprintf(path, sizeof(path), "%s", dwarf_memo__path(m));
		memo_close(m, elf, fd);
	}
	CHECK(chmod(path, 0666) == 0);
	CHECK(!holds_a());
	CHECK(chmod(path, 0600) == 0);
	CHECK(holds_a());
	/* a malformed line: none of it */
	f = fopen(path, "a");
	CHECK(f != NULL);
	if (f) {
		fputs("no tab here\n", f);
		fclose(f);
	}
	CHECK(!holds_a());
	/* the binary rebuilt (another mtime): stale */
	{
		Elf *elf;
		int fd;
		struct dwarf_memo *m = memo_of(bin, "test", &elf, &fd);
		dwarf_memo__put(m, "a", "again");
		CHECK(dwarf_memo__save(m) == 0);
		memo_close(m, elf, fd);
	}
	CHECK(holds_a());
	CHECK(utimensat(AT_FDCWD, bin, ts, 0) == 0);
	CHECK(!holds_a());
}

static void test_switched_off(void)
{
	Elf *elf;
	int fd;
	const char *v;
	struct dwarf_memo *m;

	setenv("ASYNCSCOPE_CACHE_DIR", "", 1);
	m = memo_of(bin, "test", &elf, &fd);
	CHECK(m != NULL);
	CHECK(dwarf_memo__path(m) == NULL);
	CHECK(dwarf_memo__put(m, "k", "v") == 0);
	CHECK(dwarf_memo__get(m, "k", &v) && !strcmp(v, "v"));   /* this process only */
	CHECK(dwarf_memo__save(m) == 0);
	memo_close(m, elf, fd);
	setenv("ASYNCSCOPE_CACHE_DIR", dir, 1);
}

/* What one session of dwarf_types finds and names. */
struct seen {
	Dwarf_Off off[3];
	int found[3];
	char name[3][512];
	char *sub[2];
	uint64_t ctx_addr;
	int ctx_ok;
};

static void look(struct seen *s)
{
	static const char *const names[] = {
		"tokio::runtime::task::core::Header",
		"tokio::runtime::task::list::OwnedTasks",
		"no::such::Type",
	};
	struct dwarf_types *dt = dwarf_types__open(bin);
	Dwarf_Die dies[3];
	struct rt_context *rc;
	const char *why = NULL;
	uint64_t addrs[2] = { 0, 1 };

	memset(s, 0, sizeof(*s));
	CHECK(dt != NULL);
	if (!dt)
		return;
	CHECK(dwarf_types__find_norm(dt, names, 3, dies, s->found) == 2);
	for (int i = 0; i < 3; i++)
		if (s->found[i]) {
			const char *n = dwarf_types__name(dt, &dies[i]);
			s->off[i] = dwarf_dieoffset(&dies[i]);
			snprintf(s->name[i], sizeof(s->name[i]), "%s", n ? n : "(null)");
		}
	rc = rt_context__open(dt, bin, &why);
	s->ctx_ok = rc != NULL;
	if (rc)
		s->ctx_addr = rt_context__addr(rc, 0x7f0000001000ull);
	rt_context__free(rc);
	dwarf_types__free(dt);   /* writes the memo */
	/* a poll copy's address, and one no subprogram starts at */
	{
		struct elf_image *img = elf_image__open(bin);
		for (size_t i = 0; img && i < img->n_syms; i++)
			if (!strcmp(img->syms[i].norm, "tokio::runtime::task::raw::poll")) {
				addrs[0] = img->syms[i].addr;
				break;
			}
		elf_image__free(img);
	}
	CHECK(addrs[0] != 0);
	int fd = open(bin, O_RDONLY | O_CLOEXEC);
	dwarf_subprogram_names_fd(fd, addrs, 2, s->sub);
	if (fd >= 0)
		close(fd);
}

static void test_same_results(void)
{
	struct seen cold, warm;

	look(&cold);
	look(&warm);
	CHECK(cold.found[0] && cold.found[1] && !cold.found[2]);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ_U64(warm.found[i], cold.found[i]);
		CHECK_EQ_U64(warm.off[i], cold.off[i]);
		CHECK_STR(warm.name[i], cold.name[i]);
	}
	CHECK_STR(cold.name[0], "tokio::runtime::task::core::Header");
	CHECK(!strncmp(cold.name[1], "tokio::runtime::task::list::OwnedTasks<", 39));
	CHECK(cold.ctx_ok && warm.ctx_ok);
	CHECK_EQ_U64(warm.ctx_addr, cold.ctx_addr);
	CHECK(cold.sub[0] && !strncmp(cold.sub[0], "poll<", 5));
	CHECK_STR(warm.sub[0], cold.sub[0]);
	CHECK(!cold.sub[1] && !warm.sub[1]);
	for (int i = 0; i < 2; i++) {
		free(cold.sub[i]);
		free(warm.sub[i]);
	}
	/* the memo was written and is what the warm session read */
	{
		Elf *elf;
		int fd;
		const char *v;
		struct dwarf_memo *m = memo_of(bin, "types", &elf, &fd);
		CHECK(dwarf_memo__get(m, "F:tokio::runtime::task::core::Header", &v));
		CHECK(dwarf_memo__get(m, "F:no::such::Type", &v) && !strcmp(v, "-"));
		memo_close(m, elf, fd);
	}
}

int main(void)
{
	char cmd[128];

	elf_version(EV_CURRENT);
	snprintf(dir, sizeof(dir), "/tmp/asyncscope-test-memo-%ld", (long)getpid());
	snprintf(bin, sizeof(bin), "%s/idle_many", dir);
	if (mkdir(dir, 0700) || copy_file(SRC, bin)) {
		fprintf(stderr, "%s: %s (run `make apps`)\n", SRC, strerror(errno));
		printf("0 passed, 1 failed\n");
		return 1;
	}
	setenv("ASYNCSCOPE_CACHE_DIR", dir, 1);
	RUN(test_round_trip);
	RUN(test_same_results);
	RUN(test_switched_off);
	RUN(test_not_trusted);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd)) {
	}
	TEST_MAIN_END();
}
