"""pprof_tags.py TAGS.txt KEY A B SHARE: in `go tool pprof -tags` output, the
label KEY's values A and B hold A / (A + B) = SHARE within 10% of it (e.g.
task cpu_split::heavy cpu_split::light 0.75)"""
import re, sys
key, a, b, share = sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
vals, cur = {}, None
for line in open(sys.argv[1]):
    m = re.match(r"^ (\S+): Total ", line)
    if m:
        cur = m.group(1)
        continue
    m = re.match(r"^\s+([0-9.]+)(\w*) \(\s*[0-9.]+%\): (.*)$", line)
    if m and cur == key:
        scale = {"": 1, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1, "mins": 60, "hrs": 3600}.get(m.group(2), 1)
        vals[m.group(3)] = float(m.group(1)) * scale
x, y = vals.get(a, 0), vals.get(b, 0)
ok = x + y > 0 and abs(x / (x + y) - share) <= 0.1 * share
print("    %s: %s %.4g, %s %.4g: %.3f (want %.3f)" % (key, a, x, b, y, x / (x + y) if x + y else 0, share), file=sys.stderr)
sys.exit(0 if ok else 1)
