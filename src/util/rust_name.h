/* rust_name: the one way every text output shows a Rust name (a task's
 * future, a function of a stack, an awaited type): what the user wrote,
 * shortened from the left so that the leaf, the most specific part, stays.
 *
 * Rewrites, in the short and in the wide form, compiler-internal segments
 * into what the source says (rustc's DWARF, v0 and legacy spellings):
 *   "app::handler::{async_fn_env#0}"  -> "app::handler"   (an async fn's body
 *        is the fn: DWARF names its state machine {async_fn_env#N} and its
 *        poll function {async_fn#N})
 *   "{async_block_env#1}"             -> "{async_block#1}" (the state machine
 *        of the N-th async block in its parent, DWARF)
 *   "{closure_env#0}"                 -> "{closure#0}"     (likewise closures;
 *        v0 symbols name closures and async blocks alike {closure#N})
 *   "{{closure}}"                     -> "{closure}"       (legacy mangling's
 *        escaped braces; it cannot tell a closure, an async block and an
 *        async fn body apart, so neither can this)
 *   ", alloc::alloc::Global"          removed (Box<T, Global>, Arc<T, Global>)
 * The short form, when the name is wider than asked, then collapses generic
 * arguments ("Conn<..>"), reduces the paths inside a qualified bracket to
 * their last segment ("<Checksum as Future>::poll"), and last drops whole
 * leading path segments, never cutting one: "...::main::{async_block#0}".
 * It keeps at least the rightmost named segment and the {closure} /
 * {async_block#N} segments after it, so it may stay wider than asked.
 * Pure C, no I/O, no globals. */
#ifndef AS_UTIL_RUST_NAME_H
#define AS_UTIL_RUST_NAME_H

#include <stdbool.h>
#include <stddef.h>

/* The width text outputs ask for where nothing else fits a name. */
#define RUST_NAME_WIDTH 48

/* Returns a malloc'd display form of name (caller frees): with wide, the
 * rewritten full name; else the short form at most width characters wide
 * where its leaf allows (width 0: RUST_NAME_WIDTH). NULL name: NULL. On
 * allocation failure, NULL with errno ENOMEM. */
char *rust_name_display(const char *name, int width, bool wide);

/* The same into buf (size n, caller-owned): the result, cut at its end with
 * "..." when it does not fit in n bytes. Returns buf ("" for NULL name;
 * the name as given, cut to n, when out of memory). */
char *rust_name_format(char *buf, size_t n, const char *name, int width, bool wide);

/* Displayed width of s in characters (UTF-8 continuation bytes not
 * counted). */
int rust_name_width(const char *s);

#endif
