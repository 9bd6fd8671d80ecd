"""dump_join_sets_check.py JSON SRC N M: `asyncscope dump --format json` of
tests/apps/src/bin/join_sets.rs run with N and M: the task join_sets::parent
at its line `dump: parent` holds (frame 0) a JoinSet of exactly N tasks, each
a task of the dump named join_sets::child, idle at `dump: child`, whose parent
is that task; join_sets::holder at `dump: holder` holds a JoinSet of M such
tasks and one done task that is in no task list (its output not joined); no
other task has a parent, each JoinSet complete."""
import json, sys

r = json.load(open(sys.argv[1]))
src, n, m = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
marks = {}
for i, l in enumerate(open(src), 1):
    if "// dump: " in l:
        marks[l.rstrip().rsplit("// dump: ", 1)[1]] = i
by = {t["task"]: t for t in r["tasks"]}
fails = []


def check_parent(name, mark, live, done):
    ps = [t for t in r["tasks"] if t["name"] == name]
    if len(ps) != 1:
        fails.append("%d tasks named %s" % (len(ps), name))
        return set()
    p = ps[0]
    if not p["frames"] or p["frames"][0]["line"] != marks[mark]:
        fails.append("%s not at its line %d: %s" % (name, marks[mark], p["frames"][:1]))
    if len(p["join_sets"]) != 1:
        fails.append("%s holds %d JoinSets: %s" % (name, len(p["join_sets"]), p["join_sets"]))
        return set()
    js = p["join_sets"][0]
    if js["frame"] != 0 or not js["complete"]:
        fails.append("%s JoinSet: frame %s complete %s" % (name, js["frame"], js["complete"]))
    listed = [c for c in js["tasks"] if c["listed"]]
    gone = [c for c in js["tasks"] if not c["listed"]]
    if len(listed) != live or len(gone) != done or not all(c["done"] for c in gone) \
            or any(c["done"] for c in listed) or not all(isinstance(c["id"], int) for c in js["tasks"]):
        fails.append("%s JoinSet tasks: %s (expected %d live, %d done)" % (name, js["tasks"], live, done))
    kids = set()
    for c in listed:
        t = by.get(c["task"])
        if (not t or t["name"] != "join_sets::child" or t["state"] != "idle" or t["parent"] != p["task"]
                or not t["frames"] or t["frames"][0]["line"] != marks["child"]):
            fails.append("%s child %s: %s" % (name, c["task"], t and (t["name"], t["state"], t["parent"])))
        kids.add(c["task"])
    return kids


kids = check_parent("join_sets::parent", "parent", n, 0) | check_parent("join_sets::holder", "holder", m, 1)
for t in r["tasks"]:
    if t["parent"] is not None and t["task"] not in kids:
        fails.append("task %s has parent %s" % (t["task"], t["parent"]))
if len(r["tasks"]) != 2 + n + m:
    fails.append("%d tasks, expected %d" % (len(r["tasks"]), 2 + n + m))
if fails:
    print("\n".join(fails))
    sys.exit(1)
