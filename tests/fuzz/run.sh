#!/usr/bin/env bash
# Runs the libFuzzer harnesses built by `make fuzz` (build/fuzz/fuzz_trace,
# build/fuzz/fuzz_cat, build/fuzz/fuzz_html), one after the other, and ends with "N passed, N
# failed" (one per harness: passed when it ran its course without a crash,
# leak, sanitizer report or timeout).
#   tests/fuzz/run.sh --runs N [NAME...]      N inputs each from the seeds, -seed=1,
#                                             a fresh corpus (make test, make fuzz-run)
#   tests/fuzz/run.sh --seconds S [NAME...]   S seconds each on the kept corpus
#                                             build/fuzz/corpus/NAME (make fuzz-long)
# NAME is trace, cat or html (default all three). Seeds: tests/data/*.trace and
# tests/fuzz/seeds/trace/* for the trace reader; tests/fuzz/seeds/cat/* and
# the CAT export of every trace seed (when build/asyncscope exists) for the
# CAT reader; tests/data/html/*.json and tests/integ/data/*.json for the HTML
# page's report reader. A crash is written to build/fuzz/crashes/NAME-crash-SHA1 (a
# leak: NAME-leak-..., a hang: NAME-timeout-...); replay it with
#   build/fuzz/fuzz_NAME build/fuzz/crashes/NAME-crash-SHA1
# FUZZ_TIME_CAP (seconds, default 45) bounds a --runs run of one harness.
# An input slower than FUZZ_INPUT_TIMEOUT seconds is a hang (libFuzzer's
# -timeout, wall clock): 10 for --seconds, 60 for --runs, which make test
# runs at nice 19 on a loaded shared machine, where one input that takes
# 0.17 s once took over 10 s in CI.
set -u
cd "$(dirname "$0")/../.."
B=build/fuzz
mode= val=
case "${1:-}" in
--runs) mode=runs val=${2:?--runs N} ;;
--seconds) mode=seconds val=${2:?--seconds S} ;;
*) echo "usage: $0 --runs N | --seconds S [trace|cat|html ...]" >&2; exit 2 ;;
esac
shift 2
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(trace cat html)
cap=${FUZZ_TIME_CAP:-45}
if [ "$mode" = runs ]; then per_input=${FUZZ_INPUT_TIMEOUT:-60}; else per_input=${FUZZ_INPUT_TIMEOUT:-10}; fi
passed=0 failed=0

# seeds NAME DIR: fills DIR with NAME's seed inputs
seeds() {
	mkdir -p "$2"
	case $1 in
	trace) cp tests/data/*.trace tests/fuzz/seeds/trace/* "$2"/ ;;
	cat)
		cp tests/fuzz/seeds/cat/* "$2"/
		if [ -x build/asyncscope ]; then
			for t in tests/data/*.trace tests/fuzz/seeds/trace/*; do
				build/asyncscope export --format cat --partial -o "$2/$(basename "$t").cat.txt" \
					"$t" 2>/dev/null || rm -f "$2/$(basename "$t").cat.txt"
			done
		fi ;;
	html) cp tests/data/html/*.json tests/integ/data/*.json "$2"/ ;;
	esac
}

mkdir -p "$B/crashes"
for n in "${names[@]}"; do
	bin=$B/fuzz_$n
	if [ ! -x "$bin" ]; then
		echo "FAIL fuzz_$n: $bin not built (make fuzz)"
		failed=$((failed + 1))
		continue
	fi
	opts=(-artifact_prefix="$B/crashes/$n-" -timeout="$per_input" -rss_limit_mb=2048 -print_final_stats=1)
	[ -f "tests/fuzz/$n.dict" ] && opts+=(-dict="tests/fuzz/$n.dict")
	log=$B/fuzz_$n.log
	if [ "$mode" = runs ]; then
		corpus=$B/corpus-test/$n
		rm -rf "$corpus"
		seeds "$n" "$corpus"
		nice -n 19 timeout -k 5 $((cap + 15)) "$bin" "${opts[@]}" -seed=1 -runs="$val" \
			-max_total_time="$cap" "$corpus" >"$log" 2>&1
	else
		corpus=$B/corpus/$n
		seeds "$n" "$corpus"
		nice -n 19 timeout -k 5 $((val + 60)) "$bin" "${opts[@]}" -max_total_time="$val" \
			"$corpus" >"$log" 2>&1
	fi
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	if [ $rc -eq 0 ]; then
		echo "PASS fuzz_$n: ${runs:-?} inputs, ${speed:-?}/s, corpus $corpus"
		passed=$((passed + 1))
	else
		echo "FAIL fuzz_$n: exit $rc after ${runs:-?} inputs (log $log, inputs in $B/crashes):"
		grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|artifact_prefix|Test unit written)' \
			"$log" | head -8
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
