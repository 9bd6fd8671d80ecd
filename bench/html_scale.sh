#!/usr/bin/env bash
# The HTML page at scale, as figures (never asserted; tests/integ/cases/
# html_scale.case asserts the 1M-event bounds): for each EVENTS count (default
# 100000 1000000 10000000) writes a bench/gen_trace.c trace, times
# `report --html` on it (CPU time and peak RSS from /usr/bin/time), and opens
# the page RUNS times (default 3) in headless chromium over the DevTools
# protocol (tests/integ/checks/html_cdp.py): the median wall time from the
# navigation to the page's ready flag, and the page's own performance.now()
# then. Page size in bytes, and the sizes of its three data blocks.
# Usage: bench/html_scale.sh [EVENTS...]   (`make build/asyncscope` first;
# RUNS=N for more opens)
set -euo pipefail
cd "$(dirname "$0")/.."
AS=build/asyncscope
CC=${CC:-gcc}
RUNS=${RUNS:-3}
TMP=$(mktemp -d /tmp/asyncscope-bench-html.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
[ -x $AS ] || { echo "build $AS first: make build/asyncscope" >&2; exit 1; }
[ $# -gt 0 ] || set -- 100000 1000000 10000000

$CC -O2 -g -Wall -Wextra -Werror -Wno-missing-field-initializers -std=gnu11 -D_GNU_SOURCE \
	-Isrc -o $TMP/gen_trace bench/gen_trace.c src/trace/writer.c src/util/strtab.c \
	src/util/u64map.c -lz
printf '%-10s %10s %9s %9s %9s %10s %10s %10s %10s %10s\n' events "page B" "user s" "sys s" "RSS MiB" \
	"data B" "kernel B" "page B" "ready s" "in-page ms"
for n in "$@"; do
	$TMP/gen_trace $TMP/t.trace "$n" >/dev/null
	/usr/bin/time -f '%U %S %M' -o $TMP/time $AS report --html $TMP/t.html $TMP/t.trace 2>/dev/null
	read -r user sys rss <$TMP/time
	blocks=$(python3 - "$TMP/t.html" <<'EOF'
import re, sys
p = open(sys.argv[1], encoding="utf-8").read()
print(" ".join(str(len(re.findall(r'<script type="application/json" id="%s">(.*?)</script>' % b, p, re.S)[0]))
               for b in ("data", "kernel", "page")))
EOF
)
	: >$TMP/ready
	for _ in $(seq "$RUNS"); do
		python3 tests/integ/checks/html_cdp.py $TMP/t.html >>$TMP/ready
	done
	ready=$(python3 -c '
import json, statistics, sys
r = [json.loads(l) for l in open(sys.argv[1])]
print("%.2f %d" % (statistics.median(x["ready_s"] for x in r), statistics.median(x["ready_ms"] for x in r)))' $TMP/ready)
	# shellcheck disable=SC2086
	printf '%-10s %10s %9s %9s %9.1f %10s %10s %10s %10s %10s\n' "$n" "$(stat -c %s $TMP/t.html)" "$user" "$sys" \
		"$(echo "$rss / 1024" | bc -l)" $blocks $ready
done
