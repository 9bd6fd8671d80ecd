"""cpu_shares.py CPU.TXT: `asyncscope cpu` samples of cpu_split's heavy and light
tasks within 10% of 75% and 25%"""
import re, sys
n = {}
for line in open(sys.argv[1]):
    m = re.match(r"\s+(\d+)\s+[0-9.]+%\s+#\d+ (cpu_split::\w+)$", line)
    if m:
        n[m.group(2)] = n.get(m.group(2), 0) + int(m.group(1))
h, l = n.get("cpu_split::heavy", 0), n.get("cpu_split::light", 0)
ok = h + l >= 500 and abs(h / (h + l) - 0.75) <= 0.075 and abs(l / (h + l) - 0.25) <= 0.025
print("    heavy %d, light %d samples: %.1f%% / %.1f%%" % (h, l, 100 * h / max(h + l, 1), 100 * l / max(h + l, 1)), file=sys.stderr)
sys.exit(0 if ok else 1)
