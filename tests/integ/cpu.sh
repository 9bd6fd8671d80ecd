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
