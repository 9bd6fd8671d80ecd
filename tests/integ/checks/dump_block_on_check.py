"""dump_block_on_check.py JSON SRC multi|current: `asyncscope dump --format
json` of tests/apps block_on_ways: exactly three threads in a block_on,
each with its future's chain, file:line from the `// dump: TAG` markers of
its source (the file as the build's unit names it, ending in
src/bin/block_on_ways.rs), innermost last, and its leaf: main's async body
(main thread, `block_on_ways multi|current`), side-rt's current-thread
Runtime::block_on, handle-bo's Handle::block_on of main's runtime, and
recv-bo's Handle::block_on of a oneshot receiver (no state machine: DWARF
has no location of it, no frame scan can tell it: listed as "location
optimized out", with its name, never dropped). How each
was located is asserted too: by DWARF (a current-thread runtime's
CoreGuard::block_on closure describes its future), or, where DWARF says
nothing at the pc (CachedParkThread::block_on: a multi-thread runtime and
Handle::block_on), "location optimized out" said and the future found by a
scan of the frame. The spawned task is listed as a task, not as a block_on."""
import json, re, sys
r = json.load(open(sys.argv[1]))
flavor = sys.argv[3]
lines = {}
for n, l in enumerate(open(sys.argv[2]), 1):
    m = re.search(r"// dump: (\w+)$", l.rstrip())
    if m:
        lines[m.group(1)] = n
SRC = "src/bin/block_on_ways.rs"
fails = []
def expect(cond, what):
    if not cond:
        fails.append(what)
def chain(b):
    return [(f["future"], SRC if (f["file"] or "").endswith(SRC) else f["file"], f["line"],
             f["state"]) for f in b["frames"]]
by_comm = {b["comm"]: b for b in r["block_on"]}
expect(len(r["block_on"]) == 4, "four block_on threads: %s" % [b["comm"] for b in r["block_on"]])
expect(sorted(by_comm) == ["block_on_ways", "handle-bo", "recv-bo", "side-rt"], "threads: %s" % sorted(by_comm))
SCAN = "location optimized out at the pc: the future found by a scan of its frame"
PARK = "tokio::runtime::park::CachedParkThread::block_on"
CORE = "tokio::runtime::scheduler::current_thread::CoreGuard::block_on::{{closure}}"
RX = "tokio::sync::oneshot::Receiver<u32>"
want = {
    "block_on_ways": ("block_on_ways::main::{async_block#3}",
                      [("block_on_ways::main::{async_block#3}", "main"),
                       ("block_on_ways::main_outer", "main_outer"),
                       ("block_on_ways::main_inner", "main_inner")],
                      ("frame_scan", PARK) if flavor == "multi" else ("dwarf", CORE)),
    "side-rt": ("block_on_ways::main::{closure#0}::{async_block#0}",
                [("block_on_ways::main::{closure#0}::{async_block#0}", "side_outer"),
                 ("block_on_ways::side_inner", "side_inner")], ("dwarf", CORE)),
    "handle-bo": ("block_on_ways::main::{closure#1}::{async_block#0}",
                  [("block_on_ways::main::{closure#1}::{async_block#0}", "handle")],
                  ("frame_scan", PARK)),
}
for comm, (name, frames, (located, function)) in want.items():
    b = by_comm.get(comm)
    if b is None:
        continue
    expect(b["name"] == name, "%s name: %s" % (comm, b["name"]))
    expect([c[:3] for c in chain(b)] == [(f, SRC, lines[tag]) for f, tag in frames],
           "%s chain: %s" % (comm, chain(b)))
    expect(all(s.startswith("Suspend") for _, _, _, s in chain(b)), "%s suspended: %s" % (comm, chain(b)))
    expect(b["leaf"] == RX, "%s leaf: %s" % (comm, b["leaf"]))
    expect(b["location"] == located and b["function"] == function,
           "%s located %s in %s" % (comm, b["location"], b["function"]))
    expect(b["note"] == (SCAN if located == "frame_scan" else None), "%s note: %s" % (comm, b["note"]))
    expect(re.match(r"^0x[0-9a-f]+$", b["address"] or ""), "%s address: %s" % (comm, b["address"]))
    expect(isinstance(b["thread"], int) and b["thread"] > 0, "%s thread id" % comm)
# the receiver itself: listed, its location said to be optimized out
b = by_comm.get("recv-bo")
if b is not None:
    expect(b["name"] == RX and b["function"] == PARK, "recv-bo: %s in %s" % (b["name"], b["function"]))
    expect(b["location"] is None and b["address"] is None and b["frames"] == [] and
           b["note"] == "location optimized out", "recv-bo located: %s %s %s" % (b["location"], b["address"], b["note"]))
# the main future awaits through the timeout, the others directly
mb = by_comm.get("block_on_ways")
if mb and mb["frames"]:
    expect(mb["frames"][0]["via"] == "tokio::time::timeout::Timeout", "main via: %s" % mb["frames"][0]["via"])
# the spawned task: a task at its line, never a block_on
ts = [t for t in r["tasks"] if t["name"] == "block_on_ways::spawned"]
expect(len(ts) == 1 and [(f["line"]) for f in ts[0]["frames"]] == [lines["spawned"]],
       "spawned task: %s" % ts)
expect(len(r["tasks"]) == 1, "one task: %s" % [t["name"] for t in r["tasks"]])
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
