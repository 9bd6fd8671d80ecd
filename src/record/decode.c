/* Raw BPF records -> trace events (decode.h): one switch on the type tag. */
#include "record/decode.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* A stack record's lengths fit its arrays. */
static bool stack_ok(const struct raw_offcpu *o)
{
	return o->kbytes <= sizeof(o->kstack) && o->ubytes <= sizeof(o->ustack);
}

int rec_decode(const struct rec_decoder *d, const void *data, size_t size, struct rec_decoded *out)
{
	const struct raw_hdr *h = data;
	const struct raw_event *e = data;
	struct as_event *ev = &out->ev;

	if (size < sizeof(*h))
		return -EBADMSG;
	memset(ev, 0, sizeof(*ev));
	out->path = REC_PATH_PROBE;
	out->stack = NULL;
	out->regs = NULL;
	out->spawn = NULL;
	out->caller = 0;
	out->no_id = false;
	ev->tid = h->tid;
	ev->ts = h->ts;
	/* records of a probe name it: an index into the plan */
	switch (h->type) {
	case RAW_POLL_BEGIN: case RAW_POLL_END: case RAW_WAKE: case RAW_FREE:
	case RAW_PARK: case RAW_UNPARK: case RAW_SPAWN: case RAW_USDT: case RAW_TASK_NAME:
	case RAW_FUT_ENTER: case RAW_FUT_EXIT: case RAW_SPAWN_STACK:
		if (h->probe >= d->plan->n)
			return -EBADMSG;
		ev->probe = h->probe;
		break;
	default:
		break;
	}

	switch (h->type) {
	case RAW_OFFCPU: case RAW_SAMPLE: {
		const struct raw_offcpu *o = data;
		bool off = h->type == RAW_OFFCPU;
		if (!(off ? d->offcpu : d->sample) || size < sizeof(*o) || !stack_ok(o))
			return -EBADMSG;
		out->path = REC_PATH_STACKED;
		out->stack = o;
		break;
	}
	case RAW_OFFCPU_DWARF: case RAW_SAMPLE_DWARF: {
		const struct raw_sample_dwarf *r = data;
		bool off = h->type == RAW_OFFCPU_DWARF;
		if (!(off ? d->offcpu : d->sample) || !d->dwarf || size < sizeof(*r) || !stack_ok(&r->s))
			return -EBADMSG;
		out->path = REC_PATH_STACKED;
		out->stack = &r->s;
		out->regs = r;
		break;
	}
	case RAW_SPAWN_STACK: {
		const struct raw_spawn_stack *r = data;
		if (size < sizeof(*r) || d->plan->probes[h->probe].role != AS_ROLE_SPAWN ||
		    !(d->plan->flags[h->probe] & PLAN_F_STACK) || r->copy_len > AS_SPAWN_COPY)
			return -EBADMSG;
		ev->type = AS_EV_SPAWN;
		ev->str = out->str;   /* "" until the call site is found */
		out->str[0] = '\0';
		out->path = REC_PATH_SPAWN_SITE;
		out->spawn = r;
		return 1;
	}
	case RAW_RUNQ:
		if (!(d->runq || d->offcpu) || size < sizeof(*e))
			return -EBADMSG;
		ev->type = AS_EV_RUNQ;
		ev->task = e->task;
		ev->other = e->arg;
		out->path = REC_PATH_DIRECT;
		return 1;
	case RAW_URING: {
		if (!d->uring || size < sizeof(*e))
			return -EBADMSG;
		bool done = h->flags & RAW_F_URING_DONE;
		ev->type = AS_EV_URING;
		ev->task = e->task;
		ev->other = e->arg;
		ev->flags = done ? AS_URING_COMPLETE | (h->flags & RAW_F_URING_ERR ? AS_URING_ERROR : 0) : 0;
		out->path = REC_PATH_DIRECT;
		return 1;
	}
	case RAW_THREAD: {
		const struct raw_thread *t = data;
		if (size < sizeof(*t))
			return -EBADMSG;
		memcpy(out->str, t->comm, AS_COMM_LEN);
		out->str[AS_COMM_LEN] = '\0';
		ev->type = AS_EV_THREAD;
		ev->str = out->str;
		return 1;
	}
	case RAW_SPAWN: case RAW_TASK_NAME: {
		const struct raw_spawn *s = data;
		bool name = h->type == RAW_TASK_NAME;
		if (size < sizeof(*s) || s->file_len > AS_LOC_FILE_MAX ||
		    (name && !(d->plan->flags[h->probe] & PLAN_F_NAME)))
			return -EBADMSG;
		memcpy(out->str, s->file, s->file_len);
		out->str[s->file_len] = '\0';
		if (!s->file_len && s->want_len && s->file_ptr) {
			/* BPF reads without faulting pages in: a .rodata string
			 * nobody touched yet; process_vm_readv faults it in */
			size_t want = s->want_len < AS_LOC_FILE_MAX ? s->want_len : AS_LOC_FILE_MAX;
			struct iovec local = { out->str, want };
			struct iovec remote = { (void *)(uintptr_t)s->file_ptr, want };
			ssize_t got = process_vm_readv(d->tgid, &local, 1, &remote, 1, 0);
			/* the target exited: the string is in its binary's .rodata */
			uint64_t off;
			if (got <= 0 && d->img &&
			    !elf_image__any_file_offset(d->img, s->file_ptr - d->bias, &off))
				got = pread(elf_image__fd(d->img), out->str, want, (off_t)off);
			out->str[got > 0 ? got : 0] = '\0';
		}
		ev->type = AS_EV_SPAWN;
		ev->str = out->str;
		if (name) {
			ev->flags = AS_SPAWN_NAME;
			ev->other = (uint64_t)s->col << 32 | s->line;   /* the task id */
		} else {
			ev->other = (uint64_t)s->line << 32 | s->col;
			if (s->ret) {
				out->path = REC_PATH_SPAWN_CALLER;
				out->caller = s->ret;
			}
		}
		return 1;
	}
	case RAW_FUT_ENTER: case RAW_FUT_EXIT:
		if (size < sizeof(*e) || d->plan->probes[h->probe].role != AS_ROLE_FUTURE)
			return -EBADMSG;
		if (h->flags & RAW_F_UNMATCHED)
			return 0;   /* a frame entered before the probes were attached */
		ev->type = h->type == RAW_FUT_ENTER ? AS_EV_FUTURE_ENTER : AS_EV_FUTURE_EXIT;
		ev->task = e->task;
		ev->other = e->arg;
		ev->flags = (h->flags & RAW_F_READY ? AS_FUTURE_READY : 0) |
			    (h->flags & RAW_F_PENDING ? AS_FUTURE_PENDING : 0);
		return 1;
	case RAW_USDT:
		if (size < sizeof(*e) || d->plan->probes[h->probe].role != AS_ROLE_USDT)
			return -EBADMSG;
		ev->type = AS_EV_USDT;
		ev->task = e->task;
		ev->other = usdt_arg_value(&d->plan->usdt_arg[h->probe], e->arg);
		return 1;
	case RAW_POLL_BEGIN: case RAW_POLL_END: case RAW_WAKE: case RAW_FREE:
	case RAW_PARK: case RAW_UNPARK: {
		static const uint8_t map[] = {
			[RAW_POLL_BEGIN] = AS_EV_POLL_BEGIN, [RAW_POLL_END] = AS_EV_POLL_END,
			[RAW_WAKE] = AS_EV_WAKE, [RAW_FREE] = AS_EV_FREE,
			[RAW_PARK] = AS_EV_PARK, [RAW_UNPARK] = AS_EV_UNPARK,
		};
		if (size < sizeof(*e))
			return -EBADMSG;
		if (h->type == RAW_POLL_END && (h->flags & RAW_F_UNMATCHED))
			return 0;   /* a poll that began before the probes were attached */
		ev->type = map[h->type];
		ev->task = e->task;
		ev->other = e->arg;
		if (h->type == RAW_POLL_END && (h->flags & RAW_F_READY))
			ev->flags = AS_POLL_READY;
		else if (h->type == RAW_WAKE)
			ev->flags = (h->flags & RAW_F_WAKE_IO ? AS_WAKE_IO : 0) |
				    (h->flags & RAW_F_WAKE_TIMER ? AS_WAKE_TIMER : 0);
		return 1;
	}
	default:
		return -EBADMSG;
	}
	/* a stack record: its event, the stack named by the caller; its task
	 * a runtime task id in profile mode, a header otherwise */
	const struct raw_offcpu *o = out->stack;
	if (d->profile != ((h->flags & RAW_F_TASK_ID) != 0))
		return -EBADMSG;
	out->no_id = (h->flags & RAW_F_NO_ID) != 0;
	out->rt_loop = (h->flags & RAW_F_RT_LOOP) != 0;
	ev->task = o->task;
	if (h->type == RAW_OFFCPU || h->type == RAW_OFFCPU_DWARF) {
		ev->type = AS_EV_OFFCPU;
		ev->other = o->dur_ns;
		ev->flags = o->h.flags & RAW_F_PREEMPTED ? AS_OFFCPU_PREEMPTED : 0;
	} else {
		ev->type = AS_EV_SAMPLE;
	}
	return 1;
}
