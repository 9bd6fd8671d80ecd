# CPU samples per task (record --sample, asyncscope cpu) on live recordings
# of tests/apps/cpu_split (sourced by run.sh, after lib.sh).
# Truth: its task cpu_split::heavy burns 3 times the CPU of cpu_split::light
# (3 rounds of the same work for each of light's): of the samples in the
# two tasks' polls, 75% and 25%.

test_cpu_split_shares() {
	local t=$TMP/cpu.trace txt=$TMP/cpu.txt folded=$TMP/cpu.folded
	check "record --sample 999" sh -c "$AS record --sample 999 -o $t -- $APPS/cpu_split >/dev/null 2>$TMP/cpu.err"
	check "record counts the samples" grep -Eq "^asyncscope: [0-9]+ CPU samples" "$TMP/cpu.err"
	check "cpu report" sh -c "$AS cpu $t > $txt"
	check "cpu report says what was lost" grep -Eq "^lost events [0-9]+, missed events [0-9]+" "$txt"
	check "shares of heavy and light within 10% of 75% and 25%" python3 - "$txt" <<'PY'
import re, sys
n = {}
for line in open(sys.argv[1]):
    m = re.match(r"\s+(\d+)\s+[0-9.]+%\s+(cpu_split::\w+)  task ", line)
    if m:
        n[m.group(2)] = n.get(m.group(2), 0) + int(m.group(1))
h, l = n.get("cpu_split::heavy", 0), n.get("cpu_split::light", 0)
ok = h + l >= 500 and abs(h / (h + l) - 0.75) <= 0.075 and abs(l / (h + l) - 0.25) <= 0.025
print("    heavy %d, light %d samples: %.1f%% / %.1f%%" % (h, l, 100 * h / max(h + l, 1), 100 * l / max(h + l, 1)), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
	check "folded stacks" sh -c "$AS cpu --folded $t > $folded"
	check "folded: task first, then the burning function, counts add up" python3 - "$folded" "$txt" <<'PY'
import re, sys
burn = total = 0
for line in open(sys.argv[1]):
    stack, _, w = line.rstrip("\n").rpartition(" ")
    frames = stack.split(";")
    total += int(w)
    if frames[0] in ("cpu_split::heavy", "cpu_split::light") and "cpu_split::burn" in frames:
        burn += int(w)
m = re.match(r"CPU samples \(record --sample\): (\d+) samples", open(sys.argv[2]).readline())
ok = m and int(m.group(1)) == total and burn >= 0.9 * total
if not ok:
    print("    folded total %d, in burn %d" % (total, burn), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
	check "the main report still reads the trace" sh -c "$AS report $t >/dev/null"
}

# Without --sample: no samples; bad rates refused as usage errors.
test_cpu_off_by_default() {
	local t=$TMP/nocpu.trace
	check "record without --sample" sh -c "$AS record -o $t -- $APPS/cpu_split 5 >/dev/null 2>$TMP/nocpu.err"
	check "no samples line" sh -c "! grep -q 'CPU samples' $TMP/nocpu.err"
	check "cpu report says none" sh -c "$AS cpu $t | grep -q '^CPU samples (record --sample): 0 samples'"
	check "--sample 0 refused (usage)" sh -c "$AS record --sample 0 -o $t -- true 2>/dev/null; [ \$? -eq 2 ]"
	check "--sample x refused (usage)" sh -c "$AS record --sample x -o $t -- true 2>/dev/null; [ \$? -eq 2 ]"
}

# Run-queue delay per worker (record --runq / --offcpu, in asyncscope blocking).
# Truth: each of sleeper_in_poll's 10 sleeps ends with a wakeup of the
# sleeping worker, so the workers wait for a CPU at least 10 times; and
# cpu_split pinned to one CPU beside a busy loop shares it three ways, so
# its workers wait for the CPU for a good part of their work (>= 200 ms in
# all for about 0.5 s of CPU), where the same program alone waits far less.
test_runq_workers() {
	local t=$TMP/runq.trace txt=$TMP/runq.txt
	check "record --offcpu also records run-queue waits" sh -c "$AS record --offcpu -o $t -- $APPS/sleeper_in_poll >/dev/null 2>$TMP/runq.err"
	check "record counts the waits" grep -Eq "^asyncscope: [0-9]+ run-queue waits" "$TMP/runq.err"
	check "blocking report" sh -c "$AS blocking $t > $txt"
	check "run-queue section" grep -q "^Run-queue delay per worker" "$txt"
	check "the workers waited at least 10 times" python3 - "$txt" <<'PY'
import re, sys
waits = 0
for line in open(sys.argv[1]):
    m = re.match(r"  \d+ tokio-runtime-w\s+(\d+)\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+$", line)
    if m:
        waits += int(m.group(1))
if waits < 10:
    print("    worker waits: %d" % waits, file=sys.stderr)
sys.exit(0 if waits >= 10 else 1)
PY
	# starved by the OS: one CPU shared with a busy loop
	taskset -c 0 sh -c 'end=$(($(date +%s)+6)); while [ $(date +%s) -lt $end ]; do :; done' &
	local hog=$!
	check "record --runq on a contended CPU" sh -c "taskset -c 0 $AS record --runq -o $t -- $APPS/cpu_split 20 >/dev/null 2>&1"
	kill $hog 2>/dev/null
	wait $hog 2>/dev/null
	check "blocking report (contended)" sh -c "$AS blocking $t > $txt"
	check "workers waited >= 200 ms for the CPU" python3 - "$txt" <<'PY'
import re, sys
total = 0.0
for line in open(sys.argv[1]):
    m = re.match(r"  \d+ tokio-runtime-w\s+\d+\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\s+([0-9.]+)$", line)
    if m:
        total += float(m.group(1))
print("    workers' run-queue delay: %.1f ms" % total, file=sys.stderr)
sys.exit(0 if total >= 200 else 1)
PY
	check "record without --runq" sh -c "$AS record -o $t -- $APPS/cpu_split 5 >/dev/null 2>$TMP/runq.err"
	check "no run-queue line" sh -c "! grep -q 'run-queue' $TMP/runq.err"
	check "blocking says none" sh -c "$AS blocking $t | grep -q '^  none: record with --runq'"
}

# record --sample --dwarf: user stacks unwound by their call frame
# information (cpu_split is built without frame pointers: the frame-pointer
# walk gives one frame). Truth: burn is called from the heavy and light
# async fns' bodies, polled by Tokio's worker loop on a thread of its own.
test_cpu_dwarf_stacks() {
	local t=$TMP/cpudw.trace folded=$TMP/cpudw.folded
	check "record --sample 999 --dwarf" sh -c "$AS record --sample 999 --dwarf -o $t -- $APPS/cpu_split >/dev/null 2>$TMP/cpudw.err"
	check "DWARF stacks at least 8 frames deep on average, frame pointers 1" python3 - "$TMP/cpudw.err" <<'PY'
import re, sys
for line in open(sys.argv[1]):
    m = re.match(r"asyncscope: DWARF unwinding: (\d+) samples, ([0-9.]+) user frames on average \(frame pointers alone: ([0-9.]+)\)", line)
    if m:
        n, dw, fp = int(m.group(1)), float(m.group(2)), float(m.group(3))
        print("    %d samples: %.1f frames by DWARF, %.1f by frame pointers" % (n, dw, fp), file=sys.stderr)
        sys.exit(0 if n >= 500 and dw >= 8 and fp <= 2 else 1)
sys.exit(1)
PY
	check "folded stacks" sh -c "$AS cpu --folded $t > $folded"
	check "folded: worker loop, async fn body, burn; shares still 3:1" python3 - "$folded" <<'PY'
import sys
n = {"cpu_split::heavy": 0, "cpu_split::light": 0}
for line in open(sys.argv[1]):
    stack, _, w = line.rstrip("\n").rpartition(" ")
    f = stack.split(";")
    if f[0] in n and "tokio::runtime::scheduler::multi_thread::worker::run" in f and \
       f[-2:] == [f[0] + "::{{closure}}", "cpu_split::burn"]:
        n[f[0]] += int(w)
h, l = n["cpu_split::heavy"], n["cpu_split::light"]
ok = h + l >= 500 and abs(h / (h + l) - 0.75) <= 0.075
if not ok:
    print("    whole stacks: heavy %d, light %d" % (h, l), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
	check "--dwarf without --sample refused (usage)" sh -c "$AS record --dwarf -o $t -- true 2>/dev/null; [ \$? -eq 2 ]"
}
