"""task::Builder names of tests/apps-tokio153-unstable's named program: the
k-th task of named::main (by Tokio task id) carries the Builder name
job-NNN (k in three digits), except every fourth from the third on
(k % 4 == 2), spawned unnamed; the last task (a Sleep) is named sleeper.
    builder_names.py REPORT.json N
A task's Builder name is looked for in its "task_name" field, else in
"name" itself (tokio-console shows the Builder name as the task's name);
an unnamed task must not carry a job-/sleeper name in either."""
import json, sys

r = json.load(open(sys.argv[1]))
n = int(sys.argv[2])


def builder_name(t):
    if t.get("task_name"):
        return t["task_name"]
    if t.get("name") and (t["name"].startswith("job-") or t["name"] == "sleeper"):
        return t["name"]
    return None


users = sorted((t for t in r["tasks"] if t["kind"] == "task"), key=lambda t: t["id"])
errors = []
if len(users) != n + 1:
    errors.append(f"expected {n + 1} user tasks ({n} jobs and the sleeper), found {len(users)}")
for k, t in enumerate(users[:n]):
    want = None if k % 4 == 2 else f"job-{k:03d}"
    got = builder_name(t)
    if got != want:
        errors.append(f"task id {t['id']} (#{k}, {t['name']!r}): Builder name {got!r}, expected {want!r}")
if len(users) == n + 1 and builder_name(users[n]) != "sleeper":
    errors.append(f"last task id {users[n]['id']} ({users[n]['name']!r}): Builder name "
                  f"{builder_name(users[n])!r}, expected 'sleeper'")
for e in errors[:20]:
    print("    " + e, file=sys.stderr)
sys.exit(1 if errors else 0)
