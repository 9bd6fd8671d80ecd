/* asyncscope's "# asyncscope ..." header lines of a CAT file (see
 * docs/cat-format.md, "Header"): the probe table, threads, spawn locations,
 * task id runs, order hints and the end, into the reader's tables. Part of
 * the CAT reader (cat/reader_state.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cat/names.h"
#include "cat/reader_state.h"

struct kv {
	const char *k, *v;
	size_t kl, vl;
};

#define KV_MAX 24

/* Splits "kw k=v k=v" (after "# asyncscope "); returns the pairs found. */
static size_t split_kv(const char *s, const char *end, const char **kw, size_t *kwl,
		       struct kv *kv)
{
	size_t n = 0;
	const char *p = s;

	while (p < end && *p != ' ')
		p++;
	*kw = s;
	*kwl = (size_t)(p - s);
	while (p < end && n < KV_MAX) {
		while (p < end && *p == ' ')
			p++;
		const char *t = p;
		while (p < end && *p != ' ')
			p++;
		if (p == t)
			break;
		const char *eq = memchr(t, '=', (size_t)(p - t));
		if (!eq)
			continue;
		kv[n++] = (struct kv){ .k = t, .kl = (size_t)(eq - t), .v = eq + 1,
				       .vl = (size_t)(p - eq - 1) };
	}
	return n;
}

static const struct kv *find_kv(const struct kv *kv, size_t n, const char *k)
{
	size_t kl = strlen(k);
	for (size_t i = 0; i < n; i++)
		if (kv[i].kl == kl && !memcmp(kv[i].k, k, kl))
			return &kv[i];
	return NULL;
}

/* Numeric value of key k: 0 when absent; -EINVAL when malformed or above max. */
static int kv_num(const struct kv *kv, size_t n, const char *k, uint64_t max, uint64_t *v)
{
	const struct kv *e = find_kv(kv, n, k);
	*v = 0;
	if (!e)
		return 0;
	const char *p = e->v, *end = e->v + e->vl;
	bool hex = cat_starts(p, end, "0x");
	if (hex)
		p += 2;
	if (!cat_parse_u64(&p, end, hex ? 16 : 10, v, hex ? 16 : 20) || p != end || *v > max)
		return -EINVAL;
	return 0;
}

/* String value of key k: *out NULL when absent. */
static int kv_str(const struct kv *kv, size_t n, const char *k, char **out)
{
	const struct kv *e = find_kv(kv, n, k);
	*out = NULL;
	return e ? cat_unescape(e->v, e->vl, out) : 0;
}

#define NUM(key, max, dst) do { uint64_t v_; if (kv_num(kv, n, key, max, &v_)) { \
	bad = key; goto bad; } dst = v_; } while (0)
#define STR(key, dst) do { int e_ = kv_str(kv, n, key, &dst); if (e_ == -ENOMEM) return oom(); \
	if (e_) { bad = key; goto bad; } } while (0)

static int name_map(struct cat_reader *r, const char *name, uint32_t probe, uint64_t line)
{
	uint32_t idx;
	size_t len = strlen(name);

	if (strtab__find(&r->names, name, len, &idx))
		return rfail(r, -EBADMSG, line, "two probes have the line name '%s'", name);
	int err = strtab__add(&r->names, name, len, &idx);
	if (err)
		return err == -ENOMEM ? oom() : rfail(r, -EBADMSG, line, "too many names");
	if (cat_grow((void **)&r->name_probe, &r->cap_names, idx + 1, sizeof(*r->name_probe)))
		return oom();
	r->name_probe[idx] = probe;
	return 0;
}

static int header_probe(struct cat_reader *r, const struct kv *kv, size_t n, uint64_t line)
{
	const char *bad = NULL;
	char *role = NULL, *name = NULL, *awaits = NULL;
	const struct kv *types;
	uint64_t index;
	int err = -EBADMSG;

	NUM("index", 65535, index);
	if (index != r->meta.n_probes)
		return rfail(r, -EBADMSG, line, "probe %" PRIu64 " out of order (probe %u expected)",
			     index, r->meta.n_probes);
	struct as_probe *p = cat_reader_new_probe(r);
	if (!p)
		return oom();
	STR("role", role);
	p->role = role ? (uint16_t)cat_role_parse(role, strlen(role)) : 0;
	free(role);
	role = NULL;
	if (!p->role) {
		bad = "role";
		goto bad;
	}
	NUM("arg_reg", 255, p->arg_reg);
	NUM("emulated", 255, p->emulated);
	NUM("addr", UINT64_MAX, p->addr);
	NUM("src_line", UINT32_MAX, p->src_line);
	p->state_off = -1;   /* recording only, as in trace files */
	STR("symbol", p->symbol);
	STR("future", p->future);
	STR("src_file", p->src_file);
	STR("name", name);
	STR("awaits", awaits);
	if (!p->symbol && !(p->symbol = strdup("")))
		goto nomem;
	if (!name) {
		bad = "name";
		goto bad;
	}
	if (awaits && *awaits) {
		uint32_t cnt = 1;
		for (const char *c = awaits; *c; c++)
			cnt += *c == ',';
		p->await_lines = calloc(cnt, sizeof(*p->await_lines));
		if (!p->await_lines)
			goto nomem;
		const char *c = awaits, *e = awaits + strlen(awaits);
		for (uint32_t i = 0; i < cnt; i++) {
			uint64_t v;
			if (!cat_parse_u64(&c, e, 10, &v, 10) || v > UINT32_MAX ||
			    (i + 1 < cnt ? *c != ',' : c != e)) {
				bad = "awaits";
				goto bad;
			}
			p->await_lines[i] = (uint32_t)v;
			c++;
		}
		p->n_awaits = cnt;
	}
	free(awaits);
	awaits = NULL;
	/* the awaited futures' types: one escaped value per await point, ""
	 * for one not known */
	if ((types = find_kv(kv, n, "await_types"))) {
		const char *c = types->v, *e = types->v + types->vl;
		if (!p->n_awaits) {
			bad = "await_types";
			goto bad;
		}
		if (!(p->await_types = calloc(p->n_awaits, sizeof(*p->await_types))))
			goto nomem;
		for (uint32_t i = 0; i < p->n_awaits; i++) {
			const char *comma = memchr(c, ',', (size_t)(e - c));
			const char *ve = comma ? comma : e;
			if ((i + 1 < p->n_awaits) != (comma != NULL)) {
				bad = "await_types";
				goto bad;
			}
			if (ve > c) {
				int ue = cat_unescape(c, (size_t)(ve - c), &p->await_types[i]);
				if (ue == -ENOMEM)
					goto nomem;
				if (ue) {
					bad = "await_types";
					goto bad;
				}
			}
			c = ve + 1;
		}
	}
	err = name_map(r, name, (uint32_t)index, line);
	free(name);
	return err;
nomem:
	err = -ENOMEM;
	bad = NULL;
bad:
	free(role);
	free(name);
	free(awaits);
	if (err == -ENOMEM)
		return oom();
	return rfail(r, -EBADMSG, line, "bad '%s' in a probe line", bad);
}

int cat_header_line(struct cat_reader *r, const char *s, const char *end, uint64_t line)
{
	struct kv kv[KV_MAX];
	const char *kw, *bad = NULL;
	size_t kwl;
	size_t n = split_kv(s, end, &kw, &kwl, kv);

#define IS(w) (kwl == strlen(w) && !memcmp(kw, w, kwl))
	if (IS("cat")) {
		uint64_t v;
		NUM("version", UINT32_MAX, v);
		if (v != CAT_VERSION)
			return rfail(r, -EBADMSG, line, "asyncscope CAT header version %" PRIu64
				     " (this asyncscope reads version %d)", v, CAT_VERSION);
		NUM("format_version", UINT32_MAX, r->meta.format_version);
		return 0;
	}
	if (IS("meta")) {
		char *s2 = NULL;
		const char *keys[] = { "target", "build_id", "runtime", "cmdline", "runtime_detail" };
		char **dst[] = { &r->meta.target, &r->meta.build_id, &r->meta.runtime, &r->meta.cmdline,
				 &r->meta.runtime_detail };
		for (size_t i = 0; i < 5; i++) {
			STR(keys[i], s2);
			if (s2) {
				free(*dst[i]);
				*dst[i] = s2;
			}
		}
		if (find_kv(kv, n, "pid"))
			NUM("pid", UINT32_MAX, r->meta.pid);
		if (find_kv(kv, n, "clock_mono_ns"))
			NUM("clock_mono_ns", UINT64_MAX, r->meta.clock_mono_ns);
		if (find_kv(kv, n, "clock_real_ns"))
			NUM("clock_real_ns", UINT64_MAX, r->meta.clock_real_ns);
		return 0;
	}
	if (IS("probe"))
		return header_probe(r, kv, n, line);
	if (IS("thread")) {
		struct hdr_thread t = { .ev = { .type = AS_EV_THREAD } };
		char *comm = NULL;
		NUM("tid", UINT32_MAX, t.tid);
		NUM("ts", UINT64_MAX, t.ev.ts);
		NUM("task", UINT64_MAX, t.ev.task);
		NUM("other", UINT64_MAX, t.ev.other);
		NUM("flags", 255, t.ev.flags);
		NUM("probe", 65535, t.ev.probe);
		STR("comm", comm);
		t.ev.tid = t.tid;
		t.ev.str = comm;
		for (uint32_t i = 0; i < r->n_threads; i++)
			if (r->threads[i].tid == t.tid) {
				free(comm);
				return rfail(r, -EBADMSG, line, "thread %u listed twice", t.tid);
			}
		if (cat_grow((void **)&r->threads, &r->cap_threads, r->n_threads + 1, sizeof(t))) {
			free(comm);
			return oom();
		}
		r->threads[r->n_threads++] = t;
		return 0;
	}
	if (IS("spawn")) {
		struct spawn_loc sl = { 0 };
		uint64_t id;
		NUM("id", UINT32_MAX, id);
		NUM("line", UINT32_MAX, sl.line);
		NUM("col", UINT32_MAX, sl.col);
		if (id != (uint64_t)r->n_spawns + 1)
			return rfail(r, -EBADMSG, line, "spawn location %" PRIu64 " out of order "
				     "(%u expected)", id, r->n_spawns + 1);
		STR("file", sl.file);
		if (!sl.file && !(sl.file = strdup("")))
			return oom();
		if (cat_grow((void **)&r->spawns, &r->cap_spawns, r->n_spawns + 1, sizeof(sl))) {
			free(sl.file);
			return oom();
		}
		r->spawns[r->n_spawns++] = sl;
		return 0;
	}
	if (IS("taskid")) {
		uint64_t addr, prev;
		struct task_run run = { .next = UINT32_MAX };
		NUM("addr", UINT64_MAX, addr);
		NUM("id", UINT64_MAX, run.id);
		NUM("polls", UINT64_MAX, run.polls);
		if (!addr || addr == UINT64_MAX || !run.polls) {
			bad = addr ? "polls" : "addr";
			goto bad;
		}
		if (r->n_runs == UINT32_MAX - 1 ||
		    cat_grow((void **)&r->runs, &r->cap_runs, r->n_runs + 1, sizeof(run)))
			return oom();
		uint32_t idx = r->n_runs++;
		r->runs[idx] = run;
		if (u64map__get(&r->run_tail, addr, &prev))
			r->runs[prev - 1].next = idx;
		else if (u64map__set(&r->run_head, addr, (uint64_t)idx + 1))
			return oom();
		if (u64map__set(&r->run_tail, addr, (uint64_t)idx + 1))
			return oom();
		return 0;
	}
	if (IS("order")) {
		struct order_hint h;
		NUM("step", UINT64_MAX, h.step);
		NUM("section", UINT32_MAX, h.section);
		h.count = 1;
		if (find_kv(kv, n, "count"))
			NUM("count", UINT64_MAX - h.step, h.count);
		h.line = line;
		if (!h.count)
			return rfail(r, -EBADMSG, line, "order hint of 0 steps");
		if (r->n_hints && h.step < r->hints[r->n_hints - 1].step + r->hints[r->n_hints - 1].count)
			return rfail(r, -EBADMSG, line, "order steps must increase");
		if (r->n_hints == r->cap_hints) {
			size_t cap = r->cap_hints ? r->cap_hints * 2 : 64;
			struct order_hint *q = realloc(r->hints, cap * sizeof(*q));
			if (!q)
				return oom();
			r->hints = q;
			r->cap_hints = cap;
		}
		r->hints[r->n_hints++] = h;
		return 0;
	}
	if (IS("end")) {
		NUM("events", UINT64_MAX, r->hdr_events);
		NUM("lost", UINT64_MAX, r->end.lost);
		NUM("missed", UINT64_MAX, r->end.missed);
		NUM("end_ns", UINT64_MAX, r->end.end_ns);
		r->have_end = true;
		return 0;
	}
	if (IS("truncated")) {
		NUM("events", UINT64_MAX, r->hdr_events);
		/* the loss counts up to the cut, when the trace had them */
		if (find_kv(kv, n, "lost")) {
			NUM("lost", UINT64_MAX, r->end.lost);
			NUM("missed", UINT64_MAX, r->end.missed);
			NUM("counts_ns", UINT64_MAX, r->end.counts_ns);
			r->have_counts = true;
		}
		r->truncated_mark = true;
		return 0;
	}
	return 0;   /* "note" and keywords of later versions */
#undef IS
bad:
	return rfail(r, -EBADMSG, line, "bad '%s' in an asyncscope header line", bad);
}
