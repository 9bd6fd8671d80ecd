"""offcpu_dwarf_stacks.py DWARF.FOLDED FP.FOLDED: the sleep's user stack reaches
the async fn and Tokio's worker loop, deeper than by frame pointers"""
import re, sys
from folded import lines
def sleeps(path):
    """user frames (outermost first) and weight (ns: --unit ns) of the
    blocker's nanosleep stacks (--all-frames)"""
    out = []
    for f, w, own, kernel in lines(path):
        if f[0] != "sleeper_in_poll::blocker" or not ("do_nanosleep" in f or "hrtimer_nanosleep" in f):
            continue
        k = next(i for i, x in enumerate(f) if x.startswith("entry_SYSCALL_64"))
        out.append((f[1:k], w))
    return out
dw, fp = sleeps(sys.argv[1]), sleeps(sys.argv[2])
ok = bool(dw) and bool(fp)
total = sum(w for _, w in dw)
ok = ok and 450e6 <= total <= 550e6
fp_depth = max(len(u) for u, _ in fp) if fp else 0
for u, w in dw:
    print("    DWARF %d user frames (frame pointers %d): %s" % (len(u), fp_depth, ";".join(u)), file=sys.stderr)
    def at(pred):
        return next((i for i, x in enumerate(u) if pred(x)), -1)
    loop = at(lambda x: x == "tokio::runtime::scheduler::multi_thread::worker::run")
    body = at(lambda x: x.startswith("sleeper_in_poll::blocker::{{closure}}") or "sleep_blocking" in x)
    sleep = at(lambda x: re.match(r"std::thread::(\w+::)*sleep$", x) is not None)
    ok = ok and 0 <= loop < body < sleep and len(u) > fp_depth
if not ok:
    print("    DWARF nanosleep weight %d ns; frame-pointer stacks: %s" % (total, [";".join(u) for u, _ in fp]), file=sys.stderr)
sys.exit(0 if ok else 1)
