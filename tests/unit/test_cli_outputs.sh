#!/usr/bin/env bash
# No command destroys a file it did not create (cli/output.c), without root:
# a failed export leaves an existing file and a FIFO as they were, the input
# named as the output is refused and kept, a symlink stays a link while the
# file it names is replaced, a directory is refused, a replaced file keeps
# its mode, and no temporary file is left behind. Ends with
# "N passed, N failed". Usage: tests/unit/test_cli_outputs.sh [ASYNCSCOPE]
cd "$(dirname "$0")/../.."
AS=$(realpath "${1:-build/asyncscope}")
FX=$(realpath tests/data/chain-100.trace)
D=$(mktemp -d /tmp/asyncscope-outputs.XXXXXX)
trap 'rm -rf "$D"' EXIT
cd "$D" || exit 1
passed=0 failed=0
check() { # check "what" command...
	local what=$1; shift
	if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL $what" >&2; fi
}
head -c $(( $(stat -c %s "$FX") / 2 )) "$FX" > cut.trace   # truncated: every export of it fails

echo keep > existing.txt
chmod 640 existing.txt
"$AS" export --format folded -o existing.txt cut.trace 2>err.txt
check "a failed export exits 1" test $? -eq 1
check "a failed export leaves an existing file as it was" grep -qx keep existing.txt
check "and says why, one line" test "$(wc -l < err.txt)" -eq 1
"$AS" export --format folded -o existing.txt "$FX" 2>/dev/null
check "a good export replaces the file" grep -q "chain::producer" existing.txt
check "keeping its mode" test "$(stat -c %a existing.txt)" = 640

mkfifo fifo
timeout 10 cat fifo > fifo.out & reader=$!
timeout 10 "$AS" report -o fifo "$FX" || { exec 3>fifo; exec 3>&-; }   # never leave the reader waiting
wait $reader
check "a FIFO is written in place" grep -q "^TASKS:" fifo.out
check "and stays a FIFO" test -p fifo
"$AS" export --format folded -o fifo cut.trace 2>/dev/null & pid=$!
sleep 0.5; kill $pid 2>/dev/null; wait $pid 2>/dev/null
check "a failed export keeps the FIFO" test -p fifo

cp "$FX" same.trace
"$AS" report -o same.trace same.trace 2>err.txt
check "the input as output is refused" test $? -ne 0
check "with a message naming it" grep -q "it is the input file" err.txt
check "and the input is intact" cmp -s "$FX" same.trace

echo old > real.txt
ln -s real.txt link.txt
"$AS" report -o link.txt "$FX"
check "a symlink stays a link" test -L link.txt
check "the file it names gets the report" grep -q "^TASKS:" real.txt

mkdir adir
"$AS" report -o adir "$FX" 2>err.txt
check "a directory is refused (exit 1)" test $? -eq 1
check "saying it is a directory" grep -q "is a directory" err.txt

"$AS" events -o ev.txt cut.trace 2>/dev/null
check "a failed events leaves no file" test ! -e ev.txt
check "no temporary file is left" test -z "$(ls -a | grep asyncscope-)"

# CAT text from a pipe is copied to the temporary directory up to a limit
# (1 GiB; ASYNCSCOPE_CAT_PIPE_MAX here), past it refused with the fix named
"$AS" export --format cat -o chain.cat.txt "$FX" 2>/dev/null
cat chain.cat.txt | "$AS" report /dev/stdin >pipe.txt 2>/dev/null
check "CAT text from a pipe is reported" grep -q "^TASKS:" pipe.txt
cat chain.cat.txt | ASYNCSCOPE_CAT_PIPE_MAX=4096 "$AS" report /dev/stdin >/dev/null 2>err.txt
check "past the pipe limit: exit 1" test $? -eq 1
check "saying to save it to a file" grep -q "over 4096 bytes is not copied .*: save it to a file" err.txt

# a large trace read with stderr redirected: no progress line redrawn with \r
# or terminal escapes in the log (a plain line every 10 s at most)
SRC=$OLDPWD
if ${CC:-cc} -O2 -std=gnu11 -D_GNU_SOURCE -I"$SRC/src" -o gen_trace "$SRC/bench/gen_trace.c" \
	"$SRC/src/trace/writer.c" "$SRC/src/util/strtab.c" "$SRC/src/util/u64map.c" -lz 2>/dev/null &&
   ./gen_trace big.trace 1200000 >/dev/null 2>&1; then
	"$AS" report big.trace >big.txt 2>prog.txt
	check "a redirected stderr gets no \\r progress line" test -z "$(tr -d -c '\r\033' < prog.txt)"
	# text at scale: a bounded report (--limit rows a table), the findings
	# first, each cut table saying so; --limit 0 lists them all
	check "a 1.2M-event report is under 200 lines" test "$(wc -l < big.txt)" -lt 200
	check "its cut tables say how many more" grep -q '^  \.\.\. [0-9]* more tasks (--limit N shows more, --limit 0 all' big.txt
	check "the findings come first" test "$(grep -n -m1 '^FINDINGS:' big.txt | cut -d: -f1)" -lt "$(grep -n -m1 '^TASKS:' big.txt | cut -d: -f1)"
	"$AS" report --limit 3 big.trace >big3.txt 2>/dev/null
	check "--limit 3: three task rows" test "$(sed -n '/^TASKS:/,/^$/p' big3.txt | grep -c '^ *#[0-9]')" -eq 3
	"$AS" report --limit 0 big.trace >big0.txt 2>/dev/null
	check "--limit 0: every task row" test "$(sed -n '/^TASKS:/,/^$/p' big0.txt | grep -c '^ *#[0-9]')" -gt 10000
else
	check "bench/gen_trace.c builds and runs" false
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
