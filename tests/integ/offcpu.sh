# Off-CPU time inside polls (record --offcpu, asyncscope blocking) on live
# recordings of tests/apps/sleeper_in_poll (sourced by run.sh, after lib.sh).
# Truth: its task sleeper_in_poll::blocker calls std::thread::sleep(50 ms)
# inside its polls 10 times: 500 ms off CPU in do_nanosleep / hrtimer_nanosleep.

test_offcpu_sleep_in_poll() {
	local t=$TMP/offcpu.trace txt=$TMP/offcpu.txt folded=$TMP/offcpu.folded
	check "record --offcpu" sh -c "$AS record --offcpu -o $t -- $APPS/sleeper_in_poll >/dev/null 2>$TMP/offcpu.err"
	check "record counts the intervals" grep -q "off-CPU intervals inside polls" "$TMP/offcpu.err"
	check "blocking report" sh -c "$AS blocking $t > $txt"
	check "json report" sh -c "$AS report --format json $t > $TMP/offcpu.json"
	check "report names the task" grep -q "^  sleeper_in_poll::blocker  task" "$txt"
	check "blocking report says what was lost" grep -q "^lost events 0, missed events 0$" "$txt"
	check "cause: the nanosleep kernel path, 10 times" grep -Eq " 10x  (do_nanosleep|hrtimer_nanosleep) <- sleeper_in_poll::" "$txt"
	grep -Eq " 10x  (do_nanosleep|hrtimer_nanosleep) <- sleeper_in_poll::" "$txt" ||
		{ sed 's/^/    | /' "$txt" >&2; $AS events "$t" | grep -E "offcpu|park" | head -60 | sed 's/^/    | /' >&2; }
	local sleep_line
	sleep_line=$(grep -n 'std::thread::sleep(Duration' tests/apps/src/bin/sleeper_in_poll.rs | cut -d: -f1)
	check "cause: the user frame's file:line is the std::thread::sleep call" grep -Eq \
		" 10x  (do_nanosleep|hrtimer_nanosleep) <- sleeper_in_poll::.* at src/bin/sleeper_in_poll.rs:$sleep_line\$" "$txt"
	check "json: the cause's file and line" python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
c = [c for t in r['blocking']['tasks'] for c in t['causes'] if c.get('file') == 'src/bin/sleeper_in_poll.rs']
sys.exit(0 if c and c[0]['line'] == $sleep_line else 1)" "$TMP/offcpu.json"
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
	# the threshold: 50 ms sleeps are under --offcpu-min 60ms
	check "record --offcpu-min 60ms" sh -c "$AS record --offcpu --offcpu-min 60ms -o $t -- $APPS/sleeper_in_poll >/dev/null 2>&1"
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

# record --offcpu --dwarf: the user stack at each switch-out unwound by its
# call frame information (sleeper_in_poll is built without frame pointers:
# the frame-pointer walk gives clock_nanosleep and one lucky frame). Truth:
# std::thread::sleep is called from the async fn body (sleep_blocking,
# inlined into blocker's state machine), polled by Tokio's worker loop.
test_offcpu_dwarf_stacks() {
	local t=$TMP/offdw.trace fpt=$TMP/offfp.trace
	check "record --offcpu --dwarf" sh -c "$AS record --offcpu --dwarf -o $t -- $APPS/sleeper_in_poll >/dev/null 2>$TMP/offdw.err"
	check "record --offcpu (frame pointers)" sh -c "$AS record --offcpu -o $fpt -- $APPS/sleeper_in_poll >/dev/null 2>&1"
	check "DWARF off-CPU stacks deeper than frame pointers, mean and median" python3 - "$TMP/offdw.err" <<'PY'
import re, sys
for line in open(sys.argv[1]):
    m = re.match(r"asyncscope: DWARF unwinding: (\d+) off-CPU intervals, ([0-9.]+) user frames on average "
                 r"\(frame pointers alone: ([0-9.]+)\), median (\d+) \((\d+)\)", line)
    if m:
        n, dw, fp, med, fpmed = int(m.group(1)), float(m.group(2)), float(m.group(3)), int(m.group(4)), int(m.group(5))
        print("    %d intervals: %.1f frames by DWARF (median %d), %.1f by frame pointers (median %d)" % (n, dw, med, fp, fpmed), file=sys.stderr)
        sys.exit(0 if n >= 10 and dw >= 8 and dw > fp and med > fpmed else 1)
print("    no DWARF unwinding line for off-CPU intervals", file=sys.stderr)
sys.exit(1)
PY
	check "folded stacks (DWARF)" sh -c "$AS blocking --folded $t > $TMP/offdw.folded"
	check "folded stacks (frame pointers)" sh -c "$AS blocking --folded $fpt > $TMP/offfp.folded"
	check "the sleep's user stack reaches the async fn and Tokio's worker loop, deeper than by frame pointers" \
		python3 - "$TMP/offdw.folded" "$TMP/offfp.folded" <<'PY'
import re, sys
def sleeps(path):
    """user frames (outermost first) and weight of the blocker's nanosleep stacks"""
    out = []
    for line in open(path):
        stack, _, w = line.rstrip("\n").rpartition(" ")
        f = stack.split(";")
        if f[0] != "sleeper_in_poll::blocker" or not ("do_nanosleep" in f or "hrtimer_nanosleep" in f):
            continue
        k = next(i for i, x in enumerate(f) if x.startswith("entry_SYSCALL_64"))
        out.append((f[1:k], int(w)))
    return out
dw, fp = sleeps(sys.argv[1]), sleeps(sys.argv[2])
ok = bool(dw) and bool(fp)
total = sum(w for _, w in dw)
ok = ok and 450e6 <= total <= 550e6
fp_depth = max(len(u) for u, _ in fp) if fp else 0
for u, w in dw:
    print("    DWARF %d user frames (frame pointers %d): %s" % (len(u), fp_depth, ";".join(u)), file=sys.stderr)
    def at(pred):
        return next((i for i, x in enumerate(u) if pred(x)), -1)
    loop = at(lambda x: x == "tokio::runtime::scheduler::multi_thread::worker::run")
    body = at(lambda x: x.startswith("sleeper_in_poll::blocker::{{closure}}") or "sleep_blocking" in x)
    sleep = at(lambda x: re.match(r"std::thread::(\w+::)*sleep$", x) is not None)
    ok = ok and 0 <= loop < body < sleep and len(u) > fp_depth
if not ok:
    print("    DWARF nanosleep weight %d ns; frame-pointer stacks: %s" % (total, [";".join(u) for u, _ in fp]), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
	# the innermost function of the program's own: sleep_blocking, inlined
	# into blocker's poll body, named from DWARF's inlined subroutines
	check "blocking report: cause named from the DWARF stack, inlined async fn included" sh -c \
		"$AS blocking $t | grep -Eq ' 10x  (do_nanosleep|hrtimer_nanosleep) <- sleeper_in_poll::sleep_blocking::\{\{closure\}\} at src/bin/sleeper_in_poll.rs:[0-9]+'"
}

# With --futures, each off-CPU interval also names the future frames polled
# at the switch: the blocker's async fn.
test_offcpu_future_chain() {
	local t=$TMP/offcpu-fut.trace
	check "record --offcpu --futures" sh -c "$AS record --offcpu --futures -o $t -- $APPS/sleeper_in_poll >/dev/null 2>&1"
	$AS blocking "$t" >"$TMP/offcpu-fut.txt" 2>&1
	check "the cause names the future polled" grep -Eq \
		" 10x  (do_nanosleep|hrtimer_nanosleep) <- sleeper_in_poll::.*  in futures sleeper_in_poll::blocker\$" \
		"$TMP/offcpu-fut.txt"
	$AS blocking --folded "$t" >"$TMP/offcpu-fut.folded" 2>/dev/null
	check "folded: task, then its future, then the stack" grep -q \
		"^sleeper_in_poll::blocker;sleeper_in_poll::blocker;.*do_nanosleep" "$TMP/offcpu-fut.folded"
	$AS report --format json "$t" >"$TMP/offcpu-fut.json"
	check "json: the cause's futures" python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if any(c.get('futures') == 'sleeper_in_poll::blocker' for t in r['blocking']['tasks'] for c in t['causes']) else 1)" "$TMP/offcpu-fut.json"
}
