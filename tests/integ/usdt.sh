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
