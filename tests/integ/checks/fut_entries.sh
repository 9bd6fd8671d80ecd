#!/usr/bin/env bash
# fut_entries.sh TRACE NAME: the number of entries of future NAME in TRACE
"$AS" events "$1" | awk -v want="$2" '$4 == "fut_enter" {
	n = ($5 == "task") ? 7 : 5; name = $n
	while ($(n + 1) != "depth") { n++; name = name " " $n }
	if (name == want) c++ } END { print c + 0 }'
