#!/usr/bin/env bash
# Tracer overhead, printed as figures (never asserted):
#  1. poll-heavy Tokio program (tests/apps pollbench): polls/s bare, with
#     asyncscope recording, and with the same probe points running empty BPF
#     programs (ASYNCSCOPE_BARE_PROBES=1); ns added per poll.
#  2. future-poll-heavy Tokio program (tests/apps futbench, 3 out-of-line
#     async fns per task poll): bare, task mode, and record --futures; ns
#     added per future poll by --futures over task mode.
#  3. hyper 0.14 server under wrk: requests/s without and with asyncscope.
# Usage: bench/overhead.sh [RUNS]   (needs root; `make bench` builds first)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
RUNS=${1:-3}
AS=build/asyncscope
PB=tests/apps/target/release/pollbench
TASKS=${TASKS:-1000} YIELDS=${YIELDS:-200}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"; [ -n "${SRV:-}" ] && kill $SRV 2>/dev/null; true' EXIT
(cd bench/hyper-server && cargo build --release --quiet)

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
elapsed() { sed -n 's/.*elapsed_s \([0-9.]*\).*/\1/p'; }

echo "== pollbench: $TASKS tasks x $((YIELDS + 1)) polls, 2 workers, median of $RUNS runs"
for mode in base traced bare; do
	for _ in $(seq "$RUNS"); do
		case $mode in
		base) $PB $TASKS $YIELDS ;;
		traced) $AS record -o $TMP/pb.trace -- $PB $TASKS $YIELDS 2>$TMP/rec.err ;;
		bare) ASYNCSCOPE_BARE_PROBES=1 $AS record -o $TMP/bare.trace -- $PB $TASKS $YIELDS 2>/dev/null ;;
		esac | elapsed
	done | median > $TMP/$mode
done
polls=$((TASKS * (YIELDS + 1)))
base=$(cat $TMP/base) traced=$(cat $TMP/traced) bare=$(cat $TMP/bare)
awk -v p=$polls -v b=$base -v t=$traced -v e=$bare 'BEGIN {
	printf "  no tracing:      %8.3f s  %10.0f polls/s\n", b, p / b
	printf "  asyncscope:      %8.3f s  %10.0f polls/s  (+%.0f ns per poll)\n", t, p / t, (t - b) / p * 1e9
	printf "  empty programs:  %8.3f s  %10.0f polls/s  (+%.0f ns per poll: the probe points alone)\n", e, p / e, (e - b) / p * 1e9
}'
grep recorded $TMP/rec.err | sed 's/^asyncscope: /  last traced run: /'

FB=tests/apps/target/release/futbench
echo "== futbench: $TASKS tasks x $((YIELDS + 1)) polls x 3 futures, 2 workers, median of $RUNS runs"
for mode in base tasks futures; do
	for _ in $(seq "$RUNS"); do
		case $mode in
		base) $FB $TASKS $YIELDS ;;
		tasks) $AS record -o $TMP/fb.trace -- $FB $TASKS $YIELDS 2>/dev/null ;;
		futures) $AS record --futures -o $TMP/fbf.trace -- $FB $TASKS $YIELDS 2>$TMP/fbf.err ;;
		esac | elapsed
	done | median > $TMP/fb_$mode
done
awk -v p=$polls -v b=$(cat $TMP/fb_base) -v t=$(cat $TMP/fb_tasks) -v f=$(cat $TMP/fb_futures) 'BEGIN {
	printf "  no tracing:      %8.3f s  %10.0f task polls/s\n", b, p / b
	printf "  tasks only:      %8.3f s  %10.0f task polls/s  (+%.0f ns per task poll)\n", t, p / t, (t - b) / p * 1e9
	printf "  --futures:       %8.3f s  %10.0f task polls/s  (+%.0f ns per future poll over tasks only)\n", f, p / f, (f - t) / (3 * p) * 1e9
}'
grep -E "recorded|future polls" $TMP/fbf.err | sed 's/^asyncscope: /  last --futures run: /'

echo "== hyper server under wrk (-t1 -c32 -d${WRK_SECS:-5}s, 127.0.0.1), median of $RUNS runs"
SRV_BIN=bench/hyper-server/target/release/hyper-server
rps() { wrk -t1 -c32 -d${WRK_SECS:-5}s http://127.0.0.1:18080/ | awk '/Requests\/sec/ {print $2}'; }
for mode in base traced bare; do
	for _ in $(seq "$RUNS"); do
		$SRV_BIN 18080 >/dev/null & SRV=$!
		sleep 0.3
		case $mode in
		base) rps ;;
		traced|bare)
			[ $mode = bare ] && export ASYNCSCOPE_BARE_PROBES=1
			$AS record -o $TMP/h.trace -p $SRV 2>$TMP/h.err & REC=$!
			for _ in $(seq 50); do grep -q attached $TMP/h.err && break; sleep 0.1; done
			rps
			kill -INT $REC; wait $REC || true
			unset ASYNCSCOPE_BARE_PROBES ;;
		esac
		kill $SRV; wait $SRV 2>/dev/null || true; SRV=
	done | median > $TMP/h_$mode
done
awk -v b=$(cat $TMP/h_base) -v t=$(cat $TMP/h_traced) -v e=$(cat $TMP/h_bare) 'BEGIN {
	printf "  no tracing:      %10.0f requests/s\n", b
	printf "  asyncscope:      %10.0f requests/s  (%.1f%% of untraced)\n", t, t / b * 100
	printf "  empty programs:  %10.0f requests/s  (%.1f%% of untraced)\n", e, e / b * 100
}'
