/* Crate versions (semantic versioning: "1.53.1", "1.0.0-rc.1") and version
 * ranges ("1.49 to 1.53") for runtime detection: parse, compare, format,
 * intersect. Pure C: no allocation, no I/O, no globals; knows nothing of
 * any runtime. */
#ifndef AS_SYM_SEMVER_H
#define AS_SYM_SEMVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SEMVER_PRE_MAX 32

/* MAJOR[.MINOR[.PATCH]][-PRE]. parts says how many numbers were written
 * (1 to 3; the others are 0): "1.49" is {1, 49, 0, parts 2}. Build
 * metadata ("+build") is accepted by the parser and dropped, as semver
 * says it never orders versions. */
struct semver {
	uint32_t major, minor, patch;
	uint8_t parts;
	char pre[SEMVER_PRE_MAX];   /* "rc.1", "" for a release */
};

/* Parses a version at the start of s: "1.53.1", "1.49", "1", "1.0.0-rc.1"
 * (a pre-release only after all three numbers). *end (when not NULL) is set
 * past it; the caller checks what follows. Numbers have no leading zeros
 * (except "0") and fit in 32 bits. Returns 0, or -EINVAL when s does not
 * start with a version (or its pre-release is longer than
 * SEMVER_PRE_MAX - 1). */
int semver_parse_prefix(const char *s, struct semver *v, const char **end);
/* The same for the whole string: -EINVAL when anything follows. */
int semver_parse(const char *s, struct semver *v);

/* Orders versions as semver does (numbers, then a pre-release before its
 * release, pre-release identifiers numerically or by ASCII, fewer
 * identifiers first); missing parts count as 0. Returns <0, 0, >0. */
int semver_cmp(const struct semver *a, const struct semver *b);

/* Writes v with as many numbers as it was given ("1.49", "1.53.1",
 * "1.0.0-rc.1") into buf (always terminated when n > 0). Returns the length
 * the full text needs, as snprintf does. */
int semver_format(const struct semver *v, char *buf, size_t n);

/* A half-open range lo <= v < hi, as runtime facts hold ("since 1.49",
 * "until 1.35": the first version where it no longer holds). A missing
 * bound is unbounded. */
struct semver_range {
	bool has_lo, has_hi;
	struct semver lo, hi;
};

/* The unbounded range (every version). */
struct semver_range semver_range_any(void);
/* [v, the next version at v's precision): "1.53.1" -> 1.53.1 to before
 * 1.53.2, "1.53" -> 1.53.0 to before 1.54.0. */
struct semver_range semver_range_exact(const struct semver *v);
/* Whether v is inside r. */
bool semver_range_contains(const struct semver_range *r, const struct semver *v);
/* Whether no version is inside r (lo >= hi). */
bool semver_range_empty(const struct semver_range *r);
/* Narrows *r to its intersection with other (which may make it empty). */
void semver_range_intersect(struct semver_range *r, const struct semver_range *other);

/* Parses what semver_range_format() writes: "1.49 to 1.53" (1.49.0 to
 * before 1.54.0), "1.53.1" (exactly that), "1.35 or later", "before 1.35",
 * "any". Returns 0 or -EINVAL. */
int semver_range_parse(const char *s, struct semver_range *r);
/* Writes r for people: "1.49 to 1.53", "1.53.1", "1.35 or later",
 * "before 1.35", "any", "none" (empty). An upper bound X.Y.0 prints as
 * X.(Y-1) (any patch of it), X.Y.Z as X.Y.(Z-1); bounds other than those
 * (pre-releases, X.0.0) print as "before ...": "1.2 to before 2.0.0-rc.1".
 * Returns the length the full text needs, as snprintf does. */
int semver_range_format(const struct semver_range *r, char *buf, size_t n);

#endif
