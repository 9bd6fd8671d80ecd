"""profile_no_uprobes.py SECONDS PID: while `asyncscope profile` (process
PID, started in the background by the case) runs, reads the BPF links it
holds again and again for SECONDS (bpf_links.py: its threads' fdinfo);
exits 0 when it held no uprobe at any read (no uprobe_multi or
uretprobe_multi link, and no perf link whose program is a kprobe-type one,
as a uprobe attached alone is) and its own links were seen: perf links of
perf_event programs (the CPU samples) and the sched_switch tracepoint.
Prints the link types seen."""
import json, sys, time

from bpf_links import links, prog_type

end = time.time() + float(sys.argv[1])
pid = sys.argv[2]
seen, bad, reads = {}, [], 0
sampling = switch = False
while time.time() < end:
    reads += 1
    for l in links(pid).values():
        t = l["type"]
        seen[t] = seen.get(t, 0) + 1
        if t in ("uprobe_multi", "uretprobe_multi"):
            bad.append(l)
        elif t in ("perf", "perf_event"):
            pt = prog_type(l["prog_id"])
            if pt == "perf_event":
                sampling = True
            elif pt == "kprobe":
                bad.append(dict(l, prog_type=pt))
        elif t == "raw_tracepoint" and l.get("tp_name") == "sched_switch":
            switch = True
    time.sleep(0.05)
print("%d link reads of pid %s, link types seen: %s" % (reads, pid, seen or "none"))
fails = ["uprobe link while profiling: %s" % json.dumps(l)[:300] for l in bad[:5]]
if not sampling:
    fails.append("no perf link of a perf_event program (the CPU samples) seen")
if not switch:
    fails.append("no sched_switch link (off-CPU intervals) seen")
for f in fails:
    print("    " + f, file=sys.stderr)
sys.exit(1 if fails else 0)
