#!/usr/bin/env bash
# html_rendered.sh PAGE DOM: checks PAGE in headless chromium
# (scripts/html-check.sh: fails on a script error or an unfinished render;
# screenshot to $HTML_SHOTS/<DOM's name>.png, default /tmp/asyncscope-html) and
# writes the rendered DOM to DOM without its <script> elements (their source
# would match any text the cases look for)
shots=${HTML_SHOTS:-/tmp/asyncscope-html}
mkdir -p "$shots"
HTML_CHECK_DOM="$2.raw" scripts/html-check.sh "$1" "$shots/$(basename "$2" .dom).png" || exit 1
python3 -c 'import re, sys; sys.stdout.write(re.sub(r"<script\b.*?</script>", "", open(sys.argv[1]).read(), flags=re.S))' \
	"$2.raw" >"$2"
