/* task_id: the one way every output and command names a task. A task is
 *   "#3"   the runtime's own id for it where the runtime has one (Tokio's
 *          task id, as tokio::task::id() returns it), else
 *   "~7"   its number in this trace: 1, 2, ... in order of first sight (the
 *          analysis' seq; async-std and smol tasks, built on async-task,
 *          have no id), else, where neither is known,
 *   "0x55d4ae37480"  its task header address (a task the task model never
 *          saw polled, after lost events: blocking, cpu, uring and usdt keep
 *          such rows by address), else "?".
 * The two prefixes never meet: "#3" and "~3" are different tasks. Text,
 * JSON ("task" keys), HTML, top and dump all print this string. Pure C, no
 * I/O, no globals. */
#ifndef AS_UTIL_TASK_ID_H
#define AS_UTIL_TASK_ID_H

#include <stddef.h>
#include <stdint.h>

/* Longest string task_id_format() writes, with its NUL ("0x" and 16 hex
 * digits, or a prefix and 20 digits). */
#define TASK_ID_MAX 24

/* Writes the identity of a task into buf (caller-owned, size n; truncated
 * if smaller than TASK_ID_MAX) and returns buf: "#id" when id (the runtime's
 * task id) is non-zero, else "~seq" when seq (the trace's number) is
 * non-zero, else "0x..." of header when non-zero, else "?". */
char *task_id_format(char *buf, size_t n, uint64_t id, uint64_t seq, uint64_t header);

#endif
