#!/usr/bin/env bash
# screen_has.sh SESSION PATTERN: the tmux session's screen shows PATTERN (a
# grep regex); else prints the screen (under UNTIL: the last one seen)
screen=$(tmux capture-pane -t "$1" -p 2>/dev/null)
grep -q -- "$2" <<<"$screen" && exit 0
echo "screen was:"; sed 's/^/| /' <<<"$screen"
exit 1
