# Future-level tracing (record --futures): async flame graphs, await chains,
# Perfetto future slices, on live recordings of tests/apps futures_nested and
# futures_stuck (sourced by run.sh, after lib.sh).
# Truth: futures_nested prints on stderr, per future, its folded stack, its
# polls and the self time it spun (measured_self_ms: wall time inside its
# polls minus the futures it awaits); futures_stuck prints the file:line of
# the .await its stuck task is parked at, and of each .await of the chain.

test_futures_nested_flame() {
	local t=$TMP/fnest.trace err=$TMP/fnest.err folded=$TMP/fnest.folded json=$TMP/fnest.json
	check "record --futures" sh -c "$AS record --futures -o $t -- $APPS/futures_nested 6 >/dev/null 2>$err"
	check "record counts the future polls" grep -Eq "^asyncscope: [0-9]+ future polls" "$err"
	check "the program printed its truth" grep -q "^truth future=leaf " "$err"
	check "export folded-futures" sh -c "$AS export --format folded-futures -o $folded $t 2>$TMP/fnest.exp"
	check "export says nothing was lost" sh -c "! grep -q 'did not match' $TMP/fnest.exp"
	check "flame graph: exactly the known nesting, self time within 10% of the spin" \
		python3 - "$folded" "$err" <<'PY'
import re, sys
def short(f):
    f = re.sub(r" \(.*\)$", "", f)
    m = re.match(r"<futures_nested::(\w+) as .*Future>::poll$", f)
    return m.group(1) if m else f.replace("futures_nested::", "")
truth = {}
for line in open(sys.argv[2]):
    m = re.match(r"truth future=(\w+) stack=(\S+) polls=(\d+) self_ms=\d+ inclusive_ms=\d+ measured_self_ms=([0-9.]+)", line)
    if m:
        truth[m.group(2)] = float(m.group(4))
got, root_only, other = {}, 0.0, []
for line in open(sys.argv[1]):
    if line.startswith("#"):
        continue
    stack, _, w = line.rstrip("\n").rpartition(" ")
    frames = stack.split(";")
    if frames[0].startswith("(no task)"):
        continue  # block_on's own futures, outside the task
    if frames[0] != "futures_nested::handler":
        other.append(line.strip())
        continue
    key = ";".join(short(f) for f in frames[1:])
    if not key:
        root_only += int(w) / 1e6
        continue
    got[key] = got.get(key, 0) + int(w) / 1e6
ok = len(truth) == 5 and set(got) == set(truth) and not other
for k, v in sorted(truth.items()):
    g = got.get(k, 0.0)
    good = abs(g - v) <= 0.10 * v
    ok = ok and good
    print("    %-26s self %8.1f ms, spun %8.1f ms%s" % (k, g, v, "" if good else "   <-- off by more than 10%"), file=sys.stderr)
print("    handler task outside probed futures: %.1f ms" % root_only, file=sys.stderr)
if other:
    print("    unexpected roots:", other[:5], file=sys.stderr)
if set(got) != set(truth):
    print("    stacks found:", sorted(got), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
	check "report json" sh -c "$AS report --format json $t > $json"
	check "per-function polls exact, Ready once per call, nothing lost" python3 - "$json" "$err" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
fu = r.get("futures")
truth = {}
for line in open(sys.argv[2]):
    m = re.match(r"truth future=(\w+) stack=\S+ polls=(\d+) ", line)
    if m:
        truth[m.group(1)] = int(m.group(2))
rounds = int(re.search(r"rounds=(\d+)", open(sys.argv[2]).read()).group(1))
ok = fu is not None
polls, ready = {}, {}
for f in (fu or {}).get("functions", []):
    m = re.match(r"<futures_nested::(\w+) as .*Future>::poll$", f["name"])
    name = m.group(1) if m else f["name"].replace("futures_nested::", "")
    polls[name] = f["polls"]
    ready[name] = f["ready"]
    ok = ok and f["file"] is not None and f["file"].endswith("futures_nested.rs") and f["line"] > 0
ok = ok and polls == truth
ok = ok and ready.get("handler") == 1 and all(ready.get(n) == rounds for n in ("mid", "leaf", "child2", "Checksum"))
lost = {k: fu[k] for k in ("exits_lost", "entries_lost", "unmatched_exits", "bad", "too_deep")} if fu else {}
ok = ok and not any(lost.values()) and r["lost_events"] == 0
if not ok:
    print("    polls", polls, "expected", truth, "ready", ready, "lost", lost, file=sys.stderr)
sys.exit(0 if ok else 1)
PY
	check "text report lists the future functions" sh -c "$AS report $t | grep -Eq '^  futures_nested::leaf +futures_nested.rs:[0-9]+ +[0-9]+'"
	check "--lines puts file:line on every frame" sh -c "$AS export --format folded-futures --lines -o - $t 2>/dev/null | grep -Eq '^futures_nested::handler;futures_nested::handler \(futures_nested.rs:[0-9]+\);futures_nested::mid \(futures_nested.rs:[0-9]+\);futures_nested::leaf \(futures_nested.rs:[0-9]+\) [0-9]+$'"
	check "export perfetto" sh -c "$AS export --format perfetto -o $TMP/fnest.json.trace $t 2>/dev/null"
	check "perfetto: one slice per future poll, nested in its poll slice" python3 - "$TMP/fnest.json.trace" "$json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
polls = sum(f["polls"] for f in json.load(open(sys.argv[2]))["futures"]["functions"])
by_tid = {}
fut = 0
for e in doc["traceEvents"]:
    if e.get("ph") == "X" and e.get("cat") in ("poll", "future") and e["pid"] == doc["metadata"]["pid"]:
        by_tid.setdefault(e["tid"], []).append((e["ts"], -e["dur"], e["ts"] + e["dur"], e["cat"]))
        fut += e["cat"] == "future"
ok = fut == polls == doc["metadata"].get("future_slices")
for tid, sl in by_tid.items():
    sl.sort()
    stack = []
    for ts, _, end, cat in sl:
        while stack and stack[-1][0] <= ts + 1e-6:
            stack.pop()
        if cat == "future" and not stack:
            ok = False  # a future slice outside any poll slice
        if stack and end > stack[-1][0] + 1e-6:
            ok = False  # overlaps its parent
        stack.append((end, cat))
if not ok:
    print("    future slices %d, polls %d, metadata %s" % (fut, polls, doc["metadata"].get("future_slices")), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}

test_futures_stuck_chain() {
	local t=$TMP/fstuck.trace err=$TMP/fstuck.err json=$TMP/fstuck.json
	check "record --futures" sh -c "$AS record --futures -o $t -- $APPS/futures_stuck 1 >/dev/null 2>$err"
	check "the program printed where it is stuck" grep -q "^futures_stuck: stuck at " "$err"
	check "report json" sh -c "$AS report --format json $t > $json"
	check "the stuck task's await chain ends at the stuck .await, on Gate" python3 - "$json" "$err" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
m = re.search(r"stuck at (\S+):(\d+) \(chain: stuck \S+:(\d+) -> wait_config \S+:(\d+) -> wait_signal \S+:(\d+) -> Gate\)", open(sys.argv[2]).read())
file, line = m.group(1), int(m.group(2))
lines = [int(m.group(i)) for i in (3, 4, 5)]
parked = [p for p in r["futures"]["parked"] if p["name"].endswith("::stuck")]
ok = len(parked) == 1
if ok:
    ch = parked[0]["chain"]
    names = [c["name"].rsplit("::", 1)[-1] for c in ch]
    ok = names == ["stuck", "wait_config", "wait_signal"] and [c["line"] for c in ch] == lines
    ok = ok and all(c["at_await"] and c["file"] and c["file"].endswith(file.split("/")[-1]) for c in ch)
    ok = ok and ch[-1]["file"].endswith(file) and ch[-1]["line"] == line
    ok = ok and "Gate" in (ch[-1]["awaiting"] or "")
    ok = ok and parked[0]["waiting_ns"] >= 0.9e9
if not ok:
    print("    expected %s:%d via %s; parked: %s" % (file, line, lines, parked), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
	local at; at=$(sed -n 's/^futures_stuck: stuck at \([^ ]*\) .*/\1/p' "$err")
	check "text report shows the chain with file:line" sh -c "$AS report $t | grep -Eq '^ +futures_stuck::wait_signal +at [^ ]*$at  awaiting futures_stuck::Gate$'"
	check "export folded-wait" sh -c "$AS export --format folded-wait -o $TMP/fstuck.wait $t 2>/dev/null"
	check "wait flame graph: the stuck chain weighs the time it was parked" python3 - "$TMP/fstuck.wait" "$err" <<'PY'
import re, sys
line = int(re.search(r"stuck at \S+:(\d+)", open(sys.argv[2]).read()).group(1))
chain = ["futures_stuck::stuck", "futures_stuck::wait_config", "futures_stuck::wait_signal"]
w = 0
for l in open(sys.argv[1]):
    stack, _, n = l.rstrip("\n").rpartition(" ")
    f = stack.split(";")
    leaf_ok = f[-1] == "futures_stuck::wait_signal (futures_stuck.rs:%d)" % line
    if f[0] == "futures_stuck::stuck" and leaf_ok and [x.split(" ")[0] for x in f[1:]] == chain:
        w += int(n)
if w < 0.9e9:
    print("    stuck chain weight %d ns:" % w, open(sys.argv[1]).read(), file=sys.stderr)
sys.exit(0 if w >= 0.9e9 else 1)
PY
}

# Usage errors, and traces without futures.
test_futures_cli() {
	local t=$TMP/nofut.trace
	check "--lines needs a futures format (usage)" sh -c "$AS export --format perfetto --lines -o /dev/null x 2>/dev/null; [ \$? -eq 2 ]"
	check "--per-task is not for folded-wait (usage)" sh -c "$AS export --format folded-wait --per-task -o /dev/null x 2>/dev/null; [ \$? -eq 2 ]"
	check "record without --futures" sh -c "$AS record -o $t -- $APPS/yields multi 20 >/dev/null 2>&1"
	check "folded-futures of a trace without futures says so" sh -c "$AS export --format folded-futures -o $TMP/nofut.folded $t 2>&1 | grep -q 'no future events'"
	check "report has no future sections without futures" sh -c "! $AS report $t | grep -Eq '^(FUTURES|PARKED AT)'"
	check "json has no futures key without futures" sh -c "! $AS report --format json $t | grep -q '\"futures\"'"
}
