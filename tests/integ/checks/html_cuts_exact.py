"""html_cuts_exact.py PAGE REPORT.json [PATH...]: what the page says it cut
of the report is exact. For each array the page block's "cuts" lists (and
each PATH given, which must be listed): "total" is the report's length,
"kept" the page's, the page's elements are report elements in the report's
order, and each "omitted" sum is the sum over the report's elements the page
left out. Arrays not listed are whole in the page."""
import json, re, sys

page = open(sys.argv[1], encoding="utf-8").read()


def block(bid):
    m = re.findall(r'<script type="application/json" id="%s">(.*?)</script>' % bid, page, re.S)
    if len(m) != 1:
        sys.exit("    no %s block" % bid)
    return json.loads(m[0].replace("<\\/", "</").replace("\\u003c!--", "<!--"))


data, pblock = block("data"), block("page")
report = json.load(open(sys.argv[2], encoding="utf-8"))
cuts = pblock.get("cuts", {})
bad = []


def at(doc, path):
    for k in path.split("."):
        doc = doc.get(k) if isinstance(doc, dict) else None
    return doc


for want in sys.argv[3:]:
    if want not in cuts:
        bad.append("%s: not cut" % want)


def key(x):
    return json.dumps(x, sort_keys=True)


for path, c in cuts.items():
    full, kept = at(report, path), at(data, path)
    if not isinstance(full, list) or not isinstance(kept, list):
        bad.append("%s: not an array in both" % path)
        continue
    if c["total"] != len(full) or c["kept"] != len(kept) or len(kept) >= len(full):
        bad.append("%s: total %d kept %d, report %d page %d" % (path, c["total"], c["kept"], len(full), len(kept)))
        continue
    # the page's elements, in order, are a subsequence of the report's
    i, left = 0, []
    for e in full:
        if i < len(kept) and key(kept[i]) == key(e):
            i += 1
        else:
            left.append(e)
    if i != len(kept):
        bad.append("%s: page element %d is not the report's, in order" % (path, i))
        continue
    for k, v in c.get("omitted", {}).items():
        s = sum(e.get(k, 0) for e in left if isinstance(e.get(k, 0), int))
        if s != v:
            bad.append("%s: omitted %s %d, the report's left-out elements sum to %d" % (path, k, v, s))
# arrays not listed are whole
for path in ("tasks", "wake_edges", "long_polls", "stalled", "starved", "task_groups", "workers"):
    if path not in cuts and at(report, path) is not None and key(at(report, path)) != key(at(data, path)):
        bad.append("%s: not listed as cut, yet not whole" % path)
for b in bad:
    print("    " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
