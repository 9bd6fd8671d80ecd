# USDT probes (sourced by run.sh, after lib.sh): tests/apps/usdt/usdt_app, a C
# program without async runtime, fires asyncscope_test:tick exactly N times
# with the loop index (a register argument, "-8@%rax") and, only while its
# semaphore is set, asyncscope_test:guarded N times; it prints
# "semaphore set|clear" and "guarded fired K".
USDT_APP=tests/apps/usdt/usdt_app

# usdt_args TRACE PROBE: the arguments of PROBE's hits, one a line, in order
usdt_args() {
	$AS events "$1" | awk -v p="$2" '$4 == "usdt" && $5 == p { print $7 }'
}

test_usdt_probes_listing() {
	local out=$TMP/usdt-probes.txt
	check "probes exits 0 on a binary with USDT probes only" sh -c "$AS probes $USDT_APP >$out 2>&1"
	check "says there is no async runtime" grep -q "no async runtime found" "$out"
	check "USDT section" grep -q "^USDT probes: 2 sites" "$out"
	check "tick: no semaphore, register argument, emulated nop" \
		grep -Eq '^asyncscope_test:tick +0x[0-9a-f]+ +emulated +- +-8@%r' "$out"
	check "guarded: its semaphore" \
		grep -Eq '^asyncscope_test:guarded +0x[0-9a-f]+ +emulated +0x[0-9a-f]+ +-8@%r' "$out"
	$AS probes $APPS/yields >"$TMP/usdt-yields.txt" 2>&1
	check "no USDT section for a binary without notes" sh -c "! grep -q USDT $TMP/usdt-yields.txt"
}

# usdt_exact_ticks NAME [ENV...]: 1000 ticks recorded, arguments 0..999 in order
usdt_exact_ticks() {
	local name=$1; shift
	local t=$TMP/$name.trace
	check "$name: record exits 0" env "$@" $AS record -o "$t" --usdt asyncscope_test:tick \
		-- $USDT_APP 1000 >"$TMP/$name.out" 2>"$TMP/$name.err"
	check "$name: attached line counts the site" grep -q "1 usdt)" "$TMP/$name.err"
	check "$name: the app ran" grep -q "tick fired 1000" "$TMP/$name.out"
	usdt_args "$t" asyncscope_test:tick >"$TMP/$name.args"
	check "$name: exactly 1000 hits" test "$(wc -l <"$TMP/$name.args")" -eq 1000
	check "$name: arguments 0..999 in order" sh -c "seq 0 999 | cmp -s - $TMP/$name.args"
	check "$name: no guarded hit" sh -c "! $AS events $t | grep -q guarded"
	$AS report "$t" >"$TMP/$name.report" 2>/dev/null
	check "$name: report counts 1000 hits, arguments 0..999" \
		grep -Eq '^asyncscope_test:tick +1000 +0 +0\.\.999$' "$TMP/$name.report"
	check "$name: report total" grep -q "^USDT PROBES  1000 hits, 0 inside tasks" "$TMP/$name.report"
	$AS report --format json "$t" >"$TMP/$name.json" 2>/dev/null
	check "$name: json carries the counts" json_check "$TMP/$name.json" \
		'r["usdt"]["probes"][0] == {"probe": "asyncscope_test:tick", "hits": 1000, "in_task": 0, "arg_min": 0, "arg_max": 999} and r["usdt"]["total"] == 1000'
	check "$name: USDT hits are events, not anomalies" json_check "$TMP/$name.json" \
		'r["totals"]["anomalies"] == 0 and r["events"] == 1001'
	check "$name: nothing lost or missed" grep -q "recorded 1001 events, 0 tasks, 0 lost events, 0 missed" \
		"$TMP/$name.err"
}

test_usdt_exact_hits() {
	usdt_exact_ticks usdt-multi
}

test_usdt_exact_hits_perf_event_links() {
	usdt_exact_ticks usdt-perf ASYNCSCOPE_NO_UPROBE_MULTI=1
}

test_usdt_semaphore() {
	local t=$TMP/usdt-sema.trace
	$USDT_APP 1000 >"$TMP/usdt-alone.out"
	check "alone: semaphore clear" grep -q "semaphore clear" "$TMP/usdt-alone.out"
	check "alone: guarded probe not fired" grep -q "guarded fired 0" "$TMP/usdt-alone.out"
	check "record guarded exits 0" $AS record -o "$t" --usdt asyncscope_test:guarded \
		-- $USDT_APP 1000 >"$TMP/usdt-sema.out" 2>/dev/null
	check "attached: semaphore set" grep -q "semaphore set" "$TMP/usdt-sema.out"
	check "attached: guarded fired 1000" grep -q "guarded fired 1000" "$TMP/usdt-sema.out"
	usdt_args "$t" asyncscope_test:guarded >"$TMP/usdt-sema.args"
	check "1000 guarded hits, arguments 0..999" sh -c "seq 0 999 | cmp -s - $TMP/usdt-sema.args"
	check "tick not attached: no tick hit" sh -c "! $AS events $t | grep -q tick"
	# only the probes asked for have their semaphore set
	$AS record -o "$TMP/usdt-tick.trace" --usdt asyncscope_test:tick -- $USDT_APP 10 \
		>"$TMP/usdt-tick.out" 2>/dev/null
	check "tick only: guarded semaphore clear" grep -q "semaphore clear" "$TMP/usdt-tick.out"
	# PROVIDER:* takes both, each site once even when named twice
	check "record provider:* exits 0" $AS record -o "$TMP/usdt-all.trace" --usdt 'asyncscope_test:*' \
		--usdt asyncscope_test:tick -- $USDT_APP 200 >"$TMP/usdt-all.out" 2>"$TMP/usdt-all.err"
	check "provider:*: two sites attached" grep -q "2 usdt)" "$TMP/usdt-all.err"
	check "provider:*: 200 ticks" test "$(usdt_args "$TMP/usdt-all.trace" asyncscope_test:tick | wc -l)" -eq 200
	check "provider:*: 200 guarded" test "$(usdt_args "$TMP/usdt-all.trace" asyncscope_test:guarded | wc -l)" -eq 200
	# detached: the kernel took its increment back
	$USDT_APP 10 >"$TMP/usdt-after.out"
	check "after recording: semaphore clear again" grep -q "semaphore clear" "$TMP/usdt-after.out"
}

test_usdt_errors() {
	expect_error "missing USDT probe" \
		"no USDT probe asyncscope_test:nope in .*: it has asyncscope_test:tick, asyncscope_test:guarded" \
		$AS record -o $TMP/x.trace --usdt asyncscope_test:nope -- $USDT_APP 10
	expect_error "missing provider" "no USDT probe other:\* in .*: it has asyncscope_test:tick" \
		$AS record -o $TMP/x.trace --usdt 'other:*' -- $USDT_APP 10
	expect_error "binary without notes" "it has no USDT probes" \
		$AS record -o $TMP/x.trace --usdt asyncscope_test:tick -- $APPS/yields
	expect_error "bad --usdt" "PROVIDER:NAME" $AS record -o $TMP/x.trace --usdt tick -- $USDT_APP 10
	expect_error "no --usdt: a runtime is still needed" "no Tokio runtime functions" \
		$AS record -o $TMP/x.trace -- $USDT_APP 10
}

# tests/apps/usdt/usdt_tasks: a C stand-in for a runtime (its poll function
# has the name of Tokio's) polls 8 "tasks" once each; task k fires
# asyncscope_test:in_task k + 1 times inside its poll (a register argument
# 0..k), and one hit comes from outside any poll (a constant argument, -1,
# at a second site). It prints each task's address and hits.
test_usdt_in_tasks() {
	local t=$TMP/usdt-tasks.trace out=$TMP/usdt-tasks.out
	check "record exits 0" $AS record -o "$t" --usdt asyncscope_test:in_task \
		-- tests/apps/usdt/usdt_tasks 8 >"$out" 2>"$TMP/usdt-tasks.err"
	check "poll probe and both sites attached" grep -q "1 poll, .* 2 usdt) .*tokio" "$TMP/usdt-tasks.err"
	$AS events "$t" >"$TMP/usdt-tasks.events"
	# per task: hits seen == hits the app made; arguments 0..k in order
	check "each task's hits, inside its poll" python3 - "$out" "$TMP/usdt-tasks.events" <<'PY'
import sys, collections
want = {}
for line in open(sys.argv[1]):
    w = line.split()
    if w[0] == "task":
        want[int(w[1], 16)] = int(w[3])
got, args, outside = collections.Counter(), collections.defaultdict(list), []
for line in open(sys.argv[2]):
    w = line.split()
    if w[3] != "usdt":
        continue
    arg = int(w[w.index("arg") + 1])
    if w[4] == "task":
        task = int(w[5], 16)
        got[task] += 1
        args[task].append(arg)
    else:
        outside.append(arg)
errors = []
if dict(got) != want:
    errors.append(f"hits per task {dict(got)}, want {want}")
for task, a in args.items():
    if a != list(range(len(a))):
        errors.append(f"task {task:#x} arguments {a}")
if outside != [-1]:
    errors.append(f"hits outside tasks: arguments {outside}, want [-1]")
for e in errors:
    print("    " + e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY
	$AS report "$t" >"$TMP/usdt-tasks.report" 2>/dev/null
	check "report: 37 hits, 36 inside tasks" grep -q "^USDT PROBES  37 hits, 36 inside tasks" \
		"$TMP/usdt-tasks.report"
	check "report: argument range -1..7" grep -Eq '^asyncscope_test:in_task +37 +36 +-1\.\.7$' \
		"$TMP/usdt-tasks.report"
	check "report: the busiest task first, 8 hits" grep -Eq '^asyncscope_test:in_task +8 +0x' \
		"$TMP/usdt-tasks.report"
	check "report: 8 task rows" grep -q "USDT HITS BY TASK  top 8 of 8" "$TMP/usdt-tasks.report"
}
