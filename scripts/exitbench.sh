#!/bin/sh
# Seconds from SIGTERM to exit of `streamcheck run` on a slow stream: a
# followed file of 5,000 generated transactions and one event two hours
# later, read with --lateness 1h and --tick 1ms. Nothing is released until
# the last event arrives; then that one message lets the watermark cross
# every tick of the backlog, and the engine steps them one by one (about a
# minute of work on a shared 2-core machine). SIGTERM comes 5 s after the
# start, in the middle of those steps.
#
# usage: scripts/exitbench.sh BINARY...   (e.g. an old and a new build)
set -e
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$1" gen -txns 5000 -seed 1 -o "$dir/h.jsonl" 2>/dev/null
echo '{"session":"z","id":"z-late","start":1700007200000000000,"end":1700007200000001000,"status":"committed","ops":[["w","zz",1]]}' >>"$dir/h.jsonl"
for bin in "$@"; do
	rm -rf "$dir/st"
	"$bin" run --source "$dir/h.jsonl" --state-dir "$dir/st" --lateness 1h --tick 1ms --status 0 --http '' >/dev/null 2>"$dir/err" &
	p=$!
	sleep 5
	t0=$(date +%s.%N)
	kill -TERM $p
	rc=0
	wait $p || rc=$?
	t1=$(date +%s.%N)
	echo "$bin: exit $rc, $(echo "$t1 - $t0" | bc) s from SIGTERM to exit"
done
