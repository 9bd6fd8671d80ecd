"""html_kernel_matches.py PAGE KEY FOLDED: the page's kernel-side block holds,
under KEY (blocking or cpu), the very stacks the command line folds (FOLDED:
`asyncscope blocking|cpu --folded` output, weights in ns or samples),
weights included, and the same marks: each stack's third and fourth
elements index the program's first frame and the first kernel frame, which
the folded lines annotate _[j] and _[k]"""
import json, re, sys
from folded import lines
page = open(sys.argv[1], encoding="utf-8").read()
m = re.findall(r'<script type="application/json" id="kernel">(.*?)</script>', page, re.S)
k = json.loads(m[0])[sys.argv[2]] if len(m) == 1 else {}
got = sorted((s[0], s[1], s[2], s[3]) for s in k.get("stacks", []))
want = sorted((";".join(f), w, own, kern) for f, w, own, kern in lines(sys.argv[3]))
ok = got == want and k.get("stacks_total") == len(want) and got
if not ok:
    print("    %s: page %d stacks, folded %d" % (sys.argv[2], len(got), len(want)), file=sys.stderr)
sys.exit(0 if ok else 1)
