#!/usr/bin/env bash
# The demo: trace the bundled Tokio program tests/apps blocker (one task
# blocks its worker for 200 ms, one awaits a future that never wakes it, one
# ticks on a timer) for 2 seconds, then print the report.
set -euo pipefail
cd "$(dirname "$0")/.."
AS=build/asyncscope
if [ "$(id -u)" -ne 0 ]; then
	echo "demo: asyncscope needs root for BPF: run 'sudo make demo'" >&2
	exit 1
fi
$AS record -o demo.trace --duration 2s -- tests/apps/target/release/blocker
echo
$AS report demo.trace
echo
$AS report --html demo.html demo.trace
$AS export --format perfetto -o demo.pftrace demo.trace
echo "demo: open demo.html in a browser, demo.pftrace in ui.perfetto.dev;"
echo "      JSON with 'build/asyncscope report --format json demo.trace'"
