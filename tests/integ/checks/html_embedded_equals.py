"""html_embedded_equals.py PAGE JSON [KEY...]: the page's data block parses to
the same value as JSON, but for the top-level KEYs the page leaves out (a
page made from a trace by report --html has no "timeline": it draws its own
from its page block), which JSON must have"""
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
m = re.findall(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
want = json.load(open(sys.argv[2], encoding="utf-8"))
ok = len(m) == 1
for k in sys.argv[3:]:
    if k not in want:
        print("    %s has no %s" % (sys.argv[2], k), file=sys.stderr)
        ok = False
    want.pop(k, None)
if ok and json.loads(m[0].replace("<\\/", "</").replace("\\u003c!--", "<!--")) != want:
    print("    embedded JSON differs from", sys.argv[2], file=sys.stderr)
    ok = False
sys.exit(0 if ok else 1)
