"""spawn_truth.py REPORT.json PROGRAM.err [--unseen WAY,...] [--skip WAY,...]: the spawn
sites and parents of tests/apps spawn_ways. The program prints one line per
spawn, from the spawn call's own line:
  truth way=WAY task=NAME file=FILE line=LINE parent=PARENT|-
Each spawned task (named by its future; the spawn_blocking closure's task is
Tokio's BlockingTask<fn() -> u64>) must appear once, completed, with
spawn_location FILE:LINE:COL (or FILE:LINE, column unknown) and parent the seq of the task PARENT (null for
"-"). A way listed with --unseen is one the runtime version cannot show: its
task must still be there and exact in polls, and its site and parent must be
null or the truth, never another site. A way listed with --skip is one the
version gets wrong, said and explained in the case: only its task's
presence is checked. Prints one line per failed check, naming the way;
exits 1 if any failed."""
import json, re, sys

r = json.load(open(sys.argv[1]))
truth = [dict(re.findall(r"(\w+)=(\S+)", l)) for l in open(sys.argv[2]) if l.startswith("truth way=")]
unseen = set()
if "--unseen" in sys.argv:
    unseen = set(sys.argv[sys.argv.index("--unseen") + 1].split(","))
skip = set()
if "--skip" in sys.argv:
    skip = set(sys.argv[sys.argv.index("--skip") + 1].split(","))
BLOCKING = "tokio::runtime::blocking::task::BlockingTask<fn() -> u64>"

tasks = [t for t in r["tasks"] if t["kind"] == "task"]
by_name = {}
for t in tasks:
    by_name.setdefault(t["name"], []).append(t)
errors = []
if len(truth) != 11:
    errors.append(f"the program printed {len(truth)} truth lines, expected 11")
for w in truth:
    way, name = w["way"], w["task"]
    tool_name = BLOCKING if name == "spawn_ways::blocking_work" else name
    found = by_name.get(tool_name, [])
    if len(found) != 1:
        errors.append(f"{way}: {len(found)} tasks named {tool_name}, expected 1")
        continue
    t = found[0]
    if t["state"] != "completed" or t["polls"] < 1:
        errors.append(f"{way}: {name} {t['state']} after {t['polls']} polls")
    want_loc = "%s:%s:" % (w["file"], w["line"])
    loc = t["spawn_location"]
    # FILE:LINE:COL, or FILE:LINE where the column is unknown (a call site
    # found by unwinding: tokio 1.53)
    loc_ok = loc is not None and (loc.startswith(want_loc) or loc == want_loc[:-1])
    if w["parent"] == "-":
        want_parent = None
    else:
        p = by_name.get(w["parent"], [])
        want_parent = p[0]["seq"] if len(p) == 1 else -1
    parent_ok = t["parent"] == want_parent
    if way in skip:
        continue
    if way in unseen:
        if loc is not None and not loc_ok:
            errors.append(f"{way}: {name} spawned at {loc}, the truth is {want_loc} (or null: unseen)")
        if t["parent"] is not None and not parent_ok:
            errors.append(f"{way}: {name} parent {t['parent']}, the truth is {want_parent} (or null: unseen)")
        continue
    if not loc_ok:
        errors.append(f"{way}: {name} spawned at {loc}, expected {want_loc}COL")
    if not parent_ok:
        errors.append(f"{way}: {name} parent {t['parent']}, expected {want_parent} ({w['parent']})")
for e in errors:
    print("    " + e, file=sys.stderr)
sys.exit(1 if errors else 0)
