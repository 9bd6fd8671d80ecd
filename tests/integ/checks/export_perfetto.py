"""export_perfetto.py OUT.json REPORT.json: the Perfetto document is valid JSON
with the expected structure; one poll slice per poll of a user task (per task,
checked against the report); every flow has one start and one end, the end at
the begin of a poll slice of its thread, the start inside a slice of the
waking thread; slices on a thread track nest properly"""
import bisect, collections, json, sys
doc = json.load(open(sys.argv[1]))
rep = json.load(open(sys.argv[2]))
errors = []
def fail(msg):
    errors.append(msg)
assert isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list), "no traceEvents"
assert doc.get("displayTimeUnit") == "ns", "displayTimeUnit"
meta = doc["metadata"]
evs = doc["traceEvents"]
pid = rep["pid"]
for e in evs:
    if e.get("ph") not in ("X", "M", "C", "s", "f", "i"):
        fail("unknown phase %r" % e)
    if e["ph"] != "M" and not isinstance(e.get("ts"), (int, float)):
        fail("no ts: %r" % e)
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in evs
         if e["ph"] == "M" and e["name"] == "thread_name"}
procs = {e["pid"]: e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "process_name"}
if str(pid) not in procs.get(pid, "") or rep["target"] not in procs.get(pid, ""):
    fail("process name %r" % procs.get(pid))
if procs.get(meta["tasks_pid"]) != "tasks":
    fail("no tasks process")
polls = [e for e in evs if e["ph"] == "X" and e.get("cat") == "poll"]
user = [t for t in rep["tasks"] if t["kind"] == "task"]
if len(polls) != sum(t["polls"] for t in user):
    fail("poll slices %d != user polls %d" % (len(polls), sum(t["polls"] for t in user)))
if meta["poll_slices"] != len(polls):
    fail("metadata poll_slices")
per_task = collections.Counter(e["args"]["task"] for e in polls)
for t in user:
    if per_task[t["seq"]] != t["polls"]:
        fail("task %d: %d slices, %d polls" % (t["seq"], per_task[t["seq"]], t["polls"]))
    # the track is named by the task's identity, as the report's "task"
    if not names.get((meta["tasks_pid"], meta["tasks_pid"] + t["seq"]), "").startswith("task %s " % t["task"]):
        fail("task %d track name" % t["seq"])
for e in polls:
    if e["args"]["outcome"] not in ("Ready", "Pending", "cut short", "running at end"):
        fail("outcome %r" % e["args"])
    if e["pid"] != pid:
        fail("poll slice not in the target process")
# slices per thread track, nesting
tracks = collections.defaultdict(list)
for e in evs:
    if e["ph"] == "X":
        tracks[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"], e))
for key, sl in tracks.items():
    sl.sort(key=lambda s: (s[0], -s[1]))
    tracks[key] = sl
    stack = []
    for b, en, e in sl:
        while stack and stack[-1] <= b + 1e-9:
            stack.pop()
        if stack and en > stack[-1] + 1e-9:
            fail("slices overlap on %r at %s" % (key, b)); break
        stack.append(en)
starts = {(e["pid"], e["tid"]): set() for e in evs}
begins = collections.defaultdict(set)
for e in polls:
    begins[(e["pid"], e["tid"])].add(e["ts"])
flows = collections.defaultdict(dict)
for e in evs:
    if e["ph"] in ("s", "f"):
        if e["ph"] in flows[e["id"]]:
            fail("flow %d has two %s" % (e["id"], e["ph"]))
        flows[e["id"]][e["ph"]] = e
for fid, fl in flows.items():
    if set(fl) != {"s", "f"}:
        fail("flow %d unpaired" % fid); continue
    s, f = fl["s"], fl["f"]
    if f.get("bp") != "e" or f["ts"] not in begins[(f["pid"], f["tid"])]:
        fail("flow %d end not at a poll begin" % fid)
    sl = tracks[(s["pid"], s["tid"])]
    # slices starting at or before ts: the enclosing one is among the last few
    i = bisect.bisect_right(sl, (s["ts"], float("inf")))
    if not any(b <= s["ts"] <= en for b, en, _ in sl[max(0, i - 8):i]):
        fail("flow %d start outside any slice" % fid)
if meta["flows"] != len(flows):
    fail("metadata flows")
if meta["lost_events"] != rep["lost_events"]:
    fail("lost events")
if rep["lost_events"] and not [e for e in evs if e["ph"] == "i" and e["name"].startswith("lost ")]:
    fail("no lost-events instant")
if meta["truncated"] != rep.get("truncated", False):
    fail("truncated flag")
for e in errors[:10]:
    print("    " + e, file=sys.stderr)
if len(errors) > 10:
    print("    ... %d errors" % len(errors), file=sys.stderr)
sys.exit(1 if errors else 0)
