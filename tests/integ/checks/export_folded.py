"""export_folded.py OUT.folded REPORT.json [per-task|us]: every line is `frames
weight` (frames joined by ';', no empty frame, integer weight) after a
comment naming the unit; the weights sum to the busy time of the user tasks
(ns); with per-task, each line ends in `task ID` (the task's identity, as
the report's "task": #3 or ~7) and each task's lines sum to its busy time;
with us, the weights are in microseconds, each line within half of one of
its ns (lines under half a microsecond left out)"""
import collections, json, re, sys
rep = json.load(open(sys.argv[2]))
per_task = len(sys.argv) > 3 and sys.argv[3] == "per-task"
in_us = len(sys.argv) > 3 and sys.argv[3] == "us"
first = open(sys.argv[1]).readline()
if not re.match(r"# asyncscope export --format folded: .* in %s$" % ("us" if in_us else "ns"), first):
    print("    first line names no unit: %r" % first, file=sys.stderr)
    sys.exit(1)
n_lines = 0
user = {t["task"]: t for t in rep["tasks"] if t["kind"] == "task"}
total, by_task, ok = 0, collections.Counter(), True
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("#"):
        continue
    m = re.fullmatch(r"(.+) (\d+)", line)
    frames = m.group(1).split(";") if m else []
    if not m or len(frames) != (3 if per_task else 2) or not all(frames):
        print("    bad line: %r" % line, file=sys.stderr); ok = False; continue
    if not re.fullmatch(r".+:\d+", frames[0]):
        print("    bad thread frame: %r" % line, file=sys.stderr); ok = False
    total += int(m.group(2))
    n_lines += 1
    if per_task:
        if not re.fullmatch(r"task [#~]\d+", frames[2]):
            print("    bad task frame: %r" % line, file=sys.stderr); ok = False; continue
        by_task[frames[2][len("task "):]] += int(m.group(2))
busy = sum(t["busy_ns"] for t in user.values())
if in_us:
    # each line rounded to the nearest us; lines under 0.5 us left out
    ok = ok and abs(total * 1000 - busy) <= 500 * max(n_lines, 1) + 500 * len(user) * 8
    if not ok:
        print("    folded %d us, user busy %d ns" % (total, busy), file=sys.stderr)
    sys.exit(0 if ok else 1)
if total != busy:
    print("    folded sum %d != user busy %d" % (total, busy), file=sys.stderr); ok = False
if per_task:
    for tid, t in user.items():
        if by_task[tid] != t["busy_ns"]:
            print("    task %s: %d != %d" % (tid, by_task[tid], t["busy_ns"]), file=sys.stderr); ok = False
sys.exit(0 if ok else 1)
