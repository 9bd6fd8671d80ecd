#!/usr/bin/env bash
# Offline analysis speed, printed as figures (never asserted): builds
# bench/gen_trace.c, writes a trace of EVENTS events (default 10 million),
# then runs `report`, `report --format json`, `export --format perfetto-json`
# (Chrome JSON) and `export --format perfetto` (native protobuf) on it
# ROUNDS times (default 3) and prints, for each, the median events per
# CPU-second (user + sys, from /usr/bin/time -v) and the largest max RSS.
# CPU time rather than wall time: the figure depends less on how busy the
# machine is (but on a shared machine caches and memory are shared too:
# compare builds with runs interleaved). The exports' output (some 300 bytes
# an event for the JSON, 72 for the protobuf) goes to a file in /tmp, as
# `-o FILE` writes it: into a temporary file, fsync()ed, then renamed over
# FILE; their sys time is the kernel copying it into the page cache and the
# writeback the fsync() does in the process's own time, which depends on the
# file system and the disk, hence each export again with `-o /dev/null`
# (all of the work but the writing). Issue 15 asks for report >= 10 M events
# per CPU-second, JSON and Perfetto >= 5 M; the exports' output sizes are
# printed too.
# Then `export --format pprof` and `--format speedscope` (profiles: their
# size is the distinct stacks; on this task-mode trace the poll time of each
# task, one sample per task).
# Usage: bench/analysis_speed.sh [EVENTS] [ROUNDS] [ASYNCSCOPE]
#        (`make build/asyncscope` first; ASYNCSCOPE defaults to it)
#        ONLY=REGEX runs only the commands whose name matches (ONLY=pprof)
set -euo pipefail
cd "$(dirname "$0")/.."
EVENTS=${1:-10000000}
ROUNDS=${2:-3}
AS=${3:-build/asyncscope}
CC=${CC:-gcc}
TMP=$(mktemp -d /tmp/asyncscope-speed.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
[ -x "$AS" ] || { echo "build $AS first: make build/asyncscope" >&2; exit 1; }

$CC -O2 -g -Wall -Wextra -Werror -Wno-missing-field-initializers -std=gnu11 -D_GNU_SOURCE \
	-Isrc -o $TMP/gen_trace bench/gen_trace.c src/trace/writer.c src/util/strtab.c \
	src/util/u64map.c -lz
$TMP/gen_trace $TMP/t.trace "$EVENTS" > $TMP/gen.out
N=$(awk '{ print $1 }' $TMP/gen.out)
echo "trace: $N events, $(stat -c %s $TMP/t.trace) bytes; $ROUNDS rounds, $AS"

# one NAME CMD...: runs CMD ROUNDS times, prints the median events per
# CPU-second and the largest max RSS
one() {
	local name=$1; shift
	if [ -n "${ONLY:-}" ] && ! [[ "$name" =~ $ONLY ]]; then
		return 0
	fi
	local rates="" rss=0
	for _ in $(seq "$ROUNDS"); do
		/usr/bin/time -v -o $TMP/time.txt "$@" > /dev/null 2> $TMP/err ||
			{ cat $TMP/err >&2; exit 1; }
		local u s r
		u=$(sed -n 's/.*User time (seconds): //p' $TMP/time.txt)
		s=$(sed -n 's/.*System time (seconds): //p' $TMP/time.txt)
		r=$(sed -n 's/.*Maximum resident set size (kbytes): //p' $TMP/time.txt)
		rates="$rates $(awk -v n="$N" -v u="$u" -v s="$s" 'BEGIN { c = u + s; printf "%.0f:%.2f:%.2f:%.2f", (c > 0 ? n / c : 0), c, u, s }')"
		[ "$r" -gt "$rss" ] && rss=$r
	done
	echo "$rates" | tr ' ' '\n' | sed '/^$/d' | sort -t: -k1,1n |
		awk -v name="$name" -v rss="$rss" '{ a[NR] = $0 } END {
			split(a[int((NR + 1) / 2)], m, ":");
			printf "%-26s %6.2f M events/CPU-s  (%5.2f CPU-s: user %5.2f, sys %5.2f)  max RSS %7.1f MiB\n",
				name, m[1] / 1e6, m[2], m[3], m[4], rss / 1024 }'
}

one "report" "$AS" report $TMP/t.trace
one "report --format json" "$AS" report --format json $TMP/t.trace
one "export --format perfetto-json" "$AS" export --format perfetto-json --no-progress \
	-o $TMP/out.json $TMP/t.trace
[ ! -e $TMP/out.json ] || echo "  output: $(stat -c %s $TMP/out.json) bytes"
rm -f $TMP/out.json
one "export --format perfetto" "$AS" export --format perfetto --no-progress -o $TMP/out.pftrace \
	$TMP/t.trace
[ ! -e $TMP/out.pftrace ] || echo "  output: $(stat -c %s $TMP/out.pftrace) bytes"
rm -f $TMP/out.pftrace
one "  ... -o /dev/null (JSON)" "$AS" export --format perfetto-json --no-progress \
	-o /dev/null $TMP/t.trace
one "  ... -o /dev/null (protobuf)" "$AS" export --format perfetto --no-progress \
	-o /dev/null $TMP/t.trace
one "export --format pprof" "$AS" export --format pprof --no-progress -o $TMP/out.pb.gz \
	$TMP/t.trace
[ ! -e $TMP/out.pb.gz ] || echo "  output: $(stat -c %s $TMP/out.pb.gz) bytes"
one "export --format speedscope" "$AS" export --format speedscope --no-progress \
	-o $TMP/out.speedscope.json $TMP/t.trace
[ ! -e $TMP/out.speedscope.json ] || echo "  output: $(stat -c %s $TMP/out.speedscope.json) bytes"
