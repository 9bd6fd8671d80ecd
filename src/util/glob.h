/* The one glob the runtime profiles (probe/profile.c) and the CAT rules
 * (cat/rules.c) match Rust names with. Pure C. */
#ifndef AS_UTIL_GLOB_H
#define AS_UTIL_GLOB_H

#include <stdbool.h>

/* Whole-string match of s against pat, where '*' matches any text and
 * nothing else is special (Rust names are full of braces and brackets). */
bool glob_match(const char *pat, const char *s);

#endif
