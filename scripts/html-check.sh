#!/usr/bin/env bash
# html-check.sh FILE.html OUT.png: opens an asyncscope HTML report in headless
# Chromium (Debian's `chromium` package), checks that its script finished
# (body data-rendered="ok") with no error (body data-errors="0"), and saves a
# 1400x2400 screenshot to OUT.png (HTML_CHECK_SIZE=W,H for another size;
# HTML_CHECK_DOM=FILE also keeps the rendered DOM there, for tests to grep).
# Network is off in the page (CSP) and in the browser flags. Exit 0, or 1
# with a one-line reason (2 on usage).
set -u
if [ $# -ne 2 ]; then
	echo "usage: html-check.sh FILE.html OUT.png" >&2
	exit 2
fi
page=$1 png=$2
fail() { echo "html-check: $page: $*" >&2; exit 1; }

[ -r "$page" ] || fail "cannot read the file"
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || fail "chromium not found (apt-get install -y chromium)"

profile=$(mktemp -d /tmp/html-check.XXXXXX)
trap 'rm -rf "$profile"' EXIT
url="file://$(realpath "$page")"
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
	--disable-background-networking --disable-component-update --disable-sync
	--disable-dev-shm-usage --hide-scrollbars --user-data-dir="$profile"
	--virtual-time-budget=5000)

dom=$profile/dom.html
timeout 60 "$browser" "${flags[@]}" --dump-dom "$url" >"$dom" 2>"$profile/dump.err" ||
	fail "chromium --dump-dom failed: $(grep -v '^\s*$' "$profile/dump.err" | tail -1)"
body=$(grep -o '<body[^>]*>' "$dom" | head -1)
[ -n "$body" ] || fail "no <body> in the dumped DOM"
rendered=$(sed -n 's/.*data-rendered="\([^"]*\)".*/\1/p' <<<"$body")
errors=$(sed -n 's/.*data-errors="\([^"]*\)".*/\1/p' <<<"$body")
[ "$rendered" = ok ] || fail "page did not finish rendering (data-rendered=\"$rendered\")"
[ "$errors" = 0 ] || fail "page reported $errors script error(s) (data-errors=\"$errors\")"
if [ -n "${HTML_CHECK_DOM:-}" ]; then cp "$dom" "$HTML_CHECK_DOM" || fail "cannot write $HTML_CHECK_DOM"; fi

rm -f "$png"
timeout 60 "$browser" "${flags[@]}" --window-size="${HTML_CHECK_SIZE:-1400,2400}" --screenshot="$(realpath -m "$png")" "$url" \
	>/dev/null 2>"$profile/shot.err" ||
	fail "chromium --screenshot failed: $(grep -v '^\s*$' "$profile/shot.err" | tail -1)"
[ -s "$png" ] || fail "no screenshot written to $png"
exit 0
