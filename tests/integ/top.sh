# top: the live view driven under tmux (send-keys, capture-pane) in an 80x24
# terminal: it shows the tasks, sorts, filters, opens the detail pane and
# quits cleanly, leaving an attached target running.

# top_screen SESSION: the current screen text
top_screen() { tmux capture-pane -t "$1" -p 2>/dev/null; }

# top_wait SESSION PATTERN: wait up to 8 s for PATTERN on the screen
top_wait() {
	for _ in $(seq 80); do
		top_screen "$1" | grep -q -- "$2" && return 0
		sleep 0.1
	done
	echo "    screen was:"; top_screen "$1" | sed 's/^/    | /'
	return 1
}

test_top_launch_keys() {
	local s=astop$$ out=$TMP/top.exit
	command -v tmux >/dev/null || { check "tmux installed (scripts/setup.sh)" false; return; }
	tmux kill-session -t $s 2>/dev/null
	tmux new-session -d -s $s -x 80 -y 24 \
		"$AS top -- $APPS/blocker 600 2>$TMP/top.err; echo \$? > $out; sleep 30"
	# names lose leading path segments to fit 80 columns
	check "the blocking task is listed (for 5 s after it ends)" top_wait $s "async_block#1"
	check "tasks shown" top_wait $s "stuck_forever"
	check "a worker line" top_wait $s "tokio-runtime-w"
	check "the stuck task is idle" sh -c "tmux capture-pane -t $s -p | grep stuck_forever | grep -q idle"
	check "where the stuck task is parked" top_wait $s "stuck_forever @ blocker.rs:7"
	tmux send-keys -t $s s
	check "s sorts by polls" top_wait $s "sort polls"
	tmux send-keys -t $s / s t u c k Enter
	check "filter shown" top_wait $s "filter stuck"
	check "filter hides other tasks" sh -c "! tmux capture-pane -t $s -p | grep -q 'async_block#2'"
	tmux send-keys -t $s Enter
	check "detail pane" top_wait $s "spawned at src/bin/blocker.rs:17"
	check "detail pane says who woke it" top_wait $s "woken by"
	check "detail pane shows the async stack" top_wait $s "blocker::stuck_forever at src/bin/blocker.rs:7"
	check "... down to the awaited future" top_wait $s "awaiting core::future::pending::Pending"
	tmux send-keys -t $s q
	for _ in $(seq 50); do [ -s $out ] && break; sleep 0.1; done
	check "q quits with status 0" test "$(cat $out 2>/dev/null)" = 0
	check "summary line" grep -q "top saw" $TMP/top.err
	tmux kill-session -t $s 2>/dev/null
}

test_top_attach_leaves_target() {
	local s=astop2$$ out=$TMP/top2.exit
	command -v tmux >/dev/null || { check "tmux installed (scripts/setup.sh)" false; return; }
	$APPS/blocker 600 >/dev/null &
	local app=$!
	sleep 0.5
	tmux kill-session -t $s 2>/dev/null
	tmux new-session -d -s $s -x 100 -y 30 "$AS top -p $app 2>$TMP/top2.err; echo \$? > $out; sleep 30"
	check "attached: the ticking task appears" top_wait $s "async_block#2"
	check "header names the target" top_wait $s "blocker $app (tokio)"
	tmux send-keys -t $s q
	for _ in $(seq 50); do [ -s $out ] && break; sleep 0.1; done
	check "q quits with status 0" test "$(cat $out 2>/dev/null)" = 0
	check "the target keeps running" kill -0 $app
	check "top says the target was left running" grep -q "left running" $TMP/top2.err
	kill $app; wait $app 2>/dev/null
	tmux kill-session -t $s 2>/dev/null
	expect_error "top without a terminal" "needs a terminal" $AS top -p $$
}
