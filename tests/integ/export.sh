# Integration tests of `asyncscope export` (sourced by tests/integ/run.sh after
# lib.sh): record live programs, export them as Perfetto JSON and folded
# stacks, and check the files against `report --format json` of the same
# trace. Sourced on its own (`. tests/integ/export.sh; export_check ...`), the
# checkers work on any trace without root.

# export_check_perfetto OUT.json REPORT.json: the Perfetto document is valid
# JSON with the expected structure; one poll slice per poll of a user task
# (per task, checked against the report); every flow has one start and one
# end, the end at the begin of a poll slice of its thread, the start inside a
# slice of the waking thread; slices on a thread track nest properly.
export_check_perfetto() {
	python3 - "$1" "$2" <<'PY'
import bisect, collections, json, sys
doc = json.load(open(sys.argv[1]))
rep = json.load(open(sys.argv[2]))
errors = []
def fail(msg):
    errors.append(msg)
assert isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list), "no traceEvents"
assert doc.get("displayTimeUnit") == "ns", "displayTimeUnit"
meta = doc["metadata"]
evs = doc["traceEvents"]
pid = rep["pid"]
for e in evs:
    if e.get("ph") not in ("X", "M", "C", "s", "f", "i"):
        fail("unknown phase %r" % e)
    if e["ph"] != "M" and not isinstance(e.get("ts"), (int, float)):
        fail("no ts: %r" % e)
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in evs
         if e["ph"] == "M" and e["name"] == "thread_name"}
procs = {e["pid"]: e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "process_name"}
if str(pid) not in procs.get(pid, "") or rep["target"] not in procs.get(pid, ""):
    fail("process name %r" % procs.get(pid))
if procs.get(meta["tasks_pid"]) != "tasks":
    fail("no tasks process")
polls = [e for e in evs if e["ph"] == "X" and e.get("cat") == "poll"]
user = [t for t in rep["tasks"] if t["kind"] == "task"]
if len(polls) != sum(t["polls"] for t in user):
    fail("poll slices %d != user polls %d" % (len(polls), sum(t["polls"] for t in user)))
if meta["poll_slices"] != len(polls):
    fail("metadata poll_slices")
per_task = collections.Counter(e["args"]["task"] for e in polls)
for t in user:
    if per_task[t["seq"]] != t["polls"]:
        fail("task %d: %d slices, %d polls" % (t["seq"], per_task[t["seq"]], t["polls"]))
    if not names.get((meta["tasks_pid"], meta["tasks_pid"] + t["seq"]), "").startswith("task %d " % t["seq"]):
        fail("task %d track name" % t["seq"])
for e in polls:
    if e["args"]["outcome"] not in ("Ready", "Pending", "cut short", "running at end"):
        fail("outcome %r" % e["args"])
    if e["pid"] != pid:
        fail("poll slice not in the target process")
# slices per thread track, nesting
tracks = collections.defaultdict(list)
for e in evs:
    if e["ph"] == "X":
        tracks[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"], e))
for key, sl in tracks.items():
    sl.sort(key=lambda s: (s[0], -s[1]))
    tracks[key] = sl
    stack = []
    for b, en, e in sl:
        while stack and stack[-1] <= b + 1e-9:
            stack.pop()
        if stack and en > stack[-1] + 1e-9:
            fail("slices overlap on %r at %s" % (key, b)); break
        stack.append(en)
starts = {(e["pid"], e["tid"]): set() for e in evs}
begins = collections.defaultdict(set)
for e in polls:
    begins[(e["pid"], e["tid"])].add(e["ts"])
flows = collections.defaultdict(dict)
for e in evs:
    if e["ph"] in ("s", "f"):
        if e["ph"] in flows[e["id"]]:
            fail("flow %d has two %s" % (e["id"], e["ph"]))
        flows[e["id"]][e["ph"]] = e
for fid, fl in flows.items():
    if set(fl) != {"s", "f"}:
        fail("flow %d unpaired" % fid); continue
    s, f = fl["s"], fl["f"]
    if f.get("bp") != "e" or f["ts"] not in begins[(f["pid"], f["tid"])]:
        fail("flow %d end not at a poll begin" % fid)
    sl = tracks[(s["pid"], s["tid"])]
    # slices starting at or before ts: the enclosing one is among the last few
    i = bisect.bisect_right(sl, (s["ts"], float("inf")))
    if not any(b <= s["ts"] <= en for b, en, _ in sl[max(0, i - 8):i]):
        fail("flow %d start outside any slice" % fid)
if meta["flows"] != len(flows):
    fail("metadata flows")
if meta["lost_events"] != rep["lost_events"]:
    fail("lost events")
if rep["lost_events"] and not [e for e in evs if e["ph"] == "i" and e["name"].startswith("lost ")]:
    fail("no lost-events instant")
if meta["truncated"] != rep.get("truncated", False):
    fail("truncated flag")
for e in errors[:10]:
    print("    " + e, file=sys.stderr)
if len(errors) > 10:
    print("    ... %d errors" % len(errors), file=sys.stderr)
sys.exit(1 if errors else 0)
PY
}

# export_check_folded OUT.folded REPORT.json: every line is `frames weight`
# (frames joined by ';', no empty frame, integer weight); the weights sum to
# the busy time of the user tasks; with a 3rd argument "per-task", each line
# ends in task#SEQ and each task's lines sum to its busy time.
export_check_folded() {
	python3 - "$1" "$2" "${3:-}" <<'PY'
import collections, json, re, sys
rep = json.load(open(sys.argv[2]))
per_task = sys.argv[3] == "per-task"
user = {t["seq"]: t for t in rep["tasks"] if t["kind"] == "task"}
total, by_task, ok = 0, collections.Counter(), True
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("#"):
        continue
    m = re.fullmatch(r"(.+) (\d+)", line)
    frames = m.group(1).split(";") if m else []
    if not m or len(frames) != (3 if per_task else 2) or not all(frames):
        print("    bad line: %r" % line, file=sys.stderr); ok = False; continue
    if not re.fullmatch(r".+:\d+", frames[0]):
        print("    bad thread frame: %r" % line, file=sys.stderr); ok = False
    total += int(m.group(2))
    if per_task:
        by_task[int(frames[2][len("task#"):])] += int(m.group(2))
busy = sum(t["busy_ns"] for t in user.values())
if total != busy:
    print("    folded sum %d != user busy %d" % (total, busy), file=sys.stderr); ok = False
if per_task:
    for seq, t in user.items():
        if by_task[seq] != t["busy_ns"]:
            print("    task %d: %d != %d" % (seq, by_task[seq], t["busy_ns"]), file=sys.stderr); ok = False
sys.exit(0 if ok else 1)
PY
}

# export_check_all TRACE [--partial]: report + both exports + the checks.
export_check_all() {
	local t=$1 b; shift
	b=$TMP/$(basename "$t" .trace)
	check "report json of $t" sh -c "$AS report --format json $* $t > $b.report.json 2>/dev/null"
	check "export perfetto of $t" sh -c "$AS export --format perfetto $* -o $b.json $t 2>$b.perfetto.err"
	check "perfetto summary line" grep -q "wrote [0-9]* poll slices, [0-9]* flows to $b.json" "$b.perfetto.err"
	check "export says what was lost, or that it is truncated" grep -Eq "^(lost events [0-9]+, missed events [0-9]+|trace truncated after [0-9]+ events)" "$b.perfetto.err"
	check "perfetto structure of $t" export_check_perfetto "$b.json" "$b.report.json"
	check "export folded of $t" sh -c "$AS export --format folded $* -o $b.folded $t 2>$b.folded.err"
	check "folded summary line" grep -q "wrote [0-9]* lines" "$b.folded.err"
	check "folded sums of $t" export_check_folded "$b.folded" "$b.report.json"
	check "export folded --per-task of $t" sh -c \
		"$AS export --format folded --per-task $* -o $b.pt.folded $t 2>/dev/null"
	check "folded per-task sums of $t" export_check_folded "$b.pt.folded" "$b.report.json" per-task
	if command -v flamegraph.pl >/dev/null; then
		check "flamegraph.pl accepts it" sh -c "flamegraph.pl $b.folded > $b.svg"
	fi
	if command -v inferno-flamegraph >/dev/null; then
		check "inferno accepts it" sh -c "inferno-flamegraph $b.folded > $b.inferno.svg"
	fi
}

# export_check_cat_lines FILE: what CAT's parser and uftrace rely on: each
# `reading N.dat` (CAT's regex) is a section line of a new numeric thread;
# every [entry] / [exit ] line has uftrace's exact shape, its section's
# thread, time order, and the depths of a proper call log; CAT's field
# regexes find its timestamp and symbol; no header line matches its patterns.
export_check_cat_lines() {
	python3 - "$1" <<'PY'
import re, sys
errors, threads, cur, last, stack = [], [], None, 0, []
rec = re.compile(r"^(\d+)\.(\d{9})  +(\d+): \[(entry|exit )\] (.+)\(([0-9a-f]+)\) depth: (\d+)$")
for no, line in enumerate(open(sys.argv[1]), 1):
    line = line.rstrip("\n")
    m = re.search("reading (.*).dat", line)
    if m:
        if not re.fullmatch(r"reading \d+\.dat", line) or m.group(1) in threads:
            errors.append("line %d: bad section %r" % (no, line))
        threads.append(m.group(1)); cur, last, stack = m.group(1), 0, []
        continue
    if cur is None:
        if re.search(r"entry|exit \]|depth: ", line):
            errors.append("line %d: header line matches CAT's patterns" % no)
        continue
    if not re.search(r"\[(entry|exit )\]", line):
        continue
    m = rec.match(line)
    if not m:
        errors.append("line %d: not uftrace's record shape: %r" % (no, line)); continue
    ts = int(m.group(1)) * 10**9 + int(m.group(2))
    name, addr, depth = m.group(5), m.group(6), int(m.group(7))
    if m.group(3) != cur or ts < last:
        errors.append("line %d: thread or time order" % no)
    last = ts
    if float(re.findall("(.*)  ", line)[0]) <= 0 or re.findall(r"\] (.*)\(", line)[0] != name:
        errors.append("line %d: CAT's field regexes fail" % no)
    if m.group(4) == "entry":
        if depth != len(stack):
            errors.append("line %d: entry depth %d, %d calls open" % (no, depth, len(stack)))
        stack.append((name, addr))
    else:
        at = max([i for i, f in enumerate(stack) if f == (name, addr)], default=None)
        if (at if at is not None else len(stack)) != depth:
            errors.append("line %d: exit depth %d" % (no, depth))
        if at is not None:
            del stack[at:]
if not threads:
    errors.append("no section")
for e in errors[:10]:
    print("    " + e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY
}

# export_check_cat TRACE [--partial]: export --format cat, its lines as CAT
# reads them, and the same text and JSON reports (and a valid Perfetto
# export) from the CAT file as from the trace (docs/cat-format.md).
export_check_cat() {
	local t=$1 b; shift
	b=$TMP/$(basename "$t" .trace)
	check "export cat of $t" sh -c "$AS export $t --format cat $* -o $b.cat.txt 2>$b.cat.err"
	check "cat summary line" grep -q "wrote [0-9]* lines, [0-9]* events of [0-9]* threads to $b.cat.txt" \
		"$b.cat.err"
	check "cat lines of $t as CAT reads them" export_check_cat_lines "$b.cat.txt"
	check "cat to stdout without -o" sh -c "$AS export --format cat $* $t 2>/dev/null | cmp -s - $b.cat.txt"
	check "report text of $t" sh -c "$AS report $* $t > $b.rep1.txt 2>/dev/null"
	check "report text of its CAT file" sh -c "$AS report $* $b.cat.txt > $b.rep2.txt 2>/dev/null"
	check "same text report from CAT ($t)" cmp -s "$b.rep1.txt" "$b.rep2.txt"
	check "report json of $t" sh -c "$AS report --format json $* $t > $b.rep1.json 2>/dev/null"
	check "report json of its CAT file" sh -c "$AS report --format json $* $b.cat.txt > $b.rep2.json 2>/dev/null"
	check "same json report from CAT ($t)" cmp -s "$b.rep1.json" "$b.rep2.json"
	check "perfetto export of the CAT file" sh -c \
		"$AS export --format perfetto $* -o $b.cat.json $b.cat.txt 2>/dev/null"
	check "perfetto structure from CAT" export_check_perfetto "$b.cat.json" "$b.rep2.json"
}

# A CAT log recorded elsewhere (no asyncscope header): the poll by name, its
# future by CAT's patterns; and a malformed one.
export_check_cat_foreign() {
	local f=$TMP/foreign-cat.txt
	printf '%s\n' "uftrace file header: magic         = 4674726163652100" "" "reading 5260.dat" \
		"408.532240000   5260: [entry] _<async_std..task..builder..SupportTaskLocals<F> as core..future..future..Future>::poll::_{{closure}}(636a05000010) depth: 3" \
		"408.532240100   5260: [entry] _<core..future..from_generator..GenFuture<T> as core..future..future..Future>::poll(636a05000020) depth: 4" \
		"408.532240200   5260: [entry] block_example::async_main::_{{closure}}(636a05000030) depth: 5" \
		"408.533240300   5260: [exit ] block_example::async_main::_{{closure}}(636a05000030) depth: 5" \
		"408.533240400   5260: [exit ] _<core..future..from_generator..GenFuture<T> as core..future..future..Future>::poll(636a05000020) depth: 4" \
		"408.533240500   5260: [exit ] _<async_std..task..builder..SupportTaskLocals<F> as core..future..future..Future>::poll::_{{closure}}(636a05000010) depth: 3" \
		> "$f"
	check "report json of a CAT log" sh -c "$AS report --format json $f > $f.json 2>/dev/null"
	check "its poll is a task named by its future" json_check "$f.json" \
		'[t for t in tasks if t["name"] == "block_example::async_main" and t["polls"] == 1 and t["busy_ns"] == 1000500]'
	printf 'reading 1.dat\n1.000000000      1: [entry] f(zz) depth: 0\n' > "$f.bad"
	expect_error "a malformed CAT file" "line 2: malformed uftrace record: bad address" \
		$AS report "$f.bad"
}

test_export_fixtures() {
	local f
	for f in tests/data/*.trace; do
		export_check_all "$f"
		export_check_cat "$f"
	done
	export_check_cat_foreign
}

# A live recording with future frames (record --futures) through CAT and back.
test_export_cat_futures() {
	local t=$TMP/exp-cat-fut.trace
	check "record --futures exits 0" sh -c "$AS record --futures -o $t -- $APPS/futures_nested 2 >/dev/null 2>&1"
	export_check_cat "$t"
	check "future frames are CAT [entry] lines" \
		grep -q '\[entry\] futures_nested::leaf::_{{closure}}(' "$TMP/exp-cat-fut.cat.txt"
	check "future polls keep their outcome" grep -q '\[retval\] length = 4' "$TMP/exp-cat-fut.cat.txt"
	check "same async flame graph from CAT" sh -c "$AS export --format folded-futures -o $TMP/cf1.folded $t \
		2>/dev/null && $AS export --format folded-futures -o $TMP/cf2.folded $TMP/exp-cat-fut.cat.txt \
		2>/dev/null && cmp -s $TMP/cf1.folded $TMP/cf2.folded"
}

test_export_live_multi() {
	local t=$TMP/exp-multi.trace
	check "record exits 0" $AS record -o "$t" -- $APPS/chain 200 >/dev/null 2>&1
	export_check_all "$t"
	check "chain flows: one per wake or spawn that led to a poll" \
		python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d['metadata']['flows'] < 600)" \
		"$TMP/exp-multi.json"
	export_check_cat "$t"
	test_export_cat_futures   # run from here: run.sh's test list is not this file's
}

test_export_live_current() {
	local t=$TMP/exp-current.trace
	check "record exits 0" $AS record -o "$t" -- $APPS/yields current 100 >/dev/null 2>&1
	export_check_all "$t"
}

test_export_bad_input() {
	local t=$TMP/exp-cut-src.trace size
	$AS record -o "$t" -- $APPS/yields multi 50 >/dev/null 2>&1
	size=$(stat -c %s "$t")
	head -c $((size - 7)) "$t" > $TMP/exp-cut.trace
	expect_error "export of a truncated trace" "rerun the export with --partial" \
		$AS export --format perfetto -o $TMP/cut.json $TMP/exp-cut.trace
	check "no file left after an error" test ! -e $TMP/cut.json
	export_check_all $TMP/exp-cut.trace --partial
	check "perfetto marks the truncation" grep -q '"truncated":true' $TMP/exp-cut.json
	check "folded marks the truncation" grep -q '^# asyncscope: truncated' $TMP/exp-cut.folded
	cp "$t" $TMP/exp-flip.trace
	printf '\xff\xff\xff\xff' | dd of=$TMP/exp-flip.trace bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
	expect_error "export of a corrupt trace" "corrupt" \
		$AS export --format folded -o $TMP/flip.folded $TMP/exp-flip.trace
	expect_error "export with an unknown format" "unknown format" \
		$AS export --format svg -o $TMP/x.svg "$t"
	export_check_cat $TMP/exp-cut.trace --partial
	expect_error "a CAT file of a truncated trace" "truncated" $AS report $TMP/exp-cut.cat.txt
}
