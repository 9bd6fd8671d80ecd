"""uring_tasks.py APP.OUT URING.TXT REPORT.JSON: `asyncscope uring` shows, per
task of uring_tasks (its stdout: "task ADDR hits N"), N submissions and N
completions, and one of each outside polls. Tasks without a runtime id are
named ~SEQ there (util/task_id.h): the report's JSON (`report --format json`)
gives each seq its header address; a bare address is taken as it is."""
import json, re, sys
want = {}
for line in open(sys.argv[1]):
    w = line.split()
    if w[0] == "task":
        want[int(w[1], 16)] = int(w[3])
header = {t["seq"]: int(t["header"], 16) for t in json.load(open(sys.argv[3]))["tasks"]}
got, outside, unknown = {}, None, []
for line in open(sys.argv[2]):
    m = re.match(r"\s+(\d+)\s+(\d+)\s+(\d+)\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\s+(.*)$", line)
    if not m:
        continue
    sub, done, where = int(m.group(1)), int(m.group(2)), m.group(4)
    t = re.match(r"(0x[0-9a-f]+|~\d+) ", where)
    if t and t.group(1).startswith("~"):
        seq = int(t.group(1)[1:])
        if seq in header:
            got[header[seq]] = (sub, done)
        else:
            unknown.append(t.group(1))
    elif t:
        got[int(t.group(1), 16)] = (sub, done)
    elif where.startswith("outside-polls"):
        outside = (sub, done)
ok = got == {k: (v, v) for k, v in want.items()} and outside == (1, 1) and not unknown
if not ok:
    print("    want %s, got %s, outside %s, seqs not in the report %s" % (want, got, outside, unknown),
          file=sys.stderr)
sys.exit(0 if ok else 1)
