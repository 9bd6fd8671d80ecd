# `asyncscope dump`: the async stacks of tests/apps parked (tasks parked at
# the lines marked `// dump: TAG` in its source), read from a live process
# that must keep running, plus the error cases. Sourced by run.sh.
PARKED_SRC=tests/apps/src/bin/parked.rs

# start_parked OUT [quiet]: starts parked with stdout to OUT, waits for
# "ready", sets PARKED_PID
start_parked() {
	$APPS/parked ${2:-} >"$1" 2>&1 &
	PARKED_PID=$!
	for _ in $(seq 100); do grep -q '^ready$' "$1" 2>/dev/null && return 0; sleep 0.1; done
	return 1
}

stop_parked() {
	kill "$PARKED_PID" 2>/dev/null
	wait "$PARKED_PID" 2>/dev/null
}

heartbeats() { grep -c '^heartbeat' "$1"; }

# not_stopped PID: alive and not in a stopped or traced state
not_stopped() {
	local state
	state=$(awk '/^State:/ { print $2 }' /proc/"$1"/status 2>/dev/null)
	[ -n "$state" ] && [ "$state" != T ] && [ "$state" != t ]
}

# still_running OUT: the process is alive, not stopped, and prints heartbeats
still_running() {
	local before after
	before=$(heartbeats "$1")
	sleep 0.5
	after=$(heartbeats "$1")
	not_stopped "$PARKED_PID" && [ "$after" -ge $((before + 3)) ]
}

# dump_check JSON [quiet]: every parked task's chain, file:line from the
# markers, innermost last
dump_check() {
	python3 - "$1" "$PARKED_SRC" "${2:-}" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
quiet = sys.argv[3] == "quiet"
lines = {}
for n, l in enumerate(open(sys.argv[2]), 1):
    m = re.search(r"// dump: (\w+)$", l.rstrip())
    if m:
        lines[m.group(1)] = n
src = "src/bin/parked.rs"
by_name = {t["name"]: t for t in r["tasks"]}
fails = []
def expect(cond, what):
    if not cond:
        fails.append(what)
def chain(t):
    return [(f["future"], f["file"], f["line"]) for f in t["frames"]]
def task(name):
    t = by_name.get(name)
    expect(t is not None, "task %s listed" % name)
    return t or {"frames": [], "leaf": None, "state": None, "note": "missing"}

t = task("parked::deep_outer")
expect(chain(t) == [("parked::deep_outer", src, lines["deep_outer"]),
                    ("parked::deep_middle", src, lines["deep_middle"]),
                    ("parked::deep_inner", src, lines["deep_inner"])], "deep chain: %s" % chain(t))
expect(t["leaf"] == "core::future::pending::Pending<()>", "deep leaf: %s" % t["leaf"])
expect(t["state"] == "idle" and t["note"] is None, "deep idle: %s %s" % (t["state"], t["note"]))

for name, tag in (("parked::consume", "consume"),
                  ("parked::main::{async_block#0}::{async_block#0}", "block_consumer")):
    t = task(name)
    c = chain(t)
    expect(len(c) == 2 and c[0] == (name, src, tag in lines and lines[tag]),
           "%s outer frame: %s" % (name, c))
    expect(len(c) == 2 and "recv" in c[1][0] and c[1][1].endswith("sync/mpsc/bounded.rs") and c[1][2] > 0,
           "%s awaits mpsc recv: %s" % (name, c))
    expect((t["leaf"] or "").startswith("tokio::future::poll_fn::PollFn<"), "%s leaf: %s" % (name, t["leaf"]))
    expect(t["state"] == "idle", "%s idle: %s" % (name, t["state"]))

t = task("parked::nap")
expect(chain(t) == [("parked::nap", src, lines["nap"])], "nap chain: %s" % chain(t))
expect(t["leaf"] == "tokio::time::sleep::Sleep", "nap leaf: %s" % t["leaf"])

if not quiet:
    # caught between ticks (a stack), or at the instant it ran (said, no stack)
    t = task("parked::main::{async_block#0}::{async_block#1}")
    if t["note"] is None:
        expect(chain(t) == [("parked::main::{async_block#0}::{async_block#1}", src, lines["heartbeat"])],
               "heartbeat chain: %s" % chain(t))
        expect(t["leaf"] == "tokio::time::sleep::Sleep", "heartbeat leaf: %s" % t["leaf"])
    else:
        expect(t["note"] in ("running, not sampled", "changed while reading") and not t["frames"],
               "heartbeat note: %s" % t["note"])
    # nearly always running: never a made-up stack
    t = task("parked::busy")
    if t["note"] is None:
        expect(chain(t) == [("parked::busy", src, lines["busy"])], "busy chain: %s" % chain(t))
    else:
        expect(t["note"] in ("running, not sampled", "changed while reading") and not t["frames"]
               and t["state"] in ("running", "runnable", "idle"), "busy: %s %s" % (t["state"], t["note"]))

expect(len(r["tasks"]) == (4 if quiet else 6), "task count: %s" % sorted(by_name))
expect(r["list_complete"], "task list walked to its ends")
expect(all(isinstance(t["id"], int) and t["id"] > 0 for t in r["tasks"]), "tokio ids")
expect(all(t["task"] == "#%d" % t["id"] for t in r["tasks"]), "task identity #ID: %s" % [t["task"] for t in r["tasks"]])
expect(all(re.match(r"^0x[0-9a-f]+$", t["header"]) for t in r["tasks"]), "headers")
ids = [t["id"] for t in r["tasks"]]
expect(ids == sorted(ids), "sorted by id")
for f in fails:
    print("    " + f, file=sys.stderr)
sys.exit(1 if fails else 0)
PY
}

test_dump_parked() {
	local out=$TMP/parked.out
	check "parked starts" start_parked "$out" || { stop_parked; return; }
	check "dump exits 0" $AS dump -p "$PARKED_PID" >"$TMP/dump.txt" 2>"$TMP/dump.err"
	check "dump --format json exits 0" $AS dump -p "$PARKED_PID" --format json >"$TMP/dump.json" \
		2>>"$TMP/dump.err"
	check "nothing on stderr" test ! -s "$TMP/dump.err" || cat "$TMP/dump.err"
	check "json stacks" dump_check "$TMP/dump.json"
	local l1 l2 l3
	l1=$(grep -n '// dump: deep_outer$' $PARKED_SRC | cut -d: -f1)
	l2=$(grep -n '// dump: deep_middle$' $PARKED_SRC | cut -d: -f1)
	l3=$(grep -n '// dump: deep_inner$' $PARKED_SRC | cut -d: -f1)
	check "text: deep task, innermost last" python3 - "$TMP/dump.txt" "$l1" "$l2" "$l3" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
want = ("    parked::deep_outer at src/bin/parked.rs:%s\n"
        "    parked::deep_middle at src/bin/parked.rs:%s\n"
        "    parked::deep_inner at src/bin/parked.rs:%s  (awaiting core::future::pending::Pending<()>)\n"
        % tuple(sys.argv[2:5]))
ok = re.search(r"^task #[1-9][0-9]* parked::deep_outer  \[idle\]\n" + re.escape(want), text, re.M) is not None
if not ok:
    print(text, file=sys.stderr)
sys.exit(0 if ok else 1)
PY
	check "text: nap sleeps" grep -q "parked::nap at src/bin/parked.rs:[0-9]*  (awaiting tokio::time::sleep::Sleep)" "$TMP/dump.txt"
	check "text: header line" grep -q "^asyncscope dump of pid $PARKED_PID .*: 6 tasks$" "$TMP/dump.txt"
	check "text: every task named #ID" sh -c "[ \$(grep -c '^task #[1-9][0-9]* ' $TMP/dump.txt) -eq 6 ] && ! grep -q 'tokio id' $TMP/dump.txt"
	check "program keeps running" still_running "$out"
	# a longer look finds the same tasks
	check "dump --duration 1s" sh -c "$AS dump -p $PARKED_PID --duration 1s --format json > $TMP/dump1.json"
	check "json stacks after --duration 1s" dump_check "$TMP/dump1.json"
	check "program keeps running after three dumps" still_running "$out"
	stop_parked
}

# nothing is polled while tracing: a task is found in memory (heap scan for
# a task vtable), then Tokio's list gives the rest
test_dump_all_idle() {
	local out=$TMP/quiet.out
	check "parked quiet starts" start_parked "$out" quiet || { stop_parked; return; }
	check "dump exits 0" $AS dump -p "$PARKED_PID" --format json >"$TMP/quiet.json"
	check "json stacks of the idle tasks" dump_check "$TMP/quiet.json" quiet
	check "program still alive, not stopped" not_stopped "$PARKED_PID"
	stop_parked
}

test_dump_errors() {
	local dead
	sh -c 'exit 0' & dead=$!; wait $dead
	expect_error "dump: pid gone" "no process with pid" $AS dump -p $dead
	expect_error "dump: usage" "usage: asyncscope dump" $AS dump
	expect_error "dump: bad format" "unknown format" $AS dump -p 1 --format xml
	# a Tokio program without debug info
	objcopy --strip-debug $APPS/parked $TMP/parked-nodebug
	$TMP/parked-nodebug >/dev/null 2>&1 & local nd=$!
	expect_error "dump: no debug info" "rebuild with debug = true" $AS dump -p $nd
	expect_error "dump: not root" "run as root" setpriv --reuid 65534 --regid 65534 --clear-groups \
		$AS dump -p $nd
	check "the program without debug info kept running" kill -0 $nd
	kill $nd; wait $nd 2>/dev/null
	# not a Tokio program
	printf '#include <unistd.h>\nint main(void){sleep(30);return 0;}\n' > $TMP/plainwait.c
	cc -g -o $TMP/plainwait $TMP/plainwait.c
	$TMP/plainwait & local pw=$!
	expect_error "dump: no tokio" "no Tokio runtime functions" $AS dump -p $pw
	kill $pw; wait $pw 2>/dev/null
}
