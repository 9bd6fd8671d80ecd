#!/usr/bin/env bash
# still_running.sh PID OUT: tests/apps parked (PID, its stdout in OUT) is alive,
# not stopped, and prints heartbeats (at least 3 more in half a second)
before=$(grep -c '^heartbeat' "$2")
sleep 0.5
after=$(grep -c '^heartbeat' "$2")
"$(dirname "$0")"/not_stopped.sh "$1" && [ "$after" -ge $((before + 3)) ]
