/* The command-line grammar (see opts.h): getopt_long's arguments, value
 * checks and the usage text, all from the commands' option tables. */
#include "cli/opts.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/units.h"

#define SYNOPSIS_WIDTH 96
#define HELP_COLUMN 28
#define MAX_OPTS 64

/* The help option every command has. */
static const struct cli_opt help_opt = {
	"help", 'h', CLI_FLAG, 0, NULL, "this help", 0, 0, false,
};

const struct cli_opt cli_color_opts[] = {
	{ "color", 0, CLI_CHOICE, 0, "auto|always|never",
	  "colour the text: auto (default) on a terminal unless NO_COLOR is\n"
	  "set, always, or never" },
	{ 0 },
};

const struct cli_opt cli_wide_opts[] = {
	{ "wide", 0, CLI_FLAG, 0, NULL,
	  "full names (default: shortened from the left to fit, the last\n"
	  "segments kept: ...::main::{async_block#0})" },
	{ 0 },
};

const struct cli_opt cli_limit_opts[] = {
	{ "limit", 0, CLI_COUNT, 0, NULL,
	  "rows per table (default 25, 0 all): a line says how many more" },
	{ 0 },
};

static struct cli_view view = { .limit = CLI_LIMIT_DEFAULT };

const struct cli_view *cli_view(void)
{
	return &view;
}

bool cli_color(FILE *f)
{
	const char *no = getenv("NO_COLOR"), *term = getenv("TERM");

	if (view.color != CLI_COLOR_AUTO)
		return view.color == CLI_COLOR_ALWAYS;
	if ((no && *no) || (term && !strcmp(term, "dumb")))
		return false;
	return f && isatty(fileno(f));
}

/* An option of the view tables: set here. Returns 0 or 2. */
static int view_opt(const struct cli_opt *o, const struct cli_val *v)
{
	if (o == cli_color_opts)
		view.color = !strcmp(v->str, "always") ? CLI_COLOR_ALWAYS :
			     !strcmp(v->str, "never") ? CLI_COLOR_NEVER : CLI_COLOR_AUTO;
	else if (o == cli_wide_opts)
		view.wide = true;
	else if (o == cli_limit_opts) {
		if (v->num > SIZE_MAX - 1) {
			cli_error("--limit takes a number up to %zu, not '%s'", SIZE_MAX - 1, v->str);
			return 2;
		}
		view.limit = (size_t)v->num;
	}
	return 0;
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("asyncscope: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_push_arg(const char ***v, size_t *n, const char *s)
{
	const char **nv = realloc(*v, (*n + 1) * sizeof(*nv));

	if (!nv) {
		cli_error("out of memory");
		return -ENOMEM;
	}
	nv[(*n)++] = s;
	*v = nv;
	return 0;
}

/* The command's options, shared tables first, then --help; returns how many
 * (at most max). */
static size_t all_opts(const struct cli_command *cmd, const struct cli_opt **v, size_t max)
{
	size_t n = 0;

	for (size_t t = 0; cmd->tables && cmd->tables[t]; t++)
		for (const struct cli_opt *o = cmd->tables[t]; o->name && n + 1 < max; o++)
			v[n++] = o;
	v[n++] = &help_opt;
	return n;
}

static bool has_value(const struct cli_opt *o)
{
	return o->kind != CLI_FLAG;
}

static const char *metavar(const struct cli_opt *o)
{
	if (o->metavar)
		return o->metavar;
	switch (o->kind) {
	case CLI_DURATION: return "DURATION";
	case CLI_SIZE: return "SIZE";
	case CLI_COUNT: return "N";
	case CLI_RATE: return "HZ";
	case CLI_PID: return "PID";
	default: return "VALUE";
	}
}

/* "[-o FILE]", "[--futures]", "[--probe REGEX]...", "[--format text|json]":
 * the long name, but for -o and -p, the usual spellings */
static void synopsis_item(const struct cli_opt *o, char *buf, size_t n)
{
	char name[64];

	if (o->short_name == 'o' || o->short_name == 'p')
		snprintf(name, sizeof(name), "-%c", o->short_name);
	else
		snprintf(name, sizeof(name), "--%s", o->name);
	if (has_value(o))
		snprintf(buf, n, "%s%s %s%s%s", o->required ? "" : "[", name, metavar(o),
			 o->required ? "" : "]", o->kind == CLI_LIST ? "..." : "");
	else
		snprintf(buf, n, "%s%s%s", o->required ? "" : "[", name, o->required ? "" : "]");
}

/* Writes words (options, then the operands) after "usage: asyncscope NAME",
 * wrapped under the first. */
void cli_synopsis(const struct cli_command *cmd, FILE *f)
{
	const struct cli_opt *opts[MAX_OPTS];
	size_t n = all_opts(cmd, opts, MAX_OPTS);
	int indent = fprintf(f, "usage: asyncscope %s", cmd->name), col = indent;
	char item[160];

	for (size_t i = 0; i + 1 <= n; i++) {
		if (opts[i] == &help_opt || opts[i]->in_operands)
			continue;
		synopsis_item(opts[i], item, sizeof(item));
		if (col + 1 + (int)strlen(item) > SYNOPSIS_WIDTH && col > indent)
			col = fprintf(f, "\n%*s", indent, "") - 1;
		col += fprintf(f, " %s", item);
	}
	if (cmd->operands && *cmd->operands) {
		if (col + 1 + (int)strlen(cmd->operands) > SYNOPSIS_WIDTH && col > indent)
			col = fprintf(f, "\n%*s", indent, "") - 1;
		fprintf(f, " %s", cmd->operands);
	}
	fputc('\n', f);
}

/* Writes text (its '\n' taken as spaces) as words wrapped at
 * SYNOPSIS_WIDTH, every line but the first indented to col; start: the
 * column the first line starts at. */
static void wrapped(FILE *f, const char *text, int col, int start)
{
	int at = start;
	bool first = true;

	for (const char *p = text; *p;) {
		size_t len;

		while (*p == ' ' || *p == '\n')
			p++;
		len = strcspn(p, " \n");
		if (!len)
			break;
		if (!first && at + 1 + (int)len > SYNOPSIS_WIDTH) {
			at = fprintf(f, "\n%*s", col, "") - 1;
		} else if (!first) {
			fputc(' ', f);
			at++;
		}
		at += fprintf(f, "%.*s", (int)len, p);
		first = false;
		p += len;
	}
}

void cli_usage(const struct cli_command *cmd, FILE *f)
{
	const struct cli_opt *opts[MAX_OPTS];
	size_t n = all_opts(cmd, opts, MAX_OPTS);
	bool durations = false, sizes = false;

	cli_synopsis(cmd, f);
	fputc('\n', f);
	wrapped(f, cmd->summary, 0, 0);
	fputs("\n\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct cli_opt *o = opts[i];
		int w;

		if (o->short_name)
			w = fprintf(f, "  -%c, --%s", o->short_name, o->name);
		else
			w = fprintf(f, "      --%s", o->name);
		if (has_value(o))
			w += fprintf(f, " %s", metavar(o));
		if (w + 2 > HELP_COLUMN)
			fprintf(f, "\n%*s", HELP_COLUMN, "");
		else
			fprintf(f, "%*s", HELP_COLUMN - w, "");
		wrapped(f, o->help, HELP_COLUMN, HELP_COLUMN);
		fputc('\n', f);
		durations |= o->kind == CLI_DURATION;
		sizes |= o->kind == CLI_SIZE;
	}
	if (durations || sizes)
		fputc('\n', f);
	if (durations)
		fprintf(f, "DURATION: a number and its unit: ns, us, ms, s, m or h (500us, 5ms, 1.5s, "
			"1m)\n");
	if (sizes)
		fprintf(f, "SIZE: a number and its unit: K, M or G, binary multiples (64K = 65536 bytes, "
			"16M, 1G)\n");
	if (durations || sizes)
		fprintf(f, "a bare number is refused: its unit would be a guess\n");
	if (cmd->notes)
		fprintf(f, "\n%s\n", cmd->notes);
}

int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
{
	va_list ap;

	fputs("asyncscope: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (usage: asyncscope %s [OPTIONS]%s%s; asyncscope %s --help for the "
		"options)\n", cmd->name, cmd->operands && *cmd->operands ? " " : "",
		cmd->operands ? cmd->operands : "", cmd->name);
	return 2;
}

/* "--duration takes a duration from 1ns to 1h, not '0s'" */
static void range_error(const struct cli_opt *o, const char *what, const char *s)
{
	char lo[32], hi[32];

	if (o->kind == CLI_DURATION) {
		units_fmt_duration(lo, sizeof(lo), o->min);
		units_fmt_duration(hi, sizeof(hi), o->max);
	} else if (o->kind == CLI_SIZE) {
		units_fmt_size(lo, sizeof(lo), o->min);
		units_fmt_size(hi, sizeof(hi), o->max);
	} else {
		snprintf(lo, sizeof(lo), "%llu", (unsigned long long)o->min);
		snprintf(hi, sizeof(hi), "%llu", (unsigned long long)o->max);
	}
	if (o->max)
		cli_error("--%s takes %s from %s to %s, not '%s'", o->name, what, lo, hi, s);
	else
		cli_error("--%s takes %s of at least %s, not '%s'", o->name, what, lo, s);
}

/* Checks optarg s for o; fills v. Returns 0 or 2 (message printed). */
static int check_value(const struct cli_opt *o, const char *s, struct cli_val *v)
{
	const char *what = NULL, *example = NULL;
	int err = 0;

	v->str = s;
	v->num = 0;
	switch (o->kind) {
	case CLI_FLAG:
	case CLI_STRING:
	case CLI_LIST:
		return 0;
	case CLI_CHOICE: {
		size_t len = strlen(s);
		for (const char *w = o->metavar; w && *w;) {
			size_t wl = strcspn(w, "|");
			if (wl == len && !strncmp(w, s, len))
				return 0;
			w += wl + (w[wl] == '|');
		}
		char words[256];
		size_t k = 0;
		for (const char *w = o->metavar; w && *w && k + 8 < sizeof(words);) {
			size_t wl = strcspn(w, "|");
			bool last = !w[wl];
			k += (size_t)snprintf(words + k, sizeof(words) - k, "%s%.*s",
					      k ? (last ? " or " : ", ") : "", (int)wl, w);
			w += wl + !last;
		}
		cli_error("unknown %s '%s': use --%s %s", o->name, s, o->name, words);
		return 2;
	}
	case CLI_DURATION:
		err = units_parse_duration(s, &v->num);
		what = "a duration";
		example = "such as 5ms";
		break;
	case CLI_SIZE:
		err = units_parse_size(s, &v->num);
		what = "a size";
		example = "such as 64K or 16M";
		break;
	case CLI_COUNT:
		err = units_parse_count(s, &v->num);
		what = "a whole number";
		example = "such as 100";
		break;
	case CLI_RATE:
		err = units_parse_rate(s, &v->num);
		what = "a rate";
		example = "per second such as 99 or 99Hz";
		break;
	case CLI_PID:
		err = units_parse_count(s, &v->num);
		if (!err && (v->num == 0 || v->num > 0x3fffffff))
			err = -EINVAL;
		if (err) {
			cli_error("--%s takes a process id, not '%s'", o->name, s);
			return 2;
		}
		return 0;
	}
	if (err == -EINVAL) {
		cli_error("--%s takes %s %s, not '%s'", o->name, what, example, s);
		return 2;
	}
	if (err == -ERANGE) {
		cli_error("--%s takes %s %s, not '%s': too large", o->name, what, example, s);
		return 2;
	}
	if (err || v->num < o->min || (o->max && v->num > o->max)) {
		range_error(o, what, s);
		return 2;
	}
	return 0;
}

int cli_parse(const struct cli_command *cmd, int argc, char **argv, cli_opt_fn fn, void *ctx,
	      int *first)
{
	const struct cli_opt *opts[MAX_OPTS];
	struct option longopts[MAX_OPTS + 1];
	char shorts[3 * MAX_OPTS + 3];
	size_t n = all_opts(cmd, opts, MAX_OPTS), ns = 0;
	int c, idx;

	if (cmd->stop_at_operand)
		shorts[ns++] = '+';
	shorts[ns++] = ':';   /* a missing value returns ':' */
	for (size_t i = 0; i < n; i++) {
		longopts[i] = (struct option){ opts[i]->name,
					       has_value(opts[i]) ? required_argument : no_argument,
					       NULL, 256 + (int)i };
		if (opts[i]->short_name) {
			shorts[ns++] = opts[i]->short_name;
			if (has_value(opts[i]))
				shorts[ns++] = ':';
		}
	}
	longopts[n] = (struct option){ 0 };
	shorts[ns] = '\0';

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, longopts, &idx)) != -1) {
		const struct cli_opt *o = NULL;
		struct cli_val v;
		int ret;

		if (c == '?' || c == ':') {
			const char *arg = argv[optind - 1];
			int key = optopt;
			if (key >= 256 && (size_t)(key - 256) < n)
				o = opts[key - 256];
			for (size_t i = 0; !o && key > 0 && key < 256 && i < n; i++)
				if (opts[i]->short_name == key)
					o = opts[i];
			if (c == ':' && o)
				cli_error("%s: --%s needs a value (%s)", cmd->name, o->name, metavar(o));
			else if (o)   /* --flag=value */
				cli_error("%s: --%s takes no value", cmd->name, o->name);
			else if (key > 0 && key < 256)
				cli_error("%s: unknown option '-%c'", cmd->name, key);
			else
				cli_error("%s: unknown option '%s'", cmd->name, arg);
			cli_usage(cmd, stderr);
			return 2;
		}
		if (c >= 256)
			o = opts[c - 256];
		for (size_t i = 0; !o && i < n; i++)
			if (opts[i]->short_name == c)
				o = opts[i];
		if (!o)
			return 2;   /* not reached: getopt returns only what it was given */
		if (o == &help_opt) {
			cli_usage(cmd, stdout);
			return 0;
		}
		ret = check_value(o, optarg, &v);
		if (ret)
			return ret;
		if (o->kind == CLI_FLAG)
			v.str = NULL;
		if (o == cli_color_opts || o == cli_wide_opts || o == cli_limit_opts)
			ret = view_opt(o, &v);
		else
			ret = fn(ctx, o, &v);
		if (ret)
			return ret;
	}
	*first = optind;
	return -1;
}
