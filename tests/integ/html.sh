# HTML report tests (sourced by tests/integ/run.sh after lib.sh): pages made
# from recorded traces and from the hand-made full report
# (tests/data/html/full-report.json) are opened in headless Chromium by
# scripts/html-check.sh, which fails on a script error or an unfinished
# render; screenshots are left in $HTML_SHOTS (default /tmp/asyncscope-html).
# Only test_html_kernel_sections and test_html_futures_sections need BPF:
# they record tests/apps programs with --offcpu, --sample, --runq and --uring
# for the kernel-side sections, and with --futures for the future-level ones.
#
# The page is made by `$AS report --html OUT TRACE` when the report command
# has that option, else from `$AS report --format json TRACE` by
# build/tests/test_html JSON OUT (the unit-test binary's conversion mode).
HTML_SHOTS=${HTML_SHOTS:-/tmp/asyncscope-html}
HTML_FROM_JSON=build/tests/test_html

# html_page TRACE OUT.html: the HTML report of a recorded trace.
html_page() {
	if $AS report --help 2>&1 | grep -q -- '--html'; then
		$AS report --html "$2" "$1" >/dev/null 2>"$2.err" || { cat "$2.err" >&2; return 1; }
	else
		$AS report --format json "$1" >"$2.json" && $HTML_FROM_JSON "$2.json" "$2"
	fi
}

# html_embedded_equals PAGE JSON: the data block parses to the same value as JSON.
html_embedded_equals() {
	python3 - "$1" "$2" <<'PY'
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
m = re.findall(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
want = json.load(open(sys.argv[2], encoding="utf-8"))
ok = len(m) == 1 and json.loads(m[0]) == want
if not ok:
    print("    embedded JSON differs from", sys.argv[2], file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}

# html_no_external PAGE: nothing outside the data blocks refers to the network.
html_no_external() {
	python3 - "$1" <<'PY'
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
rest = re.sub(r'(<script type="application/json" id="(?:data|kernel)">).*?(</script>)', r'\1\2', page, flags=re.S)
bad = re.findall(r'(?:https?:|//cdn|src=|@import|url\((?!#))', rest)
if bad:
    print("    external references:", bad[:5], file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

# html_rendered PAGE DOM: checks PAGE in chromium (scripts/html-check.sh, screenshot
# to $HTML_SHOTS/<DOM's name>.png) and writes the rendered DOM to DOM without its
# <script> elements (their source would match any text the tests look for).
html_rendered() {
	local png=$HTML_SHOTS/$(basename "$2" .dom).png
	mkdir -p "$HTML_SHOTS"
	HTML_CHECK_DOM="$2.raw" scripts/html-check.sh "$1" "$png" || return 1
	python3 -c 'import re, sys; sys.stdout.write(re.sub(r"<script\b.*?</script>", "", open(sys.argv[1]).read(), flags=re.S))' \
		"$2.raw" >"$2"
}

# html_dom_count DOM TEXT: how many times TEXT appears in the rendered DOM.
html_dom_count() { grep -o -- "$2" "$1" | wc -l; }

test_html_assets_current() {
	check "html_assets.h matches the template" scripts/gen-html-assets.sh --check
	check "unit tests pass" sh -c "$HTML_FROM_JSON >/dev/null 2>&1"
}

test_html_recorded_traces() {
	mkdir -p "$HTML_SHOTS"
	local t name page
	for t in tests/data/chain-100.trace tests/data/blocker-2s.trace tests/data/sleepers.trace \
		tests/data/yields-multi-20.trace; do
		name=$(basename "$t" .trace)
		page=$TMP/$name.html
		check "$name: page written" html_page "$t" "$page" || continue
		check "$name: starts with the doctype" sh -c "head -c 15 '$page' | grep -qx '<!DOCTYPE html>'"
		$AS report --format json "$t" >"$TMP/$name.report.json"
		check "$name: embedded JSON is the report" html_embedded_equals "$page" "$TMP/$name.report.json"
		check "$name: no external resource" html_no_external "$page"
		check "$name: renders in chromium without error" html_rendered "$page" "$TMP/$name.dom"
		check "$name: task table filled" test "$(html_dom_count "$TMP/$name.dom" '<tr')" -gt 3
		check "$name: summary shows lost events" grep -q 'Lost events' "$TMP/$name.dom"
		check "$name: no kernel-side nor future section without such events" \
			sh -c "! grep -Eq '<section id=\"(blocking|cpu|runq|uring|async-flame|wait-flame|future-fns|parked)\"' '$TMP/$name.dom'"
	done
}

test_html_full_fixture() {
	mkdir -p "$HTML_SHOTS"
	local json=tests/data/html/full-report.json page=$TMP/full.html dom=$TMP/full-report.dom
	check "page written" $HTML_FROM_JSON "$json" "$page"
	check "embedded JSON intact" html_embedded_equals "$page" "$json"
	check "no external resource" html_no_external "$page"
	check "renders in chromium without error" html_rendered "$page" "$dom"
	check "every section has data" test "$(html_dom_count "$dom" 'no data in this report')" -eq 0
	check "lost events highlighted" grep -q 'class="card bad"><div class="k">Lost events' "$dom"
	check "timeline lanes drawn" test "$(html_dom_count "$dom" '<svg class="lane"')" -ge 14
	check "three histograms" test "$(html_dom_count "$dom" '<div class="hist">')" -eq 3
	check "percentiles printed" grep -q '>p99.9<' "$dom"
	check "long polls listed" grep -q 'server::compress_blocking' "$dom"
	check "wake graph nodes" grep -q '#11 checkout::{async_fn#0}' "$dom"
	check "wake edge label" grep -q '412 · p50 21.0 us' "$dom"
	check "folded tasks shown as groups" grep -q '4,210 finished tasks are not listed one by one' "$dom"
	check "group rows" grep -q 'server::log_flush' "$dom"
}

# Strings from the traced program reach the page as text, never as markup.
test_html_hostile_strings() {
	local json=$TMP/hostile.json page=$TMP/hostile.html dom=$TMP/hostile.dom
	cat >"$json" <<'JSON'
{"target": "/tmp/</script><script>document.title='pwned'</script>", "pid": 1, "runtime": "tokio",
 "duration_ns": 1000000, "events": 3, "lost_events": 0, "missed_events": 0, "truncated": true,
 "tasks": [{"id": 1, "seq": 1, "name": "<img src=x onerror=\"document.body.dataset.pwned=1\">",
            "kind": "task", "spawn_location": "<!--<script>", "polls": 2, "pending_polls": 1,
            "busy_ns": 1500, "max_poll_ns": 1000, "mean_poll_ns": 750, "idle_ns": 10,
            "wakes": 1, "state": "idle"}],
 "workers": [], "totals": {"tasks": 1, "polls": 2},
 "wake_edges": [{"from_kind": "<b>x</b>", "from_seq": null, "from_name": null, "to_seq": 1,
                 "to_name": "</script>", "count": 1}]}
JSON
	check "page written" $HTML_FROM_JSON "$json" "$page"
	check "embedded JSON intact" html_embedded_equals "$page" "$json"
	check "renders without error" html_rendered "$page" "$dom"
	check "no injected element" sh -c "! grep -q -e '<img' -e 'data-pwned' -e 'pwned</title>' '$dom'"
	check "names shown as text" grep -q '&lt;img src=x onerror=' "$dom"
	check "truncated flagged" grep -q 'The trace is truncated' "$dom"
}

# Empty, minimal and invalid JSON: a page that says so, never a script error
# (invalid JSON is reported as one error on purpose).
test_html_degenerate_inputs() {
	printf '' >"$TMP/empty.json"
	printf '{}' >"$TMP/min.json"
	printf '{"tasks": [' >"$TMP/bad.json"
	check "empty: page written" $HTML_FROM_JSON "$TMP/empty.json" "$TMP/empty.html"
	check "empty: renders" html_rendered "$TMP/empty.html" "$TMP/empty.dom"
	check "minimal: page written" $HTML_FROM_JSON "$TMP/min.json" "$TMP/min.html"
	check "minimal: renders" html_rendered "$TMP/min.html" "$TMP/minimal.dom"
	check "minimal: sections say no data" test "$(html_dom_count "$TMP/minimal.dom" 'no data in this report')" -ge 6
	check "invalid: page written" $HTML_FROM_JSON "$TMP/bad.json" "$TMP/bad.html"
	check "invalid: the check fails on it" sh -c "! scripts/html-check.sh $TMP/bad.html $TMP/bad.png 2>/dev/null"
}

# html_section DOM ID: the rendered section with that id (sections do not nest).
html_section() {
	python3 - "$1" "$2" <<'PY'
import re, sys
m = re.search(r'<section id="%s">(.*?)</section>' % re.escape(sys.argv[2]), open(sys.argv[1]).read(), re.S)
if not m:
    print("    no section", sys.argv[2], file=sys.stderr)
    sys.exit(1)
sys.stdout.write(m.group(1))
PY
}

# html_kernel_matches PAGE KEY FOLDED: the page's kernel-side block holds, under
# KEY ("blocking" or "cpu"), the very stacks the command line folds (FOLDED:
# `asyncscope blocking|cpu --folded` output), weights included.
html_kernel_matches() {
	python3 - "$@" <<'PY'
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
PY
}

# html_with_clicks PAGE OUT: PAGE with a script run after the report's that
# uses the blocking flame graph as a person would: clicks the nanosleep frame
# (zoom), types "nanosleep" into the highlight box, clicks Reset zoom; it
# writes what it saw into body[data-clicks] ("ok" or what went wrong). A
# script error there counts as a page error (html-check.sh fails).
html_with_clicks() {
	python3 - "$1" "$2" <<'PY'
import sys
js = r"""<script>
(function () {
	var sec = document.getElementById('blocking'), res = [];
	var flame = sec && sec.querySelector('.flame');
	if (!flame) { document.body.dataset.clicks = 'no flame graph'; return; }
	var crumbs = flame.querySelector('.crumbs'), bar = flame.previousElementSibling;
	var target = null;
	flame.querySelectorAll('g.fr').forEach(function (g) {
		var t = g.querySelector('title');
		if (t && /^(do_nanosleep|hrtimer_nanosleep)\n/.test(t.textContent)) target = target || g;
	});
	if (!target) { document.body.dataset.clicks = 'no nanosleep frame'; return; }
	target.dispatchEvent(new MouseEvent('click', { bubbles: true }));
	if (!/nanosleep/.test(crumbs.textContent)) res.push('zoom: ' + crumbs.textContent);
	if (bar.querySelector('button').disabled) res.push('zoom: Reset zoom still disabled');
	if (flame.querySelectorAll('g.anc').length < 2) res.push('zoom: callers not kept above');
	var input = bar.querySelector('input');
	input.value = 'nanosleep';
	input.dispatchEvent(new Event('input'));
	var hl = /^highlighted: .*\(([0-9.]+)% of all\)$/.exec(bar.querySelector('.count').textContent);
	if (!hl || +hl[1] < 90) res.push('search: ' + bar.querySelector('.count').textContent);
	bar.querySelector('button').click();
	if (!/^all stacks: /.test(crumbs.textContent) || flame.querySelectorAll('g.anc').length) res.push('reset: ' + crumbs.textContent);
	document.body.dataset.clicks = res.length ? res.join('; ') : 'ok';
})();
</script>
</body>"""
page = open(sys.argv[1], encoding="utf-8").read()
open(sys.argv[2], "w", encoding="utf-8").write(page.replace("</body>", js, 1))
PY
}

# The kernel-side sections on live recordings. Truth (tests/integ/offcpu.sh,
# cpu.sh, uring.sh): sleeper_in_poll's task sleeper_in_poll::blocker sleeps
# 10 x 50 ms inside its polls in do_nanosleep / hrtimer_nanosleep; its two
# workers wait in the run queue; uring_tasks makes 11 io_uring requests. The
# page must show each section with that content, the same stacks as the
# command line's --folded output, working flame graphs, and what was lost.
test_html_kernel_sections() {
	mkdir -p "$HTML_SHOTS"
	local t=$TMP/hk.trace page=$TMP/hk.html dom=$TMP/html-kernel.dom sec
	check "record --offcpu --sample 999 --runq" \
		sh -c "$AS record --offcpu --sample 999 --runq -o $t -- $APPS/sleeper_in_poll >/dev/null 2>$TMP/hk.err"
	check "page written" html_page "$t" "$page" || return
	check "no external resource" html_no_external "$page"
	check "renders in chromium without error" html_rendered "$page" "$dom" || return
	for sec in blocking cpu runq; do
		check "$sec: section drawn" html_section "$dom" "$sec" >"$TMP/hk-$sec.html"
		check "$sec: in the navigation" grep -q "<a href=\"#$sec\">" "$dom"
		check "$sec: says what was lost" grep -q 'Lost events 0, missed events 0\.' "$TMP/hk-$sec.html"
	done
	check "no io_uring section without io_uring events" sh -c "! grep -q '<section id=\"uring\"' $dom"
	sec=$TMP/hk-blocking.html
	check "blocking: names the task" grep -q '>sleeper_in_poll::blocker<' "$sec"
	check "blocking: nanosleep cause in the table" grep -Eq '<td class="name"[^>]*>(do_nanosleep|hrtimer_nanosleep)</td>' "$sec"
	check "blocking: off-CPU time within 10% of 500 ms" \
		grep -Eq '<div class="k">Off-CPU in polls</div><div class="v">(4[5-9][0-9]|5[0-4][0-9])\.[0-9] ms</div>' "$sec"
	check "blocking: flame graph has the task and nanosleep frames" \
		sh -c "grep -q '<text[^>]*>sleeper_in_poll::blocker</text>' $sec && grep -Eq '<text[^>]*>(do_nanosleep|hrtimer_nanosleep)</text>' $sec"
	$AS blocking --folded "$t" >"$TMP/hk-blocking.folded" 2>/dev/null
	check "blocking: the stacks of asyncscope blocking --folded" html_kernel_matches "$page" blocking "$TMP/hk-blocking.folded"
	sec=$TMP/hk-cpu.html
	check "cpu: sample rows listed" test "$(html_dom_count "$sec" '<tr')" -ge 2
	check "cpu: flame graph drawn" test "$(html_dom_count "$sec" '<g class="fr"')" -ge 2
	$AS cpu --folded "$t" >"$TMP/hk-cpu.folded" 2>/dev/null
	check "cpu: the stacks of asyncscope cpu --folded" html_kernel_matches "$page" cpu "$TMP/hk-cpu.folded"
	check "runq: the workers' waits" grep -q '>tokio-runtime-w<' "$TMP/hk-runq.html"
	check "summary: blocking card" grep -q '<div class="k">Blocking in polls</div>' "$dom"

	html_with_clicks "$page" "$TMP/hk-clicks.html"
	check "flame graph: zoom, highlight and reset work" html_rendered "$TMP/hk-clicks.html" "$TMP/html-kernel-clicks.dom"
	check "flame graph: as expected" grep -q 'data-clicks="ok"' "$TMP/html-kernel-clicks.dom" ||
		grep -o 'data-clicks="[^"]*"' "$TMP/html-kernel-clicks.dom" >&2

	# dropped events and truncation reach every kernel-side section (the
	# report's counts, edited into the page as a lossy recording would have them)
	python3 - "$page" "$TMP/hk-lossy.html" "$TMP/hk-trunc.html" <<'PY'
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
lossy = re.sub(r'"lost_events": 0', '"lost_events": 17', page)
open(sys.argv[2], "w", encoding="utf-8").write(lossy)
open(sys.argv[3], "w", encoding="utf-8").write(re.sub(r'"truncated": false', '"truncated": true', page))
PY
	check "lossy: renders" html_rendered "$TMP/hk-lossy.html" "$TMP/html-kernel-lossy.dom"
	check "lossy: each section says it undercounts" \
		test "$(html_dom_count "$TMP/html-kernel-lossy.dom" '(17 lost, 0 missed): the numbers below undercount')" -eq 3
	check "truncated: renders" html_rendered "$TMP/hk-trunc.html" "$TMP/html-kernel-trunc.dom"
	check "truncated: each section says so" \
		test "$(html_dom_count "$TMP/html-kernel-trunc.dom" 'the numbers below cover it up to its last event')" -eq 3

	t=$TMP/hk-uring.trace page=$TMP/hk-uring.html dom=$TMP/html-kernel-uring.dom
	check "record --uring" sh -c "$AS record --uring -o $t -- tests/apps/uring/uring_tasks 4 >/dev/null 2>&1"
	check "uring: page written" html_page "$t" "$page" || return
	check "uring: renders in chromium without error" html_rendered "$page" "$dom" || return
	check "uring: section drawn" html_section "$dom" uring >"$TMP/hk-uring-sec.html"
	check "uring: 11 submitted, 11 completed" python3 - "$TMP/hk-uring-sec.html" <<'PY'
import re, sys
sec = open(sys.argv[1]).read()
v = dict(re.findall(r'<div class="k">(\w+)</div><div class="v">([0-9,]+)</div>', sec))
ok = v.get("Submitted") == "11" and v.get("Completed") == "11" and v.get("Failed") == "0"
if not ok:
    print("    cards:", v, file=sys.stderr)
sys.exit(0 if ok else 1)
PY
	check "uring: the row outside polls" grep -q '>outside-polls<' "$TMP/hk-uring-sec.html"
	check "uring: no off-CPU nor CPU section" sh -c "! grep -Eq '<section id=\"(blocking|cpu|runq)\"' $dom"
}

# html_embedded_exact PAGE JSON: the data block, its two escapes undone
# ("<\/" and "\u003c!--", see src/output/html.h), is JSON byte for byte.
html_embedded_exact() {
	python3 - "$1" "$2" <<'PY'
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
m = re.findall(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
want = open(sys.argv[2], encoding="utf-8").read()
got = m[0].replace("<\\/", "</").replace("\\u003c!--", "<!--") if len(m) == 1 else None
if got != want:
    print("    embedded JSON (%s bytes) is not %s (%d bytes)" % (len(got) if got is not None else "no", sys.argv[2], len(want)), file=sys.stderr)
sys.exit(0 if got == want else 1)
PY
}

# html_flame_path SECTION JSON KEY FRAME...: the flame graph drawn in the
# rendered SECTION has the path FRAME... from its top (FRAME 1 at depth 1,
# each frame inside its caller's span), and the last frame is as wide as the
# weight of the stacks under that path in the report's futures.KEY (within a
# pixel and a half of 1200).
html_flame_path() {
	python3 - "$@" <<'PY'
import html, json, re, sys
sec, fu = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))["futures"]
key, path = sys.argv[3], sys.argv[4:]
W, RH = 1200.0, 17
frames = []
for t, x, y, w in re.findall(r'<g class="fr"><title>(.*?)</title><rect x="([-0-9.e]+)" y="([-0-9.e]+)" width="([-0-9.e]+)"', sec, re.S):
    frames.append((html.unescape(t).split("\n")[0], round(float(y) / RH), float(x), float(w) + 0.5))
spans = [(0.0, W)]
for depth, name in enumerate(path, 1):
    lo, hi = spans[-1]
    hit = [f for f in frames if f[0] == name and f[1] == depth and f[2] >= lo - 0.01 and f[2] + f[3] <= hi + 0.51]
    if not hit:
        print("    no frame %r at depth %d inside %s; at that depth: %s" % (name, depth, (lo, hi),
              sorted(set(f[0] for f in frames if f[1] == depth))[:8]), file=sys.stderr)
        sys.exit(1)
    spans.append((hit[0][2], hit[0][2] + hit[0][3]))
total = sum(s["ns"] for s in fu[key])
under = sum(s["ns"] for s in fu[key] if s["frames"][:len(path)] == path)
want, got = W * under / total, spans[-1][1] - spans[-1][0]
if abs(want - got) > 1.5:
    print("    %s: %.1f px wide, the report's weight gives %.1f" % (path[-1], got, want), file=sys.stderr)
    sys.exit(1)
PY
}

# Future-level sections (record --futures) on live recordings. Truth
# (tests/integ/futures.sh): futures_nested's task handler awaits mid, which
# awaits leaf (and child2, which awaits Checksum); futures_stuck's task stuck
# awaits wait_config, which awaits wait_signal, parked for good at the .await
# of futures_stuck::Gate whose file:line the program prints, as it does those
# of the chain. The page must draw these from the report's "futures" key
# (embedded exactly as report --format json writes it), say what was lost,
# keep the program's strings as text, and draw no such section without it.
test_html_futures_sections() {
	mkdir -p "$HTML_SHOTS"
	local t=$TMP/hf-nested.trace page=$TMP/hf-nested.html dom=$TMP/html-futures-nested.dom json=$TMP/hf-nested.json sec
	check "nested: record --futures" \
		sh -c "$AS record --futures -o $t -- $APPS/futures_nested 4 >/dev/null 2>$TMP/hf-nested.err"
	check "nested: page written" html_page "$t" "$page" || return
	$AS report --format json "$t" >"$json" 2>/dev/null
	check "nested: the report has futures" json_check "$json" 'r["futures"]["frames"] > 0'
	check "nested: embedded JSON is report --format json, byte for byte" html_embedded_exact "$page" "$json"
	check "nested: no external resource" html_no_external "$page"
	check "nested: renders in chromium without error" html_rendered "$page" "$dom" || return
	for sec in async-flame wait-flame future-fns parked; do
		check "nested: $sec drawn" html_section "$dom" "$sec" >"$TMP/hf-$sec.html"
		check "nested: $sec in the navigation" grep -q "<a href=\"#$sec\">" "$dom"
		check "nested: $sec says what was lost" \
			grep -q 'Lost events 0, missed events 0\. Future frames lost: 0 exits, 0 entries, 0 exits without entry\.' "$TMP/hf-$sec.html"
	done
	check "nested: async flame graph: handler > mid > leaf, as wide as in the report" \
		html_flame_path "$TMP/hf-async-flame.html" "$json" oncpu_stacks \
		futures_nested::handler futures_nested::handler futures_nested::mid futures_nested::leaf
	check "nested: async flame graph: handler > child2 > Checksum" \
		html_flame_path "$TMP/hf-async-flame.html" "$json" oncpu_stacks \
		futures_nested::handler futures_nested::handler futures_nested::child2 '<futures_nested::Checksum as Future>::poll'
	check "nested: summary card" grep -q '<div class="k">Future polls</div>' "$dom"
	check "nested: one row per future function, as in the report" python3 - "$TMP/hf-future-fns.html" "$json" <<'PY'
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
PY
	check "nested: no task parked for good" grep -q 'no task was parked for good' "$TMP/hf-parked.html"

	t=$TMP/hf-stuck.trace page=$TMP/hf-stuck.html dom=$TMP/html-futures-stuck.dom json=$TMP/hf-stuck.json
	check "stuck: record --futures" \
		sh -c "$AS record --futures -o $t -- $APPS/futures_stuck 1 >/dev/null 2>$TMP/hf-stuck.err"
	check "stuck: the program printed where it is stuck" grep -q '^futures_stuck: stuck at src/bin/futures_stuck.rs:77 ' "$TMP/hf-stuck.err"
	check "stuck: page written" html_page "$t" "$page" || return
	$AS report --format json "$t" >"$json" 2>/dev/null
	check "stuck: embedded JSON is report --format json, byte for byte" html_embedded_exact "$page" "$json"
	check "stuck: renders in chromium without error" html_rendered "$page" "$dom" || return
	check "stuck: parked-at section drawn" html_section "$dom" parked >"$TMP/hf-stuck-parked.html"
	check "stuck: the chain ends at src/bin/futures_stuck.rs:77 awaiting futures_stuck::Gate" \
		python3 - "$TMP/hf-stuck-parked.html" "$json" "$TMP/hf-stuck.err" <<'PY'
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
PY
	check "stuck: the task table links the task to where it is parked" \
		grep -Eq '<a href="#parked-[0-9]+">src/bin/futures_stuck.rs:77</a>' "$dom"
	check "stuck: wait flame graph drawn" html_section "$dom" wait-flame >"$TMP/hf-stuck-wait.html"
	check "stuck: wait flame graph: stuck > wait_config > wait_signal at line 77, as wide as in the report" \
		html_flame_path "$TMP/hf-stuck-wait.html" "$json" wait_stacks \
		futures_stuck::stuck futures_stuck::stuck futures_stuck::wait_config 'futures_stuck::wait_signal (futures_stuck.rs:77)'

	# dropped events, lost future frames and truncation reach every future
	# section (edited into the page as a lossy recording would have them);
	# a hostile awaited type stays text
	python3 - "$page" "$TMP/hf-lossy.html" "$TMP/hf-trunc.html" <<'PY'
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
lossy = page.replace('"lost_events": 0', '"lost_events": 17').replace('"exits_lost": 0', '"exits_lost": 3')
lossy = lossy.replace('"awaiting": "futures_stuck::Gate"', '"awaiting": "<img src=x onerror=document.body.dataset.pwned=1>"')
open(sys.argv[2], "w", encoding="utf-8").write(lossy)
open(sys.argv[3], "w", encoding="utf-8").write(page.replace('"truncated": false', '"truncated": true'))
PY
	dom=$TMP/html-futures-lossy.dom
	check "lossy: renders" html_rendered "$TMP/hf-lossy.html" "$dom"
	check "lossy: each future section says it undercounts" \
		test "$(html_dom_count "$dom" '(17 lost, 0 missed): the numbers below undercount')" -eq 4
	check "lossy: each future section names the lost frames" \
		test "$(html_dom_count "$dom" 'Future frames were lost: 3 exits lost (frames cut short): the numbers below undercount')" -eq 4
	check "lossy: the summary card is flagged" grep -q '<div class="card bad"><div class="k">Future polls</div>' "$dom"
	check "lossy: the awaited type is text" \
		sh -c "grep -q 'awaiting <b>&lt;img src=x onerror=' $dom && ! grep -q -e '<img' -e 'data-pwned' $dom"
	check "truncated: renders" html_rendered "$TMP/hf-trunc.html" "$TMP/html-futures-trunc.dom"
	check "truncated: each future section says so" \
		test "$(html_dom_count "$TMP/html-futures-trunc.dom" 'the numbers below cover it up to its last event')" -eq 4

	# a trace recorded without --futures: no future section, link nor column
	page=$TMP/hf-none.html dom=$TMP/html-futures-none.dom
	check "without futures: page written" html_page tests/data/blocker-2s.trace "$page" || return
	check "without futures: renders" html_rendered "$page" "$dom" || return
	check "without futures: no future section" \
		sh -c "! grep -Eq -e '<section id=\"(async-flame|wait-flame|future-fns|parked)\"' -e 'href=\"#(async-flame|wait-flame|future-fns|parked)' -e '>parked at<' -e '>Future polls<' $dom"
	check "without futures: the task table is there" test "$(html_dom_count "$dom" '<tr')" -gt 3
}
