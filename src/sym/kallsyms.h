/* Kernel symbols from /proc/kallsyms (or a file in its format): text
 * symbols sorted by address, looked up by the nearest symbol at or below
 * an address. Read at record time, so that traces carry kernel frame names
 * and reports need no access to the recording machine. No libbpf. */
#ifndef AS_SYM_KALLSYMS_H
#define AS_SYM_KALLSYMS_H

#include <stdint.h>

struct kallsyms;

/* Reads path (NULL: /proc/kallsyms). Returns NULL and sets errno (the
 * error of fopen, ENOMEM, or ENODATA when it holds no usable address: all
 * zero without the privilege to see them). */
struct kallsyms *kallsyms__load(const char *path);
/* Name of the function containing addr (borrowed until kallsyms__free), or
 * NULL when addr is below the first symbol. */
const char *kallsyms__lookup(const struct kallsyms *k, uint64_t addr);
/* Accepts NULL. */
void kallsyms__free(struct kallsyms *k);

#endif
