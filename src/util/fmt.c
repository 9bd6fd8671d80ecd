/* fmt: human-readable durations, integer arithmetic only so that output is
 * identical on every machine (golden files depend on it). */
#include "util/fmt.h"

#include <stdio.h>

static const struct {
	uint64_t ns;
	const char *name;
} units[] = {
	{ 1000ULL, "us" },
	{ 1000000ULL, "ms" },
	{ 1000000000ULL, "s" },
};

#define N_UNITS (sizeof(units) / sizeof(units[0]))

/* Rounds ns / unit * scale to the nearest integer without overflow. */
static uint64_t scaled(uint64_t ns, uint64_t unit, uint64_t scale)
{
	uint64_t q = ns / unit, r = ns % unit;
	return q * scale + (r * scale + unit / 2) / unit;
}

char *fmt_duration(char *buf, size_t n, uint64_t ns)
{
	if (!buf || !n)
		return buf;
	if (ns < 1000) {
		snprintf(buf, n, "%llu ns", (unsigned long long)ns);
		return buf;
	}
	for (size_t i = 0; i < N_UNITS; i++) {
		uint64_t u = units[i].ns;
		int last = i + 1 == N_UNITS;
		/* Below 10 units: two decimals, unless rounding reaches 10.00. */
		uint64_t hundredths = scaled(ns, u, 100);
		if (hundredths < 1000) {
			snprintf(buf, n, "%llu.%02llu %s", (unsigned long long)(hundredths / 100),
				 (unsigned long long)(hundredths % 100), units[i].name);
			return buf;
		}
		/* Otherwise one decimal, unless rounding reaches 1000.0 and a larger unit exists. */
		uint64_t tenths = scaled(ns, u, 10);
		if (tenths < 10000 || last) {
			snprintf(buf, n, "%llu.%llu %s", (unsigned long long)(tenths / 10),
				 (unsigned long long)(tenths % 10), units[i].name);
			return buf;
		}
	}
	return buf; /* not reached */
}

size_t fmt_utf8_len(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned char c;
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf;

	if (!n)
		return 0;
	c = s[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (n < len)
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}
