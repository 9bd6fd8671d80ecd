"""futures_wait_weight.py FOLDED-WAIT RECORD.ERR: the wait flame graph's stuck
chain weighs the time it was parked"""
import re, sys
line = int(re.search(r"stuck at \S+:(\d+)", open(sys.argv[2]).read()).group(1))
chain = ["futures_stuck::stuck", "futures_stuck::wait_config", "futures_stuck::wait_signal"]
w = 0
for l in open(sys.argv[1]):
    stack, _, n = l.rstrip("\n").rpartition(" ")
    f = stack.split(";")
    leaf_ok = f[-1] == "futures_stuck::wait_signal (futures_stuck.rs:%d)" % line
    if f[0] == "futures_stuck::stuck" and leaf_ok and [x.split(" ")[0] for x in f[1:]] == chain:
        w += int(n)
if w < 0.9e9:
    print("    stuck chain weight %d ns:" % w, open(sys.argv[1]).read(), file=sys.stderr)
sys.exit(0 if w >= 0.9e9 else 1)
