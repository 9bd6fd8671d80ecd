"""dump_shards_check.py JSON PARKED_SRC [quiet]: `asyncscope dump --format
json` of parked built on a Tokio whose OwnedTasks is sharded (tokio >= 1.35,
tokio#6001; 8 shards with parked's 2 workers): every parked task found with
its chain (file:line from the `// dump: TAG` markers of its source,
innermost last; the file as the build's unit names it, ending in
src/bin/parked.rs), exactly the four idle tasks with quiet (nothing polled
while tracing), else the six; every shard walked ("shards" 8,
"shards_walked" 8, "list_note" null, "list_complete"), and the tasks spread
over several shards (id % 8), so that a walk of one shard could not pass."""
import json, re, sys
r = json.load(open(sys.argv[1]))
quiet = len(sys.argv) > 3 and sys.argv[3] == "quiet"
lines = {}
for n, l in enumerate(open(sys.argv[2]), 1):
    m = re.search(r"// dump: (\w+)$", l.rstrip())
    if m:
        lines[m.group(1)] = n
by_name = {t["name"]: t for t in r["tasks"]}
fails = []
def expect(cond, what):
    if not cond:
        fails.append(what)
def frames(t):
    return [(f["future"], f["file"] or "", f["line"]) for f in t["frames"]]
def at(frame, name, tag):
    return (frame[0] == name and frame[1].endswith("src/bin/parked.rs")
            and frame[2] == lines.get(tag))
def task(name):
    t = by_name.get(name)
    expect(t is not None, "task %s listed" % name)
    return t or {"frames": [], "leaf": None, "state": None, "note": "missing"}

t = task("parked::deep_outer")
c = frames(t)
expect(len(c) == 3 and at(c[0], "parked::deep_outer", "deep_outer")
       and at(c[1], "parked::deep_middle", "deep_middle")
       and at(c[2], "parked::deep_inner", "deep_inner"), "deep chain: %s" % c)
expect(t["leaf"] == "core::future::pending::Pending<()>", "deep leaf: %s" % t["leaf"])
expect(t["state"] == "idle" and t["note"] is None, "deep idle: %s %s" % (t["state"], t["note"]))

for name, tag in (("parked::consume", "consume"),
                  ("parked::main::{async_block#0}::{async_block#0}", "block_consumer")):
    t = task(name)
    c = frames(t)
    expect(len(c) == 2 and at(c[0], name, tag), "%s outer frame: %s" % (name, c))
    expect(len(c) == 2 and "recv" in c[1][0] and c[1][1].endswith("sync/mpsc/bounded.rs") and c[1][2] > 0,
           "%s awaits mpsc recv: %s" % (name, c))
    expect(re.match(r"^(tokio|core)::future::poll_fn::PollFn<", t["leaf"] or ""), "%s leaf: %s" % (name, t["leaf"]))
    expect(t["state"] == "idle", "%s idle: %s" % (name, t["state"]))

t = task("parked::nap")
c = frames(t)
expect(len(c) == 1 and at(c[0], "parked::nap", "nap"), "nap chain: %s" % c)
expect(t["leaf"] == "tokio::time::sleep::Sleep", "nap leaf: %s" % t["leaf"])

if not quiet:
    # polled while tracing: caught between polls (a stack) or running (said, no stack)
    for name, tag in (("parked::main::{async_block#0}::{async_block#1}", "heartbeat"),
                      ("parked::busy", "busy")):
        t = task(name)
        if t["note"] is None:
            c = frames(t)
            expect(len(c) == 1 and at(c[0], name, tag), "%s chain: %s" % (name, c))
        else:
            expect(t["note"] in ("running, not sampled", "changed while reading") and not t["frames"],
                   "%s note: %s" % (name, t["note"]))

expect(len(r["tasks"]) == (4 if quiet else 6), "task count: %s" % sorted(by_name))
expect(r["list_complete"] is True, "task list walked to its ends: %s" % r.get("list_note"))
expect(r.get("shards") == 8 and r.get("shards_walked") == 8,
       "every shard walked: %s of %s" % (r.get("shards_walked"), r.get("shards")))
expect("list_note" in r and r["list_note"] is None, "no list note: %s" % r.get("list_note"))
ids = [t["id"] for t in r["tasks"]]
expect(all(isinstance(i, int) and i > 0 for i in ids), "tokio ids: %s" % ids)
expect(len({i % 8 for i in ids if isinstance(i, int)}) >= 3, "tasks in several shards: %s" % ids)
expect(all(t["task"] == "#%d" % t["id"] for t in r["tasks"]), "task identity #ID")
expect(ids == sorted(ids), "sorted by id")
for f in fails:
    print("    " + f, file=sys.stderr)
sys.exit(1 if fails else 0)
