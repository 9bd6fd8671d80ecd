/* Demangling and name normalisation. Depends on libiberty only. */
#include "sym/demangle.h"

#include <ctype.h>
#include <errno.h>
#include <libiberty/demangle.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_hash_suffix(const char *s, size_t len)
{
	/* "::h" followed by exactly 16 hex digits at the end */
	if (len < 19 || strncmp(s + len - 19, "::h", 3))
		return false;
	for (size_t i = len - 16; i < len; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

char *sym_demangle(const char *mangled)
{
	char *base = strdup(mangled);
	char *out = NULL;

	if (!base)
		return NULL;
	char *llvm = strstr(base, ".llvm.");
	if (llvm)
		*llvm = '\0';
	if (!strncmp(base, "_ZN", 3) || !strncmp(base, "_R", 2))
		out = rust_demangle(base, DMGL_PARAMS);
	if (!out && !strncmp(base, "_Z", 2))
		out = cplus_demangle(base, DMGL_PARAMS | DMGL_ANSI);
	if (!out) {
		out = base;
		base = NULL;
	}
	free(base);
	size_t len = strlen(out);
	if (is_hash_suffix(out, len))
		out[len - 19] = '\0';
	return out;
}

char *sym_strip_generics(const char *name)
{
	size_t n = strlen(name);
	char *out = malloc(n + 1);
	size_t o = 0;
	int skip = 0;   /* depth inside a generic argument list being removed */
	int keep = 0;   /* depth of qualified-path brackets being kept */

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (skip) {
			if (c == '<')
				skip++;
			else if (c == '>' && !(i > 0 && name[i - 1] == '-'))
				skip--;
			continue;
		}
		if (c == '<') {
			/* a generic list follows an identifier or "::"; a path
			 * bracket starts a segment */
			bool generic = o > 0 && (isalnum((unsigned char)out[o - 1]) ||
						 out[o - 1] == '_' || out[o - 1] == '}' ||
						 out[o - 1] == ':') &&
				       strncmp(name + i + 1, "impl ", 5);
			if (generic) {
				if (o >= 2 && out[o - 1] == ':' && out[o - 2] == ':')
					o -= 2;
				skip = 1;
				continue;
			}
			keep++;
		} else if (c == '>' && keep && !(i > 0 && name[i - 1] == '-')) {
			keep--;
		}
		out[o++] = c;
	}
	out[o] = '\0';
	return out;
}

static void cut(char *s, const char *needle)
{
	char *p;

	while ((p = strstr(s, needle)))
		memmove(p, p + strlen(needle), strlen(p + strlen(needle)) + 1);
}

/* Rewrites every "{<kind>_env#N}" as "{<kind>#N}" (the state machine of
 * the N-th async block or closure in its parent), in place. */
static void env_to_item(char *s, const char *kind)
{
	char pat[32];
	char *p;

	snprintf(pat, sizeof(pat), "{%s_env#", kind);
	while ((p = strstr(s, pat))) {
		size_t k = strlen(kind);
		memmove(p + 1 + k, p + 1 + k + 4, strlen(p + 1 + k + 4) + 1);
	}
}

char *sym_pretty_future(const char *type_name)
{
	char *s = strdup(type_name);

	if (!s)
		return NULL;
	cut(s, ", alloc::alloc::Global");
	/* an async fn's state machine is named after the fn itself */
	cut(s, "::{async_fn_env#0}");
	/* an async closure's body is named after the closure */
	cut(s, "::{async_closure_env#0}");
	env_to_item(s, "async_block");
	env_to_item(s, "closure");
	return s;
}
