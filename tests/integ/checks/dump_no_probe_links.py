"""dump_no_probe_links.py AS PID N: runs `AS dump -p PID` N times in a row
while the BPF links each dump process holds are read again and again
(bpf_links.py: its threads' fdinfo); exits 0 when every dump succeeded and
no link that probes the target (uprobes, perf events, kprobes, tracepoints,
fentry: bpf_links.PROBE_TYPES) was held at any read: dump attaches nothing
but its one-shot task iterator (an iter link), and at least one read saw a
dump running. Prints the link types seen.
dump_no_probe_links.py --control RECPID: the control, a recorder (pid
RECPID) attached meanwhile: exits 0 when the same reads see its probe links
within 10 s."""
import subprocess, sys, threading, time

from bpf_links import PROBE_TYPES, links

seen, bad, reads, live = {}, [], [0], [0]
done = threading.Event()
current = [None]


def poll():
    while not done.is_set():
        pid = current[0]
        if pid is None:
            time.sleep(0.001)
            continue
        reads[0] += 1
        ls = links(pid)
        if ls or glob_alive(pid):
            live[0] += 1
        for l in ls.values():
            seen[l["type"]] = seen.get(l["type"], 0) + 1
            if l["type"] in PROBE_TYPES:
                bad.append(l)


def glob_alive(pid):
    try:
        open("/proc/%s/stat" % pid).close()
        return True
    except OSError:
        return False


th = threading.Thread(target=poll)
th.start()
fails = []
if sys.argv[1] == "--control":
    current[0] = sys.argv[2]
    end = time.time() + 10
    while not bad and time.time() < end:
        time.sleep(0.05)
    done.set()
    th.join()
    print("control: %d link reads of pid %s, link types seen: %s" % (reads[0], sys.argv[2], seen or "none"))
    sys.exit(0 if bad else 1)
as_bin, pid, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(n):
    p = subprocess.Popen([as_bin, "dump", "-p", pid], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    current[0] = str(p.pid)
    out, err = p.communicate()
    current[0] = None
    if p.returncode != 0:
        fails.append("dump %d: exit %d: %s" % (i, p.returncode, err.strip()))
    if err.strip():
        fails.append("dump %d: stderr %s" % (i, err.strip()))
done.set()
th.join()
print("%d link reads (%d of a dump running), link types seen: %s" % (reads[0], live[0], seen or "none"))
for l in bad[:5]:
    fails.append("probe link while dumping: %s" % l)
if live[0] < 2:
    fails.append("the dumps' links were read only %d times while one ran" % live[0])
for f in fails[:20]:
    print("    " + f, file=sys.stderr)
sys.exit(1 if fails else 0)
