"""html_future_fns.py SECTION JSON: one row per future function of
futures_nested, as in the report"""
import html, json, re, sys
sec, fns = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))["futures"]["functions"]
rows = []
for tr in re.findall(r"<tbody>(.*?)</tbody>", sec, re.S)[0].split("</tr>")[:-1]:
    rows.append([html.unescape(re.sub(r"<[^>]+>", "", td)) for td in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)])
want = sorted([f["name"], "%s:%d" % (f["file"], f["line"]), str(f["polls"])] for f in fns)
got = sorted(r[:3] for r in rows)
ok = len(fns) == 5 and got == want and all(r[0].startswith(("futures_nested::", "<futures_nested::")) for r in rows)
if not ok:
    print("    rows", got, "want", want, file=sys.stderr)
sys.exit(0 if ok else 1)
