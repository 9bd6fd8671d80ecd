"""html_flame_path.py SECTION JSON KEY FRAME...: the flame graph drawn in the
rendered SECTION has the path FRAME... from its top (FRAME 1 at depth 1, each
frame inside its caller's span), and the last frame is as wide as the weight
of the stacks under that path in the report's futures.KEY (within a pixel and
a half of 1200)"""
import html, json, re, sys
sec, fu = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))["futures"]
key, path = sys.argv[3], sys.argv[4:]
W, RH = 1200.0, 17
frames = []
for t, x, y, w in re.findall(r'<g class="fr"><title>(.*?)</title><rect x="([-0-9.e]+)" y="([-0-9.e]+)" width="([-0-9.e]+)"', sec, re.S):
    frames.append((html.unescape(t).split("\n")[0], round(float(y) / RH), float(x), float(w) + 0.5))
spans = [(0.0, W)]
for depth, name in enumerate(path, 1):
    lo, hi = spans[-1]
    hit = [f for f in frames if f[0] == name and f[1] == depth and f[2] >= lo - 0.01 and f[2] + f[3] <= hi + 0.51]
    if not hit:
        print("    no frame %r at depth %d inside %s; at that depth: %s" % (name, depth, (lo, hi),
              sorted(set(f[0] for f in frames if f[1] == depth))[:8]), file=sys.stderr)
        sys.exit(1)
    spans.append((hit[0][2], hit[0][2] + hit[0][3]))
total = sum(s["ns"] for s in fu[key])
under = sum(s["ns"] for s in fu[key] if s["frames"][:len(path)] == path)
want, got = W * under / total, spans[-1][1] - spans[-1][0]
if abs(want - got) > 1.5:
    print("    %s: %.1f px wide, the report's weight gives %.1f" % (path[-1], got, want), file=sys.stderr)
    sys.exit(1)
