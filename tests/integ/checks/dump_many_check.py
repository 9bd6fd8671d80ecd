"""dump_many_check.py JSON SRC N: `asyncscope dump --format json` of
tests/apps idle_many with N tasks: exactly N tasks, each idle_many::idle,
idle, parked at the line of SRC marked `// dump: idle` (its file as the
build's unit names it, ending in src/bin/idle_many.rs), distinct ids; the
list complete, and where the list is sharded every shard walked."""
import json, re, sys

r = json.load(open(sys.argv[1]))
n = int(sys.argv[3])
line = next(i for i, l in enumerate(open(sys.argv[2]), 1) if l.rstrip().endswith("// dump: idle"))
fails = []
tasks = r["tasks"]
if len(tasks) != n:
    fails.append("%d tasks, expected %d" % (len(tasks), n))
for t in tasks:
    f = t["frames"][0] if t["frames"] else {}
    if (t["name"] != "idle_many::idle" or t["state"] != "idle" or t["note"] is not None
            or not (f.get("file") or "").endswith("src/bin/idle_many.rs") or f.get("line") != line):
        fails.append("task %s: %s %s %s at %s:%s" % (t["task"], t["name"], t["state"], t["note"],
                                                     f.get("file"), f.get("line")))
ids = [t["id"] for t in tasks]
if len(set(ids)) != len(ids) or not all(isinstance(i, int) and i > 0 for i in ids):
    fails.append("ids: %s" % ids)
if r["list_complete"] is not True:
    fails.append("list not complete: %s" % r.get("list_note"))
if r.get("shards") is not None and r.get("shards_walked") != r.get("shards"):
    fails.append("%s of %s shards walked" % (r.get("shards_walked"), r.get("shards")))
for f in fails[:20]:
    print("    " + f, file=sys.stderr)
sys.exit(1 if fails else 0)
