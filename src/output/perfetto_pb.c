/* perfetto_pb: native Perfetto protobuf (see perfetto_pb.h for what it
 * holds). The poll tracker of output/folded.h follows the tasks, as for the
 * JSON of output/perfetto.c; this file turns what it reports into
 * TracePackets with util/pb.h, into a buffer of its own handed to the FILE
 * in 64 KiB writes. Pure C: no libbpf, no reader; writes only to the FILE*.
 *
 * A poll slice as protoc --decode=perfetto.protos.Trace shows it:
 *   packet {
 *     timestamp: 1843                 (ns after the previous one on clock 65)
 *     track_event {
 *       type: TYPE_SLICE_BEGIN
 *       track_uuid: 9                 (the thread's track)
 *       name_iid: 12                  (interned "chain::producer")
 *       debug_annotations { name_iid: 1  uint_value: 5 }        (task)
 *       debug_annotations { name_iid: 3  string_value_iid: 2 }  (outcome Pending)
 *       terminating_flow_ids: 7
 *     }
 *     trusted_packet_sequence_id: 1
 *     sequence_flags: 2
 *     timestamp_clock_id: 65
 *   }
 *   packet { timestamp: 5099 track_event { type: TYPE_SLICE_END track_uuid: 9 } ... }
 */
#include "output/perfetto_pb.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/futures.h"
#include "analysis/task_model.h"
#include "output/folded.h"
#include "util/fmt.h"
#include "util/pb.h"
#include "util/strtab.h"
#include "util/task_id.h"
#include "util/u64map.h"

/* ---- the schema's field numbers we use (perfetto_trace.proto) ---- */
enum {
	TRACE_PACKET = 1,
	/* TracePacket */
	TP_CLOCK_SNAPSHOT = 6, TP_TIMESTAMP = 8, TP_SEQ_ID = 10, TP_TRACK_EVENT = 11,
	TP_INTERNED_DATA = 12, TP_SEQ_FLAGS = 13, TP_TIMESTAMP_CLOCK_ID = 58,
	TP_DEFAULTS = 59, TP_TRACK_DESCRIPTOR = 60, TP_FIRST_PACKET_ON_SEQ = 87,
	/* TracePacketDefaults */
	TPD_TIMESTAMP_CLOCK_ID = 58, TPD_TRACK_EVENT_DEFAULTS = 11,
	/* TrackEventDefaults */
	TED_TRACK_UUID = 11, TED_EXTRA_COUNTER_TRACK_UUIDS = 31,
	/* ClockSnapshot, ClockSnapshot.Clock */
	CS_CLOCKS = 1, CS_PRIMARY_TRACE_CLOCK = 2,
	CLK_ID = 1, CLK_TIMESTAMP = 2, CLK_IS_INCREMENTAL = 3,
	/* TrackEvent */
	TE_DEBUG_ANNOTATIONS = 4, TE_TYPE = 9, TE_NAME_IID = 10, TE_TRACK_UUID = 11,
	TE_EXTRA_COUNTER_VALUES = 12, TE_COUNTER_VALUE = 30, TE_FLOW_IDS = 47, TE_TERMINATING_FLOW_IDS = 48,
	/* DebugAnnotation */
	DA_NAME_IID = 1, DA_BOOL = 2, DA_UINT = 3, DA_STRING = 6, DA_STRING_IID = 17,
	/* InternedData; EventName, DebugAnnotationName, InternedString: iid 1, name/str 2 */
	ID_EVENT_NAMES = 2, ID_DEBUG_ANNOTATION_NAMES = 3, ID_DEBUG_ANNOTATION_STRINGS = 29,
	IN_IID = 1, IN_NAME = 2,
	/* TrackDescriptor, ProcessDescriptor, ThreadDescriptor, CounterDescriptor */
	TD_UUID = 1, TD_NAME = 2, TD_PROCESS = 3, TD_THREAD = 4, TD_PARENT_UUID = 5,
	TD_COUNTER = 8, TD_CHILD_ORDERING = 11, TD_SIBLING_ORDER_RANK = 12, TD_DESCRIPTION = 14,
	PD_PID = 1, PD_CMDLINE = 2, PD_PROCESS_NAME = 6,
	THD_PID = 1, THD_TID = 2, THD_THREAD_NAME = 5,
	CD_UNIT = 3,
};

/* enum values */
enum {
	SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2,
	TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4,
	BUILTIN_CLOCK_MONOTONIC = 3, UNIT_COUNT = 2, CHILD_ORDERING_EXPLICIT = 3,
};

#define SEQ_ID 1
/* Sequence-scoped clocks: NOW (incremental, the default) for timestamps
 * that do not go back (ends, counters, instants at the current event),
 * PAST_0 and PAST_1 (incremental) for slice begins, ABS (ns since the trace
 * start) for a begin below both. All read 0 at the trace start. */
#define CLK_NOW 64
#define CLK_PAST 65
#define N_PAST 2
#define CLK_ABS (CLK_PAST + N_PAST)

/* Track uuids: odd ones for the fixed tracks and the threads (in order of
 * first use), even ones 2 * seq + 8 for tasks. */
#define UUID_PROCESS 1
#define UUID_TASKS 3
#define UUID_RUNNABLE 5
#define UUID_PARKED 7
#define UUID_FIRST_THREAD 9

static uint64_t task_uuid(uint64_t seq)
{
	return 2 * seq + 8;
}

/* Interned ids of the fixed names: event names (slice names) ... */
enum { N_RUNNING = 1, N_SCHEDULED, N_IDLE, N_PARKED, N_WAKE, N_SPAWN, N_ASYNCSCOPE,
       N_UNKNOWN, N_FIXED = N_UNKNOWN };
static const char *const fixed_names[N_FIXED] = {
	"running", "scheduled", "idle", "parked", "wake", "spawn", "asyncscope", "unknown",
};
/* ... debug annotation names ... */
enum { A_TASK = 1, A_TOKIO_ID, A_OUTCOME, A_THREAD, A_BY, A_FN, A_AWAIT, A_AWAITING,
       A_DEPTH, A_EVENTS, A_LOST, A_MISSED, A_LOSS_COUNTS, A_TRUNCATED, A_POLL_SLICES,
       A_FLOWS, A_FUTURE_SLICES, A_FUTURE_EXITS_LOST, A_FUTURE_ENTRIES_LOST,
       A_FUTURE_UNMATCHED_EXITS, A_TARGET, A_PID, A_CMDLINE, A_RUNTIME, A_BUILD_ID,
       A_CLOCK_MONO_NS, A_WORKER_TASK_POLLS, N_ANN = A_WORKER_TASK_POLLS };
_Static_assert(N_ANN < 128, "ann_varint() writes an annotation name iid in one byte");
static const char *const ann_names[N_ANN] = {
	"task", "tokio_id", "outcome", "thread", "by", "fn", "await", "awaiting", "depth",
	"events", "lost_events", "missed_events", "loss_counts", "truncated", "poll_slices",
	"flows", "future_slices", "future_exits_lost", "future_entries_lost",
	"future_unmatched_exits", "target", "pid", "cmdline", "runtime", "build_id",
	"clock_mono_ns", "worker_task_polls",
};
/* ... and argument strings. */
enum { S_READY = 1, S_PENDING, S_CUT, S_TRACE_END, S_BY_SPAWN, S_BY_IO, S_BY_TIMER,
       S_BY_RUNTIME, N_FIXED_STRS = S_BY_RUNTIME };
static const char *const fixed_strs[N_FIXED_STRS] = {
	"Ready", "Pending", "cut short", "running at end", "spawn", "io driver", "timer",
	"runtime",
};

struct perfetto_pb {
	FILE *out;
	struct pb pb;
	struct ptrack *pt;
	struct futures *fu;       /* future frames (record --futures), NULL without */
	struct task_model *model;
	bool own_model;
	uint32_t pid;
	char *target, *cmdline, *runtime, *build_id;   /* copies of meta's */
	uint64_t base;            /* the trace start, ns: every clock reads 0 there */
	bool started;             /* base known, clock snapshot written */
	uint64_t clock_mono;
	uint64_t last_ts;
	uint64_t now;             /* CLK_NOW's last value, absolute ns */
	uint64_t past[N_PAST];    /* CLK_PAST + i's */
	struct strtab names;      /* event names: iid = index + 1 */
	struct strtab strs;       /* annotation strings: iid = index + 1 */
	uint32_t *task_name_iid;  /* by ptrack name_id: its iid, 0 not yet */
	size_t n_task_name_iid;
	uint32_t *fn_name_iid, *fn_loc_iid;   /* by futures fn: name's, "file:line"'s */
	size_t n_fn_name, n_fn_loc;
	struct u64map threads;    /* tid + 1 -> uuid << 1 | named */
	struct { uint32_t tid; uint64_t uuid; } tcache[64]; /* by tid % 64, uuid 0 empty */
	struct u64map tasks;      /* seq of a live task with a track -> name_id + 1 it
	                             was named with */
	uint64_t *task_defined;   /* bit seq: its track is defined (seqs are dense) */
	size_t n_task_defined;    /* words */
	uint64_t next_thread_uuid;
	uint64_t runnable_shown, parked_shown;
	bool counters_shown;
	/* A slice end at the current event, held back until counters() so that
	 * it carries the runnable count as an extra counter value (one packet
	 * fewer per wake and per poll) */
	bool pend;
	uint64_t pend_track, pend_ts;
	uint64_t events, slices, flows, flow_id, future_slices, packets;
	bool finished;
	int err;                  /* sticky -errno */
};

/* ---- writing ---- */

#define FLUSH_AT (64 * 1024)

static void flush(struct perfetto_pb *p)
{
	if (p->pb.len && fwrite_unlocked(p->pb.buf, 1, p->pb.len, p->out) != p->pb.len &&
	    !p->err)
		p->err = -EIO;
	p->pb.len = 0;
}

static inline size_t pkt_begin(struct perfetto_pb *p)
{
	return pb_open(&p->pb, TRACE_PACKET);
}

/* Ends a packet: its sequence and flags, then a write when the buffer is full. */
static inline void pkt_end(struct perfetto_pb *p, size_t pk, unsigned flags)
{
	pb_uint(&p->pb, TP_SEQ_ID, SEQ_ID);
	if (flags)
		pb_uint(&p->pb, TP_SEQ_FLAGS, flags);
	pb_close(&p->pb, pk);
	p->packets++;
	if (p->pb.len >= FLUSH_AT)
		flush(p);
}

/* Writes at w the packet's timestamp ts (absolute ns) on the cheapest clock
 * (see the CLK_ defines); returns the byte after it (room: 16 bytes). */
static inline uint8_t *put_ts(struct perfetto_pb *p, uint8_t *w, uint64_t ts)
{
	int best = -1;

	if (ts < p->base)
		ts = p->base;   /* never: the base is the earliest time */
	*w++ = TP_TIMESTAMP << 3 | PB_VARINT;
	if (ts >= p->now) {
		w = pb_put_varint(w, ts - p->now);
		p->now = ts;
		return w;
	}
	for (int i = 0; i < N_PAST; i++)
		if (p->past[i] <= ts && (best < 0 || p->past[i] > p->past[best]))
			best = i;
	if (best >= 0) {
		w = pb_put_varint(w, ts - p->past[best]);
		p->past[best] = ts;
	} else {
		/* below all (a slice longer than the ones since): absolute */
		w = pb_put_varint(w, ts - p->base);
	}
	/* timestamp_clock_id (field 58: a two-byte tag) */
	w = pb_put_varint(w, TP_TIMESTAMP_CLOCK_ID << 3 | PB_VARINT);
	*w++ = (uint8_t)(best >= 0 ? CLK_PAST + (unsigned)best : CLK_ABS);
	return w;
}

/* A TrackEvent packet: open it, with ts, track (0: the default, the
 * runnable counter) and type; the caller adds fields, then ev_end(). The
 * fixed part is written in one go into room reserved once. */
struct ev {
	size_t pk, te;
};

static void pend_flush(struct perfetto_pb *p, bool counter, uint64_t value);

static inline struct ev ev_begin(struct perfetto_pb *p, uint64_t ts, uint64_t track,
				 unsigned type)
{
	uint8_t *w0, *w;
	struct ev e = { 0, 0 };

	/* the held-back end goes first on its own track (ties keep file order) */
	if (__builtin_expect(p->pend, 0) && track == p->pend_track)
		pend_flush(p, false, 0);
	w0 = w = pb_room(&p->pb, 64);
	if (!w)
		return e;
	*w++ = TRACE_PACKET << 3 | PB_LEN;
	e.pk = p->pb.len + 1;
	*w++ = 0;
	w = put_ts(p, w, ts);
	*w++ = TP_TRACK_EVENT << 3 | PB_LEN;
	e.te = p->pb.len + (size_t)(w - w0);
	*w++ = 0;
	*w++ = TE_TYPE << 3 | PB_VARINT;
	*w++ = (uint8_t)type;
	if (track) {
		*w++ = TE_TRACK_UUID << 3 | PB_VARINT;
		w = pb_put_varint(w, track);
	}
	p->pb.len += (size_t)(w - w0);
	return e;
}

/* Ends the packet: its sequence and SEQ_NEEDS_INCREMENTAL_STATE. */
static inline void ev_end(struct perfetto_pb *p, struct ev e)
{
	uint8_t *w;

	pb_close(&p->pb, e.te);
	if (!(w = pb_room(&p->pb, 4)))
		return;
	w[0] = TP_SEQ_ID << 3 | PB_VARINT;
	w[1] = SEQ_ID;
	w[2] = TP_SEQ_FLAGS << 3 | PB_VARINT;
	w[3] = SEQ_NEEDS_INCREMENTAL_STATE;
	p->pb.len += 4;
	pb_close(&p->pb, e.pk);
	p->packets++;
	if (p->pb.len >= FLUSH_AT)
		flush(p);
}

/* Writes the held-back slice end, with the runnable count if counter. */
static void pend_flush(struct perfetto_pb *p, bool counter, uint64_t value)
{
	struct ev e;

	if (!p->pend)
		return;
	p->pend = false;
	e = ev_begin(p, p->pend_ts, p->pend_track, TYPE_SLICE_END);
	if (counter)
		pb_uint(&p->pb, TE_EXTRA_COUNTER_VALUES, value);
	ev_end(p, e);
}

/* A TrackEvent varint field of number < 16 (a one-byte tag). */
static inline void te_uint(struct perfetto_pb *p, unsigned field, uint64_t v)
{
	uint8_t *w0 = pb_room(&p->pb, 11), *w;

	if (!w0)
		return;
	w0[0] = (uint8_t)(field << 3 | PB_VARINT);
	w = pb_put_varint(w0 + 1, v);
	p->pb.len += (size_t)(w - w0);
}

/* A debug annotation {name_iid: name, <value field>: v} in one go: name is
 * a fixed annotation name (< 128), the body always under 128 bytes. */
static inline void ann_varint(struct perfetto_pb *p, unsigned name, unsigned tag, uint64_t v)
{
	uint8_t *w0 = pb_room(&p->pb, 16), *w;

	if (!w0)
		return;
	w0[0] = TE_DEBUG_ANNOTATIONS << 3 | PB_LEN;
	w0[2] = DA_NAME_IID << 3 | PB_VARINT;
	w0[3] = (uint8_t)name;
	w = pb_put_varint(w0 + 4, tag);
	w = pb_put_varint(w, v);
	w0[1] = (uint8_t)(w - w0 - 2);
	p->pb.len += (size_t)(w - w0);
}

static inline void ann_uint(struct perfetto_pb *p, unsigned name, uint64_t v)
{
	ann_varint(p, name, DA_UINT << 3 | PB_VARINT, v);
}

static inline void ann_iid(struct perfetto_pb *p, unsigned name, uint64_t str_iid)
{
	ann_varint(p, name, DA_STRING_IID << 3 | PB_VARINT, str_iid);
}

/* Appends n raw bytes (inside an open bytes field). */
static void put_raw(struct perfetto_pb *p, const char *s, size_t n)
{
	uint8_t *w = pb_room(&p->pb, n);

	if (!w)
		return;
	memcpy(w, s, n);
	p->pb.len += n;
}

/* Protobuf strings must be UTF-8 (protoc and trace_processor say so
 * otherwise): names from the traced program (threads, paths) are written
 * with each invalid byte as U+FFFD, as the JSON export does. */
static bool utf8_valid(const char *s, size_t n)
{
	for (size_t i = 0, l; i < n; i += l)
		if (!(l = (unsigned char)s[i] < 0x80 ? 1 : fmt_utf8_len(s + i, n - i)))
			return false;
	return true;
}

/* The n bytes at s as text, raw into an open bytes field. */
static void put_text_raw(struct perfetto_pb *p, const char *s, size_t n)
{
	size_t i = 0, run = 0, l;

	while (i < n) {
		if ((l = (unsigned char)s[i] < 0x80 ? 1 : fmt_utf8_len(s + i, n - i))) {
			i += l;
			continue;
		}
		put_raw(p, s + run, i - run);
		put_raw(p, "\xef\xbf\xbd", 3);
		run = ++i;
	}
	put_raw(p, s + run, n - run);
}

/* A string field of text s (NULL: empty). */
static void put_text(struct perfetto_pb *p, unsigned field, const char *s)
{
	size_t f = pb_open(&p->pb, field);

	if (s)
		put_text_raw(p, s, strlen(s));
	pb_close(&p->pb, f);
}

/* A malloc'd copy of s with invalid UTF-8 replaced, or NULL on ENOMEM. */
static char *text_copy(const char *s, size_t n)
{
	char *r = malloc(3 * n + 1), *o = r;

	if (!r)
		return NULL;
	for (size_t i = 0, l; i < n; i += l) {
		if ((l = (unsigned char)s[i] < 0x80 ? 1 : fmt_utf8_len(s + i, n - i))) {
			memcpy(o, s + i, l);
			o += l;
		} else {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			l = 1;
		}
	}
	*o = '\0';
	return r;
}

static void ann_str(struct perfetto_pb *p, unsigned name, const char *s)
{
	size_t a = pb_open(&p->pb, TE_DEBUG_ANNOTATIONS);

	pb_uint(&p->pb, DA_NAME_IID, name);
	put_text(p, DA_STRING, s);
	pb_close(&p->pb, a);
}

static void ann_bool(struct perfetto_pb *p, unsigned name, bool v)
{
	size_t a = pb_open(&p->pb, TE_DEBUG_ANNOTATIONS);

	pb_uint(&p->pb, DA_NAME_IID, name);
	pb_uint(&p->pb, DA_BOOL, v);
	pb_close(&p->pb, a);
}

/* ---- interning ---- */

/* One InternedData entry (field: event_names, debug_annotation_names or
 * debug_annotation_string_values) in a packet of its own. */
static void put_interned(struct perfetto_pb *p, unsigned field, uint64_t iid, const char *s,
			 size_t len)
{
	size_t pk = pkt_begin(p), in = pb_open(&p->pb, TP_INTERNED_DATA), e;

	e = pb_open(&p->pb, field);
	pb_uint(&p->pb, IN_IID, iid);
	pb_bytes(&p->pb, IN_NAME, s, len);
	pb_close(&p->pb, e);
	pb_close(&p->pb, in);
	pkt_end(p, pk, SEQ_NEEDS_INCREMENTAL_STATE);
}

/* The iid of s in table t (interned as field), writing its definition on
 * first use. 0 on ENOMEM (p->err set). Call between packets, never in one. */
static uint64_t intern(struct perfetto_pb *p, struct strtab *t, unsigned field, const char *s)
{
	size_t len = strlen(s);
	char *clean = NULL;
	uint32_t idx;

	if (!utf8_valid(s, len)) {   /* the table holds the text as written */
		if (!(clean = text_copy(s, len))) {
			p->err = -ENOMEM;
			return 0;
		}
		s = clean;
		len = strlen(s);
	}
	int added = strtab__intern(t, s, len, &idx);
	if (added < 0) {
		p->err = -ENOMEM;
		free(clean);
		return 0;
	}
	if (added)
		put_interned(p, field, (uint64_t)idx + 1, s, len);
	free(clean);
	return (uint64_t)idx + 1;
}

static uint64_t name_iid(struct perfetto_pb *p, const char *s)
{
	return intern(p, &p->names, ID_EVENT_NAMES, s);
}

static uint64_t str_iid(struct perfetto_pb *p, const char *s)
{
	return intern(p, &p->strs, ID_DEBUG_ANNOTATION_STRINGS, s);
}

/* Slot id of a uint32_t cache (*c, *n), grown to hold it; NULL on ENOMEM. */
static uint32_t *cache_slot(struct perfetto_pb *p, uint32_t **c, size_t *n, uint32_t id)
{
	if (id >= *n) {
		size_t nn = *n ? *n : 16;
		uint32_t *g;

		while (nn <= id)
			nn *= 2;
		g = realloc(*c, nn * sizeof(*g));
		if (!g) {
			p->err = -ENOMEM;
			return NULL;
		}
		memset(g + *n, 0, (nn - *n) * sizeof(*g));
		*c = g;
		*n = nn;
	}
	return *c + id;
}

static uint64_t task_name_iid(struct perfetto_pb *p, const struct ptrack_task *t)
{
	uint32_t *slot;

	if (!t->name)
		return N_UNKNOWN;
	slot = cache_slot(p, &p->task_name_iid, &p->n_task_name_iid, t->name_id);
	if (!slot)
		return N_UNKNOWN;
	if (!*slot)
		*slot = (uint32_t)name_iid(p, t->name);
	return *slot;
}

/* ---- tracks ---- */

static void thread_desc(struct perfetto_pb *p, uint64_t uuid, uint32_t tid, const char *name)
{
	size_t pk = pkt_begin(p), d = pb_open(&p->pb, TP_TRACK_DESCRIPTOR), t;

	pb_uint(&p->pb, TD_UUID, uuid);
	pb_uint(&p->pb, TD_PARENT_UUID, UUID_PROCESS);
	t = pb_open(&p->pb, TD_THREAD);
	pb_uint(&p->pb, THD_PID, p->pid);
	pb_uint(&p->pb, THD_TID, tid);
	if (name)
		put_text(p, THD_THREAD_NAME, name);
	pb_close(&p->pb, t);
	pb_close(&p->pb, d);
	pkt_end(p, pk, 0);
}

/* The uuid of thread tid's track, defined (named if the name is known) on
 * first use. */
static uint64_t thread_track(struct perfetto_pb *p, uint32_t tid)
{
	const char *name;
	uint64_t v, uuid;
	unsigned slot = tid % 64;

	if (p->tcache[slot].uuid && p->tcache[slot].tid == tid)
		return p->tcache[slot].uuid;
	if (u64map__get(&p->threads, (uint64_t)tid + 1, &v)) {
		p->tcache[slot].tid = tid;
		p->tcache[slot].uuid = v >> 1;
		return v >> 1;
	}
	uuid = p->next_thread_uuid;
	p->next_thread_uuid += 2;
	name = ptrack__thread_name(p->pt, tid);
	if (u64map__set(&p->threads, (uint64_t)tid + 1, uuid << 1 | (name != NULL)))
		p->err = -ENOMEM;
	thread_desc(p, uuid, tid, name);
	return uuid;
}

/* A thread's first name (AS_EV_THREAD): its track defined or renamed. */
static void thread_named(struct perfetto_pb *p, uint32_t tid, const char *name)
{
	uint64_t v, uuid;

	if (u64map__get(&p->threads, (uint64_t)tid + 1, &v)) {
		if (v & 1)
			return;
		uuid = v >> 1;
	} else {
		uuid = p->next_thread_uuid;
		p->next_thread_uuid += 2;
	}
	if (u64map__set(&p->threads, (uint64_t)tid + 1, uuid << 1 | 1))
		p->err = -ENOMEM;
	thread_desc(p, uuid, tid, name);
}

static void put_dec(struct perfetto_pb *p, const char *prefix, uint64_t v)
{
	char b[24], *e = b + sizeof(b), *d = e;

	do
		*--d = (char)('0' + v % 10);
	while (v /= 10);
	put_raw(p, prefix, strlen(prefix));
	put_raw(p, d, (size_t)(e - d));
}

/* Task t's track: named "task ID NAME" as every output names a task (#3,
 * ~7), its spawn site, seq and header in the description. Built without
 * printf: one per task. */
static void task_desc(struct perfetto_pb *p, const struct ptrack_task *t)
{
	static const char hex[] = "0123456789abcdef";
	const char *name = t->name ? t->name : "unknown";
	char id[TASK_ID_MAX], h[20], *d = h + sizeof(h);
	uint64_t v = t->header;
	size_t pk, td, f;

	task_id_format(id, sizeof(id), t->tokio_id, t->seq, 0);
	do
		*--d = hex[v & 15];
	while (v >>= 4);
	pk = pkt_begin(p);
	td = pb_open(&p->pb, TP_TRACK_DESCRIPTOR);
	pb_uint(&p->pb, TD_UUID, task_uuid(t->seq));
	pb_uint(&p->pb, TD_PARENT_UUID, UUID_TASKS);
	f = pb_open(&p->pb, TD_NAME);
	put_raw(p, "task ", 5);
	put_raw(p, id, strlen(id));
	put_raw(p, " ", 1);
	put_text_raw(p, name, strlen(name));
	pb_close(&p->pb, f);
	/* "spawned at src/bin/chain.rs:43:17; task 5; header 0x56327f1d7580" */
	f = pb_open(&p->pb, TD_DESCRIPTION);
	if (t->spawn_file) {
		put_raw(p, "spawned at ", 11);
		put_text_raw(p, t->spawn_file, strlen(t->spawn_file));
		put_dec(p, ":", t->spawn_line);
		put_dec(p, ":", t->spawn_col);
		put_raw(p, "; ", 2);
	}
	put_dec(p, "task ", t->seq);
	put_raw(p, "; header 0x", 11);
	put_raw(p, d, (size_t)(h + sizeof(h) - d));
	pb_close(&p->pb, f);
	pb_uint(&p->pb, TD_SIBLING_ORDER_RANK, t->seq > INT32_MAX ? INT32_MAX : t->seq);
	pb_close(&p->pb, td);
	pkt_end(p, pk, 0);
}

/* The uuid of task t's track, defined on first use. */
static uint64_t task_track(struct perfetto_pb *p, const struct ptrack_task *t)
{
	size_t w = t->seq / 64;
	uint64_t bit = 1ULL << (t->seq % 64);

	if (__builtin_expect(w < p->n_task_defined && (p->task_defined[w] & bit), 1))
		return task_uuid(t->seq);
	if (w >= p->n_task_defined) {
		size_t n = p->n_task_defined ? p->n_task_defined : 64;
		uint64_t *g;

		while (n <= w)
			n *= 2;
		if (!(g = realloc(p->task_defined, n * sizeof(*g)))) {
			p->err = -ENOMEM;
			return task_uuid(t->seq);
		}
		memset(g + p->n_task_defined, 0, (n - p->n_task_defined) * sizeof(*g));
		p->task_defined = g;
		p->n_task_defined = n;
	}
	p->task_defined[w] |= bit;
	if (u64map__set(&p->tasks, t->seq, (uint64_t)t->name_id + 1))
		p->err = -ENOMEM;
	task_desc(p, t);
	return task_uuid(t->seq);
}

/* A slice from..to on track, named name_iid, without arguments. */
static void plain_slice(struct perfetto_pb *p, uint64_t track, uint64_t from, uint64_t to,
			uint64_t name)
{
	struct ev e = ev_begin(p, from, track, TYPE_SLICE_BEGIN);

	te_uint(p, TE_NAME_IID, name);
	ev_end(p, e);
	ev_end(p, ev_begin(p, to, track, TYPE_SLICE_END));
}

static unsigned outcome_iid(enum ptrack_end how)
{
	switch (how) {
	case PTRACK_READY: return S_READY;
	case PTRACK_PENDING: return S_PENDING;
	case PTRACK_CUT: return S_CUT;
	case PTRACK_TRACE_END: return S_TRACE_END;
	}
	return S_PENDING;
}

/* The wake that made the task runnable: an instant on the waking thread's
 * track at the wake (inside the waker's poll slice when one ran there)
 * starting flow id. */
static void wake_instant(struct perfetto_pb *p, const struct ptrack_wake *w, uint64_t id)
{
	uint64_t track = thread_track(p, w->tid);
	struct ev e = ev_begin(p, w->ts, track, TYPE_INSTANT);

	te_uint(p, TE_NAME_IID, w->spawn ? N_SPAWN : N_WAKE);
	if (!w->in_user_poll)
		ann_iid(p, A_BY, w->spawn ? S_BY_SPAWN : w->flags & AS_WAKE_IO ? S_BY_IO :
			w->flags & AS_WAKE_TIMER ? S_BY_TIMER : S_BY_RUNTIME);
	pb_fixed64(&p->pb, TE_FLOW_IDS, id);
	ev_end(p, e);
}

static void on_poll(struct perfetto_pb *p, const struct ptrack_poll *poll)
{
	uint64_t tt = task_track(p, &poll->task), th, name, flow = 0;
	struct ev e;

	/* the task's own track: every poll, runtime workers' included */
	e = ev_begin(p, poll->begin, tt, TYPE_SLICE_BEGIN);
	te_uint(p, TE_NAME_IID, N_RUNNING);
	ann_uint(p, A_THREAD, poll->tid);
	ev_end(p, e);
	ev_end(p, ev_begin(p, poll->end, tt, TYPE_SLICE_END));
	if (!poll->user)
		return;
	th = thread_track(p, poll->tid);
	name = task_name_iid(p, &poll->task);
	if (poll->has_wake) {
		flow = ++p->flow_id;
		wake_instant(p, &poll->wake, flow);
		p->flows++;
	}
	e = ev_begin(p, poll->begin, th, TYPE_SLICE_BEGIN);
	te_uint(p, TE_NAME_IID, name);
	ann_uint(p, A_TASK, poll->task.seq);
	if (poll->task.tokio_id)
		ann_uint(p, A_TOKIO_ID, poll->task.tokio_id);
	ann_iid(p, A_OUTCOME, outcome_iid(poll->how));
	if (flow)
		pb_fixed64(&p->pb, TE_TERMINATING_FLOW_IDS, flow);
	ev_end(p, e);
	ev_end(p, ev_begin(p, poll->end, th, TYPE_SLICE_END));
	p->slices++;
}

static void start(struct perfetto_pb *p, uint64_t base);

/* Starts the clocks at the trace start: the recording's, or ts if earlier
 * (the first event; or, sharing a model, the first output, which the
 * tracker may report before perfetto_pb__add() sees its event). */
static void start_at(struct perfetto_pb *p, uint64_t ts)
{
	if (!p->started)
		start(p, p->clock_mono && p->clock_mono <= ts ? p->clock_mono : ts);
}

/* A future frame (record --futures): a slice on its thread's track, inside
 * the poll slice that ran it and inside its parent frame. */
static void future_slice(struct perfetto_pb *p, const struct futures_frame *fr)
{
	uint64_t th = thread_track(p, fr->tid), name = N_UNKNOWN, loc = 0, await = 0, awaitee = 0;
	uint64_t outcome = str_iid(p, futures_outcome__str(fr->outcome));
	uint32_t *ns = cache_slot(p, &p->fn_name_iid, &p->n_fn_name, fr->fn), *ls;
	char buf[64];
	struct ev e;

	if (ns) {
		if (!*ns && fr->name)
			*ns = (uint32_t)name_iid(p, fr->name);
		if (*ns)
			name = *ns;
	}
	if (fr->file || fr->line) {
		const char *file = fr->file ? fr->file : "?";
		size_t need = strlen(file) + 16;
		char *s = need <= sizeof(buf) ? buf : malloc(need);

		if (!s) {
			p->err = -ENOMEM;
		} else {
			ls = cache_slot(p, &p->fn_loc_iid, &p->n_fn_loc, fr->fn);
			snprintf(s, need, "%s:%" PRIu32, file, fr->line);
			if (ls && *ls)
				loc = *ls;
			else if ((loc = str_iid(p, s)) && ls)
				*ls = (uint32_t)loc;
			if (fr->await_line) {
				snprintf(s, need, "%s:%" PRIu32, file, fr->await_line);
				await = str_iid(p, s);
			}
			if (s != buf)
				free(s);
		}
		if (fr->awaitee)
			awaitee = str_iid(p, fr->awaitee);
	}
	e = ev_begin(p, fr->begin, th, TYPE_SLICE_BEGIN);
	te_uint(p, TE_NAME_IID, name);
	if (fr->task)
		ann_uint(p, A_TASK, fr->task);
	ann_iid(p, A_OUTCOME, outcome);
	if (loc)
		ann_iid(p, A_FN, loc);
	if (await)
		ann_iid(p, A_AWAIT, await);
	if (awaitee)
		ann_iid(p, A_AWAITING, awaitee);
	ann_uint(p, A_DEPTH, fr->depth);
	ev_end(p, e);
	ev_end(p, ev_begin(p, fr->end, th, TYPE_SLICE_END));
	p->future_slices++;
}

static void on_future(void *ctx, const struct futures_frame *fr)
{
	struct perfetto_pb *p = ctx;

	start_at(p, fr->begin);
	future_slice(p, fr);
}

static int on_out(void *ctx, const struct ptrack_out *o)
{
	struct perfetto_pb *p = ctx;
	uint64_t v;

	start_at(p, o->type == PTRACK_POLL ? o->poll->begin : o->from);
	switch (o->type) {
	case PTRACK_POLL:
		on_poll(p, o->poll);
		break;
	case PTRACK_SCHEDULED:
	case PTRACK_IDLE:
		if (o->to == o->from)
			break;
	{
		uint64_t track = task_track(p, o->task);
		struct ev e = ev_begin(p, o->from, track, TYPE_SLICE_BEGIN);

		te_uint(p, TE_NAME_IID, o->type == PTRACK_IDLE ? N_IDLE : N_SCHEDULED);
		ev_end(p, e);
		/* it ends at a wake or a poll begin, the event being read: when
		 * the runnable count changes, which the end then carries
		 * (counters(), after the event; the model's observers, this
		 * tracker among them, see it before perfetto_pb__add() does) */
		if (!p->pend) {
			p->pend = true;
			p->pend_track = track;
			p->pend_ts = o->to;
		} else {
			ev_end(p, ev_begin(p, o->to, track, TYPE_SLICE_END));
		}
		break;
	}
	case PTRACK_PARKED:
		plain_slice(p, thread_track(p, o->tid), o->from, o->to, N_PARKED);
		break;
	case PTRACK_TASK_GONE:
		/* its name is final now: the track renamed if it changed */
		if (u64map__get(&p->tasks, o->task->seq, &v)) {
			if (v != (uint64_t)o->task->name_id + 1)
				task_desc(p, o->task);
			u64map__del(&p->tasks, o->task->seq);
		}
		break;
	}
	if (p->err || (p->err = p->pb.err))
		return p->err;
	return 0;   /* write errors: flush() sets p->err */
}

/* ---- start ---- */

/* The first packet: clears the incremental state, sets the defaults
 * (clock, default track: the runnable counter) and interns the fixed names. */
static void put_header(struct perfetto_pb *p)
{
	size_t pk = pkt_begin(p), d, ted, in, e;

	pb_uint(&p->pb, TP_FIRST_PACKET_ON_SEQ, 1);
	d = pb_open(&p->pb, TP_DEFAULTS);
	pb_uint(&p->pb, TPD_TIMESTAMP_CLOCK_ID, CLK_NOW);
	ted = pb_open(&p->pb, TPD_TRACK_EVENT_DEFAULTS);
	pb_uint(&p->pb, TED_TRACK_UUID, UUID_RUNNABLE);
	pb_uint(&p->pb, TED_EXTRA_COUNTER_TRACK_UUIDS, UUID_RUNNABLE);
	pb_close(&p->pb, ted);
	pb_close(&p->pb, d);
	in = pb_open(&p->pb, TP_INTERNED_DATA);
	for (unsigned i = 0; i < N_FIXED; i++) {
		e = pb_open(&p->pb, ID_EVENT_NAMES);
		pb_uint(&p->pb, IN_IID, i + 1);
		pb_str(&p->pb, IN_NAME, fixed_names[i]);
		pb_close(&p->pb, e);
	}
	for (unsigned i = 0; i < N_ANN; i++) {
		e = pb_open(&p->pb, ID_DEBUG_ANNOTATION_NAMES);
		pb_uint(&p->pb, IN_IID, i + 1);
		pb_str(&p->pb, IN_NAME, ann_names[i]);
		pb_close(&p->pb, e);
	}
	for (unsigned i = 0; i < N_FIXED_STRS; i++) {
		e = pb_open(&p->pb, ID_DEBUG_ANNOTATION_STRINGS);
		pb_uint(&p->pb, IN_IID, i + 1);
		pb_str(&p->pb, IN_NAME, fixed_strs[i]);
		pb_close(&p->pb, e);
	}
	pb_close(&p->pb, in);
	pkt_end(p, pk, SEQ_INCREMENTAL_STATE_CLEARED | SEQ_NEEDS_INCREMENTAL_STATE);
}

/* A fixed track: uuid, parent (0 none), name; a counter if counter. */
static void fixed_track(struct perfetto_pb *p, uint64_t uuid, uint64_t parent, const char *name,
			bool counter, bool explicit_order)
{
	size_t pk = pkt_begin(p), d = pb_open(&p->pb, TP_TRACK_DESCRIPTOR), c;

	pb_uint(&p->pb, TD_UUID, uuid);
	if (parent)
		pb_uint(&p->pb, TD_PARENT_UUID, parent);
	pb_str(&p->pb, TD_NAME, name);
	if (counter) {
		c = pb_open(&p->pb, TD_COUNTER);
		pb_uint(&p->pb, CD_UNIT, UNIT_COUNT);
		pb_close(&p->pb, c);
	}
	if (explicit_order)
		pb_uint(&p->pb, TD_CHILD_ORDERING, CHILD_ORDERING_EXPLICIT);
	pb_close(&p->pb, d);
	pkt_end(p, pk, 0);
}

static void put_tracks(struct perfetto_pb *p, const char *target)
{
	size_t pk = pkt_begin(p), d = pb_open(&p->pb, TP_TRACK_DESCRIPTOR), pr;

	pb_uint(&p->pb, TD_UUID, UUID_PROCESS);
	pr = pb_open(&p->pb, TD_PROCESS);
	pb_uint(&p->pb, PD_PID, p->pid);
	if (*p->cmdline)
		put_text(p, PD_CMDLINE, p->cmdline);
	put_text(p, PD_PROCESS_NAME, target);
	pb_close(&p->pb, pr);
	pb_close(&p->pb, d);
	pkt_end(p, pk, 0);
	fixed_track(p, UUID_TASKS, UUID_PROCESS, "tasks", false, true);
	fixed_track(p, UUID_RUNNABLE, UUID_PROCESS, "runnable tasks", true, false);
	fixed_track(p, UUID_PARKED, UUID_PROCESS, "parked workers", true, false);
}

/* The clock snapshot, once the trace start (base) is known: every clock of
 * the sequence reads 0 at base on CLOCK_MONOTONIC, the trace's clock. */
static void start(struct perfetto_pb *p, uint64_t base)
{
	size_t pk, cs, c;

	p->base = p->now = base;
	for (int i = 0; i < N_PAST; i++)
		p->past[i] = base;
	p->started = true;
	pk = pkt_begin(p);
	cs = pb_open(&p->pb, TP_CLOCK_SNAPSHOT);
	for (unsigned id = CLK_NOW; id <= CLK_ABS; id++) {
		c = pb_open(&p->pb, CS_CLOCKS);
		pb_uint(&p->pb, CLK_ID, id);
		pb_uint(&p->pb, CLK_TIMESTAMP, 0);
		if (id != CLK_ABS)
			pb_uint(&p->pb, CLK_IS_INCREMENTAL, 1);
		pb_close(&p->pb, c);
	}
	c = pb_open(&p->pb, CS_CLOCKS);
	pb_uint(&p->pb, CLK_ID, BUILTIN_CLOCK_MONOTONIC);
	pb_uint(&p->pb, CLK_TIMESTAMP, base);
	pb_close(&p->pb, c);
	pb_uint(&p->pb, CS_PRIMARY_TRACE_CLOCK, BUILTIN_CLOCK_MONOTONIC);
	pb_close(&p->pb, cs);
	pkt_end(p, pk, 0);
}

static struct perfetto_pb *pb_new(FILE *out, struct task_model *m, bool own,
				  const struct as_trace_meta *meta)
{
	struct perfetto_pb *p = calloc(1, sizeof(*p));
	uint32_t idx;

	if (!p) {
		if (own)
			task_model__free(m);
		return NULL;
	}
	p->out = out;
	p->pid = meta ? meta->pid : 0;
	p->clock_mono = meta ? meta->clock_mono_ns : 0;
	p->model = m;
	p->own_model = own;
	p->next_thread_uuid = UUID_FIRST_THREAD;
	p->pt = ptrack__new_on(m, meta, on_out, p);
	if (!p->pt)
		goto fail;
	for (uint32_t i = 0; meta && meta->probes && i < meta->n_probes; i++)
		if (meta->probes[i].role == AS_ROLE_FUTURE) {
			struct futures_observer obs = { .ctx = p, .frame = on_future };

			p->fu = futures__new_on(m, meta,
						&(struct futures_opts){ .observer = &obs });
			if (!p->fu)
				goto fail;
			break;
		}
	if (!(p->target = strdup(meta && meta->target ? meta->target : "")) ||
	    !(p->cmdline = strdup(meta && meta->cmdline ? meta->cmdline : "")) ||
	    !(p->runtime = strdup(meta && meta->runtime ? meta->runtime : "")) ||
	    !(p->build_id = strdup(meta && meta->build_id ? meta->build_id : "")))
		goto fail;
	for (unsigned i = 0; i < N_FIXED; i++)
		if (strtab__add(&p->names, fixed_names[i], strlen(fixed_names[i]), &idx))
			goto fail;
	for (unsigned i = 0; i < N_FIXED_STRS; i++)
		if (strtab__add(&p->strs, fixed_strs[i], strlen(fixed_strs[i]), &idx))
			goto fail;
	put_header(p);
	put_tracks(p, *p->target ? p->target : "target");
	if (p->pb.err)
		goto fail;
	return p;
fail:
	perfetto_pb__free(p);
	errno = ENOMEM;
	return NULL;
}

struct perfetto_pb *perfetto_pb__new(FILE *out, const struct as_trace_meta *meta)
{
	struct task_model *m = task_model__new(meta);

	return m ? pb_new(out, m, true, meta) : NULL;
}

struct perfetto_pb *perfetto_pb__new_on(FILE *out, struct task_model *m,
					const struct as_trace_meta *meta)
{
	if (!m) {
		errno = EINVAL;
		return NULL;
	}
	return pb_new(out, m, false, meta);
}

/* ---- events ---- */

/* Counter values after an event, written when they change. */
static void counters(struct perfetto_pb *p, uint64_t ts)
{
	uint64_t runnable = ptrack__runnable(p->pt), parked = ptrack__parked(p->pt);
	struct ev e;

	if (!p->counters_shown || runnable != p->runnable_shown) {
		if (p->pend && p->pend_ts == ts) {
			pend_flush(p, true, runnable);
		} else {
			e = ev_begin(p, ts, 0, TYPE_COUNTER);   /* the default track */
			pb_uint(&p->pb, TE_COUNTER_VALUE, runnable);
			ev_end(p, e);
		}
		p->runnable_shown = runnable;
	}
	pend_flush(p, false, 0);
	if (!p->counters_shown || parked != p->parked_shown) {
		e = ev_begin(p, ts, UUID_PARKED, TYPE_COUNTER);
		pb_uint(&p->pb, TE_COUNTER_VALUE, parked);
		ev_end(p, e);
		p->parked_shown = parked;
	}
	p->counters_shown = true;
}

/* 0 or the first error (write errors: from flush()'s fwrite). */
static int status(struct perfetto_pb *p)
{
	if (!p->err)
		p->err = p->pb.err;
	return p->err;
}

int perfetto_pb__add(struct perfetto_pb *p, const struct as_event *ev)
{
	int err;

	if (!p || !ev || p->finished)
		return -EINVAL;
	start_at(p, ev->ts);
	if (ev->ts > p->last_ts)
		p->last_ts = ev->ts;
	p->events++;
	if (ev->type == AS_EV_THREAD && ev->str)
		thread_named(p, ev->tid, ev->str);
	if (p->own_model && (err = task_model__add(p->model, ev)))
		return err;
	if ((err = ptrack__add(p->pt, ev)))
		return err;
	if (p->fu && (err = futures__add(p->fu, ev)))
		return err;
	counters(p, ev->ts);
	return status(p);
}

static void instant(struct perfetto_pb *p, uint64_t ts, const char *name)
{
	uint64_t iid = name_iid(p, name);
	struct ev e = ev_begin(p, ts, UUID_PROCESS, TYPE_INSTANT);

	te_uint(p, TE_NAME_IID, iid);
	ev_end(p, e);
}

int perfetto_pb__finish(struct perfetto_pb *p, const struct as_trace_end *end, bool truncated)
{
	uint64_t end_ns, lost = end ? end->lost : 0, missed = end ? end->missed : 0;
	char msg[96];
	struct ev e;
	int err;

	if (!p || p->finished)
		return -EINVAL;
	p->finished = true;
	end_ns = end && end->end_ns ? end->end_ns : p->last_ts;
	start_at(p, end_ns);
	if (end_ns < p->last_ts)
		end_ns = p->last_ts;
	if (p->own_model && (err = task_model__finish(p->model, end_ns)))
		return err;
	if ((err = ptrack__finish(p->pt, end_ns)))
		return err;
	if (p->fu && (err = futures__finish(p->fu, end_ns)))
		return err;
	counters(p, end_ns);
	/* a truncated trace: a lower bound from its last complete chunk, or unknown */
	bool known = !truncated || (end && end->counts_lower_bound);
	const char *least = truncated ? "at least " : "";

	if (lost && known) {
		snprintf(msg, sizeof(msg), "lost %s%" PRIu64 " events", least, lost);
		instant(p, end_ns, msg);
	}
	if (missed && known) {
		snprintf(msg, sizeof(msg), "missed %s%" PRIu64 " events (not decoded)", least, missed);
		instant(p, end_ns, msg);
	}
	if (truncated)
		instant(p, end_ns, known ? "trace truncated: the recording stops here" :
			"trace truncated: the recording stops here; lost and missed events unknown");
	/* the JSON's metadata, as arguments of one instant at the end */
	e = ev_begin(p, end_ns, UUID_PROCESS, TYPE_INSTANT);
	te_uint(p, TE_NAME_IID, N_ASYNCSCOPE);
	ann_str(p, A_TARGET, p->target);
	ann_uint(p, A_PID, p->pid);
	ann_str(p, A_CMDLINE, p->cmdline);
	ann_str(p, A_RUNTIME, p->runtime);
	ann_str(p, A_BUILD_ID, p->build_id);
	ann_uint(p, A_CLOCK_MONO_NS, p->base);
	ann_uint(p, A_EVENTS, p->events);
	if (known) {
		ann_uint(p, A_LOST, lost);
		ann_uint(p, A_MISSED, missed);
	} else {
		ann_str(p, A_LOST, "unknown");
		ann_str(p, A_MISSED, "unknown");
	}
	ann_str(p, A_LOSS_COUNTS, !truncated ? "exact" : known ? "lower_bound" : "unknown");
	ann_bool(p, A_TRUNCATED, truncated);
	ann_uint(p, A_POLL_SLICES, p->slices);
	ann_uint(p, A_FLOWS, p->flows);
	if (p->fu) {
		const struct futures_summary *fs = futures__summary(p->fu);

		ann_uint(p, A_FUTURE_SLICES, p->future_slices);
		ann_uint(p, A_FUTURE_EXITS_LOST, fs->exits_lost);
		ann_uint(p, A_FUTURE_ENTRIES_LOST, fs->entries_lost);
		ann_uint(p, A_FUTURE_UNMATCHED_EXITS, fs->unmatched_exits);
	}
	ann_str(p, A_WORKER_TASK_POLLS, "on the task tracks only");
	ev_end(p, e);
	flush(p);
	if ((err = status(p)))
		return err;
	if (fflush(p->out) || ferror(p->out))
		return -EIO;
	return 0;
}

uint64_t perfetto_pb__slices(const struct perfetto_pb *p)
{
	return p ? p->slices : 0;
}

uint64_t perfetto_pb__flows(const struct perfetto_pb *p)
{
	return p ? p->flows : 0;
}

uint64_t perfetto_pb__future_slices(const struct perfetto_pb *p)
{
	return p ? p->future_slices : 0;
}

uint64_t perfetto_pb__packets(const struct perfetto_pb *p)
{
	return p ? p->packets : 0;
}

void perfetto_pb__free(struct perfetto_pb *p)
{
	if (!p)
		return;
	futures__free(p->fu);
	ptrack__free(p->pt);
	if (p->own_model)
		task_model__free(p->model);
	strtab__clear(&p->names);
	strtab__clear(&p->strs);
	free(p->task_name_iid);
	free(p->fn_name_iid);
	free(p->fn_loc_iid);
	u64map__clear(&p->threads);
	u64map__clear(&p->tasks);
	free(p->task_defined);
	free(p->target);
	free(p->cmdline);
	free(p->runtime);
	free(p->build_id);
	pb__free(&p->pb);
	free(p);
}

/* ------------------------------------------------------------------ sink */

static int sink_add(void *impl, const struct as_event *ev, const struct as_stack *stack)
{
	(void)stack;
	return perfetto_pb__add(impl, ev);
}

static int sink_finish(void *impl, const struct as_trace_end *end)
{
	return perfetto_pb__finish(impl, end, end && end->truncated);
}

static const struct as_sink_ops sink_ops = {
	.name = "perfetto", .add = sink_add, .finish = sink_finish, .free = NULL,
};

struct as_sink perfetto_pb__sink(struct perfetto_pb *p)
{
	return (struct as_sink){ .ops = &sink_ops, .impl = p };
}
