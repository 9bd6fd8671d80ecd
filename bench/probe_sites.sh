#!/usr/bin/env bash
# Probe sites (src/probe/site.c), printed as figures (never asserted): the
# cost of a wake probe at its function's entry (a single-stepped `lea`)
# against the site it is moved to (the emulated `jmp` after it), on tokio
# 1.53's current-thread Schedule::schedule, which every wake of wakebench
# goes through. Interleaved runs (farm-bench --vs), medians, CPU time.
#  1. bare: one counting uprobe (bench/uprobe_count.c, no BPF) at the
#     entry, then at the site: CPU per hit, and the hits (the same: the
#     moved probe still fires once a call).
#  2. task mode: `record` with its probes moved, against
#     ASYNCSCOPE_ENTRY_SITES=1 (every probe at its entry), on wakebench
#     (current thread) and pollbench (multi-thread).
#  3. bpf_stats: each BPF program's runs and ns a run over the first 2 s
#     of each (kernel.bpf_stats_enabled on meanwhile).
# Usage: bench/probe_sites.sh [RUNS]   (needs root; `make` first)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
AS=build/asyncscope
WB=tests/apps-tokio153/target/release/wakebench
PB=tests/apps-tokio153/target/release/pollbench
T=${TASKS:-1000} Y=${YIELDS:-1000}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"; sysctl -q kernel.bpf_stats_enabled=0' EXIT
cc -O2 -Wall -o $TMP/uprobe_count bench/uprobe_count.c

# the moved probe: its function's address and site from `asyncscope probes`
read -r ADDR SITE < <($AS probes $WB | awk '/current_thread::<impl tokio::runtime::task::Schedule/ && /^wake/ {print $2, $3}')
fileoff() {   # virtual address -> file offset (hex), from the LOAD segments
	python3 -c "
import subprocess, sys
a = int(sys.argv[2], 0)
for l in subprocess.run(['readelf', '-lW', sys.argv[1]], capture_output=True, text=True).stdout.splitlines():
    f = l.split()
    if f and f[0] == 'LOAD':
        o, v, fs = int(f[1], 16), int(f[2], 16), int(f[4], 16)
        if v <= a < v + fs:
            print('%x' % (a - v + o))" "$1" "$2"
}
ENTRY=$(fileoff $WB $ADDR)
MOVED=$(fileoff $WB $((ADDR + SITE)))
cpu() { awk '$1 == "A" && $2 == "cpu" {a = $4} $1 == "B" && $2 == "cpu" {b = $4} END {print a, b}'; }

echo "== bare uprobe on Schedule::schedule ($ADDR), wakebench $T $Y current: site $SITE vs entry"
farm-bench -n $RUNS --timeout 600 --vs "$TMP/uprobe_count $WB $ENTRY -- $WB $T $Y" -- \
	$TMP/uprobe_count $WB $MOVED -- $WB $T $Y > $TMP/bare.txt 2>&1
read -r a b < <(cpu < $TMP/bare.txt)
base=$(farm-bench -n $RUNS -- $WB $T $Y 2>&1 | awk '$1 == "A" && $2 == "cpu" {print $4}')
hits_e=$($TMP/uprobe_count $WB $ENTRY -- $WB $T $Y 2>&1 >/dev/null | awk '/^hits/ {print $2}')
hits_m=$($TMP/uprobe_count $WB $MOVED -- $WB $T $Y 2>&1 >/dev/null | awk '/^hits/ {print $2}')
awk -v a=$a -v b=$b -v z=$base -v he=$hits_e -v hm=$hits_m 'BEGIN {
	printf "  untraced %.3f s; entry %.3f s, %d hits: %.2f us a hit; moved %.3f s, %d hits: %.2f us a hit\n",
	       z, b, he, (b - z) / he * 1e6, a, hm, (a - z) / hm * 1e6 }'

for w in "$WB $T $Y" "$PB $T 200"; do
	echo "== task mode: record -- ${w#tests/apps-tokio153/target/release/}: moved vs ASYNCSCOPE_ENTRY_SITES=1"
	farm-bench -n $RUNS --timeout 900 --vs "env ASYNCSCOPE_ENTRY_SITES=1 $AS record -o $TMP/b.trace -- $w" -- \
		$AS record -o $TMP/a.trace -- $w > $TMP/rec.txt 2>&1
	read -r a b < <(cpu < $TMP/rec.txt)
	awk -v a=$a -v b=$b 'BEGIN { printf "  moved %.3f s, at the entries %.3f s of CPU (%.2fx)\n", a, b, a / b }'
done

echo "== bpf_stats, first 2 s of record -- wakebench $T 2000"
sysctl -q kernel.bpf_stats_enabled=1
for mode in moved entry; do
	env $([ $mode = entry ] && echo ASYNCSCOPE_ENTRY_SITES=1) $AS record -o $TMP/s.trace -- $WB $T 2000 \
		>/dev/null 2>&1 & R=$!
	sleep 2
	bpftool prog show -j | python3 -c "
import json, sys
for p in json.load(sys.stdin):
    if p.get('run_cnt', 0) > 1000 and p['name'] in ('task_wake', 'poll_enter', 'poll_exit'):
        print('  $mode %-11s %9d runs %5.0f ns a run' % (p['name'], p['run_cnt'], p['run_time_ns'] / p['run_cnt']))"
	wait $R || true
done
