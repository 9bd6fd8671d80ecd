#!/usr/bin/env python3
"""no_probes.py --of PID: prints the ids of the programs of the uprobe links
process PID holds now (bpf_links.py), comma-separated (nothing when none).
no_probes.py IDS: exits 0 when none of those programs (IDS as printed) is
loaded any more: every probe of a recorder is gone. Program ids are never
reused, so a recorder of another session running meanwhile cannot make the
check pass or fail."""
import os, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bpf_links import links

if sys.argv[1] == "--of":
    ids = sorted({l["prog_id"] for l in links(sys.argv[2]).values()
                  if l["type"] in ("uprobe_multi", "uretprobe_multi", "perf")})
    print(",".join(str(i) for i in ids))
    sys.exit(0 if ids else 1)
left = [i for i in sys.argv[1].split(",") if i and
        subprocess.run(["bpftool", "prog", "show", "id", i], capture_output=True).returncode == 0]
if left:
    print("still loaded: programs %s" % ", ".join(left))
sys.exit(1 if left else 0)
