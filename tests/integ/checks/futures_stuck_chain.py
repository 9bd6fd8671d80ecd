"""futures_stuck_chain.py REPORT.JSON RECORD.ERR: the stuck task's await chain
ends at the stuck .await, on Gate"""
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
