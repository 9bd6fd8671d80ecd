"""check_deployed.py JSON N [--names | --unnamed] [--no-spawn-sites]: the
report of tests/apps-deployed's `deployed yields N` in any build profile.
Truth: task i (spawn order, Tokio's ids in order) is polled exactly
(i % 5) + 1 times, woken i % 5 times, and ends completed; even i run the
async fn `yielder`, odd i an async block of main. With --names every task
is named by its future: deployed::yielder for even i, a name under
deployed::main for odd i (the profile keeps symbols); with --unnamed the
tasks have no name (null), and are told apart by their spawn site. The
spawn site is deployed.rs unless --no-spawn-sites."""
import json, sys

r = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
opts = sys.argv[3:]
names = "--names" in opts
unnamed = "--unnamed" in opts
sites = "--no-spawn-sites" not in opts

def ours(t):
    if t["kind"] != "task":
        return False
    if t["name"] and ("deployed::yielder" in t["name"] or "deployed::main" in t["name"]):
        return True
    return "deployed.rs" in (t["spawn_location"] or "") and not (t["name"] or "").startswith("deployed::main ")

# the tasks the program spawned: the main future (block_on) is no task;
# a task of the program is one named after its future, or spawned in it
tasks = sorted((t for t in r["tasks"] if ours(t)), key=lambda t: t["id"])
errors = []
if len(tasks) != n:
    errors.append(f"expected {n} deployed tasks, found {len(tasks)}: "
                  + ", ".join(sorted({str(t['name']) for t in r['tasks']}))[:400])
for k, t in enumerate(tasks):
    want = k % 5 + 1
    if t["polls"] != want:
        errors.append(f"task id {t['id']} (#{k}) polled {t['polls']} times, expected {want}")
    if t["state"] != "completed":
        errors.append(f"task id {t['id']} ended {t['state']}, expected completed")
    if t["wakes"] != want - 1:
        errors.append(f"task id {t['id']} has {t['wakes']} wakes, expected {want - 1}")
    if sites and "deployed.rs" not in (t["spawn_location"] or ""):
        errors.append(f"task id {t['id']} spawn location {t['spawn_location']!r}")
    name = t["name"] or ""
    if names and k % 2 == 0 and "deployed::yielder" not in name:
        errors.append(f"task id {t['id']} (#{k}, yielder) named {t['name']!r}")
    if names and k % 2 == 1 and ("deployed::main" not in name or "yielder" in name):
        errors.append(f"task id {t['id']} (#{k}, main's async block) named {t['name']!r}")
    if unnamed and t["name"] is not None:
        errors.append(f"task id {t['id']} named {t['name']!r}, expected none")
total = sum(t["polls"] for t in tasks)
want_total = sum(k % 5 + 1 for k in range(n))
if total != want_total:
    errors.append(f"total polls {total}, expected {want_total}")
if r["lost_events"] != 0:
    errors.append(f"{r['lost_events']} events lost")
for e in errors[:20]:
    print("    " + e, file=sys.stderr)
sys.exit(1 if errors else 0)
