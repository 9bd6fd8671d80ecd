/* On-disk layout of asyncscope trace files (see docs/trace-format.md) and the
 * decoder state model that the writer and the reader must rebuild identically:
 * thread table, task slot table, per-thread current task, per-type last
 * values. Private to src/trace/writer.c and src/trace/reader.c. Static inline
 * helpers only; no I/O. */
#ifndef AS_TRACE_FORMAT_H
#define AS_TRACE_FORMAT_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace/event.h"

/* File header: magic, u32 version, u32 header payload length, payload,
 * u32 crc32 of the payload. */
#define FMT_MAGIC "\x89" "ASCOPE\n"
#define FMT_MAGIC_LEN 8
#define FMT_HDR_FIXED 16                 /* magic + version + payload length */
#define FMT_HDR_MAX (64u << 20)          /* largest header payload accepted */
#define FMT_STR_ABSENT UINT32_MAX        /* header string length of a NULL string */

/* Records after the header: a one-byte kind, then fixed fields. */
#define FMT_REC_CHUNK 'C'  /* u32 seq, u32 payload len, u32 events, u32 crc, payload */
#define FMT_REC_END 'E'    /* u64 events, lost, missed, end_ns, u32 crc */
#define FMT_CHUNK_HDR 17
#define FMT_END_SIZE 37
#define FMT_CHUNK_TARGET (64u << 10)     /* writer ends a chunk near this payload size */
#define FMT_CHUNK_MAX (1u << 20)         /* largest chunk payload a reader accepts */
#define FMT_MAX_STR 65535u               /* longest event string */
#define FMT_EV_MAX_FIXED 64u             /* worst-case event bytes, string bytes aside */
#define FMT_MAX_TASKS (1u << 20)         /* live task slots; the writer resets at this */
#define FMT_MAX_THREADS (1u << 24)
#define FMT_MAX_STACKS (1u << 24)        /* stack definitions in one file */
/* Largest stack definition record: kind, two counts, then per frame an
 * address delta and a string ref with a new string of AS_FRAME_SYM_MAX. */
#define FMT_STACK_MAX_BYTES (1u + 2u * 3u + 2u * AS_STACK_MAX_FRAMES * \
	(10u + 1u + 2u + AS_FRAME_SYM_MAX + 1u + 2u + AS_FRAME_FILE_MAX + 5u))

/* Event record: byte H, bits 0-3 the type (1..AS_EV__MAX-1; 0 a control
 * record whose bits 4-7 give the operation), bits 4-7 presence bits: */
#define FMT_H_THREAD 0x10  /* thread ref follows (else: the previous event's thread) */
#define FMT_H_TASK 0x20    /* task ref follows (else: the default task) */
#define FMT_H_OTHER 0x40   /* other follows, zigzag delta from last other of the type */
#define FMT_H_EXT 0x80     /* extension byte follows */
#define FMT_X_PROBE 0x01   /* probe varint follows (else: the default probe) */
#define FMT_X_FLAGS 0x02   /* flags byte follows (else: 0) */
#define FMT_X_STR 0x04     /* string ref follows (else: NULL) */
#define FMT_X_MASK 0x07
#define FMT_CTL_RESET 0x00 /* control record: forget every task slot */
#define FMT_CTL_STACK 0x10 /* control record (version 3): define the next stack */
#define FMT_CTL_COUNTS 0x20 /* control record (version 9), last in a chunk: varints lost,
			     * missed and the CLOCK_MONOTONIC ns when the recorder read
			     * them, cumulative since the start of the recording */
#define FMT_CTL_COUNTS_MAX (1 + 3 * 10)   /* its largest encoding */

/* References. */
#define FMT_THREAD_NEW 0   /* varint tid follows; else index + 1 */
#define FMT_TASK_NONE 0    /* task 0 */
#define FMT_TASK_NEW 1     /* zigzag delta from the previous new task address follows */
#define FMT_TASK_CUR 2     /* the thread's current task (0 if none) */
#define FMT_TASK_SLOT0 3   /* else slot + 3 */
#define FMT_STR_NULL 0
#define FMT_STR_NEW 1      /* varint length, bytes follow */
#define FMT_STR_IDX0 2     /* else index + 2 */

#define FMT_NONE UINT32_MAX

_Static_assert(AS_EV__MAX <= 16, "event types must fit in 4 bits of H");

/* What each format version may hold: version 1 has no USDT events and no
 * USDT probe role, version 2 no OFFCPU events and no stack definitions,
 * version 3 no SAMPLE events, version 4 no RUNQ events, version 5 no URING
 * events, version 6 no FUTURE events, no FUTURE probe role, no source
 * locations of probes and no file:line of stack frames (a reader rejects
 * them there as corrupt). */
static inline uint8_t fmt_ev_max(uint32_t version)
{
	return version < 2 ? AS_EV_USDT : version < 3 ? AS_EV_OFFCPU :
	       version < 4 ? AS_EV_SAMPLE : version < 5 ? AS_EV_RUNQ :
	       version < 6 ? AS_EV_URING : version < 7 ? AS_EV_FUTURE_ENTER : AS_EV__MAX;
}
static inline int fmt_is_future(uint8_t type) { return type == AS_EV_FUTURE_ENTER || type == AS_EV_FUTURE_EXIT; }
/* Event types followed by a stack reference (version 3 on). */
static inline int fmt_has_stack(uint8_t type) { return type == AS_EV_OFFCPU || type == AS_EV_SAMPLE; }
static inline uint16_t fmt_role_max(uint32_t version)
{
	return version < 2 ? AS_ROLE_USDT : version < 7 ? AS_ROLE_FUTURE : AS_ROLE__MAX;
}
/* Await lines kept per probe (version 7); more are dropped by the writer. */
#define FMT_MAX_AWAITS 4096u

static inline void fmt_le16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void fmt_le32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static inline void fmt_le64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static inline uint16_t fmt_rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t fmt_rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t fmt_rd64(const uint8_t *p) { return fmt_rd32(p) | (uint64_t)fmt_rd32(p + 4) << 32; }

struct fmt_thread {
	uint32_t tid;
	uint32_t cur_slot;   /* task slot of the poll running on the thread, or FMT_NONE */
	uint32_t cur_gen;    /* generation of cur_slot when it was set */
};

struct fmt_slot {
	uint64_t addr;       /* task header address */
	uint64_t tokio;      /* other of the task's last POLL_BEGIN */
	uint32_t gen;        /* bumped each time the slot is freed */
	uint16_t probe;      /* probe of the task's last POLL_BEGIN / POLL_END */
	uint8_t live;
};

/* Decoder state. Zero it, then fmt_state_init(); fmt_state_free() frees. */
struct fmt_state {
	uint64_t prev_ts;
	uint64_t prev_new_task;
	uint64_t last_other[16];
	uint16_t last_probe[16];
	uint32_t cur_thread;           /* thread of the previous event, or FMT_NONE */
	struct fmt_thread *threads;
	uint32_t n_threads, cap_threads;
	struct fmt_slot *slots;
	uint32_t *free_slots;          /* stack of freed slots, reused last-in first-out */
	uint32_t n_slots, cap_slots, n_free, live;
};

static inline void fmt_state_init(struct fmt_state *st)
{
	memset(st, 0, sizeof(*st));
	st->cur_thread = FMT_NONE;
}

static inline void fmt_state_free(struct fmt_state *st)
{
	free(st->threads);
	free(st->slots);
	free(st->free_slots);
	fmt_state_init(st);
}

/* Adds a thread; returns 0, -ENOMEM, or -ENOSPC past FMT_MAX_THREADS. */
static inline int fmt_thread_add(struct fmt_state *st, uint32_t tid, uint32_t *idx)
{
	if (st->n_threads >= FMT_MAX_THREADS)
		return -ENOSPC;
	if (st->n_threads == st->cap_threads) {
		uint32_t cap = st->cap_threads ? st->cap_threads * 2 : 16;
		struct fmt_thread *t = realloc(st->threads, cap * sizeof(*t));
		if (!t)
			return -ENOMEM;
		st->threads = t;
		st->cap_threads = cap;
	}
	st->threads[st->n_threads] = (struct fmt_thread){ .tid = tid, .cur_slot = FMT_NONE };
	*idx = st->n_threads++;
	return 0;
}

/* Gives addr a slot (the last freed one, else a new one); returns 0,
 * -ENOMEM, or -ENOSPC when FMT_MAX_TASKS slots are live. */
static inline int fmt_task_new(struct fmt_state *st, uint64_t addr, uint32_t *slot)
{
	uint32_t s;
	if (st->live >= FMT_MAX_TASKS)
		return -ENOSPC;
	if (st->n_free) {
		s = st->free_slots[--st->n_free];
	} else {
		if (st->n_slots == st->cap_slots) {
			uint32_t cap = st->cap_slots ? st->cap_slots * 2 : 256;
			struct fmt_slot *sl = realloc(st->slots, cap * sizeof(*sl));
			if (!sl)
				return -ENOMEM;
			st->slots = sl;
			uint32_t *fr = realloc(st->free_slots, cap * sizeof(*fr));
			if (!fr)
				return -ENOMEM;
			st->free_slots = fr;
			st->cap_slots = cap;
		}
		s = st->n_slots++;
		st->slots[s].gen = 0;
	}
	st->slots[s].addr = addr;
	st->slots[s].tokio = 0;
	st->slots[s].probe = st->last_probe[AS_EV_POLL_BEGIN];
	st->slots[s].live = 1;
	st->live++;
	st->prev_new_task = addr;
	*slot = s;
	return 0;
}

/* Forgets every task slot (control record FMT_CTL_RESET). */
static inline void fmt_tasks_reset(struct fmt_state *st)
{
	st->n_slots = st->n_free = st->live = 0;
	for (uint32_t i = 0; i < st->n_threads; i++)
		st->threads[i].cur_slot = FMT_NONE;
}

/* Slot of the task being polled on thread, or FMT_NONE. */
static inline uint32_t fmt_cur_slot(const struct fmt_state *st, uint32_t thread)
{
	const struct fmt_thread *t = &st->threads[thread];
	if (t->cur_slot == FMT_NONE || t->cur_slot >= st->n_slots)
		return FMT_NONE;
	const struct fmt_slot *s = &st->slots[t->cur_slot];
	return s->live && s->gen == t->cur_gen ? t->cur_slot : FMT_NONE;
}

static inline uint64_t fmt_slot_addr(const struct fmt_state *st, uint32_t slot)
{
	return slot == FMT_NONE ? 0 : st->slots[slot].addr;
}

/* Task slot implied when H has no task ref: the thread's current task for
 * POLL_END, USDT (version 2), OFFCPU (version 3), SAMPLE (version 4) and
 * FUTURE_ENTER / FUTURE_EXIT (version 7), else none. */
static inline uint32_t fmt_default_task(const struct fmt_state *st, uint32_t thread, uint8_t type)
{
	return type == AS_EV_POLL_END || type == AS_EV_USDT || fmt_has_stack(type) || fmt_is_future(type) ?
	       fmt_cur_slot(st, thread) : FMT_NONE;
}

/* other implied when H has no other: the task's tokio id for POLL_BEGIN,
 * the thread's current task for WAKE, else 0. */
static inline uint64_t fmt_default_other(const struct fmt_state *st, uint32_t thread,
					 uint32_t slot, uint8_t type)
{
	if (type == AS_EV_POLL_BEGIN)
		return slot == FMT_NONE ? 0 : st->slots[slot].tokio;
	if (type == AS_EV_WAKE)
		return fmt_slot_addr(st, fmt_cur_slot(st, thread));
	return 0;
}

/* probe implied without FMT_X_PROBE: the task's last poll probe for
 * POLL_BEGIN / POLL_END, else the last probe of the same type. */
static inline uint16_t fmt_default_probe(const struct fmt_state *st, uint32_t slot, uint8_t type)
{
	if ((type == AS_EV_POLL_BEGIN || type == AS_EV_POLL_END) && slot != FMT_NONE)
		return st->slots[slot].probe;
	return st->last_probe[type];
}

/* Updates the state after event ev on thread with task slot (or FMT_NONE). */
static inline void fmt_apply(struct fmt_state *st, uint32_t thread, uint32_t slot,
			     const struct as_event *ev)
{
	uint8_t type = ev->type;
	st->prev_ts = ev->ts;
	st->cur_thread = thread;
	st->last_other[type] = ev->other;
	st->last_probe[type] = ev->probe;
	if (type == AS_EV_POLL_BEGIN) {
		st->threads[thread].cur_slot = slot;
		st->threads[thread].cur_gen = slot == FMT_NONE ? 0 : st->slots[slot].gen;
	} else if (type == AS_EV_POLL_END) {
		st->threads[thread].cur_slot = FMT_NONE;
	}
	if (slot == FMT_NONE)
		return;
	struct fmt_slot *s = &st->slots[slot];
	if (type == AS_EV_POLL_BEGIN)
		s->tokio = ev->other;
	if (type == AS_EV_POLL_BEGIN || type == AS_EV_POLL_END)
		s->probe = ev->probe;
	if (type == AS_EV_FREE) {
		s->live = 0;
		s->gen++;
		st->free_slots[st->n_free++] = slot;
		st->live--;
	}
}

#endif
