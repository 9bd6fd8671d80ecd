#!/usr/bin/env bash
# Runs every unit test binary given as argument and the unit-style scripts
# tests/unit/test_*.sh (no root: the command-line grammar against
# build/asyncscope), the fuzzers (tests/fuzz/run.sh), then the integration
# cases (tests/integ/run.sh: one PASS/FAIL line per
# tests/integ/cases/*.case), and ends with one line
# "N passed, N failed" over all of them (each unit binary's and script's
# tally, one per fuzzer, one per integration case).
set -u
cd "$(dirname "$0")/.."
# the DWARF memo (src/sym/dwarf_memo.h) in a directory of this run's own:
# the first dump of each program computes it, the later ones read it
if [ -z "${ASYNCSCOPE_CACHE_DIR+set}" ]; then
	ASYNCSCOPE_CACHE_DIR=$(mktemp -d /tmp/asyncscope-test-cache.XXXXXX)
	export ASYNCSCOPE_CACHE_DIR
	trap 'rm -rf "$ASYNCSCOPE_CACHE_DIR"' EXIT
fi
passed=0 failed=0
tally() { # reads a test binary's closing "N passed, N failed" line
	local line p f
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -1)
	if [ -z "$line" ]; then failed=$((failed + 1)); return; fi
	p=${line%% passed*}; f=${line#*passed, }; f=${f%% failed*}
	passed=$((passed + p)); failed=$((failed + f))
}
for t in "$@" tests/unit/test_*.sh; do
	echo "== $t"
	out=$(mktemp)
	if ! "$t" >"$out" 2>&1; then cat "$out"; fi
	tail -1 "$out"
	tally "$out"
	rm -f "$out"
done
# the libFuzzer harnesses of the trace and CAT readers (make fuzz), a fixed
# number of inputs each (FUZZ_RUNS) under a time cap: one tally per harness
echo "== fuzzers (tests/fuzz/run.sh --runs ${FUZZ_RUNS:-10000})"
out=$(mktemp)
tests/fuzz/run.sh --runs "${FUZZ_RUNS:-10000}" 2>&1 | tee "$out"
tally "$out"
rm -f "$out"
echo "== integration cases (real BPF, real programs: tests/integ/cases)"
out=$(mktemp)
tests/integ/run.sh --retries "${INTEG_RETRIES:-1}" 2>&1 | tee "$out"
tally "$out"
rm -f "$out"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
