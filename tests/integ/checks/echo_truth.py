"""echo_truth.py REPORT.json PROGRAM.err N M [--current]: the connection tasks
of tests/apps echo (N connections, M lines each). The program prints, per
connection, "truth conn=ID lines=M polls=P" (its polls counted by the task's
own future). The report must show N tasks echo::Conn, completed, whose poll
counts are the truth's (as a multiset: the tool does not know the program's
connection ids), each woken exactly polls - 1 times, every wake by the I/O
driver. The clients (echo::client) too: completed, woken polls - 1 times,
only by the I/O driver. Nothing is woken by the timer (the program has none).
With --current (the current-thread runtime, in lock step) P is M + 2 or
M + 3. Prints one line per failed check; exits 1 if any failed."""
import json, re, sys

r = json.load(open(sys.argv[1]))
truth = [dict(re.findall(r"(\w+)=(\d+)", l)) for l in open(sys.argv[2]) if l.startswith("truth conn=")]
n, m = int(sys.argv[3]), int(sys.argv[4])
current = "--current" in sys.argv[5:]
errors = []

tasks = [t for t in r["tasks"] if t["kind"] == "task"]
conns = [t for t in tasks if t["name"] == "echo::Conn"]
clients = [t for t in tasks if t["name"] == "echo::client"]
if len(truth) != n or any(int(w["lines"]) != m for w in truth):
    errors.append(f"the program's truth: {truth} (expected {n} connections of {m} lines)")
want = sorted(int(w["polls"]) for w in truth)
got = sorted(t["polls"] for t in conns)
if got != want:
    errors.append(f"echo::Conn polls {got}, the program counted {want}")
if current and any(not m + 2 <= p <= m + 3 for p in want):
    errors.append(f"current-thread lock step: polls {want}, expected {m + 2} or {m + 3} each")
for kind, group in (("echo::Conn", conns), ("echo::client", clients)):
    if len(group) != n:
        errors.append(f"{len(group)} tasks {kind}, expected {n}")
    for t in group:
        if t["state"] != "completed":
            errors.append(f"{kind} #{t['seq']} ended {t['state']}")
        if t["wakes"] != t["polls"] - 1:
            errors.append(f"{kind} #{t['seq']}: {t['wakes']} wakes for {t['polls']} polls, expected {t['polls'] - 1}")
    into = [e for e in r["wake_edges"] if e["to_name"] == kind]
    other = [(e["from_kind"], e.get("from_name"), e["count"]) for e in into if e["from_kind"] != "io"]
    if other:
        errors.append(f"wakes of {kind} not by the I/O driver: {other}")
    io = sum(e["count"] for e in into if e["from_kind"] == "io")
    if io != sum(t["polls"] - 1 for t in group):
        errors.append(f"{io} I/O-driver wakes of {kind}, expected {sum(t['polls'] - 1 for t in group)}")
timer = [(e["to_name"], e["count"]) for e in r["wake_edges"] if e["from_kind"] == "timer"]
if timer:
    errors.append(f"wakes credited to the timer in a program without timers: {timer}")
if r["lost_events"] or r["missed_events"]:
    errors.append(f"lost {r['lost_events']}, missed {r['missed_events']} events")
for e in errors:
    print("    " + e, file=sys.stderr)
sys.exit(1 if errors else 0)
