/* pprof: the profile builder and its gzip'd protobuf writer (see pprof.h).
 * Strings, functions, locations and samples are interned in byte-keyed
 * string tables (util/strtab.h): a function's key is "name\0file", a
 * location's its address and (function, line) pairs, a sample's its
 * location ids and labels; ids are table indices + 1. The Profile is
 * encoded with util/pb.h and compressed with zlib. No I/O but the FILE*
 * given, no globals.
 *
 * A sample as protoc --decode=perftools.profiles.Profile shows it:
 *   sample { location_id: 3  location_id: 2  location_id: 1
 *            value: 12  value: 121212000  value: 0
 *            label { key: 7 str: 8 }  label { key: 9 str: 10 } } */
#include "output/pprof.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "util/pb.h"
#include "util/strtab.h"

/* perftools.profiles field numbers (profile.proto) */
enum {
	P_SAMPLE_TYPE = 1, P_SAMPLE = 2, P_LOCATION = 4, P_FUNCTION = 5, P_STRING_TABLE = 6,
	P_TIME_NANOS = 9, P_DURATION_NANOS = 10, P_PERIOD_TYPE = 11, P_PERIOD = 12,
	P_COMMENT = 13, P_DEFAULT_SAMPLE_TYPE = 14,
	VT_TYPE = 1, VT_UNIT = 2,
	S_LOCATION_ID = 1, S_VALUE = 2, S_LABEL = 3,
	L_KEY = 1, L_STR = 2, L_NUM = 3, L_NUM_UNIT = 4,
	LOC_ID = 1, LOC_ADDRESS = 3, LOC_LINE = 4,
	LINE_FUNCTION_ID = 1, LINE_LINE = 2,
	F_ID = 1, F_NAME = 2, F_FILENAME = 4,
	M_ID = 1, M_FILENAME = 5, M_BUILD_ID = 6, M_HAS_FUNCTIONS = 7, M_HAS_FILENAMES = 8,
	M_HAS_LINE_NUMBERS = 9, M_HAS_INLINE_FRAMES = 10, P_MAPPING = 3,
};

#define PPROF_MAX_TYPES 16
#define PPROF_MAX_FRAMES (AS_STACK_MAX_FRAMES * 2 + 64)

struct pprof {
	struct strtab strs;      /* the string table: "" first */
	struct strtab fkeys;     /* functions: "name\0file" */
	uint32_t *fn_name, *fn_file; /* per function: string ids */
	size_t cap_fn;
	struct strtab lkeys;     /* locations: addr, then (function id, line) pairs */
	struct strtab skeys;     /* samples: location ids, then labels */
	int64_t *vals;           /* per sample: n_types values */
	size_t cap_vals;         /* in samples */
	uint32_t types[PPROF_MAX_TYPES][2]; /* type, unit string ids */
	int n_types, default_type;
	int64_t time_ns, duration_ns, period;
	uint32_t period_type[2];
	uint32_t *comments;
	size_t n_comments, cap_comments;
	uint32_t main_file, main_build_id; /* the program's mapping, 0 none */
};

static int str_id(struct pprof *p, const char *s, uint32_t *id)
{
	size_t len = s ? strlen(s) : 0;

	if (!len) {
		*id = 0;
		return 0;
	}
	int err = strtab__intern(&p->strs, s, len, id);
	return err < 0 ? err : 0;
}

struct pprof *pprof__new(void)
{
	struct pprof *p = calloc(1, sizeof(*p));
	uint32_t id;

	if (!p)
		return NULL;
	if (strtab__add(&p->strs, "", 0, &id)) {
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	p->default_type = -1;
	return p;
}

int pprof__add_type(struct pprof *p, const char *type, const char *unit)
{
	int err;

	if (!p || !type || p->skeys.n || p->n_types >= PPROF_MAX_TYPES)
		return -EINVAL;
	if ((err = str_id(p, type, &p->types[p->n_types][0])) ||
	    (err = str_id(p, unit, &p->types[p->n_types][1])))
		return err;
	return p->n_types++;
}

int pprof__set_default_type(struct pprof *p, int type)
{
	if (!p || type < 0 || type >= p->n_types)
		return -EINVAL;
	p->default_type = type;
	return 0;
}

void pprof__set_time(struct pprof *p, int64_t time_ns, int64_t duration_ns)
{
	if (!p)
		return;
	p->time_ns = time_ns;
	p->duration_ns = duration_ns;
}

int pprof__set_period(struct pprof *p, const char *type, const char *unit, int64_t period)
{
	int err;

	if (!p)
		return -EINVAL;
	if ((err = str_id(p, type, &p->period_type[0])) ||
	    (err = str_id(p, unit, &p->period_type[1])))
		return err;
	p->period = period;
	return 0;
}

int pprof__set_main_binary(struct pprof *p, const char *file, const char *build_id)
{
	int err;

	if (!p || !file || !*file)
		return -EINVAL;
	if ((err = str_id(p, file, &p->main_file)) || (err = str_id(p, build_id, &p->main_build_id)))
		return err;
	return 0;
}

int pprof__add_comment(struct pprof *p, const char *text)
{
	uint32_t id;
	int err;

	if (!p || !text)
		return -EINVAL;
	if ((err = str_id(p, text, &id)))
		return err;
	if (p->n_comments == p->cap_comments) {
		size_t cap = p->cap_comments ? p->cap_comments * 2 : 4;
		uint32_t *c = realloc(p->comments, cap * sizeof(*c));

		if (!c)
			return -ENOMEM;
		p->comments = c;
		p->cap_comments = cap;
	}
	p->comments[p->n_comments++] = id;
	return 0;
}

/* Byte keys are built in a small growable buffer. */
struct key {
	uint8_t *b;
	size_t len, cap;
	int err;
};

static void key_put(struct key *k, const void *v, size_t n)
{
	if (k->err)
		return;
	if (k->cap - k->len < n) {
		size_t cap = k->cap ? k->cap : 256;
		uint8_t *nb;

		while (cap - k->len < n)
			cap *= 2;
		if (!(nb = realloc(k->b, cap))) {
			k->err = -ENOMEM;
			return;
		}
		k->b = nb;
		k->cap = cap;
	}
	memcpy(k->b + k->len, v, n);
	k->len += n;
}

static void key_u32(struct key *k, uint32_t v)
{
	key_put(k, &v, sizeof(v));
}

static int intern(struct strtab *t, struct key *k, uint32_t *id)
{
	if (k->err)
		return k->err;
	int err = strtab__intern(t, (const char *)k->b, k->len, id);
	return err < 0 ? err : 0;
}

/* The function (name, file): its id (index + 1). */
static int function_id(struct pprof *p, struct key *k, const struct pprof_frame *f,
		       uint32_t *fid)
{
	char hex[24];
	const char *name = f->function && *f->function ? f->function : NULL;
	uint32_t idx, n = p->fkeys.n;
	int err;

	if (!name) {
		snprintf(hex, sizeof(hex), "0x%" PRIx64, f->addr);
		name = hex;
	}
	k->len = 0;
	key_put(k, name, strlen(name) + 1);
	if (f->file)
		key_put(k, f->file, strlen(f->file));
	if ((err = intern(&p->fkeys, k, &idx)))
		return err;
	if (p->fkeys.n != n) {
		/* a new function: its name and file in the string table */
		if (idx >= p->cap_fn) {
			size_t cap = p->cap_fn ? p->cap_fn * 2 : 64;
			uint32_t *a = realloc(p->fn_name, cap * sizeof(*a));

			if (!a)
				return -ENOMEM;
			p->fn_name = a;
			if (!(a = realloc(p->fn_file, cap * sizeof(*a))))
				return -ENOMEM;
			p->fn_file = a;
			p->cap_fn = cap;
		}
		if ((err = str_id(p, name, &p->fn_name[idx])) ||
		    (err = str_id(p, f->file, &p->fn_file[idx])))
			return err;
	}
	*fid = idx + 1;
	return 0;
}

int pprof__add_sample(struct pprof *p, const struct pprof_frame *frames, size_t n,
		      const int64_t *values, const struct pprof_label *labels, size_t n_labels)
{
	struct key k = { 0 }, lk = { 0 };
	uint32_t locs[PPROF_MAX_FRAMES], nl = 0, idx, before;
	int err = 0;

	if (!p || !p->n_types || (n && !frames) || !values || (n_labels && !labels))
		return -EINVAL;
	/* locations, leaf first: a frame and the ones inlined before it */
	for (size_t i = 0; i < n && nl < PPROF_MAX_FRAMES && !err; ) {
		uint64_t addr = frames[i].addr;

		lk.len = 0;
		key_put(&lk, &addr, sizeof(addr));
		for (; i < n; i++) {
			uint32_t fid;

			if ((err = function_id(p, &k, &frames[i], &fid)))
				break;
			key_u32(&lk, fid);
			key_u32(&lk, frames[i].line);
			if (!frames[i].inlined || !addr || i + 1 == n || frames[i + 1].addr != addr) {
				i++;
				break;
			}
		}
		if (!err && !(err = intern(&p->lkeys, &lk, &idx)))
			locs[nl++] = idx + 1;
	}
	/* the sample: its locations and labels */
	k.len = 0;
	key_u32(&k, nl);
	for (uint32_t i = 0; i < nl; i++)
		key_u32(&k, locs[i]);
	for (size_t i = 0; i < n_labels && !err; i++) {
		uint32_t key, str = 0, unit = 0;

		if ((err = str_id(p, labels[i].key, &key)) ||
		    (labels[i].str && (err = str_id(p, labels[i].str, &str))) ||
		    (err = str_id(p, labels[i].unit, &unit)))
			break;
		key_u32(&k, key);
		key_u32(&k, labels[i].str ? str : UINT32_MAX);   /* string, or a number */
		key_put(&k, &labels[i].num, sizeof(labels[i].num));
		key_u32(&k, unit);
	}
	before = p->skeys.n;
	if (!err)
		err = intern(&p->skeys, &k, &idx);
	if (!err && p->skeys.n != before) {
		if (idx >= p->cap_vals) {
			size_t cap = p->cap_vals ? p->cap_vals * 2 : 256;
			int64_t *v = realloc(p->vals, cap * (size_t)p->n_types * sizeof(*v));

			if (!v) {
				err = -ENOMEM;
				goto out;
			}
			p->vals = v;
			p->cap_vals = cap;
		}
		memset(p->vals + (size_t)idx * p->n_types, 0, (size_t)p->n_types * sizeof(*p->vals));
	}
	if (!err)
		for (int t = 0; t < p->n_types; t++)
			p->vals[(size_t)idx * p->n_types + t] += values[t];
out:
	free(k.b);
	free(lk.b);
	return err;
}

int pprof__add_stack(struct pprof *p, const struct pprof_stack *s, const int64_t *values,
		     const struct pprof_label *labels, size_t n_labels)
{
	struct pprof_frame fr[PPROF_MAX_FRAMES];
	struct pprof_label lab[16];
	uint32_t idx[AS_STACK_MAX_FRAMES * 4], nu = 0, n = 0;
	int32_t own = -1;
	size_t nf = 0;
	const struct as_stack *st = s ? s->stack : NULL;

	if (!s || n_labels > 15)
		return -EINVAL;
	if (st && (uint32_t)st->n_kernel + st->n_user <= AS_STACK_MAX_FRAMES * 4)
		n = stack_fold_view(st, s->skip_kernel, s->flags, s->crates, idx, &own, &nu);
	/* leaf first: idx is outermost first */
	for (uint32_t i = n; i-- > 0 && nf < PPROF_MAX_FRAMES;) {
		const struct as_frame *f = &st->frames[idx[i]];
		bool user = i < nu;

		fr[nf++] = (struct pprof_frame){
			.function = f->sym, .file = user ? f->file : NULL,
			.line = user && f->file ? f->line : 0, .addr = f->addr,
			/* an inlined function shares its address with the next frame
			 * out (the trace names it first); a kernel frame never */
			.inlined = user && i > 0 && st->frames[idx[i - 1]].addr == f->addr &&
				   idx[i - 1] == idx[i] + 1,
		};
	}
	for (size_t r = s->n_roots; r-- > 0 && nf < PPROF_MAX_FRAMES;)
		fr[nf++] = (struct pprof_frame){ .function = s->roots[r] };
	if (n_labels)
		memcpy(lab, labels, n_labels * sizeof(*lab));
	if (own >= 0)
		lab[n_labels++] = (struct pprof_label){ .key = "program_frame",
							.str = st->frames[idx[own]].sym };
	return pprof__add_sample(p, fr, nf, values, lab, n_labels);
}

/* ------------------------------------------------------------------ encode */

static uint32_t get_u32(const uint8_t *b)
{
	uint32_t v;

	memcpy(&v, b, sizeof(v));
	return v;
}

int pprof__encode(struct pprof *p, uint8_t **buf, size_t *len)
{
	struct pb b = { 0 };
	size_t m, mm;

	*buf = NULL;
	*len = 0;
	if (!p)
		return -EINVAL;
	for (int t = 0; t < p->n_types; t++) {
		m = pb_open(&b, P_SAMPLE_TYPE);
		pb_uint(&b, VT_TYPE, p->types[t][0]);
		pb_uint(&b, VT_UNIT, p->types[t][1]);
		pb_close(&b, m);
	}
	for (uint32_t s = 0; s < p->skeys.n; s++) {
		const uint8_t *k = (const uint8_t *)strtab__get(&p->skeys, s);
		uint32_t nl = get_u32(k), klen = p->skeys.lens[s];
		const uint8_t *lab = k + 4 + 4 * (size_t)nl, *end = k + klen;

		m = pb_open(&b, P_SAMPLE);
		if (nl) {
			mm = pb_open(&b, S_LOCATION_ID);
			for (uint32_t i = 0; i < nl; i++)
				pb_raw_varint(&b, get_u32(k + 4 + 4 * (size_t)i));
			pb_close(&b, mm);
		}
		mm = pb_open(&b, S_VALUE);
		for (int t = 0; t < p->n_types; t++)
			pb_raw_varint(&b, (uint64_t)p->vals[(size_t)s * p->n_types + t]);
		pb_close(&b, mm);
		for (; lab + 20 <= end; lab += 20) {
			uint32_t str = get_u32(lab + 4), unit = get_u32(lab + 16);
			int64_t num;

			memcpy(&num, lab + 8, sizeof(num));
			mm = pb_open(&b, S_LABEL);
			pb_uint(&b, L_KEY, get_u32(lab));
			if (str != UINT32_MAX) {
				pb_uint(&b, L_STR, str);
			} else {
				pb_int(&b, L_NUM, num);
				if (unit)
					pb_uint(&b, L_NUM_UNIT, unit);
			}
			pb_close(&b, mm);
		}
		pb_close(&b, m);
	}
	if (p->main_file) {
		/* the program, its symbols resolved: nothing for pprof to
		 * symbolise (its load address is not known: no location
		 * refers to it) */
		m = pb_open(&b, P_MAPPING);
		pb_uint(&b, M_ID, 1);
		pb_uint(&b, M_FILENAME, p->main_file);
		if (p->main_build_id)
			pb_uint(&b, M_BUILD_ID, p->main_build_id);
		pb_uint(&b, M_HAS_FUNCTIONS, 1);
		pb_uint(&b, M_HAS_FILENAMES, 1);
		pb_uint(&b, M_HAS_LINE_NUMBERS, 1);
		pb_uint(&b, M_HAS_INLINE_FRAMES, 1);
		pb_close(&b, m);
	}
	for (uint32_t l = 0; l < p->lkeys.n; l++) {
		const uint8_t *k = (const uint8_t *)strtab__get(&p->lkeys, l);
		uint32_t klen = p->lkeys.lens[l];
		uint64_t addr;

		memcpy(&addr, k, sizeof(addr));
		m = pb_open(&b, P_LOCATION);
		pb_uint(&b, LOC_ID, (uint64_t)l + 1);
		if (addr)
			pb_uint(&b, LOC_ADDRESS, addr);
		for (const uint8_t *x = k + 8; x + 8 <= k + klen; x += 8) {
			mm = pb_open(&b, LOC_LINE);
			pb_uint(&b, LINE_FUNCTION_ID, get_u32(x));
			if (get_u32(x + 4))
				pb_uint(&b, LINE_LINE, get_u32(x + 4));
			pb_close(&b, mm);
		}
		pb_close(&b, m);
	}
	for (uint32_t f = 0; f < p->fkeys.n; f++) {
		m = pb_open(&b, P_FUNCTION);
		pb_uint(&b, F_ID, (uint64_t)f + 1);
		/* no system_name: pprof takes a function whose name equals its
		 * system name as not yet demangled, and strips a demangled
		 * Rust name's "<...>" ("<u32 as core::cmp::PartialOrd>::lt"
		 * would show as "::lt") */
		pb_uint(&b, F_NAME, p->fn_name[f]);
		if (p->fn_file[f])
			pb_uint(&b, F_FILENAME, p->fn_file[f]);
		pb_close(&b, m);
	}
	for (uint32_t i = 0; i < p->strs.n; i++)
		pb_bytes(&b, P_STRING_TABLE, strtab__get(&p->strs, i), p->strs.lens[i]);
	if (p->time_ns)
		pb_int(&b, P_TIME_NANOS, p->time_ns);
	if (p->duration_ns)
		pb_int(&b, P_DURATION_NANOS, p->duration_ns);
	if (p->period_type[0]) {
		m = pb_open(&b, P_PERIOD_TYPE);
		pb_uint(&b, VT_TYPE, p->period_type[0]);
		pb_uint(&b, VT_UNIT, p->period_type[1]);
		pb_close(&b, m);
	}
	if (p->period)
		pb_int(&b, P_PERIOD, p->period);
	if (p->n_comments) {
		m = pb_open(&b, P_COMMENT);
		for (size_t i = 0; i < p->n_comments; i++)
			pb_raw_varint(&b, p->comments[i]);
		pb_close(&b, m);
	}
	if (p->default_type >= 0)
		pb_uint(&b, P_DEFAULT_SAMPLE_TYPE, p->types[p->default_type][0]);
	if (b.err) {
		pb__free(&b);
		return b.err;
	}
	*buf = b.buf;
	*len = b.len;
	return 0;
}

/* gzip of in into a growing buffer. */
static int gzip(const uint8_t *in, size_t n, uint8_t **out, size_t *olen)
{
	z_stream z = { 0 };
	size_t cap = n / 4 + 1024;
	uint8_t *o = malloc(cap);
	int r;

	*out = NULL;
	*olen = 0;
	if (!o)
		return -ENOMEM;
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(o);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;   /* profiles stay far below 4 GiB */
	do {
		if (z.total_out == cap) {
			uint8_t *no = realloc(o, cap * 2);

			if (!no) {
				deflateEnd(&z);
				free(o);
				return -ENOMEM;
			}
			o = no;
			cap *= 2;
		}
		z.next_out = o + z.total_out;
		z.avail_out = (uInt)(cap - z.total_out);
		r = deflate(&z, Z_FINISH);
	} while (r == Z_OK || r == Z_BUF_ERROR);
	*olen = z.total_out;
	deflateEnd(&z);
	if (r != Z_STREAM_END) {
		free(o);
		*olen = 0;
		return -ENOMEM;
	}
	*out = o;
	return 0;
}

int pprof__write_mem(struct pprof *p, uint8_t **buf, size_t *len)
{
	uint8_t *raw;
	size_t n;
	int err;

	*buf = NULL;
	*len = 0;
	if ((err = pprof__encode(p, &raw, &n)))
		return err;
	err = gzip(raw, n, buf, len);
	free(raw);
	return err;
}

int pprof__write(struct pprof *p, FILE *out)
{
	uint8_t *buf;
	size_t len;
	int err;

	if (!out)
		return -EINVAL;
	if ((err = pprof__write_mem(p, &buf, &len)))
		return err;
	if (fwrite(buf, 1, len, out) != len || fflush(out))
		err = -EIO;
	free(buf);
	return err;
}

int pprof__each(const struct pprof *p, pprof_each_fn fn, void *ctx)
{
	uint32_t fids[PPROF_MAX_FRAMES * 2], lines[PPROF_MAX_FRAMES * 2];
	int err;

	if (!p || !fn)
		return -EINVAL;
	for (uint32_t s = 0; s < p->skeys.n; s++) {
		const uint8_t *k = (const uint8_t *)strtab__get(&p->skeys, s);
		uint32_t nl = get_u32(k);
		size_t n = 0;

		for (uint32_t i = 0; i < nl; i++) {
			uint32_t l = get_u32(k + 4 + 4 * (size_t)i) - 1;
			const uint8_t *lk = (const uint8_t *)strtab__get(&p->lkeys, l);
			uint32_t llen = p->lkeys.lens[l];

			for (const uint8_t *x = lk + 8; x + 8 <= lk + llen &&
			     n < PPROF_MAX_FRAMES * 2; x += 8, n++) {
				fids[n] = get_u32(x);
				lines[n] = get_u32(x + 4);
			}
		}
		struct pprof_sample_view v = { .functions = fids, .lines = lines, .n = n,
					       .values = p->vals + (size_t)s * p->n_types };
		if ((err = fn(ctx, &v)))
			return err;
	}
	return 0;
}

int pprof__types(const struct pprof *p)
{
	return p ? p->n_types : 0;
}

const char *pprof__type(const struct pprof *p, int t, const char **unit)
{
	if (!p || t < 0 || t >= p->n_types)
		return NULL;
	if (unit)
		*unit = strtab__get(&p->strs, p->types[t][1]);
	return strtab__get(&p->strs, p->types[t][0]);
}

const char *pprof__function(const struct pprof *p, uint32_t fid, const char **file)
{
	if (!p || !fid || fid > p->fkeys.n)
		return NULL;
	if (file)
		*file = p->fn_file[fid - 1] ? strtab__get(&p->strs, p->fn_file[fid - 1]) : NULL;
	return strtab__get(&p->strs, p->fn_name[fid - 1]);
}

size_t pprof__samples(const struct pprof *p)
{
	return p ? p->skeys.n : 0;
}

size_t pprof__locations(const struct pprof *p)
{
	return p ? p->lkeys.n : 0;
}

size_t pprof__functions(const struct pprof *p)
{
	return p ? p->fkeys.n : 0;
}

void pprof__free(struct pprof *p)
{
	if (!p)
		return;
	strtab__clear(&p->strs);
	strtab__clear(&p->fkeys);
	strtab__clear(&p->lkeys);
	strtab__clear(&p->skeys);
	free(p->fn_name);
	free(p->fn_file);
	free(p->vals);
	free(p->comments);
	free(p);
}
