/* The part both libFuzzer harnesses share (fuzz_trace.c, fuzz_cat.c): one
 * input file run through every command that reads a trace, as the CLI runs
 * them (src/cli/report.c, export.c, blocking.c, cpu.c, uring.c, top.c's
 * live view) but on the library calls alone, with --partial, every output
 * written to a stream that discards it (or checked: fuzz_drive.c says
 * what). Fuzzing code only: not linked into asyncscope. Owns nothing the
 * caller sees. */
#ifndef AS_FUZZ_DRIVE_H
#define AS_FUZZ_DRIVE_H

#include <stddef.h>
#include <stdint.h>

/* Writes data (borrowed for the call) to an in-memory file and opens it by
 * its /proc/self/fd path with source_open_file(), which decides whether it
 * is a trace or a CAT text, as for a file the user names. The analysis
 * options (--max-tasks, thresholds, --lines) are chosen from a hash of
 * data, so one input always takes the same path. Aborts on an internal
 * failure of the harness itself (memfd, write): a crash to look at, not
 * an input problem. */
void fuzz_drive(const uint8_t *data, size_t size);

#endif
