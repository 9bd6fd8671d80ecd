"""cpu_folded.py FOLDED CPU.TXT: `cpu --folded` stacks start with the task, then
the burning function; counts add up to the report's; no runtime frame
between the task and the program's code (stacks folded by default)"""
import re, sys
from folded import lines
burn = total = 0
ok = True
for frames, w, own, kernel in lines(sys.argv[1]):
    total += w
    if frames[0] in ("cpu_split::heavy", "cpu_split::light") and "cpu_split::burn" in frames:
        burn += w
        first = next(i for i, f in enumerate(frames) if i and f.startswith("cpu_split::"))
        if any(f.startswith("tokio::runtime::") for f in frames[1:first]) or own != first:
            print("    not folded: %s (own %d)" % (";".join(frames), own), file=sys.stderr)
            ok = False
m = re.match(r"CPU samples \((?:record --sample|profile)\): (\d+) samples", open(sys.argv[2]).readline())
ok = ok and m and int(m.group(1)) == total and burn >= 0.9 * total
if not ok:
    print("    folded total %d, in burn %d" % (total, burn), file=sys.stderr)
sys.exit(0 if ok else 1)
