"""chat_truth.py REPORT.json PROGRAM.err N K: the tasks of tests/apps chat (N
clients, K lines each). The program prints per peer task "truth peer=ID
relayed=K delivered=D polls=P" (polls counted by the task's own future) and
per client "truth client=ID received=R". The report must show N tasks
chat::Peer, completed, whose poll counts are the truth's (as a multiset),
each woken at least polls - 1 times, only by the I/O driver (its socket) or
by a chat::Peer task (its channel), with at least one such task wake in all;
N tasks chat::client, completed, woken only by the I/O driver or by a
chat::client (the last one at the Barrier wakes the others: at most N - 1);
nothing woken by the timer (the program has none); no event lost. Prints
one line per failed check; exits 1 if any failed."""
import json, re, sys

r = json.load(open(sys.argv[1]))
lines = [l for l in open(sys.argv[2]) if l.startswith("truth ")]
n, k = int(sys.argv[3]), int(sys.argv[4])
peers_truth = [dict(re.findall(r"(\w+)=(\d+)", l)) for l in lines if l.startswith("truth peer=")]
clients_truth = [dict(re.findall(r"(\w+)=(\d+)", l)) for l in lines if l.startswith("truth client=")]
errors = []
if len(peers_truth) != n or any(int(p["relayed"]) != k or int(p["delivered"]) != (n - 1) * k for p in peers_truth):
    errors.append(f"the program's peer truth: {peers_truth}")
if len(clients_truth) != n or any(int(c["received"]) != (n - 1) * k for c in clients_truth):
    errors.append(f"the program's client truth: {clients_truth}")

tasks = [t for t in r["tasks"] if t["kind"] == "task"]
peers = [t for t in tasks if t["name"] == "chat::Peer"]
clients = [t for t in tasks if t["name"] == "chat::client"]
want = sorted(int(p["polls"]) for p in peers_truth)
got = sorted(t["polls"] for t in peers)
if got != want:
    errors.append(f"chat::Peer polls {got}, the program counted {want}")
for kind, group in (("chat::Peer", peers), ("chat::client", clients)):
    if len(group) != n:
        errors.append(f"{len(group)} tasks {kind}, expected {n}")
    for t in group:
        if t["state"] != "completed":
            errors.append(f"{kind} #{t['seq']} ended {t['state']}")
        if t["wakes"] < t["polls"] - 1:
            errors.append(f"{kind} #{t['seq']}: {t['wakes']} wakes for {t['polls']} polls")
    into = [e for e in r["wake_edges"] if e["to_name"] == kind]
    other = [(e["from_kind"], e.get("from_name"), e["count"]) for e in into
             if not (e["from_kind"] == "io" or (e["from_kind"] == "task" and e["from_name"] == kind))]
    if other:
        errors.append(f"wakes of {kind} by neither the I/O driver nor a {kind}: {other}")
    by_task = sum(e["count"] for e in into if e["from_kind"] == "task")
    if kind == "chat::Peer" and by_task < 1:
        errors.append("no chat::Peer woken by another (its channel)")
    if kind == "chat::client" and by_task > n - 1:
        errors.append(f"{by_task} wakes of clients by clients (the Barrier): more than {n - 1}")
timer = [(e["to_name"], e["count"]) for e in r["wake_edges"] if e["from_kind"] == "timer"]
if timer:
    errors.append(f"wakes credited to the timer in a program without timers: {timer}")
if r["lost_events"] or r["missed_events"]:
    errors.append(f"lost {r['lost_events']}, missed {r['missed_events']} events")
for e in errors:
    print("    " + e, file=sys.stderr)
sys.exit(1 if errors else 0)
