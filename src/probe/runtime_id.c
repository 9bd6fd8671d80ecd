/* Runtime version and layout identification (runtime_id.h). */
#include "probe/runtime_id.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sym/crate_version.h"
#include "sym/dwarf_types.h"
#include "sym/semver.h"
#include "sym/type_layout.h"

__attribute__((format(printf, 2, 3)))
static void warn(struct runtime_id *id, const char *fmt, ...)
{
	va_list ap;

	if (id->n_warnings == RUNTIME_ID_MAX_WARNINGS)
		return;
	va_start(ap, fmt);
	vsnprintf(id->warnings[id->n_warnings++], sizeof(id->warnings[0]), fmt, ap);
	va_end(ap);
}

/* The range a point's bounds give: since X is X and later, until Y is Y
 * and earlier (any patch of Y). */
static bool point_range(const struct profile_point *pt, struct semver_range *r)
{
	struct semver v;

	*r = semver_range_any();
	if (pt->since && !semver_parse(pt->since, &v)) {
		r->has_lo = true;
		r->lo = v;
	}
	if (pt->until && !semver_parse(pt->until, &v)) {
		struct semver_range e = semver_range_exact(&v);
		r->has_hi = e.has_hi;
		r->hi = e.hi;
	}
	return r->has_lo || r->has_hi;
}

/* Narrows *r by the points whose function the binary has. */
static void from_symbols(const struct runtime_profile *prof, const struct elf_image *img,
			 struct semver_range *r, bool *any)
{
	for (size_t k = 0; k < prof->n_points; k++) {
		const struct profile_point *pt = &prof->points[k];
		struct semver_range pr;

		if (!point_range(pt, &pr))
			continue;
		for (size_t i = 0; i < img->n_syms; i++)
			if (profile_point_matches(pt, img->syms[i].name, img->syms[i].norm)) {
				semver_range_intersect(r, &pr);
				*any = true;
				break;
			}
	}
}

static void add_feature(struct runtime_id *id, const char *f)
{
	size_t n = strlen(id->features);

	if (strstr(id->features, f))
		return;
	snprintf(id->features + n, sizeof(id->features) - n, "%s%s", n ? ", " : "", f);
}

/* The layout facts against DWARF: offsets checked (DWARF's kept), signs
 * of versions and features read. */
static int from_layout(const struct runtime_profile *prof, struct dwarf_types *dt,
		       struct runtime_id *id, struct semver_range *r, bool *any)
{
	struct type_layout_query q[16];
	struct type_layout_fact f[16];
	size_t n = prof->n_layout < 16 ? prof->n_layout : 16;
	bool checked = true, offsets = false;

	for (size_t i = 0; i < n; i++)
		q[i] = (struct type_layout_query){ .type = prof->layout[i].type,
						   .member = prof->layout[i].member,
						   .deep = prof->layout[i].deep };
	int got = type_layout__query(dt, q, n, f);
	if (got < 0)
		return got;
	for (size_t i = 0; i < n; i++) {
		const struct layout_fact *lf = &prof->layout[i];
		uint32_t *use = lf->role == LAYOUT_HDR_VTABLE ? &id->hdr_vtable_off :
				lf->role == LAYOUT_VTABLE_ID ? &id->vtable_id_off_slot :
				lf->role == LAYOUT_META_NAME ? &id->spawn_meta_name_off : NULL;
		if (use) {
			/* the spawn metadata's name exists only in tracing builds */
			bool optional = lf->role == LAYOUT_META_NAME;
			offsets |= !optional;
			if (!f[i].member_found) {
				checked &= optional;
				continue;
			}
			if (f[i].offset != *use) {
				warn(id, "%s: %s.%s is at 0x%llx in DWARF, not 0x%x as the profile says: "
				     "DWARF's is used", prof->name, lf->type, lf->member,
				     (unsigned long long)f[i].offset, (unsigned)*use);
				*use = (uint32_t)f[i].offset;
			}
			continue;
		}
		if (!f[i].member_found ||
		    (lf->member_type && strcmp(f[i].member_type, lf->member_type)))
			continue;
		if (lf->feature)
			add_feature(id, lf->feature);
		struct semver_range lr;
		if (lf->versions && !semver_range_parse(lf->versions, &lr)) {
			semver_range_intersect(r, &lr);
			*any = true;
		}
	}
	id->layout_checked = offsets && checked;
	return 0;
}

/* Is v one of the profile's tested releases ("1.24.2, 1.53.1")? */
static bool tested(const struct runtime_profile *prof, const struct semver *v)
{
	const char *p = prof->tested;
	struct semver t;

	while (p && *p) {
		const char *end = NULL;
		if (!semver_parse_prefix(p, &t, &end) && !semver_cmp(&t, v))
			return true;
		p = strchr(p, ',');
		if (p)
			p += strspn(p, ", ");
	}
	return false;
}

int runtime_id__identify(const struct runtime_profile *prof, const struct elf_image *img,
			 struct dwarf_types *dt, struct runtime_id *id)
{
	struct semver_range r = semver_range_any(), range;
	bool any = false, have_range = prof->range && !semver_range_parse(prof->range, &range);
	int err = 0;

	memset(id, 0, sizeof(*id));
	snprintf(id->version, sizeof(id->version), "unknown");
	id->hdr_vtable_off = prof->hdr_vtable_off;
	id->vtable_id_off_slot = prof->vtable_id_off_slot;
	id->spawn_meta_name_off = prof->spawn_meta_name_off;
	if (!prof->crate)
		return 0;
	if (dt && prof->n_layout && (err = from_layout(prof, dt, id, &r, &any)))
		return err;
	struct crate_paths *cp = crate_paths__open_fd(elf_image__fd(img), dt ? dwarf_types__dwarf(dt) : NULL);
	struct crate_versions cv = { 0 };
	if (!cp && errno == ENOMEM)
		return -ENOMEM;
	if (cp && crate_paths__versions(cp, prof->crate, &cv) > 0) {
		semver_format(&cv.hits[0].version, id->version, sizeof(id->version));
		snprintf(id->source, sizeof(id->source), "%s", crate_version_hit__source(&cv.hits[0]));
		id->exact = true;
		if (cv.n > 1) {
			char other[32];
			semver_format(&cv.hits[1].version, other, sizeof(other));
			warn(id, "%s: the binary names %zu versions of %s (%s, %s%s): traced as %s",
			     prof->name, cv.n + cv.more, prof->crate, id->version, other,
			     cv.n + cv.more > 2 ? ", ..." : "", id->version);
		}
	}
	crate_paths__free(cp);
	from_symbols(prof, img, &r, &any);
	if (id->exact && any) {
		/* the paths and the code disagree: a vendored or patched copy? */
		struct semver v;
		char ev[48];
		/* an empty range: the symbols' and layout's own facts disagree
		 * (a fact of a feature the binary does not use), so they say
		 * nothing against the paths */
		if (!semver_parse(id->version, &v) && !semver_range_empty(&r) &&
		    !semver_range_contains(&r, &v)) {
			semver_range_format(&r, ev, sizeof(ev));
			warn(id, "%s: the binary's source paths name %s %s, but its symbols and layout "
			     "show %s: traced by the symbols found", prof->name, prof->crate,
			     id->version, ev);
		}
	}
	if (!id->exact) {
		if (any && !semver_range_empty(&r)) {
			semver_range_format(&r, id->version, sizeof(id->version));
			snprintf(id->source, sizeof(id->source), "from symbols%s",
				 dt ? " and DWARF layout" : "");
		}
	}
	if (!have_range)
		return 0;
	if (id->exact) {
		struct semver v;
		semver_parse(id->version, &v);
		id->outside = !semver_range_contains(&range, &v);
		id->untested = !id->outside && !tested(prof, &v);
	} else if (any) {
		struct semver_range both = r;
		semver_range_intersect(&both, &range);
		id->outside = semver_range_empty(&both);
	}
	if (id->outside)
		warn(id, "%s %s is outside the versions this profile knows (%s): traced with it, "
		     "check the results", prof->name, id->version, prof->range);
	return 0;
}

void runtime_id__describe(const struct runtime_profile *prof, const struct runtime_id *id,
			  char *buf, size_t len)
{
	char feat[64] = "";

	if (id->features[0])
		snprintf(feat, sizeof(feat), ", %s", id->features);
	if (!prof->crate) {
		snprintf(buf, len, "%s (%s)", prof->name, prof->versions);
		return;
	}
	snprintf(buf, len, "%s %s (%s%s%s; profile %s, tested %s; layout %s)", prof->name,
		 id->version, id->source[0] ? id->source : "no version in the binary", feat,
		 id->untested ? ", untested" : id->outside ? ", outside the profile" : "",
		 prof->range ? prof->range : "?", prof->tested ? prof->tested : "none",
		 id->layout_checked ? "checked against DWARF" : "unverified");
}
