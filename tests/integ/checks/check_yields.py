"""Exact poll counts for tests/apps yields: task i is polled (i % 5) + 1 times.
Tokio assigns task ids in spawn order, so the k-th spawned task of the
program (by id) must show exactly (k % 5) + 1 polls. With --no-spawn-sites
the spawn locations are not checked (a runtime that gives none). With
--lite (record --lite: no wake or spawn probe) no task has a wake or a spawn
location, and the report says wakes were not recorded. With
--unnamed (a binary without debug info: no future names) the tasks are the
ones spawned at yields.rs."""
import json, sys

r = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
lite = "--lite" in sys.argv[3:]
spawn_sites = "--no-spawn-sites" not in sys.argv[3:] and not lite
unnamed = "--unnamed" in sys.argv[3:]
def ours(t):
    if unnamed:
        return "yields.rs" in (t["spawn_location"] or "")
    return t["kind"] == "task" and t["name"] and "yields::main" in t["name"]
tasks = sorted((t for t in r["tasks"] if ours(t)), key=lambda t: t["id"])
errors = []
if len(tasks) != n:
    errors.append(f"expected {n} yields tasks, found {len(tasks)}")
for k, t in enumerate(tasks):
    want = k % 5 + 1
    if t["polls"] != want:
        errors.append(f"task id {t['id']} (#{k}) polled {t['polls']} times, expected {want}")
    if t["state"] != "completed":
        errors.append(f"task id {t['id']} ended {t['state']}, expected completed")
    if spawn_sites and (not t["spawn_location"] or "yields.rs" not in t["spawn_location"]):
        errors.append(f"task id {t['id']} spawn location {t['spawn_location']!r}")
    if lite and (t["wakes"] != 0 or t["spawn_location"]):
        errors.append(f"task id {t['id']}: {t['wakes']} wakes, spawned at {t['spawn_location']!r} with --lite")
    if not lite and t["wakes"] != want - 1:
        errors.append(f"task id {t['id']} has {t['wakes']} wakes, expected {want - 1}")
total = sum(t["polls"] for t in tasks)
want_total = sum(k % 5 + 1 for k in range(n))
if total != want_total:
    errors.append(f"total polls {total}, expected {want_total}")
if r.get("wakes_recorded") is not (not lite):
    errors.append(f"wakes_recorded {r.get('wakes_recorded')!r}, expected {not lite}")
if r["lost_events"] != 0:
    errors.append(f"{r['lost_events']} events lost")
for e in errors[:20]:
    print("    " + e, file=sys.stderr)
sys.exit(1 if errors else 0)
