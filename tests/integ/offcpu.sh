# Off-CPU time inside polls (record --offcpu, asyncscope blocking) on live
# recordings of tests/apps/sleeper_in_poll (sourced by run.sh, after lib.sh).
# Truth: its task sleeper_in_poll::blocker calls std::thread::sleep(50 ms)
# inside its polls 10 times: 500 ms off CPU in do_nanosleep / hrtimer_nanosleep.

test_offcpu_sleep_in_poll() {
	local t=$TMP/offcpu.trace txt=$TMP/offcpu.txt folded=$TMP/offcpu.folded
	check "record --offcpu" sh -c "$AS record --offcpu -o $t -- $APPS/sleeper_in_poll >/dev/null 2>$TMP/offcpu.err"
	check "record counts the intervals" grep -q "off-CPU intervals inside polls" "$TMP/offcpu.err"
	check "blocking report" sh -c "$AS blocking $t > $txt"
	check "report names the task" grep -q "^  sleeper_in_poll::blocker  task" "$txt"
	check "blocking report says what was lost" grep -q "^lost events 0, missed events 0$" "$txt"
	check "cause: the nanosleep kernel path, 10 times" grep -Eq " 10x  (do_nanosleep|hrtimer_nanosleep) <- sleeper_in_poll::" "$txt"
	check "off-CPU time of the task within 10% of 500 ms" python3 - "$txt" <<'PY'
import re, sys
for line in open(sys.argv[1]):
    m = re.match(r"  sleeper_in_poll::blocker  task .*off-CPU ([0-9.]+) ms  (\d+) intervals", line)
    if m:
        ms, n = float(m.group(1)), int(m.group(2))
        # other short intervals (a preemption, a page fault) may add a few
        ok = 450 <= ms <= 550 and n >= 10
        if not ok:
            print("    blocker: %.3f ms in %d intervals" % (ms, n), file=sys.stderr)
        sys.exit(0 if ok else 1)
print("    no line for the blocker task", file=sys.stderr)
sys.exit(1)
PY
	check "folded stacks" sh -c "$AS blocking --folded $t > $folded"
	check "folded: task first, kernel nanosleep frames, weight" python3 - "$folded" <<'PY'
import sys
total = 0
for line in open(sys.argv[1]):
    stack, _, w = line.rstrip("\n").rpartition(" ")
    frames = stack.split(";")
    if frames[0] == "sleeper_in_poll::blocker" and ("do_nanosleep" in frames or "hrtimer_nanosleep" in frames):
        total += int(w)
ok = 450e6 <= total <= 550e6
if not ok:
    print("    blocker nanosleep weight: %d ns" % total, file=sys.stderr)
sys.exit(0 if ok else 1)
PY
	check "the main report still reads the trace" sh -c "$AS report $t >$TMP/offcpu.report"
	check "the main report has the blocking section" grep -q "^Blocking inside polls" $TMP/offcpu.report
	check "json report" sh -c "$AS report --format json $t > $TMP/offcpu.json"
	check "json: the task's off-CPU time within 10% of 500 ms, in nanosleep" json_check $TMP/offcpu.json \
		'[x for x in r["blocking"]["tasks"] if x["name"] == "sleeper_in_poll::blocker" and 450e6 <= x["offcpu_ns"] <= 550e6 and x["causes"][0]["kernel"] in ("do_nanosleep", "hrtimer_nanosleep")]'
	# the threshold: 50 ms sleeps are under --offcpu-min 60000 (60 ms)
	check "record --offcpu-min 60000" sh -c "$AS record --offcpu --offcpu-min 60000 -o $t -- $APPS/sleeper_in_poll >/dev/null 2>&1"
	check "no interval of the task under the threshold" sh -c "! $AS blocking $t | grep -q sleeper_in_poll::blocker"
}

# Without --offcpu: no off-CPU event and the record summary as before.
test_offcpu_off_by_default() {
	local t=$TMP/nooffcpu.trace
	check "record without --offcpu" sh -c "$AS record -o $t -- $APPS/sleeper_in_poll >/dev/null 2>$TMP/nooffcpu.err"
	check "no off-CPU line" sh -c "! grep -q 'off-CPU' $TMP/nooffcpu.err"
	check "no off-CPU events" sh -c "$AS blocking $t | grep -q '0 intervals, 0 tasks'"
	check "bad --offcpu-min refused (usage)" sh -c "$AS record --offcpu --offcpu-min x -o $t -- true 2>/dev/null; [ \$? -eq 2 ]"
}
