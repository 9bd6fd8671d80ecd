#!/usr/bin/env bash
# speedscope_load.sh FILE.json: loads a speedscope file with speedscope's own
# code (its npm release build, fetched by scripts/setup.sh, as its CLI
# `speedscope FILE` does: index.html#localProfilePath=JS calling
# speedscope.loadFileFromBase64) in headless chromium, and checks that it
# took it: the page's title becomes "NAME - speedscope" (NAME the file's
# "name"), each profile's name is in the page, and no "Something went wrong".
set -u
dir=${ASYNCSCOPE_NPM_DIR:-/opt/asyncscope/npm}/speedscope-1.25.0
file=$1
fail() { echo "    speedscope_load: $*" >&2; exit 1; }
[ -r "$dir/dist/release/index.html" ] || fail "speedscope 1.25.0 is not in $dir: run scripts/setup.sh"
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || fail "chromium not found"
tmp=$(mktemp -d /tmp/speedscope-load.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
printf 'speedscope.loadFileFromBase64("%s", "%s")\n' "$(basename "$file")" "$(base64 -w0 "$file")" > "$tmp/load.js"
timeout 60 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --disable-dev-shm-usage \
	--disable-background-networking --user-data-dir="$tmp/profile" --virtual-time-budget=5000 \
	--dump-dom "file://$dir/dist/release/index.html#localProfilePath=$tmp/load.js" > "$tmp/dom.html" 2>"$tmp/err" ||
	fail "chromium failed: $(tail -1 "$tmp/err")"
python3 - "$file" "$tmp/dom.html" <<'PY' || exit 1
import html, json, re, sys
d = json.load(open(sys.argv[1]))
dom = html.unescape(open(sys.argv[2], encoding="utf-8").read())
title = re.search(r"<title>(.*?)</title>", dom, re.S)
ok = title is not None and title.group(1) == "%s - speedscope" % d["name"] and "Something went wrong" not in dom
missing = [p["name"] for p in d["profiles"] if p["name"] not in dom]
ok = ok and not missing and d["profiles"]
print("    speedscope loaded %s: title %r, %d profiles%s" % (sys.argv[1], title.group(1) if title else None,
      len(d["profiles"]), ", missing " + ", ".join(missing) if missing else ""), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
