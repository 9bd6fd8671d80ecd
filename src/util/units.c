/* Numbers with units on the command line (see units.h). Pure C. */
#include "util/units.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

struct unit {
	const char *name;
	uint64_t mult;
};

static const struct unit duration_units[] = {
	{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000ull },
	{ "m", 60000000000ull }, { "h", 3600000000000ull },
};

static const struct unit size_units[] = {
	{ "B", 1 }, { "K", 1ull << 10 }, { "KiB", 1ull << 10 }, { "M", 1ull << 20 },
	{ "MiB", 1ull << 20 }, { "G", 1ull << 30 }, { "GiB", 1ull << 30 },
	{ "T", 1ull << 40 }, { "TiB", 1ull << 40 },
};

/* DIGITS[.DIGITS] at s: the integer part in *ip, the fraction as *fp / *fden
 * (at most 18 digits kept; further digits only make it finer than any unit
 * here measures). Returns the end, or NULL (no digits, or *ip overflows:
 * *range set). */
static const char *number(const char *s, uint64_t *ip, uint64_t *fp, uint64_t *fden, int *range)
{
	uint64_t v = 0, f = 0, d = 1;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return NULL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10) {
			*range = 1;
			return NULL;
		}
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return NULL;
		for (; *p >= '0' && *p <= '9'; p++)
			if (d < 1000000000000000000ull) {
				f = f * 10 + (uint64_t)(*p - '0');
				d *= 10;
			}
	}
	*ip = v;
	*fp = f;
	*fden = d;
	return p;
}

/* (i + f / d) * mult, exact but for the dropped fraction of the base unit. */
static int scale(uint64_t i, uint64_t f, uint64_t d, uint64_t mult, uint64_t *out)
{
	uint64_t whole, frac;

	if (i && mult > UINT64_MAX / i)
		return -ERANGE;
	whole = i * mult;
	/* f / d < 1, so f * mult / d < mult; split to keep f * mult in range */
	frac = (f / d) * mult + (unsigned __int128)(f % d) * mult / d;
	if (whole > UINT64_MAX - frac)
		return -ERANGE;
	*out = whole + frac;
	return 0;
}

static int parse_with(const char *s, const struct unit *units, size_t n_units, bool fold,
		      bool unit_required, uint64_t *out)
{
	uint64_t i, f, d;
	int range = 0;
	const char *end = s ? number(s, &i, &f, &d, &range) : NULL;

	if (!end)
		return range ? -ERANGE : -EINVAL;
	if (!*end) {
		if (unit_required)
			return -EINVAL;
		return scale(i, f, d, 1, out);
	}
	for (size_t k = 0; k < n_units; k++)
		if (fold ? !strcasecmp(end, units[k].name) : !strcmp(end, units[k].name))
			return scale(i, f, d, units[k].mult, out);
	return -EINVAL;
}

int units_parse_duration(const char *s, uint64_t *ns)
{
	return parse_with(s, duration_units, sizeof(duration_units) / sizeof(duration_units[0]),
			  false, true, ns);
}

int units_parse_size(const char *s, uint64_t *bytes)
{
	return parse_with(s, size_units, sizeof(size_units) / sizeof(size_units[0]), true, true,
			  bytes);
}

int units_parse_rate(const char *s, uint64_t *hz)
{
	static const struct unit hz_unit[] = { { "Hz", 1 } };

	/* a rate is a whole number of events a second */
	if (s && strchr(s, '.'))
		return -EINVAL;
	return parse_with(s, hz_unit, 1, true, false, hz);
}

int units_parse_count(const char *s, uint64_t *n)
{
	if (s && strchr(s, '.'))
		return -EINVAL;
	return parse_with(s, NULL, 0, false, false, n);
}

static char *fmt_with(char *buf, size_t n, uint64_t v, const struct unit *units, size_t n_units,
		      const char *zero)
{
	size_t best = 0;

	if (!v) {
		snprintf(buf, n, "%s", zero);
		return buf;
	}
	for (size_t k = 0; k < n_units; k++)
		if (v % units[k].mult == 0 && units[k].mult >= units[best].mult)
			best = k;
	snprintf(buf, n, "%llu%s", (unsigned long long)(v / units[best].mult), units[best].name);
	return buf;
}

char *units_fmt_duration(char *buf, size_t n, uint64_t ns)
{
	return fmt_with(buf, n, ns, duration_units,
			sizeof(duration_units) / sizeof(duration_units[0]), "0s");
}

char *units_fmt_size(char *buf, size_t n, uint64_t bytes)
{
	/* the short names only: K, M, G, T */
	static const struct unit shown[] = {
		{ "B", 1 }, { "K", 1ull << 10 }, { "M", 1ull << 20 }, { "G", 1ull << 30 },
		{ "T", 1ull << 40 },
	};

	return fmt_with(buf, n, bytes, shown, sizeof(shown) / sizeof(shown[0]), "0B");
}
