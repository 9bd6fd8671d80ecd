#!/usr/bin/env bash
# usdt_args.sh TRACE PROBE: the arguments of PROBE's hits in TRACE, one a
# line, in order (from `$AS events`)
"$AS" events "$1" | awk -v p="$2" '$4 == "usdt" && $5 == p { print $7 }'
