#!/usr/bin/env bash
# fut_counts.sh TRACE: "N NAME OUTCOME" per future exit of TRACE, counted
# (uniq -c; outcome ready, pending or unknown), from `$AS events`
"$AS" events "$1" | awk '$4 == "fut_exit" {
	n = ($5 == "task") ? 7 : 5; name = $n
	while ($(n + 1) != "depth") { n++; name = name " " $n }
	o = ($0 ~ / depth [0-9]+ ready/) ? "ready" : ($0 ~ / depth [0-9]+ pending/) ? "pending" : "unknown"
	print name, o }' | sort | uniq -c
