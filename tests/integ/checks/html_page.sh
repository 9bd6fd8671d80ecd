#!/usr/bin/env bash
# html_page.sh TRACE OUT.html: the HTML report of a recorded trace, made by
# `$AS report --html OUT TRACE` when the report command has that option, else
# from `$AS report --format json TRACE` by build/tests/test_html JSON OUT (the
# unit-test binary's conversion mode)
if "$AS" report --help 2>&1 | grep -q -- '--html'; then
	"$AS" report --html "$2" "$1" >/dev/null 2>"$2.err" || { cat "$2.err" >&2; exit 1; }
else
	"$AS" report --format json "$1" >"$2.json" && build/tests/test_html "$2.json" "$2"
fi
