#!/usr/bin/env python3
"""Exit 0 when no BPF program of asyncscope's is loaded (none named like
its poll probes' programs): every probe of a recorder is gone. Run by the
record_kill_counts case under the integration lock (no other recorder)."""
import json, subprocess, sys

NAMES = {"poll_enter", "poll_exit", "task_wake", "park_exit"}
progs = json.loads(subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True,
                                  text=True, check=True).stdout or "[]")
left = [p for p in progs if p.get("name") in NAMES]
if left:
    print("still loaded: %s" % ", ".join("%s (id %s)" % (p["name"], p["id"]) for p in left))
sys.exit(1 if left else 0)
