/* Decoding raw BPF ring-buffer records (bpf/events.h) into trace events,
 * in one switch on the record's type tag. Kernel records are untrusted:
 * each size, type tag, probe index and length is checked before any cast.
 * No libbpf, no I/O but reading a string the BPF side could not (spawn
 * locations, process_vm_readv). Internal to src/record. */
#ifndef AS_RECORD_DECODE_H
#define AS_RECORD_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "events.h"
#include "probe/plan.h"
#include "sym/elf_image.h"
#include "trace/event.h"

/* What is asked for: a record of a kind not asked for is malformed. */
struct rec_decoder {
	const struct probe_plan *plan;   /* probe indexes, roles, USDT arguments */
	pid_t tgid;                      /* the target, for strings BPF could not read */
	/* ... and once it exited, its binary: runtime address - bias is the
	 * ELF's virtual address (img NULL: unknown) */
	const struct elf_image *img;
	uint64_t bias;
	bool offcpu, sample, runq, uring, dwarf;
	/* profile mode: samples and off-CPU intervals carry runtime task ids
	 * (RAW_F_TASK_ID), and only then */
	bool profile;
};

/* How a decoded event goes on. */
enum rec_path {
	REC_PATH_PROBE,     /* a probe's event (poll, wake, spawn, usdt, future, thread):
	                       through the runtime fix-ups (fixup.h) */
	REC_PATH_DIRECT,    /* run-queue wait, io_uring: as it comes (its time may
	                       be in the past; the trace takes events out of order) */
	REC_PATH_STACKED,   /* off-CPU interval, CPU sample: as it comes, with a
	                       stack to name (stacks.h) */
	REC_PATH_SPAWN_SITE, /* a spawn (ev.type AS_EV_SPAWN, no file yet) whose call
	                       site is found by unwinding regs (stacks.h), then as a
	                       probe's event */
	REC_PATH_SPAWN_CALLER, /* a spawn location whose function (Handle::current) the
	                       program may call itself: kept when caller is in a spawn
	                       (stacks.h), then as a probe's event */
};

struct rec_decoded {
	struct as_event ev;                   /* ev.str points into str */
	enum rec_path path;
	const struct raw_offcpu *stack;       /* STACKED: the frame-pointer walk */
	const struct raw_sample_dwarf *regs;  /* STACKED with --dwarf: registers and
	                                         stack copy (else NULL) */
	const struct raw_spawn_stack *spawn;  /* SPAWN_SITE: the same, at the spawn */
	uint64_t caller;                      /* SPAWN_CALLER: the return address */
	bool no_id;                           /* STACKED, profile: the task id could not be
	                                         read (ev.task 0) */
	bool rt_loop;                         /* STACKED, profile: ev.task is a worker's
	                                         own (its loop between user polls) */
	char str[AS_LOC_FILE_MAX + 1];
};

/* Decodes the size bytes at data (borrowed by *out's pointers for as long
 * as data lives). Returns 1 with *out, 0 for a record dropped on purpose (a
 * poll or future frame entered before the probes were attached), -EBADMSG
 * for a malformed or unexpected one. The caller counts both as missed. */
int rec_decode(const struct rec_decoder *d, const void *data, size_t size, struct rec_decoded *out);

#endif
