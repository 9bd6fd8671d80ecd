/* dump/frame_loc.c on hand-built location expressions (the shapes rustc
 * emits for locals, as llvm-dwarfdump shows them on tests/apps
 * block_on_ways): rsp- and rbp-relative slots, the frame base (a register
 * or the CFA), a value in a register, computed values, a first piece,
 * an entry value (optimized out), a register the unwinder did not recover,
 * a dereference through the read callback. */
#include <dwarf.h>
#include <errno.h>
#include <string.h>

#include "dump/frame_loc.h"
#include "harness.h"

#define RBP 6
#define RSP 7
#define R12 12

static struct frame_regs regs(void)
{
	struct frame_regs r = { .cfa = 0x7ffd1000 };
	r.v[RBP] = 0x7ffd0f00;
	r.v[RSP] = 0x7ffd0e00;
	r.v[R12] = 0x55aa00;
	r.v[16] = 0x401000;
	r.known = 1u << RBP | 1u << RSP | 1u << R12 | 1u << 16;
	return r;
}

static int word_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	uint64_t v = addr == 0x7ffd0e10 ? 0x12345678 : 0;
	(void)ctx;
	if (len != 8 || !v)
		return -EFAULT;
	memcpy(buf, &v, 8);
	return 0;
}

static int eval(const Dwarf_Op *ops, size_t n, const Dwarf_Op *fb, size_t nfb, struct frame_loc *l)
{
	struct frame_regs r = regs();
	memset(l, 0, sizeof(*l));
	return frame_loc_eval(ops, n, fb, nfb, &r, 0x1000, word_read, NULL, l);
}

static void test_slots(void)
{
	struct frame_loc l;
	Dwarf_Op breg[] = { { .atom = DW_OP_breg7, .number = 48 } };
	Dwarf_Op neg[] = { { .atom = DW_OP_breg6, .number = (Dwarf_Word)-16 } };
	Dwarf_Op fbreg[] = { { .atom = DW_OP_fbreg, .number = 40 } };
	Dwarf_Op fb_rbp[] = { { .atom = DW_OP_reg6 } };
	Dwarf_Op fb_cfa[] = { { .atom = DW_OP_call_frame_cfa } };
	Dwarf_Op addr[] = { { .atom = DW_OP_addr, .number = 0x2000 } };

	CHECK_EQ_U64(eval(breg, 1, NULL, 0, &l), 0);
	CHECK(l.kind == FRAME_LOC_MEM);
	CHECK_EQ_U64(l.where, 0x7ffd0e30);
	CHECK_EQ_U64(eval(neg, 1, NULL, 0, &l), 0);
	CHECK_EQ_U64(l.where, 0x7ffd0ef0);
	/* fbreg: the frame base a register's value (rbp), or the CFA */
	CHECK_EQ_U64(eval(fbreg, 1, fb_rbp, 1, &l), 0);
	CHECK(l.kind == FRAME_LOC_MEM);
	CHECK_EQ_U64(l.where, 0x7ffd0f28);
	CHECK_EQ_U64(eval(fbreg, 1, fb_cfa, 1, &l), 0);
	CHECK_EQ_U64(l.where, 0x7ffd1028);
	CHECK_EQ_U64(eval(fbreg, 1, NULL, 0, &l), -ENOTSUP);
	/* a static: the load bias added */
	CHECK_EQ_U64(eval(addr, 1, NULL, 0, &l), 0);
	CHECK_EQ_U64(l.where, 0x3000);
}

static void test_values(void)
{
	struct frame_loc l;
	Dwarf_Op reg[] = { { .atom = DW_OP_reg12 } };
	Dwarf_Op regx[] = { { .atom = DW_OP_regx, .number = 12 } };
	/* BlockingRegionGuard::block_on's self in main: rsp+128+0x19, a value */
	Dwarf_Op computed[] = { { .atom = DW_OP_breg7, .number = 128 },
				{ .atom = DW_OP_plus_uconst, .number = 0x19 },
				{ .atom = DW_OP_stack_value } };
	Dwarf_Op piece[] = { { .atom = DW_OP_reg12 }, { .atom = DW_OP_piece, .number = 8 },
			     { .atom = DW_OP_reg1 }, { .atom = DW_OP_piece, .number = 8 } };
	Dwarf_Op deref[] = { { .atom = DW_OP_breg7, .number = 0x10 }, { .atom = DW_OP_deref } };

	CHECK_EQ_U64(eval(reg, 1, NULL, 0, &l), 0);
	CHECK(l.kind == FRAME_LOC_VALUE);
	CHECK_EQ_U64(l.where, 0x55aa00);
	CHECK_EQ_U64(l.piece, 0);
	CHECK_EQ_U64(eval(regx, 1, NULL, 0, &l), 0);
	CHECK_EQ_U64(l.where, 0x55aa00);
	CHECK_EQ_U64(eval(computed, 3, NULL, 0, &l), 0);
	CHECK(l.kind == FRAME_LOC_VALUE);
	CHECK_EQ_U64(l.where, 0x7ffd0e99);
	/* the first piece of a value split across registers */
	CHECK_EQ_U64(eval(piece, 4, NULL, 0, &l), 0);
	CHECK(l.kind == FRAME_LOC_VALUE);
	CHECK_EQ_U64(l.piece, 8);
	CHECK_EQ_U64(eval(deref, 2, NULL, 0, &l), 0);
	CHECK(l.kind == FRAME_LOC_MEM);
	CHECK_EQ_U64(l.where, 0x12345678);
}

static void test_unavailable(void)
{
	struct frame_loc l;
	/* CachedParkThread::block_on's f at the park: rsi on entry */
	Dwarf_Op entry[] = { { .atom = DW_OP_GNU_entry_value, .number = 1 } };
	Dwarf_Op entry5[] = { { .atom = DW_OP_entry_value, .number = 1 } };
	/* the first 8 bytes optimized out (an empty piece) */
	Dwarf_Op hole[] = { { .atom = DW_OP_piece, .number = 8 }, { .atom = DW_OP_reg1 },
			    { .atom = DW_OP_piece, .number = 8 } };
	/* rdx: call-clobbered, not recovered in an outer frame */
	Dwarf_Op lost[] = { { .atom = DW_OP_breg1, .number = 8 } };
	Dwarf_Op lost_reg[] = { { .atom = DW_OP_reg3 } };
	Dwarf_Op implicit_ptr[] = { { .atom = DW_OP_implicit_pointer } };
	Dwarf_Op bad_deref[] = { { .atom = DW_OP_breg7, .number = 0x20 }, { .atom = DW_OP_deref } };
	Dwarf_Op underflow[] = { { .atom = DW_OP_plus_uconst, .number = 1 } };

	CHECK_EQ_U64(eval(entry, 1, NULL, 0, &l), -ENODATA);
	CHECK_EQ_U64(eval(entry5, 1, NULL, 0, &l), -ENODATA);
	CHECK_EQ_U64(eval(NULL, 0, NULL, 0, &l), -ENODATA);
	CHECK_EQ_U64(eval(hole, 3, NULL, 0, &l), -ENODATA);
	CHECK_EQ_U64(eval(lost, 1, NULL, 0, &l), -EAGAIN);
	CHECK_EQ_U64(eval(lost_reg, 1, NULL, 0, &l), -EAGAIN);
	CHECK_EQ_U64(eval(implicit_ptr, 1, NULL, 0, &l), -ENOTSUP);
	CHECK_EQ_U64(eval(bad_deref, 2, NULL, 0, &l), -EFAULT);
	CHECK_EQ_U64(eval(underflow, 1, NULL, 0, &l), -EINVAL);
	CHECK_STR(frame_loc_strerror(-ENODATA), "location optimized out");
	CHECK_STR(frame_loc_strerror(-EAGAIN), "location in a register the unwinder did not recover");
	CHECK_STR(frame_loc_strerror(-ENOTSUP), "location not understood");
}

int main(void)
{
	RUN(test_slots);
	RUN(test_values);
	RUN(test_unavailable);
	TEST_MAIN_END();
}
