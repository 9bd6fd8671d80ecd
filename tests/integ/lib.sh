# Helpers for the integration tests: each test is a function; `check` records
# one assertion; the runner prints "N passed, N failed" at the end.
AS=${AS:-build/asyncscope-san}
APPS=tests/apps/target/release
TMP=$(mktemp -d /tmp/asyncscope-integ.XXXXXX)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
T_PASSED=0 T_FAILED=0
CUR_FAILS=0

check() { # check "what" command...
	local what=$1; shift
	if "$@"; then return 0; fi
	echo "    check failed: $what"
	CUR_FAILS=$((CUR_FAILS + 1))
	return 1
}

run_test() {
	local name=$1
	CUR_FAILS=0
	local start=$SECONDS
	"$name"
	if [ "$CUR_FAILS" -eq 0 ]; then
		T_PASSED=$((T_PASSED + 1)); echo "PASS $name ($((SECONDS - start)) s)"
	else
		T_FAILED=$((T_FAILED + 1)); echo "FAIL $name"
	fi
}

finish() {
	rm -rf "$TMP"
	echo "$T_PASSED passed, $T_FAILED failed"
	[ "$T_FAILED" -eq 0 ]
}

# json_check FILE PYTHON-EXPR: evaluates an assertion over the parsed report `r`;
# prints what it finds on failure.
json_check() {
	python3 - "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
tasks = [t for t in r["tasks"] if t["kind"] == "task"]
ok = eval(sys.argv[2])
if not ok:
    print("    assertion false:", sys.argv[2], file=sys.stderr)
    print("    polls by tokio id:", [(t["id"], t["polls"]) for t in sorted(tasks, key=lambda t: t["id"] or 0)][:60], file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}
