/* io_uring requests of the target (record --uring): at submission
 * (io_uring_submit_req, in the submitting thread) one RAW_URING record with
 * the task polled on the thread and the opcode; at completion
 * (io_uring_complete, in whatever context completes it) one RAW_URING
 * record flagged RAW_F_URING_DONE, sent as the submitter's (its tid and
 * task) with the time since submission. Requests are matched by their
 * struct io_kiocb address, which the kernel reuses only after completion.
 * Attached only with --uring. */
#include "common.bpf.h"
#include <bpf/bpf_core_read.h>

struct inflight {
	__u64 ts;
	__u64 task;
	__u32 tid;
	__u32 pad;
};

/* io_kiocb address -> submission */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct inflight);
} uring_inflight SEC(".maps");

SEC("tp_btf/io_uring_submit_req")
int BPF_PROG(uring_submit, struct io_kiocb *req)
{
	__u32 tid;

	if (!is_target(&tid))
		return 0;
	struct inflight f = { .ts = bpf_ktime_get_ns(), .tid = tid };
	f.task = polled_task(current_state());
	__u64 key = (__u64)req;
	if (bpf_map_update_elem(&uring_inflight, &key, &f, BPF_ANY))
		__sync_fetch_and_add(&counters.uring_dropped, 1);
	struct raw_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&counters.lost, 1);
		return 0;
	}
	e->h.type = RAW_URING;
	e->h.flags = 0;
	e->h.probe = 0;
	e->h.tid = tid;
	e->h.ts = f.ts;
	e->task = f.task;
	e->arg = BPF_CORE_READ(req, opcode);
	bpf_ringbuf_submit(e, submit_flags());
	return 0;
}

SEC("tp_btf/io_uring_complete")
int BPF_PROG(uring_complete, void *ctx_, void *req, struct io_uring_cqe *cqe)
{
	if (bare_probes || !req)
		return 0;
	__u64 key = (__u64)req;
	struct inflight *f = bpf_map_lookup_elem(&uring_inflight, &key);
	if (!f)
		return 0;
	struct inflight s = *f;
	bpf_map_delete_elem(&uring_inflight, &key);
	__u64 now = bpf_ktime_get_ns();
	struct raw_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&counters.lost, 1);
		return 0;
	}
	e->h.type = RAW_URING;
	e->h.flags = RAW_F_URING_DONE | (BPF_CORE_READ(cqe, res) < 0 ? RAW_F_URING_ERR : 0);
	e->h.probe = 0;
	e->h.tid = s.tid;
	e->h.ts = now;
	e->task = s.task;
	e->arg = now > s.ts ? now - s.ts : 0;
	bpf_ringbuf_submit(e, submit_flags());
	return 0;
}
