#!/usr/bin/env bash
# bench/dump_cost.sh [AS] [APPS]: what `dump` costs, measured (figures, never
# assertions; run as root, under the integration lock on a shared machine):
# 1. one dump of 1000 idle tasks (idle_many 1000): its wall time and its own
#    CPU time (user + system), 5 dumps;
# 2. a poll-heavy target (pollbench: 1000 tasks yielding, 2 workers, about
#    10 s) with and without a dump every second: its throughput (polls/s)
#    and the dumps' CPU time against the target's.
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

run() {   # run LABEL WITH_DUMPS: pollbench's polls/s; dumps' cpu
	/usr/bin/time -f "%U %S" -o $t/pbt $APPS/pollbench 1000 $Y >$t/pb.out &
	local tm=$! pb= n=0 cpu=0
	sleep 0.3
	pb=$(pgrep -P $tm)
	if [ "$2" = 1 ]; then
		sleep 0.2
		while kill -0 $pb 2>/dev/null; do
			/usr/bin/time -f "%U %S" -o $t/tm $AS dump -p $pb >/dev/null 2>&1 && n=$((n + 1))
			cpu=$(awk -v c=$cpu '{ print c + $1 + $2 }' $t/tm 2>/dev/null || echo $cpu)
			sleep 1
		done
	fi
	wait $tm
	local tcpu=$(awk '{ print $1 + $2 }' $t/pbt)
	echo "   $1: $(cat $t/pb.out); target cpu $tcpu s; dumps $n, their cpu $cpu s" \
	     "($(awk -v a=$cpu -v b=$tcpu 'BEGIN { printf "%.1f", 100 * a / b }')% of the target's)"
}
echo "2. pollbench 1000 $Y (2 workers), 3 runs each, alternating"
for i in $(seq ${RUNS:-3}); do
	run "without dumps" 0
	run "dump every 1 s" 1
done
