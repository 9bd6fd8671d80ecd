"""dump_no_probe_links.py AS PID N: runs `AS dump -p PID` N times in a row
while `bpftool -j link show` is read again and again; exits 0 when every
dump succeeded and no link that probes the target (perf_event: uprobes and
perf events; uprobe_multi, kprobe_multi, raw_tracepoint, tracing) existed at
any read: dump attaches nothing but its one-shot task iterator (an iter
link). Run under the integration lock (no recorder of another case runs);
links that already existed before the first dump or still exist after the
last one are another program's (a dump's links end with it): a tracer run
outside the lock by another checkout is not taken for the dump's.
Prints the link types seen. With N 0 (the control: a recorder attaches to
PID meanwhile), exits 0 when a probe link is seen within 10 s: the reads do
see probe links when there are some."""
import json, subprocess, sys, threading

as_bin, pid, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
FORBIDDEN = {"perf_event", "uprobe_multi", "kprobe_multi", "raw_tracepoint", "tracing", "kprobe"}
seen, bad, reads = {}, [], [0]
done = threading.Event()


def links():
    out = subprocess.run(["bpftool", "-j", "link", "show"], capture_output=True, text=True).stdout
    return json.loads(out or "[]")


def poll():
    while not done.is_set():
        reads[0] += 1
        for l in links():
            t = l.get("type", "?")
            seen[t] = seen.get(t, 0) + 1
            if t in FORBIDDEN:
                bad.append(l)


before = {l.get("id") for l in links()}
th = threading.Thread(target=poll)
th.start()
fails = []
if n == 0:
    import time
    end = time.time() + 10
    while not bad and time.time() < end:
        time.sleep(0.05)
    done.set()
    th.join()
    print("control: %d link reads, link types seen: %s" % (reads[0], seen or "none"))
    sys.exit(0 if bad else 1)
for i in range(n):
    r = subprocess.run([as_bin, "dump", "-p", pid], capture_output=True, text=True)
    if r.returncode != 0:
        fails.append("dump %d: exit %d: %s" % (i, r.returncode, r.stderr.strip()))
    if r.stderr.strip():
        fails.append("dump %d: stderr %s" % (i, r.stderr.strip()))
done.set()
th.join()
after = {l.get("id") for l in links()}
others = [l for l in bad if l.get("id") in before or l.get("id") in after]
bad = [l for l in bad if l.get("id") not in before and l.get("id") not in after]
print("%d link reads, link types seen: %s%s" % (reads[0], seen or "none",
      "; %d reads of other programs' probe links (there before or after)" % len(others) if others else ""))
for l in bad[:5]:
    fails.append("probe link while dumping: %s" % json.dumps(l)[:300])
if reads[0] < 2:
    fails.append("bpftool read the links only %d times" % reads[0])
for f in fails[:20]:
    print("    " + f, file=sys.stderr)
sys.exit(1 if fails else 0)
