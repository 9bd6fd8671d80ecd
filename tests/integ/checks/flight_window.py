#!/usr/bin/env python3
"""A flight recorder snapshot holds its window only: flight_window.py EVENTS
JSON WINDOW_S AFTER_S MODE (record|profile).

EVENTS is `asyncscope events` of the snapshot (offsets from the trace's
start, which the recorder sets to the first event of the window, which
starts at trigger - window),
JSON its `report --format json`. Holds when
- every event is at 0 <= offset <= WINDOW + AFTER (state records, stamped
  at the start, at 0) and the first other event within 0.3 s of the start
  (the window is really there: the target runs throughout);
- the header says the trigger was at most WINDOW (and within 0.3 s of it)
  after the start;
- record (blocker: its ticker sleeps 50 ms a poll, 20 polls a second at
  most): the busiest task has between 50 and 61 polls in the 3 s (61 = one
  per 50 ms over the span, both ends; 50 allows 60 ms a round on a loaded
  machine); the recording ran 6 s before the trigger, so 120 polls would
  say the older events were not dropped;
- profile (pollbench: two busy workers): at most 99 samples a second on each
  of the machine's 2 CPUs over the span (sampling cannot give more), and
  some samples at all.
"""
import json, re, sys

events, jpath, window, after, mode = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
errors = []
offs, kinds = [], []
for line in open(events):
    m = re.match(r"^\+(\d+\.\d{9}) tid \d+ (\S+)", line)
    if m:
        offs.append(float(m.group(1)))
        kinds.append(m.group(2))
if not offs:
    errors.append("no events")
span = window + after
bad = [o for o in offs if o < 0 or o > span + 1e-9]
if bad:
    errors.append(f"{len(bad)} events outside [0, {span}] s, e.g. {bad[:3]}")
others = [o for o, k in zip(offs, kinds) if o > 0]
if others and min(others) > 0.3:
    errors.append(f"the first event is at {min(others):.3f} s: the window's start is missing")
r = json.load(open(jpath))
fl = r.get("flight") or {}
# the trace starts at the window's first event: the trigger WINDOW after
# the window's start, so at most WINDOW (and within 0.3 s of it) after that
tn = fl.get("trigger_ns")
if tn is None or not (window - 0.3) * 1e9 <= tn <= window * 1e9:
    errors.append(f"trigger_ns {tn}, expected {window - 0.3} to {window} s")
if mode == "record":
    polls = max((t["polls"] or 0) for t in r["tasks"]) if r["tasks"] else 0
    if not 50 <= polls <= 61:
        errors.append(f"the busiest task has {polls} polls, expected 50 to 61")
    print(f"ok: {len(offs)} events in [0, {span}] s, ticker polls {polls}")
else:
    samples = kinds.count("sample")
    if not 1 <= samples <= 2 * 99 * span + 4:
        errors.append(f"{samples} samples, expected 1 to {int(2 * 99 * span + 4)}")
    print(f"ok: {len(offs)} events in [0, {span}] s, {samples} samples")
for e in errors:
    print("flight_window:", e)
sys.exit(1 if errors else 0)
