# Scheduling analysis on live recordings of tests/apps (sourced by run.sh,
# after lib.sh): wake edges, idle times, long polls, stalls and the timeline,
# through `report --format json` and the text report.

# chain: producer -> relay -> consumer, 100 messages, producer sleeps 2 ms
# before each send. Each message wakes relay once (from producer) and consumer
# once (from relay); the channel closing may add one. Each sleep is one timer wake.
test_sched_chain_edges() {
	local t=$TMP/chain.trace j=$TMP/chain.json
	check "record chain" sh -c "$AS record -o $t -- $APPS/chain 100 >/dev/null 2>&1"
	check "report json" sh -c "$AS report --format json $t > $j"
	check "producer -> relay: 100 wakes" json_check "$j" \
		'[e for e in r["wake_edges"] if e["from_kind"] == "task" and e["from_name"] == "chain::producer" and e["to_name"] == "chain::relay" and 100 <= e["count"] <= 101 and e["from_seq"] is not None]'
	check "relay -> consumer: 100 wakes" json_check "$j" \
		'[e for e in r["wake_edges"] if e["from_kind"] == "task" and e["from_name"] == "chain::relay" and e["to_name"] == "chain::consumer" and 100 <= e["count"] <= 101]'
	check "timer -> producer: 100 wakes" json_check "$j" \
		'[e for e in r["wake_edges"] if e["from_kind"] == "timer" and e["from_seq"] is None and e["to_name"] == "chain::producer" and e["count"] == 100]'
	check "edge delays ordered" json_check "$j" \
		'all(0 <= e["delay_p50_ns"] <= e["delay_p99_ns"] <= e["delay_max_ns"] for e in r["wake_edges"] if e["timed"])'
	check "producer idle p50 is its 2 ms sleep (timer tick: up to 3.5 ms)" json_check "$j" \
		'[t for t in tasks if t["name"] == "chain::producer" and 2e6 <= t["idle_p50_ns"] <= 3.5e6]'
	check "histograms" json_check "$j" \
		'all(r["histograms"][k]["count"] > 0 and r["histograms"][k]["p50"] <= r["histograms"][k]["p99"] <= r["histograms"][k]["max"] and sum(b[2] for b in r["histograms"][k]["buckets"]) == r["histograms"][k]["count"] for k in ("poll_ns", "sched_ns", "idle_ns"))'
	check "timeline: 100 buckets, workers, busiest tasks" json_check "$j" \
		'r["timeline"]["buckets"] == 100 and len(r["timeline"]["workers"]) >= 1 and len(r["timeline"]["tasks"]) == 3 and all(len(w["busy_ns"]) == 100 for w in r["timeline"]["workers"])'
	check "timeline: worker busy adds up to the report" json_check "$j" \
		'all(sum(tw["busy_ns"]) == w["busy_ns"] and sum(tw["polls"]) == w["polls"] for tw, w in zip(r["timeline"]["workers"], r["workers"]))'
	check "text report" sh -c "$AS report $t > $TMP/chain.txt"
	check "text shows the edge" grep -q "chain::producer -> chain::relay  10[01] wakes, delay p50" "$TMP/chain.txt"
	check "text shows distributions" grep -q "^  poll duration   count" "$TMP/chain.txt"
}

# sleepers: tasks sleeping 20 ms x30, 50 ms x12, 100 ms x6. Their median idle
# time is the sleep (rounded up by Tokio's 1 ms timer tick), within 10%.
test_sched_sleepers_idle() {
	local t=$TMP/sleepers.trace j=$TMP/sleepers.json
	check "record sleepers" sh -c "$AS record -o $t -- $APPS/sleepers >/dev/null 2>&1"
	check "report json" sh -c "$AS report --format json $t > $j"
	for ms in 20 50 100; do
		check "a sleeper idles ${ms} ms at p50" json_check "$j" \
			"[t for t in tasks if t['name'] == 'sleepers::sleeper' and $ms * 1e6 <= t['idle_p50_ns'] <= $ms * 1.1e6]"
	done
	check "timer wakes every sleeper" json_check "$j" \
		'len([e for e in r["wake_edges"] if e["from_kind"] == "timer" and e["to_name"] == "sleepers::sleeper"]) == 3'
	check "nothing stalled at 1 s" json_check "$j" 'r["stalled"] == []'
	check "stalled at --stall 30ms: the 50 and 100 ms sleepers" sh -c \
		"$AS report --format json --stall 30ms $t > $TMP/sleepers30.json"
	check "two stalled, none until the end" json_check "$TMP/sleepers30.json" \
		'len(r["stalled"]) == 2 and not any(s["until_end"] for s in r["stalled"]) and r["stall_threshold_ns"] == 30000000'
}

# blocker: one poll blocks 200 ms; stuck_forever is never woken.
test_sched_blocker_long_poll_stall() {
	local t=$TMP/sblocker.trace j=$TMP/sblocker.json
	check "record blocker" sh -c "$AS record -o $t --duration 2s -- $APPS/blocker >/dev/null 2>&1"
	check "report json" sh -c "$AS report --format json $t > $j"
	check "the 200 ms poll is the longest" json_check "$j" \
		'r["long_polls"] and r["long_polls"][0]["name"] == "blocker::main::{async_block#0}::{async_block#1}" and r["long_polls"][0]["duration_ns"] >= 200e6 and r["long_polls_total"] >= 1'
	check "stuck_forever stalled until the end" json_check "$j" \
		'[s for s in r["stalled"] if s["name"] == "blocker::stuck_forever" and s["until_end"] and s["stalled_ns"] > 1e9]'
	check "text lists the long poll" sh -c "$AS report --long-poll 100ms $t | grep -A2 '^LONG POLLS: 1 poll over 100.0 ms' | grep -q async_block#1"
	check "bad duration is a usage error" sh -c "$AS report --stall 3parsecs $t >/dev/null 2>&1; test \$? -eq 2"
}
