"""dump_check.py JSON PARKED_SRC [quiet] [--shards N]: `asyncscope dump
--format json` of tests/apps parked: every parked task's chain, file:line
from the `// dump: TAG` markers of its source (the file as the build's unit
names it, ending in src/bin/parked.rs), innermost last; with quiet (nothing
polled while tracing) the four idle tasks only, else the six. With --shards
N (a Tokio whose OwnedTasks is sharded: tokio >= 1.35, tokio#6001; 8 shards
with parked's 2 workers): every shard walked ("shards" and "shards_walked"
N, "list_note" null) and the tasks spread over several shards (id % N), so
that a walk of one shard could not pass."""
import json, re, sys
r = json.load(open(sys.argv[1]))
args = sys.argv[3:]
quiet = "quiet" in args
shards = int(args[args.index("--shards") + 1]) if "--shards" in args else 0
lines = {}
for n, l in enumerate(open(sys.argv[2]), 1):
    m = re.search(r"// dump: (\w+)$", l.rstrip())
    if m:
        lines[m.group(1)] = n
SRC = "src/bin/parked.rs"
by_name = {t["name"]: t for t in r["tasks"]}
fails = []
def expect(cond, what):
    if not cond:
        fails.append(what)
def chain(t):
    # the file as the unit names it ("src/bin/parked.rs", "../apps/src/bin/parked.rs")
    return [(f["future"], SRC if (f["file"] or "").endswith(SRC) else f["file"], f["line"])
            for f in t["frames"]]
src = SRC
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
    expect(re.match(r"^(tokio|core)::future::poll_fn::PollFn<", t["leaf"] or ""), "%s leaf: %s" % (name, t["leaf"]))
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

# the wakers held (state word's references less the list's and the
# JoinHandle's): pending() keeps none, so nothing can wake deep_outer again;
# an mpsc receive keeps one in its channel, a sleep one in its timer entry
expect(task("parked::deep_outer")["wakers"] == 0, "deep_outer wakers: %s" % task("parked::deep_outer")["wakers"])
for name in ("parked::consume", "parked::main::{async_block#0}::{async_block#0}", "parked::nap"):
    expect(task(name)["wakers"] == 1, "%s wakers: %s" % (name, task(name)["wakers"]))
expect(r["tasks_without_waker"] == 1, "tasks_without_waker: %s" % r["tasks_without_waker"])
expect(len(r["tasks"]) == (4 if quiet else 6), "task count: %s" % sorted(by_name))
expect(r["list_complete"], "task list walked to its ends")
expect(all(isinstance(t["id"], int) and t["id"] > 0 for t in r["tasks"]), "tokio ids")
expect(all(t["task"] == "#%d" % t["id"] for t in r["tasks"]), "task identity #ID: %s" % [t["task"] for t in r["tasks"]])
expect(all(re.match(r"^0x[0-9a-f]+$", t["header"]) for t in r["tasks"]), "headers")
ids = [t["id"] for t in r["tasks"]]
expect(ids == sorted(ids), "sorted by id")
if shards:
    expect(r.get("shards") == shards and r.get("shards_walked") == shards,
           "every shard walked: %s of %s" % (r.get("shards_walked"), r.get("shards")))
    expect("list_note" in r and r["list_note"] is None, "no list note: %s" % r.get("list_note"))
    expect(len({i % shards for i in ids if isinstance(i, int)}) >= 3, "tasks in several shards: %s" % ids)
for f in fails:
    print("    " + f, file=sys.stderr)
sys.exit(1 if fails else 0)
