# HTML report tests (sourced by tests/integ/run.sh after lib.sh): pages made
# from recorded traces and from the hand-made full report
# (tests/data/html/full-report.json) are opened in headless Chromium by
# scripts/html-check.sh, which fails on a script error or an unfinished
# render; screenshots are left in $HTML_SHOTS (default /tmp/asyncscope-html).
# Needs no BPF.
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

# html_no_external PAGE: nothing outside the data block refers to the network.
html_no_external() {
	python3 - "$1" <<'PY'
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
rest = re.sub(r'(<script type="application/json" id="data">).*?(</script>)', r'\1\2', page, flags=re.S)
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
