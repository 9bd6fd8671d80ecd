/* The CAT / uftrace dump reader (see cat/reader.h).
 *
 * The reader checks the whole file at open (one pass: the header, the
 * sections' bounds, every line; probes are made up from the names of a file
 * that has no asyncscope header, by cat/rules.h), then merges the sections
 * by timestamp with one buffered cursor per section, reading with pread():
 * memory is bounded by the sections, the probes and the header tables, never
 * by the events. asyncscope's header lines are cat/header.c's. Grammar:
 * docs/cat-format.md. Never prints; no libbpf, no probe/. */
#include "cat/reader.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cat/names.h"
#include "cat/reader_state.h"
#include "trace/reader.h"
#include "trace/writer.h"

static int line_probe(struct cat_reader *r, const struct cat_line *pl, uint64_t line,
		      uint32_t *probe, uint16_t *role)
{
	uint32_t idx;
	int err;

	*probe = UINT32_MAX;
	*role = 0;
	if (!strtab__find(&r->names, pl->name, pl->name_len, &idx)) {
		if (r->own)
			return rfail(r, -EBADMSG, line, "function '%.*s' is not in the header's probe table",
				     (int)(pl->name_len > 200 ? 200 : pl->name_len), pl->name);
		err = strtab__add(&r->names, pl->name, pl->name_len, &idx);
		if (err)
			return err == -ENOMEM ? oom() : rfail(r, -EBADMSG, line, "too many names");
		if (cat_grow((void **)&r->fnames, &r->cap_names, idx + 1, sizeof(*r->fnames)))
			return oom();
		struct fname *fn = &r->fnames[idx];
		memset(fn, 0, sizeof(*fn));
		char *rust = cat_unspell(strtab__get(&r->names, idx));
		char *spelled = rust ? cat_spell(rust) : NULL;
		struct cat_role cr;
		int ce = spelled ? cat_rules_classify(rust, spelled, &cr) : -ENOMEM;
		free(spelled);
		if (ce) {
			free(rust);
			return oom();
		}
		const char *rt = cr.runtime;
		fn->rust = rust;
		fn->role = cr.role;
		fn->inner_poll = cr.inner_poll;
		if (rt && (!r->meta.runtime || !strstr(r->meta.runtime, rt))) {
			size_t ol = r->meta.runtime ? strlen(r->meta.runtime) : 0;
			char *nrt = malloc(ol + strlen(rt) + 2);
			if (!nrt)
				return oom();
			sprintf(nrt, "%s%s%s", ol ? r->meta.runtime : "", ol ? "+" : "", rt);
			free(r->meta.runtime);
			r->meta.runtime = nrt;
		}
	}
	if (r->own) {
		*probe = r->name_probe[idx];
		*role = r->meta.probes[*probe].role;
		return 0;
	}
	const struct fname *fn = &r->fnames[idx];
	if (!fn->role)
		return 0;
	/* one probe per distinct name and address */
	char key[16];
	uint64_t a = pl->addr;
	memcpy(key, &idx, 4);
	memcpy(key + 4, &a, 8);
	uint32_t k;
	if (!strtab__find(&r->keys, key, 12, &k)) {
		struct as_probe *p = cat_reader_new_probe(r);
		if (!p)
			return r->meta.n_probes >= 65536
			       ? rfail(r, -EBADMSG, line, "more than 65536 distinct functions")
			       : oom();
		p->role = fn->role;
		p->addr = pl->addr;
		p->state_off = -1;
		p->symbol = strdup(fn->rust);
		if (!p->symbol)
			return oom();
		if (fn->role == AS_ROLE_FUTURE && cat_rules_future_name(fn->rust, &p->future))
			return oom();
		err = strtab__add(&r->keys, key, 12, &k);
		if (err)
			return oom();
	}
	*probe = k;
	*role = fn->role;
	return 0;
}

/* ---- sections ---- */

static void proc_init(struct proc *pr, uint32_t tid, bool index_pass)
{
	memset(pr, 0, sizeof(*pr));
	pr->tid = tid;
	pr->index_pass = index_pass;
}

/* Completes the pending event with its args / retval block. */
static int finish_pending(struct cat_reader *r, struct proc *pr, struct as_event *out)
{
	struct as_event *ev = &pr->ev;

	if (!pr->pending)
		return 0;
	pr->pending = false;
	if (r->own && pr->have_ret && ev->type == AS_EV_FUTURE_EXIT) {
		ev->flags = (uint8_t)pr->ret;
		ev->other = AS_FUT_OTHER(AS_FUT_DEPTH(ev->other), pr->ret >> 8);
	}
	pr->overridden = false;
	if (r->own && pr->blk_line) {
		if (pr->nargs != 4)
			return rfail(r, -EBADMSG, pr->blk_line, "an [args ] record needs 4 values "
				     "(task, other, flags, probe), it has %u", pr->nargs);
		if (pr->args[2] > 255 || pr->args[3] > 65535)
			return rfail(r, -EBADMSG, pr->blk_line, "flags or probe out of range in "
				     "an [args ] record");
		ev->task = pr->args[0];
		ev->other = pr->args[1];
		ev->flags = (uint8_t)pr->args[2];
		ev->probe = (uint16_t)pr->args[3];
		pr->overridden = true;
		if (ev->type == AS_EV_POLL_BEGIN && ev->probe >= r->meta.n_probes)
			return rfail(r, -EBADMSG, pr->blk_line, "poll probe %u is not in the header",
				     ev->probe);
	}
	pr->have_ret = false;
	pr->blk_line = 0;
	pr->nargs = 0;
	*out = *ev;
	return 1;
}

/* Feeds one line of a section. Returns 1 with an event completed by it (the
 * one before it), 0, or a negative error (message recorded). */
static int proc_feed(struct cat_reader *r, struct proc *pr, const struct cat_line *pl,
		     uint64_t line, struct as_event *out)
{
	int rc = 0, err;

	switch (pl->kind) {
	case CAT_LINE_ARGS:
	case CAT_LINE_RETVAL:
		if (pl->tid != pr->tid)
			return rfail(r, -EBADMSG, line, "thread %u in the section of thread %u",
				     pl->tid, pr->tid);
		if (!r->own || !pr->pending)
			return 0;
		if ((pl->kind == CAT_LINE_ARGS && pr->blk_line) || (pl->kind == CAT_LINE_RETVAL && pr->have_ret))
			return rfail(r, -EBADMSG, line, "a second %s record for one event",
				     pl->kind == CAT_LINE_ARGS ? "[args ]" : "[retval]");
		pr->blk = pl->kind;
		if (pl->kind == CAT_LINE_ARGS)
			pr->blk_line = line;
		return 0;
	case CAT_LINE_ARGVAL:
		if (!r->own || !pr->pending || pr->blk != CAT_LINE_ARGS)
			return 0;
		if (!pl->numeric || pl->index != pr->nargs || pr->nargs >= 4)
			return rfail(r, -EBADMSG, line, "bad args value (args[%u] expected, as a number)",
				     pr->nargs);
		pr->args[pr->nargs++] = pl->val;
		return 0;
	case CAT_LINE_RETVALVAL:
		if (!r->own || !pr->pending || pr->blk != CAT_LINE_RETVAL)
			return 0;
		if (!pl->numeric || pr->have_ret)
			return rfail(r, -EBADMSG, line, "bad retval value (one number expected)");
		pr->ret = pl->val;
		pr->have_ret = true;
		return 0;
	case CAT_LINE_BLANK:
		return 0;
	default:
		break;
	}
	pr->blk = 0;
	if ((rc = finish_pending(r, pr, out)) < 0)
		return rc;
	if (pl->kind == CAT_LINE_LOST) {
		if (pr->index_pass) {
			r->stats.lost_lines++;
			r->end.lost += r->own ? 0 : pl->addr;
		}
		return rc;
	}
	if (pl->kind != CAT_LINE_FUNC) {
		if (pr->index_pass) {
			r->stats.unknown_lines++;
			r->unknown_in_sections++;
		}
		return rc;
	}
	if (pl->tid != pr->tid)
		return rfail(r, -EBADMSG, line, "thread %u in the section of thread %u", pl->tid, pr->tid);
	uint32_t probe;
	uint16_t role;
	if ((err = line_probe(r, pl, line, &probe, &role)))
		return err;
	if (pr->index_pass) {
		r->stats.function_lines++;
		if (!role)
			r->stats.skipped_functions++;
		if (pl->ts < r->min_ts)
			r->min_ts = pl->ts;
		if (pl->ts > r->max_ts)
			r->max_ts = pl->ts;
	}
	/* a foreign file: a poll function entered right inside another one is
	 * the same task's poll seen twice (raw::poll -> Harness::poll) */
	if (!r->own && !pl->exit && role == AS_ROLE_POLL && pr->st.n &&
	    pr->st.frames[pr->st.n - 1].role == AS_ROLE_POLL) {
		uint32_t idx;
		if (strtab__find(&r->names, pl->name, pl->name_len, &idx) && r->fnames[idx].inner_poll)
			role = 0;
	}
	struct as_event ev;
	int has = cat_state__apply(&pr->st, pl->exit, role, probe, pl->addr, &ev);
	if (has == -E2BIG)
		return rfail(r, -EBADMSG, line, "calls nested deeper than %u", CAT_DEPTH_MAX);
	if (has < 0)
		return oom();
	/* a foreign file: name a task poll by the first closure it runs */
	if (pr->index_pass && !r->own && has && ev.type == AS_EV_FUTURE_ENTER && ev.task) {
		for (uint32_t i = pr->st.n - 1; i-- > 0;) {
			if (pr->st.frames[i].role != AS_ROLE_POLL)
				continue;
			struct as_probe *pp = &r->meta.probes[pr->st.frames[i].probe];
			const struct as_probe *fp = &r->meta.probes[probe];
			if (!pp->future && fp->future && !(pp->future = strdup(fp->future)))
				return oom();
			break;
		}
	}
	if (!has)
		return rc;
	ev.ts = pl->ts;
	ev.tid = pr->tid;
	ev.str = NULL;
	ev.stack = 0;
	if (ev.type == AS_EV_SPAWN) {
		if (!r->own || !ev.other || ev.other > r->n_spawns)
			return rfail(r, -EBADMSG, line, "spawn location %" PRIu64 " is not in the header",
				     ev.other);
		const struct spawn_loc *sl = &r->spawns[ev.other - 1];
		ev.str = sl->file;
		ev.other = (uint64_t)sl->line << 32 | sl->col;
	}
	pr->pending = true;
	pr->ev = ev;
	pr->ev_line = line;
	return rc;
}

/* ---- open ---- */

static int add_section(struct cat_reader *r, uint32_t tid, uint64_t start, uint64_t line)
{
	if (r->n_secs == UINT32_MAX - 1 ||
	    cat_grow((void **)&r->secs, &r->cap_secs, r->n_secs + 1, sizeof(*r->secs)))
		return oom();
	int32_t th = -1;
	for (uint32_t i = 0; i < r->n_threads; i++)
		if (r->threads[i].tid == tid && !r->threads[i].used) {
			r->threads[i].used = true;
			th = (int32_t)i;
			r->counted++;
			break;
		}
	r->secs[r->n_secs++] = (struct section){ .start = start, .end = start, .line = line,
						 .tid = tid, .thread = th };
	return 0;
}

/* CAT_PIPE_MAX, or ASYNCSCOPE_CAT_PIPE_MAX (bytes: for tests) when set. */
static uint64_t cat_pipe_max(void)
{
	const char *e = getenv("ASYNCSCOPE_CAT_PIPE_MAX");
	char *end;
	unsigned long long v = e ? strtoull(e, &end, 10) : 0;

	return e && *e && !*end && v ? (uint64_t)v : CAT_PIPE_MAX;
}

/* Makes a seekable file of f: f itself, or a temporary copy of head and the
 * rest of f (a pipe), at most CAT_PIPE_MAX bytes (EFBIG past it: a pipe
 * must not fill the temporary directory). Returns the FILE to use, NULL
 * with errno (the copy's write errno: ENOSPC ...). */
static FILE *seekable(FILE *f, const void *head, size_t head_len)
{
	int fd = fileno(f);
	if (fd >= 0 && lseek(fd, 0, SEEK_CUR) >= 0)
		return f;
	FILE *t = tmpfile();
	if (!t)
		return NULL;
	char buf[65536];
	size_t n;
	uint64_t total = head_len, max = cat_pipe_max();
	if (head_len && fwrite(head, 1, head_len, t) != head_len)
		goto fail;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		if ((total += n) > max) {
			errno = EFBIG;
			goto fail;
		}
		if (fwrite(buf, 1, n, t) != n)
			goto fail;
	}
	if (ferror(f)) {
		errno = EIO;
		goto fail;
	}
	if (fflush(t))
		goto fail;
	return t;
fail:
	{
		int e = errno ? errno : EIO;
		fclose(t);
		errno = e;
	}
	return NULL;
}

static int index_file(struct cat_reader *r)
{
	struct cat_line_reader l = { .fd = r->fd, .end = r->size };
	struct proc pr;
	const char *s;
	size_t n;
	uint64_t start, line = 0;
	bool in_sec = false, numeric = false;
	struct as_event ev;
	int rc;

	proc_init(&pr, 0, true);
	r->min_ts = UINT64_MAX;
	while ((rc = cat_line_reader__next(&l, &s, &n, &start)) == 1) {
		struct cat_line pl;
		line++;
		r->stats.lines++;
		if (memchr(s, '\0', n)) {
			rc = rfail(r, -EBADMSG, line, "binary data (a NUL byte): not a text trace");
			goto out;
		}
		const char *why = cat_line_parse(s, n, &pl);
		if (why) {
			rc = rfail(r, -EBADMSG, line, "malformed uftrace record: %s", why);
			goto out;
		}
		if (pl.kind == CAT_LINE_SECTION) {
			if (in_sec && numeric) {
				if ((rc = finish_pending(r, &pr, &ev)) < 0)
					goto out;
				r->counted += (uint64_t)rc;
				r->secs[r->n_secs - 1].end = start;
			}
			cat_state__clear(&pr.st);
			proc_init(&pr, pl.tid, true);
			in_sec = true;
			numeric = pl.numeric;
			r->stats.sections++;
			if (numeric && (rc = add_section(r, pl.tid, l.off + l.pos, line + 1)))
				goto out;
			continue;
		}
		if (pl.kind == CAT_LINE_OURS) {
			if (line == 1 && cat_starts(s, s + n, "# asyncscope cat "))
				r->own = true;
			if (in_sec) {
				rc = rfail(r, -EBADMSG, line, "asyncscope header line after the first "
					   "'reading' line");
				goto out;
			}
			if (!r->own) {
				rc = rfail(r, -EBADMSG, line, "asyncscope header line without the "
					   "'# asyncscope cat' first line");
				goto out;
			}
			r->stats.header_lines++;
			if ((rc = cat_header_line(r, s + 13, s + n, line)))
				goto out;
			continue;
		}
		if (!in_sec) {
			if (pl.kind == CAT_LINE_FUNC || pl.kind == CAT_LINE_ARGS || pl.kind == CAT_LINE_RETVAL ||
			    pl.kind == CAT_LINE_LOST) {
				rc = rfail(r, -EBADMSG, line, "a uftrace record before the first "
					   "'reading <tid>.dat' line");
				goto out;
			}
			if (pl.kind != CAT_LINE_BLANK)
				r->stats.header_lines++;
			continue;
		}
		if (!numeric) {
			if (pl.kind != CAT_LINE_BLANK)
				r->stats.unknown_lines++;
			continue;
		}
		if ((rc = proc_feed(r, &pr, &pl, line, &ev)) < 0)
			goto out;
		r->counted += (uint64_t)rc;
	}
	if (rc == -E2BIG) {
		rc = rfail(r, -EBADMSG, line + 1, "line longer than %u bytes", CAT_LINE_MAX);
		goto out;
	}
	if (rc < 0) {
		rc = rfail(r, rc, line, "read error");
		goto out;
	}
	if (in_sec && numeric) {
		if ((rc = finish_pending(r, &pr, &ev)) < 0)
			goto out;
		r->counted += (uint64_t)rc;
		r->secs[r->n_secs - 1].end = r->size;
	}
	rc = 0;
out:
	cat_state__clear(&pr.st);
	free(l.buf);
	return rc;
}

static int build_meta(struct cat_reader *r)
{
	struct as_trace_meta *m = &r->meta;
	char **strs[] = { &m->target, &m->build_id, &m->runtime, &m->cmdline };

	if (!r->own) {
		m->format_version = AS_TRACE_FORMAT_VERSION;
		m->pid = r->n_secs ? r->secs[0].tid : 0;
		m->clock_mono_ns = r->min_ts == UINT64_MAX ? 0 : r->min_ts;
		if (!m->runtime && !(m->runtime = strdup("uftrace")))
			return oom();
		r->end.end_ns = r->max_ts;
		r->end.missed = r->unknown_in_sections;
		r->hdr_events = r->counted;
		r->have_end = true;
	} else {
		if (!r->have_end && !r->truncated_mark)
			return rfail(r, -EBADMSG, 0, "the asyncscope header has no 'end' or "
				     "'truncated' line: the file is damaged");
		for (size_t i = 0; i < r->n_hints; i++)
			if (r->hints[i].section >= r->n_secs)
				return rfail(r, -EBADMSG, r->hints[i].line, "order hint names section %u "
					     "but the file has %u", r->hints[i].section, r->n_secs);
		if (r->counted > r->hdr_events)
			return rfail(r, -EBADMSG, 0, "its sections hold %" PRIu64 " events but its "
				     "header counts %" PRIu64 ": lines were added or edited",
				     r->counted, r->hdr_events);
		r->end.missed += r->unknown_in_sections;
	}
	for (size_t i = 0; i < 4; i++)
		if (!*strs[i] && !(*strs[i] = strdup("")))
			return oom();
	return 0;
}

int cat_reader__open(FILE *f, const void *head, size_t head_len, const char *path,
		     struct cat_reader **out, char *err, size_t errlen)
{
	struct cat_reader *r = NULL;
	char probe_buf[65536];
	FILE *g;
	int rc;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	g = seekable(f, head, head_len);
	if (!g) {
		int e = errno ? errno : EIO;
		uint64_t max = cat_pipe_max();
		if (err && errlen && e == EFBIG)
			snprintf(err, errlen, "cannot read %s: CAT text from a pipe over %llu %s is "
				 "not copied to the temporary directory: save it to a file and give "
				 "its path", path, (unsigned long long)(max >= 1u << 20 ? max >> 20 : max),
				 max >= 1u << 20 ? "MiB" : "bytes");
		else if (err && errlen)
			snprintf(err, errlen, "cannot read %s: %s%s", path, strerror(e),
				 e == ENOSPC ? " (copying the pipe to the temporary directory: save "
				 "it to a file and give its path)" : "");
		fclose(f);
		return -e;
	}
	ssize_t got = pread(fileno(g), probe_buf, sizeof(probe_buf), 0);
	if (got <= 0 || !cat_detect(probe_buf, (size_t)got)) {
		if (g != f)
			fclose(g);
		return 0;
	}
	if (g != f)
		fclose(f);
	r = calloc(1, sizeof(*r));
	if (!r || !(r->path = strdup(path))) {
		free(r);
		fclose(g);
		if (err && errlen)
			snprintf(err, errlen, "cannot read %s: out of memory", path);
		return -ENOMEM;
	}
	r->f = g;
	r->fd = fileno(g);
	struct stat sb;
	if (fstat(r->fd, &sb)) {
		rc = rfail(r, -EIO, 0, "stat");
		goto fail;
	}
	r->size = (uint64_t)sb.st_size;
	if ((rc = index_file(r)) || (rc = build_meta(r)))
		goto fail;
	r->stats.asyncscope = r->own;
	if (!r->own && (!r->meta.target || !*r->meta.target)) {
		/* a foreign log names no binary: say where the events come from */
		char *t = NULL;
		if (asprintf(&t, "(uftrace dump %s)", path) < 0) {
			rc = rfail(r, -ENOMEM, 0, "meta");
			goto fail;
		}
		free(r->meta.target);
		r->meta.target = t;
	}
	/* the merge: one cursor per section */
	r->curs = calloc(r->n_secs ? r->n_secs : 1, sizeof(*r->curs));
	if (!r->curs || cat_heap__init(&r->heap, r->n_secs)) {
		rc = rfail(r, -ENOMEM, 0, "merge");
		goto fail;
	}
	for (uint32_t i = 0; i < r->n_secs; i++) {
		struct cursor *c = &r->curs[i];
		c->l = (struct cat_line_reader){ .fd = r->fd, .off = r->secs[i].start, .end = r->secs[i].end };
		c->line = r->secs[i].line;
		proc_init(&c->pr, r->secs[i].tid, false);
		c->thread_pending = r->secs[i].thread >= 0;
	}
	r->consumed = r->n_secs ? r->secs[0].start : r->size;
	*out = r;
	return 1;
fail:
	if (err && errlen)
		snprintf(err, errlen, "%s", r->errmsg);
	cat_reader__free(r);
	return rc < 0 ? rc : -EBADMSG;
}

/* ---- merge ---- */

/* Loads the next event of section i into its head. Returns 0 (head loaded
 * or the section done) or a negative error. */
static int advance(struct cat_reader *r, uint32_t i)
{
	struct cursor *c = &r->curs[i];
	const char *s;
	size_t n;
	uint64_t start;
	int rc;

	c->have = false;
	if (c->done)
		return 0;
	if (c->thread_pending) {
		c->thread_pending = false;
		c->head = r->threads[r->secs[i].thread].ev;
		c->head_overridden = false;
		c->have = true;
		return 0;
	}
	for (;;) {
		rc = cat_line_reader__next(&c->l, &s, &n, &start);
		if (rc < 0)
			return rfail(r, rc == -E2BIG ? -EBADMSG : rc, c->line, "read error");
		if (rc == 0) {
			c->done = true;
			rc = finish_pending(r, &c->pr, &c->head);
			if (rc < 0)
				return rc;
			c->have = rc == 1;
			c->head_overridden = c->pr.overridden;
			cat_state__clear(&c->pr.st);
			free(c->l.buf);
			c->l.buf = NULL;
			return 0;
		}
		r->consumed += n + 1;
		struct cat_line pl;
		const char *why = cat_line_parse(s, n, &pl);
		uint64_t line = c->line++;
		if (why)
			return rfail(r, -EBADMSG, line, "malformed uftrace record: %s", why);
		rc = proc_feed(r, &c->pr, &pl, line, &c->head);
		if (rc < 0)
			return rc;
		if (rc == 1) {
			c->head_overridden = c->pr.overridden;
			c->have = true;
			return 0;
		}
	}
}

static int merge_fail(struct cat_reader *r, int err)
{
	snprintf(r->msg, sizeof(r->msg), "%s", r->errmsg);
	r->err = err;
	return err;
}

int cat_reader__next(struct cat_reader *r, struct as_event *ev)
{
	int rc;

	if (r->err)
		return r->err;
	if (r->done)
		return 0;
	if (!r->started) {
		/* first call: load every head */
		r->started = true;
		for (uint32_t i = 0; i < r->n_secs; i++) {
			if ((rc = advance(r, i)))
				return merge_fail(r, rc);
			if (r->curs[i].have)
				cat_heap__push(&r->heap, i, r->curs[i].head.ts);
		}
	}
	uint32_t s = cat_heap__top(&r->heap);
	if (r->next_hint < r->n_hints && r->hints[r->next_hint].step <= r->events) {
		const struct order_hint *oh = &r->hints[r->next_hint];
		if (r->events + 1 >= oh->step + oh->count)
			r->next_hint++;
		s = oh->section;
		if (!r->curs[s].have) {
			rfail(r, -EBADMSG, oh->line, "order hint at step %" PRIu64 " names section %u, "
			      "which has no event left", r->events, s);
			return merge_fail(r, -EBADMSG);
		}
	}
	if (s == UINT32_MAX) {
		if (r->events != r->hdr_events || r->truncated_mark) {
			r->err = -ENODATA;
			if (r->truncated_mark)
				snprintf(r->msg, sizeof(r->msg), "%s is truncated after %" PRIu64
					 " events (the recording did not finish): rerun with "
					 "--partial to use them", r->path, r->events);
			else
				snprintf(r->msg, sizeof(r->msg), "%s is truncated after %" PRIu64
					 " of the %" PRIu64 " events its header counts (lines were "
					 "cut or removed): rerun with --partial to use them", r->path,
					 r->events, r->hdr_events);
			return r->err;
		}
		r->end.events = r->events;
		r->done = true;
		return 0;
	}
	*ev = r->curs[s].head;
	bool overridden = r->curs[s].head_overridden;
	cat_heap__remove(&r->heap, s);
	/* the header's task ids, consumed in merge order */
	if (r->own && ev->type == AS_EV_POLL_BEGIN && ev->task && ev->task != UINT64_MAX) {
		uint64_t h;
		uint64_t id = 0;
		if (u64map__get(&r->run_head, ev->task, &h) && h) {
			struct task_run *run = &r->runs[h - 1];
			id = run->id;
			if (--run->polls == 0 &&
			    u64map__set(&r->run_head, ev->task,
					run->next == UINT32_MAX ? 0 : (uint64_t)run->next + 1)) {
				rfail(r, -ENOMEM, 0, "oom");
				return merge_fail(r, -ENOMEM);
			}
		}
		if (!overridden)
			ev->other = id;
	}
	if ((rc = advance(r, s)))
		return merge_fail(r, rc);
	if (r->curs[s].have)
		cat_heap__push(&r->heap, s, r->curs[s].head.ts);
	r->events++;
	return 1;
}

const struct as_trace_meta *cat_reader__meta(const struct cat_reader *r)
{
	return &r->meta;
}

const char *cat_reader__error(const struct cat_reader *r)
{
	return r->err ? r->msg : "";
}

const struct as_trace_end *cat_reader__end(const struct cat_reader *r)
{
	return r->done && !r->err ? &r->end : NULL;
}

int cat_reader__counts(const struct cat_reader *r, struct as_trace_end *out)
{
	if (!r->have_counts)
		return 0;
	out->lost = r->end.lost;
	out->missed = r->end.missed;
	out->counts_ns = r->end.counts_ns;
	return 1;
}

uint64_t cat_reader__events(const struct cat_reader *r)
{
	return r->events;
}

uint64_t cat_reader__offset(const struct cat_reader *r)
{
	return r->consumed;
}

const struct cat_stats *cat_reader__stats(const struct cat_reader *r)
{
	return &r->stats;
}

void cat_reader__free(struct cat_reader *r)
{
	if (!r)
		return;
	if (r->f)
		fclose(r->f);
	free(r->path);
	trace_meta__clear(&r->meta);
	free(r->secs);
	for (uint32_t i = 0; i < r->n_threads; i++)
		free((char *)r->threads[i].ev.str);
	free(r->threads);
	for (uint32_t i = 0; i < r->n_spawns; i++)
		free(r->spawns[i].file);
	free(r->spawns);
	free(r->runs);
	u64map__clear(&r->run_head);
	u64map__clear(&r->run_tail);
	free(r->hints);
	for (uint32_t i = 0; r->fnames && i < r->names.n; i++)
		free(r->fnames[i].rust);
	free(r->fnames);
	strtab__clear(&r->names);
	free(r->name_probe);
	strtab__clear(&r->keys);
	for (uint32_t i = 0; r->curs && i < r->n_secs; i++) {
		free(r->curs[i].l.buf);
		cat_state__clear(&r->curs[i].pr.st);
	}
	free(r->curs);
	cat_heap__free(&r->heap);
	free(r);
}
