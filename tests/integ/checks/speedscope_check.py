#!/usr/bin/env python3
"""speedscope_check.py FILE.json: checks a speedscope file against the file
format (speedscope's src/lib/file-format-spec.ts, the schema of
https://www.speedscope.app/file-format-schema.json): $schema, shared.frames
(name a string, file a string when present), profiles of type "sampled"
with a name, a unit speedscope knows, startValue <= endValue, samples and
weights of one length, every sample a list of frame indices in range,
weights non-negative numbers summing to endValue - startValue; then prints
a JSON summary on stdout: {"profiles": {name: {"unit", "total", "roots":
{root frame: weight}, "frames": {frame name: weight (counted once a
sample)}}}, "frames": N}. Exits 1 after saying why on stderr."""
import json, sys

def fail(msg):
    print("    " + msg, file=sys.stderr)
    sys.exit(1)

d = json.load(open(sys.argv[1], encoding="utf-8"))
# speedscope's own schema (its npm release, scripts/setup.sh) first
schema = "/opt/asyncscope/npm/speedscope-1.25.0/dist/release/file-format-schema.json"
try:
    import jsonschema
except ImportError:
    jsonschema = None
if jsonschema is not None and __import__("os").path.exists(schema):
    try:
        jsonschema.validate(d, json.load(open(schema)))
    except jsonschema.ValidationError as e:
        fail("not speedscope's schema: %s" % str(e).splitlines()[0])
if d.get("$schema") != "https://www.speedscope.app/file-format-schema.json":
    fail("$schema is %r" % d.get("$schema"))
frames = d.get("shared", {}).get("frames")
if not isinstance(frames, list):
    fail("no shared.frames")
for f in frames:
    if not isinstance(f, dict) or not isinstance(f.get("name"), str) or \
            ("file" in f and not isinstance(f["file"], str)) or \
            ("line" in f and not isinstance(f["line"], int)):
        fail("bad frame %r" % f)
units = {"none", "nanoseconds", "microseconds", "milliseconds", "seconds", "bytes"}
out = {}
for p in d.get("profiles", []):
    if p.get("type") != "sampled" or not isinstance(p.get("name"), str) or p.get("unit") not in units:
        fail("bad profile header %r" % {k: p.get(k) for k in ("type", "name", "unit")})
    s, w = p.get("samples"), p.get("weights")
    if not isinstance(s, list) or not isinstance(w, list) or len(s) != len(w):
        fail("%s: samples and weights differ in length" % p["name"])
    if not p["startValue"] <= p["endValue"]:
        fail("%s: startValue > endValue" % p["name"])
    roots, names = {}, {}
    for st, wt in zip(s, w):
        if not isinstance(wt, (int, float)) or wt < 0 or not st or \
                not all(isinstance(i, int) and 0 <= i < len(frames) for i in st):
            fail("%s: bad sample %r weight %r" % (p["name"], st, wt))
        r = frames[st[0]]["name"]
        roots[r] = roots.get(r, 0) + wt
        for n in {frames[i]["name"] for i in st}:
            names[n] = names.get(n, 0) + wt
    if sum(w) != p["endValue"] - p["startValue"]:
        fail("%s: weights sum to %d, endValue - startValue %d" % (p["name"], sum(w), p["endValue"] - p["startValue"]))
    out[p["name"]] = {"unit": p["unit"], "total": sum(w), "roots": roots, "frames": names}
if not isinstance(d.get("activeProfileIndex", 0), int) or d.get("activeProfileIndex", 0) >= max(len(out), 1):
    fail("activeProfileIndex out of range")
print(json.dumps({"profiles": out, "frames": len(frames)}))
