#!/usr/bin/env bash
# Writes what every reading command prints for every given trace (stdout,
# stderr and exit code of each) into OUTDIR, one file per trace and command,
# so that two builds can be compared with `diff -r` before and after a change
# that must not alter outputs.
# Usage: scripts/snapshot-outputs.sh ASYNCSCOPE OUTDIR TRACE...
set -u
AS=$(realpath "$1") OUT=$2; shift 2
mkdir -p "$OUT"
traces=()
for t in "$@"; do traces+=("$(realpath "$t")"); done
cd "$OUT" && OUT=.
run() { # run NAME CMD...
	local name=$1; shift
	"$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
	echo "exit $?" >>"$OUT/$name.err"
}
for t in "${traces[@]}"; do
	b=$(basename "$t")
	tmp=.work
	mkdir -p "$tmp"
	run "$b.report" "$AS" report --partial "$t"
	run "$b.json" "$AS" report --partial --format json "$t"
	run "$b.htmlcmd" "$AS" report --partial --html "$tmp/r.html" "$t"
	cp "$tmp/r.html" "$OUT/$b.html" 2>/dev/null
	for f in perfetto pprof speedscope folded folded-futures folded-wait cat; do
		run "$b.export-$f" "$AS" export --partial --format $f -o "$tmp/x" "$t"
		cp "$tmp/x" "$OUT/$b.export-$f" 2>/dev/null
	done
	run "$b.export-folded-pertask" "$AS" export --partial --format folded --per-task -o "$tmp/y" "$t"
	cp "$tmp/y" "$OUT/$b.export-folded-pertask" 2>/dev/null
	run "$b.export-ff-lines" "$AS" export --partial --format folded-futures --lines -o "$tmp/z" "$t"
	cp "$tmp/z" "$OUT/$b.export-ff-lines" 2>/dev/null
	run "$b.blocking" "$AS" blocking "$t"
	run "$b.blocking-folded" "$AS" blocking --folded "$t"
	run "$b.cpu" "$AS" cpu "$t"
	run "$b.cpu-folded" "$AS" cpu --folded "$t"
	run "$b.uring" "$AS" uring "$t"
	run "$b.events" "$AS" events "$t"
	rm -rf "$tmp"
done
