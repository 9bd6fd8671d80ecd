"""profile_no_uprobes.py SECONDS: while `asyncscope profile` runs (started in
the background by the case, under the integration lock: no other recorder
runs), reads `bpftool -j link show` again and again for SECONDS; exits 0
when no uprobe was attached at any read (no uprobe_multi link, type 12 on
a bpftool without its name, and no perf_event link whose program is a
kprobe-type one, as a uprobe attached alone is) and the profiler's own
links were seen: perf_event links of perf_event programs (the CPU samples)
and the sched_switch tracepoint. Prints the link types seen."""
import json, subprocess, sys, time

end = time.time() + float(sys.argv[1])
seen, bad, prog_type, reads = {}, [], {}, 0
sampling = switch = False


def ptype(pid):
    if pid not in prog_type:
        out = subprocess.run(["bpftool", "-j", "prog", "show", "id", str(pid)],
                             capture_output=True, text=True).stdout
        prog_type[pid] = json.loads(out or "{}").get("type", "?")
    return prog_type[pid]


while time.time() < end:
    out = subprocess.run(["bpftool", "-j", "link", "show"], capture_output=True, text=True).stdout
    reads += 1
    for l in json.loads(out or "[]"):
        t = l.get("type", "?")
        seen[t] = seen.get(t, 0) + 1
        if t in ("uprobe_multi", 12, "12"):
            bad.append(l)
        elif t == "perf_event":
            pt = ptype(l.get("prog_id"))
            if pt == "perf_event":
                sampling = True
            elif pt == "kprobe":
                bad.append(dict(l, prog_type=pt))
        elif t == "raw_tracepoint" and l.get("tp_name") == "sched_switch":
            switch = True
    time.sleep(0.05)
print("%d link reads, link types seen: %s" % (reads, seen or "none"))
fails = ["uprobe link while profiling: %s" % json.dumps(l)[:300] for l in bad[:5]]
if not sampling:
    fails.append("no perf_event link of a perf_event program (the CPU samples) seen")
if not switch:
    fails.append("no sched_switch link (off-CPU intervals) seen")
for f in fails:
    print("    " + f, file=sys.stderr)
sys.exit(1 if fails else 0)
