#!/usr/bin/env bash
# not_stopped.sh PID: the process is alive and not in a stopped or traced state
state=$(awk '/^State:/ { print $2 }' /proc/"$1"/status 2>/dev/null)
[ -n "$state" ] && [ "$state" != T ] && [ "$state" != t ]
