/* CAT / uftrace dump writer (see cat/writer.h; grammar docs/cat-format.md).
 *
 * Sample (a Tokio task polled twice, woken by the timer in between):
 *   # asyncscope cat version=1 format_version=7
 *   ...
 *   reading 26414.dat
 *   2160.986436993   26414: [entry] tokio::runtime::task::raw::poll<blocker..tick>(55f80bcdc300) depth: 0
 *   2160.986443374   26414: [exit ] tokio::runtime::task::raw::poll<blocker..tick>(55f80bcdc300) depth: 0
 *   2161.002318701   26414: [entry] tokio::runtime::time::_<impl tokio..runtime..time..handle..Handle>::process_at_time(0) depth: 0
 *   2161.002320410   26414: [entry] tokio::runtime::task::waker::wake_by_val(55f80bcdc300) depth: 1
 *   2161.002320410   26414: [exit ] tokio::runtime::task::waker::wake_by_val(55f80bcdc300) depth: 1
 *   2161.002320410   26414: [exit ] tokio::runtime::time::_<impl tokio..runtime..time..handle..Handle>::process_at_time(0) depth: 0
 *
 * Each event becomes the lines whose meaning the reader derives with
 * cat/rules.h's call-stack rules (run here on the lines as they are
 * written); where the derived event differs from the real one (a waker that
 * is not the poll open on the thread, a lost poll entry, ...), an
 * `[args ] length = 32` record after the event's line gives its task,
 * other, flags and probe. Future polls' outcomes are `[retval]` records.
 * Threads are merged back by timestamp; the steps where that merge would
 * differ from the trace's own order are written as "order" header lines,
 * found by running the reader's merge on the spilled events. */
#include "cat/writer.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cat/heap.h"
#include "cat/names.h"
#include "cat/rules.h"
#include "util/strtab.h"
#include "util/u64map.h"

#define BLOCK 4096u
#define REC 32u               /* bytes per spilled event */
#define NO_PROBE UINT32_MAX

/* A stream of fixed-size records: full blocks in the spill file, the last
 * one in memory. */
struct stream {
	uint8_t *tail;            /* BLOCK bytes, NULL until the first record */
	uint32_t len;             /* bytes in tail */
	uint64_t *blocks;         /* spill file offsets */
	uint32_t n_blocks, cap_blocks;
	uint64_t count;           /* records */
};

struct thread {
	uint32_t tid;
	struct stream s;
	bool has_thread;          /* its first event is a THREAD event */
	struct as_event tev;      /* that event (str: comm, owned) */
};

struct run {
	uint64_t addr, id, polls;
};

struct cat_writer {
	FILE *out;
	const struct as_trace_meta *meta;
	char **names;             /* per probe: its unique line name */
	uint32_t first_role[AS_ROLE__MAX];
	FILE *spill;
	int spill_fd;
	uint64_t spill_off;
	struct thread *threads;
	uint32_t n_threads, cap_threads;
	struct u64map thread_idx; /* tid + 1 -> index + 1 */
	struct stream seq;        /* per event taken: its thread index (u32) */
	struct strtab spawn_keys; /* "line:col:file" -> location id - 1 */
	char **spawn_file;
	uint32_t *spawn_line, *spawn_col;
	uint32_t cap_spawns;
	struct run *runs;
	size_t n_runs, cap_runs;
	struct u64map run_last;   /* task address -> index + 1 of its last run */
	struct u64map run_named;  /* task address -> 1 when one of its runs has an id */
	uint64_t *hint_step, *hint_count;
	uint32_t *hint_sec;
	size_t n_hints, cap_hints;
	uint64_t events, dropped, lines;
	int err;                  /* sticky */
};

/* ---- streams ---- */

static int stream_put(struct cat_writer *w, struct stream *s, const void *rec, uint32_t size)
{
	if (!s->tail && !(s->tail = malloc(BLOCK)))
		return -ENOMEM;
	if (s->len + size > BLOCK) {
		if (s->n_blocks == s->cap_blocks) {
			uint32_t cap = s->cap_blocks ? s->cap_blocks * 2 : 8;
			uint64_t *b = realloc(s->blocks, cap * sizeof(*b));
			if (!b)
				return -ENOMEM;
			s->blocks = b;
			s->cap_blocks = cap;
		}
		if (pwrite(w->spill_fd, s->tail, BLOCK, (off_t)w->spill_off) != (ssize_t)BLOCK)
			return -EIO;
		s->blocks[s->n_blocks++] = w->spill_off;
		w->spill_off += BLOCK;
		s->len = 0;
	}
	memcpy(s->tail + s->len, rec, size);
	s->len += size;
	s->count++;
	return 0;
}

struct sreader {
	const struct stream *s;
	uint8_t *buf;             /* a block read back */
	const uint8_t *cur;
	uint32_t left;            /* bytes left in cur */
	uint32_t next_block;
	uint32_t size;            /* record size */
	uint64_t remaining;       /* records */
};

static int sreader_init(struct sreader *r, const struct stream *s, uint32_t size)
{
	memset(r, 0, sizeof(*r));
	r->s = s;
	r->size = size;
	r->remaining = s->count;
	if (s->n_blocks && !(r->buf = malloc(BLOCK)))
		return -ENOMEM;
	return 0;
}

/* Returns 1 with the next record at *rec, 0 at the end, -EIO. */
static int sreader_next(struct cat_writer *w, struct sreader *r, const uint8_t **rec)
{
	if (!r->remaining)
		return 0;
	if (r->left < r->size) {
		if (r->next_block < r->s->n_blocks) {
			if (pread(w->spill_fd, r->buf, BLOCK, (off_t)r->s->blocks[r->next_block]) !=
			    (ssize_t)BLOCK)
				return -EIO;
			r->next_block++;
			r->cur = r->buf;
			/* a full block holds whole records up to the last that fit */
			r->left = BLOCK / r->size * r->size;
		} else {
			r->cur = r->s->tail;
			r->left = r->s->len;
		}
		if (r->left < r->size)
			return -EIO;
	}
	*rec = r->cur;
	r->cur += r->size;
	r->left -= r->size;
	r->remaining--;
	return 1;
}

static void sreader_free(struct sreader *r)
{
	free(r->buf);
	r->buf = NULL;
}

static void stream_free(struct stream *s)
{
	free(s->tail);
	free(s->blocks);
	memset(s, 0, sizeof(*s));
}

/* Records: type, flags, probe, aux (spawn location id), ts, task, other. */
static void pack(uint8_t *b, const struct as_event *ev, uint32_t aux)
{
	b[0] = ev->type;
	b[1] = ev->flags;
	memcpy(b + 2, &ev->probe, 2);
	memcpy(b + 4, &aux, 4);
	memcpy(b + 8, &ev->ts, 8);
	memcpy(b + 16, &ev->task, 8);
	memcpy(b + 24, &ev->other, 8);
}

static void unpack(const uint8_t *b, struct as_event *ev, uint32_t *aux)
{
	memset(ev, 0, sizeof(*ev));
	ev->type = b[0];
	ev->flags = b[1];
	memcpy(&ev->probe, b + 2, 2);
	memcpy(aux, b + 4, 4);
	memcpy(&ev->ts, b + 8, 8);
	memcpy(&ev->task, b + 16, 8);
	memcpy(&ev->other, b + 24, 8);
}

/* ---- set-up ---- */

/* The line name of probe i: the uftrace spelling of its symbol (a task poll
 * with its future as generic argument, as the copy for that future is), made
 * unique with "#i" when two probes would share it. */
static int name_probes(struct cat_writer *w)
{
	const struct as_trace_meta *m = w->meta;
	struct strtab used = { 0 };
	int err = 0;

	w->names = calloc(m->n_probes ? m->n_probes : 1, sizeof(*w->names));
	if (!w->names)
		return -ENOMEM;
	for (uint32_t i = 0; i < m->n_probes; i++) {
		const struct as_probe *p = &m->probes[i];
		const char *sym = p->symbol && *p->symbol ? p->symbol : "?";
		char *base;
		if (p->role == AS_ROLE_POLL && p->future && *p->future) {
			base = malloc(strlen(sym) + strlen(p->future) + 3);
			if (base)
				sprintf(base, "%s<%s>", sym, p->future);
		} else {
			base = strdup(sym);
		}
		char *name = base ? cat_spell(base) : NULL;
		free(base);
		if (!name) {
			err = -ENOMEM;
			break;
		}
		for (char *c = name; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
		uint32_t idx;
		while (strtab__find(&used, name, strlen(name), &idx)) {
			char *n2 = malloc(strlen(name) + 16);
			if (!n2) {
				free(name);
				err = -ENOMEM;
				goto out;
			}
			sprintf(n2, "%s#%u", name, i);
			free(name);
			name = n2;
		}
		w->names[i] = name;
		if ((err = strtab__add(&used, name, strlen(name), &idx)))
			break;
		if (p->role < AS_ROLE__MAX && w->first_role[p->role] == NO_PROBE)
			w->first_role[p->role] = i;
	}
out:
	strtab__clear(&used);
	return err;
}

struct cat_writer *cat_writer__new(FILE *out, const struct as_trace_meta *meta)
{
	struct cat_writer *w = calloc(1, sizeof(*w));
	int err = ENOMEM;

	if (!w)
		goto fail;
	w->out = out;
	w->meta = meta;
	for (size_t i = 0; i < AS_ROLE__MAX; i++)
		w->first_role[i] = NO_PROBE;
	if (name_probes(w))
		goto fail;
	w->spill = tmpfile();
	if (!w->spill) {
		err = errno;
		goto fail;
	}
	w->spill_fd = fileno(w->spill);
	return w;
fail:
	cat_writer__free(w);
	errno = err;
	return NULL;
}

/* ---- taking events ---- */

static struct thread *thread_of(struct cat_writer *w, uint32_t tid, uint32_t *index)
{
	uint64_t v;

	if (u64map__get(&w->thread_idx, (uint64_t)tid + 1, &v)) {
		*index = (uint32_t)(v - 1);
		return &w->threads[v - 1];
	}
	if (w->n_threads == w->cap_threads) {
		uint32_t cap = w->cap_threads ? w->cap_threads * 2 : 16;
		struct thread *t = realloc(w->threads, cap * sizeof(*t));
		if (!t)
			return NULL;
		w->threads = t;
		w->cap_threads = cap;
	}
	if (u64map__set(&w->thread_idx, (uint64_t)tid + 1, (uint64_t)w->n_threads + 1))
		return NULL;
	struct thread *t = &w->threads[w->n_threads];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	*index = w->n_threads++;
	return t;
}

static uint16_t role_of_type(uint8_t type)
{
	switch (type) {
	case AS_EV_POLL_BEGIN: case AS_EV_POLL_END: return AS_ROLE_POLL;
	case AS_EV_WAKE: return AS_ROLE_WAKE;
	case AS_EV_SPAWN: return AS_ROLE_SPAWN;
	case AS_EV_FREE: return AS_ROLE_FREE;
	case AS_EV_PARK: case AS_EV_UNPARK: return AS_ROLE_PARK;
	case AS_EV_USDT: return AS_ROLE_USDT;
	case AS_EV_FUTURE_ENTER: case AS_EV_FUTURE_EXIT: return AS_ROLE_FUTURE;
	default: return 0;
	}
}

/* The probe whose function line stands for ev: its own when it has the
 * role, else the first probe of that role, else NO_PROBE. */
static uint32_t line_probe(const struct cat_writer *w, const struct as_event *ev)
{
	uint16_t role = role_of_type(ev->type);

	if (!role)
		return NO_PROBE;
	if (ev->probe < w->meta->n_probes && w->meta->probes[ev->probe].role == role)
		return ev->probe;
	return w->first_role[role];
}

static int spawn_id(struct cat_writer *w, const struct as_event *ev, uint32_t *id)
{
	const char *file = ev->str ? ev->str : "";
	uint32_t line = (uint32_t)(ev->other >> 32), col = (uint32_t)ev->other;
	size_t kl = strlen(file) + 24;
	char *key = malloc(kl);
	uint32_t idx;
	int err = 0;

	if (!key)
		return -ENOMEM;
	snprintf(key, kl, "%u:%u:%s", line, col, file);
	int added = strtab__intern(&w->spawn_keys, key, strlen(key), &idx);
	if (added < 0) {
		err = added;
		goto out;
	}
	if (added) {
		if (idx >= w->cap_spawns) {
			uint32_t cap = w->cap_spawns ? w->cap_spawns * 2 : 16;
			char **f = realloc(w->spawn_file, cap * sizeof(*f));
			if (f)
				w->spawn_file = f;
			uint32_t *l = realloc(w->spawn_line, cap * sizeof(*l));
			if (l)
				w->spawn_line = l;
			uint32_t *c = realloc(w->spawn_col, cap * sizeof(*c));
			if (c)
				w->spawn_col = c;
			if (!f || !l || !c) {
				err = -ENOMEM;
				goto out;
			}
			w->cap_spawns = cap;
		}
		/* the file part of the interned key */
		w->spawn_file[idx] = strchr(strchr((char *)strtab__get(&w->spawn_keys, idx), ':') + 1,
					    ':') + 1;
		w->spawn_line[idx] = line;
		w->spawn_col[idx] = col;
	}
	*id = idx + 1;
out:
	free(key);
	return err == -E2BIG ? -ENOMEM : err;
}

/* Task ids: per address, runs of polls with the same id, in poll order. */
static int note_task_id(struct cat_writer *w, uint64_t addr, uint64_t id)
{
	uint64_t last;

	if (!addr || addr == UINT64_MAX)
		return 0;
	if (u64map__get(&w->run_last, addr, &last) && w->runs[last - 1].id == id) {
		w->runs[last - 1].polls++;
		return 0;
	}
	if (w->n_runs == w->cap_runs) {
		size_t cap = w->cap_runs ? w->cap_runs * 2 : 64;
		struct run *r = realloc(w->runs, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		w->runs = r;
		w->cap_runs = cap;
	}
	w->runs[w->n_runs++] = (struct run){ .addr = addr, .id = id, .polls = 1 };
	if (u64map__set(&w->run_last, addr, w->n_runs))
		return -ENOMEM;
	if (id && u64map__set(&w->run_named, addr, 1))
		return -ENOMEM;
	return 0;
}

int cat_writer__add(struct cat_writer *w, const struct as_event *ev)
{
	uint8_t rec[REC];
	uint32_t index, aux = 0;
	int err;

	if (!ev || ev->type < 1 || ev->type >= AS_EV__MAX)
		return -EINVAL;
	if (w->err)
		return w->err;
	/* CAT has no line for a task's name, nor for the wakers an idle task
	 * held at the end, nor for a task found in memory then: left out (the
	 * task stays; one found in memory goes) */
	if (ev->type == AS_EV_SPAWN &&
	    (ev->flags & (AS_SPAWN_NAME | AS_SPAWN_WAKERS | AS_SPAWN_BEFORE))) {
		w->dropped++;
		return 0;
	}
	if (ev->type != AS_EV_THREAD && line_probe(w, ev) == NO_PROBE) {
		w->dropped++;   /* OFFCPU, SAMPLE, RUNQ, URING, or no probe of its role */
		return 0;
	}
	struct thread *t = thread_of(w, ev->tid, &index);
	if (!t)
		return w->err = -ENOMEM;
	if (ev->type == AS_EV_THREAD) {
		if (t->s.count) {
			w->dropped++;   /* not its thread's first event: no place for it */
			return 0;
		}
		t->has_thread = true;
		t->tev = *ev;
		t->tev.str = NULL;
		if (ev->str && !(t->tev.str = strdup(ev->str)))
			return w->err = -ENOMEM;
	}
	if (ev->type == AS_EV_SPAWN && (err = spawn_id(w, ev, &aux)))
		return w->err = err;
	if (ev->type == AS_EV_POLL_BEGIN && (err = note_task_id(w, ev->task, ev->other)))
		return w->err = err;
	pack(rec, ev, aux);
	if ((err = stream_put(w, &t->s, rec, REC)) || (err = stream_put(w, &w->seq, &index, 4)))
		return w->err = err;
	w->events++;
	return 0;
}

/* ---- the order the reader's merge would give ---- */

/* Hints are runs: `count` steps in a row that take the same section. */
static int add_hint(struct cat_writer *w, uint64_t step, uint32_t sec)
{
	size_t last = w->n_hints - 1;

	if (w->n_hints && w->hint_sec[last] == sec && w->hint_step[last] + w->hint_count[last] == step) {
		w->hint_count[last]++;
		return 0;
	}
	if (w->n_hints == w->cap_hints) {
		size_t cap = w->cap_hints ? w->cap_hints * 2 : 64;
		uint64_t *s = realloc(w->hint_step, cap * sizeof(*s));
		if (s)
			w->hint_step = s;
		uint64_t *n = realloc(w->hint_count, cap * sizeof(*n));
		if (n)
			w->hint_count = n;
		uint32_t *c = realloc(w->hint_sec, cap * sizeof(*c));
		if (c)
			w->hint_sec = c;
		if (!s || !n || !c)
			return -ENOMEM;
		w->cap_hints = cap;
	}
	w->hint_step[w->n_hints] = step;
	w->hint_count[w->n_hints] = 1;
	w->hint_sec[w->n_hints++] = sec;
	return 0;
}

/* Runs the reader's merge (earliest timestamp first, ties to the earlier
 * thread) against the trace's order; each step where they differ is a hint. */
static int find_hints(struct cat_writer *w)
{
	struct sreader *rd = calloc(w->n_threads ? w->n_threads : 1, sizeof(*rd));
	struct sreader sq;
	struct cat_heap h = { 0 };
	const uint8_t *rec;
	struct as_event ev;
	uint32_t aux;
	int err = -ENOMEM, rc;

	memset(&sq, 0, sizeof(sq));
	if (!rd || cat_heap__init(&h, w->n_threads) || sreader_init(&sq, &w->seq, 4))
		goto out;
	for (uint32_t i = 0; i < w->n_threads; i++) {
		if (sreader_init(&rd[i], &w->threads[i].s, REC))
			goto out;
		if ((rc = sreader_next(w, &rd[i], &rec)) < 0) {
			err = rc;
			goto out;
		}
		if (rc) {
			unpack(rec, &ev, &aux);
			cat_heap__push(&h, i, ev.ts);
		}
	}
	for (uint64_t step = 0;; step++) {
		uint32_t want;
		if ((rc = sreader_next(w, &sq, &rec)) <= 0) {
			err = rc;
			break;
		}
		memcpy(&want, rec, 4);
		if (want >= w->n_threads) {
			err = -EIO;
			break;
		}
		if (cat_heap__top(&h) != want && (err = add_hint(w, step, want)))
			break;
		cat_heap__remove(&h, want);
		if ((rc = sreader_next(w, &rd[want], &rec)) < 0) {
			err = rc;
			break;
		}
		if (rc) {
			unpack(rec, &ev, &aux);
			cat_heap__push(&h, want, ev.ts);
		}
	}
out:
	for (uint32_t i = 0; rd && i < w->n_threads; i++)
		sreader_free(&rd[i]);
	free(rd);
	sreader_free(&sq);
	cat_heap__free(&h);
	return err;
}

/* ---- writing ---- */

static int esc_kv(FILE *out, const char *key, const char *val)
{
	if (!val)
		return 0;
	if (fprintf(out, " %s=", key) < 0)
		return -EIO;
	return cat_escape(out, val);
}

static int write_header(struct cat_writer *w, const struct as_trace_end *end, bool truncated)
{
	const struct as_trace_meta *m = w->meta;
	FILE *o = w->out;
	int err = 0;

	uint64_t lines = 2;

	fprintf(o, "# asyncscope cat version=%d format_version=%u\n", CAT_VERSION, m->format_version);
	fprintf(o, "# asyncscope meta pid=%u clock_mono_ns=%" PRIu64 " clock_real_ns=%" PRIu64 "\n",
		m->pid, m->clock_mono_ns, m->clock_real_ns);
	const char *keys[] = { "target", "build_id", "runtime", "cmdline", "runtime_detail" };
	const char *vals[] = { m->target, m->build_id, m->runtime, m->cmdline, m->runtime_detail };
	for (size_t i = 0; i < 5; i++) {
		if (!vals[i])
			continue;
		fputs("# asyncscope meta", o);
		err |= esc_kv(o, keys[i], vals[i]);
		putc('\n', o);
		lines++;
	}
	for (uint32_t i = 0; i < m->n_probes; i++) {
		const struct as_probe *p = &m->probes[i];
		fprintf(o, "# asyncscope probe index=%u role=%s arg_reg=%u emulated=%u addr=0x%" PRIx64,
			i, cat_role_name(p->role), p->arg_reg, p->emulated, p->addr);
		err |= esc_kv(o, "name", w->names[i]);
		err |= esc_kv(o, "symbol", p->symbol);
		err |= esc_kv(o, "future", p->future);
		err |= esc_kv(o, "src_file", p->src_file);
		if (p->src_line)
			fprintf(o, " src_line=%u", p->src_line);
		if (p->n_awaits && p->await_lines) {
			fputs(" awaits=", o);
			for (uint32_t k = 0; k < p->n_awaits; k++)
				fprintf(o, "%s%u", k ? "," : "", p->await_lines[k]);
		}
		if (p->n_awaits && p->await_lines && p->await_types) {
			fputs(" await_types=", o);
			for (uint32_t k = 0; k < p->n_awaits; k++) {
				if (k)
					putc(',', o);
				if (p->await_types[k])
					err |= cat_escape(o, p->await_types[k]);
			}
		}
		putc('\n', o);
		lines++;
	}
	for (uint32_t i = 0; i < w->n_threads; i++) {
		const struct thread *t = &w->threads[i];
		if (!t->has_thread)
			continue;
		fprintf(o, "# asyncscope thread tid=%u ts=%" PRIu64, t->tid, t->tev.ts);
		if (t->tev.task)
			fprintf(o, " task=0x%" PRIx64, t->tev.task);
		if (t->tev.other)
			fprintf(o, " other=%" PRIu64, t->tev.other);
		if (t->tev.flags)
			fprintf(o, " flags=%u", t->tev.flags);
		if (t->tev.probe)
			fprintf(o, " probe=%u", t->tev.probe);
		err |= esc_kv(o, "comm", t->tev.str);
		putc('\n', o);
		lines++;
	}
	for (uint32_t i = 0; i < w->spawn_keys.n; i++) {
		fprintf(o, "# asyncscope spawn id=%u line=%u col=%u", i + 1, w->spawn_line[i],
			w->spawn_col[i]);
		err |= esc_kv(o, "file", w->spawn_file[i]);
		putc('\n', o);
		lines++;
	}
	for (size_t i = 0; i < w->n_runs; i++) {
		uint64_t named;
		if (!u64map__get(&w->run_named, w->runs[i].addr, &named))
			continue;   /* no id ever: the reader's default */
		fprintf(o, "# asyncscope taskid addr=0x%" PRIx64 " id=%" PRIu64 " polls=%" PRIu64 "\n",
			w->runs[i].addr, w->runs[i].id, w->runs[i].polls);
		lines++;
	}
	for (size_t i = 0; i < w->n_hints; i++)
		fprintf(o, "# asyncscope order step=%" PRIu64 " section=%u count=%" PRIu64 "\n",
			w->hint_step[i], w->hint_sec[i], w->hint_count[i]);
	lines += w->n_hints + (w->dropped ? 1 : 0);
	if (w->dropped)
		fprintf(o, "# asyncscope note dropped=%" PRIu64 " (events this format does not "
			"carry: task names, the wakers idle tasks held at the end, off-CPU "
			"intervals, CPU samples, run-queue waits, io_uring requests)\n",
			w->dropped);
	lines++;
	if ((truncated || !end) && end && end->counts_lower_bound)
		fprintf(o, "# asyncscope truncated events=%" PRIu64 " lost=%" PRIu64 " missed=%"
			PRIu64 " counts_ns=%" PRIu64 "\n", w->events, end->lost, end->missed,
			end->counts_ns);
	else if (truncated || !end)
		fprintf(o, "# asyncscope truncated events=%" PRIu64 "\n", w->events);
	else
		fprintf(o, "# asyncscope end events=%" PRIu64 " lost=%" PRIu64 " missed=%" PRIu64
			" end_ns=%" PRIu64 "\n", w->events, end->lost, end->missed, end->end_ns);
	w->lines += lines;
	return err || ferror(o) ? -EIO : 0;
}

static void put_ts(FILE *o, uint64_t ts, uint32_t tid)
{
	fprintf(o, "%" PRIu64 ".%09" PRIu64 "  %5u: ", ts / UINT64_C(1000000000), ts % UINT64_C(1000000000), tid);
}

/* Writes one function line and applies it to st; *d gets the event the
 * reader derives from it (type 0: none). */
static int line(struct cat_writer *w, struct cat_state *st, uint32_t tid, uint64_t ts,
		bool exit, uint32_t probe, uint64_t addr, struct as_event *d)
{
	uint32_t depth = st->n;

	if (exit)
		for (uint32_t i = st->n; i-- > 0;)
			if (st->frames[i].probe == probe && st->frames[i].addr == addr) {
				depth = i;
				break;
			}
	put_ts(w->out, ts, tid);
	fprintf(w->out, "[%s] %s(%" PRIx64 ") depth: %u\n", exit ? "exit " : "entry",
		w->names[probe], addr, depth);
	w->lines++;
	int has = cat_state__apply(st, exit, w->meta->probes[probe].role, probe, addr, d);
	if (has < 0)
		return has;   /* -E2BIG: nested deeper than the reader follows */
	if (!has)
		d->type = 0;
	return 0;
}

/* The `[args ]` record that corrects a derived event, when it needs one. */
static void fix(struct cat_writer *w, uint32_t tid, const struct as_event *ev,
		const struct as_event *d)
{
	if (d->type == ev->type && d->task == ev->task && d->other == ev->other &&
	    d->flags == ev->flags && d->probe == ev->probe)
		return;
	put_ts(w->out, ev->ts, tid);
	fprintf(w->out, "[args ] length = 32\n"
		"  args[0] u64: 0x%016" PRIx64 "\n  args[1] u64: 0x%016" PRIx64 "\n"
		"  args[2] u8: 0x%02x\n  args[3] u16: 0x%04x\n",
		ev->task, ev->other, ev->flags, ev->probe);
	w->lines += 5;
}

static int write_event(struct cat_writer *w, struct cat_state *st, uint32_t tid,
		       const struct as_event *ev, uint32_t aux)
{
	uint32_t p = line_probe(w, ev);
	uint64_t ts = ev->ts;
	struct as_event d, x;
	int err = 0;

	switch (ev->type) {
	case AS_EV_POLL_BEGIN:
		err = line(w, st, tid, ts, false, p, ev->task, &d);
		if (ev->task && ev->task != UINT64_MAX)
			d.other = ev->other;   /* from the header's task ids */
		fix(w, tid, ev, &d);
		break;
	case AS_EV_POLL_END:
		if ((ev->flags & AS_POLL_READY) && w->first_role[AS_ROLE_READY] != NO_PROBE) {
			uint32_t rp = w->first_role[AS_ROLE_READY];
			err = line(w, st, tid, ts, false, rp, ev->task, &x);
			if (!err)
				err = line(w, st, tid, ts, true, rp, ev->task, &x);
		}
		if (!err)
			err = line(w, st, tid, ts, true, p, ev->task, &d);
		fix(w, tid, ev, &d);
		break;
	case AS_EV_WAKE: {
		/* inside the driver call it came from, when the trace knows that */
		uint32_t wp = (ev->flags & AS_WAKE_IO) ? w->first_role[AS_ROLE_IO_DRIVER]
			      : (ev->flags & AS_WAKE_TIMER) ? w->first_role[AS_ROLE_TIMER] : NO_PROBE;
		if (wp != NO_PROBE)
			err = line(w, st, tid, ts, false, wp, 0, &x);
		if (!err)
			err = line(w, st, tid, ts, false, p, ev->task, &d);
		fix(w, tid, ev, &d);
		if (!err)
			err = line(w, st, tid, ts, true, p, ev->task, &x);
		if (!err && wp != NO_PROBE)
			err = line(w, st, tid, ts, true, wp, 0, &x);
		break;
	}
	case AS_EV_SPAWN:
	case AS_EV_FREE:
	case AS_EV_USDT: {
		uint64_t a = ev->type == AS_EV_SPAWN ? aux : ev->type == AS_EV_FREE ? ev->task : ev->other;
		err = line(w, st, tid, ts, false, p, a, &d);
		if (ev->type == AS_EV_SPAWN)
			d.other = ev->other;   /* the location's line and column */
		fix(w, tid, ev, &d);
		if (!err)
			err = line(w, st, tid, ts, true, p, a, &x);
		break;
	}
	case AS_EV_PARK:
	case AS_EV_UNPARK:
		err = line(w, st, tid, ts, ev->type == AS_EV_UNPARK, p, 0, &d);
		fix(w, tid, ev, &d);
		break;
	case AS_EV_FUTURE_ENTER:
	case AS_EV_FUTURE_EXIT: {
		bool exit = ev->type == AS_EV_FUTURE_EXIT;
		err = line(w, st, tid, ts, exit, p, w->meta->probes[p].addr, &d);
		uint32_t state = AS_FUT_STATE(ev->other);
		if (exit && (ev->flags || state)) {
			put_ts(w->out, ts, tid);
			fprintf(w->out, "[retval] length = 4\n  retval u32: 0x%08x\n",
				ev->flags | state << 8);
			w->lines += 2;
			d.flags = ev->flags;
			d.other = AS_FUT_OTHER(AS_FUT_DEPTH(d.other), state);
		}
		fix(w, tid, ev, &d);
		break;
	}
	default:
		break;
	}
	return err;
}

static int write_section(struct cat_writer *w, const struct thread *t)
{
	struct cat_state st = { 0 };
	struct sreader rd;
	const uint8_t *rec;
	struct as_event ev;
	uint32_t aux;
	int rc;

	fprintf(w->out, "reading %u.dat\n", t->tid);
	w->lines++;
	if ((rc = sreader_init(&rd, &t->s, REC)))
		return rc;
	while ((rc = sreader_next(w, &rd, &rec)) == 1) {
		unpack(rec, &ev, &aux);
		if (ev.type == AS_EV_THREAD)
			continue;
		ev.tid = t->tid;
		if ((rc = write_event(w, &st, t->tid, &ev, aux)))
			break;
	}
	sreader_free(&rd);
	cat_state__clear(&st);
	if (!rc && ferror(w->out))
		rc = -EIO;
	return rc;
}

int cat_writer__finish(struct cat_writer *w, const struct as_trace_end *end, bool truncated)
{
	int err;

	if (w->err)
		return w->err;
	if ((err = find_hints(w)) || (err = write_header(w, end, truncated)))
		return w->err = err;
	for (uint32_t i = 0; i < w->n_threads; i++)
		if ((err = write_section(w, &w->threads[i])))
			return w->err = err;
	if (fflush(w->out) || ferror(w->out))
		return w->err = -EIO;
	return 0;
}

uint64_t cat_writer__lines(const struct cat_writer *w) { return w->lines; }
uint64_t cat_writer__events(const struct cat_writer *w) { return w->events; }
uint64_t cat_writer__dropped(const struct cat_writer *w) { return w->dropped; }
uint32_t cat_writer__threads(const struct cat_writer *w) { return w->n_threads; }

void cat_writer__free(struct cat_writer *w)
{
	if (!w)
		return;
	for (uint32_t i = 0; w->names && w->meta && i < w->meta->n_probes; i++)
		free(w->names[i]);
	free(w->names);
	if (w->spill)
		fclose(w->spill);
	for (uint32_t i = 0; i < w->n_threads; i++) {
		stream_free(&w->threads[i].s);
		free((char *)w->threads[i].tev.str);
	}
	free(w->threads);
	u64map__clear(&w->thread_idx);
	stream_free(&w->seq);
	strtab__clear(&w->spawn_keys);
	free(w->spawn_file);
	free(w->spawn_line);
	free(w->spawn_col);
	free(w->runs);
	u64map__clear(&w->run_last);
	u64map__clear(&w->run_named);
	free(w->hint_step);
	free(w->hint_count);
	free(w->hint_sec);
	free(w);
}

/* ---- as a sink ---- */

static int sink_add(void *impl, const struct as_event *ev, const struct as_stack *stack)
{
	(void)stack;   /* CAT has no stacks: OFFCPU and SAMPLE events are left out */
	return cat_writer__add(impl, ev);
}

static int sink_finish(void *impl, const struct as_trace_end *end)
{
	return cat_writer__finish(impl, end, end->truncated);
}

static const struct as_sink_ops sink_ops = {
	.name = "cat",
	.add = sink_add,
	.finish = sink_finish,
	.free = NULL,     /* a view: the caller frees the writer */
};

struct as_sink cat_writer__sink(struct cat_writer *w)
{
	return (struct as_sink){ .ops = &sink_ops, .impl = w };
}
