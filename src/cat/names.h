/* CAT / uftrace dump text: how names and values are spelled, both ways.
 * uftrace's spelling of demangled Rust names (function lines), the escaping
 * of asyncscope's "# asyncscope ..." header values, and the header's names
 * of probe roles. Shared by the reader (cat/reader.h) and the writer
 * (cat/writer.h); grammar: docs/cat-format.md.
 *
 * Pure C: depends on trace/event.h (the role names) only; never prints.
 * Every string returned is the caller's to free. */
#ifndef AS_CAT_NAMES_H
#define AS_CAT_NAMES_H

#include <stddef.h>
#include <stdio.h>

/* Version of asyncscope's header grammar ("# asyncscope cat version=1"). */
#define CAT_VERSION 1

/* uftrace's spelling of a demangled Rust name: "::" kept between path
 * components outside angle brackets, ".." for "::" inside them, and "_"
 * before a top-level component that starts with '<' or '{':
 * "<a::B<F> as c::D>::poll::{{closure}}" -> "_<a..B<F> as c..D>::poll::_{{closure}}".
 * Returns a malloc'd string, or NULL with errno ENOMEM. */
char *cat_spell(const char *name);
/* The inverse: the Rust spelling of a uftrace name. malloc'd, or NULL (ENOMEM). */
char *cat_unspell(const char *name);

/* Writes s escaped for a header value: bytes <= ' ', >= 0x7f, '%' and ','
 * (a list separator) as %XX, and the first letter of "entry", "exit" and
 * "reading" too, so that no header line can match CAT's or uftrace's line
 * patterns. Returns 0 or -EIO. */
int cat_escape(FILE *out, const char *s);
/* Decodes n bytes of an escaped value into a malloc'd string (*out). Returns
 * 0, -EINVAL for a bad escape or an escaped NUL byte, -ENOMEM. */
int cat_unescape(const char *s, size_t n, char **out);

/* The value of hex digit c (either case), or -1. */
int cat_hexval(char c);

/* Lower-case names of probe roles in the header ("poll", "future", ...), and
 * back (0 when unknown). */
const char *cat_role_name(unsigned role);
unsigned cat_role_parse(const char *s, size_t n);

#endif
