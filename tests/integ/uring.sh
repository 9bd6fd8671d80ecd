# io_uring requests per task (record --uring, asyncscope uring) on live
# recordings of tests/apps/uring/uring_tasks (sourced by run.sh, after
# lib.sh): a C stand-in for a runtime (its poll function has the name of
# Tokio's) polls 4 "tasks" once each; task k submits and waits for k + 1
# io_uring reads inside its poll, and one more read happens outside any
# poll: 11 submissions and 11 completions, each linked to its task.

test_uring_exact_requests() {
	local t=$TMP/uring.trace out=$TMP/uring.out txt=$TMP/uring.txt
	check "record --uring" sh -c "$AS record --uring -o $t -- tests/apps/uring/uring_tasks 4 >$out 2>$TMP/uring.err"
	check "record counts 11 submissions and 11 completions" grep -q "^asyncscope: 11 io_uring submissions, 11 completions" "$TMP/uring.err"
	check "uring report" sh -c "$AS uring $t > $txt"
	check "report totals" grep -q "^io_uring requests (record --uring): 11 submitted, 11 completed, 0 failed" "$txt"
	check "each task's requests, inside its poll" python3 - "$out" "$txt" <<'PY'
import re, sys
want = {}
for line in open(sys.argv[1]):
    w = line.split()
    if w[0] == "task":
        want[int(w[1], 16)] = int(w[3])
got, outside = {}, None
for line in open(sys.argv[2]):
    m = re.match(r"\s+(\d+)\s+(\d+)\s+(\d+)\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\s+(.*)$", line)
    if not m:
        continue
    sub, done, where = int(m.group(1)), int(m.group(2)), m.group(4)
    t = re.search(r"task (0x[0-9a-f]+)", where)
    if t:
        got[int(t.group(1), 16)] = (sub, done)
    elif where.startswith("outside-polls"):
        outside = (sub, done)
ok = got == {k: (v, v) for k, v in want.items()} and outside == (1, 1)
if not ok:
    print("    want %s, got %s, outside %s" % (want, got, outside), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
	check "record without --uring" sh -c "$AS record -o $t -- tests/apps/uring/uring_tasks 4 >/dev/null 2>$TMP/uring.err"
	check "no io_uring line" sh -c "! grep -q 'io_uring' $TMP/uring.err"
	check "uring says none" sh -c "$AS uring $t | grep -q '^  none: record with --uring'"
}
