#!/usr/bin/env bash
# What this kernel does with a uprobe on each instruction class (figures,
# never asserted): a counting uprobe (bench/uprobe_count.c, no BPF) on the
# first byte of a function that starts with it (bench/insn_classes.c),
# CPU per hit over N calls, median of RUNS, against the same calls without
# a probe. ~1 us: emulated; ~5 us: single-stepped (src/probe/site.c).
# Usage: bench/insn_classes.sh [RUNS] [N]   (needs root)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3} N=${2:-1000000}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cc -O2 -o $TMP/insn_classes bench/insn_classes.c
cc -O2 -Wall -o $TMP/uprobe_count bench/uprobe_count.c
cpu() { farm-bench -n $RUNS -- "$@" </dev/null 2>&1 | awk '$1 == "A" && $2 == "cpu" {print $4}'; }
base=$(cpu $TMP/insn_classes nop1 $N)
$TMP/insn_classes list | while read -r kind sym; do
	vaddr=$(nm $TMP/insn_classes | awk -v s=$sym '$3 == s {print $1}')
	off=$(python3 -c "
import subprocess, sys
a = int(sys.argv[2], 16)
for l in subprocess.run(['readelf', '-lW', sys.argv[1]], capture_output=True, text=True).stdout.splitlines():
    f = l.split()
    if f and f[0] == 'LOAD':
        o, v, fs = int(f[1], 16), int(f[2], 16), int(f[4], 16)
        if v <= a < v + fs:
            print('%x' % (a - v + o))" $TMP/insn_classes $vaddr)
	t=$(cpu $TMP/uprobe_count $TMP/insn_classes $off -- $TMP/insn_classes $kind $N)
	insn=$(objdump -d --no-show-raw-insn $TMP/insn_classes | awk -v s="<$sym>:" '$2 == s {getline; $1 = ""; print; exit}' || true)
	awk -v k=$kind -v i="$insn" -v t=$t -v b=$base -v n=$N 'BEGIN {
		printf "%-9s %-34s %5.2f us a hit\n", k, i, (t - b) / n * 1e6 }'
done
