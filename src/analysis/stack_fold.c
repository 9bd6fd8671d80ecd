/* Folding a stack definition into flame-graph frames, shared by the
 * blocking (off-CPU) and CPU-sample analyses and the pprof and speedscope
 * writers: what each frame is (the tables below: data, not code), which
 * frames a readable flame graph keeps, and the line they make. */
#include "analysis/stack_fold.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ tables */

enum rule_match { M_PREFIX = 0, M_EXACT, M_CONTAINS };

struct frame_rule {
	const char *text;
	enum rule_match how;
	bool loop;            /* a runtime's own loop: where the stack of a thread
	                         that runs no task starts (STACK_FOLD_THREAD) */
	bool start;           /* a thread's or the process's start: where a whole
	                         user stack ends (stack_frame_start()) */
};

/* Scaffolding: the runtime's and the standard library's machinery that
 * runs between a thread's start and a task's future, or between a
 * program's function and a closure it hands to the runtime. Matched on the
 * demangled name, a leading '<' skipped (so "<tokio::runtime::...>::poll"
 * is tokio::runtime's). Left out of a folded stack only where it leads to
 * the program's code (see stack_fold.h), so what the program calls into
 * (a runtime's park, a std lock) stays. */
static const struct frame_rule scaffold_rules[] = {
	/* C runtime: a thread's start, a process's start */
#define START(text, how) { text, how, false, true }
	START("start_thread", M_EXACT), START("clone3", M_EXACT), START("__clone3", M_EXACT),
	START("clone", M_EXACT), START("__clone", M_EXACT), START("__clone_internal", M_EXACT),
	START("_start", M_EXACT), START("__libc_start_main", M_EXACT),
	START("__libc_start_main_impl", M_EXACT), START("__libc_start_call_main", M_EXACT),
	{ "main", M_EXACT }, START("__GI___clone", M_PREFIX), START("__libc_start", M_PREFIX),
#undef START
	/* std: thread start, lang_start, catch_unwind, closure calls */
	{ "std::rt::", M_PREFIX },
	{ "std::panic::", M_PREFIX }, { "std::panicking::", M_PREFIX },
	{ "core::panic::unwind_safe::", M_PREFIX },
	{ "core::ops::function::", M_PREFIX },
	{ "alloc::boxed::Box<dyn core::ops::function::Fn", M_PREFIX },
	{ "std::thread::lifecycle::", M_PREFIX },          /* Rust 1.88+ */
	{ "std::thread::Builder::spawn_unchecked", M_PREFIX },
	{ "__rust_begin_short_backtrace", M_CONTAINS },
	{ "Thread>::new::thread_start", M_CONTAINS },     /* <std::sys::..::Thread>:: */
	{ "thread::Thread::new::thread_start", M_CONTAINS }, /* older std */
	/* future plumbing: forwarding polls */
	{ "core::pin::Pin<", M_PREFIX }, { "core::future::", M_PREFIX },
	{ "&mut F as core::future::", M_PREFIX }, { "F as core::future::", M_PREFIX },
	{ "alloc::boxed::Box<F", M_PREFIX },
	/* tokio: the scheduler, task harness, coop budget, context, blocking
	 * pool, block_on, LocalSet's run loop */
	{ "tokio::runtime::scheduler::multi_thread::worker::run", M_PREFIX, true },
	{ "tokio::runtime::scheduler::current_thread::", M_PREFIX, true },
	{ "tokio::runtime::", M_PREFIX }, { "tokio::loom::", M_PREFIX },
	{ "tokio::macros::scoped_tls::", M_PREFIX }, { "tokio::task::local::", M_PREFIX },
	{ "tokio::task::coop::", M_PREFIX },                /* 1.53: the poll's budget */
	{ "std::thread::local::LocalKey", M_PREFIX },       /* thread-local access (the
	                                                       runtime's CONTEXT) */
	{ "tokio::util::trace::", M_PREFIX }, { "tracing::instrument::Instrumented", M_PREFIX },
	/* async-std, smol and async-executor (async-task tasks) */
	{ "async_task::raw::", M_PREFIX }, { "async_task::runnable::", M_PREFIX },
	{ "async_task::task::", M_PREFIX },
	{ "async_executor::Executor::run", M_PREFIX, true },
	{ "async_executor::", M_PREFIX }, { "async_global_executor::", M_PREFIX },
	{ "async_std::task::builder::", M_PREFIX },
	{ "async_std::task::task_locals_wrapper::", M_PREFIX },
	{ "async_std::task::executor::", M_PREFIX }, { "async_std::task::block_on", M_PREFIX },
	{ "async_io::driver::block_on", M_PREFIX }, { "futures_lite::future::block_on", M_PREFIX },
	{ "smol::spawn::", M_PREFIX }, { "blocking::Executor", M_PREFIX },
	/* the futures crate's executors and catch_unwind */
	{ "futures_executor::local_pool::", M_PREFIX },
	{ "futures_util::future::future::catch_unwind::", M_PREFIX },
	{ NULL, 0 },
};

/* Library crates: code that is not the program's own. A crate found under
 * a registry in a frame's source path is one too (stack_crates__learn()). */
static const char *const library_crates[] = {
	"std", "core", "alloc", "proc_macro", "test", "compiler_builtins", "panic_unwind",
	"panic_abort", "gimli", "addr2line", "miniz_oxide", "rustc_demangle", "hashbrown",
	"tokio", "tokio_util", "tokio_stream", "tokio_macros", "mio",
	"futures", "futures_util", "futures_core", "futures_channel", "futures_executor",
	"futures_io", "futures_task", "futures_sink", "futures_lite",
	"async_task", "async_executor", "async_global_executor", "async_std", "async_io",
	"async_channel", "async_lock", "async_net", "async_fs", "async_process", "async_trait",
	"smol", "polling", "parking", "parking_lot", "parking_lot_core", "lock_api", "blocking",
	"event_listener", "concurrent_queue", "crossbeam", "crossbeam_channel",
	"crossbeam_utils", "crossbeam_epoch", "crossbeam_deque", "slab", "socket2", "libc",
	"hyper", "h2", "http", "http_body", "httparse", "tower", "tower_service", "tower_layer",
	"axum", "tonic", "reqwest", "rustls", "ring", "bytes", "tracing", "tracing_core",
	"tracing_subscriber", "tracing_futures", "log", "once_cell", "pin_project_lite",
	"pin_project", "memchr", "serde", "serde_json", "indexmap", "smallvec", "rand",
	"signal_hook", "signal_hook_registry", "want", "try_lock", "tokio_rustls", "prost",
	NULL,
};

static const char *const primitives[] = {
	"u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128",
	"isize", "f32", "f64", "bool", "char", "str", NULL,
};

/* --------------------------------------------------------- classification */

static bool rule_matches(const char *s, const struct frame_rule *r)
{
	switch (r->how) {
	case M_EXACT: return !strcmp(s, r->text);
	case M_CONTAINS: return strstr(s, r->text) != NULL;
	default: return !strncmp(s, r->text, strlen(r->text));
	}
}

/* The scaffolding rule sym matches, or NULL. */
static const struct frame_rule *scaffold_rule(const char *sym)
{
	const char *s = sym[0] == '<' ? sym + 1 : sym;

	for (const struct frame_rule *r = scaffold_rules; r->text; r++)
		if (rule_matches(r->how == M_EXACT ? sym : s, r))
			return r;
	return NULL;
}

static bool scaffold(const char *sym)
{
	return scaffold_rule(sym) != NULL;
}

bool stack_frame_start(const char *sym)
{
	const struct frame_rule *r = sym ? scaffold_rule(sym) : NULL;

	return r && r->start;
}

static bool ident_char(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool in_list(const char *s, size_t n, const char *const *list)
{
	for (; *list; list++)
		if (strlen(*list) == n && !strncmp(s, *list, n))
			return true;
	return false;
}

static bool learnt(const struct stack_crates *c, const char *s, size_t n)
{
	for (size_t i = 0; c && i < c->n; i++)
		if (strlen(c->names[i]) == n && !strncmp(s, c->names[i], n))
			return true;
	return false;
}

/* "FILE+0x1f4" (a mapping without a symbol), "0x7f..", "" */
static bool unnamed(const char *s)
{
	if (!*s || !strncmp(s, "0x", 2))
		return true;
	const char *plus = strstr(s, "+0x");
	return plus && !strstr(s, "::");
}

enum frame_kind stack_frame_kind(const char *sym, const struct stack_crates *crates)
{
	const char *s = sym;
	size_t n = 0;

	if (!sym || unnamed(sym))
		return FRAME_UNKNOWN;
	if (scaffold(sym))
		return FRAME_SCAFFOLD;
	if (!strstr(sym, "::"))
		return FRAME_LIBRARY;   /* C code */
	/* the crate: the first path segment, past "<", "&", "&mut ", "dyn " */
	for (;;) {
		if (*s == '<' || *s == '&' || *s == '*')
			s++;
		else if (!strncmp(s, "mut ", 4) || !strncmp(s, "dyn ", 4))
			s += 4;
		else if (!strncmp(s, "const ", 6))
			s += 6;
		else
			break;
	}
	while (ident_char(s[n]))
		n++;
	if (!n)
		return FRAME_LIBRARY;   /* "<[T]>::", "<(A, B)>::": a primitive's impl */
	if (strncmp(s + n, "::", 2))
		return FRAME_LIBRARY;   /* "<F as ...>", "<u64>::": a type parameter, a primitive */
	if (in_list(s, n, primitives) || in_list(s, n, library_crates) || learnt(crates, s, n))
		return FRAME_LIBRARY;
	return FRAME_OWN;
}

void stack_crates__clear(struct stack_crates *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->names[i]);
	free(c->names);
	*c = (struct stack_crates){ 0 };
}

/* The crate of a path component "name-1.2.3" (a registry's, or a vendored
 * crate's directory): its name with '-' as '_' into out, or false. */
static bool crate_dir(const char *c, size_t len, char *out, size_t outlen)
{
	for (size_t i = len; i-- > 1;) {
		if (c[i - 1] != '-' || c[i] < '0' || c[i] > '9')
			continue;
		/* a version: digits '.' digits '.' digits, then anything */
		size_t j = i, dots = 0;
		while (j < len && ((c[j] >= '0' && c[j] <= '9') || c[j] == '.')) {
			dots += c[j] == '.';
			j++;
		}
		if (dots < 2 || i - 1 >= outlen)
			return false;
		for (size_t k = 0; k < i - 1; k++) {
			if (!ident_char(c[k]) && c[k] != '-')
				return false;
			out[k] = c[k] == '-' ? '_' : c[k];
		}
		out[i - 1] = '\0';
		return i > 1;
	}
	return false;
}

int stack_crates__learn(struct stack_crates *c, const struct as_stack *st)
{
	char name[128];

	for (uint32_t i = st ? st->n_kernel : 0; st && i < (uint32_t)st->n_kernel + st->n_user; i++) {
		const char *f = st->frames[i].file, *p;

		if (!f || f[0] != '/')
			continue;   /* a relative path: in its unit's directory */
		for (p = f; (p = strchr(p, '/')); ) {
			const char *comp = ++p, *end = strchr(comp, '/');

			if (!end)
				break;
			if (!crate_dir(comp, (size_t)(end - comp), name, sizeof(name)) ||
			    learnt(c, name, strlen(name)) || in_list(name, strlen(name), library_crates))
				continue;
			if (c->n == c->cap) {
				size_t cap = c->cap ? c->cap * 2 : 16;
				char **nn = realloc(c->names, cap * sizeof(*nn));
				if (!nn)
					return -ENOMEM;
				c->names = nn;
				c->cap = cap;
			}
			if (!(c->names[c->n] = strdup(name)))
				return -ENOMEM;
			c->n++;
			break;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ folding */

uint32_t stack_fold_view(const struct as_stack *st, uint32_t skip_kernel, unsigned flags,
			 const struct stack_crates *crates, uint32_t *idx, int32_t *own,
			 uint32_t *n_user)
{
	uint32_t nk = st ? st->n_kernel : 0, nu = st ? st->n_user : 0, n = 0;
	int32_t k_at = -1, first_own = -1;

	*own = -1;
	*n_user = 0;
	if (!st)
		return 0;
	if (skip_kernel > nk)
		skip_kernel = nk;
	/* user frames outermost first: k = 0 .. nu - 1 is frames[nk + nu - 1 - k] */
	enum frame_kind kinds[AS_STACK_MAX_FRAMES * 2];
	uint32_t nuk = nu < AS_STACK_MAX_FRAMES * 2 ? nu : AS_STACK_MAX_FRAMES * 2;
	for (uint32_t k = 0; k < nuk; k++) {
		kinds[k] = stack_frame_kind(st->frames[nk + nu - 1 - k].sym, crates);
		if (kinds[k] == FRAME_OWN) {
			k_at = (int32_t)k;   /* the innermost own frame */
			if (first_own < 0)
				first_own = (int32_t)k;
		}
	}
	if (k_at < 0)
		for (uint32_t k = 0; k < nuk; k++)
			if (kinds[k] == FRAME_LIBRARY) {
				k_at = (int32_t)k;   /* the outermost library frame */
				break;
			}
	if (flags & STACK_FOLD_THREAD) {
		/* the thread's start only: up to its runtime's loop, or its first
		 * frame that is no scaffolding */
		k_at = -1;
		for (uint32_t k = 0; k < nuk; k++) {
			const struct frame_rule *r = kinds[k] == FRAME_SCAFFOLD
				? scaffold_rule(st->frames[nk + nu - 1 - k].sym) : NULL;
			if ((r && r->loop) || kinds[k] == FRAME_OWN || kinds[k] == FRAME_LIBRARY) {
				k_at = (int32_t)k;
				break;
			}
		}
	}
	if (flags & STACK_FOLD_ALL)
		k_at = -1;
	for (uint32_t k = 0; k < nuk; k++) {
		if ((int32_t)k < k_at && (kinds[k] == FRAME_SCAFFOLD || kinds[k] == FRAME_UNKNOWN))
			continue;
		if ((int32_t)k == first_own)
			*own = (int32_t)n;
		idx[n++] = nk + nu - 1 - k;
	}
	*n_user = n;
	for (uint32_t i = nk; i-- > skip_kernel;)
		idx[n++] = i;
	return n;
}

void stack_frame_clean(char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == ';')
			*s = ',';
		else if (c < 0x20 || c == 0x7f)
			*s = c == '\n' ? ' ' : '?';
	}
}

int stack_fold_line(const struct as_stack *st, uint32_t skip_kernel, unsigned flags,
		    const struct stack_crates *crates, struct stack_line *out)
{
	uint32_t idx[AS_STACK_MAX_FRAMES * 4], nu;
	int32_t own;
	uint32_t n = st && (uint32_t)st->n_kernel + st->n_user <= AS_STACK_MAX_FRAMES * 4
		     ? stack_fold_view(st, skip_kernel, flags, crates, idx, &own, &nu) : 0;
	size_t len = 1;

	*out = (struct stack_line){ .own = -1, .kernel = -1 };
	if (!n)
		own = -1;
	for (uint32_t i = 0; i < n; i++)
		len += strlen(st->frames[idx[i]].sym) + 20;
	char *s = malloc(len), *p = s;
	if (!s)
		return -ENOMEM;
	*p = '\0';
	for (uint32_t i = 0; i < n; i++) {
		const struct as_frame *f = &st->frames[idx[i]];
		char *start;

		if (i)
			*p++ = ';';
		start = p;
		if (*f->sym)
			p += sprintf(p, "%s", f->sym);
		else
			p += sprintf(p, "0x%llx", (unsigned long long)f->addr);
		stack_frame_clean(start);
	}
	*out = (struct stack_line){ .s = s, .n = n, .own = own,
				    .kernel = n > nu ? (int32_t)nu : -1 };
	return 0;
}

char *stack_fold(const struct as_stack *st, uint32_t skip_kernel, unsigned flags)
{
	struct stack_line l;

	return stack_fold_line(st, skip_kernel, flags, NULL, &l) ? NULL : l.s;
}
