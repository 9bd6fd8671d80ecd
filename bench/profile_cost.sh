#!/usr/bin/env bash
# What `asyncscope profile` costs the profiled program (prints figures,
# asserts nothing). Two measures, ROUNDS rounds each (default 3), on
# pollbench (1000 tasks yielding on two busy workers):
#  1. the cost as CPU, once started: pollbench runs while `profile -p PID
#     --sample HZ` (default 99, off-CPU capture on) records it; over WINDOW
#     seconds (default 20) from 2 s after its start (its start-up: the
#     binary's symbols and DWARF, the first walk of the task lists, said
#     apart), the profiler's own CPU time plus the run time of its BPF
#     programs (kernel.bpf_stats_enabled, every run: the sched_switch
#     program runs on every context switch of the machine) against the
#     target's CPU time over the same span (/proc/PID/task/*/schedstat, ns);
#  2. the throughput, interleaved: pollbench 1000 tasks x 100000 yields (100 M
#     polls, a few seconds) alone, then launched under `profile`, its polls/s
#     (the profiler's start-up included).
# Needs root and the test programs (make apps); run it alone (2 cores are
# shared: flock /tmp/asyncscope-integ.lock bench/profile_cost.sh).
#   bench/profile_cost.sh [HZ] [ROUNDS] [WINDOW]
set -euo pipefail
cd "$(dirname "$0")/.."
HZ=${1:-99}
ROUNDS=${2:-3}
WINDOW=${3:-20}
AS=build/asyncscope
PB=tests/apps/target/release/pollbench
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

# the run time (ns) of the profiler's programs so far
bpf_ns() {
	bpftool -j prog show | python3 -c '
import json, sys
names = ("cpu_sample", "offcpu_switch", "thread_exit")
print(sum(p.get("run_time_ns", 0) for p in json.load(sys.stdin) if p.get("name") in names))'
}
# a process's CPU time (ns), all its threads
cpu_ns() { cat /proc/$1/task/*/schedstat | awk '{n += $1} END {print n}'; }

echo "1. CPU cost of profile --sample $HZ (off-CPU on) on pollbench, ${WINDOW} s from 2 s in"
for r in $(seq "$ROUNDS"); do
	$PB 1000 1000000000 >/dev/null & P=$!
	sleep 1
	$AS profile -p $P --sample "$HZ" --duration "$((WINDOW + 4))s" -o $TMP/p.trace \
		2>$TMP/err & R=$!
	sleep 2
	s0=$(cpu_ns $R); b0=$(bpf_ns); t0=$(cpu_ns $P)
	sleep "$WINDOW"
	s1=$(cpu_ns $R); b1=$(bpf_ns); t1=$(cpu_ns $P)
	wait $R
	kill $P; wait $P 2>/dev/null || true; P=
	python3 -c "
own = ($s1 - $s0) / 1e9; bpf = ($b1 - $b0) / 1e9; t = ($t1 - $t0) / 1e9; start = $s0 / 1e9
print('  round $r: profiler %.3f s + BPF %.3f s of CPU against the target %.2f s: %.2f%% (%.2f%% + %.2f%%); start-up %.2f s' %
      (own, bpf, t, 100 * (own + bpf) / t, 100 * own / t, 100 * bpf / t, start))"
	grep -h "CPU samples\|off-CPU intervals\|lost events" $TMP/err | sed 's/^/    /'
done

echo "2. pollbench 1000 x 100000 (100 M polls): alone and launched under profile --sample $HZ"
for r in $(seq "$ROUNDS"); do
	a=$($PB 1000 100000 | awk '{print $6}')
	p=$($AS profile --sample "$HZ" -o $TMP/q.trace -- $PB 1000 100000 2>/dev/null | awk '{print $6}')
	python3 -c "print('  round $r: alone %.2f M polls/s, profiled %.2f M polls/s: %.3f' % ($a / 1e6, $p / 1e6, $p / $a))"
done
