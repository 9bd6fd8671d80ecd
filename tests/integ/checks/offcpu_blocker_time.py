"""offcpu_blocker_time.py BLOCKING.TXT [--no-runq]: the blocker task's time
blocked in `asyncscope blocking`, in at least 10 intervals, is 10 x 50 ms:
its off-CPU time less the part spent waiting for a CPU after each wakeup
(`blocked X ms` on its line, from the run-queue records of record --offcpu)
within 495-550 ms (a sleep never ends early; a page fault may add a little).
--no-runq (a profile trace: no run-queue records): the off-CPU time is
450-700 ms, as the wait for a CPU, unbounded on a loaded machine, is in it"""
import re, sys
no_runq = "--no-runq" in sys.argv[2:]
for line in open(sys.argv[1]):
    m = re.match(r"  #\d+ sleeper_in_poll::blocker  off-CPU ([0-9.]+) ms  (\d+) intervals"
                 r"(?:  \(blocked ([0-9.]+) ms, waiting for a CPU ([0-9.]+) ms\))?", line)
    if m:
        ms, n = float(m.group(1)), int(m.group(2))
        if no_runq:
            ok = m.group(3) is None and 450 <= ms <= 700 and n >= 10
        else:
            ok = m.group(3) is not None and 495 <= float(m.group(3)) <= 550 and n >= 10
        if not ok:
            print("    blocker: %s" % line.strip(), file=sys.stderr)
        sys.exit(0 if ok else 1)
print("    no line for the blocker task", file=sys.stderr)
sys.exit(1)
