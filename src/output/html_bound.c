/* html_bound: see html_bound.h. A validating scan of the whole document
 * first (strict JSON, nesting at most BOUND_DEPTH deep), then a copy that
 * drops the whitespace between tokens and, at the arrays of the table
 * below, writes only the elements picked. The copy skips what it does not
 * read without checking it again (strings with memchr); each element of a
 * bounded array is read in the one walk that finds its end (keys compared
 * as their raw bytes: the report's keys have no escapes). */
#include "output/html_bound.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"
#include "util/u64map.h"

#define BOUND_DEPTH 512
#define EDGES_PER_TASK 8      /* wake edges kept per named task and direction */

enum pick {
	PICK_RANK,    /* by the rank key, descending (array order without one) */
	PICK_TASKS,   /* workers, named tasks, tasks of findings, then by rank */
	PICK_EDGES,   /* the most frequent third, the named tasks', then by rank */
};

struct rule {
	const char *path;
	enum pick pick;
	size_t max, max_bytes;     /* elements and minified bytes kept */
	const char *rank;          /* numeric key, NULL: the array's order */
	const char *sums[4];       /* numeric keys summed over the elements cut (N_SUMS) */
};

/* The arrays that grow with the trace. The byte limits add up to about
 * 5.5 MB for the whole report however large the trace: with the kernel-side
 * and page blocks (html.c) the page stays under 10 MB. */
static const struct rule rules[] = {
	{ "tasks", PICK_TASKS, 1000, 1200000, "busy_ns", { "polls", "busy_ns", "wakes", "sched_ns" } },
	{ "task_groups", PICK_RANK, 500, 400000, "busy_ns", { "tasks", "polls", "busy_ns", "wakes" } },
	{ "wake_edges", PICK_EDGES, 3000, 900000, "count", { "count", "timed" } },
	{ "long_polls", PICK_RANK, 1000, 300000, "duration_ns", { "duration_ns" } },
	{ "stalled", PICK_RANK, 1000, 300000, "stalled_ns", { "count" } },
	{ "starved", PICK_RANK, 1000, 300000, "max_wait_ns", { "count" } },
	{ "findings", PICK_RANK, 300, 300000, NULL, { NULL } },
	{ "workers", PICK_RANK, 256, 100000, "busy_ns", { "polls", "busy_ns" } },
	{ "timeline.workers", PICK_RANK, 64, 300000, NULL, { NULL } },
	{ "timeline.tasks", PICK_RANK, 50, 300000, NULL, { NULL } },
	{ "blocking.tasks", PICK_RANK, 500, 400000, "offcpu_ns", { "offcpu_ns", "intervals" } },
	{ "usdt.tasks", PICK_RANK, 1000, 200000, "hits", { "hits" } },
	{ "usdt.probes", PICK_RANK, 1000, 200000, "hits", { "hits" } },
	{ "futures.functions", PICK_RANK, 1000, 300000, "self_ns", { "polls", "self_ns" } },
	{ "futures.parked", PICK_RANK, 500, 300000, NULL, { "waiting_ns" } },
	{ "futures.oncpu_stacks", PICK_RANK, 3000, 400000, "ns", { "ns" } },
	{ "futures.wait_stacks", PICK_RANK, 3000, 400000, "ns", { "ns" } },
};
#define N_RULES (sizeof(rules) / sizeof(rules[0]))

struct span {
	size_t b, e;                /* [b, e) of the document */
};

struct doc {
	const char *s;
	size_t n;
};

/* ------------------------------------------------------------ scanning */

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static size_t skip_ws(const struct doc *d, size_t i)
{
	while (i < d->n && is_ws(d->s[i]))
		i++;
	return i;
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Bytes that end a run of plain string bytes: control characters, the
 * quote, the backslash. */
static const unsigned char str_stop[256] = { [0 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1 };

/* Just past the closing quote of the string opening at i; 0 if invalid. */
static size_t string_end(const struct doc *d, size_t i)
{
	const unsigned char *p = (const unsigned char *)d->s;

	for (i++; i < d->n; i++) {
		unsigned char c = p[i];

		if (!str_stop[c])
			continue;
		if (c == '"')
			return i + 1;
		if (c < 0x20)
			return 0;
		if (++i >= d->n)
			return 0;
		c = p[i];
		if (c == 'u') {
			for (int k = 0; k < 4; k++)
				if (++i >= d->n || !is_hex(d->s[i]))
					return 0;
		} else if (!c || !strchr("\"\\/bfnrt", c)) {
			return 0;
		}
	}
	return 0;
}

static size_t digits(const struct doc *d, size_t i)
{
	while (i < d->n && d->s[i] >= '0' && d->s[i] <= '9')
		i++;
	return i;
}

static size_t number_end(const struct doc *d, size_t i)
{
	size_t j;

	if (i < d->n && d->s[i] == '-')
		i++;
	if (i >= d->n)
		return 0;
	if (d->s[i] == '0')
		i++;
	else if ((j = digits(d, i)) > i)
		i = j;
	else
		return 0;
	if (i < d->n && d->s[i] == '.') {
		if ((j = digits(d, i + 1)) == i + 1)
			return 0;
		i = j;
	}
	if (i < d->n && (d->s[i] == 'e' || d->s[i] == 'E')) {
		i++;
		if (i < d->n && (d->s[i] == '+' || d->s[i] == '-'))
			i++;
		if ((j = digits(d, i)) == i)
			return 0;
		i = j;
	}
	return i;
}

static size_t literal_end(const struct doc *d, size_t i, const char *lit)
{
	size_t n = strlen(lit);

	return d->n - i >= n && !memcmp(d->s + i, lit, n) ? i + n : 0;
}

/* Just past the value starting at i (no whitespace before it); 0 if it is
 * not valid JSON or nests deeper than BOUND_DEPTH. */
static size_t value_end(const struct doc *d, size_t i, int depth)
{
	char close;

	if (i >= d->n)
		return 0;
	switch (d->s[i]) {
	case '"':
		return string_end(d, i);
	case 't':
		return literal_end(d, i, "true");
	case 'f':
		return literal_end(d, i, "false");
	case 'n':
		return literal_end(d, i, "null");
	case '{':
	case '[':
		break;
	default:
		return number_end(d, i);
	}
	if (depth >= BOUND_DEPTH)
		return 0;
	close = d->s[i] == '{' ? '}' : ']';
	i = skip_ws(d, i + 1);
	if (i < d->n && d->s[i] == close)
		return i + 1;
	for (;;) {
		if (close == '}') {
			if (i >= d->n || d->s[i] != '"' || !(i = string_end(d, i)))
				return 0;
			i = skip_ws(d, i);
			if (i >= d->n || d->s[i] != ':')
				return 0;
			i = skip_ws(d, i + 1);
		}
		if (!(i = value_end(d, i, depth + 1)))
			return 0;
		i = skip_ws(d, i);
		if (i < d->n && d->s[i] == ',') {
			i = skip_ws(d, i + 1);
			continue;
		}
		return i < d->n && d->s[i] == close ? i + 1 : 0;
	}
}

/* Just past the string opening at i of a valid document: its closing
 * quote is the first one not escaped. */
static size_t skip_string(const struct doc *d, size_t i)
{
	for (;;) {
		const char *q = memchr(d->s + i + 1, '"', d->n - i - 1);
		size_t e = (size_t)(q - d->s), bs = 0;

		while (e - bs > i && d->s[e - bs - 1] == '\\')
			bs++;
		if (!(bs & 1))
			return e + 1;
		i = e;   /* an escaped quote: look further */
	}
}

/* Just past the value starting at i of a valid document (no checks: the
 * document was validated by value_end() first). */
static size_t skip_value(const struct doc *d, size_t i)
{
	int depth = 0;

	do {
		char c = d->s[i];

		if (c == '"') {
			i = skip_string(d, i);
			continue;
		}
		if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			depth--;
		} else if (!depth) {   /* a number or a literal: up to what ends it */
			while (i < d->n && d->s[i] != ',' && d->s[i] != '}' && d->s[i] != ']' &&
			       !is_ws(d->s[i]))
				i++;
			return i;
		}
		i++;
	} while (depth > 0);
	return i;
}

/* Members of an object or elements of an array of a valid document. */
struct iter {
	const struct doc *d;
	size_t i;
	bool obj, done;
};

static void iter_init(struct iter *it, const struct doc *d, struct span v)
{
	it->d = d;
	it->obj = d->s[v.b] == '{';
	it->i = v.b + 1;
	it->done = false;
}

/* The next member (key: its raw bytes between the quotes) or element. */
static bool iter_next(struct iter *it, struct span *key, struct span *val)
{
	const struct doc *d = it->d;
	size_t i = skip_ws(d, it->i);

	if (it->done)
		return false;
	if (d->s[i] == ',')
		i = skip_ws(d, i + 1);
	if (d->s[i] == '}' || d->s[i] == ']') {
		it->done = true;
		return false;
	}
	if (it->obj) {
		size_t ke = skip_string(d, i);

		if (key)
			*key = (struct span){ i + 1, ke - 1 };
		i = skip_ws(d, skip_ws(d, ke) + 1);   /* past the ':' */
	}
	val->b = i;
	val->e = skip_value(d, i);
	it->i = val->e;
	return true;
}

static bool key_is(const struct doc *d, struct span k, const char *key, size_t len)
{
	return k.e - k.b == len && !memcmp(d->s + k.b, key, len);
}

/* The value of member key of the object v; false when v is no object or has
 * no such member. */
static bool field(const struct doc *d, struct span v, const char *key, struct span *out)
{
	struct iter it;
	struct span k, x;
	size_t len = strlen(key);

	if (d->s[v.b] != '{')
		return false;
	iter_init(&it, d, v);
	while (iter_next(&it, &k, &x))
		if (key_is(d, k, key, len)) {
			*out = x;
			return true;
		}
	return false;
}

/* A non-negative integer value (a fraction or exponent: its integer part,
 * saturated); false for anything else. */
static bool span_u64(const struct doc *d, struct span v, uint64_t *out)
{
	uint64_t x = 0;
	size_t i = v.b;

	if (i >= v.e || d->s[i] < '0' || d->s[i] > '9')
		return false;
	for (; i < v.e && d->s[i] >= '0' && d->s[i] <= '9'; i++) {
		unsigned dig = (unsigned)(d->s[i] - '0');

		x = x > (UINT64_MAX - dig) / 10 ? UINT64_MAX : x * 10 + dig;
	}
	*out = x;
	return true;
}

static bool field_u64(const struct doc *d, struct span v, const char *key, uint64_t *out)
{
	struct span x;

	return field(d, v, key, &x) && span_u64(d, x, out);
}

/* A number's value as a ranking (not a number: -1). */
static double span_rank(const struct doc *d, struct span x)
{
	char buf[64];
	uint64_t u;
	size_t n;

	if (d->s[x.b] != '-' && (d->s[x.b] < '0' || d->s[x.b] > '9'))
		return -1;
	if (span_u64(d, x, &u) && digits(d, x.b) == x.e)
		return (double)u;
	n = x.e - x.b < sizeof(buf) - 1 ? x.e - x.b : sizeof(buf) - 1;
	memcpy(buf, d->s + x.b, n);
	buf[n] = 0;
	return strtod(buf, NULL);
}

/* ------------------------------------------------------------ writing */

/* v's bytes without the whitespace between tokens (to out when non-NULL);
 * returns their number. */
static size_t put_min(FILE *out, const struct doc *d, struct span v)
{
	size_t i = v.b, start = v.b, n = 0;

	while (i < v.e) {
		if (d->s[i] == '"') {
			i = skip_string(d, i);
		} else if (is_ws(d->s[i])) {
			if (out)
				fwrite(d->s + start, 1, i - start, out);
			n += i - start;
			while (i < v.e && is_ws(d->s[i]))
				i++;
			start = i;
		} else {
			i++;
		}
	}
	if (out)
		fwrite(d->s + start, 1, i - start, out);
	return n + (i - start);
}

#define N_SUMS 4

/* An element of a bounded array and what its members say, read in one walk
 * (read_elem()): its rank, the values summed when it is cut, the task seqs
 * and id it names. */
struct elem {
	struct span v;
	size_t idx;
	double rank;
	uint64_t sum[N_SUMS];
	uint64_t seq, id, from_seq, to_seq;   /* 0: none */
	bool worker;                          /* "kind": "worker" */
	int cls;                  /* lower goes first */
	bool keep;
};

/* Orders indices into an array of elements (ctx) by priority. */
static int by_priority(const void *x, const void *y, void *ctx)
{
	const struct elem *el = ctx;
	const struct elem *a = &el[*(const uint32_t *)x], *b = &el[*(const uint32_t *)y];

	if (a->cls != b->cls)
		return a->cls < b->cls ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank > b->rank ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

struct bound {
	const struct doc *d;
	const struct html_bound_opts *o;
	struct u64map keep;        /* seq -> 1: the named tasks */
	struct u64map found_seq;   /* seq -> 1: tasks findings name */
	struct u64map found_id;    /* runtime id -> 1 */
	struct json_writer *w;
	int err;
};

/* Reads the members of e's object (e->v.b: where it starts) that rule r
 * and the picking need, and sets e->v.e to its end: one walk. */
static void read_elem(const struct doc *d, const struct rule *r, struct elem *e)
{
	static const char *const ids[] = { "seq", "id", "from_seq", "to_seq" };
	static const size_t id_len[] = { 3, 2, 8, 6 };
	size_t rank_len = r->rank ? strlen(r->rank) : 0, sum_len[N_SUMS] = { 0 };
	struct iter it;
	struct span k, x;

	for (size_t i = 0; i < N_SUMS && r->sums[i]; i++)
		sum_len[i] = strlen(r->sums[i]);

	e->rank = -1;
	if (d->s[e->v.b] != '{') {
		e->v.e = skip_value(d, e->v.b);
		return;
	}
	iter_init(&it, d, e->v);
	while (iter_next(&it, &k, &x)) {
		size_t kl = k.e - k.b;
		uint64_t *idv[] = { &e->seq, &e->id, &e->from_seq, &e->to_seq };

		if (r->rank && key_is(d, k, r->rank, rank_len))
			e->rank = span_rank(d, x);
		for (size_t i = 0; i < N_SUMS && r->sums[i]; i++)
			if (key_is(d, k, r->sums[i], sum_len[i]) && !span_u64(d, x, &e->sum[i]))
				e->sum[i] = 0;
		for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
			if (key_is(d, k, ids[i], id_len[i]) && !span_u64(d, x, idv[i]))
				*idv[i] = 0;
		if (kl == 4 && !memcmp(d->s + k.b, "kind", 4))
			e->worker = x.e - x.b == 8 && !memcmp(d->s + x.b, "\"worker\"", 8);
	}
	e->v.e = skip_ws(d, it.i) + 1;   /* past the '}' */
}

static bool named(const struct bound *b, uint64_t seq)
{
	uint64_t one;

	return seq && u64map__get(&b->keep, seq, &one);
}

/* The class of a task row: 0 worker, 1 named, 2 named by a finding, 3 other. */
static int task_class(const struct bound *b, const struct elem *e)
{
	uint64_t one;

	if (e->worker)
		return 0;
	if (named(b, e->seq))
		return 1;
	if ((e->seq && u64map__get(&b->found_seq, e->seq, &one)) ||
	    (e->id && u64map__get(&b->found_id, e->id, &one)))
		return 2;
	return 3;
}

/* Wake edges: 0 the most frequent third of the limit (top: one of them;
 * they come in rank order), 1 an edge of a named task within
 * EDGES_PER_TASK per task and direction, 2 the rest. per: seq * 2 +
 * direction -> edges so far. */
static int edge_class(struct bound *b, struct elem *e, bool top, struct u64map *per)
{
	const uint64_t ends[2] = { e->from_seq, e->to_seq };
	int cls = 2;

	if (top)
		return 0;
	for (int k = 0; k < 2; k++) {
		uint64_t seq = ends[k], n = 0;

		if (!named(b, seq) || seq > UINT64_MAX / 2 - 1)
			continue;
		u64map__get(per, seq * 2 + k + 1, &n);
		if (n < EDGES_PER_TASK) {
			if (u64map__set(per, seq * 2 + k + 1, n + 1))
				b->err = -ENOMEM;
			cls = 1;
		}
	}
	return cls;
}

static size_t scaled(const struct bound *b, size_t v)
{
	double s = b->o && b->o->scale > 0 ? b->o->scale : 1;
	double x = (double)v * s;

	return x < 1 ? 1 : (size_t)x;
}

/* Writes the array v of rule r: the elements picked, in their order; says
 * what was cut in the cuts object. */
static void put_bounded(FILE *out, struct bound *b, const struct rule *r, struct span v)
{
	const struct doc *d = b->d;
	struct elem *el = NULL;
	size_t n = 0, cap = 0, kept = 0, bytes = 0, max = scaled(b, r->max);
	size_t max_bytes = scaled(b, r->max_bytes);
	struct u64map per = { 0 };
	uint32_t *order = NULL;
	bool first = true;

	/* the elements, each read in the walk that finds its end */
	for (size_t i = skip_ws(d, v.b + 1); d->s[i] != ']'; i = skip_ws(d, el[n - 1].v.e)) {
		if (d->s[i] == ',')
			i = skip_ws(d, i + 1);
		if (n == cap) {
			struct elem *g = realloc(el, (cap = cap ? cap * 2 : 64) * sizeof(*el));

			if (!g) {
				b->err = -ENOMEM;
				goto out;
			}
			el = g;
		}
		el[n] = (struct elem){ .v = { i, i }, .idx = n };
		read_elem(d, r, &el[n]);
		n++;
	}
	if (n <= max && put_min(NULL, d, v) <= max_bytes) {
		put_min(out, d, v);   /* nothing to cut */
		goto out;
	}
	/* indices sorted, not the elements (large: the sort would move them) */
	order = malloc(n * sizeof(*order));
	if (!order || n > UINT32_MAX) {
		b->err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	if (r->pick == PICK_EDGES) {
		/* rank first, then the classes that depend on it (elements
		 * keep their index: ties go by document order) */
		qsort_r(order, n, sizeof(*order), by_priority, el);
		for (size_t i = 0; i < n; i++)
			el[order[i]].cls = edge_class(b, &el[order[i]], i < max / 3, &per);
	} else if (r->pick == PICK_TASKS) {
		for (size_t i = 0; i < n; i++)
			el[i].cls = task_class(b, &el[i]);
	}
	qsort_r(order, n, sizeof(*order), by_priority, el);
	for (size_t i = 0; i < n && kept < max; i++) {
		struct elem *e = &el[order[i]];
		size_t sz = put_min(NULL, d, e->v);

		if (bytes + sz > max_bytes)
			continue;   /* a smaller one may still fit */
		e->keep = true;
		bytes += sz;
		kept++;
	}
	fputc('[', out);
	for (size_t i = 0; i < n; i++) {
		if (!el[i].keep)
			continue;
		if (!first)
			fputc(',', out);
		first = false;
		put_min(out, d, el[i].v);
	}
	fputc(']', out);

	json_writer__key(b->w, r->path);
	json_writer__begin_object(b->w);
	json_writer__kv_u64(b->w, "total", n);
	json_writer__kv_u64(b->w, "kept", kept);
	json_writer__key(b->w, "omitted");
	json_writer__begin_object(b->w);
	for (size_t k = 0; k < N_SUMS && r->sums[k]; k++) {
		uint64_t sum = 0;

		for (size_t i = 0; i < n; i++)
			if (!el[i].keep)
				sum = sum > UINT64_MAX - el[i].sum[k] ? UINT64_MAX : sum + el[i].sum[k];
		json_writer__kv_u64(b->w, r->sums[k], sum);
	}
	json_writer__end_object(b->w);
	json_writer__end_object(b->w);
out:
	u64map__clear(&per);
	free(order);
	free(el);
}

static const struct rule *rule_for(const char *path)
{
	for (size_t i = 0; i < N_RULES; i++)
		if (!strcmp(rules[i].path, path))
			return &rules[i];
	return NULL;
}

/* Whether a rule's path goes below path ("futures" for "futures.parked"). */
static bool rule_below(const char *path)
{
	size_t n = strlen(path);

	for (size_t i = 0; i < N_RULES; i++)
		if (!strncmp(rules[i].path, path, n) && rules[i].path[n] == '.')
			return true;
	return false;
}

/* Writes v, at path ("" for the document), minified, the arrays of the
 * rules cut. */
static void put_value(FILE *out, struct bound *b, const char *path, struct span v)
{
	const struct doc *d = b->d;
	const struct rule *r;
	struct iter it;
	struct span k, x;
	bool first = true;

	if (d->s[v.b] == '[' && (r = rule_for(path))) {
		put_bounded(out, b, r, v);
		return;
	}
	if (d->s[v.b] != '{' || (*path && !rule_below(path))) {
		put_min(out, d, v);
		return;
	}
	fputc('{', out);
	iter_init(&it, d, v);
	while (iter_next(&it, &k, &x)) {
		char sub[64];
		size_t kl = k.e - k.b, pl = strlen(path);

		if (!first)
			fputc(',', out);
		first = false;
		fwrite(d->s + k.b - 1, 1, kl + 2, out);
		fputc(':', out);
		if (pl + 1 + kl < sizeof(sub)) {
			memcpy(sub, path, pl);
			if (pl)
				sub[pl++] = '.';
			memcpy(sub + pl, d->s + k.b, kl);
			sub[pl + kl] = 0;
			put_value(out, b, sub, x);
		} else {
			put_min(out, d, x);   /* no rule has such a long path */
		}
	}
	fputc('}', out);
}

/* The tasks the findings name: their "task" object's "seq" or "id". */
static void collect_findings(struct bound *b, struct span root)
{
	const struct doc *d = b->d;
	struct span f, e, t;
	struct iter it;
	uint64_t v;

	if (!field(d, root, "findings", &f) || d->s[f.b] != '[')
		return;
	iter_init(&it, d, f);
	while (iter_next(&it, NULL, &e)) {
		if (!field(d, e, "task", &t) || d->s[t.b] != '{')
			continue;
		if (field_u64(d, t, "seq", &v) && v && u64map__set(&b->found_seq, v, 1))
			b->err = -ENOMEM;
		if (field_u64(d, t, "id", &v) && v && u64map__set(&b->found_id, v, 1))
			b->err = -ENOMEM;
	}
}

int html_bound(FILE *out, const char *json, size_t len, const struct html_bound_opts *o,
	       struct json_writer *w)
{
	struct doc d = { .s = json, .n = json ? len : 0 };
	struct bound b = { .d = &d, .o = o, .w = w };
	size_t start = skip_ws(&d, 0), end;

	if (!out || !w || start >= d.n || d.s[start] != '{' ||
	    !(end = value_end(&d, start, 0)) || skip_ws(&d, end) != d.n)
		return -EINVAL;
	for (size_t i = 0; o && i < o->n_keep; i++)
		if (o->keep[i] && o->keep[i] != UINT64_MAX && u64map__set(&b.keep, o->keep[i], 1)) {
			b.err = -ENOMEM;
			goto out;
		}
	collect_findings(&b, (struct span){ start, end });
	if (b.err)
		goto out;
	json_writer__begin_object(w);
	put_value(out, &b, "", (struct span){ start, end });
	json_writer__end_object(w);
	if (!b.err && ferror(out))
		b.err = -EIO;
out:
	u64map__clear(&b.keep);
	u64map__clear(&b.found_seq);
	u64map__clear(&b.found_id);
	return b.err;
}
