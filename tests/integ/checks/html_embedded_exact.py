"""html_embedded_exact.py PAGE JSON: the data block, its two escapes undone
("<\/" and "\u003c!--", see src/output/html.h), is JSON byte for byte"""
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
m = re.findall(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
want = open(sys.argv[2], encoding="utf-8").read()
got = m[0].replace("<\\/", "</").replace("\\u003c!--", "<!--") if len(m) == 1 else None
if got != want:
    print("    embedded JSON (%s bytes) is not %s (%d bytes)" % (len(got) if got is not None else "no", sys.argv[2], len(want)), file=sys.stderr)
sys.exit(0 if got == want else 1)
