"""html_uring_cards.py SECTION: the io_uring section's cards say 11 submitted, 11
completed, 0 failed"""
import re, sys
sec = open(sys.argv[1]).read()
v = dict(re.findall(r'<div class="k">(\w+)</div><div class="v">([0-9,]+)</div>', sec))
ok = v.get("Submitted") == "11" and v.get("Completed") == "11" and v.get("Failed") == "0"
if not ok:
    print("    cards:", v, file=sys.stderr)
sys.exit(0 if ok else 1)
