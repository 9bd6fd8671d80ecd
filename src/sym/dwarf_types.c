/* Rust types from DWARF through libdw. Qualified names are built from the
 * namespace and type scopes enclosing a DIE (libdw has no parent links:
 * dwarf_getscopes_die walks from the unit's root, so names are cached). */
#include "sym/dwarf_types.h"

#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sym/dwarf_memo.h"
#include "util/u64map.h"

#define MAX_NAME 4096     /* longer qualified names are not looked up */
#define MAX_SCOPE_DEPTH 64

struct dwarf_types {
	int fd;
	Dwarf *dw;
	struct u64map names;  /* DIE offset + 1 -> char * (qualified name) */
	struct u64map vtables; /* vtable vaddr -> containing type's DIE offset */
	struct u64map bodies;  /* hash of an async body's qualified name -> its DIE offset + 1 */
	bool namespaces_read;  /* vtables and bodies read (one pass over the units) */
	struct u64map first_lines; /* hash of (file, lo, hi) -> line + 1 */
	struct dwarf_memo *memo;   /* names and finds of earlier runs (NULL: none) */
	struct cu_scopes *cus;     /* the scope index of each unit a name was asked in */
	size_t n_cus;
};

/* The namespaces and types of a unit that have children, in the order of
 * their offsets (a pre-order walk): a qualified name is then built from a
 * DIE's enclosing scopes by a binary search instead of a walk of the unit
 * from its root (dwarf_getscopes_die), which made each new name cost a
 * pass over a unit of up to a million DIEs. */
struct scope_ent {
	Dwarf_Off start, end;      /* the DIE and past its last descendant */
	int32_t parent;            /* index of the enclosing one, -1 none */
};

struct cu_scopes {
	Dwarf_Off cu;
	struct scope_ent *v;
	size_t n, cap;
	bool failed;
};

static struct dwarf_types *open_on(int fd);

struct dwarf_types *dwarf_types__open(const char *path)
{
	return open_on(open(path, O_RDONLY | O_CLOEXEC));
}

struct dwarf_types *dwarf_types__open_fd(int fd)
{
	/* a second descriptor of the same open file: the file is not opened
	 * again, and the session keeps its own to close */
	return open_on(fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 0));
}

/* Takes fd (an open ELF file, or -1 with errno set), closed on failure. */
static struct dwarf_types *open_on(int fd)
{
	struct dwarf_types *dt;
	int err;

	if (fd < 0)
		return NULL;
	dt = calloc(1, sizeof(*dt));
	if (!dt) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	dt->fd = fd;
	if (dt->fd < 0) {
		err = errno;
		free(dt);
		errno = err;
		return NULL;
	}
	dt->dw = dwarf_begin(dt->fd, DWARF_C_READ);
	if (!dt->dw) {
		close(dt->fd);
		free(dt);
		errno = ENODATA;
		return NULL;
	}
	dt->memo = dwarf_memo__open(dwarf_getelf(dt->dw), dt->fd, "types");   /* NULL: none */
	return dt;
}

void dwarf_types__free(struct dwarf_types *dt)
{
	if (!dt)
		return;
	dwarf_memo__save(dt->memo);   /* a cache: a failed write costs the next run time */
	dwarf_memo__free(dt->memo);
	for (size_t i = 0; i < dt->names.cap; i++)
		if (dt->names.keys[i] && dt->names.keys[i] != UINT64_MAX)
			free((char *)(uintptr_t)dt->names.vals[i]);
	u64map__clear(&dt->names);
	for (size_t i = 0; i < dt->n_cus; i++)
		free(dt->cus[i].v);
	free(dt->cus);
	u64map__clear(&dt->vtables);
	u64map__clear(&dt->bodies);
	u64map__clear(&dt->first_lines);
	if (dt->dw)
		dwarf_end(dt->dw);
	if (dt->fd >= 0)
		close(dt->fd);
	free(dt);
}

int dwarf_types__fd(const struct dwarf_types *dt)
{
	return dt ? dt->fd : -1;
}

Dwarf *dwarf_types__dwarf(const struct dwarf_types *dt)
{
	return dt->dw;
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;

	return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
}

static bool is_type_tag(int tag)
{
	return tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
	       tag == DW_TAG_enumeration_type;
}

static bool is_declaration(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	bool flag = false;

	return dwarf_attr(die, DW_AT_declaration, &attr) && dwarf_formflag(&attr, &flag) == 0 &&
	       flag;
}

struct find_ctx {
	const char *const *names;
	size_t n;
	Dwarf_Die *dies;
	int *found;
	int nfound;
	bool norm;            /* compare names without their generic arguments */
	char path[MAX_NAME];
};

/* Does some wanted, not yet found name start with path followed by "::"? */
static bool on_wanted_path(const struct find_ctx *fc, size_t len)
{
	for (size_t i = 0; i < fc->n; i++)
		if (!fc->found[i] && !strncmp(fc->names[i], fc->path, len) &&
		    !strncmp(fc->names[i] + len, "::", 2))
			return true;
	return false;
}

static void find_below(struct find_ctx *fc, Dwarf_Die *parent, size_t len, int depth)
{
	Dwarf_Die child;

	if (depth > MAX_SCOPE_DEPTH || dwarf_child(parent, &child))
		return;
	do {
		int tag = dwarf_tag(&child);
		if (tag != DW_TAG_namespace && !is_type_tag(tag))
			continue;
		const char *name = die_name(&child);
		size_t nl = name ? strlen(name) : 0;
		if (fc->norm && nl && name[0] != '<' && strchr(name, '<'))
			nl = (size_t)(strchr(name, '<') - name);   /* "OwnedTasks<S>" */
		if (!nl || len + 2 + nl >= sizeof(fc->path))
			continue;
		size_t at = len;
		if (len) {
			memcpy(fc->path + len, "::", 2);
			at += 2;
		}
		memcpy(fc->path + at, name, nl);
		fc->path[at + nl] = '\0';
		if (is_type_tag(tag) && !is_declaration(&child)) {
			for (size_t i = 0; i < fc->n; i++) {
				if (!fc->found[i] && !strcmp(fc->names[i], fc->path)) {
					fc->found[i] = 1;
					fc->dies[i] = child;
					fc->nfound++;
				}
			}
		}
		if (on_wanted_path(fc, at + nl))
			find_below(fc, &child, at + nl, depth + 1);
		fc->path[len] = '\0';
		if ((size_t)fc->nfound == fc->n)
			return;
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int find_pass(struct dwarf_types *dt, const char *const *names, size_t n, Dwarf_Die *dies,
		     int *found, bool norm)
{
	struct find_ctx *fc = calloc(1, sizeof(*fc));
	Dwarf_Off off = 0, next;
	size_t hsize;
	int ret;

	if (!fc)
		return -ENOMEM;
	fc->names = names;
	fc->norm = norm;
	fc->n = n;
	fc->dies = dies;
	fc->found = found;
	for (size_t i = 0; i < n; i++)
		found[i] = 0;
	while (n && dwarf_nextcu(dt->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		if (dwarf_offdie(dt->dw, off + hsize, &cu)) {
			fc->path[0] = '\0';
			find_below(fc, &cu, 0, 0);
		}
		if ((size_t)fc->nfound == n)
			break;
		off = next;
	}
	ret = fc->nfound;
	free(fc);
	return ret;
}

/* The memo's key of a find: "f:" or "F:" (norm) and the name. */
static char *find_key(const char *name, bool norm)
{
	char *key;

	return asprintf(&key, "%c:%s", norm ? 'F' : 'f', name) < 0 ? NULL : key;
}

/* find_pass() for the names the memo does not know, the rest from it (the
 * first defining DIE of a name does not depend on the others wanted). */
static int find(struct dwarf_types *dt, const char *const *names, size_t n, Dwarf_Die *dies,
		int *found, bool norm)
{
	const char **rest = calloc(n ? n : 1, sizeof(*rest));
	size_t *at = calloc(n ? n : 1, sizeof(*at));
	Dwarf_Die *rdies = calloc(n ? n : 1, sizeof(*rdies));
	int *rfound = calloc(n ? n : 1, sizeof(*rfound));
	size_t nr = 0;
	int ret = -ENOMEM, got = 0;

	if (!rest || !at || !rdies || !rfound)
		goto out;
	for (size_t i = 0; i < n; i++) {
		char *key = find_key(names[i], norm), *end;
		const char *val;
		unsigned long long off;
		found[i] = 0;
		if (key && dwarf_memo__get(dt->memo, key, &val)) {
			free(key);
			if (!strcmp(val, "-"))
				continue;   /* not in the binary */
			errno = 0;
			off = strtoull(val, &end, 16);
			if (!errno && !*end && dwarf_offdie(dt->dw, off, &dies[i])) {
				found[i] = 1;
				got++;
				continue;
			}
		} else {
			free(key);
		}
		at[nr] = i;
		rest[nr++] = names[i];
	}
	ret = nr ? find_pass(dt, rest, nr, rdies, rfound, norm) : 0;
	if (ret < 0)
		goto out;
	for (size_t k = 0; k < nr; k++) {
		char *key = find_key(rest[k], norm), val[32];
		size_t i = at[k];
		if (rfound[k]) {
			dies[i] = rdies[k];
			found[i] = 1;
			snprintf(val, sizeof(val), "%llx", (unsigned long long)dwarf_dieoffset(&rdies[k]));
		} else {
			snprintf(val, sizeof(val), "-");
		}
		if (key)
			dwarf_memo__put(dt->memo, key, val);
		free(key);
	}
	ret += got;
out:
	free(rest);
	free(at);
	free(rdies);
	free(rfound);
	return ret;
}

int dwarf_types__find(struct dwarf_types *dt, const char *const *names, size_t n,
		      Dwarf_Die *dies, int *found)
{
	return find(dt, names, n, dies, found, false);
}

int dwarf_types__find_norm(struct dwarf_types *dt, const char *const *names, size_t n,
			   Dwarf_Die *dies, int *found)
{
	return find(dt, names, n, dies, found, true);
}

static uint64_t hash_name(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h | 1;
}

/* Below parent (namespaces only, path its qualified name, len bytes):
 * the "{vtable}" variables into dt->vtables, and the bodies of async fns
 * and blocks (subprograms "{async_fn#N}", "{async_block#N}") into
 * dt->bodies by the hash of their qualified name. */
static void namespaces_below(struct dwarf_types *dt, Dwarf_Die *parent, char *path, size_t len,
			     int depth)
{
	Dwarf_Die child, type, ct;
	Dwarf_Attribute attr;
	Dwarf_Op *ops;
	size_t nops;

	if (depth > MAX_SCOPE_DEPTH || dwarf_child(parent, &child))
		return;
	do {
		int tag = dwarf_tag(&child);
		const char *name = die_name(&child);
		size_t nl = name ? strlen(name) : 0;
		if (tag == DW_TAG_namespace) {
			if (name && len + nl + 3 < MAX_NAME) {
				size_t l2 = len;
				if (l2) {
					memcpy(path + l2, "::", 2);
					l2 += 2;
				}
				memcpy(path + l2, name, nl + 1);
				namespaces_below(dt, &child, path, l2 + nl, depth + 1);
				path[len] = '\0';
			}
			continue;
		}
		if (tag == DW_TAG_subprogram && nl > 8 && !strncmp(name, "{async_", 7) &&
		    len + nl + 3 < MAX_NAME) {
			char full[MAX_NAME];
			int fl = snprintf(full, sizeof(full), "%s%s%s", path, len ? "::" : "", name);
			uint64_t h = hash_name(full, (size_t)fl), v;
			if (!u64map__get(&dt->bodies, h, &v))
				u64map__set(&dt->bodies, h, dwarf_dieoffset(&child) + 1);
			continue;
		}
		if (tag != DW_TAG_variable)
			continue;
		if (nl < 10 || strcmp(name + nl - 10, "::{vtable}"))
			continue;
		if (!dwarf_attr(&child, DW_AT_location, &attr) ||
		    dwarf_getlocation(&attr, &ops, &nops) || nops != 1 || ops[0].atom != DW_OP_addr)
			continue;
		if (!dwarf_formref_die(dwarf_attr(&child, DW_AT_type, &attr), &type) ||
		    !dwarf_formref_die(dwarf_attr(&type, DW_AT_containing_type, &attr), &ct))
			continue;
		u64map__set(&dt->vtables, ops[0].number, dwarf_dieoffset(&ct) + 1);
	} while (dwarf_siblingof(&child, &child) == 0);
}

/* The pass over every unit's namespaces, once a run. */
static void read_namespaces(struct dwarf_types *dt)
{
	Dwarf_Off cu_off = 0, next;
	size_t hsize;
	char path[MAX_NAME];

	if (dt->namespaces_read)
		return;
	dt->namespaces_read = true;
	while (dwarf_nextcu(dt->dw, cu_off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		path[0] = '\0';
		if (dwarf_offdie(dt->dw, cu_off + hsize, &cu))
			namespaces_below(dt, &cu, path, 0, 0);
		cu_off = next;
	}
}

int dwarf_types__vtable_type(struct dwarf_types *dt, uint64_t vaddr, Dwarf_Die *out)
{
	uint64_t off;
	char key[40];
	int r;

	if (!vaddr)
		return -ENOENT;
	/* remembered from an earlier run: no pass over the units */
	snprintf(key, sizeof(key), "vt:%llx", (unsigned long long)vaddr);
	if ((r = dwarf_types__recall(dt, key, out)) >= 0)
		return r ? 0 : -ENOENT;
	read_namespaces(dt);
	if (!u64map__get(&dt->vtables, vaddr, &off) || !dwarf_offdie(dt->dw, off - 1, out)) {
		dwarf_types__remember(dt, key, NULL);
		return -ENOENT;
	}
	dwarf_types__remember(dt, key, out);
	return 0;
}

int dwarf_types__async_body(struct dwarf_types *dt, Dwarf_Die *sm, Dwarf_Die *out)
{
	const char *name = dwarf_types__name(dt, sm), *env;
	char body[MAX_NAME], *key = NULL;
	uint64_t off;
	size_t n;
	int r;

	/* "a::f::{async_fn_env#0}<u32>" -> "a::f::{async_fn#0}" */
	if (!name || !(env = strstr(name, "_env#")) || strlen(name) >= sizeof(body))
		return -ENOENT;
	n = (size_t)(env - name);
	memcpy(body, name, n);
	snprintf(body + n, sizeof(body) - n, "%s", env + 4);
	body[n + strcspn(body + n, "<")] = '\0';
	if (asprintf(&key, "ab:%s", body) < 0)
		return -ENOMEM;
	if ((r = dwarf_types__recall(dt, key, out)) >= 0) {
		free(key);
		return r ? 0 : -ENOENT;
	}
	read_namespaces(dt);
	if (!u64map__get(&dt->bodies, hash_name(body, strlen(body)), &off) ||
	    !dwarf_offdie(dt->dw, off - 1, out)) {
		dwarf_types__remember(dt, key, NULL);
		free(key);
		return -ENOENT;
	}
	dwarf_types__remember(dt, key, out);
	free(key);
	return 0;
}

unsigned dwarf_types__first_line(struct dwarf_types *dt, const char *file, unsigned lo,
				 unsigned hi)
{
	uint64_t key = 1469598103934665603ull, val;
	Dwarf_Off off = 0, next;
	size_t hsize;
	unsigned best = 0;

	if (!file || hi <= lo + 1)
		return 0;
	for (const char *p = file; *p; p++)
		key = (key ^ (uint8_t)*p) * 1099511628211ull;
	key ^= (uint64_t)lo << 40 ^ (uint64_t)hi << 8;
	key |= 1;
	if (u64map__get(&dt->first_lines, key, &val))
		return (unsigned)(val - 1);
	while (dwarf_nextcu(dt->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Lines *lines;
		size_t n;

		if (dwarf_offdie(dt->dw, off + hsize, &cu) && !dwarf_getsrclines(&cu, &lines, &n)) {
			for (size_t i = 0; i < n; i++) {
				Dwarf_Line *l = dwarf_onesrcline(lines, i);
				int ln;
				const char *src;

				if (!l || dwarf_lineno(l, &ln) || ln <= (int)lo || ln >= (int)hi ||
				    (best && (unsigned)ln >= best))
					continue;
				src = dwarf_linesrc(l, NULL, NULL);
				if (src && !strcmp(src, file))
					best = (unsigned)ln;
			}
		}
		off = next;
	}
	u64map__set(&dt->first_lines, key, (uint64_t)best + 1);
	return best;
}

static int index_below(struct cu_scopes *cs, Dwarf_Die *parent, int32_t up, int depth,
		       Dwarf_Off *last)
{
	Dwarf_Die c;

	if (depth > MAX_SCOPE_DEPTH * 4 || dwarf_child(parent, &c))
		return 0;
	do {
		Dwarf_Off off = dwarf_dieoffset(&c);
		int tag = dwarf_tag(&c);
		if (off > *last)
			*last = off;
		if (!dwarf_haschildren(&c))
			continue;
		if (tag != DW_TAG_namespace && !is_type_tag(tag)) {
			if (index_below(cs, &c, up, depth + 1, last))
				return -ENOMEM;
			continue;
		}
		if (cs->n == cs->cap) {
			size_t nc = cs->cap ? cs->cap * 2 : 1024;
			struct scope_ent *v = realloc(cs->v, nc * sizeof(*v));
			if (!v)
				return -ENOMEM;
			cs->v = v;
			cs->cap = nc;
		}
		int32_t me = (int32_t)cs->n++;
		cs->v[me] = (struct scope_ent){ .start = off, .parent = up };
		if (index_below(cs, &c, me, depth + 1, last))
			return -ENOMEM;
		cs->v[me].end = *last + 1;
	} while (dwarf_siblingof(&c, &c) == 0);
	return 0;
}

/* The unit's scope index (made now when not yet), or NULL. */
static struct cu_scopes *unit_scopes(struct dwarf_types *dt, Dwarf_Die *die)
{
	Dwarf_Die cu;
	Dwarf_Off off, last = 0;
	struct cu_scopes *cs;

	if (!dwarf_diecu(die, &cu, NULL, NULL))
		return NULL;
	off = dwarf_dieoffset(&cu);
	for (size_t i = 0; i < dt->n_cus; i++)
		if (dt->cus[i].cu == off)
			return dt->cus[i].failed ? NULL : &dt->cus[i];
	cs = realloc(dt->cus, (dt->n_cus + 1) * sizeof(*cs));
	if (!cs)
		return NULL;
	dt->cus = cs;
	cs = &cs[dt->n_cus++];
	memset(cs, 0, sizeof(*cs));
	cs->cu = off;
	if (index_below(cs, &cu, -1, 0, &last)) {
		free(cs->v);
		cs->v = NULL;
		cs->n = 0;
		cs->failed = true;
		return NULL;
	}
	return cs;
}

/* The qualified name of die from its unit's scope index: malloc'd, or NULL
 * with errno ENOENT (no index: the caller walks the scopes itself) or
 * ENOMEM. */
static char *scoped_name(struct dwarf_types *dt, Dwarf_Die *die)
{
	struct cu_scopes *cs = unit_scopes(dt, die);
	Dwarf_Off x = dwarf_dieoffset(die);
	int32_t chain[MAX_SCOPE_DEPTH * 4], n = 0, at;
	size_t lo = 0, hi, len = 0;
	char *out;

	if (!cs) {
		errno = ENOENT;
		return NULL;
	}
	/* the last scope starting at or before x, then out to one holding it */
	hi = cs->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (cs->v[mid].start <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	at = lo ? (int32_t)lo - 1 : -1;
	if (at >= 0 && cs->v[at].start == x)
		at = cs->v[at].parent;   /* die is a scope itself: its own name last */
	while (at >= 0 && !(cs->v[at].start < x && x < cs->v[at].end))
		at = cs->v[at].parent;
	for (; at >= 0 && n < (int32_t)(sizeof(chain) / sizeof(chain[0])); at = cs->v[at].parent)
		chain[n++] = at;
	if (!(out = strdup("")))
		return NULL;
	for (int32_t i = n; i >= 0; i--) {
		Dwarf_Die d;
		const char *s;
		if (i == 0)
			d = *die;
		else if (!dwarf_offdie(dt->dw, cs->v[chain[i - 1]].start, &d))
			continue;
		if (!(s = die_name(&d)))
			continue;
		size_t sl = strlen(s);
		char *p = realloc(out, len + sl + 3);
		if (!p) {
			free(out);
			errno = ENOMEM;
			return NULL;
		}
		out = p;
		if (len) {
			memcpy(out + len, "::", 2);
			len += 2;
		}
		memcpy(out + len, s, sl + 1);
		len += sl;
	}
	return out;
}

const char *dwarf_types__name(struct dwarf_types *dt, Dwarf_Die *type)
{
	uint64_t key = dwarf_dieoffset(type) + 1, val;
	Dwarf_Die *scopes = NULL;
	char *out = NULL;
	size_t len = 0;
	int n;
	char mkey[32];
	const char *known = NULL;

	if (u64map__get(&dt->names, key, &val))
		return (const char *)(uintptr_t)val;
	if (!die_name(type))
		return NULL;
	snprintf(mkey, sizeof(mkey), "n:%llx", (unsigned long long)(key - 1));
	if (dwarf_memo__get(dt->memo, mkey, &known)) {
		n = 0;
		out = strdup(known);
	} else if ((out = scoped_name(dt, type)) || errno != ENOENT) {
		n = 0;
	} else if ((n = dwarf_getscopes_die(type, &scopes)) <= 0) {
		out = strdup(die_name(type));
	} else {
		/* scopes[0] is the DIE itself, scopes[n - 1] its unit */
		for (int i = n - 1; i >= 0; i--) {
			int tag = dwarf_tag(&scopes[i]);
			const char *s = die_name(&scopes[i]);
			if (i && tag != DW_TAG_namespace && !is_type_tag(tag))
				continue;
			if (!s)
				continue;
			size_t sl = strlen(s);
			char *p = realloc(out, len + sl + 3);
			if (!p) {
				free(out);
				out = NULL;
				break;
			}
			out = p;
			if (len) {
				memcpy(out + len, "::", 2);
				len += 2;
			}
			memcpy(out + len, s, sl + 1);
			len += sl;
		}
	}
	free(scopes);
	if (!out)
		return NULL;
	if (!known)
		dwarf_memo__put(dt->memo, mkey, out);
	if (u64map__set(&dt->names, key, (uint64_t)(uintptr_t)out)) {
		free(out);
		return NULL;
	}
	return out;
}

int dwarf_types__recall(struct dwarf_types *dt, const char *key, Dwarf_Die *out)
{
	char *k, *end;
	const char *val;
	unsigned long long off;
	bool hit;

	if (asprintf(&k, "u:%s", key) < 0)
		return -ENOENT;
	hit = dwarf_memo__get(dt->memo, k, &val);
	free(k);
	if (!hit)
		return -ENOENT;
	if (!strcmp(val, "-"))
		return 0;
	errno = 0;
	off = strtoull(val, &end, 16);
	if (errno || *end || !dwarf_offdie(dt->dw, off, out))
		return -ENOENT;
	return 1;
}

void dwarf_types__remember(struct dwarf_types *dt, const char *key, Dwarf_Die *die)
{
	char *k, val[32];

	if (asprintf(&k, "u:%s", key) < 0)
		return;
	if (die)
		snprintf(val, sizeof(val), "%llx", (unsigned long long)dwarf_dieoffset(die));
	else
		snprintf(val, sizeof(val), "-");
	dwarf_memo__put(dt->memo, k, val);
	free(k);
}

int dwarf_types__memo_get(struct dwarf_types *dt, const char *key, const char **val)
{
	char *k;
	bool hit;

	if (asprintf(&k, "m:%s", key) < 0)
		return 0;
	hit = dwarf_memo__get(dt->memo, k, val);
	free(k);
	return hit;
}

void dwarf_types__memo_put(struct dwarf_types *dt, const char *key, const char *val)
{
	char *k;

	if (asprintf(&k, "m:%s", key) < 0)
		return;
	dwarf_memo__put(dt->memo, k, val);
	free(k);
}

const char *dwarf_types__comp_dir(Dwarf_Die *die)
{
	Dwarf_Die cu;
	Dwarf_Attribute attr;

	if (!dwarf_diecu(die, &cu, NULL, NULL))
		return NULL;
	return dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &attr));
}

/* Follows typedefs and const/volatile to the underlying type. */
static bool peel(Dwarf_Die *type, Dwarf_Die *out)
{
	return dwarf_peel_type(type, out) == 0;
}

int64_t dwt_byte_size(Dwarf_Die *type)
{
	Dwarf_Die t;
	Dwarf_Attribute attr;
	Dwarf_Word size;

	if (!peel(type, &t))
		return -1;
	if (dwarf_attr(&t, DW_AT_byte_size, &attr) && dwarf_formudata(&attr, &size) == 0)
		return (int64_t)size;
	if (dwarf_tag(&t) == DW_TAG_pointer_type || dwarf_tag(&t) == DW_TAG_reference_type)
		return 8;
	return -1;
}

static int member_offset(Dwarf_Die *m, uint64_t *off)
{
	Dwarf_Attribute attr;
	Dwarf_Word v;

	if (!dwarf_attr(m, DW_AT_data_member_location, &attr)) {
		*off = 0;   /* union members and the first member may omit it */
		return 0;
	}
	if (dwarf_formudata(&attr, &v))
		return -EPROTO;   /* a location expression: not emitted by rustc */
	*off = v;
	return 0;
}

static bool member_type(Dwarf_Die *m, Dwarf_Die *type)
{
	Dwarf_Attribute attr;
	Dwarf_Die raw;

	if (!dwarf_formref_die(dwarf_attr(m, DW_AT_type, &attr), &raw))
		return false;
	return peel(&raw, type);
}

int dwt_member(Dwarf_Die *st, const char *name, Dwarf_Die *member, uint64_t *off,
	       Dwarf_Die *type)
{
	Dwarf_Die t, child;

	if (!peel(st, &t) || dwarf_child(&t, &child))
		return -ENOENT;
	do {
		const char *n;
		if (dwarf_tag(&child) != DW_TAG_member || !(n = die_name(&child)) || strcmp(n, name))
			continue;
		if (member_offset(&child, off))
			return -ENOENT;
		if (type && !member_type(&child, type))
			return -ENOENT;
		if (member)
			*member = child;
		return 0;
	} while (dwarf_siblingof(&child, &child) == 0);
	return -ENOENT;
}

static int member_deep(Dwarf_Die *st, const char *name, uint64_t *off, Dwarf_Die *type,
		       int depth)
{
	Dwarf_Die child;

	if (depth > 8 || dwarf_child(st, &child))
		return -ENOENT;
	if (dwt_member(st, name, NULL, off, type) == 0)
		return 0;
	do {
		Dwarf_Die mt;
		uint64_t base, below;
		if (dwarf_tag(&child) != DW_TAG_member || member_offset(&child, &base) ||
		    !member_type(&child, &mt) || dwarf_tag(&mt) != DW_TAG_structure_type)
			continue;
		if (member_deep(&mt, name, &below, type, depth + 1) == 0) {
			*off = base + below;
			return 0;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return -ENOENT;
}

int dwt_member_deep(Dwarf_Die *st, const char *name, uint64_t *off, Dwarf_Die *type)
{
	Dwarf_Die t;

	if (!peel(st, &t))
		return -ENOENT;
	return member_deep(&t, name, off, type, 0);
}

int dwt_only_member(Dwarf_Die *st, uint64_t *off, Dwarf_Die *type)
{
	Dwarf_Die t, child, only;
	int n = 0;

	if (!peel(st, &t) || dwarf_child(&t, &child))
		return -ENOENT;
	do {
		if (dwarf_tag(&child) == DW_TAG_member && n++ == 0)
			only = child;
		else if (dwarf_tag(&child) == DW_TAG_variant_part)
			return -ENOENT;
	} while (dwarf_siblingof(&child, &child) == 0);
	if (n != 1 || member_offset(&only, off) || !member_type(&only, type))
		return -ENOENT;
	return 0;
}

static bool variant_part(Dwarf_Die *st, Dwarf_Die *vp)
{
	Dwarf_Die t;

	if (!peel(st, &t) || dwarf_child(&t, vp))
		return false;
	do {
		if (dwarf_tag(vp) == DW_TAG_variant_part)
			return true;
	} while (dwarf_siblingof(vp, vp) == 0);
	return false;
}

int dwt_has_variants(Dwarf_Die *st)
{
	Dwarf_Die vp;

	return variant_part(st, &vp);
}

/* The variant's member (first DW_TAG_member child) into v. */
static int take_variant(Dwarf_Die *variant, struct dwt_variant *v)
{
	Dwarf_Die m;

	if (dwarf_child(variant, &m))
		return -ENOENT;
	do {
		if (dwarf_tag(&m) != DW_TAG_member)
			continue;
		if (member_offset(&m, &v->offset) || !member_type(&m, &v->type))
			return -EPROTO;
		v->member = m;
		return 0;
	} while (dwarf_siblingof(&m, &m) == 0);
	return -ENOENT;
}

int dwt_read_variant(Dwarf_Die *st, uint64_t addr, mem_read_fn read, void *ctx,
		     struct dwt_variant *v)
{
	Dwarf_Die vp, discr, dtype, child, fallback;
	Dwarf_Attribute attr;
	uint64_t doff, value = 0, mask;
	int64_t size;
	bool have_fallback = false, unsupported = false;
	int nvariants = 0, err;

	memset(v, 0, sizeof(*v));
	if (!variant_part(st, &vp))
		return -ENOENT;
	if (!dwarf_formref_die(dwarf_attr(&vp, DW_AT_discr, &attr), &discr)) {
		/* no discriminant: a single-variant enum */
		if (dwarf_child(&vp, &child))
			return -ENOENT;
		do {
			if (dwarf_tag(&child) == DW_TAG_variant && nvariants++ == 0)
				fallback = child;
		} while (dwarf_siblingof(&child, &child) == 0);
		return nvariants == 1 ? take_variant(&fallback, v) : -EPROTO;
	}
	if (member_offset(&discr, &doff) || !member_type(&discr, &dtype))
		return -EPROTO;
	size = dwt_byte_size(&dtype);
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return -EPROTO;
	err = read(ctx, addr + doff, &value, (size_t)size);   /* x86-64: little endian */
	if (err)
		return err;
	mask = size == 8 ? UINT64_MAX : (UINT64_C(1) << (size * 8)) - 1;
	v->discr = value;
	v->discr_addr = addr + doff;
	v->discr_size = (unsigned)size;
	if (dwarf_child(&vp, &child))
		return -ENOENT;
	do {
		Dwarf_Word dv;
		if (dwarf_tag(&child) != DW_TAG_variant)
			continue;
		if (dwarf_attr(&child, DW_AT_discr_value, &attr)) {
			if (dwarf_formudata(&attr, &dv) == 0 && (dv & mask) == value)
				return take_variant(&child, v);
		} else if (dwarf_attr(&child, DW_AT_discr_list, &attr)) {
			unsupported = true;   /* ranges: not emitted by rustc so far */
		} else if (!have_fallback) {
			fallback = child;
			have_fallback = true;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	if (have_fallback)
		return take_variant(&fallback, v);
	return unsupported ? -EPROTO : -ENOENT;
}
