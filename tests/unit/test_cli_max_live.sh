#!/usr/bin/env bash
# --max-live-tasks on a trace of 300,000 never-freed tasks (bench/gen_trace.c),
# without root: report's peak RSS (getrusage of the child) stays under 100 MiB
# at the default (20000) where --max-live-tasks 0 needs over 200 MiB; the
# task count is the same either way; the text report warns at the top, the
# JSON says it in totals; export, blocking, cpu and uring warn on stderr.
# Ends with "N passed, N failed". Usage: tests/unit/test_cli_max_live.sh [ASYNCSCOPE]
cd "$(dirname "$0")/../.."
SRC=$PWD
AS=$(realpath "${1:-build/asyncscope}")
D=$(mktemp -d /tmp/asyncscope-maxlive.XXXXXX)
trap 'rm -rf "$D"' EXIT
cd "$D" || exit 1
passed=0 failed=0
check() { # check "what" command...
	local what=$1; shift
	if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL $what" >&2; fi
}
# peak RSS in KiB of a command (its stdout to out.txt, stderr to err.txt)
maxrss() {
	python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=open("out.txt", "w"), stderr=open("err.txt", "w"))
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}

if ! ${CC:-cc} -O2 -std=gnu11 -D_GNU_SOURCE -I"$SRC/src" -o gen_trace "$SRC/bench/gen_trace.c" \
	"$SRC/src/trace/writer.c" "$SRC/src/util/strtab.c" "$SRC/src/util/u64map.c" -lz ||
   ! ./gen_trace leak.trace 100000 100 300000 >/dev/null; then
	check "bench/gen_trace.c builds and writes never-freed tasks" false
	echo "$passed passed, $failed failed"
	exit 1
fi

limited=$(maxrss "$AS" report leak.trace)
cp out.txt limited.txt
unlimited=$(maxrss "$AS" report --max-live-tasks 0 leak.trace)
cp out.txt unlimited.txt
check "report (default limit): under 100 MiB ($limited KiB)" test "$limited" -lt 102400
check "report --max-live-tasks 0: over 200 MiB ($unlimited KiB)" test "$unlimited" -gt 204800
check "the same task count with or without the limit" \
	test "$(grep -o 'of [0-9]* tasks' limited.txt | sed 's/of //')" = \
	     "$(grep -o '^TASKS: [0-9]* tasks' unlimited.txt | sed 's/TASKS: //')"
check "the warning is the report's third line" \
	grep -qE '^!!! WARNING: [0-9]{6} live tasks folded into TASK GROUPS: more than 20000 tasks were live at once' \
	<(sed -n 3p limited.txt)
check "with the fix" grep -q -- "--max-live-tasks N follows more, 0 all" limited.txt
check "no warning without the limit" test -z "$(grep 'live tasks folded' unlimited.txt)"
"$AS" report --max-live-tasks 1000 leak.trace > out.txt 2>/dev/null
check "--max-live-tasks 1000: said so" grep -qE '^!!! WARNING: [0-9]{6} live tasks folded into TASK GROUPS: more than 1000 tasks' out.txt
"$AS" report --max-live-tasks 1000 --format json leak.trace > r.json 2>/dev/null
check "JSON totals: folded_live_tasks" grep -qE '"folded_live_tasks": [0-9]{6},' r.json
check "JSON totals: max_live_tasks" grep -q '"max_live_tasks": 1000,' r.json
"$AS" report --max-live-tasks x leak.trace > /dev/null 2> err.txt
check "--max-live-tasks x: a usage error" test $? -eq 2
"$AS" export --max-live-tasks 1000 --format folded -o x.folded leak.trace 2> err.txt
check "export: one warning on stderr" \
	test "$(grep -cE '^asyncscope: warning: [0-9]{6} live tasks dropped: more than 1000' err.txt)" -eq 1
for c in blocking cpu uring; do
	"$AS" $c --max-live-tasks 1000 leak.trace > /dev/null 2> err.txt
	check "$c: the warning on stderr" grep -qE '^asyncscope: warning: [0-9]{6} live tasks dropped' err.txt
done
"$AS" export --format folded -o y.folded "$SRC/tests/data/chain-100.trace" 2> err.txt
check "a trace under the limit: no warning" test -z "$(grep 'live tasks' err.txt)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
