#!/usr/bin/env bash
# Output throughput on a large synthetic trace, printed as figures (never
# asserted): builds bench/gen_trace.c with the project's compiler flags,
# writes a trace of EVENTS events (default 10 million: 2 workers with nested
# worker tasks, ~1000 live tasks spawned and freed continuously), then times
# `report`, `report --format json`, `export --format perfetto-json`,
# `export --format perfetto` (protobuf) and
# `export --format folded` on it: wall time, events per second, peak RSS
# (from /usr/bin/time -v), output size.
# Usage: bench/outputs.sh [EVENTS]   (`make build/asyncscope` first)
set -euo pipefail
cd "$(dirname "$0")/.."
EVENTS=${1:-10000000}
AS=build/asyncscope
CC=${CC:-gcc}
TMP=$(mktemp -d /tmp/asyncscope-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
[ -x $AS ] || { echo "build $AS first: make build/asyncscope" >&2; exit 1; }

$CC -O2 -g -Wall -Wextra -Werror -Wno-missing-field-initializers -std=gnu11 -D_GNU_SOURCE \
	-Isrc -o $TMP/gen_trace bench/gen_trace.c src/trace/writer.c src/util/strtab.c \
	src/util/u64map.c -lz
echo "== generating $EVENTS events"
/usr/bin/time -f "%e" -o $TMP/gen.time $TMP/gen_trace $TMP/big.trace "$EVENTS"
echo "trace: $(stat -c %s $TMP/big.trace) bytes, written in $(cat $TMP/gen.time) s"

# run NAME OUTFILE CMD...: time one command (stderr, progress included, to the
# terminal); its output is OUTFILE, or its stdout when OUTFILE is ""
run() {
	local name=$1 out=$2; shift 2
	/usr/bin/time -v -o $TMP/time.txt "$@" > $TMP/stdout
	[ -n "$out" ] || out=$TMP/stdout
	local wall rss size
	wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' $TMP/time.txt |
		awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
	rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' $TMP/time.txt)
	size=$(stat -c %s "$out")
	awk -v n="$name" -v w="$wall" -v r="$rss" -v e="$EVENTS" -v s="$size" 'BEGIN {
		printf "%-26s %8.2f s %12.0f events/s  peak RSS %7.1f MiB  output %8.1f MiB\n",
			n, w, (w > 0 ? e / w : 0), r / 1024, s / 1048576 }'
	rm -f "$out"
}

echo "== outputs on $EVENTS events"
run "report (text)" "" $AS report $TMP/big.trace
run "report --format json" "" $AS report --format json $TMP/big.trace
run "export --format perfetto-json" $TMP/big.json \
	$AS export --format perfetto-json --progress -o $TMP/big.json $TMP/big.trace
run "export --format perfetto" $TMP/big.pftrace \
	$AS export --format perfetto --progress -o $TMP/big.pftrace $TMP/big.trace
run "export --format folded" $TMP/big.folded \
	$AS export --format folded --progress -o $TMP/big.folded $TMP/big.trace
