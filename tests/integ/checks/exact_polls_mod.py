"""Exact poll counts for a known-truth program whose k-th task (in spawn
order, i.e. by Tokio task id) yields k % MOD times: polled exactly
(k % MOD) + 1 times, woken k % MOD times, completed; no event lost.
    exact_polls_mod.py REPORT.json PATTERN N MOD
PATTERN is a substring of the tasks' names (the future's type, e.g.
local::main): exactly N such tasks must be in the report. For the programs
of tests/apps-tokio153-unstable (local: MOD 5, named: MOD 4)."""
import json, sys

r = json.load(open(sys.argv[1]))
pattern, n, mod = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
tasks = sorted((t for t in r["tasks"] if t["kind"] == "task" and t["name"]
                and pattern in t["name"]), key=lambda t: t["id"])
errors = []
if len(tasks) != n:
    errors.append(f"expected {n} tasks named *{pattern}*, found {len(tasks)}")
for k, t in enumerate(tasks):
    want = k % mod + 1
    if t["polls"] != want:
        errors.append(f"task id {t['id']} (#{k}) polled {t['polls']} times, expected {want}")
    if t["wakes"] != want - 1:
        errors.append(f"task id {t['id']} (#{k}) has {t['wakes']} wakes, expected {want - 1}")
    if t["state"] != "completed":
        errors.append(f"task id {t['id']} (#{k}) ended {t['state']}, expected completed")
if len({t["id"] for t in tasks}) != len(tasks) or any(t["id"] is None for t in tasks):
    errors.append("task ids missing or not distinct")
total = sum(t["polls"] for t in tasks)
want_total = sum(k % mod + 1 for k in range(n))
if total != want_total:
    errors.append(f"total polls {total}, expected {want_total}")
if r["lost_events"] != 0:
    errors.append(f"{r['lost_events']} events lost")
for e in errors[:20]:
    print("    " + e, file=sys.stderr)
sys.exit(1 if errors else 0)
