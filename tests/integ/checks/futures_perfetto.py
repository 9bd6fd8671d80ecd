"""futures_perfetto.py PERFETTO.JSON REPORT.JSON: one slice per future poll,
nested in its poll slice"""
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
