#!/usr/bin/env bash
# bench/dump_cost.sh [AS] [APPS]: what `dump` costs, measured (figures, never
# assertions; run as root, under the integration lock on a shared machine):
# 1. one dump of 1000 idle tasks (idle_many 1000): its wall time and its own
#    CPU time (user + system), 5 dumps;
# 2. a poll-heavy target (pollbench: 1000 tasks yielding, 2 workers, about
#    10 s) with and without a separate `dump -p` run every second: its
#    throughput (polls/s) and the dumps' CPU time (from wait4, to the
#    microsecond: /usr/bin/time rounds to 10 ms, half a dump) against the
#    target's, each run and the median over the runs (RUNS, default 3).
#    VS=OTHER_BINARY adds runs with OTHER_BINARY's dumps, interleaved
#    (before / after). The binary's DWARF memo (src/sym/dwarf_memo.h) is
#    made by one dump before the runs, as the first dump of a binary does.
set -u
AS=${1:-build/asyncscope}
APPS=${2:-tests/apps/target/release}
Y=${Y:-120000}
t=$(mktemp -d)
trap 'rm -rf $t' EXIT

echo "1. dump of 1000 idle tasks ($APPS/idle_many 1000 multi)"
$APPS/idle_many 1000 multi >$t/idle.out &
idle=$!
for i in $(seq 100); do grep -q '^ready$' $t/idle.out && break; sleep 0.1; done
for i in 1 2 3 4 5; do
	/usr/bin/time -f "   wall %e s, cpu %U user + %S sys" $AS dump -p $idle 2>&1 >$t/d.txt | tail -1
	head -1 $t/d.txt | sed 's/^/     /'
done
kill $idle

# dumps AS PID: `AS dump -p PID` once a second while PID lives; prints how
# many succeeded and the CPU time of them all (user + system)
dumps() {
	python3 - "$1" "$2" <<'PY'
import os, subprocess, sys, time
prog, pid = sys.argv[1], int(sys.argv[2])
n, cpu = 0, 0.0
while True:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        break
    p = subprocess.Popen([prog, "dump", "-p", str(pid)], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    cpu += ru.ru_utime + ru.ru_stime
    n += status == 0
    time.sleep(1)
print(n, "%.4f" % cpu)
PY
}

run() {   # run LABEL [AS]: pollbench's polls/s; with AS, a dump a second and their cpu
	/usr/bin/time -f "%U %S" -o $t/pbt $APPS/pollbench 1000 $Y >$t/pb.out &
	local tm=$! pb= n=0 cpu=0 tcpu pct
	sleep 0.3
	pb=$(pgrep -P $tm)
	if [ -n "${2:-}" ]; then
		sleep 0.2
		read -r n cpu < <(dumps "$2" $pb)
	fi
	wait $tm
	tcpu=$(awk '{ print $1 + $2 }' $t/pbt)
	pct=$(awk -v a=$cpu -v b=$tcpu 'BEGIN { printf "%.2f", 100 * a / b }')
	echo "   $1: $(cat $t/pb.out); target cpu $tcpu s; dumps $n, their cpu $cpu s" \
	     "($pct% of the target's)"
	if [ -n "${2:-}" ]; then echo "$pct $1" >>$t/pcts; fi
}

median() {   # median LABEL: of the percentages of the runs so labelled
	awk -v l="$1" 'substr($0, index($0, " ") + 1) == l { print $1 }' $t/pcts | sort -n |
		awk -v l="$1" '{ v[++n] = $1 } END { if (!n) exit
			m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
			printf "   %s: median %.2f%% of the target'"'"'s CPU (%d runs)\n", l, m, n }'
}

# the DWARF memo, as the first dump of pollbench leaves it
$APPS/pollbench 1000 100000000 >/dev/null &
pb=$!
sleep 0.5
$AS dump -p $pb >/dev/null 2>&1
kill $pb
wait $pb 2>/dev/null

echo "2. pollbench 1000 $Y (2 workers), ${RUNS:-3} runs each, alternating"
for i in $(seq ${RUNS:-3}); do
	run "without dumps"
	run "dump every 1 s ($AS)" $AS
	if [ -n "${VS:-}" ]; then run "dump every 1 s ($VS)" $VS; fi
done
median "dump every 1 s ($AS)"
if [ -n "${VS:-}" ]; then median "dump every 1 s ($VS)"; fi
