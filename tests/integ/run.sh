#!/usr/bin/env bash
# Integration tests: the real BPF programs trace the real Tokio programs of
# tests/apps (built by `make apps`). Needs root (CAP_BPF, CAP_PERFMON).
set -u
cd "$(dirname "$0")/../.."
. tests/integ/lib.sh
. tests/integ/export.sh
. tests/integ/html.sh
. tests/integ/sched.sh
. tests/integ/top.sh
. tests/integ/dump.sh
. tests/integ/runtimes.sh
. tests/integ/usdt.sh
. tests/integ/offcpu.sh
. tests/integ/cpu.sh
. tests/integ/futures_rec.sh
. tests/integ/futures.sh
. tests/integ/uring.sh

if [ "$(id -u)" -ne 0 ]; then
	echo "integration tests need root (BPF): skipped"
	echo "0 passed, 1 failed"
	exit 1
fi

test_multi_thread_exact_polls() {
	local t=$TMP/multi.trace
	check "record exits 0" $AS record -o "$t" -- $APPS/yields multi 200 2>"$TMP/multi.err" >/dev/null
	check "attached line" grep -q "attached" "$TMP/multi.err"
	check "report json" $AS report --format json "$t" >"$TMP/multi.json"
	check "exact per-task polls" python3 tests/integ/check_yields.py "$TMP/multi.json" 200
	check "two worker tasks" json_check "$TMP/multi.json" \
		'len([t for t in r["tasks"] if t["kind"] == "worker"]) == 2'
	# both workers usually poll, but a short run may leave one parked
	# throughout: what always holds is that the runtime's worker threads
	# (at most the two) polled every user task poll
	check "workers listed, every user poll on a worker" json_check "$TMP/multi.json" \
		'1 <= len(r["workers"]) <= 2 and sum(w["polls"] for w in r["workers"] if w["name"] == "tokio-runtime-w") == r["totals"]["user_polls"]'
	check "text report" sh -c "$AS report $t > $TMP/multi.txt"
	check "text shows lost events" grep -qi "lost" "$TMP/multi.txt"
	check "text names the task future" grep -q "yields::main" "$TMP/multi.txt"
}

test_current_thread_exact_polls() {
	local t=$TMP/current.trace
	check "record exits 0" $AS record -o "$t" -- $APPS/yields current 200 2>/dev/null >/dev/null
	check "report json" $AS report --format json "$t" >"$TMP/current.json"
	check "exact per-task polls" python3 tests/integ/check_yields.py "$TMP/current.json" 200
	check "no worker task on current_thread" json_check "$TMP/current.json" \
		'not [t for t in r["tasks"] if t["kind"] == "worker"]'
}

test_attach_by_pid() {
	local t=$TMP/pid.trace go=$TMP/go
	$APPS/yields multi 100 --go-file "$go" >/dev/null &
	local app=$!
	$AS record -o "$t" -p $app 2>"$TMP/pid.err" &
	local rec=$!
	for _ in $(seq 100); do grep -q attached "$TMP/pid.err" 2>/dev/null && break; sleep 0.1; done
	check "attached line" grep -q attached "$TMP/pid.err"
	touch "$go"
	wait $app
	check "recorder stops when the target exits" wait $rec
	check "report json" $AS report --format json "$t" >"$TMP/pid.json"
	check "exact per-task polls after attach" python3 tests/integ/check_yields.py "$TMP/pid.json" 100
}

test_blocking_and_stuck_tasks() {
	local t=$TMP/blocker.trace
	check "record exits 0" $AS record -o "$t" --duration 2s -- $APPS/blocker 2>/dev/null >/dev/null
	check "report json" $AS report --format json "$t" >"$TMP/blocker.json"
	check "blocking task max poll >= 200 ms" json_check "$TMP/blocker.json" \
		'[t for t in tasks if t["name"] == "blocker::main::{async_block#0}::{async_block#1}" and t["max_poll_ns"] >= 200e6 and t["state"] == "completed"]'
	check "never-woken task ends idle" json_check "$TMP/blocker.json" \
		'[t for t in tasks if t["name"] == "blocker::stuck_forever" and t["state"] == "idle" and t["polls"] == 1 and t["wakes"] == 0]'
	check "ticker is woken by its timer" json_check "$TMP/blocker.json" \
		'[t for t in tasks if t["name"] == "blocker::main::{async_block#0}::{async_block#2}" and t["wakes"] >= 20]'
	check "workers parked" json_check "$TMP/blocker.json" \
		'sum(w["parked_ns"] for w in r["workers"]) > 1e9'
}

# expect_error "what" PATTERN command...: exits non-zero, one line on stderr matching PATTERN
expect_error() {
	local what=$1 pat=$2; shift 2
	local out=$TMP/err.txt
	"$@" >/dev/null 2>"$out"
	local rc=$?
	check "$what: non-zero exit" test "$rc" -ne 0
	check "$what: not a crash" test "$rc" -lt 128
	check "$what: one line" test "$(wc -l < "$out")" -eq 1
	check "$what: says '$pat'" grep -q "$pat" "$out" || cat "$out"
}

test_bad_input() {
	local dead
	sh -c 'exit 0' & dead=$!; wait $dead
	expect_error "pid gone" "no process with pid" $AS record -p $dead -o $TMP/x.trace
	cp /bin/true $TMP/stripped && strip $TMP/stripped
	expect_error "stripped binary" "stripped" $AS record -o $TMP/x.trace -- $TMP/stripped
	printf 'int main(void){return 0;}\n' > $TMP/plain.c && cc -g -o $TMP/plain $TMP/plain.c
	expect_error "no tokio symbols" "no Tokio runtime functions" $AS record -o $TMP/x.trace -- $TMP/plain
	expect_error "missing command" "cannot run" $AS record -o $TMP/x.trace -- /nonexistent/cmd
	expect_error "unknown runtime" "unknown runtime" $AS record --runtime nope -o $TMP/x.trace -- $APPS/yields
	head -c 4096 /dev/urandom > $TMP/garbage.trace
	expect_error "garbage trace" "not an asyncscope trace" $AS report $TMP/garbage.trace
	expect_error "missing trace" "No such file" $AS report $TMP/none.trace
	$AS record -o $TMP/full.trace -- $APPS/yields multi 50 >/dev/null 2>&1
	local size; size=$(stat -c %s $TMP/full.trace)
	head -c $((size - 7)) $TMP/full.trace > $TMP/cut.trace
	expect_error "truncated trace" "truncated" $AS report $TMP/cut.trace
	check "--partial reports a truncated trace" sh -c "$AS report --partial $TMP/cut.trace >/dev/null 2>&1"
	cp $TMP/full.trace $TMP/flip.trace
	printf '\xff\xff\xff\xff' | dd of=$TMP/flip.trace bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
	expect_error "corrupt trace" "corrupt" $AS report $TMP/flip.trace
	expect_error "usage" "needs either" $AS record -o $TMP/x.trace
	expect_error "not root" "run as root" setpriv --reuid 65534 --regid 65534 --clear-groups \
		$AS record -o /tmp/x.trace -- $APPS/yields
}

test_lost_events_reported() {
	# a 4 KiB ring buffer cannot keep up with 200k polls: drops must be
	# counted in BPF and shown by the recorder and every report format
	local t=$TMP/lost.trace
	check "record exits 0" $AS record --buffer-size 4K -o "$t" -- $APPS/pollbench 500 200 \
		>/dev/null 2>"$TMP/lost.err"
	check "recorder warns about lost events" grep -q "warning: [0-9]* events were lost" "$TMP/lost.err"
	check "report json" $AS report --format json "$t" >"$TMP/lost.json"
	check "json lost_events > 0" json_check "$TMP/lost.json" 'r["lost_events"] > 0'
	$AS report "$t" >"$TMP/lost.txt" 2>&1
	check "text warns" grep -q "WARNING" "$TMP/lost.txt"
}

test_report_no_leaks_valgrind() {
	local t=$TMP/vg.trace
	# valgrind does not know the uprobe_multi link command: it warns, and
	# must report no error and no leak
	check "valgrind: record has no leak or error" valgrind -q --leak-check=full \
		--suppressions=tests/integ/valgrind.supp \
		--errors-for-leak-kinds=definite,indirect --error-exitcode=9 \
		build/asyncscope record -o "$t" -- $APPS/yields multi 20 >/dev/null 2>"$TMP/vg.err"
	check "valgrind: the recording is complete" sh -c "build/asyncscope report $t >/dev/null"
	check "valgrind: report text has no leak or error" valgrind -q --leak-check=full \
		--errors-for-leak-kinds=definite,indirect --error-exitcode=9 \
		build/asyncscope report "$t" >/dev/null
	check "valgrind: report json has no leak or error" valgrind -q --leak-check=full \
		--errors-for-leak-kinds=definite,indirect --error-exitcode=9 \
		build/asyncscope report --format json "$t" >/dev/null
}

for t in ${INTEG_TESTS:-test_multi_thread_exact_polls test_current_thread_exact_polls \
	test_dump_parked test_dump_all_idle test_dump_errors \
	test_attach_by_pid test_blocking_and_stuck_tasks test_bad_input test_lost_events_reported \
	test_report_no_leaks_valgrind test_top_launch_keys test_top_attach_leaves_target test_sched_chain_edges test_sched_sleepers_idle test_sched_blocker_long_poll_stall \
	test_html_assets_current test_html_recorded_traces test_html_full_fixture \
	test_html_hostile_strings test_html_degenerate_inputs test_html_kernel_sections test_html_futures_sections \
	test_export_fixtures test_export_live_multi test_export_live_current test_export_bad_input \
	test_runtime_async_std_exact_polls test_runtime_smol_exact_polls test_runtime_mixed_tokio_smol \
	test_runtime_probes_listing \
	test_usdt_probes_listing test_usdt_exact_hits test_usdt_exact_hits_perf_event_links test_usdt_semaphore test_usdt_errors \
	test_usdt_in_tasks \
	test_offcpu_sleep_in_poll test_offcpu_off_by_default test_offcpu_dwarf_stacks test_offcpu_future_chain \
	test_cpu_split_shares test_cpu_off_by_default test_runq_workers test_cpu_dwarf_stacks \
	test_uring_exact_requests \
	test_futures_exact_polls test_futures_exact_polls_perf_event_links test_futures_stuck_await_line \
	test_futures_probes_listing test_futures_probe_regex test_trace_one_step \
	test_futures_nested_flame test_futures_stuck_chain test_futures_cli}; do
	run_test "$t"
done
finish
