"""cpu_dwarf_folded.py FOLDED: DWARF stacks: worker loop, async fn body, burn;
shares still 3:1"""
import sys
n = {"cpu_split::heavy": 0, "cpu_split::light": 0}
for line in open(sys.argv[1]):
    stack, _, w = line.rstrip("\n").rpartition(" ")
    f = stack.split(";")
    if f[0] in n and "tokio::runtime::scheduler::multi_thread::worker::run" in f and \
       f[-2:] == [f[0] + "::{{closure}}", "cpu_split::burn"]:
        n[f[0]] += int(w)
h, l = n["cpu_split::heavy"], n["cpu_split::light"]
ok = h + l >= 500 and abs(h / (h + l) - 0.75) <= 0.075
if not ok:
    print("    whole stacks: heavy %d, light %d" % (h, l), file=sys.stderr)
sys.exit(0 if ok else 1)
