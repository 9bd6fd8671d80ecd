/* The threads of a running process as the kernel holds them, read without
 * a probe or a ptrace stop: one pass of a BPF task iterator (bpf/
 * threads.bpf.c, a skeleton of its own) gives each thread's id, name,
 * thread pointer (x86-64 FS base: where its thread-local variables are)
 * and its user registers as last saved (all the general-purpose ones). Nothing stays attached once
 * proc_threads__read() returns: the iterator's link lives for the one read.
 * The only file of dump's that includes libbpf (dump/ never does). */
#ifndef AS_PROBE_THREADS_H
#define AS_PROBE_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_thread {
	pid_t tid;
	char comm[17];          /* as /proc/PID/task/TID/comm, NUL-terminated */
	uint64_t fsbase;        /* the thread pointer, 0 unknown */
	bool has_regs;          /* ip, sp, bp and regs read (a user thread) */
	bool on_cpu;            /* running on a CPU when read: its registers are
	                           those of its last entry into the kernel */
	uint64_t switches;      /* context switches so far: the same in a later read,
	                           the thread has not run in between */
	uint64_t ip, sp, bp;
	/* every general-purpose register, DWARF x86-64 order (rax, rdx, rcx,
	 * rbx, rsi, rdi, rbp, rsp, r8..r15, rip), as sym/dwarf_unwind.h and
	 * dump/block_on.h take them */
	uint64_t regs[17];
};

/* Every thread of process pid: *out (caller frees with free()) holds *n of
 * them, in the kernel's order (by thread id). Returns 0, or -errno with a
 * one-line lowercase reason in err (-EPERM not allowed to use BPF, -ESRCH
 * no such process, -ENOTSUP the kernel has no task iterator or BTF). */
int proc_threads__read(pid_t pid, struct proc_thread **out, size_t *n, char *err, size_t errlen);

/* The same, the iterator loaded once for reads again and again (dump
 * --every: loading it reads the kernel's BTF, most of a read's cost): open
 * (NULL with errno and err on failure), read as proc_threads__read() does
 * (its link still lives for the one read only), close (accepts NULL). */
struct proc_threads;
struct proc_threads *proc_threads__open(pid_t pid, char *err, size_t errlen);
int proc_threads__read_open(struct proc_threads *pt, struct proc_thread **out, size_t *n,
			    char *err, size_t errlen);
void proc_threads__close(struct proc_threads *pt);

#endif
