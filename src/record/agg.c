/* Reading the in-kernel aggregation (agg.h). */
#include "record/agg.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dump/procmem.h"
#include "sym/elf_image.h"
#include "util/u64map.h"

struct rec_agg {
	int groups_fd, tasks_fd, totals_fd;
	pid_t pid;
	char *binary;                /* its path, for file names once it exited */
	uint64_t bias;
	struct elf_image *img;       /* opened at the first such read */
	bool img_tried;
	char **future;               /* per probe index, NULL none */
	size_t n_probes;
	int ncpu;
};

int rec_agg__site_file(struct rec_agg *a, const struct agg_site *s, char *buf, size_t n)
{
	size_t len = s->file_len < n - 1 ? s->file_len : n - 1;
	uint64_t off;
	int ret;

	buf[0] = '\0';
	if (!s->file || !len)
		return -ENOENT;
	ret = procmem_read_raw(a->pid, s->file, buf, len);
	if (ret) {
		/* gone: the name is in its binary's .rodata */
		if (!a->img_tried) {
			a->img_tried = true;
			a->img = a->binary ? elf_image__open(a->binary) : NULL;
		}
		if (!a->img || elf_image__any_file_offset(a->img, s->file - a->bias, &off) ||
		    pread(elf_image__fd(a->img), buf, len, (off_t)off) != (ssize_t)len)
			return ret;
	}
	buf[len] = '\0';
	if (strlen(buf) != len) {
		buf[0] = '\0';
		return -EBADMSG;
	}
	return 0;
}

void rec_agg__free(struct rec_agg *a)
{
	if (!a)
		return;
	if (a->groups_fd >= 0)
		close(a->groups_fd);
	if (a->tasks_fd >= 0)
		close(a->tasks_fd);
	if (a->totals_fd >= 0)
		close(a->totals_fd);
	for (size_t i = 0; i < a->n_probes; i++)
		free(a->future[i]);
	free(a->future);
	free(a->binary);
	elf_image__free(a->img);
	free(a);
}

struct rec_agg *rec_agg__new(int groups, int tasks, int totals, const struct as_probe *probes,
			     size_t n_probes, pid_t pid, const char *binary, uint64_t bias)
{
	struct rec_agg *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->groups_fd = a->tasks_fd = a->totals_fd = -1;
	a->groups_fd = fcntl(groups, F_DUPFD_CLOEXEC, 3);
	a->tasks_fd = fcntl(tasks, F_DUPFD_CLOEXEC, 3);
	a->totals_fd = fcntl(totals, F_DUPFD_CLOEXEC, 3);
	a->pid = pid;
	a->bias = bias;
	a->binary = binary ? strdup(binary) : NULL;
	a->ncpu = libbpf_num_possible_cpus();
	a->future = calloc(n_probes ? n_probes : 1, sizeof(*a->future));
	a->n_probes = n_probes;
	if (a->groups_fd < 0 || a->tasks_fd < 0 || a->totals_fd < 0 || a->ncpu <= 0 || !a->future)
		goto fail;
	for (size_t i = 0; i < n_probes; i++)
		if (probes[i].role == AS_ROLE_POLL && probes[i].future &&
		    !(a->future[i] = strdup(probes[i].future)))
			goto fail;
	return a;
fail:
	rec_agg__free(a);
	errno = ENOMEM;
	return NULL;
}

void rec_agg_read__clear(struct rec_agg_read *r)
{
	free(r->groups);
	memset(r, 0, sizeof(*r));
}

/* a += b, field by field (every field a u64) */
static void add_u64s(void *a, const void *b, size_t size)
{
	uint64_t *x = a;
	const uint64_t *y = b;

	for (size_t i = 0; i < size / sizeof(uint64_t); i++)
		x[i] += y[i];
}

static bool same_site(const struct agg_site *a, const struct agg_site *b)
{
	return a->file == b->file && a->file_len == b->file_len && a->line == b->line &&
	       a->col == b->col;
}

static uint64_t key_hash(uint32_t probe, const struct agg_site *s)
{
	uint64_t h = (s->file * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)s->line << 32 | s->col) ^
		     ((uint64_t)probe << 17);

	return h == 0 || h == UINT64_MAX ? 1 : h;
}

static struct rec_agg_group *find_group(struct rec_agg_read *r, struct u64map *idx,
					uint32_t probe, const struct agg_site *site)
{
	uint64_t v;

	/* the map keys a hash: collisions are told apart by a scan (rare) */
	if (u64map__get(idx, key_hash(probe, site), &v) && r->groups[v - 1].probe == probe &&
	    same_site(&r->groups[v - 1].site, site))
		return &r->groups[v - 1];
	for (size_t i = 0; i < r->n; i++)
		if (r->groups[i].probe == probe && same_site(&r->groups[i].site, site))
			return &r->groups[i];
	return NULL;
}

int rec_agg__read(struct rec_agg *a, bool with_tasks, uint64_t now_ns, uint64_t stall_ns,
		  struct rec_agg_read *out)
{
	size_t vsize = sizeof(struct agg_group), cap = 0;
	/* zeroed: valgrind does not know the bpf() calls fill them */
	void *vals = calloc((size_t)a->ncpu, vsize);
	struct agg_totals *tv = calloc((size_t)a->ncpu, sizeof(*tv));
	struct u64map idx = { 0 };
	struct agg_key key = { 0 }, next = { 0 };
	uint32_t zero = 0;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	if (!vals || !tv) {
		ret = -ENOMEM;
		goto out;
	}
	if (bpf_map_lookup_elem(a->totals_fd, &zero, tv)) {
		ret = -errno;
		goto out;
	}
	for (int c = 0; c < a->ncpu; c++)
		add_u64s(&out->tot, &tv[c], sizeof(out->tot));
	/* the groups, one key after the other (at most 1024 of them) */
	struct agg_key *prev = NULL;
	while (!bpf_map_get_next_key(a->groups_fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(a->groups_fd, &key, vals))
			continue;   /* deleted meanwhile: never, keys stay */
		if (out->n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct rec_agg_group *g = realloc(out->groups, nc * sizeof(*g));
			if (!g) {
				ret = -ENOMEM;
				goto out;
			}
			out->groups = g;
			cap = nc;
		}
		struct rec_agg_group *g = &out->groups[out->n];
		memset(g, 0, sizeof(*g));
		g->probe = key.probe;
		g->site = key.site;
		g->future = key.probe < a->n_probes ? a->future[key.probe] : NULL;
		for (int c = 0; c < a->ncpu; c++)
			add_u64s(&g->v, (const char *)vals + (size_t)c * vsize, vsize);
		uint64_t h = key_hash(key.probe, &key.site);
		if (!u64map__get(&idx, h, NULL) && u64map__set(&idx, h, out->n + 1)) {
			ret = -ENOMEM;
			goto out;
		}
		out->n++;
	}
	if (!with_tasks)
		goto out;
	/* the live tasks, in batches: per group, and the stalled ones */
	enum { BATCH = 4096 };
	uint64_t *keys = calloc(BATCH, sizeof(*keys));
	struct agg_task *tasks = calloc(BATCH, sizeof(*tasks));
	uint64_t in = 0, batch_out = 0;
	bool first = true;
	if (!keys || !tasks) {
		free(keys);
		free(tasks);
		ret = -ENOMEM;
		goto out;
	}
	for (;;) {
		__u32 count = BATCH;
		LIBBPF_OPTS(bpf_map_batch_opts, bo);
		int e = bpf_map_lookup_batch(a->tasks_fd, first ? NULL : &in, &batch_out, keys, tasks,
					     &count, &bo);
		int err = e ? errno : 0;
		first = false;
		for (__u32 i = 0; i < count; i++) {
			const struct agg_task *t = &tasks[i];
			out->live++;
			if (t->probe == AGG_PROBE_NONE) {
				out->live_unpolled++;
				continue;
			}
			struct rec_agg_group *g = find_group(out, &idx, t->probe, &t->site);
			if (!g)
				continue;   /* its group not made yet: its first poll runs */
			g->live++;
			if (t->idle_since && !t->running && now_ns > t->idle_since &&
			    now_ns - t->idle_since >= stall_ns)
				g->stalled++;
		}
		if (e) {
			if (err != ENOENT)
				ret = -err;
			break;
		}
		in = batch_out;
	}
	free(keys);
	free(tasks);
out:
	u64map__clear(&idx);
	free(vals);
	free(tv);
	if (ret)
		rec_agg_read__clear(out);
	return ret;
}
