/* DWARF location expressions of a frame's variables: see frame_loc.h. */
#include "dump/frame_loc.h"

#include <dwarf.h>
#include <errno.h>

#define STACK_MAX 16

static int reg_value(const struct frame_regs *r, uint64_t reg, uint64_t *v)
{
	if (reg >= FRAME_NREGS)
		return -ENOTSUP;
	if (!(r->known & (1u << reg)))
		return -EAGAIN;
	*v = r->v[reg];
	return 0;
}

int frame_loc_eval(const Dwarf_Op *ops, size_t n, const Dwarf_Op *fb, size_t nfb,
		   const struct frame_regs *r, uint64_t bias, mem_read_fn read, void *rctx,
		   struct frame_loc *out)
{
	uint64_t st[STACK_MAX], v;
	size_t sp = 0;
	int err;

	if (!n)
		return -ENODATA;
	out->piece = 0;
	for (size_t i = 0; i < n; i++) {
		const Dwarf_Op *op = &ops[i];
		uint8_t a = op->atom;
		if (sp == STACK_MAX)
			return -EINVAL;
		if (a >= DW_OP_reg0 && a <= DW_OP_reg31) {
			/* the value is in the register: a location by itself */
			if ((err = reg_value(r, a - DW_OP_reg0, &v)))
				return err;
			if (i + 1 < n && ops[i + 1].atom != DW_OP_piece)
				return -EINVAL;
			out->kind = FRAME_LOC_VALUE;
			out->where = v;
			out->piece = i + 1 < n ? ops[i + 1].number : 0;
			return 0;
		}
		if (a == DW_OP_regx) {
			if ((err = reg_value(r, op->number, &v)))
				return err;
			out->kind = FRAME_LOC_VALUE;
			out->where = v;
			out->piece = i + 1 < n && ops[i + 1].atom == DW_OP_piece ? ops[i + 1].number : 0;
			return 0;
		}
		if (a >= DW_OP_breg0 && a <= DW_OP_breg31) {
			if ((err = reg_value(r, a - DW_OP_breg0, &v)))
				return err;
			st[sp++] = v + (uint64_t)(int64_t)op->number;
			continue;
		}
		if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
			st[sp++] = a - DW_OP_lit0;
			continue;
		}
		switch (a) {
		case DW_OP_bregx:
			if ((err = reg_value(r, op->number, &v)))
				return err;
			st[sp++] = v + (uint64_t)(int64_t)op->number2;
			break;
		case DW_OP_fbreg: {
			struct frame_loc base;
			/* the frame base is itself a location: its value is the base */
			if (!fb || !nfb)
				return -ENOTSUP;
			if (fb[0].atom == DW_OP_fbreg)
				return -EINVAL;
			if ((err = frame_loc_eval(fb, nfb, NULL, 0, r, bias, read, rctx, &base)))
				return err;
			st[sp++] = base.where + (uint64_t)(int64_t)op->number;
			break;
		}
		case DW_OP_call_frame_cfa:
			if (!r->cfa)
				return -EAGAIN;
			st[sp++] = r->cfa;
			break;
		case DW_OP_addr:
			st[sp++] = op->number + bias;
			break;
		case DW_OP_const1u: case DW_OP_const2u: case DW_OP_const4u: case DW_OP_const8u:
		case DW_OP_const1s: case DW_OP_const2s: case DW_OP_const4s: case DW_OP_const8s:
		case DW_OP_constu: case DW_OP_consts:
			st[sp++] = op->number;
			break;
		case DW_OP_plus_uconst:
			if (!sp)
				return -EINVAL;
			st[sp - 1] += op->number;
			break;
		case DW_OP_plus: case DW_OP_minus:
			if (sp < 2)
				return -EINVAL;
			sp--;
			st[sp - 1] = a == DW_OP_plus ? st[sp - 1] + st[sp] : st[sp - 1] - st[sp];
			break;
		case DW_OP_deref:
			if (!sp)
				return -EINVAL;
			if ((err = read(rctx, st[sp - 1], &v, sizeof(v))))
				return err;
			st[sp - 1] = v;
			break;
		case DW_OP_stack_value:
			if (!sp)
				return -EINVAL;
			out->kind = FRAME_LOC_VALUE;
			out->where = st[sp - 1];
			out->piece = i + 1 < n && ops[i + 1].atom == DW_OP_piece ? ops[i + 1].number : 0;
			return 0;
		case DW_OP_piece:
			/* the first piece's location: none before it is a piece
			 * optimized out */
			if (!sp)
				return -ENODATA;
			out->kind = FRAME_LOC_MEM;
			out->where = st[sp - 1];
			out->piece = op->number;
			return 0;
		case DW_OP_entry_value:
		case DW_OP_GNU_entry_value:
			return -ENODATA;
		default:
			return -ENOTSUP;
		}
	}
	if (!sp)
		return -EINVAL;
	out->kind = FRAME_LOC_MEM;
	out->where = st[sp - 1];
	return 0;
}

const char *frame_loc_strerror(int err)
{
	switch (err) {
	case -ENODATA: return "location optimized out";
	case -EAGAIN: return "location in a register the unwinder did not recover";
	default: return "location not understood";
	}
}
