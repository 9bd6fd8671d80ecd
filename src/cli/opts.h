/* The command-line grammar: each command describes its options in tables
 * (struct cli_opt) and itself in a struct cli_command; cli_parse() builds
 * getopt_long's arguments from them, checks every value by its kind
 * (durations and sizes with their unit, counts, pids, choices) and hands it
 * to the command's handler; cli_usage() writes the command's --help from the
 * same tables, and main.c the top-level help from the commands' summaries.
 * Several commands share a table (trace and top take record's, see
 * cli/record_opts.h). Also the one place that prints "asyncscope: ...".
 * Depends on libc and util/units only: no other cli file. */
#ifndef AS_CLI_OPTS_H
#define AS_CLI_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum cli_kind {
	CLI_FLAG,      /* no value */
	CLI_STRING,    /* any text: a FILE, a NAME, a REGEX */
	CLI_LIST,      /* text, repeatable: shown as [--probe REGEX]... */
	CLI_CHOICE,    /* one of the '|'-separated words of metavar ("text|json") */
	CLI_DURATION,  /* with its unit (500us, 5ms, 1.5s, 1m) -> ns */
	CLI_SIZE,      /* with its unit (64K, 16M, 1G) -> bytes */
	CLI_COUNT,     /* a bare whole number */
	CLI_RATE,      /* per second: 99 or 99Hz */
	CLI_PID,       /* a process id */
};

/* One option. Tables end with an entry whose name is NULL. */
struct cli_opt {
	const char *name;      /* long name, without "--" */
	char short_name;       /* -x, or 0 */
	enum cli_kind kind;
	int key;               /* the command's own id, given to its handler */
	const char *metavar;   /* "FILE"; for CLI_CHOICE the accepted words */
	const char *help;      /* lines separated by '\n', no final newline */
	uint64_t min, max;     /* numeric kinds: accepted range (max 0: none) */
	bool in_operands;      /* named by the command's operands ("(-p PID | ...)"),
	                          not again in the synopsis */
	bool required;         /* shown without brackets (the command checks it) */
};

/* --debug-file PATH, one wording for every command that reads a target's
 * symbols or DWARF (its handler calls debuginfo_set_file()). */
#define DEBUG_FILE_OPT(key) \
	{ "debug-file", 0, CLI_STRING, (key), "PATH", \
	  "the target's symbols and DWARF from PATH, a stripped binary's debug\n" \
	  "file (its build id must be the binary's; default: found by build id,\n" \
	  ".gnu_debuglink or debuginfod when DEBUGINFOD_URLS is set)", 0, 0, false }

/* How text is shown, shared by the commands that print it: each takes some
 * of the tables below in its list, and cli_parse() handles their options
 * itself (the command's handler never sees them), into one setting read
 * with cli_view() and cli_color().
 *   cli_color_opts: --color auto|always|never (auto: colour on a terminal,
 *                   none when NO_COLOR is set and not empty, https://no-color.org,
 *                   or TERM is dumb; always and never override NO_COLOR)
 *   cli_wide_opts:  --wide (full names: shortened from the left by default)
 *   cli_limit_opts: --limit N (rows per table, CLI_LIMIT_DEFAULT; 0 all) */
extern const struct cli_opt cli_color_opts[];
extern const struct cli_opt cli_wide_opts[];
extern const struct cli_opt cli_limit_opts[];

#define CLI_LIMIT_DEFAULT 25

enum cli_color_when { CLI_COLOR_AUTO = 0, CLI_COLOR_ALWAYS, CLI_COLOR_NEVER };

struct cli_view {
	enum cli_color_when color;
	bool wide;
	size_t limit;          /* rows per table, 0: all */
};

/* The settings so far (defaults before any option). */
const struct cli_view *cli_view(void);
/* Whether text written to f gets colour (ANSI SGR sequences). */
bool cli_color(FILE *f);

/* A parsed value: str is the argument as given (NULL for a flag), num its
 * number for the numeric kinds (ns, bytes, Hz, count, pid). */
struct cli_val {
	const char *str;
	uint64_t num;
};

struct cli_command {
	const char *name;             /* "record" */
	const char *summary;          /* one line, for asyncscope --help */
	const char *operands;         /* after the options: "FILE", "(-p PID | -- CMD [ARGS...])" */
	/* NULL-terminated list of option tables (shared tables first) */
	const struct cli_opt *const *tables;
	const char *notes;            /* text after the options, or NULL */
	bool stop_at_operand;         /* options end at the first operand (a command to launch) */
};

/* Called for each option in command-line order. Returns 0, or the exit code
 * to end with (2 usage, after printing one line with cli_error; 1 runtime). */
typedef int (*cli_opt_fn)(void *ctx, const struct cli_opt *opt, const struct cli_val *val);

/* Parses argv[1..argc) (argv[0] is the command's name) by cmd's tables.
 * Returns -1 to go on, with *first the index of the first operand; else the
 * exit code: 0 after printing the usage for -h/--help, 2 after a usage
 * error (an unknown option or a missing or bad value: the message, and for
 * the first two the usage, on stderr), or what fn returned. */
int cli_parse(const struct cli_command *cmd, int argc, char **argv, cli_opt_fn fn, void *ctx,
	      int *first);

/* Writes cmd's full help: the synopsis, the summary, every option. */
void cli_usage(const struct cli_command *cmd, FILE *f);
/* Writes the synopsis alone ("usage: asyncscope record [-o FILE] ...",
 * wrapped). */
void cli_synopsis(const struct cli_command *cmd, FILE *f);
/* A missing or extra operand: "asyncscope: <msg> (usage: asyncscope NAME
 * [OPTIONS] OPERANDS; asyncscope NAME --help for the options)" on one line.
 * Returns 2. */
int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Prints "asyncscope: <msg>" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Appends s (borrowed) to the growable array *v of *n strings (a repeatable
 * option's values). Returns 0, or -ENOMEM after saying "out of memory". */
int cli_push_arg(const char ***v, size_t *n, const char *s);

/* Outputs (cli/output.c). A file is never destroyed: an output is written
 * to a temporary file beside its path and renamed over it only when
 * cli_close_output() succeeds (an existing regular file is then replaced,
 * keeping its mode, as cp does; through a symlink, the file it names); a
 * device, FIFO or socket is written in place; a directory, or the file
 * being read (cli_note_input()), is refused. Whatever is not committed when
 * the process exits (an error path) is removed: the temporary file only,
 * never the path the user named.
 *
 * Opens path for writing ("-" is stdout, never closed). Returns the stream,
 * or NULL after printing one line ("cannot create PATH: ..."). */
FILE *cli_open_output(const char *path);
/* As cli_open_output(), for a writer that takes a file descriptor (the
 * recorder's trace): *fd is a descriptor of the output (the temporary
 * file, or the device) that the caller owns, -1 on failure. The stream is
 * the handle for cli_commit_output() and cli_close_output(), never
 * written. */
FILE *cli_open_output_fd(const char *path, int *fd);
/* Puts out's temporary file in place now, while it is still being written
 * (a recording killed later leaves its trace under the name the user gave).
 * Returns 0 or -errno of the rename (the temporary file is then kept for
 * cli_close_output(), which tries again). */
int cli_commit_output(FILE *out);
/* Closes out without putting it in place: its temporary file is removed
 * (an existing file of that name stays as it was). */
void cli_discard_output(FILE *out);
/* Sends stdout to path from now on ("-": leaves it), for commands that
 * print with printf; commit with cli_close_output(stdout). Returns 0, or 1
 * after printing one line. */
int cli_redirect_stdout(const char *path);
/* Flushes and closes out (stdout: flushed, and committed when redirected),
 * then puts the file in place. Returns 0 or -errno (ENOSPC, EIO ... as the
 * write or the close failed; nothing is renamed then). */
int cli_close_output(FILE *out);
/* The cause of a write error err (-errno) on the command's outputs: a
 * writer that saw only ferror() says EIO, but when an output's file system
 * is full the cause is ENOSPC: -ENOSPC then, else err. */
int cli_write_errno(int err);
/* Its text (strerror of cli_write_errno(err)). */
const char *cli_write_error(int err);
/* The input file the command reads: an output naming the same file is
 * refused rather than written over it. */
void cli_note_input(const char *path);

#endif
