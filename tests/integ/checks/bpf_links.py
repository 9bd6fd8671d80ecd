"""The BPF links a process holds, read from the fdinfo of every thread's file
table (/proc/PID/task/TID/fdinfo: asyncscope holds its probe links in
threads with file tables of their own). Reading a process's own links,
rather than every link of the machine (`bpftool link show`), keeps a check
true while other recorders run beside it (another checkout's tests, a
benchmark)."""
import glob, json, subprocess

_prog_types = {}


def links(pid):
    """{link_id: {"id", "type" (fdinfo's link_type: uprobe_multi,
    uretprobe_multi, perf, raw_tracepoint, iter, ...), "prog_id", "tp_name"}}
    of process pid now; {} when it is gone"""
    out = {}
    for f in glob.glob("/proc/%s/task/*/fdinfo/*" % pid):
        try:
            text = open(f).read()
        except OSError:
            continue
        if "link_type:" not in text:
            continue
        kv = dict(l.split(":", 1) for l in text.splitlines() if ":" in l)
        kv = {k.strip(): v.strip() for k, v in kv.items()}
        lid = int(kv.get("link_id", "0"))
        out[lid] = {"id": lid, "type": kv.get("link_type", "?"),
                    "prog_id": int(kv.get("prog_id", "0")), "tp_name": kv.get("tp_name")}
    return out


def prog_type(prog_id):
    """the type of BPF program prog_id (bpftool), "?" unknown"""
    if prog_id not in _prog_types:
        r = subprocess.run(["bpftool", "-j", "prog", "show", "id", str(prog_id)],
                           capture_output=True, text=True).stdout
        try:
            _prog_types[prog_id] = json.loads(r or "{}").get("type", "?")
        except ValueError:
            _prog_types[prog_id] = "?"
    return _prog_types[prog_id]


# links that probe a target: uprobes (alone: a perf link of a kprobe-type
# program), perf events, kprobes, tracepoints, fentry/fexit
PROBE_TYPES = {"uprobe_multi", "uretprobe_multi", "kprobe_multi", "kretprobe_multi", "perf",
               "perf_event", "raw_tracepoint", "tracing", "kprobe"}
