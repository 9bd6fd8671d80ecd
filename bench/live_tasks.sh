#!/usr/bin/env bash
# Report memory on traces of never-freed tasks, printed as figures (never
# asserted): builds bench/gen_trace.c, writes a trace with LEAKED tasks
# (default 10 million) spawned, polled once and never freed (half Pending,
# half Ready without their FREE) on top of EVENTS ordinary events (default
# 20 million), then prints the peak RSS (/usr/bin/time) and wall time of
# `report` as text, JSON and HTML with the default --max-live-tasks, and the
# cost of a live task: peak RSS with --max-live-tasks 0 against 1000 on a
# trace a tenth that size (more would need about 1 KiB per task of memory).
# Usage: bench/live_tasks.sh [LEAKED] [EVENTS]   (`make build/asyncscope` first)
set -euo pipefail
cd "$(dirname "$0")/.."
LEAKED=${1:-10000000}
EVENTS=${2:-20000000}
AS=build/asyncscope
CC=${CC:-gcc}
TMP=$(mktemp -d /tmp/asyncscope-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
[ -x $AS ] || { echo "build $AS first: make build/asyncscope" >&2; exit 1; }

$CC -O2 -g -Wall -Wextra -Werror -Wno-missing-field-initializers -std=gnu11 -D_GNU_SOURCE \
	-Isrc -o $TMP/gen_trace bench/gen_trace.c src/trace/writer.c src/util/strtab.c \
	src/util/u64map.c -lz

# peak RSS (KiB) and wall time of a command, into $rss and $wall
measure() {
	/usr/bin/time -f "%M %e" -o $TMP/time "$@" >/dev/null 2>$TMP/err ||
		{ cat $TMP/err >&2; exit 1; }
	read -r rss wall < $TMP/time
}
mib() { awk -v k="$1" 'BEGIN { printf "%.0f MiB", k / 1024 }'; }

echo "== $LEAKED never-freed tasks on top of $EVENTS events"
$TMP/gen_trace $TMP/big.trace "$EVENTS" 1000 "$LEAKED"
echo "trace: $(stat -c %s $TMP/big.trace) bytes"
echo "| command | peak RSS | time |"
echo "|---|---|---|"
measure $AS report $TMP/big.trace
echo "| \`report\` (text) | $(mib $rss) | $wall s |"
measure $AS report --format json -o $TMP/r.json $TMP/big.trace
echo "| \`report --format json\` | $(mib $rss) | $wall s |"
measure $AS report --html $TMP/r.html $TMP/big.trace
echo "| \`report --html\` | $(mib $rss) | $wall s |"
rm -f $TMP/r.json $TMP/r.html
$AS report $TMP/big.trace 2>/dev/null | grep -o "WARNING: [0-9]* live tasks folded[^(]*" || true

SMALL=$((LEAKED / 10))
echo "== the cost of a live task: $SMALL never-freed tasks, $((EVENTS / 10)) events"
$TMP/gen_trace $TMP/small.trace "$((EVENTS / 10))" 1000 "$SMALL"
measure $AS report --max-live-tasks 0 $TMP/small.trace
unlimited=$rss
measure $AS report --max-live-tasks 1000 $TMP/small.trace
echo "report --max-live-tasks 0: $(mib $unlimited), --max-live-tasks 1000: $(mib $rss):" \
     "$(( (unlimited - rss) * 1024 / SMALL )) bytes per live task"
