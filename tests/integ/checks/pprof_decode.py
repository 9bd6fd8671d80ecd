#!/usr/bin/env python3
"""pprof_decode.py FILE.pb.gz: decodes a pprof profile with protoc against
../shared/pprof/profile.proto (perftools.profiles.Profile), checks that it
holds together (string_table[0] is "", every id a sample, location or
function names exists, every string index is in the table, one value per
sample type, locations' lines name functions, no sample without a stack)
and prints a JSON summary on stdout for the case's JSON lines:
  {"types": ["cpu/nanoseconds", ...], "default": "cpu", "period": N,
   "totals": {type: sum}, "by_label": {key: {type: {value: sum}}},
   "samples": N, "locations": N, "functions": N, "mappings": [file, ...],
   "roots": {type: {root function: sum}},
   "lines": {type: {"function file:line": sum}} (every frame of a sample,
   counted once a sample)}
Exits 1 (after saying why on stderr) when it does not decode or hold."""
import gzip, json, os, re, subprocess, sys

here = os.path.dirname(os.path.abspath(__file__))
proto_dir = os.environ.get("PPROF_PROTO_DIR") or os.path.join(here, "..", "..", "..", "..", "shared", "pprof")
if not os.path.exists(os.path.join(proto_dir, "profile.proto")):
    proto_dir = "/work/shared/pprof"

def fail(msg):
    print("    " + msg, file=sys.stderr)
    sys.exit(1)

raw = gzip.open(sys.argv[1]).read()
p = subprocess.run(["protoc", "--decode=perftools.profiles.Profile", "-I", proto_dir,
                    os.path.join(proto_dir, "profile.proto")], input=raw, capture_output=True)
if p.returncode:
    fail("protoc --decode failed: " + p.stderr.decode(errors="replace")[:500])

def parse(text):
    """protoc's text format into nested dicts of lists"""
    toks = re.findall(r'"(?:[^"\\]|\\.)*"|[{}]|[^\s{}:]+:?', text)
    pos = 0
    def unq(s):
        return bytes(s[1:-1], "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8", "replace")
    def msg():
        nonlocal pos
        out = {}
        while pos < len(toks) and toks[pos] != "}":
            key = toks[pos].rstrip(":")
            pos += 1
            if toks[pos] == "{":
                pos += 1
                v = msg()
                pos += 1
            else:
                t = toks[pos]
                v = unq(t) if t.startswith('"') else int(t) if re.fullmatch(r"-?\d+", t) else t
                pos += 1
            out.setdefault(key, []).append(v)
        return out
    return msg()

pr = parse(p.stdout.decode("utf-8", "replace"))
strs = pr.get("string_table", [])
if not strs or strs[0] != "":
    fail("string_table[0] is not the empty string")
def s(i):
    if not isinstance(i, int) or i < 0 or i >= len(strs):
        fail("string index %r out of the table (%d)" % (i, len(strs)))
    return strs[i]
types = [(s(t.get("type", [0])[0]), s(t.get("unit", [0])[0])) for t in pr.get("sample_type", [])]
if not types:
    fail("no sample_type")
funcs = {f["id"][0]: (s(f.get("name", [0])[0]), s(f.get("filename", [0])[0])) for f in pr.get("function", [])}
locs = {}
for l in pr.get("location", []):
    lines = []
    for ln in l.get("line", []):
        fid = ln.get("function_id", [0])[0]
        if fid not in funcs:
            fail("location %d names function %d, not defined" % (l["id"][0], fid))
        lines.append((fid, ln.get("line", [0])[0]))
    if not lines:
        fail("location %d has no line" % l["id"][0])
    locs[l["id"][0]] = lines
maps = [s(m.get("filename", [0])[0]) for m in pr.get("mapping", [])]
totals = {"%s" % t: 0 for t, _ in types}
by_label, roots, flines = {}, {t: {} for t, _ in types}, {t: {} for t, _ in types}
for smp in pr.get("sample", []):
    vals = smp.get("value", [])
    if len(vals) != len(types):
        fail("a sample has %d values for %d types" % (len(vals), len(types)))
    ids = smp.get("location_id", [])
    if not ids:
        fail("a sample without a stack")
    frames = []
    for i in ids:
        if i not in locs:
            fail("a sample names location %d, not defined" % i)
        frames += locs[i]
    labels = {s(l["key"][0]): s(l["str"][0]) for l in smp.get("label", []) if "str" in l}
    root = funcs[frames[-1][0]][0]
    for (t, _), v in zip(types, vals):
        totals[t] += v
        if not v:
            continue
        roots[t][root] = roots[t].get(root, 0) + v
        seen = set()
        for fid, line in frames:
            name, file = funcs[fid]
            k = "%s %s:%d" % (name, file, line) if file else name
            if k not in seen:
                flines[t][k] = flines[t].get(k, 0) + v
                seen.add(k)
        for k, lv in labels.items():
            d = by_label.setdefault(k, {}).setdefault(t, {})
            d[lv] = d.get(lv, 0) + v
default = pr.get("default_sample_type", [0])[0]
print(json.dumps({"types": ["%s/%s" % t for t in types], "default": s(default) if default else types[0][0],
                  "period": pr.get("period", [0])[0], "totals": totals, "by_label": by_label,
                  "samples": len(pr.get("sample", [])), "locations": len(locs),
                  "functions": len(funcs), "mappings": maps, "roots": roots, "lines": flines}))
