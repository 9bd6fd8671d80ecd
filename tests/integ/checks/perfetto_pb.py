"""perfetto_pb.py OUT.pftrace [--report REPORT.json] [--json OUT.json] [--summary]

Decodes OUT.pftrace with protoc against Perfetto's own schema
(../shared/perfetto/perfetto_trace.proto, or $PERFETTO_PROTO_DIR) and checks,
as trace_processor would read it:
- one packet sequence; its first packet clears the incremental state and sets
  the defaults; every TrackEvent packet says SEQ_NEEDS_INCREMENTAL_STATE;
- a clock snapshot before the first timestamp; timestamps resolved per clock
  (incremental clocks add up; the rest are absolute) never go below the start;
- every interned id (event names, annotation names, annotation strings) and
  every track uuid (and parent uuid) referenced was defined earlier in the
  file; an id never redefined to another string; thread tracks in the
  process; counter values only on counter tracks;
- on every track, ordered by time (file order on ties), slice ends match
  begins, nothing left open, no end before its begin;
- every flow starts once and ends once, the end not before the start; a wake
  instant without "by" lies inside a poll slice of its thread;
With --report: one poll slice per poll of each user task of `report --format
json` (and a "running" slice per poll on its task track, named as the report
names the task), the metadata instant's counts. With --json (the
perfetto-json export of the same trace): the same poll slices (task, begin,
end, name, outcome to the ns), the same numbers of running / scheduled / idle
/ parked / future slices and flows, and the same counter series.
--summary prints counts as JSON on stdout."""
import codecs, collections, json, os, subprocess, sys

args = sys.argv[1:]
path = args.pop(0)
opt = {}
while args:
    a = args.pop(0)
    if a == "--summary":
        opt["summary"] = True
    else:
        opt[a] = args.pop(0)

errors = []
def fail(msg):
    errors.append(msg)

here = os.path.dirname(os.path.abspath(__file__))
proto_dir = os.environ.get("PERFETTO_PROTO_DIR") or os.path.normpath(
    os.path.join(here, "..", "..", "..", "..", "shared", "perfetto"))
dec = subprocess.run(["protoc", "--proto_path=" + proto_dir, "--decode=perfetto.protos.Trace",
                      "perfetto_trace.proto"], stdin=open(path, "rb"), capture_output=True)
if dec.returncode != 0 or dec.stderr:
    print("    protoc --decode failed: %s" % dec.stderr.decode(errors="replace")[:500],
          file=sys.stderr)
    sys.exit(1)

def value(v):
    if v.startswith('"'):
        return codecs.escape_decode(v[1:-1].encode())[0].decode("utf-8", "replace")
    try:
        return int(v)
    except ValueError:
        return v   # an enum's name, true/false

def packets(text):
    """Yields each top-level packet as a dict of field -> list of values."""
    stack = []
    for line in text.splitlines():
        l = line.strip()
        if not l:
            continue
        if l.endswith("{"):
            d = {}
            if stack:
                stack[-1].setdefault(l[:-1].strip(), []).append(d)
            elif l != "packet {":
                fail("top level %r" % l)
            stack.append(d)
        elif l == "}":
            d = stack.pop()
            if not stack:
                yield d
        else:
            k, _, v = l.partition(": ")
            stack[-1].setdefault(k, []).append(value(v))
    if stack:
        fail("unbalanced protoc output")

def one(d, k, default=None):
    v = d.get(k)
    return v[0] if v else default

SLICE_BEGIN, SLICE_END, INSTANT, COUNTER = ("TYPE_SLICE_BEGIN", "TYPE_SLICE_END",
                                            "TYPE_INSTANT", "TYPE_COUNTER")
names, ann_names, strs = {}, {}, {}
tracks = {}            # uuid -> descriptor
clocks = None          # clock id -> (is_incremental, snapshot value)
mono_base = None
last = {}              # incremental clock -> its last value
defaults = {}
process_pid = None
events = collections.defaultdict(list)   # track -> [(ts, order, type, name, args, te)]
counter_values = collections.defaultdict(list)   # track -> [(ts, value)]
flow_starts, flow_ends = {}, {}
n_packets = 0

def intern(table, entries, what):
    for e in entries:
        iid, s = one(e, "iid"), one(e, "name", one(e, "str"))
        if iid is None or iid == 0:
            fail("%s without an iid" % what)
        elif iid in table and table[iid] != s:
            fail("%s %d redefined: %r then %r" % (what, iid, table[iid], s))
        table[iid] = s

def need_track(uuid, what):
    if uuid not in tracks:
        fail("%s references track %r before its descriptor" % (what, uuid))

for order, pk in enumerate(packets(dec.stdout.decode("utf-8", "replace"))):
    n_packets += 1
    seq = one(pk, "trusted_packet_sequence_id")
    flags = one(pk, "sequence_flags", 0)
    if seq != 1:
        fail("packet %d on sequence %r" % (order, seq))
    if order == 0:
        if not flags & 1 or one(pk, "first_packet_on_sequence") != "true":
            fail("first packet does not clear the incremental state")
        d = one(pk, "trace_packet_defaults")
        if not d:
            fail("no trace_packet_defaults in the first packet")
        else:
            defaults["clock"] = one(d, "timestamp_clock_id")
            ted = one(d, "track_event_defaults", {})
            defaults["track"] = one(ted, "track_uuid")
            defaults["extra"] = ted.get("extra_counter_track_uuids", [])
    elif flags & 1:
        fail("packet %d clears the incremental state again" % order)
    for idata in pk.get("interned_data", []):
        intern(names, idata.get("event_names", []), "event name")
        intern(ann_names, idata.get("debug_annotation_names", []), "annotation name")
        intern(strs, idata.get("debug_annotation_string_values", []), "annotation string")
    cs = one(pk, "clock_snapshot")
    if cs:
        if clocks is not None:
            fail("a second clock snapshot")
        clocks = {}
        for c in cs["clocks"]:
            clocks[one(c, "clock_id")] = (one(c, "is_incremental") == "true", one(c, "timestamp", 0))
        if one(cs, "primary_trace_clock") != "BUILTIN_CLOCK_MONOTONIC" or 3 not in clocks:
            fail("the trace clock is not CLOCK_MONOTONIC")
        mono_base = clocks.get(3, (False, 0))[1]
        for cid, (inc, v) in clocks.items():
            if inc:
                if not 64 <= cid < 128:
                    fail("incremental clock %d is not sequence-scoped" % cid)
                last[cid] = v
    td = one(pk, "track_descriptor")
    if td:
        uuid, parent = one(td, "uuid"), one(td, "parent_uuid")
        if parent is not None:
            need_track(parent, "track %r's parent" % uuid)
        pr, th = one(td, "process"), one(td, "thread")
        if pr:
            process_pid = one(pr, "pid")
        if th and one(th, "pid") != process_pid:
            fail("thread track %r in pid %r, not %r" % (uuid, one(th, "pid"), process_pid))
        if uuid in tracks and bool(one(tracks[uuid], "counter")) != bool(one(td, "counter")):
            fail("track %r redefined as another kind" % uuid)
        tracks[uuid] = td
    te = one(pk, "track_event")
    ts = None
    if "timestamp" in pk:
        if clocks is None:
            fail("packet %d has a timestamp before the clock snapshot" % order)
            continue
        cid = one(pk, "timestamp_clock_id", defaults.get("clock"))
        if cid not in clocks:
            fail("packet %d on unknown clock %r" % (order, cid))
            continue
        inc, snap = clocks[cid]
        if inc:
            last[cid] += pk["timestamp"][0]
            v = last[cid]
        else:
            v = pk["timestamp"][0]
        ts = mono_base + (v - snap)
        if ts < mono_base:
            fail("packet %d before the trace start" % order)
    if te is None:
        continue
    if not flags & 2:
        fail("TrackEvent packet %d without SEQ_NEEDS_INCREMENTAL_STATE" % order)
    if ts is None:
        fail("TrackEvent packet %d without a timestamp" % order)
        continue
    typ = one(te, "type")
    track = one(te, "track_uuid", defaults.get("track"))
    need_track(track, "event %d" % order)
    name = None
    if "name_iid" in te:
        name = names.get(te["name_iid"][0])
        if name is None:
            fail("event %d: event name %d not defined" % (order, te["name_iid"][0]))
    targs = {}
    for a in te.get("debug_annotations", []):
        an = ann_names.get(one(a, "name_iid"))
        if an is None:
            fail("event %d: annotation name %r not defined" % (order, one(a, "name_iid")))
        if "string_value_iid" in a:
            sv = strs.get(a["string_value_iid"][0])
            if sv is None:
                fail("event %d: annotation string %d not defined" % (order, a["string_value_iid"][0]))
            targs[an] = sv
        else:
            targs[an] = one(a, "uint_value", one(a, "string_value", one(a, "bool_value")))
    for v, cu in zip(te.get("extra_counter_values", []),
                     te.get("extra_counter_track_uuids", defaults.get("extra", []))):
        need_track(cu, "extra counter of event %d" % order)
        counter_values[cu].append((ts, order, v))
    if len(te.get("extra_counter_values", [])) > len(te.get("extra_counter_track_uuids",
                                                             defaults.get("extra", []))):
        fail("event %d: more counter values than counter tracks" % order)
    if typ == COUNTER:
        counter_values[track].append((ts, order, one(te, "counter_value")))
        continue
    if typ not in (SLICE_BEGIN, SLICE_END, INSTANT):
        fail("event %d of type %r" % (order, typ))
        continue
    if typ != SLICE_END and name is None:
        fail("event %d (%s) without a name" % (order, typ))
    for f in te.get("flow_ids", []):
        if f in flow_starts:
            fail("flow %d starts twice" % f)
        flow_starts[f] = (ts, track, order)
    for f in te.get("terminating_flow_ids", []):
        if f in flow_ends:
            fail("flow %d ends twice" % f)
        flow_ends[f] = (ts, track, order)
    events[track].append((ts, order, typ, name, targs))

for cu in counter_values:
    if cu in tracks and not one(tracks[cu], "counter"):
        fail("counter values on track %r, not a counter track" % cu)

# slices per track, by time then file order
slices = []            # (track, begin, end, name, args, depth)
instants = []          # (track, ts, name, args, depth, enclosing)
for track, evs in events.items():
    evs.sort(key=lambda e: (e[0], e[1]))
    stack = []
    for ts, order, typ, name, targs in evs:
        if typ == SLICE_BEGIN:
            stack.append((ts, name, targs))
        elif typ == SLICE_END:
            if not stack:
                fail("track %r: an end at %d with no slice open" % (track, ts))
                continue
            b, name, targs = stack.pop()
            slices.append((track, b, ts, name, targs, len(stack)))
        else:
            instants.append((track, ts, name, targs, len(stack), stack[-1] if stack else None))
    if stack:
        fail("track %r: %d slices never end" % (track, len(stack)))

for f, (ts, track, _) in flow_ends.items():
    if f not in flow_starts:
        fail("flow %d ends without a start" % f)
    elif flow_starts[f][0] > ts:
        fail("flow %d ends before it starts" % f)
for f in flow_starts:
    if f not in flow_ends:
        fail("flow %d never ends" % f)

def kind(track):
    td = tracks.get(track, {})
    if one(td, "thread"):
        return "thread"
    if one(td, "parent_uuid") is not None and (one(tracks.get(one(td, "parent_uuid"), {}), "name") == "tasks"):
        return "task"
    return "other"

polls = [s for s in slices if kind(s[0]) == "thread" and "outcome" in s[4] and "depth" not in s[4]]
frames = [s for s in slices if kind(s[0]) == "thread" and "depth" in s[4]]
for s in polls:
    if s[4]["outcome"] not in ("Ready", "Pending", "cut short", "running at end"):
        fail("poll outcome %r" % s[4]["outcome"])
task_states = collections.Counter(s[3] for s in slices if kind(s[0]) == "task")
wakes = [i for i in instants if i[2] in ("wake", "spawn")]
for tr, ts, name, targs, depth, enc in wakes:
    if "by" not in targs and (depth == 0 or "outcome" not in enc[2]):
        fail("wake at %d on track %r outside a poll slice" % (ts, tr))
meta = [i for i in instants if i[2] == "asyncscope"]
if len(meta) != 1:
    fail("%d asyncscope instants" % len(meta))
meta = meta[0][3] if meta else {}
if meta.get("poll_slices") != len(polls):
    fail("metadata poll_slices %r, %d poll slices" % (meta.get("poll_slices"), len(polls)))
if meta.get("flows") != len(flow_starts):
    fail("metadata flows %r, %d flows" % (meta.get("flows"), len(flow_starts)))
runnable = [u for u, td in tracks.items() if one(td, "name") == "runnable tasks"]
parked = [u for u, td in tracks.items() if one(td, "name") == "parked workers"]
series = {n: sorted(counter_values.get(u[0], [])) if u else [] for n, u in
          (("runnable tasks", runnable), ("parked workers", parked))}

if "--report" in opt:
    rep = json.load(open(opt["--report"]))
    user = [t for t in rep["tasks"] if t["kind"] == "task"]
    if len(polls) != sum(t["polls"] for t in user):
        fail("poll slices %d != user polls %d" % (len(polls), sum(t["polls"] for t in user)))
    per_task = collections.Counter(s[4]["task"] for s in polls)
    running = collections.Counter(s[0] for s in slices if kind(s[0]) == "task" and s[3] == "running")
    by_seq = {}
    for u, td in tracks.items():
        if kind(u) == "task":
            by_seq[int(one(td, "description").split("task ")[1].split(";")[0])] = (u, one(td, "name"))
    for t in user:
        if per_task[t["seq"]] != t["polls"]:
            fail("task %d: %d poll slices, %d polls" % (t["seq"], per_task[t["seq"]], t["polls"]))
        u, tname = by_seq.get(t["seq"], (None, ""))
        if not tname.startswith("task %s " % t["task"]):
            fail("task %d track name %r, the report's task %r" % (t["seq"], tname, t["task"]))
        if running[u] != t["polls"]:
            fail("task %d: %d running slices, %d polls" % (t["seq"], running[u], t["polls"]))
    pname = one(one(tracks.get(1, {}), "process", {}), "process_name", "")
    if rep["target"] not in pname or process_pid != rep["pid"]:
        fail("process %r pid %r" % (pname, process_pid))
    if meta.get("lost_events") != rep["lost_events"]:
        fail("metadata lost_events %r, report %r" % (meta.get("lost_events"), rep["lost_events"]))

if "--json" in opt:
    doc = json.load(open(opt["--json"]))
    jm = doc["metadata"]
    base = jm["clock_mono_ns"]
    if base != mono_base:
        fail("trace start %r, the JSON's %r" % (mono_base, base))
    ns = lambda us: int(round(us * 1000))
    jev = doc["traceEvents"]
    jpolls = sorted((e["args"]["task"], ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"],
                     e["args"]["outcome"]) for e in jev if e["ph"] == "X" and e.get("cat") == "poll")
    ppolls = sorted((s[4]["task"], s[1] - base, s[2] - base, s[3], s[4]["outcome"]) for s in polls)
    if jpolls != ppolls:
        diff = sorted(set(jpolls) ^ set(ppolls))[:3]
        fail("poll slices differ from the JSON's (%d vs %d; e.g. %r)" % (len(ppolls), len(jpolls), diff))
    jstates = collections.Counter(e["name"] for e in jev if e["ph"] == "X" and e.get("cat") == "task")
    if jstates != task_states:
        fail("task states %r, the JSON's %r" % (dict(task_states), dict(jstates)))
    jparked = sum(1 for e in jev if e["ph"] == "X" and e.get("cat") == "park")
    pparked = sum(1 for s in slices if s[3] == "parked")
    if jparked != pparked:
        fail("parked slices %d, the JSON's %d" % (pparked, jparked))
    jframes = sum(1 for e in jev if e["ph"] == "X" and e.get("cat") == "future")
    if jframes != len(frames):
        fail("future slices %d, the JSON's %d" % (len(frames), jframes))
    if jm["flows"] != len(flow_starts):
        fail("flows %d, the JSON's %d" % (len(flow_starts), jm["flows"]))
    for cname, key in (("runnable tasks", "tasks"), ("parked workers", "workers")):
        js = [(ns(e["ts"]), e["args"][key]) for e in jev if e["ph"] == "C" and e["name"] == cname]
        ps = [(t - base, v) for t, _, v in series[cname]]
        if js != ps:
            fail("counter %r: %d values, the JSON's %d" % (cname, len(ps), len(js)))

if "summary" in opt:
    print(json.dumps({
        "packets": n_packets, "poll_slices": len(polls), "future_slices": len(frames),
        "flows": len(flow_starts), "task_states": dict(task_states),
        "parked": sum(1 for s in slices if s[3] == "parked"),
        "thread_tracks": sum(1 for u in tracks if kind(u) == "thread"),
        "task_tracks": sum(1 for u in tracks if kind(u) == "task"),
        "poll_names": dict(collections.Counter(s[3] for s in polls)),
        "outcomes": dict(collections.Counter(s[4]["outcome"] for s in polls)),
        "runnable_values": len(series["runnable tasks"]),
        "instants": sorted(set(i[2] for i in instants if i[2] not in ("wake", "spawn"))),
        "meta": meta,
    }, sort_keys=True))
for e in errors[:10]:
    print("    " + e, file=sys.stderr)
if len(errors) > 10:
    print("    ... %d errors" % len(errors), file=sys.stderr)
sys.exit(1 if errors else 0)
