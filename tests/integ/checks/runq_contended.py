"""runq_contended.py BLOCKING.TXT: the tokio workers waited >= 200 ms in all for
the CPU"""
import re, sys
total = 0.0
for line in open(sys.argv[1]):
    m = re.match(r"  \d+ tokio-runtime-w\s+\d+\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\s+([0-9.]+)$", line)
    if m:
        total += float(m.group(1))
print("    workers' run-queue delay: %.1f ms" % total, file=sys.stderr)
sys.exit(0 if total >= 200 else 1)
