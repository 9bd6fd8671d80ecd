/* The recorder: target set-up, probe plan, BPF attach, and the ring-buffer
 * consumer that turns raw BPF records into trace events. Kernel records are
 * untrusted input: sizes and type tags are checked before any cast. */
#include "record/recorder.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "events.h"
#include "asyncscope.skel.h"
#include "probe/attach.h"
#include "probe/futures_plan.h"
#include "probe/plan.h"
#include "sym/elf_image.h"
#include "sym/kallsyms.h"
#include "sym/proc_syms.h"
#include "sym/dwarf_unwind.h"
#include "sym/usdt_notes.h"
#include "trace/event.h"
#include "trace/writer.h"
#include "util/strtab.h"
#include "util/u64map.h"

/* The last event of a thread, when it was a wake: a runtime whose wake
 * paths call one another out of line reports one wake at two probe points. */
struct last_wake {
	uint64_t task, ts;
	uint16_t probe;
	bool valid;
};

/* A FREE held back until the poll that task runs on another thread ends
 * (async-task: the Task handle's owner may free a completed task while its
 * last run is still returning on a worker). */
struct held_free {
	struct as_event ev;
	uint32_t poll_tid;         /* the thread running the task's poll */
};

/* --dwarf: depths of the user stacks unwound, for one kind of record
 * (struct recorder_unwind), with their distributions for the medians. */
struct unwind_stats {
	uint64_t stacks, frames, fp_frames, fp_kept;
	uint64_t hist[AS_OFFCPU_FRAMES + 1], fp_hist[AS_OFFCPU_FRAMES + 1];
};

/* What DWARF says of a user code address (record --offcpu / --sample). */
struct expansion {
	struct proc_sym_inline *inl;   /* functions inlined there, innermost first */
	size_t n;
	char file[AS_FRAME_FILE_MAX + 1]; /* the code's (or the call of inl's
	                                     outermost) file, "" unknown */
	uint32_t line;
};

struct rec {
	struct trace_writer *w;
	struct u64map live;        /* task headers seen and not freed */
	struct u64map running;     /* task header -> tid + 1 of its poll in progress */
	struct held_free *held;
	size_t n_held, cap_held;
	struct u64map thread_idx;  /* tid + 1 -> index into last */
	struct last_wake *last;
	size_t n_threads;
	uint64_t tasks, missed, write_errors, nested_wakes, events;
	size_t n_probes;
	const struct probe_plan *plan;
	const struct recorder_opts *o;
	pid_t tgid;                /* the target: spawn names BPF could not read */
	/* --offcpu and --sample: symbolizers, and room for one stack's frames and names */
	struct kallsyms *ksyms;
	struct proc_syms *usyms;
	struct as_frame frames[2 * AS_STACK_MAX_FRAMES];
	char names[2 * AS_STACK_MAX_FRAMES][AS_FRAME_SYM_MAX + 1];
	/* what DWARF says of a user code address, cached (bounded by the code
	 * the stacks touch): addr -> index into exps + 1 */
	struct u64map exp_of;
	struct expansion **exps;      /* each allocated on its own: frames point into them */
	size_t n_exps, cap_exps;
	uint64_t offcpu, samples, runq, uring_sub, uring_done, stack_errors;
	uint64_t res_future_polls;
	struct dwarf_unwind *unwind;  /* --dwarf */
	struct unwind_stats uw_samples, uw_offcpu;
};

/* A nested schedule arrives a few us after its waker call (tens of us on a
 * cold path); nothing else from the thread may come between them. */
#define NESTED_WAKE_NS 1000000

/* true when ev repeats the wake that this thread just reported */
static bool nested_wake(struct rec *r, const struct as_event *ev)
{
	uint64_t idx;

	if (!u64map__get(&r->thread_idx, (uint64_t)ev->tid + 1, &idx)) {
		struct last_wake *l = realloc(r->last, (r->n_threads + 1) * sizeof(*l));
		if (!l)
			return false;
		r->last = l;
		idx = r->n_threads;
		if (u64map__set(&r->thread_idx, (uint64_t)ev->tid + 1, idx))
			return false;
		r->last[r->n_threads++] = (struct last_wake){ 0 };
	}
	struct last_wake *l = &r->last[idx];
	bool dup = ev->type == AS_EV_WAKE && l->valid && l->task == ev->task &&
		   l->probe != ev->probe && ev->ts - l->ts < NESTED_WAKE_NS;
	if (ev->type == AS_EV_WAKE && !dup)
		*l = (struct last_wake){ .task = ev->task, .ts = ev->ts, .probe = ev->probe, .valid = true };
	else if (ev->type != AS_EV_WAKE)
		l->valid = false;
	return dup;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void note_task(struct rec *r, uint64_t task)
{
	if (task && !u64map__get(&r->live, task, NULL)) {
		r->tasks++;
		if (u64map__set(&r->live, task, 1))
			r->missed++;
	}
}

/* Hands one event to the live consumer and the trace file. */
static void put(struct rec *r, const struct as_event *ev)
{
	if (nested_wake(r, ev)) {
		r->nested_wakes++;
		return;
	}
	r->events++;
	if (r->o->on_event)
		r->o->on_event(r->o->ctx, ev);
	if (r->w && trace_writer__write(r->w, ev))
		r->write_errors++;
}

/* Writes held FREE i, at ts (never before the events already written
 * about the task), and forgets it. */
static void release_free(struct rec *r, size_t i, uint64_t ts)
{
	struct as_event f = r->held[i].ev;

	if (ts > f.ts)
		f.ts = ts;
	r->held[i] = r->held[--r->n_held];
	put(r, &f);
}

static ssize_t find_held(const struct rec *r, uint64_t task)
{
	for (size_t i = 0; i < r->n_held; i++)
		if (r->held[i].ev.task == task)
			return (ssize_t)i;
	return -1;
}

/* A task freed by another thread while its poll runs (possible with
 * async-task, never with Tokio, whose poll holds a reference) is written
 * as freed when that poll ends, at the poll's end: the analysis then sees
 * a complete last poll instead of a free inside a running poll. Any other
 * event about the task first releases the held FREE as it came. */
static void deliver(struct rec *r, struct as_event *ev)
{
	uint64_t tid1 = 0;
	ssize_t h;

	if (!ev->task) {
		put(r, ev);
		return;
	}
	h = r->n_held ? find_held(r, ev->task) : -1;
	if (h >= 0 && !(ev->type == AS_EV_POLL_END && ev->tid == r->held[h].poll_tid)) {
		release_free(r, (size_t)h, 0);
		h = -1;
	}
	switch (ev->type) {
	case AS_EV_POLL_BEGIN:
		if (u64map__set(&r->running, ev->task, (uint64_t)ev->tid + 1))
			r->missed++;
		break;
	case AS_EV_POLL_END:
		if (u64map__get(&r->running, ev->task, &tid1) && tid1 == (uint64_t)ev->tid + 1)
			u64map__del(&r->running, ev->task);
		put(r, ev);
		if (h >= 0)
			release_free(r, (size_t)h, ev->ts);
		return;
	case AS_EV_FREE:
		if (u64map__get(&r->running, ev->task, &tid1) && tid1 != (uint64_t)ev->tid + 1) {
			if (r->n_held == r->cap_held) {
				size_t cap = r->cap_held ? r->cap_held * 2 : 16;
				struct held_free *n = realloc(r->held, cap * sizeof(*n));
				if (!n)
					break;  /* write it now, as it came */
				r->held = n;
				r->cap_held = cap;
			}
			u64map__del(&r->running, ev->task);
			r->held[r->n_held++] = (struct held_free){ .ev = *ev, .poll_tid = (uint32_t)(tid1 - 1) };
			return;
		}
		u64map__del(&r->running, ev->task);
		break;
	default:
		break;
	}
	put(r, ev);
}

/* The user frames of o worth keeping: a frame-pointer walk through code
 * built without frame pointers ends in garbage, so up to the first address
 * no code can have. */
static uint32_t user_depth(const struct raw_offcpu *o)
{
	uint32_t nu = o->ubytes / 8;

	if (nu > AS_OFFCPU_FRAMES)
		nu = AS_OFFCPU_FRAMES;
	for (uint32_t i = 0; i < nu; i++)
		if (o->ustack[i] < 0x10000 || o->ustack[i] >= 0x800000000000ull)
			return i;
	return nu;
}

/* Names a stack's frames (kernel first) and gives it an id in the trace;
 * 0 without a trace file or when the writer refuses it. */
/* Returns the expansion of the user code address addr (computed once):
 * the functions inlined there and the file:line of the code. NULL when out
 * of memory or addr cannot be a key (then no expansion). */
static const struct expansion *expand(struct rec *r, uint64_t addr)
{
	struct proc_sym_inline inl[PROC_SYMS_INLINE_MAX];
	char file[AS_FRAME_FILE_MAX + 1];
	uint32_t line = 0;
	uint64_t v;

	if (!addr || addr == UINT64_MAX)   /* not keys of a u64map */
		return NULL;
	if (u64map__get(&r->exp_of, addr, &v))
		return r->exps[v - 1];
	if (r->n_exps == r->cap_exps) {
		size_t cap = r->cap_exps ? r->cap_exps * 2 : 256;
		struct expansion **es = realloc(r->exps, cap * sizeof(*es));
		if (!es)
			return NULL;
		r->exps = es;
		r->cap_exps = cap;
	}
	size_t n = proc_syms__inlined(r->usyms, addr, inl, PROC_SYMS_INLINE_MAX, file, sizeof(file),
				      &line);
	struct expansion *e = calloc(1, sizeof(*e));
	if (!e || (n && !(e->inl = malloc(n * sizeof(*e->inl))))) {
		free(e);
		return NULL;
	}
	if (n)
		memcpy(e->inl, inl, n * sizeof(*e->inl));
	e->n = n;
	if (file[0] && line) {
		snprintf(e->file, sizeof(e->file), "%s", file);
		e->line = line;
	}
	if (u64map__set(&r->exp_of, addr, r->n_exps + 1)) {
		free(e->inl);
		free(e);
		return NULL;
	}
	r->exps[r->n_exps++] = e;
	return e;
}

static uint32_t stack_id(struct rec *r, const struct raw_offcpu *o)
{
	uint32_t nk = o->kbytes / 8, nu = user_depth(o), id = 0;

	if (!r->w || (!nk && !nu))
		return 0;
	if (nk > AS_STACK_MAX_FRAMES)
		nk = AS_STACK_MAX_FRAMES;
	if (nu > AS_STACK_MAX_FRAMES)
		nu = AS_STACK_MAX_FRAMES;
	for (uint32_t i = 0; i < nk; i++) {
		char *name = r->names[i];
		const char *k = kallsyms__lookup(r->ksyms, o->kstack[i]);
		snprintf(name, AS_FRAME_SYM_MAX + 1, "%s", k ? k : "");
		r->frames[i] = (struct as_frame){ .addr = o->kstack[i], .sym = name };
	}
	/* user frames, each preceded by the functions inlined at it (DWARF),
	 * innermost first, up to AS_STACK_MAX_FRAMES in all */
	uint32_t out = 0;
	for (uint32_t j = 0; j < nu && out < AS_STACK_MAX_FRAMES; j++) {
		uint64_t addr = o->ustack[j];
		/* a return address points after its call: look up the call */
		uint64_t at = j == 0 ? addr : addr - 1;
		const struct expansion *e = r->usyms ? expand(r, at) : NULL;
		for (size_t k = 0; e && k < e->n && out < AS_STACK_MAX_FRAMES; k++, out++)
			r->frames[nk + out] = (struct as_frame){
				.addr = addr, .sym = e->inl[k].name,
				.file = e->inl[k].file[0] ? e->inl[k].file : NULL, .line = e->inl[k].line,
			};
		if (out >= AS_STACK_MAX_FRAMES)
			break;
		char *name = r->names[nk + out];
		name[0] = '\0';
		if (r->usyms)
			proc_syms__name(r->usyms, at, name, AS_FRAME_SYM_MAX + 1);
		r->frames[nk + out] = (struct as_frame){
			.addr = addr, .sym = name, .file = e && e->file[0] ? e->file : NULL,
			.line = e ? e->line : 0,
		};
		out++;
	}
	struct as_stack s = { .n_kernel = (uint16_t)nk, .n_user = (uint16_t)out, .frames = r->frames };
	if (trace_writer__stack(r->w, &s, &id)) {
		r->stack_errors++;
		return 0;
	}
	return id;
}

/* An off-CPU interval: written as it comes (its timestamp is its start, in
 * the past; the trace takes events out of order), outside the wake and
 * free bookkeeping, which are about the runtime's own events. */
static void on_offcpu(struct rec *r, const struct raw_offcpu *o)
{
	struct as_event ev = {
		.type = AS_EV_OFFCPU, .tid = o->h.tid, .ts = o->h.ts, .task = o->task,
		.other = o->dur_ns, .flags = o->h.flags & RAW_F_PREEMPTED ? AS_OFFCPU_PREEMPTED : 0,
	};

	ev.stack = stack_id(r, o);
	r->offcpu++;
	r->events++;
	if (r->o->on_event)
		r->o->on_event(r->o->ctx, &ev);
	if (r->w && trace_writer__write(r->w, &ev))
		r->write_errors++;
}

/* A CPU sample: written as it comes, like an off-CPU interval. */
static void on_sample(struct rec *r, const struct raw_offcpu *o)
{
	struct as_event ev = {
		.type = AS_EV_SAMPLE, .tid = o->h.tid, .ts = o->h.ts, .task = o->task,
	};

	ev.stack = stack_id(r, o);
	r->samples++;
	r->events++;
	if (r->o->on_event)
		r->o->on_event(r->o->ctx, &ev);
	if (r->w && trace_writer__write(r->w, &ev))
		r->write_errors++;
}

/* A record with copied registers and stack (a CPU sample or an off-CPU
 * interval, record --dwarf): out = d->s with the user stack unwound by
 * DWARF, unless the frame-pointer walk found more frames (code without
 * call frame information, or a stack deeper than the copy); both depths
 * counted in st. */
static void unwind_user(struct rec *r, const struct raw_sample_dwarf *d, struct raw_offcpu *out,
			struct unwind_stats *st)
{
	uint64_t pcs[AS_OFFCPU_FRAMES];
	uint32_t fp = user_depth(&d->s), kept = fp;

	*out = d->s;
	struct dwarf_unwind_fix fix = {
		.slot = (const uint64_t *)d->uret_slot, .orig = (const uint64_t *)d->uret_orig,
		.n = d->n_uret <= AS_URET_MAX ? (int)d->n_uret : AS_URET_MAX,
	};
	int n = dwarf_unwind__stack(r->unwind, d->s.h.tid, (const uint64_t *)d->regs, d->copy,
				    d->copy_len <= AS_USTACK_COPY ? d->copy_len : 0, &fix, pcs,
				    AS_OFFCPU_FRAMES);
	if (n <= 0)
		return;  /* no unwinding session: the frame-pointer walk as it is */
	if ((uint32_t)n >= fp) {
		memcpy(out->ustack, pcs, (size_t)n * sizeof(pcs[0]));
		out->ubytes = (uint32_t)n * 8;
		kept = (uint32_t)n;
	} else {
		st->fp_kept++;
	}
	st->stacks++;
	st->frames += kept;
	st->fp_frames += fp;
	st->hist[kept]++;
	st->fp_hist[fp]++;
}

/* The median of a depth distribution over n stacks (0 for none). */
static uint32_t median_depth(const uint64_t *hist, uint64_t n)
{
	uint64_t seen = 0;

	for (uint32_t k = 0; k <= AS_OFFCPU_FRAMES; k++) {
		seen += hist[k];
		if (n && seen * 2 >= n)
			return k;
	}
	return 0;
}

static struct recorder_unwind unwind_result(const struct unwind_stats *st)
{
	return (struct recorder_unwind){
		.stacks = st->stacks, .frames = st->frames, .fp_frames = st->fp_frames,
		.fp_kept = st->fp_kept, .median = median_depth(st->hist, st->stacks),
		.fp_median = median_depth(st->fp_hist, st->stacks),
	};
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct rec *r = ctx;
	const struct raw_hdr *h = data;
	struct as_event ev = { 0 };
	char buf[AS_LOC_FILE_MAX + 1];

	if (size < sizeof(*h))
		goto bad;
	if (h->type == RAW_OFFCPU) {
		const struct raw_offcpu *o = data;
		if (!r->o->offcpu || size < sizeof(*o) || o->kbytes > sizeof(o->kstack) ||
		    o->ubytes > sizeof(o->ustack))
			goto bad;
		on_offcpu(r, o);
		return 0;
	}
	if (h->type == RAW_RUNQ) {
		const struct raw_event *e = data;
		if (!(r->o->runq || r->o->offcpu) || size < sizeof(*e))
			goto bad;
		struct as_event rev = {
			.type = AS_EV_RUNQ, .tid = e->h.tid, .ts = e->h.ts, .task = e->task, .other = e->arg,
		};
		r->runq++;
		r->events++;
		if (r->o->on_event)
			r->o->on_event(r->o->ctx, &rev);
		if (r->w && trace_writer__write(r->w, &rev))
			r->write_errors++;
		return 0;
	}
	if (h->type == RAW_URING) {
		const struct raw_event *e = data;
		if (!r->o->uring || size < sizeof(*e))
			goto bad;
		bool done = e->h.flags & RAW_F_URING_DONE;
		struct as_event uev = {
			.type = AS_EV_URING, .tid = e->h.tid, .ts = e->h.ts, .task = e->task, .other = e->arg,
			.flags = done ? AS_URING_COMPLETE | (e->h.flags & RAW_F_URING_ERR ? AS_URING_ERROR : 0) : 0,
		};
		if (done)
			r->uring_done++;
		else
			r->uring_sub++;
		r->events++;
		if (r->o->on_event)
			r->o->on_event(r->o->ctx, &uev);
		if (r->w && trace_writer__write(r->w, &uev))
			r->write_errors++;
		return 0;
	}
	if (h->type == RAW_SAMPLE_DWARF || h->type == RAW_OFFCPU_DWARF) {
		const struct raw_sample_dwarf *d = data;
		bool off = h->type == RAW_OFFCPU_DWARF;
		struct raw_offcpu s;
		if (!(off ? r->o->offcpu : r->o->sample_hz) || !r->o->dwarf || size < sizeof(*d) ||
		    d->s.kbytes > sizeof(d->s.kstack) || d->s.ubytes > sizeof(d->s.ustack))
			goto bad;
		unwind_user(r, d, &s, off ? &r->uw_offcpu : &r->uw_samples);
		if (off)
			on_offcpu(r, &s);
		else
			on_sample(r, &s);
		return 0;
	}
	if (h->type == RAW_SAMPLE) {
		const struct raw_offcpu *o = data;
		if (!r->o->sample_hz || size < sizeof(*o) || o->kbytes > sizeof(o->kstack) ||
		    o->ubytes > sizeof(o->ustack))
			goto bad;
		on_sample(r, o);
		return 0;
	}
	if (h->probe >= r->n_probes && h->type != RAW_THREAD)
		goto bad;
	ev.probe = h->type == RAW_THREAD ? 0 : h->probe;
	ev.tid = h->tid;
	ev.ts = h->ts;
	switch (h->type) {
	case RAW_THREAD: {
		const struct raw_thread *t = data;
		if (size < sizeof(*t))
			goto bad;
		memcpy(buf, t->comm, AS_COMM_LEN);
		buf[AS_COMM_LEN] = '\0';
		ev.type = AS_EV_THREAD;
		ev.str = buf;
		break;
	}
	case RAW_SPAWN: {
		const struct raw_spawn *s = data;
		if (size < sizeof(*s) || s->file_len > AS_LOC_FILE_MAX)
			goto bad;
		memcpy(buf, s->file, s->file_len);
		buf[s->file_len] = '\0';
		if (!s->file_len && s->want_len && s->file_ptr) {
			/* BPF reads without faulting pages in: a .rodata string
			 * nobody touched yet; process_vm_readv faults it in */
			size_t want = s->want_len < AS_LOC_FILE_MAX ? s->want_len : AS_LOC_FILE_MAX;
			struct iovec local = { buf, want }, remote = { (void *)(uintptr_t)s->file_ptr, want };
			ssize_t got = process_vm_readv((pid_t)r->tgid, &local, 1, &remote, 1, 0);
			buf[got > 0 ? got : 0] = '\0';
		}
		ev.type = AS_EV_SPAWN;
		ev.str = buf;
		ev.other = (uint64_t)s->line << 32 | s->col;
		break;
	}
	case RAW_FUT_ENTER: case RAW_FUT_EXIT: {
		const struct raw_event *e = data;
		if (size < sizeof(*e) || r->plan->probes[h->probe].role != AS_ROLE_FUTURE)
			goto bad;
		if (h->flags & RAW_F_UNMATCHED) {
			/* a frame entered before the probes were attached */
			r->missed++;
			return 0;
		}
		ev.type = h->type == RAW_FUT_ENTER ? AS_EV_FUTURE_ENTER : AS_EV_FUTURE_EXIT;
		ev.task = e->task;
		ev.other = e->arg;
		ev.flags = (h->flags & RAW_F_READY ? AS_FUTURE_READY : 0) |
			   (h->flags & RAW_F_PENDING ? AS_FUTURE_PENDING : 0);
		if (h->type == RAW_FUT_ENTER)
			r->res_future_polls++;
		break;
	}
	case RAW_USDT: {
		const struct raw_event *e = data;
		if (size < sizeof(*e) || r->plan->probes[h->probe].role != AS_ROLE_USDT)
			goto bad;
		ev.type = AS_EV_USDT;
		ev.task = e->task;
		ev.other = usdt_arg_value(&r->plan->usdt_arg[h->probe], e->arg);
		break;
	}
	case RAW_POLL_BEGIN: case RAW_POLL_END: case RAW_WAKE: case RAW_FREE:
	case RAW_PARK: case RAW_UNPARK: {
		static const uint8_t map[] = {
			[RAW_POLL_BEGIN] = AS_EV_POLL_BEGIN, [RAW_POLL_END] = AS_EV_POLL_END,
			[RAW_WAKE] = AS_EV_WAKE, [RAW_FREE] = AS_EV_FREE,
			[RAW_PARK] = AS_EV_PARK, [RAW_UNPARK] = AS_EV_UNPARK,
		};
		const struct raw_event *e = data;
		if (size < sizeof(*e))
			goto bad;
		if (h->type == RAW_POLL_END && (h->flags & RAW_F_UNMATCHED)) {
			/* a poll that began before the probes were attached */
			r->missed++;
			return 0;
		}
		ev.type = map[h->type];
		ev.task = e->task;
		ev.other = e->arg;
		if (h->type == RAW_POLL_END && (h->flags & RAW_F_READY))
			ev.flags = AS_POLL_READY;
		else if (h->type == RAW_WAKE)
			ev.flags = (h->flags & RAW_F_WAKE_IO ? AS_WAKE_IO : 0) |
				   (h->flags & RAW_F_WAKE_TIMER ? AS_WAKE_TIMER : 0);
		if (ev.type == AS_EV_FREE)
			u64map__del(&r->live, e->task);
		else
			note_task(r, ev.task);
		break;
	}
	default:
		goto bad;
	}
	deliver(r, &ev);
	return 0;
bad:
	r->missed++;
	return 0;
}

/* argv[0] as execvp would find it. */
static int resolve_command(const char *cmd, char *out, size_t len)
{
	if (strchr(cmd, '/')) {
		if (access(cmd, X_OK))
			return -errno;
		return len >= PATH_MAX && realpath(cmd, out) ? 0 : -errno;
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t n = end ? (size_t)(end - path) : strlen(path);
		char cand[PATH_MAX];
		if (n && snprintf(cand, sizeof(cand), "%.*s/%s", (int)n, path, cmd) < (int)sizeof(cand) &&
		    !access(cand, X_OK))
			return len >= PATH_MAX && realpath(cand, out) ? 0 : -errno;
		path += n + (end ? 1 : 0);
	}
	return -ENOENT;
}

static char *read_cmdline(pid_t pid)
{
	char path[64], buf[4096];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return strdup("");
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return strdup("");
	for (ssize_t i = 0; i < n - 1; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return strdup(buf);
}

static char *join_argv(char *const *argv)
{
	size_t len = 1;
	for (size_t i = 0; argv[i]; i++)
		len += strlen(argv[i]) + 1;
	char *s = calloc(1, len);
	if (!s)
		return NULL;
	for (size_t i = 0; argv[i]; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

/* Child: wait for the go byte, then exec. */
static void child_exec(int gofd, char *const *argv, const char *stdio)
{
	char c;

	if (read(gofd, &c, 1) != 1)
		_exit(127);
	close(gofd);
	if (stdio) {
		int fd = open(stdio, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
	}
	execvp(argv[0], argv);
	fprintf(stderr, "asyncscope: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

static void stop_child(pid_t child, int *status)
{
	if (waitpid(child, status, WNOHANG) == child)
		return;
	kill(child, SIGTERM);
	for (int i = 0; i < 200; i++) {
		if (waitpid(child, status, WNOHANG) == child)
			return;
		usleep(10000);
	}
	kill(child, SIGKILL);
	waitpid(child, status, 0);
}

int recorder_run(const struct recorder_opts *o, struct recorder_result *res,
		 char *err, size_t errlen)
{
	char binary[PATH_MAX], attach_path[PATH_MAX];
	struct elf_image *img = NULL;
	struct usdt_notes *notes = NULL;
	struct probe_plan *plan = NULL;
	struct attachment *att = NULL;
	struct ring_buffer *rb = NULL;
	struct rec r = { 0 };
	struct as_trace_meta meta = { 0 };
	const struct runtime_profile *profs[PLAN_MAX_PROFILES];
	int n_profs = 0;
	pid_t child = -1, tgid = o->pid;
	int gopipe[2] = { -1, -1 }, ret = 0, status = -1;
	bool target_gone = false;

	memset(res, 0, sizeof(*res));
	res->target_status = -1;
	if (o->runtime) {
		char bad[64];
		n_profs = profile_parse(o->runtime, profs, PLAN_MAX_PROFILES, bad, sizeof(bad));
		if (n_profs < 0) {
			snprintf(err, errlen, "unknown runtime '%s': supported runtimes are: %s "
				 "(several joined by '+')", bad, profile_known_names());
			return -EINVAL;
		}
	}
	ret = attach_check_kernel(err, errlen);
	if (ret)
		return ret;

	if (o->argv) {
		ret = resolve_command(o->argv[0], binary, sizeof(binary));
		if (ret) {
			snprintf(err, errlen, "cannot run %s: %s", o->argv[0], strerror(-ret));
			return ret;
		}
		snprintf(attach_path, sizeof(attach_path), "%s", binary);
		meta.cmdline = join_argv(o->argv);
	} else {
		char exe[64];
		snprintf(exe, sizeof(exe), "/proc/%d/exe", o->pid);
		if (kill(o->pid, 0) && errno == ESRCH) {
			snprintf(err, errlen, "no process with pid %d: check the pid (ps -e) and that "
				 "the program is still running", o->pid);
			return -ESRCH;
		}
		ssize_t n = readlink(exe, binary, sizeof(binary) - 1);
		if (n < 0) {
			ret = -errno;
			snprintf(err, errlen, "cannot read %s: %s%s", exe, strerror(errno),
				 errno == EACCES || errno == EPERM ? ": run as root (sudo)" : "");
			return ret;
		}
		binary[n] = '\0';
		/* the kernel resolves the magic link even if the file was replaced */
		snprintf(attach_path, sizeof(attach_path), "%s", exe);
		meta.cmdline = read_cmdline(o->pid);
	}

	img = elf_image__open(attach_path);
	if (!img) {
		ret = -errno;
		if (errno == ENOEXEC)
			snprintf(err, errlen, "%s is not a 64-bit ELF executable: point asyncscope at "
				 "the compiled program, not a script or wrapper", binary);
		else
			snprintf(err, errlen, "cannot read %s: %s", binary, strerror(errno));
		goto cleanup;
	}
	if (o->n_usdt) {
		notes = usdt_notes__read(attach_path);
		if (!notes) {
			ret = -errno;
			snprintf(err, errlen, "cannot read the USDT notes of %s: %s", binary,
				 errno == EBADMSG ? "malformed .note.stapsdt section" : strerror(errno));
			goto cleanup;
		}
	}
	plan = probe_plan__build_usdt(img, profs, (size_t)n_profs, notes, o->usdt, o->n_usdt,
				      err, errlen);
	if (!plan) {
		ret = -ENOENT;
		goto cleanup;
	}
	if (o->futures || o->n_probe_patterns || o->probe_preset_cat) {
		struct futures_opts fo = { .futures = o->futures, .patterns = o->probe_patterns,
					   .n_patterns = o->n_probe_patterns,
					   .preset_cat = o->probe_preset_cat };
		struct futures_plan_stats fs;
		ret = futures_plan_add(plan, img, &fo, &fs, err, errlen);
		if (ret < 0)
			goto cleanup;
		res->future_probes = fs.planned;
		res->future_state_machines = fs.state_machines;
		res->future_with_source = fs.with_source;
		res->future_over_max = fs.over_max;
		res->future_dwarf = fs.dwarf;
		if (!fs.planned && !o->quiet)
			fprintf(stderr, "asyncscope: warning: --futures found no out-of-line async fn or "
				"Future::poll function of the target's own crates in %s (all inlined?): "
				"use --probe REGEX to name functions\n", binary);
		if (fs.unwinds && !o->quiet)
			fprintf(stderr, "asyncscope: warning: a panic that unwinds through a probed future "
				"aborts %s (the return probe hides the return address from the unwinder): "
				"trace futures where panics are not expected, or build with panic = "
				"\"abort\"\n", binary);
		if (fs.unprobeable && !o->quiet)
			fprintf(stderr, "asyncscope: warning: %zu matched functions start with an instruction "
				"uprobes cannot take (a lock prefix, ...): not probed\n", fs.unprobeable);
		if (fs.over_max && !o->quiet)
			fprintf(stderr, "asyncscope: warning: %zu more functions matched than the %zu "
				"probed: narrow them with --probe REGEX\n", fs.over_max, fs.planned);
	}

	if (o->argv) {
		if (pipe2(gopipe, O_CLOEXEC)) {
			ret = -errno;
			snprintf(err, errlen, "pipe: %s", strerror(errno));
			goto cleanup;
		}
		child = fork();
		if (child < 0) {
			ret = -errno;
			snprintf(err, errlen, "fork: %s", strerror(errno));
			goto cleanup;
		}
		if (child == 0) {
			close(gopipe[1]);
			child_exec(gopipe[0], o->argv, o->child_stdio);
		}
		close(gopipe[0]);
		gopipe[0] = -1;
		tgid = child;
	}

	struct attach_extra extra = { .offcpu = o->offcpu,
				      .offcpu_min_ns = o->offcpu_min_ns ? o->offcpu_min_ns : 100000,
				      .sample_hz = o->sample_hz, .sample_dwarf = o->sample_hz && o->dwarf,
				      .offcpu_dwarf = o->offcpu && o->dwarf, .runq = o->runq || o->offcpu,
				      .uring = o->uring };
	if (o->offcpu || o->sample_hz) {
		/* kernel names now: a report may run where this kernel is not */
		r.ksyms = kallsyms__load(NULL);
		if (!r.ksyms)
			fprintf(stderr, "asyncscope: warning: cannot read /proc/kallsyms (%s): "
				"kernel frames will have no names\n", strerror(errno));
		r.usyms = proc_syms__new(tgid, NULL);
		if (o->dwarf && !(r.unwind = dwarf_unwind__new(tgid)))
			fprintf(stderr, "asyncscope: warning: cannot start DWARF unwinding (%s): user stacks "
				"will have the frame-pointer walk\n", strerror(errno));
	}
	att = attachment__load(plan, tgid, o->ringbuf_bytes, &extra, err, errlen);
	if (!att) {
		ret = -EPERM;
		goto cleanup;
	}
	meta.format_version = 0; /* the writer stamps its own */
	meta.pid = (uint32_t)tgid;
	meta.target = binary;
	meta.build_id = img->build_id;
	meta.runtime = plan->runtime;
	meta.probes = plan->probes;
	meta.n_probes = (uint32_t)plan->n;
	meta.clock_mono_ns = now_ns(CLOCK_MONOTONIC);
	meta.clock_real_ns = now_ns(CLOCK_REALTIME);
	r.n_probes = plan->n;
	r.plan = plan;
	r.o = o;
	r.tgid = tgid;
	if (o->output)
		r.w = trace_writer__new(o->output, &meta);
	if (o->output && !r.w) {
		ret = -errno;
		snprintf(err, errlen, "cannot write trace file %s: %s", o->output, strerror(errno));
		goto cleanup;
	}
	/* attach first: it may reload the programs (and their maps) */
	ret = attachment__attach(att, attach_path, err, errlen);
	if (ret < 0)
		goto cleanup;
	int attached = ret;
	rb = ring_buffer__new(bpf_map__fd(attachment__skel(att)->maps.events), on_record, &r, NULL);
	if (!rb) {
		ret = -errno;
		snprintf(err, errlen, "failed to open the BPF ring buffer: %s", strerror(errno));
		goto cleanup;
	}
	if (!o->quiet) {
		char usdt[64] = "";
		if (plan->per_role[AS_ROLE_USDT])
			snprintf(usdt, sizeof(usdt), ", %zu usdt", plan->per_role[AS_ROLE_USDT]);
		if (plan->per_role[AS_ROLE_FUTURE])
			snprintf(usdt + strlen(usdt), sizeof(usdt) - strlen(usdt), ", %zu future",
				 plan->per_role[AS_ROLE_FUTURE]);
		fprintf(stderr, "asyncscope: attached %d probes (%zu poll, %zu wake, %zu spawn, "
			"%zu free, %zu park%s) to pid %d (%s, %s); recording to %s, Ctrl-C to stop\n",
			attached, plan->per_role[AS_ROLE_POLL], plan->per_role[AS_ROLE_WAKE],
			plan->per_role[AS_ROLE_SPAWN], plan->per_role[AS_ROLE_FREE],
			plan->per_role[AS_ROLE_PARK], usdt, tgid, binary, plan->runtime,
			o->output ? o->output : "no file");
	}
	ret = 0;
	if (o->on_start)
		o->on_start(o->ctx, &meta);
	if (child > 0 && write(gopipe[1], "g", 1) != 1) {
		ret = -errno;
		snprintf(err, errlen, "cannot start %s: %s", binary, strerror(errno));
		goto cleanup;
	}

	uint64_t start = now_ns(CLOCK_MONOTONIC), last_flush = start;
	uint64_t deadline = o->duration > 0 ? start + (uint64_t)(o->duration * 1e9) : 0;
	while (!*o->stop) {
		/* BPF wakes us only when the buffer fills up: drain on a timer */
		int n = ring_buffer__poll(rb, 20);
		if (n >= 0 || n == -EINTR)
			n = ring_buffer__consume(rb);
		if (n < 0 && n != -EINTR) {
			ret = n;
			snprintf(err, errlen, "reading the ring buffer: %s", strerror(-n));
			break;
		}
		uint64_t now = now_ns(CLOCK_MONOTONIC);
		if (deadline && now >= deadline)
			break;
		if (o->on_tick) {
			struct raw_counters c;
			attachment__counters(att, &c);
			if (o->on_tick(o->ctx, now, c.lost, r.missed + c.depth_overflow + c.no_thread_slot))
				break;
		}
		if (child > 0 ? waitpid(child, &status, WNOHANG) == child
			      : (kill(tgid, 0) && errno == ESRCH)) {
			target_gone = true;
			break;
		}
		if (now - last_flush >= 1000000000ull) {
			struct raw_counters c;
			last_flush = now;
			if (r.w)
				trace_writer__flush(r.w);
			attachment__counters(att, &c);
			if (o->progress)
				fprintf(stderr, "\rasyncscope: %.0f s, %llu events, %llu tasks, %llu lost ",
					(double)(now - start) / 1e9,
					(unsigned long long)r.events,
					(unsigned long long)r.tasks, (unsigned long long)c.lost);
		}
	}
	if (o->progress)
		fprintf(stderr, "\r\033[K");
	ring_buffer__consume(rb);
	if (child > 0 && !target_gone)
		stop_child(child, &status);
	if (child > 0) {
		ring_buffer__consume(rb);
		res->target_status = status;
		child = -1;
	}

	/* frees still held: their poll never ended (the target exited first) */
	while (r.n_held)
		release_free(&r, r.n_held - 1, 0);
	struct raw_counters c;
	attachment__counters(att, &c);
	struct as_trace_end end = {
		.events = r.w ? trace_writer__events(r.w) : r.events,
		.lost = c.lost,
		.missed = r.missed + r.write_errors + r.stack_errors + c.depth_overflow +
			  c.no_thread_slot + c.offcpu_dropped + c.runq_dropped + c.uring_dropped +
			  c.fut_depth_overflow,
		.end_ns = now_ns(CLOCK_MONOTONIC),
	};
	int fret = r.w ? trace_writer__finish(r.w, &end) : 0;
	if (fret && !ret) {
		ret = fret;
		snprintf(err, errlen, "writing trace file %s: %s", o->output, strerror(-fret));
	}
	res->events = end.events;
	res->tasks = r.tasks;
	res->lost = end.lost;
	res->missed = end.missed;
	res->offcpu = r.offcpu;
	res->samples = r.samples;
	res->unwind_samples = unwind_result(&r.uw_samples);
	res->unwind_offcpu = unwind_result(&r.uw_offcpu);
	res->runq = r.runq;
	res->future_polls = r.res_future_polls;
	res->uring_submitted = r.uring_sub;
	res->uring_completed = r.uring_done;
	res->stacks = r.w ? trace_writer__stacks(r.w) : 0;
	res->bytes = r.w ? trace_writer__bytes(r.w) : 0;
cleanup:
	if (child > 0) {
		/* set-up failed after fork: the child is waiting for the go byte */
		close(gopipe[1]);
		gopipe[1] = -1;
		waitpid(child, NULL, 0);
	}
	if (gopipe[0] >= 0)
		close(gopipe[0]);
	if (gopipe[1] >= 0)
		close(gopipe[1]);
	ring_buffer__free(rb);
	trace_writer__free(r.w);
	attachment__free(att);
	kallsyms__free(r.ksyms);
	proc_syms__free(r.usyms);
	u64map__clear(&r.exp_of);
	for (size_t i = 0; i < r.n_exps; i++) {
		free(r.exps[i]->inl);
		free(r.exps[i]);
	}
	free(r.exps);
	dwarf_unwind__free(r.unwind);
	u64map__clear(&r.live);
	u64map__clear(&r.running);
	free(r.held);
	u64map__clear(&r.thread_idx);
	free(r.last);
	probe_plan__free(plan);
	usdt_notes__free(notes);
	elf_image__free(img);
	free(meta.cmdline);
	return ret;
}
