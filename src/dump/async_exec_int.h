/* What async_exec.c (discovery) and async_exec_sample.c (reading a task)
 * share: the dump's async-task state, the task types and vtables found.
 * Private to those two files; async_exec.h is the interface. */
#ifndef AS_DUMP_ASYNC_EXEC_INT_H
#define AS_DUMP_ASYNC_EXEC_INT_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/u64map.h"

#define AX_N_STATICS 2   /* async_exec.c's statics[] */
#define AX_N_TLS     1   /* async_exec.c's tls_vars[] */

struct ctx;

/* One task type: a RawTask<F, T, S>::run copy. */
struct ax_copy {
	uint64_t addr;            /* ELF address of its run */
	char *future;             /* root future, readable (the plan's name), or NULL */
	bool typed;               /* F found: */
	Dwarf_Die fut;
	bool sched;               /* S holds an Arc<async_executor::State>: */
	uint64_t sched_arc_off;   /* its pointer within S */
};

/* One task vtable: its copy and layout (static data: read once). */
struct ax_vt {
	size_t copy;              /* index + 1, 0 none */
	bool layout;              /* layout_info read: */
	uint64_t off_s, off_f, size;
};

struct async_exec {
	struct ctx *c;
	struct ax_copy *copies;
	size_t n_copies;
	struct u64map copy_by_addr;   /* run's ELF address -> index + 1 */
	struct ax_vt *vts;
	size_t n_vts;
	struct u64map vt_by_addr;     /* vtable -> index + 1 into vts */
	struct u64map owned;          /* headers found: 1 */
	struct u64map tried;          /* State addresses read (walked or not kept) */
	size_t n_executors;           /* walked */
	uint8_t *snap;
	Dwarf_Die static_die[AX_N_STATICS];   /* their types: */
	int static_found[AX_N_STATICS];
	Dwarf_Die tls_die[AX_N_TLS];   /* their storages: */
	int tls_found[AX_N_TLS];
	/* layouts */
	uint64_t hdr_state, hdr_vtable, vt_run, vt_layout_info;
	Dwarf_Die opt_layout;         /* Option<TaskLayout> */
	bool have_state;              /* the State's slab described: */
	uint64_t arc_data;            /* ArcInner<State>.data */
	uint64_t slab_off;            /* the Slab within State */
	uint64_t ent_ptr, ent_len, slab_len;   /* within the Slab */
	Dwarf_Die entry;              /* Entry<Waker> */
	uint64_t entry_size;
};

/* One word of the target (through the dump's procmem): 0 or -errno. */
int ax_rd64(struct async_exec *ax, uint64_t addr, uint64_t *v);
/* The task at h: its vtable's entry, or NULL when it is no task of a known
 * type (its vtable read once, then cached). */
struct ax_vt *ax_task_vt(struct async_exec *ax, uint64_t h);
/* DW_AT_name of a DIE, or NULL. */
const char *ax_die_name(Dwarf_Die *d);

#endif
