/* libFuzzer harness of the CAT / uftrace dump text reader (src/cat/) and
 * everything that reads its events (fuzz_drive.h). The input is the text
 * as it is: the reader checks the whole file at open, so there is nothing
 * to recompute. An input that starts with the trace magic goes to the trace
 * reader, as source_open_file() sends it (fuzz_trace.c covers that). Build
 * and run: `make fuzz`, `make fuzz-run` (README, "Fuzzing"). */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_drive.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_drive(data, size);
	return 0;
}
