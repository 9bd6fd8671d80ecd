#!/usr/bin/env bash
# fut_truth.sh polled|outcomes TRACE RECORD.ERR COUNTS SHORT: for the future
# SHORT of futures_nested (handler, mid, leaf, child2, Checksum), whose truth
# line "truth future=SHORT ... polls=N" the program printed on stderr:
#   polled:   TRACE has exactly N entries of it
#   outcomes: its exits in COUNTS (fut_counts.sh) are N, each Ready or Pending
mode=$1 trace=$2 err=$3 counts=$4 short=$5
line=$(grep "^truth future=$short " "$err") || { echo "no truth line for $short"; exit 1; }
polls=$(echo "$line" | sed 's/.* polls=\([0-9]*\).*/\1/')
case $short in
Checksum) full="<futures_nested::Checksum as Future>::poll" ;;
*) full="futures_nested::$short" ;;
esac
if [ "$mode" = polled ]; then
	got=$("$(dirname "$0")"/fut_entries.sh "$trace" "$full")
	[ "$got" -eq "$polls" ] || { echo "$short polled $got times, truth $polls"; exit 1; }
	exit 0
fi
ready=$(awk -v n="$full" '{ c = $1; $1 = ""; sub(/^ /, ""); if ($0 == n " ready") print c }' "$counts")
pending=$(awk -v n="$full" '{ c = $1; $1 = ""; sub(/^ /, ""); if ($0 == n " pending") print c }' "$counts")
[ "$(( ${ready:-0} + ${pending:-0} ))" -eq "$polls" ] ||
	{ echo "$short: $ready ready + $pending pending, truth $polls polls"; exit 1; }
