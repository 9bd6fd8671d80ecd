/* insn_classes KIND [N]: calls N times (default 1M) a function that starts
 * with one instruction of KIND, so that a uprobe on its first byte
 * (bench/insn_classes.sh) measures what the kernel does with that
 * instruction: emulate it (~1 us a hit) or single-step it out of line
 * (~5 us). `insn_classes list` prints each KIND and its function's symbol. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FN(name, body) __asm__(".text\n.globl " #name "\n.type " #name ",@function\n" \
			       ".p2align 4\n" #name ":\n" body "\nret\n.size " #name ", .-" #name "\n")
FN(k_sub_rsp, "sub $8,%rsp\nadd $8,%rsp");
FN(k_test, "test %rsi,%rsi\nje 1f\n1:");
FN(k_lea, "lea 0(%rip),%rdx\njmp 1f\n1:");
FN(k_mov, "mov 8(%rsp),%rcx");
FN(k_endbr64, ".byte 0xf3,0x0f,0x1e,0xfa");
FN(k_je, "je 1f\n1:");
FN(k_jmp, "jmp 1f\n1:");
FN(k_call, "call 1f\n1: add $8,%rsp");
FN(k_push, "push %rbx\npop %rbx");
FN(k_nop1, "nop");
FN(k_nop2, ".byte 0x66,0x90");
FN(k_nop4, ".byte 0x0f,0x1f,0x40,0x00");
FN(k_nop4_odd, ".byte 0x0f,0x1f,0x40,0x01");
FN(k_nop5, ".byte 0x0f,0x1f,0x44,0x00,0x00");
FN(k_nop6, ".byte 0x66,0x0f,0x1f,0x44,0x00,0x00");
FN(k_nop8, ".byte 0x0f,0x1f,0x84,0x00,0x00,0x00,0x00,0x00");
FN(k_nop9, ".byte 0x66,0x0f,0x1f,0x84,0x00,0x00,0x00,0x00,0x00");

#define K(n) void k_##n(void);
K(sub_rsp) K(test) K(lea) K(mov) K(endbr64) K(je) K(jmp) K(call) K(push) K(nop1) K(nop2)
K(nop4) K(nop4_odd) K(nop5) K(nop6) K(nop8) K(nop9)
#undef K

static const struct { const char *name; void (*fn)(void); } kinds[] = {
#define K(n) { #n, k_##n },
	K(sub_rsp) K(test) K(lea) K(mov) K(endbr64) K(je) K(jmp) K(call) K(push) K(nop1) K(nop2)
	K(nop4) K(nop4_odd) K(nop5) K(nop6) K(nop8) K(nop9)
#undef K
};

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 1000000;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (argc > 1 && !strcmp(argv[1], "list"))
			printf("%s k_%s\n", kinds[i].name, kinds[i].name);
		else if (argc > 1 && !strcmp(argv[1], kinds[i].name)) {
			for (long k = 0; k < n; k++)
				kinds[i].fn();
			return 0;
		}
	}
	if (argc > 1 && !strcmp(argv[1], "list"))
		return 0;
	fprintf(stderr, "usage: insn_classes KIND|list [N]\n");
	return 2;
}
