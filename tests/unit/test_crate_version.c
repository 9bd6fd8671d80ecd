/* Crate versions from a binary's paths (sym/crate_version.h) on the real
 * test programs: tests/apps/target/release/yields (tokio 1.24.2 from
 * Debian's registry; built by `make apps`) and, when built,
 * tests/apps-tokio153/target/release/yields (tokio 1.53.1); a copy without
 * DWARF (objcopy --strip-debug: only panic locations remain); synthetic
 * ELF files written here with libelf (crate-name boundaries, two versions,
 * pre-releases, unversioned paths); and the range from symbol evidence.
 * Prints how long detection takes on each program. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "sym/crate_version.h"
#include "sym/dwarf_types.h"

#define Y124 "tests/apps/target/release/yields"
#define Y153 "tests/apps-tokio153/target/release/yields"

static char vtext[CRATE_VERSIONS_MAX][64];

/* Versions of crate in path's paths; their text in vtext[]. */
static int versions_of(const struct crate_paths *cp, const char *crate, struct crate_versions *out)
{
	int n = crate_paths__versions(cp, crate, out);

	for (int i = 0; i < n; i++)
		semver_format(&out->hits[i].version, vtext[i], sizeof(vtext[i]));
	return n;
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Opens path and times it (the best of 3: what record pays at start, cache
 * warm). */
static struct crate_paths *open_timed(const char *path)
{
	double best = 1e9;
	struct crate_paths *cp = NULL;

	for (int i = 0; i < 3; i++) {
		double t0 = now_ms();
		crate_paths__free(cp);
		cp = crate_paths__open(path);
		double t = now_ms() - t0;
		if (t < best)
			best = t;
	}
	printf("%s: version detection %.1f ms\n", path, best);
	return cp;
}

static void test_tokio_124(void)
{
	struct crate_paths *cp = open_timed(Y124);
	struct crate_versions v;

	CHECK(cp != NULL);
	if (!cp) {
		fprintf(stderr, "%s: %s (run `make apps`)\n", Y124, strerror(errno));
		return;
	}
	CHECK_EQ_U64(versions_of(cp, "tokio", &v), 1);
	CHECK_STR(vtext[0], "1.24.2");
	CHECK(v.searched_dwarf);
	CHECK(v.searched_rodata);
	CHECK(v.hits[0].dwarf_paths > 100);   /* every file of every unit */
	CHECK(v.hits[0].panic_paths > 10);
	CHECK_STR(crate_version_hit__source(&v.hits[0]), "DWARF paths and panic locations");
	CHECK_EQ_U64(v.more, 0);

	/* two versions of one crate in one binary: the program's libc and the
	 * standard library's, most named first */
	CHECK_EQ_U64(versions_of(cp, "libc", &v), 2);
	CHECK_STR(vtext[0], "0.2.178");
	CHECK_STR(vtext[1], "0.2.139");
	CHECK(v.hits[0].dwarf_paths > v.hits[1].dwarf_paths);
	CHECK(v.hits[1].dwarf_paths > 0);

	/* only whole components with the whole name */
	CHECK_EQ_U64(versions_of(cp, "tok", &v), 0);
	CHECK_EQ_U64(versions_of(cp, "okio", &v), 0);
	CHECK_EQ_U64(versions_of(cp, "tokio-util", &v), 0);
	CHECK(v.searched_dwarf);   /* said for unknown answers too */
	CHECK(crate_paths__versions(cp, "", &v) == -EINVAL);

	/* the listing holds what the queries answer */
	const char *crate;
	struct crate_version_hit hit;
	size_t tokio = 0, i;
	for (i = 0; crate_paths__entry(cp, i, &crate, &hit) == 0; i++)
		tokio += !strcmp(crate, "tokio");
	CHECK_EQ_U64(tokio, 1);
	CHECK(i > 3);
	CHECK(crate_paths__entry(cp, i, &crate, &hit) == -ENOENT);
	crate_paths__free(cp);
}

static void test_tokio_153(void)
{
	struct crate_paths *cp;
	struct crate_versions v;

	if (access(Y153, R_OK)) {
		printf("%s not built (make apps needs ../shared/crates): skipped\n", Y153);
		return;
	}
	cp = open_timed(Y153);
	CHECK(cp != NULL);
	if (!cp)
		return;
	CHECK_EQ_U64(versions_of(cp, "tokio", &v), 1);
	CHECK_STR(vtext[0], "1.53.1");
	CHECK(v.hits[0].dwarf_paths > 100);
	CHECK(v.hits[0].panic_paths > 10);
	crate_paths__free(cp);
}

/* The same answer through a DWARF session already open (what record has),
 * and through the file descriptor alone. */
static void test_shared_session(void)
{
	struct crate_paths *a = crate_paths__open(Y124), *b = NULL, *c = NULL;
	struct dwarf_types *dt = dwarf_types__open(Y124);
	struct crate_versions va, vb, vc;
	int fd = open(Y124, O_RDONLY);

	CHECK(a && dt && fd >= 0);
	if (!a || !dt || fd < 0)
		goto out;
	b = crate_paths__open_fd(-1, dwarf_types__dwarf(dt));
	c = crate_paths__open_fd(fd, NULL);
	CHECK(b && c);
	if (!b || !c)
		goto out;
	CHECK_EQ_U64(crate_paths__versions(a, "tokio", &va), 1);
	CHECK_EQ_U64(crate_paths__versions(b, "tokio", &vb), 1);
	CHECK_EQ_U64(crate_paths__versions(c, "tokio", &vc), 1);
	CHECK(!memcmp(&va, &vb, sizeof(va)));
	CHECK(!memcmp(&va, &vc, sizeof(va)));
	CHECK(fcntl(fd, F_GETFD) >= 0);   /* borrowed, not closed */
	/* the session still works after being borrowed */
	const char *name = "tokio::runtime::task::core::Header";
	Dwarf_Die die;
	int found;
	CHECK(dwarf_types__find(dt, &name, 1, &die, &found) == 1);
out:
	crate_paths__free(a);
	crate_paths__free(b);
	crate_paths__free(c);
	dwarf_types__free(dt);
	if (fd >= 0)
		close(fd);
	CHECK(crate_paths__open_fd(-1, NULL) == NULL && errno == EBADF);
	CHECK(crate_paths__open("/nonexistent/x") == NULL && errno == ENOENT);
	crate_paths__free(NULL);
}

static char tmpdir[] = "/tmp/as-test-crate-version-XXXXXX";

/* Without DWARF only the panic locations in .rodata remain. */
static void test_stripped(void)
{
	const char *src = access(Y153, R_OK) ? Y124 : Y153;
	const char *want = access(Y153, R_OK) ? "1.24.2" : "1.53.1";
	char out[128], cmd[512];
	struct crate_versions v, full;
	struct crate_paths *cp;

	snprintf(out, sizeof(out), "%s/stripped", tmpdir);
	snprintf(cmd, sizeof(cmd), "objcopy --strip-debug %s %s", src, out);
	if (system(cmd)) {
		printf("objcopy failed or missing: stripped copy skipped\n");
		return;
	}
	cp = crate_paths__open(out);
	CHECK(cp != NULL);
	if (!cp)
		return;
	CHECK_EQ_U64(versions_of(cp, "tokio", &v), 1);
	CHECK_STR(vtext[0], want);
	CHECK(!v.searched_dwarf);
	CHECK(v.searched_rodata);
	CHECK_EQ_U64(v.hits[0].dwarf_paths, 0);
	CHECK_STR(crate_version_hit__source(&v.hits[0]), "panic locations");
	crate_paths__free(cp);
	/* exactly the panic locations of the full binary */
	cp = crate_paths__open(src);
	CHECK(cp != NULL);
	if (cp) {
		CHECK_EQ_U64(crate_paths__versions(cp, "tokio", &full), 1);
		CHECK_EQ_U64(v.hits[0].panic_paths, full.hits[0].panic_paths);
		crate_paths__free(cp);
	}
	unlink(out);
}

/* Writes a relocatable-looking ELF file with one .rodata section. */
static int write_elf(const char *path, const char *rodata, size_t len)
{
	static char shstrtab[] = "\0.rodata\0.shstrtab";
	Elf *e = NULL;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600), ret = -1;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_WRITE, NULL);
	Elf64_Ehdr *eh = e ? elf64_newehdr(e) : NULL;
	if (!eh)
		goto out;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_machine = EM_X86_64;
	eh->e_type = ET_EXEC;
	eh->e_version = EV_CURRENT;
	const char *bufs[2] = { rodata, shstrtab };
	size_t lens[2] = { len, sizeof(shstrtab) };
	Elf_Scn *scns[2];
	for (int i = 0; i < 2; i++) {
		Elf_Scn *s = elf_newscn(e);
		Elf_Data *d = s ? elf_newdata(s) : NULL;
		Elf64_Shdr *sh = s ? elf64_getshdr(s) : NULL;
		if (!d || !sh)
			goto out;
		d->d_buf = (void *)bufs[i];
		d->d_size = lens[i];
		d->d_type = ELF_T_BYTE;
		d->d_align = 1;
		d->d_version = EV_CURRENT;
		sh->sh_name = i ? 9 : 1;
		sh->sh_type = i ? SHT_STRTAB : SHT_PROGBITS;
		sh->sh_flags = i ? 0 : SHF_ALLOC;
		scns[i] = s;
	}
	eh->e_shstrndx = (Elf64_Half)elf_ndxscn(scns[1]);
	if (elf_update(e, ELF_C_WRITE) < 0)
		goto out;
	ret = 0;
out:
	if (e)
		elf_end(e);
	close(fd);
	return ret;
}

static struct crate_paths *synthetic(const char *rodata, size_t len)
{
	char path[128];
	struct crate_paths *cp;

	snprintf(path, sizeof(path), "%s/synthetic", tmpdir);
	CHECK(write_elf(path, rodata, len) == 0);
	cp = crate_paths__open(path);
	CHECK(cp != NULL);
	unlink(path);
	return cp;
}

/* Panic locations as rustc lays them out: file names back to back with no
 * separator, between other literals. */
static void test_synthetic_rodata(void)
{
	static const char rodata[] =
		"called `Option::unwrap()` on a `None` value"
		"/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/tokio-util-0.7.19/src/codec.rs"
		"/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/tokio-macros-2.7.2/src/entry.rs"
		"/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/tokio-1.53.1/src/runtime/task/mod.rs"
		"/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/tokio-1.53.1/src/runtime/park.rs"
		"\0/home/u/app/vendor/tokio-1.47.0/src/sync/mutex.rs\x01\x02"
		"mytokio-9.9.9/src/lib.rs"          /* another crate */
		"/x/tokio-1.2/src/a.rs"             /* not a full version */
		"/x/tokio-01.2.3/src/a.rs"          /* not a version */
		"/x/tokio-1.2.3.4/src/a.rs"
		"/x/tokio-2.0.0-rc.1/src/a.rs"
		"/x/tokio-1.53.1"                   /* not a directory (no '/' after) */
		"\0C:\\cargo\\tokio-1.53.1\\src\\a.rs"   /* not a Linux path */
		"tokio-1.40.0/src/trimmed.rs";      /* trim-paths, after a literal: lost */
	struct crate_paths *cp = synthetic(rodata, sizeof(rodata) - 1);
	struct crate_versions v;

	if (!cp)
		return;
	CHECK_EQ_U64(versions_of(cp, "tokio", &v), 3);
	CHECK_STR(vtext[0], "1.53.1");
	CHECK_EQ_U64(v.hits[0].panic_paths, 2);
	CHECK_EQ_U64(v.hits[0].dwarf_paths, 0);
	CHECK_STR(vtext[1], "2.0.0-rc.1");   /* equal counts: newest first */
	CHECK_STR(vtext[2], "1.47.0");
	CHECK_EQ_U64(v.hits[2].panic_paths, 1);
	CHECK(!v.searched_dwarf);
	CHECK(v.searched_rodata);
	CHECK_EQ_U64(versions_of(cp, "tokio-util", &v), 1);
	CHECK_STR(vtext[0], "0.7.19");
	CHECK_EQ_U64(versions_of(cp, "tokio-macros", &v), 1);
	CHECK_STR(vtext[0], "2.7.2");
	CHECK_EQ_U64(versions_of(cp, "mytokio", &v), 1);
	CHECK_EQ_U64(versions_of(cp, "util", &v), 0);
	CHECK_EQ_U64(versions_of(cp, "macros", &v), 0);
	crate_paths__free(cp);
}

/* Plain `cargo vendor`, git checkouts, remapped paths: unknown. */
static void test_synthetic_unknown(void)
{
	static const char rodata[] =
		"/home/u/app/vendor/tokio/src/runtime/task/mod.rs"
		"/root/.cargo/git/checkouts/tokio-5d1b0d5b7a9a1f2c/1a2b3c4/tokio/src/lib.rs"
		"/root/.cargo/git/checkouts/tokio-1234567890123456/1a2b3c4/tokio/src/lib.rs"
		"/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/fmt/mod.rs"
		"src/runtime/scheduler/multi_thread/worker.rs";
	struct crate_paths *cp = synthetic(rodata, sizeof(rodata) - 1);
	struct crate_versions v;
	const char *crate;
	struct crate_version_hit hit;

	if (!cp)
		return;
	CHECK_EQ_U64(crate_paths__versions(cp, "tokio", &v), 0);
	CHECK(!v.searched_dwarf);
	CHECK(v.searched_rodata);
	CHECK(crate_paths__entry(cp, 0, &crate, &hit) == -ENOENT);
	crate_paths__free(cp);

	/* no .rodata at all: searched nowhere, still no error */
	cp = synthetic("", 0);
	if (cp) {
		CHECK_EQ_U64(crate_paths__versions(cp, "tokio", &v), 0);
		CHECK(!v.searched_dwarf);
		crate_paths__free(cp);
	}
	/* not an ELF file */
	char path[128];
	snprintf(path, sizeof(path), "%s/text", tmpdir);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("tokio-1.53.1/\n", f);
		fclose(f);
		CHECK(crate_paths__open(path) == NULL && errno == ENOEXEC);
		unlink(path);
	}
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_tokio_124);
	RUN(test_tokio_153);
	RUN(test_shared_session);
	RUN(test_stripped);
	RUN(test_synthetic_rodata);
	RUN(test_synthetic_unknown);
	rmdir(tmpdir);
	TEST_MAIN_END();
}
