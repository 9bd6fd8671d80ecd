/* Layout facts of a binary's types from its DWARF, for checking what a
 * runtime profile assumes: a structure's size, whether it has a member, the
 * member's byte offset, size and type. One batch of queries is answered in
 * one pass over the compilation units (dwarf_types__find_norm()). Types are
 * named as Rust DWARF nests them (namespace chain tokio -> runtime -> task
 * -> core -> Header, written "tokio::runtime::task::core::Header") and
 * without generic arguments: "tokio::runtime::task::list::OwnedTasks"
 * answers from the first instantiation found (OwnedTasks<Arc<Handle>>), so
 * ask only for facts that do not depend on the arguments. Never prints;
 * knows nothing of any runtime. */
#ifndef AS_SYM_TYPE_LAYOUT_H
#define AS_SYM_TYPE_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sym/dwarf_types.h"

struct type_layout_query {
	const char *type;     /* "tokio::runtime::task::core::Header" */
	const char *member;   /* "vtable"; NULL: the type's size alone */
	/* Also look through nested structure members, summing offsets (depth
	 * <= 8): "list" inside OwnedTasks { inner: Mutex<OwnedTasksInner> {
	 * data: UnsafeCell { value: OwnedTasksInner { list, .. } } } }. A
	 * direct member is always preferred. */
	bool deep;
};

#define TYPE_LAYOUT_NAME_MAX 256

struct type_layout_fact {
	bool type_found;      /* a defining DIE of the type exists */
	bool member_found;    /* ... and it has the member (false without member) */
	int64_t size;         /* the type's byte size, -1 when unknown */
	uint64_t offset;      /* the member's byte offset in the type */
	int64_t member_size;  /* the member's byte size, -1 when unknown */
	/* The member's type, qualified, without generic arguments
	 * ("tokio::util::sharded_list::ShardedList"; "&tokio::...::Vtable" for
	 * a reference; "" when unnamed), truncated to fit. */
	char member_type[TYPE_LAYOUT_NAME_MAX];
};

/* Answers q[0..n) into out[0..n) (zeroed first; size and member_size -1
 * until known). Returns the number of queries fully answered (type found,
 * and member found when one was asked for), or -errno (-ENOMEM). */
int type_layout__query(struct dwarf_types *dt, const struct type_layout_query *q, size_t n,
		       struct type_layout_fact *out);

#endif
