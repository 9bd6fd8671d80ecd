"""cpu_folded.py FOLDED CPU.TXT: `cpu --folded` stacks start with the task, then
the burning function; counts add up to the report's"""
import re, sys
burn = total = 0
for line in open(sys.argv[1]):
    stack, _, w = line.rstrip("\n").rpartition(" ")
    frames = stack.split(";")
    total += int(w)
    if frames[0] in ("cpu_split::heavy", "cpu_split::light") and "cpu_split::burn" in frames:
        burn += int(w)
m = re.match(r"CPU samples \((?:record --sample|profile)\): (\d+) samples", open(sys.argv[2]).readline())
ok = m and int(m.group(1)) == total and burn >= 0.9 * total
if not ok:
    print("    folded total %d, in burn %d" % (total, burn), file=sys.stderr)
sys.exit(0 if ok else 1)
