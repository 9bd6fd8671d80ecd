"""deployed_dump.py JSON SRC: `asyncscope dump --format json` of
tests/apps-deployed's `deployed parked` (SRC: its source): exactly the
three tasks it parks, each idle and parked at the lines SRC marks
`// dump: NAME`: outer's chain outer -> middle -> inner (awaiting a pending
future), receiver on its mpsc receive, sleeper on its hour's sleep; the
task list complete."""
import json, sys

r = json.load(open(sys.argv[1]))
marks = {}
for no, l in enumerate(open(sys.argv[2]), 1):
    if "// dump: " in l:
        marks[l.rsplit("// dump: ", 1)[1].strip()] = no
want = {
    "deployed::outer": ["outer", "middle", "inner"],
    "deployed::receiver": ["receiver"],
    "deployed::sleeper": ["sleeper"],
}
fails = []
tasks = {t["name"]: t for t in r["tasks"]}
if sorted(tasks) != sorted(want) or len(r["tasks"]) != 3:
    fails.append("tasks %s, expected %s" % (sorted(str(t["name"]) for t in r["tasks"]), sorted(want)))
for name, chain in want.items():
    t = tasks.get(name)
    if not t:
        continue
    if t["state"] != "idle":
        fails.append("%s is %s, expected idle" % (name, t["state"]))
    got = [(f["future"], f["line"]) for f in t["frames"]
           if (f.get("file") or "").endswith("src/bin/deployed.rs")]
    exp = [("deployed::" + k, marks[k]) for k in chain]
    if got != exp:
        fails.append("%s frames %s, expected %s" % (name, got, exp))
if tasks.get("deployed::outer") and "Pending" not in (tasks["deployed::outer"]["leaf"] or ""):
    fails.append("outer awaits %r" % tasks["deployed::outer"]["leaf"])
if r["list_complete"] is not True:
    fails.append("list not complete: %s" % r.get("list_note"))
for f in fails:
    print("    " + f, file=sys.stderr)
sys.exit(1 if fails else 0)
