#!/usr/bin/env bash
# Runs a test program under a serve agent that follows it by name: starts
#   CMD... --go-file FILE
# (the program idles until FILE exists), waits until the agent on PORT says
# it is attached to it (asyncscope_target_up 1 and, with --name, the
# restarts counter at RESTARTS: this process, not the last one), lets it go
# and waits for its end. Exit status: the program's, or 1 when the agent
# never attached (within 30 s).
#   serve_attach_run.sh PORT RESTARTS CMD...
set -u
port=$1 restarts=$2
shift 2
go=$(mktemp -u /tmp/asyncscope-go.XXXXXX)
"$@" --go-file "$go" > /dev/null &
pid=$!
ok=
for _ in $(seq 300); do
	m=$(curl -s -m 2 "http://127.0.0.1:$port/metrics")
	if grep -qx 'asyncscope_target_up 1' <<< "$m" &&
	   grep -qx "asyncscope_target_restarts_total $restarts" <<< "$m"; then
		ok=1
		break
	fi
	sleep 0.1
done
[ -n "$ok" ] || { echo "serve_attach_run: the agent did not attach to pid $pid" >&2; kill "$pid"; exit 1; }
sleep 0.3
touch "$go"
wait "$pid"
st=$?
rm -f "$go"
exit $st
