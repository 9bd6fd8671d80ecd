"""usdt_tasks.py APP.OUT EVENTS.TXT: per task of usdt_tasks (its stdout:
"task ADDR hits N"), the hits `asyncscope events` shows inside its polls are
the hits the app made, with arguments 0..k in order; one hit outside any
poll, argument -1."""
import sys, collections
want = {}
for line in open(sys.argv[1]):
    w = line.split()
    if w[0] == "task":
        want[int(w[1], 16)] = int(w[3])
got, args, outside = collections.Counter(), collections.defaultdict(list), []
for line in open(sys.argv[2]):
    w = line.split()
    if w[3] != "usdt":
        continue
    arg = int(w[w.index("arg") + 1])
    if w[4] == "task":
        task = int(w[5], 16)
        got[task] += 1
        args[task].append(arg)
    else:
        outside.append(arg)
errors = []
if dict(got) != want:
    errors.append(f"hits per task {dict(got)}, want {want}")
for task, a in args.items():
    if a != list(range(len(a))):
        errors.append(f"task {task:#x} arguments {a}")
if outside != [-1]:
    errors.append(f"hits outside tasks: arguments {outside}, want [-1]")
for e in errors:
    print("    " + e, file=sys.stderr)
sys.exit(1 if errors else 0)
