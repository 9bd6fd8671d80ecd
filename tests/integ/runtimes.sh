# Runtimes other than Tokio (sourced by run.sh, after lib.sh): async-std 1.12
# and smol 1.3 / async-executor 1.5 (async-task 4.3 tasks), and a binary
# running Tokio and smol side by side. The programs of tests/apps whose
# task i yields (i % 5) times must show exactly (i % 5) + 1 polls per task.

# check_runtime_yields JSON NAME_PART N ORDER: the N tasks whose name holds
# NAME_PART, taken in ORDER ("seq": first sight, i.e. their spawn-time
# schedule, as async-task has no task id; "id": Tokio's id), are polled
# (k % 5) + 1 times, woken k % 5 times, and completed; nothing was lost.
check_runtime_yields() {
	python3 - "$@" <<'PY'
import collections, json, sys
r = json.load(open(sys.argv[1]))
part, n, order = sys.argv[2], int(sys.argv[3]), sys.argv[4]
tasks = sorted((t for t in r["tasks"] if t["kind"] == "task" and t["name"] and part in t["name"]),
               key=lambda t: t[order])
errors = []
if len(tasks) != n:
    errors.append(f"expected {n} tasks named *{part}*, found {len(tasks)}")
for k, t in enumerate(tasks):
    want = k % 5 + 1
    if t["polls"] != want or t["wakes"] != want - 1 or t["state"] != "completed":
        errors.append(f"task seq {t['seq']} id {t['id']} (#{k}): {t['polls']} polls, "
                      f"{t['wakes']} wakes, {t['state']}; expected {want}, {want - 1}, completed")
total = sum(t["polls"] for t in tasks)
if total != sum(k % 5 + 1 for k in range(n)):
    errors.append(f"total polls {total}")
by_polls = collections.Counter(t["polls"] for t in tasks)
if n % 5 == 0 and by_polls != collections.Counter({p: n // 5 for p in range(1, 6)}):
    errors.append(f"tasks by poll count {sorted(by_polls.items())}")
if r["lost_events"]:
    errors.append(f"{r['lost_events']} events lost")
for e in errors[:20]:
    print("    " + e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY
}

test_runtime_async_std_exact_polls() {
	local t=$TMP/astd.trace j=$TMP/astd.json
	check "record async-std" sh -c "$AS record -o $t -- $APPS/asyncstd_yields 200 >/dev/null 2>$TMP/astd.err"
	check "attached line names async-std" grep -q "attached .*, async-std)" "$TMP/astd.err"
	check "report json" sh -c "$AS report --format json $t > $j"
	check "trace header: async-std" json_check "$j" 'r["runtime"] == "async-std"'
	check "exact per-task polls" check_runtime_yields "$j" "asyncstd_yields::main::{async_block#1}::{async_block#0}" 200 seq
	check "no task id, no spawn site (async-task has neither)" json_check "$j" \
		'all(t["id"] is None and t["spawn_location"] is None and t["spawned_in_trace"] for t in tasks)'
	check "runtime threads polled the tasks" json_check "$j" \
		'sum(w["polls"] for w in r["workers"] if w["name"] and w["name"].startswith("async-std")) == 600'
	check "text report names the runtime" sh -c "$AS report $t | grep -q 'runtime async-std)'"
}

test_runtime_smol_exact_polls() {
	local mode
	for mode in global executor local; do
		local t=$TMP/smol-$mode.trace j=$TMP/smol-$mode.json
		check "record smol $mode" sh -c "$AS record -o $t -- $APPS/smol_yields $mode 100 >/dev/null 2>&1"
		check "report json ($mode)" sh -c "$AS report --format json $t > $j"
		check "trace header: smol ($mode)" json_check "$j" 'r["runtime"] == "smol"'
		check "exact per-task polls ($mode)" check_runtime_yields "$j" "smol_yields::yielder" 100 seq
		check "no task id ($mode)" json_check "$j" 'all(t["id"] is None for t in tasks)'
	done
}

test_runtime_mixed_tokio_smol() {
	local t=$TMP/mixed.trace j=$TMP/mixed.json
	check "record mixed" sh -c "$AS record -o $t -- $APPS/mixed 100 >/dev/null 2>$TMP/mixed.err"
	check "attached line names both" grep -q "attached .*, tokio+smol)" "$TMP/mixed.err"
	check "report json" sh -c "$AS report --format json $t > $j"
	check "trace header: tokio+smol" json_check "$j" 'r["runtime"] == "tokio+smol"'
	check "Tokio tasks: exact polls in id order" check_runtime_yields "$j" "mixed::tokio_yielder" 100 id
	check "smol tasks: exact polls in spawn order" check_runtime_yields "$j" "mixed::smol_yielder" 100 seq
	check "Tokio tasks have ids and spawn sites, smol tasks neither" json_check "$j" \
		'all((t["id"] is not None and "mixed.rs" in (t["spawn_location"] or "")) if "tokio" in t["name"] else (t["id"] is None and t["spawn_location"] is None) for t in tasks)'
	check "text report names both runtimes" sh -c "$AS report $t | grep -q 'runtime tokio+smol)'"
}

test_runtime_probes_listing() {
	local out=$TMP/probes.txt
	check "probes async-std" sh -c "$AS probes $APPS/asyncstd_yields > $out"
	check "async-std: header" grep -q "^async-std: 9 probe points in " "$out"
	check "async-std: section" grep -q "^async-std (async-std 1.12, .*): 9 probe points" "$out"
	check "async-std: run is the poll, emulated, named" grep -Eq \
		'^poll +0x[0-9a-f]+ +(push %[a-z0-9]+|jmp rel(8|32)|call rel32|nop) +emulated +async_task::raw::RawTask<F,T,S>::run  \[asyncstd_yields::main::\{async_block#1\}::\{async_block#0\}\]$' "$out"
	check "async-std: spawn wrapper drop glue is ready" grep -Eq \
		'^ready +0x[0-9a-f]+ +(push %[a-z0-9]+|jmp rel(8|32)|call rel32|nop) +emulated +core::ptr::drop_in_place<async_executor::Executor::spawn<' "$out"
	check "async-std: destroy frees" grep -Eq '^free +0x[0-9a-f]+ +(push %[a-z0-9]+|jmp rel(8|32)|call rel32|nop) +emulated +async_task::raw::RawTask<F,T,S>::destroy$' "$out"
	check "async-std: no tokio" sh -c "! grep -q tokio $out"

	check "probes smol" sh -c "$AS probes $APPS/smol_yields > $out"
	check "smol: header" grep -q "^smol: 15 probe points in " "$out"
	check "smol: two run copies named" test "$(grep -Ec '^poll .*RawTask<F,T,S>::run  \[smol_yields::yielder\]$' "$out")" -eq 2
	check "smol: every point has a cost class" sh -c \
		"grep -E '^(poll|ready|wake|free|park) ' $out | grep -Evq ' (emulated|single-step) ' && exit 1 || exit 0"

	check "probes mixed" sh -c "$AS probes $APPS/mixed > $out"
	check "mixed: header says both" grep -q "^tokio+smol: [0-9]* probe points in " "$out"
	check "mixed: a tokio section" grep -q "^tokio (tokio 1.24): [0-9]* probe points$" "$out"
	check "mixed: a smol section" grep -q "^smol (smol 1.3, .*): 9 probe points$" "$out"
	check "mixed: tokio poll named" grep -Eq '^poll .*tokio::runtime::task::raw::poll  \[mixed::tokio_yielder\]$' "$out"
	check "mixed: smol poll named" grep -Eq '^poll .*RawTask<F,T,S>::run  \[mixed::smol_yielder\]$' "$out"
	check "mixed --runtime smol: smol only" sh -c "$AS probes --runtime smol $APPS/mixed | head -1 | grep -q '^smol: 9 probe points'"

	check "probes yields: tokio only" sh -c "$AS probes $APPS/yields | head -1 | grep -q '^tokio: '"
	check "--runtime smol on a Tokio binary says so" sh -c \
		"$AS probes --runtime smol $APPS/yields 2>&1 >/dev/null | grep -q 'no smol runtime functions found'"
	check "--runtime with an unknown name lists the known ones" sh -c \
		"$AS probes --runtime tokio+nope $APPS/yields 2>&1 >/dev/null | grep -q \"unknown runtime 'nope'.*async-std, smol\""
}
