"""dump_no_probe_links.py AS PID N: runs `AS dump -p PID` N times in a row
while `bpftool -j link show` is read again and again; exits 0 when every
dump succeeded and no link that probes the target (perf_event: uprobes and
perf events; uprobe_multi, kprobe_multi, raw_tracepoint, tracing) existed at
any read: dump attaches nothing but its one-shot task iterator (an iter
link). Run under the integration lock (no recorder of another case runs).
Prints the link types seen. With N 0 (the control: a recorder attaches to
PID meanwhile), exits 0 when a probe link is seen within 10 s: the reads do
see probe links when there are some."""
import json, subprocess, sys, threading

as_bin, pid, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
FORBIDDEN = {"perf_event", "uprobe_multi", "kprobe_multi", "raw_tracepoint", "tracing", "kprobe"}
seen, bad, reads = {}, [], [0]
done = threading.Event()


def poll():
    while not done.is_set():
        out = subprocess.run(["bpftool", "-j", "link", "show"], capture_output=True, text=True).stdout
        reads[0] += 1
        for l in json.loads(out or "[]"):
            t = l.get("type", "?")
            seen[t] = seen.get(t, 0) + 1
            if t in FORBIDDEN:
                bad.append(l)


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
print("%d link reads, link types seen: %s" % (reads[0], seen or "none"))
for l in bad[:5]:
    fails.append("probe link while dumping: %s" % json.dumps(l)[:300])
if reads[0] < 2:
    fails.append("bpftool read the links only %d times" % reads[0])
for f in fails[:20]:
    print("    " + f, file=sys.stderr)
sys.exit(1 if fails else 0)
