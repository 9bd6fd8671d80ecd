"""dump_exec_check.py JSON SRC --vias V,V [--static NAME] [--busy FUNC=MARK]
[--thread-locals NAME=PID] SPEC ...:
`asyncscope dump --format json` of an async-std or smol program whose tasks
are parked for good at the lines of SRC marked `// dump: MARK`. Each SPEC
is MARK=FUNC=N=CHAIN[=LEAF]: exactly N tasks named FUNC, idle, with a
chain read (no note) whose frames in the program's own files (relative
paths ending in SRC's name) are exactly the marks of CHAIN (',' between,
outermost first), and are its first frames (the executor's wrapper future
is not shown); LEAF (when given) the future the innermost frame awaits. No
other task. Every task named ~N (async-task has no task id): "id" null,
distinct ~N numbers, distinct headers. The task lists: async-executor
executors ("runtime" "executor"), found the ways --vias names (sorted,
e.g. heap,heap,static), each complete, one walked shard, their task counts
summing to the tasks found; --static NAME: the static list is found through
that static; the whole list_complete, and no recording made. --busy: one
more task, FUNC, nearly always running: its chain at MARK when caught
between polls, else said running with no chain (never a made-up one).
--thread-locals: the lists found through the thread-local NAME ("via"
"thread_local", not counted in --vias), one per thread holding one, among
them thread PID (the main thread, in block_on), each with its thread id and
said so; without it, none."""
import json, re, sys

args = sys.argv[1:]
r = json.load(open(args.pop(0)))
src = args.pop(0)
vias, static, busy, tls, specs = None, None, None, None, []
while args:
    a = args.pop(0)
    if a == "--vias":
        vias = sorted(args.pop(0).split(","))
    elif a == "--static":
        static = args.pop(0)
    elif a == "--thread-locals":
        tls = args.pop(0).split("=")
    elif a == "--busy":
        busy = args.pop(0).split("=")
    else:
        parts = a.split("=")
        specs.append((parts[0], parts[1], int(parts[2]), parts[3].split(","),
                      parts[4] if len(parts) > 4 else None))
marks = {}
for i, l in enumerate(open(src), 1):
    if "// dump: " in l:
        marks[l.rstrip().rsplit("// dump: ", 1)[1]] = i
base = src.split("/")[-1]
fails = []
tasks = r["tasks"]
seen = {s[0]: 0 for s in specs}
for t in tasks:
    own = [(f["file"], f["line"]) for f in t["frames"]
           if (f["file"] or "").endswith(base) and not f["file"].startswith("/")]
    hit = None
    for mark, func, _, chain, leaf in specs:
        want = [marks[m] for m in chain]
        if (t["name"] == func and t["state"] == "idle" and t["note"] is None
                and [l for _, l in own] == want
                and [l for l in (f["line"] for f in t["frames"][:len(want)])] == want
                and (leaf is None or t["leaf"] == leaf)):
            hit = mark
    if busy and t["name"] == busy[0]:
        ok = (t["note"] is None and t["frames"] and t["frames"][0]["line"] == marks[busy[1]]) or \
             (t["note"] in ("running, not sampled", "changed while reading") and not t["frames"])
        seen["--busy"] = seen.get("--busy", 0) + 1
        if not ok:
            fails.append("busy task %s: %s %s %s" % (t["task"], t["state"], t["note"], t["frames"]))
        continue
    if hit:
        seen[hit] += 1
    else:
        fails.append("task %s: %s %s %s frames %s leaf %s" % (
            t["task"], t["name"], t["state"], t["note"],
            [(f["future"], f["file"], f["line"]) for f in t["frames"]], t["leaf"]))
for mark, func, n, _, _ in specs:
    if seen[mark] != n:
        fails.append("%d tasks at 'dump: %s' (%s), expected %d" % (seen[mark], mark, func, n))
if busy and seen.get("--busy") != 1:
    fails.append("%s busy tasks %s, expected 1" % (seen.get("--busy", 0), busy[0]))
idents = [t["task"] for t in tasks]
if not all(re.match(r"^~[1-9][0-9]*$", i) for i in idents) or len(set(idents)) != len(idents):
    fails.append("identities ~N, distinct: %s" % idents)
if any(t["id"] is not None for t in tasks):
    fails.append("ids: %s" % [t["id"] for t in tasks])
headers = [t["header"] for t in tasks]
if len(set(headers)) != len(headers) or not all(re.match(r"^0x[0-9a-f]+$", h) for h in headers):
    fails.append("headers: %s" % headers)
tl = r["task_lists"]
tl_tls = [l for l in tl if l["via"] == "thread_local"]
if vias is not None and sorted(l["via"] for l in tl if l["via"] != "thread_local") != vias:
    fails.append("ways in %s, expected %s" % (sorted(l["via"] for l in tl), vias))
if tls is None and tl_tls:
    fails.append("thread-local lists: %s" % tl_tls)
if tls is not None:
    threads = [l["thread"] for l in tl_tls]
    if int(tls[1]) not in threads or len(set(threads)) != len(threads):
        fails.append("thread-local lists of threads %s, main thread %s" % (threads, tls[1]))
    for l in tl_tls:
        if not l["found_through"].startswith("the thread-local %s of thread %d (" % (tls[0], l["thread"])):
            fails.append("thread-local list said %s" % l["found_through"])
for l in tl:
    if l["runtime"] != "executor" or not l["complete"] or l["shards"] != 1 or l["shards_walked"] != 1 \
            or l["note"] is not None:
        fails.append("list: %s" % l)
if sum(l["tasks"] for l in tl) != len(tasks):
    fails.append("lists hold %d tasks, %d found" % (sum(l["tasks"] for l in tl), len(tasks)))
if static is not None and [l["found_through"] for l in tl if l["via"] == "static"] != ["the static " + static]:
    fails.append("static: %s" % [l["found_through"] for l in tl if l["via"] == "static"])
if r["list_complete"] is not True or r["traced"] is not False:
    fails.append("list_complete %s traced %s (%s)" % (r["list_complete"], r["traced"], r.get("list_note")))
for f in fails:
    print("    " + f, file=sys.stderr)
sys.exit(1 if fails else 0)
