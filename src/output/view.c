/* The text outputs' shared presentation (see view.h). */
#include "output/view.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/findings.h"
#include "util/fmt.h"
#include "util/rust_name.h"

#define DETAIL_W 100   /* details wrapped at this column */

const struct text_view text_view_default = { .limit = TEXT_LIMIT_DEFAULT };

const char *text_sgr(const struct text_view *v, enum text_style s)
{
	static const char *const seq[] = {
		[TS_RESET] = "\033[0m", [TS_BOLD] = "\033[1m", [TS_ERROR] = "\033[1;31m",
		[TS_WARNING] = "\033[1;33m", [TS_INFO] = "\033[1;36m", [TS_ADVICE] = "\033[32m",
		[TS_DIM] = "\033[2m",
	};

	if (!v || !v->color || (unsigned)s >= sizeof(seq) / sizeof(seq[0]))
		return "";
	return seq[s];
}

size_t text_rows(const struct text_view *v, size_t n)
{
	size_t limit = v ? v->limit : TEXT_LIMIT_DEFAULT;

	return limit && n > limit ? limit : n;
}

void text_more(FILE *out, const struct text_view *v, size_t shown, size_t total,
	       const char *what, const char *indent, const char *where)
{
	(void)v;
	if (shown >= total)
		return;
	fprintf(out, "%s... %zu more %s (--limit N shows more, --limit 0 all%s)\n", indent,
		total - shown, what, where ? where : "");
}

/* Copies s into buf (size n >= 8), control bytes and invalid UTF-8 as '?';
 * what does not fit is cut at its end, "..." said. */
static void sanitize(char *buf, size_t n, const char *s)
{
	size_t o = 0;
	const char *p = s;

	for (; *p && o + 8 < n;) {
		size_t len = fmt_utf8_len(p, strnlen(p, 4));

		if (len > 1 || (len == 1 && (unsigned char)*p >= 0x20 && *p != 0x7f)) {
			memcpy(buf + o, p, len);
			o += len;
			p += len;
		} else {
			buf[o++] = '?';
			p++;
		}
	}
	if (*p && o + 4 <= n) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
}

char *text_name(const struct text_view *v, char *buf, size_t n, const char *name, int width)
{
	char *d;

	if (!n)
		return buf;
	if (!name)
		name = "(unknown)";
	d = rust_name_display(name, width, v && v->wide);
	sanitize(buf, n, d ? d : name);
	free(d);
	return buf;
}

void text_name_column(FILE *out, const struct text_view *v, const char *name, int width)
{
	char buf[4096];
	int w;

	text_name(v, buf, sizeof(buf), name, width);
	w = rust_name_width(buf);
	fprintf(out, "%s%*s ", buf, width > w ? width - w : 0, "");
}

int text_name_width(const struct text_view *v, const char *const *names, size_t n, int min)
{
	int w = min;
	char buf[1024];

	for (size_t i = 0; i < n; i++) {
		int k = rust_name_width(text_name(v, buf, sizeof(buf), names[i], TEXT_NAME_MAX));

		if (k > w)
			w = k;
	}
	/* names are shortened to TEXT_NAME_MAX already: one still wider
	 * widens the column, keeping the rows' other columns in line */
	return w;
}

/* text wrapped at DETAIL_W, every line after `indent` spaces */
static void wrapped(FILE *out, const char *text, int indent)
{
	int at = indent;

	fprintf(out, "%*s", indent, "");
	for (const char *p = text; *p;) {
		size_t len;

		while (*p == ' ')
			p++;
		len = strcspn(p, " ");
		if (!len)
			break;
		if (at > indent && at + 1 + (int)len > DETAIL_W) {
			fprintf(out, "\n%*s", indent, "");
			at = indent;
		} else if (at > indent) {
			fputc(' ', out);
			at++;
		}
		fprintf(out, "%.*s", (int)len, p);
		at += (int)len;
		p += len;
	}
	fputc('\n', out);
}

int text_findings(FILE *out, const struct findings *f, const struct text_view *v)
{
	static const enum text_style sev_style[] = { TS_ERROR, TS_WARNING, TS_INFO };
	size_t n, shown, ne = findings__count(f, FINDING_ERROR),
	       nw = findings__count(f, FINDING_WARNING), ni = findings__count(f, FINDING_INFO);
	const struct finding *l = findings__list(f, &n);
	const char *b = text_sgr(v, TS_BOLD), *r = text_sgr(v, TS_RESET);

	if (!n) {
		fprintf(out, "%sFINDINGS:%s none (no blocking call, long poll, never-woken, starved or "
			"self-waking task, no lost event)\n", b, r);
		return ferror(out) ? -EIO : 0;
	}
	fprintf(out, "%sFINDINGS:%s ", b, r);
	if (ne)
		fprintf(out, "%s%zu error%s%s%s", text_sgr(v, TS_ERROR), ne, ne == 1 ? "" : "s", r,
			nw || ni ? ", " : "");
	if (nw)
		fprintf(out, "%s%zu warning%s%s%s", text_sgr(v, TS_WARNING), nw, nw == 1 ? "" : "s", r,
			ni ? ", " : "");
	if (ni)
		fprintf(out, "%s%zu info%s", text_sgr(v, TS_INFO), ni, r);
	fprintf(out, ", most severe first (each with its detail in --format json)\n");
	shown = text_rows(v, n);
	for (size_t i = 0; i < shown; i++) {
		const struct finding *x = &l[i];
		char title[2048];

		sanitize(title, sizeof(title), x->title);
		fprintf(out, "  %s%-8s%s %s%s%s\n", text_sgr(v, sev_style[x->severity]),
			finding_severity__str(x->severity), r, b, title, r);
		if (x->file && x->line)
			fprintf(out, "           at %s:%" PRIu32 "\n", x->file, x->line);
		else if (x->file)
			fprintf(out, "           in %s\n", x->file);
		if (x->severity == FINDING_ERROR && x->detail && *x->detail) {
			char detail[4096];

			sanitize(detail, sizeof(detail), x->detail);
			fputs(text_sgr(v, TS_DIM), out);
			wrapped(out, detail, 11);
			fputs(r, out);
		}
		fprintf(out, "           %s-> %s%s\n", text_sgr(v, TS_ADVICE), x->advice, r);
	}
	text_more(out, v, shown, n + findings__omitted(f), "findings", "  ",
		  findings__omitted(f) ? "; in JSON the first 500" : "; all in --format json");
	return ferror(out) ? -EIO : 0;
}
