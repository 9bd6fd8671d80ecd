"""macro_awaits_check.py JSON SRC: `asyncscope dump --format json` of
tests/apps macro_awaits: each task parked in an await macro shows the
macro's invocation line in its own source (the `// dump: TAG` markers, not
the macro crate's file), the macro's name, and each branch with its state
and its own chain down to the awaited leaf; a Pin<Box<dyn Future>> is
followed through its vtable to the future inside, two async fns down."""
import json, re, sys
r = json.load(open(sys.argv[1]))
lines = {}
for n, l in enumerate(open(sys.argv[2]), 1):
    m = re.search(r"// dump: (\w+)$", l.rstrip())
    if m:
        lines[m.group(1)] = n
SRC = "src/bin/macro_awaits.rs"
by_name = {t["name"]: t for t in r["tasks"]}
fails = []
def expect(cond, what):
    if not cond:
        fails.append(what)
def own(f):
    return (f["future"], (f["file"] or "").endswith(SRC), f["line"])
def task(name):
    t = by_name.get("macro_awaits::" + name)
    expect(t is not None, "task %s listed: %s" % (name, sorted(by_name)))
    return t or {"frames": [], "leaf": None, "macro": None, "branches": []}
def leaf_line(chain):
    return own(chain["frames"][-1]) if chain["frames"] else None
HOUR = ("macro_awaits::hour", True, lines["hour"])
NEVER = ("macro_awaits::never", True, lines["never"])

cases = (("in_select", "select", "tokio::select!", None),
         ("in_tokio_join", "tokio_join", "tokio::join!", [("pending", HOUR), ("pending", NEVER)]),
         ("in_join_done", "join_done", "tokio::join!", [("done", None), ("pending", NEVER)]),
         ("in_try_join", "try_join", "tokio::try_join!", [("pending", HOUR), ("pending", NEVER)]),
         ("in_futures_join", "futures_join", "futures::join!", [("pending", HOUR), ("pending", NEVER)]))
for name, tag, macro, branches in cases:
    t = task(name)
    expect([own(f) for f in t["frames"]] == [("macro_awaits::" + name, True, lines[tag])],
           "%s: one frame at its macro's line %d: %s" % (name, lines[tag], t["frames"]))
    expect(t.get("macro") == macro, "%s: macro %s, not %s" % (name, macro, t.get("macro")))
    got = t.get("branches") or []
    if branches is None:
        # select!: the channel's recv (in tokio), and hour
        expect(len(got) == 2 and [b["state"] for b in got] == ["pending", "pending"],
               "%s: two pending branches: %s" % (name, got))
        expect(len(got) == 2 and "recv" in (got[0]["frames"] or [{"future": ""}])[0]["future"]
               and leaf_line(got[1]) == HOUR, "%s: branches recv and hour: %s" % (name, got))
        continue
    expect([b["state"] for b in got] == [s for s, _ in branches],
           "%s: branch states %s: %s" % (name, [s for s, _ in branches], [b["state"] for b in got]))
    for b, (state, want) in zip(got, branches):
        if want:
            expect(leaf_line(b) == want, "%s: a branch ends at %s: %s" % (name, want, b["frames"]))
        else:
            expect(b["frames"] == [], "%s: a done branch has no frames: %s" % (name, b["frames"]))
t = task("in_boxed")
expect([own(f) for f in t["frames"]] == [("macro_awaits::in_boxed", True, lines["boxed"]),
                                         ("macro_awaits::boxed_inner", True, lines["boxed_inner"]),
                                         NEVER], "boxed chain through the vtable: %s" % t["frames"])
expect(t["leaf"] == "core::future::pending::Pending<()>", "boxed leaf: %s" % t["leaf"])
# combinators around one future are walked through, and named
t = task("in_combinators")
expect([own(f) for f in t["frames"]] == [("macro_awaits::in_combinators", True, lines["combinators"]),
                                         NEVER], "through the combinators: %s" % t["frames"])
via = (t["frames"] or [{"via": None}])[0].get("via") or ""
expect(via.startswith("tokio::time::timeout::Timeout > ") and "::Fuse" in via and "::Map" in via,
       "the combinators named: %r" % via)
# a FuturesUnordered: every future in it (the newest first), each a branch
t = task("in_unordered")
expect([own(f) for f in t["frames"]] == [("macro_awaits::in_unordered", True, lines["unordered"])],
       "unordered frame: %s" % t["frames"])
expect(t.get("macro") == "futures::stream::FuturesUnordered", "unordered named: %s" % t.get("macro"))
got = t.get("branches") or []
expect(sorted(leaf_line(b) for b in got) == sorted([HOUR, NEVER, NEVER]) and
       all(b["state"] == "pending" for b in got), "unordered: hour and two nevers: %s" % got)
for f in fails:
    print(f)
sys.exit(1 if fails else 0)
