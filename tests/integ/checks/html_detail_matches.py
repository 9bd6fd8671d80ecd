"""html_detail_matches.py PAGE REPORT.json: the page block's detailed tasks
(analysis/zoom.c, a second pass of its own) agree with the report's task
rows (the first pass): each histogram's percentiles are the row's
poll_p50/p99_ns and sched_p50/p99/max_ns, each lane's running time sums to
about the row's busy time (lanes hold shares in 63rds of a bucket), and
every detailed task has a row in the page"""
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()


def block(bid):
    return json.loads(re.findall(r'<script type="application/json" id="%s">(.*?)</script>' % bid, page, re.S)[0])


rows = {t["task"]: t for t in json.load(open(sys.argv[2]))["tasks"]}
kept = {t["task"] for t in block("data")["tasks"]}
zoom = block("page")["zoom"]
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def decode(s, n):
    out, i = [], 0
    while i < len(s):
        v = B64.index(s[i])
        i += 1
        rep = 1
        if i < len(s) and s[i] == "~":
            j = s.index(".", i)
            rep += int(s[i + 1:j])
            i = j + 1
        out += [v] * rep
    assert len(out) == n, (len(out), n)
    return out


bad = []
if not zoom["tasks"]:
    bad.append("no detailed task")
for t in zoom["tasks"]:
    r = rows.get(t["task"])
    if r is None or t["task"] not in kept:
        bad.append("%s: no row in the report or the page" % t["task"])
        continue
    got = (t["poll"]["p50"], t["poll"]["p99"], t["sched"]["p50"], t["sched"]["p99"], t["sched"]["max"])
    want = (r["poll_p50_ns"], r["poll_p99_ns"], r["sched_p50_ns"], r["sched_p99_ns"], r["sched_max_ns"])
    if got != want:
        bad.append("%s: histograms %s, report %s" % (t["task"], got, want))
    L = t["lane"]
    busy = sum(decode(L["a"], L["buckets"])) / 63 * L["bucket_ns"]
    # each bucket is within 1/63 of itself (rounded; a non-zero share at least 1)
    if abs(busy - r["busy_ns"]) > L["bucket_ns"] / 63 * L["buckets"] + 1:
        bad.append("%s: lane running %.0f ns, report busy %d" % (t["task"], busy, r["busy_ns"]))
for b in bad[:10]:
    print("    " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
