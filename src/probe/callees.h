/* The functions one function hands control to directly: its `call rel32`
 * targets and the `jmp` targets outside it (tail calls), decoded with
 * Capstone. What a poll copy reaches, for naming its future when neither
 * DWARF nor its symbol does (probe/future_names.h). No ELF here: the
 * caller hands in the function's bytes. */
#ifndef AS_PROBE_CALLEES_H
#define AS_PROBE_CALLEES_H

#include <stddef.h>
#include <stdint.h>

struct callee {
	uint64_t addr;    /* the target's virtual address */
	uint32_t sites;   /* how many call or jump instructions go there */
};

/* The direct callees of the function at virtual address addr whose bytes
 * are code[0..len): distinct targets in order of first appearance, at most
 * max into out, with the number of sites of each. Decoding stops at the
 * first bytes Capstone cannot decode. Returns how many (0..max), or
 * -EINVAL when Capstone cannot start. */
int callees_of(const uint8_t *code, size_t len, uint64_t addr, struct callee *out, size_t max);

#endif
