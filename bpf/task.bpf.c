/* Task lifecycle probes: poll entry and return, completion, wake (schedule),
 * spawn call site, free. Which function each is attached to, and which
 * register holds the task, comes from the runtime profile via the cookie. */
#include "common.bpf.h"
#include "ustack.bpf.h"

/* Poll entry: push the task on the thread's stack. */
SEC("uprobe")
int poll_enter(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 task = arg_reg(ctx, AS_COOKIE_REG(cookie));
	__u32 tid;

	if (!is_target(&tid))
		return 0;
	struct poll_stack *st = thread_state(tid);
	if (!st)
		return 0;
	__u32 d = st->depth;
	if (d < AS_MAX_DEPTH) {
		st->task[d] = task;
		st->ready[d] = 0;
	} else {
		__sync_fetch_and_add(&counters.depth_overflow, 1);
	}
	st->depth = d + 1;

	/* Task id: header -> vtable -> id offset -> id (Tokio >= 1.23), only
	 * for the poll probes of a runtime with that layout; read at the
	 * task's first poll, then kept until its free. */
	__u64 id = 0;
	if ((AS_COOKIE_FLAGS(cookie) & AS_CF_TASK_ID) && vtable_id_off_slot) {
		__u64 vtable = 0, off = 0, *known = cache_task_ids ?
						    bpf_map_lookup_elem(&task_ids, &task) : NULL;
		if (known) {
			id = *known;
		} else if (!bpf_probe_read_user(&vtable, sizeof(vtable), (void *)(task + hdr_vtable_off)) &&
			   !bpf_probe_read_user(&off, sizeof(off), (void *)(vtable + vtable_id_off_slot)) &&
			   off < 4096 && !bpf_probe_read_user(&id, sizeof(id), (void *)(task + off)) &&
			   id && cache_task_ids) {
			bpf_map_update_elem(&task_ids, &task, &id, BPF_ANY);
		}
	}
	emit(RAW_POLL_BEGIN, 0, AS_COOKIE_IDX(cookie), tid, task, id);
	return 0;
}

/* Poll return: pop; Ready if the completion probe marked this level. */
SEC("uretprobe")
int poll_exit(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 tid;

	if (!is_target(&tid))
		return 0;
	struct poll_stack *st = current_state();
	if (!st)
		return 0;
	__u32 d = st->depth;
	if (d == 0) {
		emit(RAW_POLL_END, RAW_F_UNMATCHED, AS_COOKIE_IDX(cookie), tid, 0, 0);
		return 0;
	}
	d--;
	st->depth = d;
	if (d >= AS_MAX_DEPTH)
		return 0;
	emit(RAW_POLL_END, st->ready[d] ? RAW_F_READY : 0, AS_COOKIE_IDX(cookie), tid,
	     st->task[d], 0);
	return 0;
}

/* Entered only when the task being polled completes: mark the top level.
 * With AS_CF_INSIDE the register points into the task (async-task: at the
 * future, which follows the header and the schedule function). */
SEC("uprobe")
int task_ready(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 task = arg_reg(ctx, AS_COOKIE_REG(cookie));
	__u64 slack = AS_COOKIE_FLAGS(cookie) & AS_CF_INSIDE ? AS_INSIDE_MAX : 0;
	__u32 tid;

	if (!is_target(&tid))
		return 0;
	struct poll_stack *st = current_state();
	if (!st)
		return 0;
	__u32 d = st->depth;
	if (d == 0 || d > AS_MAX_DEPTH)
		return 0;
	d--;
	/* unsigned: a pointer below the task wraps to a huge distance */
	if (task - st->task[d] <= slack)
		st->ready[d] = 1;
	return 0;
}

/* A task is scheduled: from inside which poll on this thread, if any. */
SEC("uprobe")
int task_wake(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 task = arg_reg(ctx, AS_COOKIE_REG(cookie));
	__u8 flags = 0;
	__u32 tid;

	/* 0: an Option<Notified> that is None (a spawn onto a closed runtime) */
	if (!task || !is_target(&tid))
		return 0;
	struct poll_stack *st = thread_state(tid);
	__u64 waker = polled_task(st);
	if (st) {
		if (st->in_io)
			flags |= RAW_F_WAKE_IO;
		else if (st->in_timer)
			flags |= RAW_F_WAKE_TIMER;
	}
	emit(RAW_WAKE, flags, AS_COOKIE_IDX(cookie), tid, task, waker);
	return 0;
}

/* A &str of the target (ptr, len) into s->file, as much as fits; where it
 * is recorded for user space to read what BPF could not (a page not yet
 * faulted in). */
static __always_inline void copy_str(struct raw_spawn *s, __u64 ptr, __u64 len)
{
	__u32 n = len < AS_LOC_FILE_MAX ? (__u32)len : AS_LOC_FILE_MAX;

	s->want_len = len < 0xffffffffu ? (__u32)len : 0xffffffffu;
	s->file_ptr = ptr;
	/* keep the verifier's bound on n: clang may fold the clamp above */
	asm volatile("" : "+r"(n));
	if (n > AS_LOC_FILE_MAX)
		n = AS_LOC_FILE_MAX;
	if (bpf_probe_read_user(s->file, n, (void *)ptr))
		n = 0;
	s->file_len = n;
}

/* Spawn call site: the register holds &'static core::panic::Location
 * { file: &str (ptr, len), line: u32, col: u32 }. */
SEC("uprobe")
int task_spawn(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 loc = arg_reg(ctx, AS_COOKIE_REG(cookie));
	struct { __u64 ptr, len; __u32 line, col; } l;
	__u32 tid;

	if (!is_target(&tid))
		return 0;
	thread_state(tid);
	if (bpf_probe_read_user(&l, sizeof(l), (void *)loc))
		return 0;
	struct raw_spawn *s = bpf_ringbuf_reserve(&events, sizeof(*s), 0);
	if (!s) {
		__sync_fetch_and_add(&counters.lost, 1);
		return 0;
	}
	fill_hdr(&s->h, RAW_SPAWN, AS_COOKIE_IDX(cookie), tid);
	s->line = l.line;
	s->col = l.col;
	s->ret = 0;
	bpf_probe_read_user(&s->ret, sizeof(s->ret), (void *)PT_REGS_SP(ctx));
	copy_str(s, l.ptr, l.len);
	bpf_ringbuf_submit(s, submit_flags());
	return 0;
}

/* A spawn seen where the new task is known but its &Location is not
 * (Tokio 1.53's OwnedTasks::bind_inner: the Location reaches only the
 * usually inlined spawn_inner): the registers and the top of the stack go
 * to user space, which unwinds them to the program's call of spawn. */
SEC("uprobe")
int task_spawn_stack(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 task = arg_reg(ctx, AS_COOKIE_REG(cookie));
	__u32 tid;

	if (!is_target(&tid))
		return 0;
	thread_state(tid);
	struct raw_spawn_stack *d = bpf_ringbuf_reserve(&events, sizeof(*d), 0);
	if (!d) {
		__sync_fetch_and_add(&counters.lost, 1);
		return 0;
	}
	fill_hdr(&d->h, RAW_SPAWN_STACK, AS_COOKIE_IDX(cookie), tid);
	d->task = task;
	COPY_USER(d);
	bpf_ringbuf_submit(d, submit_flags());
	return 0;
}

/* A task's name at its spawn (tokio::util::trace::task::get_span with
 * tokio_unstable and tracing): rsi/rdx = the spawn's kind (&str: "task",
 * "local", "block_on", ...: block_on's id never becomes a task, so only
 * "task" and "local" are kept), the cookie's register = &SpawnMeta, r8 =
 * the task id. */
SEC("uprobe")
int task_name(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 meta = arg_reg(ctx, AS_COOKIE_REG(cookie));
	__u64 kind = ctx->si, kind_len = ctx->dx, id = ctx->r8;
	struct { __u64 ptr, len; } name;
	char k[8] = { 0 };
	__u32 tid;

	if (!is_target(&tid) || (kind_len != 4 && kind_len != 5))
		return 0;
	if (bpf_probe_read_user(k, 5, (void *)kind) ||
	    !((kind_len == 4 && k[0] == 't' && k[1] == 'a' && k[2] == 's' && k[3] == 'k') ||
	      (kind_len == 5 && k[0] == 'l' && k[1] == 'o' && k[2] == 'c' && k[3] == 'a' && k[4] == 'l')))
		return 0;
	if (bpf_probe_read_user(&name, sizeof(name), (void *)(meta + spawn_meta_name_off)) ||
	    !name.ptr)
		return 0;   /* unnamed */
	thread_state(tid);
	struct raw_spawn *s = bpf_ringbuf_reserve(&events, sizeof(*s), 0);
	if (!s) {
		__sync_fetch_and_add(&counters.lost, 1);
		return 0;
	}
	fill_hdr(&s->h, RAW_TASK_NAME, AS_COOKIE_IDX(cookie), tid);
	s->line = (__u32)id;
	s->col = (__u32)(id >> 32);
	s->ret = 0;
	copy_str(s, name.ptr, name.len);
	bpf_ringbuf_submit(s, submit_flags());
	return 0;
}

SEC("uprobe")
int task_free(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 tid;

	__u64 task = arg_reg(ctx, AS_COOKIE_REG(cookie));

	if (!is_target(&tid))
		return 0;
	if (cache_task_ids)
		bpf_map_delete_elem(&task_ids, &task);
	emit(RAW_FREE, 0, AS_COOKIE_IDX(cookie), tid, task, 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
