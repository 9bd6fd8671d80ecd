"""pprof_traces.py TRACES.txt ROOT NEXT [INNER...] [--all] [--min-ms X --max-ms Y]:
in `go tool pprof -traces` output (each sample leaf first, its labels
first), the samples whose root (last) frame is ROOT: every one has NEXT
right above the root (the task's code first: stacks folded), and the
frames INNER... in it in that order (outer to inner) in samples holding at
least half of their weight, no tokio::runtime frame right above the root
(stacks folded: the runtime's frames leading to the task's code left out);
with --all instead, some sample holds the worker loop
(tokio::runtime::scheduler::...::run) before NEXT. With --min-ms/--max-ms
their values (ms, s or a count) sum within those bounds."""
import re, sys
args = sys.argv[2:]
allf = "--all" in args
lo = hi = None
if "--min-ms" in args:
    lo = float(args[args.index("--min-ms") + 1]); hi = float(args[args.index("--max-ms") + 1])
    args = args[:args.index("--min-ms")]
args = [a for a in args if a != "--all"]
root, nxt, inner = args[0], args[1], args[2:]
blocks, cur = [], None
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("-----------+"):
        if cur and cur["frames"]:
            blocks.append(cur)
        cur = {"value": 0.0, "frames": []}
        continue
    if cur is None:
        continue
    m = re.match(r"^ *([0-9.]+)(ns|us|ms|s|)\s{2,}(\S.*)$", line)
    if m and not cur["frames"]:
        cur["value"] = float(m.group(1)) * {"ns": 1e-6, "us": 1e-3, "ms": 1, "s": 1e3, "": 1}[m.group(2)]
        cur["frames"].append(m.group(3).replace(" (inline)", ""))
    elif re.match(r"^ {13}\S", line) and cur["frames"]:
        cur["frames"].append(line.strip().replace(" (inline)", ""))
ok, total, seen, loop, good = True, 0.0, 0, False, 0.0
for b in blocks:
    f = list(reversed(b["frames"]))   # root first
    if f[0] != root or not b["value"]:
        continue
    seen += 1
    total += b["value"]
    if not allf and len(f) > 1 and f[1].startswith("tokio::runtime::"):
        print("    not folded: %s" % f, file=sys.stderr); ok = False
    if nxt not in f[1:]:
        continue
    k = f.index(nxt, 1)
    if any(x.startswith("tokio::runtime::") and x.endswith("::run") for x in f[:k]):
        loop = True
    if not allf and k != 1:
        print("    not folded: %s" % f, file=sys.stderr); ok = False; continue
    pos, all_in = k, True
    for x in inner:
        found = next((i for i in range(pos, len(f)) if f[i] == x or f[i].startswith(x)), -1)
        if found < 0:
            all_in = False
            break
        pos = found
    if all_in:
        good += b["value"]
ok = ok and seen > 0 and good >= 0.5 * total and (loop if allf else True)
if lo is not None:
    ok = ok and lo <= total <= hi
print("    %d samples rooted at %s, %.1f in all, %.1f through %s%s" % (seen, root, total, good,
      ";".join([nxt] + inner), ", worker loop seen" if loop else ""), file=sys.stderr)
sys.exit(0 if ok else 1)
