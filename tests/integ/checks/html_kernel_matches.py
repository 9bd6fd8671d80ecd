"""html_kernel_matches.py PAGE KEY FOLDED: the page's kernel-side block holds,
under KEY (blocking or cpu), the very stacks the command line folds (FOLDED:
`asyncscope blocking|cpu --folded` output), weights included"""
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
m = re.findall(r'<script type="application/json" id="kernel">(.*?)</script>', page, re.S)
k = json.loads(m[0])[sys.argv[2]] if len(m) == 1 else {}
got = sorted((s, w) for s, w in k.get("stacks", []))
want = []
for line in open(sys.argv[3]):
    stack, _, w = line.rstrip("\n").rpartition(" ")
    want.append((stack, int(w)))
want.sort()
ok = got == want and k.get("stacks_total") == len(want) and got
if not ok:
    print("    %s: page %d stacks, folded %d" % (sys.argv[2], len(got), len(want)), file=sys.stderr)
sys.exit(0 if ok else 1)
