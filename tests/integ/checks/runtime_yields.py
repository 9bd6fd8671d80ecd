"""runtime_yields.py JSON NAME_PART N ORDER: the N tasks whose name holds
NAME_PART, taken in ORDER ("seq": first sight, i.e. their spawn-time schedule,
as async-task has no task id; "id": Tokio's id), are polled (k % 5) + 1 times,
woken k % 5 times, and completed; nothing was lost."""
import collections, json, sys
r = json.load(open(sys.argv[1]))
part, n, order = sys.argv[2], int(sys.argv[3]), sys.argv[4]
tasks = sorted((t for t in r["tasks"] if t["kind"] == "task" and t["name"] and part in t["name"]),
               key=lambda t: t[order])
errors = []
if len(tasks) != n:
    errors.append(f"expected {n} tasks named *{part}*, found {len(tasks)}")
for k, t in enumerate(tasks):
    want = k % 5 + 1
    if t["polls"] != want or t["wakes"] != want - 1 or t["state"] != "completed":
        errors.append(f"task seq {t['seq']} id {t['id']} (#{k}): {t['polls']} polls, "
                      f"{t['wakes']} wakes, {t['state']}; expected {want}, {want - 1}, completed")
total = sum(t["polls"] for t in tasks)
if total != sum(k % 5 + 1 for k in range(n)):
    errors.append(f"total polls {total}")
by_polls = collections.Counter(t["polls"] for t in tasks)
if n % 5 == 0 and by_polls != collections.Counter({p: n // 5 for p in range(1, 6)}):
    errors.append(f"tasks by poll count {sorted(by_polls.items())}")
if r["lost_events"]:
    errors.append(f"{r['lost_events']} events lost")
for e in errors[:20]:
    print("    " + e, file=sys.stderr)
sys.exit(1 if errors else 0)
