#!/usr/bin/env bash
# bench/hyper_modes.sh [none | RECORD-OPTIONS...]: one round of the hyper 0.14
# server under wrk (-t1 -c32 -d3s, 127.0.0.1), untraced (none) or with
# `asyncscope record -p` and the options given (e.g. --lite): requests/s, the
# server's CPU per request (utime + stime from /proc), and with
# kernel.bpf_stats_enabled on, each BPF program's runs per request and ns a
# run (stats add ~2 clock reads a run to every program: compare modes with
# each other, not with the bare figures). Figures, never assertions; run as
# root under the integration lock, interleave rounds of the modes compared.
# AS=OTHER_BINARY measures another build.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
AS=${AS:-build/asyncscope}
S=bench/hyper-server/target/release/hyper-server
[ -x $S ] || (cd bench/hyper-server && cargo build --release --quiet)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
$S 18081 >/dev/null & SRV=$!
sleep 0.3
sysctl -q kernel.bpf_stats_enabled=1
if [ "$1" != none ]; then
$AS record -o $TMP/h.trace -p $SRV "$@" 2>$TMP/h.err & REC=$!
for _ in $(seq 50); do grep -q attached $TMP/h.err && break; sleep 0.1; done
fi
snap() { bpftool prog show -j | python3 -c "
import json,sys
for p in json.load(sys.stdin):
    if p.get('run_cnt',0)>1000: print(p['name'], p['run_cnt'], p['run_time_ns'])"; }
snap > $TMP/s1
T0=$(awk '{print $14+$15}' /proc/$SRV/stat)
wrk -t1 -c32 -d3s http://127.0.0.1:18081/ | awk '/Requests\/sec/ {print "rps", $2} /requests in/ {print "reqs", $1}' > $TMP/wrk.out
T1=$(awk '{print $14+$15}' /proc/$SRV/stat)
snap > $TMP/s2
[ "$1" != none ] && { kill -INT $REC; wait $REC; }
kill $SRV; wait $SRV 2>/dev/null
sysctl -q kernel.bpf_stats_enabled=0
TMP=$TMP python3 - $T0 $T1 <<'P'
import os, sys
w=dict(l.split() for l in open(os.environ['TMP'] + '/wrk.out'))
reqs=int(w['reqs'])
print('rps %s  server CPU %.2f us/req' % (w['rps'], (int(sys.argv[2])-int(sys.argv[1]))*1e4/reqs))
a={l.split()[0]:list(map(int,l.split()[1:])) for l in open(os.environ['TMP'] + '/s1')}
for l in open(os.environ['TMP'] + '/s2'):
    n,c,ns=l.split(); c=int(c); ns=int(ns)
    dc=c-a.get(n,[0,0])[0]; dn=ns-a.get(n,[0,0])[1]
    if dc>0: print('  %-14s %6.2f runs/req %5.0f ns/run' % (n, dc/reqs, dn/dc))
P
