/* Where a variable of a stack frame is, from its DWARF location
 * expression and the frame's registers as an unwinder recovered them (for
 * dump's block_on futures, dump/block_on.h): the handful of operations
 * rustc emits for locals (DW_OP_bregN / fbreg / call_frame_cfa / regN,
 * plus_uconst, stack_value, a first piece). An entry value (the value a
 * register had when the function was entered: unknowable without call-site
 * DWARF, which rustc does not emit) or an empty expression is the value
 * "optimized out"; a register the unwinder could not recover is said
 * apart. Pure: no I/O beyond the read callback (DW_OP_deref); knows
 * nothing of Tokio. x86-64 DWARF register numbers. */
#ifndef AS_DUMP_FRAME_LOC_H
#define AS_DUMP_FRAME_LOC_H

#include <elfutils/libdw.h>
#include <stddef.h>
#include <stdint.h>

#include "sym/dwarf_types.h"

#define FRAME_NREGS 17   /* rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8..r15, rip */

/* One frame's registers. */
struct frame_regs {
	uint64_t v[FRAME_NREGS];
	uint32_t known;         /* bit i: v[i] recovered */
	uint64_t cfa;           /* canonical frame address (the caller's rsp), 0 unknown */
};

enum frame_loc_kind {
	FRAME_LOC_MEM = 1,      /* the variable is in memory at where */
	FRAME_LOC_VALUE,        /* its value (its first 8 bytes) is where: a register
	                           (DW_OP_regN) or a computed value (DW_OP_stack_value) */
};

struct frame_loc {
	enum frame_loc_kind kind;
	uint64_t where;
	uint64_t piece;         /* bytes the location covers (DW_OP_piece), 0 all */
};

/* Evaluates ops[0..n) in frame r. fb (nfb ops) is the frame base of the
 * function (its DW_AT_frame_base at the pc) for DW_OP_fbreg, NULL none;
 * bias is added to DW_OP_addr. Returns 0 with *out, -ENODATA when the value
 * is optimized out (an entry value, an empty expression or piece), -EAGAIN
 * when a register it needs was not recovered, -ENOTSUP for an operation
 * not handled, -EINVAL for a malformed expression, or the read error. */
int frame_loc_eval(const Dwarf_Op *ops, size_t n, const Dwarf_Op *fb, size_t nfb,
		   const struct frame_regs *r, uint64_t bias, mem_read_fn read, void *rctx,
		   struct frame_loc *out);

/* "location optimized out", "in a register the unwinder did not recover",
 * "location not understood": for the returns above (static). */
const char *frame_loc_strerror(int err);

#endif
