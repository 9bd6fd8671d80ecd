/* Probe sites (site.h): Capstone decodes the function; the kernel's own
 * rules (Linux 6.18, arch/x86/kernel/uprobes.c) say which instruction is
 * emulated. Measured here with a counting uprobe (the uprobe PMU, no BPF)
 * on functions that start with each instruction, 1M hits each, CPU per
 * hit: sub $8,%rsp 5.4-6.0 us, test %rsi,%rsi 5.0, lea 5.5, mov 5.0,
 * endbr64 5.4, 0f 1f 40 01 (a nop, but not the kernel's) 5.3, 9- and
 * 10-byte nops 5.0 (single-stepped); je rel8 1.05-1.25 us, jmp rel8 1.1,
 * call rel32 1.2-1.3, push %rbx 1.35, nop 1.2, 66 90 1.05, 0f 1f 40 00
 * 1.0-1.2, 66 0f 1f 44 00 00 1.2, 8-byte nop 1.0, 5-byte nop 0.9
 * (emulated). */
#include "probe/site.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kernel's x86_nops[len] (arch/x86/include/asm/nops.h, 64-bit): only
 * these exact byte strings count as nops for its emulation
 * (branch_setup_xol_ops); `0f 1f 40 01` or a 9-byte nop is single-stepped. */
static const uint8_t kernel_nops[9][8] = {
	[1] = { 0x90 },
	[2] = { 0x66, 0x90 },
	[3] = { 0x0f, 0x1f, 0x00 },
	[4] = { 0x0f, 0x1f, 0x40, 0x00 },
	[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 },
	[6] = { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 },
	[7] = { 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00 },
	[8] = { 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
};

static bool legacy_prefix(uint8_t b)
{
	return b == 0xf0 || b == 0xf2 || b == 0xf3 || b == 0x26 || b == 0x2e || b == 0x36 ||
	       b == 0x3e || b == 0x64 || b == 0x65 || b == 0x66 || b == 0x67;
}

/* One-byte opcodes the kernel refuses in 64-bit code (good_insns_64). */
static bool bad_opcode1(uint8_t op)
{
	static const uint8_t bad[] = { 0x06, 0x07, 0x0e, 0x16, 0x17, 0x1e, 0x1f, 0x27, 0x2f, 0x37,
				       0x3f, 0x60, 0x61, 0x62, 0x6c, 0x6d, 0x6e, 0x6f, 0x82, 0x9a,
				       0xcc, 0xcd, 0xce, 0xcf, 0xd4, 0xd5, 0xd6, 0xe4, 0xe5, 0xe6,
				       0xe7, 0xea, 0xec, 0xed, 0xee, 0xef, 0xf1, 0xf4, 0xfa, 0xfb };
	return memchr(bad, op, sizeof(bad)) != NULL;
}

/* Two-byte opcodes (0f xx) it refuses (good_2byte_insns). */
static bool bad_opcode2(uint8_t op)
{
	static const uint8_t bad[] = { 0x00, 0x01, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0b, 0x30, 0x34,
				       0x35, 0x37, 0x78, 0x79, 0xae };
	return memchr(bad, op, sizeof(bad)) != NULL;
}

/* The kernel's analysis of one instruction of len bytes at code:
 * is_prefix_bad() and the good-instruction tables (refused), then
 * branch_setup_xol_ops() (jmp, call, jcc without a 66 prefix; opcode 90
 * with any prefixes; x86_nops[len]) and push_setup_xol_ops() (push reg,
 * with no prefix but REX 41) (emulated); the rest is single-stepped. */
static enum site_class classify(const uint8_t *code, size_t len)
{
	size_t i = 0;
	bool opsize = false;

	for (; i < len && legacy_prefix(code[i]); i++) {
		uint8_t b = code[i];
		if (b == 0xf0 || b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e)
			return SITE_REJECTED;
		opsize = opsize || b == 0x66;
	}
	size_t pfx = i;
	uint8_t rex = 0;
	if (i < len && (code[i] & 0xf0) == 0x40)
		rex = code[i++];
	if (i >= len)
		return SITE_SSTEP;
	uint8_t op = code[i];
	if (bad_opcode1(op))
		return SITE_REJECTED;
	if (op == 0x0f && i + 1 < len && bad_opcode2(code[i + 1]))
		return SITE_REJECTED;
	if (len <= 8 && !memcmp(code, kernel_nops[len], len))
		return SITE_EMULATED;
	if (op == 0x90)
		return SITE_EMULATED;
	bool branch = op == 0xeb || op == 0xe9 || op == 0xe8 || (op >= 0x70 && op <= 0x7f) ||
		      (op == 0x0f && i + 1 < len && code[i + 1] >= 0x80 && code[i + 1] <= 0x8f);
	if (branch)
		return opsize ? SITE_SSTEP : SITE_EMULATED;
	if (op >= 0x50 && op <= 0x57 && !pfx && (len == 1 || (len == 2 && rex == 0x41)))
		return SITE_EMULATED;
	return SITE_SSTEP;
}

/* snprintf for notes: a note cut short is still a note. */
__attribute__((format(printf, 3, 4)))
static void note(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, n, fmt, ap);
	va_end(ap);
}

static int cs_start(csh *h)
{
	if (cs_open(CS_ARCH_X86, CS_MODE_64, h) != CS_ERR_OK)
		return -EINVAL;
	cs_option(*h, CS_OPT_DETAIL, CS_OPT_ON);
	cs_option(*h, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
	return 0;
}

enum site_class site_insn_class(const uint8_t *code, size_t len)
{
	csh h;
	cs_insn *insn = NULL;
	enum site_class c = SITE_SSTEP;

	if (!len || cs_start(&h))
		return SITE_SSTEP;
	if (cs_disasm(h, code, len, 0, 1, &insn) == 1)
		c = classify(code, insn->size);
	else if (len >= 1 && (code[0] == 0xf0 || bad_opcode1(code[0])))
		c = SITE_REJECTED;
	cs_free(insn, 1);
	cs_close(&h);
	return c;
}

static void insn_text(const cs_insn *insn, char *buf, size_t n)
{
	note(buf, n, "%s%s%s", insn->mnemonic, insn->op_str[0] ? " " : "", insn->op_str);
}

const char *site_insn_text(const uint8_t *code, size_t len, uint64_t addr, char *buf, size_t n)
{
	csh h;
	cs_insn *insn = NULL;

	snprintf(buf, n, "?");
	if (!len || cs_start(&h))
		return buf;
	if (cs_disasm(h, code, len, addr, 1, &insn) == 1)
		insn_text(insn, buf, n);
	cs_free(insn, 1);
	cs_close(&h);
	return buf;
}

/* The general register (enum site_reg) a Capstone register is part of, -1
 * for any other (rip, flags, vector registers). */
static int gpr_of(unsigned reg)
{
	static const unsigned fam[16][5] = {
		{ X86_REG_RAX, X86_REG_EAX, X86_REG_AX, X86_REG_AL, X86_REG_AH },
		{ X86_REG_RCX, X86_REG_ECX, X86_REG_CX, X86_REG_CL, X86_REG_CH },
		{ X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL, X86_REG_DH },
		{ X86_REG_RBX, X86_REG_EBX, X86_REG_BX, X86_REG_BL, X86_REG_BH },
		{ X86_REG_RSP, X86_REG_ESP, X86_REG_SP, X86_REG_SPL, 0 },
		{ X86_REG_RBP, X86_REG_EBP, X86_REG_BP, X86_REG_BPL, 0 },
		{ X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL, 0 },
		{ X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL, 0 },
		{ X86_REG_R8, X86_REG_R8D, X86_REG_R8W, X86_REG_R8B, 0 },
		{ X86_REG_R9, X86_REG_R9D, X86_REG_R9W, X86_REG_R9B, 0 },
		{ X86_REG_R10, X86_REG_R10D, X86_REG_R10W, X86_REG_R10B, 0 },
		{ X86_REG_R11, X86_REG_R11D, X86_REG_R11W, X86_REG_R11B, 0 },
		{ X86_REG_R12, X86_REG_R12D, X86_REG_R12W, X86_REG_R12B, 0 },
		{ X86_REG_R13, X86_REG_R13D, X86_REG_R13W, X86_REG_R13B, 0 },
		{ X86_REG_R14, X86_REG_R14D, X86_REG_R14W, X86_REG_R14B, 0 },
		{ X86_REG_R15, X86_REG_R15D, X86_REG_R15W, X86_REG_R15B, 0 },
	};

	if (reg == X86_REG_INVALID)
		return -1;
	for (int r = 0; r < 16; r++)
		for (int k = 0; k < 5; k++)
			if (fam[r][k] == reg)
				return r;
	return -1;
}

static const char *const gpr_names[16] = { "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
					   "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15" };

static bool in_group(const cs_insn *insn, unsigned g)
{
	for (unsigned i = 0; i < insn->detail->groups_count; i++)
		if (insn->detail->groups[i] == g)
			return true;
	return false;
}

static bool is_branch(const cs_insn *insn)
{
	return in_group(insn, X86_GRP_JUMP) || in_group(insn, X86_GRP_CALL) ||
	       in_group(insn, X86_GRP_RET) || in_group(insn, X86_GRP_INT) ||
	       in_group(insn, X86_GRP_IRET) || in_group(insn, X86_GRP_PRIVILEGE);
}

/* Instructions that may be passed when their operands allow: data moves,
 * address arithmetic, compares, the usual ALU ops, nops and endbr64. A
 * short list on purpose: what is not on it stops the search. */
static bool passable_id(unsigned id)
{
	switch (id) {
	case X86_INS_MOV: case X86_INS_MOVABS: case X86_INS_MOVZX: case X86_INS_MOVSX:
	case X86_INS_MOVSXD: case X86_INS_LEA: case X86_INS_TEST: case X86_INS_CMP:
	case X86_INS_XOR: case X86_INS_AND: case X86_INS_OR: case X86_INS_ADD: case X86_INS_SUB:
	case X86_INS_NOP: case X86_INS_ENDBR64:
		return true;
	default:
		return false;
	}
}

/* Whether the probe may be moved past insn; if not, why into why. */
static bool passable(csh h, const cs_insn *insn, const struct site_needs *needs,
		     char *why, size_t n)
{
	const cs_x86 *x = &insn->detail->x86;
	cs_regs rd, wr;
	uint8_t n_rd = 0, n_wr = 0;

	if (is_branch(insn)) {
		snprintf(why, n, "is a branch");
		return false;
	}
	if (!passable_id(insn->id)) {
		snprintf(why, n, "is not on the list of passable instructions");
		return false;
	}
	if (cs_regs_access(h, insn, rd, &n_rd, wr, &n_wr) != CS_ERR_OK) {
		snprintf(why, n, "has unknown register effects");
		return false;
	}
	for (uint8_t k = 0; k < n_wr; k++) {
		int g = gpr_of(wr[k]);
		if (g >= 0 && (needs->regs & SITE_REG_BIT(g))) {
			snprintf(why, n, "writes %%%s", gpr_names[g]);
			return false;
		}
		if (g == SITE_RSP && needs->stack) {
			snprintf(why, n, "moves %%rsp");
			return false;
		}
	}
	for (uint8_t k = 0; k < x->op_count; k++) {
		const cs_x86_op *op = &x->operands[k];
		if (op->type == X86_OP_REG && (op->access & CS_AC_WRITE)) {
			int g = gpr_of(op->reg);
			if (g >= 0 && (needs->regs & SITE_REG_BIT(g))) {
				snprintf(why, n, "writes %%%s", gpr_names[g]);
				return false;
			}
			if (g == SITE_RSP && needs->stack) {
				snprintf(why, n, "moves %%rsp");
				return false;
			}
		}
		if (op->type == X86_OP_MEM && (op->access & CS_AC_WRITE) &&
		    (needs->stack || op->mem.base != X86_REG_RSP || op->mem.segment != X86_REG_INVALID)) {
			snprintf(why, n, "stores to memory");
			return false;
		}
	}
	return true;
}

/* A jump whose targets this decoding cannot know: through a register
 * (how PIC jump tables jump: the target computed from a table) or through
 * an indexed memory operand (a jump table). A jump through a memory slot
 * without an index (a GOT entry, a vtable slot) is a tail call to the
 * entry of a function. */
static bool unknown_targets(const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;

	if (!in_group(insn, X86_GRP_JUMP) || x->op_count < 1)
		return false;
	const cs_x86_op *op = &x->operands[0];
	return op->type == X86_OP_REG || (op->type == X86_OP_MEM && op->mem.index != X86_REG_INVALID);
}

/* A direct branch's target offset, or -1. */
static int64_t direct_target(const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;

	if (!(in_group(insn, X86_GRP_JUMP) || in_group(insn, X86_GRP_CALL)) || x->op_count < 1 ||
	    x->operands[0].type != X86_OP_IMM)
		return -1;
	return x->operands[0].imm;
}

int site_find(const uint8_t *code, size_t len, const struct site_needs *needs,
	      struct probe_site *out)
{
	cs_insn *insns = NULL;
	uint8_t *target = NULL;
	size_t count = 0, decoded = 0;
	char passed[sizeof(out->note)] = "";
	csh h;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	out->why = SITE_ENTRY_STOPPED;
	if (!len) {
		note(out->note, sizeof(out->note), "function size unknown");
		return 0;
	}
	if (cs_start(&h))
		return -EINVAL;
	count = cs_disasm(h, code, len, 0, 0, &insns);
	if (!count) {
		note(out->note, sizeof(out->note), "does not decode");
		goto cleanup;
	}
	if (classify(code, insns[0].size) == SITE_EMULATED) {
		out->why = SITE_ENTRY_CHEAP;
		goto cleanup;
	}
	target = calloc(len, 1);
	if (!target) {
		ret = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < count; i++) {
		int64_t t = direct_target(&insns[i]);
		decoded = insns[i].address + insns[i].size;
		if (t > 0 && (uint64_t)t < len)
			target[t] = 1;
		if (unknown_targets(&insns[i])) {
			char txt[64];
			insn_text(&insns[i], txt, sizeof(txt));
			note(out->note, sizeof(out->note), "%s at +0x%llx may jump anywhere in it",
				 txt, (unsigned long long)insns[i].address);
			goto cleanup;
		}
	}
	if (decoded < len) {
		note(out->note, sizeof(out->note), "bytes at +0x%zx do not decode", decoded);
		goto cleanup;
	}
	for (size_t i = 0; i < count && i <= SITE_MAX_SKIP; i++) {
		const cs_insn *in = &insns[i];
		char txt[64], why[64];
		insn_text(in, txt, sizeof(txt));
		if (i > 0 && target[in->address]) {
			note(out->note, sizeof(out->note), "%s at +0x%llx is a branch target", txt,
				 (unsigned long long)in->address);
			goto cleanup;
		}
		if (i > 0 && classify(code + in->address, in->size) == SITE_EMULATED) {
			out->off = (uint32_t)in->address;
			out->why = SITE_MOVED;
			out->skipped = (uint8_t)i;
			note(out->note, sizeof(out->note), "%s", passed);
			goto cleanup;
		}
		if (i == SITE_MAX_SKIP) {
			note(out->note, sizeof(out->note), "no emulated instruction in the first %d",
				 SITE_MAX_SKIP);
			goto cleanup;
		}
		if (!passable(h, in, needs, why, sizeof(why))) {
			note(out->note, sizeof(out->note), "%s at +0x%llx %s", txt,
				 (unsigned long long)in->address, why);
			goto cleanup;
		}
		size_t used = strlen(passed);
		/* the note lists what was passed, as much as fits */
		note(passed + used, sizeof(passed) - used, "%s%s", used ? "; " : "", txt);
	}
	note(out->note, sizeof(out->note), "the function ends at +0x%zx", len);
cleanup:
	free(target);
	if (insns)
		cs_free(insns, count);
	cs_close(&h);
	return ret;
}
