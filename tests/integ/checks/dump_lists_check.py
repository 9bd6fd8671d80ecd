"""dump_lists_check.py JSON SRC [--via context | --vias V,V] [--lists K]
[--runtimes R,R] MARK=FUNC=N ...:
`asyncscope dump --format json` of a program with tasks parked for good at
the lines of SRC marked `// dump: MARK`: exactly N tasks of each MARK, each
FUNC (e.g. two_runtimes::park_a), idle, its first frame at its marked line,
no other task, distinct ids; exactly K task lists (when given), each
complete, every shard walked, its task count the tasks found in it, and
found the way --via names (context: through a thread's thread-local
CONTEXT, with a thread id; no recording made; --vias: the lists' ways in,
sorted, e.g. context,heap), of the runtimes named (their
kinds, sorted: current_thread,multi_thread), each its own id; the whole
list_complete."""
import json, sys

args = sys.argv[1:]
r = json.load(open(args.pop(0)))
src = args.pop(0)
via, vias, lists, runtimes, want = None, None, None, None, []
while args:
    a = args.pop(0)
    if a == "--via":
        via = args.pop(0)
    elif a == "--vias":
        vias = args.pop(0).split(",")
    elif a == "--runtimes":
        runtimes = args.pop(0).split(",")
    elif a == "--lists":
        lists = int(args.pop(0))
    else:
        mark, func, n = a.split("=")
        want.append((mark, func, int(n)))
marks = {}
for i, l in enumerate(open(src), 1):
    if "// dump: " in l:
        marks[l.rstrip().rsplit("// dump: ", 1)[1]] = i
fails = []
tasks = r["tasks"]
seen = {m: 0 for m, _, _ in want}
for t in tasks:
    f = t["frames"][0] if t["frames"] else {}
    hit = None
    for mark, func, _ in want:
        if (t["name"] == func and t["state"] == "idle" and t["note"] is None
                and (f.get("file") or "").endswith(src.split("/")[-1]) and f.get("line") == marks[mark]):
            hit = mark
    if hit:
        seen[hit] += 1
    else:
        fails.append("task %s: %s %s %s at %s:%s" % (t["task"], t["name"], t["state"], t["note"],
                                                     f.get("file"), f.get("line")))
for mark, func, n in want:
    if seen[mark] != n:
        fails.append("%d tasks at 'dump: %s' (%s), expected %d" % (seen[mark], mark, func, n))
ids = [t["id"] for t in tasks]
if len(set(ids)) != len(ids) or not all(isinstance(i, int) and i > 0 for i in ids):
    fails.append("ids: %s" % ids)
if r["list_complete"] is not True:
    fails.append("list not complete: %s" % r.get("list_note"))
tl = r.get("task_lists", [])
if lists is not None and len(tl) != lists:
    fails.append("%d task lists, expected %d" % (len(tl), lists))
if runtimes is not None and sorted(l["runtime"] or "?" for l in tl) != runtimes:
    fails.append("runtimes %s, expected %s" % (sorted(l["runtime"] or "?" for l in tl), runtimes))
if len(set(l["id"] for l in tl)) != len(tl):
    fails.append("list ids %s" % [l["id"] for l in tl])
if sum(l["tasks"] for l in tl) != len(tasks):
    fails.append("the lists hold %d tasks, %d listed" % (sum(l["tasks"] for l in tl), len(tasks)))
for l in tl:
    if not l["complete"] or l["shards"] < 1 or l["shards_walked"] != l["shards"] or l["note"]:
        fails.append("list %s not complete: %s of %s shards, %s" % (l["address"], l["shards_walked"],
                                                                   l["shards"], l["note"]))
    if via and l["via"] != via:
        fails.append("list %s found through %s, expected %s" % (l["address"], l["found_through"], via))
    if via == "context" and not (isinstance(l["thread"], int) and l["thread"] > 0 and l["threads"] >= 1):
        fails.append("list %s: no thread named (%s, %s)" % (l["address"], l["thread"], l["threads"]))
if vias is not None:
    if sorted(l["via"] for l in tl) != vias:
        fails.append("ways in %s, expected %s" % (sorted(l["via"] for l in tl), vias))
    for l in tl:
        if l["via"] == "context" and not (isinstance(l["thread"], int) and l["thread"] > 0):
            fails.append("list %s: no thread named" % l["address"])
if (via == "context" or (vias and "context" in vias)) and (r.get("traced") or r.get("context_note")):
    fails.append("traced %s, context_note %s" % (r.get("traced"), r.get("context_note")))
for f in fails[:20]:
    print("    " + f, file=sys.stderr)
sys.exit(1 if fails else 0)
