"""html_embedded_equals.py PAGE JSON: the page's data block parses to the same
value as JSON"""
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
m = re.findall(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
want = json.load(open(sys.argv[2], encoding="utf-8"))
ok = len(m) == 1 and json.loads(m[0]) == want
if not ok:
    print("    embedded JSON differs from", sys.argv[2], file=sys.stderr)
sys.exit(0 if ok else 1)
