# Future-level recording (sourced by run.sh, after lib.sh): record --futures
# on tests/apps futures_nested, whose stderr gives the truth per future
# ("truth future=mid stack=handler;mid polls=60 self_ms=240 ..."), and
# futures_stuck, whose stderr names the .await its stuck task sits at
# ("stuck at src/bin/futures_stuck.rs:77").

# fut_counts TRACE: "NAME OUTCOME" per future exit, counted (uniq -c)
fut_counts() {
	$AS events "$1" | awk '$4 == "fut_exit" {
		n = ($5 == "task") ? 7 : 5; name = $n
		while ($(n + 1) != "depth") { n++; name = name " " $n }
		o = ($0 ~ / depth [0-9]+ ready/) ? "ready" : ($0 ~ / depth [0-9]+ pending/) ? "pending" : "unknown"
		print name, o }' | sort | uniq -c
}

# fut_entries TRACE NAME: entries of future NAME
fut_entries() {
	$AS events "$1" | awk -v want="$2" '$4 == "fut_enter" {
		n = ($5 == "task") ? 7 : 5; name = $n
		while ($(n + 1) != "depth") { n++; name = name " " $n }
		if (name == want) c++ } END { print c + 0 }'
}

# fut_name SHORT: the readable name asyncscope gives futures_nested's future SHORT
fut_name() {
	case $1 in
	Checksum) echo "<futures_nested::Checksum as Future>::poll" ;;
	*) echo "futures_nested::$1" ;;
	esac
}

# futures_exact NAME [ENV...]: every poll of every future, Ready/Pending each
futures_exact() {
	local name=$1; shift
	local t=$TMP/$name.trace
	check "$name: record --futures exits 0" env "$@" $AS record --futures -o "$t" \
		-- $APPS/futures_nested 12 >"$TMP/$name.out" 2>"$TMP/$name.err"
	check "$name: attached line counts 5 future probes" grep -q ", 5 future)" "$TMP/$name.err"
	check "$name: summary line" grep -q "future polls from 5 future probes (4 async state machines" \
		"$TMP/$name.err"
	check "$name: the app printed its truth" test "$(grep -c '^truth future=' "$TMP/$name.err")" -eq 5
	fut_counts "$t" >"$TMP/$name.counts"
	local line short polls full ready pending
	grep '^truth future=' "$TMP/$name.err" | while read -r line; do
		short=$(echo "$line" | sed 's/.*future=\([^ ]*\).*/\1/')
		polls=$(echo "$line" | sed 's/.* polls=\([0-9]*\).*/\1/')
		full=$(fut_name "$short")
		check "$name: $short polled exactly $polls times" \
			test "$(fut_entries "$t" "$full")" -eq "$polls"
		ready=$(awk -v n="$full" '{ c = $1; $1 = ""; sub(/^ /, ""); if ($0 == n " ready") print c }' \
			"$TMP/$name.counts")
		pending=$(awk -v n="$full" '{ c = $1; $1 = ""; sub(/^ /, ""); if ($0 == n " pending") print c }' \
			"$TMP/$name.counts")
		check "$name: $short: every poll Ready or Pending ($ready + $pending = $polls)" \
			test "$(( ${ready:-0} + ${pending:-0} ))" -eq "$polls"
	done
	check "$name: no exit of unknown outcome" sh -c "! grep -q unknown $TMP/$name.counts"
	check "$name: the handler task completes once" grep -Eq '^ +1 futures_nested::handler ready$' \
		"$TMP/$name.counts"
	# Checksum returns Pending 4 times, then Ready (an impl Future, read from its returned Poll)
	local cr cp
	cr=$(awk '/Checksum as Future>::poll ready$/ { print $1 }' "$TMP/$name.counts")
	cp=$(awk '/Checksum as Future>::poll pending$/ { print $1 }' "$TMP/$name.counts")
	check "$name: Checksum: 4 Pending per Ready ($cp, $cr)" test "${cp:-0}" -eq "$(( 4 * ${cr:-1} ))"
	check "$name: nesting: leaf at depth 2 inside mid inside handler" sh -c \
		"$AS events $t | grep -q 'fut_enter .*futures_nested::leaf depth 2 '"
	check "$name: pending leaf names its .await line" sh -c \
		"$AS events $t | grep -Eq 'futures_nested::leaf depth 2 pending at src/bin/futures_nested.rs:[0-9]+ awaiting tokio::task::yield_now'"
}

test_futures_exact_polls() { futures_exact futures-multi; }
test_futures_exact_polls_perf_event_links() { futures_exact futures-perf ASYNCSCOPE_NO_UPROBE_MULTI=1; }

test_futures_stuck_await_line() {
	local t=$TMP/fstuck.trace
	check "stuck: record --futures exits 0" $AS record --futures -o "$t" \
		-- $APPS/futures_stuck 1 >"$TMP/fstuck.out" 2>"$TMP/fstuck.err"
	local at
	at=$(sed -n 's/^futures_stuck: stuck at \([^ ]*\) .*/\1/p' "$TMP/fstuck.err")
	check "stuck: the app says where it is stuck" test -n "$at"
	check "stuck: the innermost future is pending at that line, awaiting the gate" sh -c \
		"$AS events $t | grep -q 'fut_exit .*futures_stuck::wait_signal depth 2 pending at $at awaiting futures_stuck::Gate'"
	check "stuck: the chain above it is pending too" sh -c \
		"$AS events $t | grep -q 'fut_exit .*futures_stuck::stuck depth 0 pending at src/bin/futures_stuck.rs:'"
	check "stuck: polled exactly once" test "$(fut_entries "$t" futures_stuck::stuck)" -eq 1
}

test_futures_probes_listing() {
	local out=$TMP/fprobes.txt
	check "probes --futures exits 0" sh -c "$AS probes --futures $APPS/futures_nested >$out 2>&1"
	check "5 future probes, 4 state machines" grep -q "^future probes: 5 (4 async state machines" "$out"
	local line
	line=$(grep -n 'tokio::task::yield_now().await' tests/apps/src/bin/futures_nested.rs | \
	       sed -n 1p | cut -d: -f1)
	check "leaf: its source line and its .await line" \
		grep -Eq "futures_nested::leaf +src/bin/futures_nested.rs:[0-9]+ +\[$line\]" "$out"
	check "the impl Future poll is listed" grep -q "<futures_nested::Checksum as Future>::poll" "$out"
	check "no runtime or std future is planned" sh -c "! grep -Eq '^0x[0-9a-f]+ +[a-z-]+ +(tokio|std|core)::' $out"
	$AS probes --probe-preset cat $APPS/futures_nested >"$TMP/fcat.txt" 2>&1
	check "preset cat: closures and Future::poll of every crate" sh -c \
		"grep -q '^future probes: ' $TMP/fcat.txt && grep -q 'tokio::' $TMP/fcat.txt"
}

test_futures_probe_regex() {
	local t=$TMP/fregex.trace
	check "--probe REGEX: record exits 0" $AS record --probe '^futures_nested::burn$' -o "$t" \
		-- $APPS/futures_nested 2 >/dev/null 2>"$TMP/fregex.err"
	check "--probe: one probe" grep -q ", 1 future)" "$TMP/fregex.err"
	check "--probe: burn entered, at depth 0 without --futures" sh -c \
		"$AS events $t | grep -q 'fut_enter .*futures_nested::burn depth 0 '"
	check "--probe: entries and exits pair up" test \
		"$($AS events "$t" | grep -c 'fut_enter ')" -eq "$($AS events "$t" | grep -c 'fut_exit ')"
	check "bad regex: exit 1" sh -c "! $AS record --probe 'a(' -o $TMP/x.trace -- $APPS/futures_nested 1 2>$TMP/fbad.err"
	check "bad regex: one line naming it" sh -c "test \$(wc -l <$TMP/fbad.err) -eq 1 && grep -q \"bad --probe pattern 'a('\" $TMP/fbad.err"
	check "no match: says so" sh -c "! $AS record --probe 'no_such_fn_xyz' -o $TMP/x.trace -- $APPS/futures_nested 1 2>$TMP/fnone.err; grep -q 'no function of .* matches --probe' $TMP/fnone.err"
	check "unknown preset: usage error (exit 2)" sh -c "$AS record --probe-preset nope -- true 2>$TMP/fpre.err; test \$? -eq 2 && grep -q \"the preset is 'cat'\" $TMP/fpre.err"
}

# `asyncscope trace` records with record's options and writes the HTML
# report in one step; `asyncscope --pid PID --output F` is the same.
test_trace_one_step() {
	local h=$TMP/one.html
	check "trace --futures --offcpu exits 0" sh -c \
		"$AS trace --futures --offcpu -o $h -- $APPS/futures_stuck 1 >/dev/null 2>$TMP/one.err"
	check "trace: the HTML report and the trace beside it" test -s "$h" -a -s "$TMP/one.trace"
	check "trace: record got --futures" grep -Eq "future polls from [0-9]+ future probes" "$TMP/one.err"
	check "trace: record got --offcpu" grep -q "off-CPU intervals inside polls" "$TMP/one.err"
	check "trace: the page holds the futures data" grep -q '"parked_tasks"' "$h"
	$APPS/futures_stuck 4 >/dev/null 2>&1 &
	local pid=$!
	sleep 0.5
	check "--pid --output: exits 0" sh -c "$AS --pid $pid --output $TMP/two.html --duration 1s --futures >/dev/null 2>$TMP/two.err"
	check "--pid --output: report written" test -s "$TMP/two.html" -a -s "$TMP/two.trace"
	check "--pid --output: the target is left running" kill -0 "$pid"
	kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
	check "trace: unknown option is a usage error (exit 2)" sh -c \
		"$AS trace --bogus -o $TMP/x.html -- true 2>/dev/null; test \$? -eq 2"
}
