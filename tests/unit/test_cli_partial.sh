#!/usr/bin/env bash
# Cut and corrupt traces, without root: without --partial every reading
# command refuses them in one line naming the fix; with it they use the
# events before the cut, marked as truncated, and say what the recording
# lost: "at least N" from a format 9 trace's last complete chunk
# (tests/data/cut-v9.trace: 40 then 75 lost, 2 then 3 missed, 600 events),
# unknown (never 0) from a format 8 one. Ends with "N passed, N failed".
# Usage: tests/unit/test_cli_partial.sh [ASYNCSCOPE]
cd "$(dirname "$0")/../.."
AS=$(realpath "${1:-build/asyncscope}")
V9=$(realpath tests/data/cut-v9.trace) V8=$(realpath tests/data/cut-v8.trace)
PB=$(realpath tests/integ/checks/perfetto_pb.py)
D=$(mktemp -d /tmp/asyncscope-partial.XXXXXX)
trap 'rm -rf "$D"' EXIT
cd "$D" || exit 1
passed=0 failed=0
check() { # check "what" command...
	local what=$1; shift
	if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL $what" >&2; fi
}
has() { grep -qE -- "$2" "$1"; }

"$AS" report "$V9" >out.txt 2>err.txt
check "a cut trace without --partial exits 1" test $? -eq 1
check "naming the fix" has err.txt "^asyncscope: .*cut-v9.trace is truncated after 600 events .*--partial"
"$AS" report --partial "$V9" >out.txt 2>err.txt
check "with --partial it is reported" test $? -eq 0
check "its losses a lower bound" has out.txt "^duration .*, 600 events, lost events at least 75, missed events at least 3 \(counted up to 1.20 ms into the recording; truncated trace\)$"
check "in the totals too" has out.txt "lost >=75  missed >=3"
check "and on stderr" has err.txt "warning: .*cut-v9.trace is truncated after 600 events .*at least 75 events were lost and 3 missed$"
"$AS" report --partial --format json "$V9" >out.json 2>/dev/null
check "JSON: the counts and their kind" python3 -c "import json,sys; r=json.load(open('out.json')); sys.exit(not (r['lost_events'] == 75 and r['missed_events'] == 3 and r['loss_counts'] == 'lower_bound' and r['truncated'] is True and r['totals']['loss_counts'] == 'lower_bound'))"
"$AS" report --partial --format html -o out.html "$V9" 2>/dev/null
check "HTML: the page has them" grep -q '"loss_counts": *"lower_bound"' out.html
"$AS" events --partial "$V9" >/dev/null 2>err.txt
check "events: at least, on stderr" has err.txt "lost events at least 75, missed events at least 3"
"$AS" export --partial --format perfetto-json -o out.pf.json "$V9" 2>/dev/null
check "Perfetto: at least" python3 -c "import json,sys; m=json.load(open('out.pf.json'))['metadata']; sys.exit(not (m['lost_events'] == 75 and m['loss_counts'] == 'lower_bound'))"
"$AS" export --partial --format perfetto -o out.pftrace "$V9" 2>/dev/null
python3 "$PB" out.pftrace --json out.pf.json --summary >pb.json
check "Perfetto protobuf: decodes, as the JSON" test $? -eq 0
check "with the same counts, marked" python3 -c "import json,sys; m=json.load(open('pb.json'))['meta']; sys.exit(not (m['lost_events'] == 75 and m['missed_events'] == 3 and m['loss_counts'] == 'lower_bound' and m['truncated'] == 'true'))"
check "and an instant saying so" python3 -c "import json,sys; i=json.load(open('pb.json'))['instants']; sys.exit(not ('lost at least 75 events' in i and 'trace truncated: the recording stops here' in i))"
"$AS" export --partial --format cat -o cut.cat.txt "$V9" 2>/dev/null
"$AS" report --partial cut.cat.txt >out.txt 2>/dev/null
check "a CAT text of it keeps them" has out.txt "lost events at least 75, missed events at least 3 "

"$AS" report --partial "$V8" >out.txt 2>err.txt
check "a cut format 8 trace: losses unknown" has out.txt "^duration .*, 600 events, lost and missed events unknown \(truncated trace\)$"
check "never 0 in the totals" has out.txt "lost \?  missed \?"
"$AS" report --partial --format json "$V8" >out.json 2>/dev/null
check "JSON: null, unknown" python3 -c "import json,sys; r=json.load(open('out.json')); sys.exit(not (r['lost_events'] is None and r['missed_events'] is None and r['loss_counts'] == 'unknown'))"
"$AS" export --partial --format perfetto-json -o out.pf.json "$V8" 2>/dev/null
check "Perfetto: null, unknown" python3 -c "import json,sys; m=json.load(open('out.pf.json'))['metadata']; sys.exit(not (m['lost_events'] is None and m['loss_counts'] == 'unknown'))"
"$AS" export --partial --format perfetto -o out.pftrace "$V8" 2>/dev/null
python3 "$PB" out.pftrace --json out.pf.json --summary >pb.json
check "Perfetto protobuf: decodes, as the JSON" test $? -eq 0
check "unknown there too" python3 -c "import json,sys; m=json.load(open('pb.json'))['meta']; sys.exit(not (m['lost_events'] == 'unknown' and m['loss_counts'] == 'unknown'))"

# a corrupt chunk (chunk 1 of 3): refused, then its 200 events before it
cp "$V9" bad.trace
printf '\377' | dd of=bad.trace bs=1 seek=1500 conv=notrunc 2>/dev/null
"$AS" report bad.trace >out.txt 2>err.txt
check "a corrupt trace without --partial exits 1" test $? -eq 1
check "pointing at --partial" has err.txt "^asyncscope: .*bad.trace is corrupt: chunk 1 at offset [0-9]+ fails its checksum: use the 200 events before it with --partial$"
"$AS" report --partial bad.trace >out.txt 2>err.txt
check "with --partial it is reported" test $? -eq 0
check "saying where it was cut, once, not to use --partial" test "$(grep -c 'corrupt' err.txt)" = 1 -a "$(grep -c 'with --partial' err.txt)" = 0
check "the events before it" has out.txt "^duration .*, 200 events, lost events at least 40, missed events at least 2 "
for cmd in "events" "export --format folded -o x.folded" "blocking" "cpu"; do
	"$AS" $cmd --partial bad.trace >/dev/null 2>err.txt
	check "$cmd --partial on a corrupt trace exits 0" test $? -eq 0
	check "$cmd says it is corrupt" has err.txt "warning: .*bad.trace is corrupt: chunk 1 .*the 200 events before it are used"
done

echo "$passed passed, $failed failed"
test "$failed" -eq 0
