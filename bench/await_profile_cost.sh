#!/usr/bin/env bash
# What `dump --every` costs the traced program (prints figures, asserts
# nothing): pollbench (1000 tasks yielding on two busy workers) runs while
# `dump --every INTERVAL --duration 10s` samples it; prints the dump's CPU
# time (/usr/bin/time, user + system) against the target's over the same
# span (utime + stime from /proc/PID/stat). Needs root and the test
# programs (make apps).   bench/await_profile_cost.sh [INTERVAL] (default 1s)
set -euo pipefail
cd "$(dirname "$0")/.."
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"; kill $P 2>/dev/null || true' EXIT
tests/apps/target/release/pollbench 1000 100000000 >/dev/null & P=$!
sleep 1
t0=$(awk '{print $14+$15}' /proc/$P/stat)
/usr/bin/time -f "%U %S" -o $TMP/time build/asyncscope dump -p $P --every "${1:-1s}" \
	--duration 10s >$TMP/out 2>$TMP/err
t1=$(awk '{print $14+$15}' /proc/$P/stat)
read -r u s < $TMP/time
python3 -c "
d = $u + $s; t = ($t1 - $t0) / $(getconf CLK_TCK)
print('dump --every ${1:-1s} for 10 s: %.3f s of CPU, the target %.2f s: %.2f%%' % (d, t, 100 * d / t))"
head -1 $TMP/out
