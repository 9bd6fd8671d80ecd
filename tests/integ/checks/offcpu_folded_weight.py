"""offcpu_folded_weight.py FOLDED: `blocking --folded` stacks of the blocker task
through nanosleep weigh 500 ms within 10%"""
import sys
total = 0
for line in open(sys.argv[1]):
    stack, _, w = line.rstrip("\n").rpartition(" ")
    frames = stack.split(";")
    if frames[0] == "sleeper_in_poll::blocker" and ("do_nanosleep" in frames or "hrtimer_nanosleep" in frames):
        total += int(w)
ok = 450e6 <= total <= 550e6
if not ok:
    print("    blocker nanosleep weight: %d ns" % total, file=sys.stderr)
sys.exit(0 if ok else 1)
