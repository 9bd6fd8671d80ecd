"""html_stuck_chain.py SECTION JSON RECORD.ERR: the parked-at section draws
futures_stuck's chain ending at src/bin/futures_stuck.rs:77 awaiting
futures_stuck::Gate, the lines its program printed"""
import html, json, re, sys
sec, r = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
m = re.search(r"chain: stuck (\S+) -> wait_config (\S+) -> wait_signal (\S+) -> Gate", open(sys.argv[3]).read())
seq = [p["seq"] for p in r["futures"]["parked"] if p["name"] == "futures_stuck::stuck"]
block = re.search(r'<div class="parked" id="parked-%d">(.*?)</ol>' % seq[0], sec, re.S) if len(seq) == 1 else None
lines = [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", li)).split())
         for li in re.findall(r"<li\b[^>]*>(.*?)</li>", block.group(1), re.S)] if block else []
want = ["futures_stuck::stuck at " + m.group(1),
        "\u2514\u2500 futures_stuck::wait_config at " + m.group(2),
        "\u2514\u2500 futures_stuck::wait_signal at src/bin/futures_stuck.rs:77 awaiting futures_stuck::Gate"]
ok = m and m.group(3) == "src/bin/futures_stuck.rs:77" and lines == want
if block and not re.search(r">futures_stuck::stuck</span>.*waiting [1-9][0-9.]* s since", block.group(1), re.S):
    ok = False
if not ok:
    print("    chain drawn:", lines, "\n    expected:", want, file=sys.stderr)
sys.exit(0 if ok else 1)
