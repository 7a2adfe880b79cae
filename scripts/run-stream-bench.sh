#!/bin/sh
# run-stream-bench.sh: issue #5 acceptance 3's measurement. Streams a
# generated blindw-rw history (32 sessions, 8 ops, 5K keys) of N
# transactions through `streamcheck run` from stdin, and samples the
# checker's RSS, window and pinned gauges and throughput every 10 s.
#
#   scripts/run-stream-bench.sh [N] [extra run flags...]
#
# Output: one line per sample (elapsed s, messages, msg/s over the
# interval, RSS MB, window, pinned), then run's summary and peak RSS.
# Generation runs in its own process ahead of run (a pipe), so its cost
# is not the checker's.
set -eu
n=${1:-10000000}
[ $# -gt 0 ] && shift
bin=${STREAMCHECK:-/tmp/streamcheck-bench}
go build -o "$bin" ./cmd/streamcheck
port=${PORT:-19479}
log=$(mktemp)
"$bin" gen --txns "$n" --workload blindw-rw --seed 11 2>/dev/null |
	/usr/bin/time -f "peak RSS %M KB, %e s wall, %U s user" \
		"$bin" run --source - --lateness 20ms --http "127.0.0.1:$port" --status 10s "$@" >/dev/null 2>"$log" &
sleep 1
pid=$(pgrep -n -f "$bin run --source -" || true)
start=$(date +%s)
last=0
lastT=$start
echo "elapsed_s checked txn_per_s rss_mb window pinned"
while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; do
	sleep 10
	m=$(curl -s "127.0.0.1:$port/metrics" || true)
	[ -z "$m" ] && continue
	msgs=$(echo "$m" | awk '/^streamcheck_transactions_checked_total / {s+=$2} END {printf "%d", s}')
	win=$(echo "$m" | awk '/^streamcheck_window_transactions / {printf "%d", $2}')
	pin=$(echo "$m" | awk '/^streamcheck_pinned_transactions / {printf "%d", $2}')
	rss=$(awk '/VmRSS/ {printf "%d", $2/1024}' "/proc/$pid/status" 2>/dev/null || echo 0)
	now=$(date +%s)
	echo "$((now - start)) $msgs $(((msgs - last) / (now - lastT))) $rss $win $pin"
	last=$msgs
	lastT=$now
done
wait
tail -2 "$log"
rm -f "$log"
