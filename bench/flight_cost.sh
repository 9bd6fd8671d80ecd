#!/usr/bin/env bash
# What the flight recorder costs while it waits for a trigger (prints
# figures, asserts nothing): `profile --flight 30s` (99 Hz samples, off-CPU
# capture on, the default 64M) against `profile -o FILE` and no profiler,
# on an idle target (blocker: a timer task waking every 50 ms, the workers
# parked in between) and a busy one (pollbench: 1000 tasks yielding on two
# busy workers). Each round runs the three modes one after the other on a
# fresh target, ROUNDS rounds (default 3), and measures over WINDOW seconds
# (default 10) from 2 s after the profiler's start (its start-up said
# apart): the profiler's own CPU (/proc/PID/task/*/schedstat), the run time
# of its BPF programs (kernel.bpf_stats_enabled; sched_switch runs on every
# context switch of the machine) and the target's CPU, each per second.
# Needs root and the test programs; run it alone (2 shared cores):
#   flock /tmp/asyncscope-integ.lock bench/flight_cost.sh [ROUNDS] [WINDOW]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
WINDOW=${2:-10}
AS=build/asyncscope
APPS=tests/apps/target/release
TMP=$(mktemp -d)
P=
stats0=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() {
	sysctl -qw kernel.bpf_stats_enabled="$stats0"
	[ -n "$P" ] && kill "$P" 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT
sysctl -qw kernel.bpf_stats_enabled=1

bpf_ns() {
	bpftool -j prog show | python3 -c '
import json, sys
names = ("cpu_sample", "offcpu_switch", "thread_exit")
print(sum(p.get("run_time_ns", 0) for p in json.load(sys.stdin) if p.get("name") in names))'
}
cpu_ns() { cat /proc/$1/task/*/schedstat 2>/dev/null | awk '{n += $1} END {print n + 0}'; }

# one measure: target ($1: idle|busy), mode ($2: none|file|flight)
one() {
	case $1 in
	idle) $APPS/blocker 600 >/dev/null & P=$! ;;
	busy) $APPS/pollbench 1000 1000000000 >/dev/null & P=$! ;;
	esac
	sleep 1
	R=
	case $2 in
	file) $AS profile -p $P -o $TMP/p.trace 2>$TMP/err & R=$! ;;
	flight) mkdir -p $TMP/fl; $AS profile -p $P --flight 30s -o $TMP/fl 2>$TMP/err & R=$! ;;
	esac
	sleep 2
	s0=0; [ -n "$R" ] && s0=$(cpu_ns $R); b0=$(bpf_ns); t0=$(cpu_ns $P)
	sleep "$WINDOW"
	s1=0; [ -n "$R" ] && s1=$(cpu_ns $R); b1=$(bpf_ns); t1=$(cpu_ns $P)
	[ -n "$R" ] && { kill -INT $R; wait $R || true; }
	kill $P; wait $P 2>/dev/null || true; P=
	python3 -c "
w = $WINDOW
print('%s %s own %.2f bpf %.2f target %.2f' % ('$1', '$2', ($s1 - $s0) / 1e6 / w, ($b1 - $b0) / 1e6 / w, ($t1 - $t0) / 1e6 / w))"
}

echo "profile at 99 Hz, off-CPU on: CPU ms per second over ${WINDOW} s, $ROUNDS rounds"
for r in $(seq "$ROUNDS"); do
	for t in idle busy; do
		for m in none file flight; do
			one $t $m
		done
	done
done | tee $TMP/all
echo "medians (ms of CPU per second: the profiler's own, its BPF programs', the target's):"
python3 - $TMP/all <<'P'
import sys, statistics
rows = {}
for line in open(sys.argv[1]):
    w = line.split()
    rows.setdefault((w[0], w[1]), []).append((float(w[3]), float(w[5]), float(w[7])))
for (t, m), v in sorted(rows.items()):
    med = [statistics.median(x[i] for x in v) for i in range(3)]
    print(f"  {t:4} {m:6} own {med[0]:7.2f}  bpf {med[1]:7.2f}  target {med[2]:8.2f}")
P
