/* The DWARF lookup memo (dwarf_memo.h): a text file, one header line that
 * names the binary, then one "key<TAB>value" line per lookup. Depends on
 * libelf and util/u64map only. */
#include "sym/dwarf_memo.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/u64map.h"

#define MEMO_MAGIC "asyncscope dwarf memo 1"
#define MAX_FILE   (64u << 20)   /* a larger file is not read */
#define MAX_ENTRIES 1000000      /* nor grown past this */

struct entry {
	char *key, *val;
};

struct dwarf_memo {
	char *path;            /* NULL: this process only */
	char header[256];      /* the first line the file must have */
	struct u64map index;   /* hash(key) -> entry index + 1 */
	struct entry *ents;
	size_t n, cap;
	bool dirty;
};

static uint64_t hash(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	h |= 1;   /* never 0 */
	return h == UINT64_MAX ? h - 2 : h;
}

/* The GNU build id of elf in hex into out (size >= 41): 0 or -ENOENT. */
static int build_id(Elf *elf, char *out, size_t outlen)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, next, name_off, desc_off;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
			continue;
		while ((next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			const uint8_t *desc = (const uint8_t *)d->d_buf + desc_off;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((const char *)d->d_buf + name_off, "GNU", 4) && nh.n_descsz &&
			    nh.n_descsz * 2 < outlen) {
				for (size_t i = 0; i < nh.n_descsz; i++)
					snprintf(out + 2 * i, 3, "%02x", desc[i]);
				return 0;
			}
			off = next;
		}
	}
	return -ENOENT;
}

/* mkdir -p of dir (mode 0700 for what it creates): 0 or -errno. */
static int make_dirs(const char *dir)
{
	char buf[PATH_MAX];

	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

/* The cache directory into buf: 0, or -ENOENT when there is none to use
 * (switched off, no home, not ours, or writable by others). */
static int memo_dir(char *buf, size_t len)
{
	const char *e = getenv("ASYNCSCOPE_CACHE_DIR");
	struct stat st;
	int n;

	if (e && !*e)
		return -ENOENT;
	if (e)
		n = snprintf(buf, len, "%s", e);
	else if ((e = getenv("XDG_CACHE_HOME")) && e[0] == '/')
		n = snprintf(buf, len, "%s/asyncscope", e);
	else if (geteuid() == 0)
		n = snprintf(buf, len, "/var/cache/asyncscope");
	else if ((e = getenv("HOME")) && e[0] == '/')
		n = snprintf(buf, len, "%s/.cache/asyncscope", e);
	else
		return -ENOENT;
	if (n <= 0 || (size_t)n >= len || make_dirs(buf))
		return -ENOENT;
	/* a directory someone else could write to is not trusted */
	if (lstat(buf, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)))
		return -ENOENT;
	return 0;
}

static int add(struct dwarf_memo *m, const char *key, size_t kl, const char *val, size_t vl)
{
	uint64_t h = hash(key, kl), idx;
	struct entry *e;

	if (u64map__get(&m->index, h, &idx)) {
		e = &m->ents[idx - 1];
		if (strlen(e->key) != kl || memcmp(e->key, key, kl))
			return 0;   /* a hash collision: the second key is not kept */
		char *v = strndup(val, vl);
		if (!v)
			return -ENOMEM;
		free(e->val);
		e->val = v;
		return 0;
	}
	if (m->n == MAX_ENTRIES)
		return 0;
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 256;
		struct entry *p = realloc(m->ents, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		m->ents = p;
		m->cap = cap;
	}
	e = &m->ents[m->n];
	e->key = strndup(key, kl);
	e->val = strndup(val, vl);
	if (!e->key || !e->val || u64map__set(&m->index, h, m->n + 1)) {
		free(e->key);
		free(e->val);
		return -ENOMEM;
	}
	m->n++;
	return 0;
}

static void drop_all(struct dwarf_memo *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->ents[i].key);
		free(m->ents[i].val);
	}
	m->n = 0;
	u64map__clear(&m->index);
}

/* Reads the file when it is ours, current and well formed; else the memo
 * starts empty (and the file is written anew when something is put). */
static int load(struct dwarf_memo *m)
{
	int fd = open(m->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	char *buf = NULL, *p, *end;
	size_t hl = strlen(m->header), got = 0;
	int ret = 0;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) || st.st_size <= 0 || st.st_size > MAX_FILE)
		goto out;
	if (!(buf = malloc((size_t)st.st_size + 1))) {
		ret = -ENOMEM;
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			goto out;
		got += (size_t)r;
	}
	buf[got] = '\0';
	if (got < hl || memcmp(buf, m->header, hl))
		goto out;   /* another binary, or this one rebuilt: stale */
	end = buf + got;
	for (p = buf + hl; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *tab = nl ? memchr(p, '\t', (size_t)(nl - p)) : NULL;
		if (!tab || tab == p) {
			drop_all(m);   /* malformed: none of it is trusted */
			goto out;
		}
		if ((ret = add(m, p, (size_t)(tab - p), tab + 1, (size_t)(nl - tab - 1))))
			goto out;
		p = nl + 1;
	}
out:
	free(buf);
	close(fd);
	return ret;
}

struct dwarf_memo *dwarf_memo__open(struct Elf *elf, int fd, const char *kind)
{
	struct dwarf_memo *m = calloc(1, sizeof(*m));
	char id[41] = "", dir[PATH_MAX];
	struct stat st;

	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	for (const char *k = kind; *k; k++)
		if ((*k < 'a' || *k > 'z') && (*k < 'A' || *k > 'Z'))
			return m;   /* not a file name part: this process only */
	if (!elf || fd < 0 || fstat(fd, &st) || build_id(elf, id, sizeof(id)) ||
	    memo_dir(dir, sizeof(dir)))
		return m;
	snprintf(m->header, sizeof(m->header), "%s %s %s %" PRIu64 " %" PRId64 ".%09ld\n",
		 MEMO_MAGIC, kind, id, (uint64_t)st.st_size, (int64_t)st.st_mtim.tv_sec,
		 st.st_mtim.tv_nsec);
	if (asprintf(&m->path, "%s/%s.%s", dir, id, kind) < 0) {
		m->path = NULL;
		return m;
	}
	if (load(m) == -ENOMEM) {
		dwarf_memo__free(m);
		errno = ENOMEM;
		return NULL;
	}
	return m;
}

bool dwarf_memo__get(const struct dwarf_memo *m, const char *key, const char **val)
{
	uint64_t idx;

	if (!m || !u64map__get(&m->index, hash(key, strlen(key)), &idx) ||
	    strcmp(m->ents[idx - 1].key, key))
		return false;
	*val = m->ents[idx - 1].val;
	return true;
}

int dwarf_memo__put(struct dwarf_memo *m, const char *key, const char *val)
{
	int err;

	if (!m)
		return 0;
	if (!*key || strpbrk(key, "\t\n") || strchr(val, '\n'))
		return -EINVAL;
	if ((err = add(m, key, strlen(key), val, strlen(val))))
		return err;
	m->dirty = true;
	return 0;
}

int dwarf_memo__save(struct dwarf_memo *m)
{
	char *tmp = NULL;
	FILE *f = NULL;
	int fd = -1, ret = 0;

	if (!m || !m->path || !m->dirty)
		return 0;
	if (asprintf(&tmp, "%s.tmp.%ld", m->path, (long)getpid()) < 0)
		return -ENOMEM;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		ret = -errno;
		if (fd >= 0)
			close(fd);
		goto out;
	}
	fputs(m->header, f);
	for (size_t i = 0; i < m->n; i++)
		fprintf(f, "%s\t%s\n", m->ents[i].key, m->ents[i].val);
	if (ferror(f) | fclose(f)) {
		ret = -EIO;
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, m->path)) {
		ret = -errno;
		unlink(tmp);
		goto out;
	}
	m->dirty = false;
out:
	free(tmp);
	return ret;
}

const char *dwarf_memo__path(const struct dwarf_memo *m)
{
	return m ? m->path : NULL;
}

void dwarf_memo__free(struct dwarf_memo *m)
{
	if (!m)
		return;
	drop_all(m);
	free(m->ents);
	free(m->path);
	free(m);
}
