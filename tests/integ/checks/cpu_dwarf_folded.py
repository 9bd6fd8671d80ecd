"""cpu_dwarf_folded.py ALL.FOLDED [FOLDED]: DWARF stacks with --all-frames: the
worker loop, the async fn body, burn, shares still 3:1; the default stacks
(FOLDED) of the same trace start at the async fn body, marked _[j], right
after the task"""
import sys
from folded import lines
n = {"cpu_split::heavy": 0, "cpu_split::light": 0}
ok = True
for f, w, own, kernel in lines(sys.argv[1]):
    if f[0] in n and "tokio::runtime::scheduler::multi_thread::worker::run" in f and \
       f[-2:] == [f[0] + "::{{closure}}", "cpu_split::burn"]:
        n[f[0]] += w
        ok = ok and own == len(f) - 2
h, l = n["cpu_split::heavy"], n["cpu_split::light"]
ok = ok and h + l >= 500 and abs(h / (h + l) - 0.75) <= 0.075
if len(sys.argv) > 2:
    d = {"cpu_split::heavy": 0, "cpu_split::light": 0}
    for f, w, own, kernel in lines(sys.argv[2]):
        if f[0] in d and f[1:] == [f[0] + "::{{closure}}", "cpu_split::burn"] and own == 1:
            d[f[0]] += w
    if d["cpu_split::heavy"] != h or d["cpu_split::light"] != l:
        print("    folded: %s, whole: heavy %d light %d" % (d, h, l), file=sys.stderr)
        ok = False
if not ok:
    print("    whole stacks: heavy %d, light %d" % (h, l), file=sys.stderr)
sys.exit(0 if ok else 1)
