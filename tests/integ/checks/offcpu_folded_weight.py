"""offcpu_folded_weight.py FOLDED: `blocking --folded` stacks of the blocker task
through nanosleep weigh 500 ms within 10% (in the unit the file names, us by
default); each starts at the task's code: the task, then the program's first
frame (marked _[j]), no runtime frame before it, kernel frames marked _[k]"""
import sys
from folded import lines, unit
scale = {"ns": 1, "us": 1e3, "ms": 1e6}[unit(sys.argv[1]) or "ns"]
total, ok = 0, True
for frames, w, own, kernel in lines(sys.argv[1]):
    if frames[0] == "sleeper_in_poll::blocker" and ("do_nanosleep" in frames or "hrtimer_nanosleep" in frames):
        total += w * scale
        if own != 1 or not frames[1].startswith("sleeper_in_poll::") or kernel < 0 or \
                any(f.startswith("tokio::runtime::") for f in frames[:kernel]) or \
                not frames[kernel].startswith("entry_SYSCALL"):
            print("    not folded to the task's code: %s (own %d, kernel %d)" % (";".join(frames), own, kernel), file=sys.stderr)
            ok = False
ok = ok and 450e6 <= total <= 550e6
if not ok:
    print("    blocker nanosleep weight: %d ns" % total, file=sys.stderr)
sys.exit(0 if ok else 1)
