"""futures_flame.py FOLDED RECORD.ERR: the async flame graph of futures_nested
has exactly the known nesting, self time within 10% of the spin its truth
lines give"""
import re, sys
def short(f):
    f = re.sub(r" \(.*\)$", "", f)
    m = re.match(r"<futures_nested::(\w+) as .*Future>::poll$", f)
    return m.group(1) if m else f.replace("futures_nested::", "")
truth = {}
for line in open(sys.argv[2]):
    m = re.match(r"truth future=(\w+) stack=(\S+) polls=(\d+) self_ms=\d+ inclusive_ms=\d+ measured_self_ms=([0-9.]+)", line)
    if m:
        truth[m.group(2)] = float(m.group(4))
got, root_only, other = {}, 0.0, []
for line in open(sys.argv[1]):
    if line.startswith("#"):
        continue
    stack, _, w = line.rstrip("\n").rpartition(" ")
    frames = stack.split(";")
    if frames[0].startswith("(no task)"):
        continue  # block_on's own futures, outside the task
    if frames[0] != "futures_nested::handler":
        other.append(line.strip())
        continue
    key = ";".join(short(f) for f in frames[1:])
    if not key:
        root_only += int(w) / 1e6
        continue
    got[key] = got.get(key, 0) + int(w) / 1e6
ok = len(truth) == 5 and set(got) == set(truth) and not other
for k, v in sorted(truth.items()):
    g = got.get(k, 0.0)
    good = abs(g - v) <= 0.10 * v
    ok = ok and good
    print("    %-26s self %8.1f ms, spun %8.1f ms%s" % (k, g, v, "" if good else "   <-- off by more than 10%"), file=sys.stderr)
print("    handler task outside probed futures: %.1f ms" % root_only, file=sys.stderr)
if other:
    print("    unexpected roots:", other[:5], file=sys.stderr)
if set(got) != set(truth):
    print("    stacks found:", sorted(got), file=sys.stderr)
sys.exit(0 if ok else 1)
