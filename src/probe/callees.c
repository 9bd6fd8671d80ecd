/* Direct callees of a function (callees.h), with Capstone. */
#include "probe/callees.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <stdbool.h>

static bool in_group(const cs_insn *insn, unsigned g)
{
	for (uint8_t i = 0; i < insn->detail->groups_count; i++)
		if (insn->detail->groups[i] == g)
			return true;
	return false;
}

int callees_of(const uint8_t *code, size_t len, uint64_t addr, struct callee *out, size_t max)
{
	csh h;
	cs_insn *insn;
	const uint8_t *p = code;
	uint64_t a = addr;
	size_t left = len;
	int n = 0;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return -EINVAL;
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	if (!(insn = cs_malloc(h))) {
		cs_close(&h);
		return -EINVAL;
	}
	/* one instruction at a time: a function of any size, no array of all */
	while (left && cs_disasm_iter(h, &p, &left, &a, insn)) {
		bool call = in_group(insn, X86_GRP_CALL), jump = in_group(insn, X86_GRP_JUMP);
		const cs_x86 *x = &insn->detail->x86;
		if ((!call && !jump) || x->op_count < 1 || x->operands[0].type != X86_OP_IMM)
			continue;
		uint64_t t = (uint64_t)x->operands[0].imm;
		if (!call && t >= addr && t < addr + len)
			continue;   /* a branch inside the function */
		int k = 0;
		while (k < n && out[k].addr != t)
			k++;
		if (k < n)
			out[k].sites++;
		else if ((size_t)n < max)
			out[n++] = (struct callee){ .addr = t, .sites = 1 };
	}
	cs_free(insn, 1);
	cs_close(&h);
	return n;
}
