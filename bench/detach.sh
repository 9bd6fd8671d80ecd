#!/usr/bin/env bash
# How long a recorder killed by SIGKILL takes to be gone, with its probes
# (prints figures, asserts nothing): for each target (an idle one, a poll
# loop on two busy workers with a 4 KiB ring buffer, one whose task never
# returns from its poll), launched and attached, on Tokio 1.24 and 1.53,
# RUNS times each: seconds from the kill until the recorder is reaped (every
# thread of it exited: its uprobe links are released by then), until no
# asyncscope BPF program is loaded, and until a launched target is dead. Needs root and the test programs (make apps).
#   bench/detach.sh [RUNS]   (default 3)
set -uo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
AS=build/asyncscope
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

dead() { ! test -e /proc/$1/status || grep -q '^State:.*Z' /proc/$1/status; }
since() { echo "$(date +%s.%N) - $1" | bc; }
wait_for() { # seconds command...: waits (0.01 s steps) until it holds
	local until=$(( $(date +%s) + $1 )); shift
	until "$@"; do [ "$(date +%s)" -gt $until ] && return 1; sleep 0.01; done
}

one() { # version mode label command...
	local ver=$1 mode=$2 label=$3; shift 3
	local tp="" rec
	if [ "$mode" = attach ]; then
		"$@" >/dev/null 2>&1 & tp=$!
		sleep 0.5
		$AS record --buffer-size 4K -o $T/t.trace -p $tp 2>$T/err & rec=$!
	else
		$AS record --buffer-size 4K -o $T/t.trace -- "$@" >/dev/null 2>$T/err & rec=$!
	fi
	wait_for 20 grep -qs attached $T/err || { echo "$ver $mode $label: did not attach"; kill $rec; return; }
	sleep 2
	[ "$mode" = launch ] && tp=$(pgrep -P $rec)
	kill -KILL $rec; local t0; t0=$(date +%s.%N)
	wait $rec 2>/dev/null; local r; r=$(since $t0)
	wait_for 30 tests/integ/checks/no_probes.py >/dev/null; local p; p=$(since $t0)
	local g="-"
	if [ "$mode" = launch ]; then wait_for 30 dead $tp; g=$(printf '%.2f s' "$(since $t0)"); fi
	[ "$mode" = attach ] && { kill -KILL $tp; wait $tp 2>/dev/null; }
	printf '%-5s %-7s %-9s recorder reaped %5.2f s  probes gone %5.2f s  target dead %s\n' \
		"$ver" "$mode" "$label" "$r" "$p" "$g"
}

for run in $(seq "$RUNS"); do
	for v in 1.24:tests/apps/target/release 1.53:tests/apps-tokio153/target/release; do
		ver=${v%%:*} apps=${v#*:}
		for mode in launch attach; do
			one $ver $mode idle $apps/yields multi 20 --go-file $T/never
			one $ver $mode busy $apps/pollbench 2000 1000000
			[ -x $apps/stuck_poll ] && one $ver $mode stuck $apps/stuck_poll
		done
	done
done 2>&1 | grep -v Killed
