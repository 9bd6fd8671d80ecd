"""offcpu_blocker_time.py BLOCKING.TXT: the blocker task's off-CPU time in
`asyncscope blocking` is within 10% of 500 ms, in at least 10 intervals"""
import re, sys
for line in open(sys.argv[1]):
    m = re.match(r"  #\d+ sleeper_in_poll::blocker  off-CPU ([0-9.]+) ms  (\d+) intervals", line)
    if m:
        ms, n = float(m.group(1)), int(m.group(2))
        # other short intervals (a preemption, a page fault) may add a few
        ok = 450 <= ms <= 550 and n >= 10
        if not ok:
            print("    blocker: %.3f ms in %d intervals" % (ms, n), file=sys.stderr)
        sys.exit(0 if ok else 1)
print("    no line for the blocker task", file=sys.stderr)
sys.exit(1)
