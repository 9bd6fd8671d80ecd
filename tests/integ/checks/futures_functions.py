"""futures_functions.py REPORT.JSON RECORD.ERR: per-function polls exact, Ready
once per call, nothing lost"""
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
