/* Future names from callees (future_names.h). */
#include "probe/future_names.h"
#include "probe/callees.h"
#include "util/glob.h"
#include "util/u64map.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* How far the search goes from the copy: the copy itself (often a jump to
 * Harness::poll), the runtime's functions it calls, theirs. */
#define MAX_DEPTH 3
/* Functions examined per copy, callees kept per function. */
#define MAX_VISIT 64
#define MAX_CALLEES 48
/* A function's bytes decoded at most (a symbol of size 0: none). */
#define MAX_FN_BYTES (64 * 1024)

struct fn_callees {
	struct callee *c;
	int n;
};

struct callee_namer {
	const struct elf_image *img;
	struct u64map memo;       /* function address -> index into fns + 1 */
	struct fn_callees *fns;
	size_t n_fns, cap_fns;
};

struct callee_namer *callee_namer__new(const struct elf_image *img)
{
	struct callee_namer *cn = calloc(1, sizeof(*cn));

	if (!cn)
		return NULL;
	cn->img = img;
	return cn;
}

void callee_namer__free(struct callee_namer *cn)
{
	if (!cn)
		return;
	for (size_t i = 0; i < cn->n_fns; i++)
		free(cn->fns[i].c);
	free(cn->fns);
	u64map__clear(&cn->memo);
	free(cn);
}

/* The index of the first symbol at addr, or img->n_syms. */
static size_t first_sym(const struct elf_image *img, uint64_t addr)
{
	size_t lo = 0, hi = img->n_syms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (img->syms[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < img->n_syms && img->syms[lo].addr == addr ? lo : img->n_syms;
}

static bool ident_char(char c)
{
	return c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

char *future_carrier_arg(const char *name, const char *type, unsigned nth)
{
	size_t tl = strlen(type);

	for (const char *p = strstr(name, type); p; p = strstr(p + 1, type)) {
		const char *q = p + tl;
		/* "a::B<" itself, or v0's turbofish "a::B::<" */
		if ((p > name && ident_char(p[-1])) || !(q[0] == '<' || !strncmp(q, "::<", 3)))
			continue;
		q = strchr(q, '<') + 1;
		const char *start = q;
		unsigned k = 0;
		int depth = 0;
		for (; *q; q++) {
			if (*q == '<' || *q == '(' || *q == '[') {
				depth++;
				continue;
			} else if ((*q == '>' && q[-1] != '-') || *q == ')' || *q == ']') {
				if (depth-- > 0)
					continue;
			} else if (*q != ',' || depth) {
				continue;
			}
			/* the end of argument k: a ',' at depth 0, or the closing '>' */
			if (k == nth) {
				while (*start == ' ')
					start++;
				size_t n = (size_t)(q - start);
				while (n && start[n - 1] == ' ')
					n--;
				return n ? strndup(start, n) : NULL;
			}
			if (*q != ',')
				break;
			k++;
			start = q + 1;
		}
	}
	return NULL;
}

/* The callees of the function at addr (memoized); NULL when it cannot be
 * read (no symbol there with a size, or outside the executable code). */
static const struct fn_callees *callees_at(struct callee_namer *cn, uint64_t addr, int *err)
{
	const struct elf_image *img = cn->img;
	uint64_t v, size = 0;
	struct callee buf[MAX_CALLEES];

	if (u64map__get(&cn->memo, addr, &v))
		return v ? &cn->fns[v - 1] : NULL;
	for (size_t i = first_sym(img, addr); i < img->n_syms && img->syms[i].addr == addr; i++)
		if (img->syms[i].size > size)
			size = img->syms[i].size;
	if (size > MAX_FN_BYTES)
		size = MAX_FN_BYTES;
	uint8_t *code = size ? malloc(size) : NULL;
	int n = -1, got = code ? elf_image__read(img, addr, code, size) : -1;
	if (got > 0)
		n = callees_of(code, (size_t)got, addr, buf, MAX_CALLEES);
	free(code);
	if (n < 0)
		return u64map__set(&cn->memo, addr, 0) ? (*err = -ENOMEM, NULL) : NULL;
	if (cn->n_fns == cn->cap_fns) {
		size_t cap = cn->cap_fns ? cn->cap_fns * 2 : 64;
		struct fn_callees *f = realloc(cn->fns, cap * sizeof(*f));
		if (!f) {
			*err = -ENOMEM;
			return NULL;
		}
		cn->fns = f;
		cn->cap_fns = cap;
	}
	struct fn_callees *f = &cn->fns[cn->n_fns];
	f->n = n;
	f->c = malloc((n ? (size_t)n : 1) * sizeof(*f->c));
	if (!f->c || u64map__set(&cn->memo, addr, cn->n_fns + 1)) {
		free(f->c);
		*err = -ENOMEM;
		return NULL;
	}
	memcpy(f->c, buf, (size_t)n * sizeof(*buf));
	cn->n_fns++;
	return f;
}

static const char *const std_library[] = { "std::", "core::", "alloc::", NULL };

static bool has_prefix(const char *s, const char *const *lib)
{
	for (size_t i = 0; lib && lib[i]; i++)
		if (!strncmp(s, lib[i], strlen(lib[i])))
			return true;
	return false;
}

/* The program's own code: a path (not a C function) outside the runtime
 * and the standard library. */
static bool own_code(const char *name, const struct runtime_profile *prof)
{
	const char *s = name[0] == '<' ? name + 1 : name;

	return strstr(s, "::") && !has_prefix(s, prof->library) && !has_prefix(s, std_library);
}

/* What the names at one address say: the carrier argument all of them
 * agree on (NULL: none, or they disagree: folded identical functions), and
 * whether it is the program's own function (the one name there). */
static int names_at(const struct elf_image *img, const struct runtime_profile *prof,
		    uint64_t addr, char **carried, const char **own, bool *runtime, bool *endless)
{
	bool mixed = false;
	const char *first = NULL;

	*carried = NULL;
	*own = NULL;
	*runtime = false;
	for (size_t i = first_sym(img, addr); i < img->n_syms && img->syms[i].addr == addr; i++) {
		const char *name = img->syms[i].name;
		char *arg = NULL;
		for (size_t c = 0; !arg && c < prof->n_carriers; c++)
			arg = future_carrier_arg(name, prof->carriers[c].type, prof->carriers[c].arg);
		/* a legacy name of a generic function spells its parameters */
		if (arg && (!strcmp(arg, "T") || !strcmp(arg, "F") || !strcmp(arg, "S"))) {
			free(arg);
			arg = NULL;
		}
		if (arg && *carried && strcmp(arg, *carried))
			mixed = true;
		/* a worker's endless loop folded with another task's code: the
		 * copy runs it, whatever else it is named */
		if (arg && prof->endless_polls && glob_match(prof->endless_polls, arg))
			*endless = true;
		if (arg && !*carried)
			*carried = arg;
		else
			free(arg);
		if (!first)
			first = name;
		else if (strcmp(first, name))
			mixed = true;
		if (!own_code(name, prof))
			*runtime = true;
	}
	if (mixed) {
		free(*carried);
		*carried = NULL;
	}
	if (first && !mixed && !*runtime)
		*own = first;
	return 0;
}

struct candidate {
	char *name;
	unsigned depth, sites;
	bool tie;
};

/* Keeps the shallowest candidate, the one with more call sites at equal
 * depth; the same name again adds its sites; a different one with as many
 * at the same depth is a tie. name is taken. */
static void consider(struct candidate *c, char *name, unsigned depth, unsigned sites)
{
	if (c->name && !strcmp(c->name, name)) {
		if (depth == c->depth)
			c->sites += sites;
		free(name);
		return;
	}
	if (!c->name || depth < c->depth || (depth == c->depth && sites > c->sites)) {
		free(c->name);
		*c = (struct candidate){ .name = name, .depth = depth, .sites = sites };
		return;
	}
	if (depth == c->depth && sites == c->sites)
		c->tie = true;
	free(name);
}

int callee_namer__future(struct callee_namer *cn, const struct runtime_profile *prof,
			 uint64_t addr, char **out, enum callee_found *how, bool *endless)
{
	uint64_t queue[MAX_VISIT];
	unsigned depth[MAX_VISIT];
	size_t head = 0, tail = 0;
	struct candidate carrier = { 0 }, own = { 0 };
	int err = 0;

	*out = NULL;
	*how = CALLEE_NONE;
	*endless = false;
	queue[tail] = addr;
	depth[tail++] = 0;
	while (head < tail && !err) {
		uint64_t f = queue[head];
		unsigned d = depth[head++];
		const struct fn_callees *fc = callees_at(cn, f, &err);
		if (!fc)
			continue;
		for (int k = 0; k < fc->n; k++) {
			const struct callee *c = &fc->c[k];
			char *carried;
			const char *mine;
			bool runtime, seen = false;
			for (size_t j = 0; j < tail && !seen; j++)
				seen = queue[j] == c->addr;
			if (seen)
				continue;
			names_at(cn->img, prof, c->addr, &carried, &mine, &runtime, endless);
			if (carried)
				consider(&carrier, carried, d + 1, c->sites);
			if (mine) {
				char *dup = strdup(mine);
				if (!dup) {
					err = -ENOMEM;
					break;
				}
				consider(&own, dup, d + 1, c->sites);
			}
			/* into the runtime's functions only: the program's code
			 * calls other futures */
			if (runtime && !mine && d + 1 < MAX_DEPTH && tail < MAX_VISIT) {
				queue[tail] = c->addr;
				depth[tail++] = d + 1;
			}
		}
	}
	if (!err && carrier.name && !carrier.tie) {
		*out = carrier.name;
		carrier.name = NULL;
		*how = CALLEE_CARRIER;
	} else if (!err && own.name && !own.tie) {
		*out = own.name;
		own.name = NULL;
		*how = CALLEE_FUNCTION;
	}
	free(carrier.name);
	free(own.name);
	return err;
}
