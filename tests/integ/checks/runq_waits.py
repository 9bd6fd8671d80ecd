"""runq_waits.py BLOCKING.TXT: the tokio workers waited in the run queue at least
10 times"""
import re, sys
waits = 0
for line in open(sys.argv[1]):
    m = re.match(r"  \d+ tokio-runtime-w\s+(\d+)\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+$", line)
    if m:
        waits += int(m.group(1))
if waits < 10:
    print("    worker waits: %d" % waits, file=sys.stderr)
sys.exit(0 if waits >= 10 else 1)
