#!/bin/bash
# Hostile senders against one rpma-recv on its shared receive queue:
#  - HOSTILE_CHURN (default 1000) connect/send/disconnect cycles,
#  - 100 connections that connect and never send (held the whole time),
#  - one sender that floods (4 KiB messages, 64 in flight, for 5 s),
#  - more connections than --max-connections.
# Meanwhile four busy connections keep sending: each must go on completing
# messages through the churn and the flood. rpma-recv's descriptors and
# resident memory (/proc) must be the same after the churn as before it,
# and must not grow with the flood; every message of every connection
# arrives once, in order, intact (check-seq).
. "$(dirname "$0")/lib.sh"

CHURN=${HOSTILE_CHURN:-1000}
IDLE=100
IDLE_BASE=60000 # ids no record may carry: the idle ones never send
FLOOD_S=5
# ids of the senders that do send, in the order of the phases
ALONE=0 DURING_CHURN=4 DURING_FLOOD=8 FLOODER=12 WARMUP=13 CHURN_BASE=113
SENDERS=$((CHURN_BASE + CHURN))
ulimit -n 8192 || fail "cannot raise the descriptor limit"

rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
fds() { local f=(/proc/"$1"/fd/*); echo ${#f[@]}; }
# sent_by LOG: "ID:N" for each "fan-in: sender ID sent N" line
sent_by() { sed -n 's/^fan-in: sender \([0-9]*\) sent \([0-9]*\)$/\1:\2/p' "$1"; }
# rate_of LOG: the msg/s of a fan-in run
rate_of() { sed -n 's/.* completed in .* (\([0-9]*\) msg\/s).*/\1/p' "$1"; }
min_sent() { sent_by "$1" | awk -F: 'NR == 1 || $2 < m { m = $2 } END { print m + 0 }'; }
fan() { "$FAN_IN" --connect "$LAB_A:$PORT" "$@"; }

start_recv --format len --output "$WORK/out.len" --slots 64 --max-message 4K
echo "hostile: rpma-recv listening: RSS $(rss_kib "$RECV_PID") KiB, $(fds "$RECV_PID") descriptors"

# -- connections that connect and never send, held until the end
mkfifo "$WORK/idle.ctl"
fan --conns $IDLE --base-id $IDLE_BASE --count 0 --wait-stdin <"$WORK/idle.ctl" \
	2>"$WORK/idle.log" &
idle_pid=$!
PIDS+=("$idle_pid")
exec {idle_ctl}>"$WORK/idle.ctl"
wait_for "$WORK/idle.log" "fan-in: $IDLE connected" 60 || fail "idle connections not established"

# -- four busy connections alone: their rate for comparison
fan --conns 4 --base-id $ALONE --sizes 64 --window 2 --seconds 3 2>"$WORK/alone.log" ||
	fail "busy senders alone failed"
alone_rate=$(rate_of "$WORK/alone.log")
echo "hostile: 4 busy connections alone: $alone_rate msg/s"

# -- churn: a warm-up (allocator, maps), then the figures before and after
fan --churn --conns 100 --base-id $WARMUP --count 1 --quiet 2>"$WORK/warmup.log" ||
	fail "warm-up churn failed"
# the figures before: once rpma-recv has closed every connection so far on its side
# (the alone and warm-up ones), or the descriptors of the last still count (a CI run: -4)
closed_so_far=$((4 + 100))
for ((i = 0; i < 300; i++)); do
	[ "$(grep -c 'closed by peer' "$WORK/recv.log")" -ge $closed_so_far ] && break
	sleep 0.1
done
[ "$(grep -c 'closed by peer' "$WORK/recv.log")" -eq $closed_so_far ] ||
	fail "rpma-recv closed $(grep -c 'closed by peer' "$WORK/recv.log") connections before the churn, want $closed_so_far"
rss1=$(rss_kib "$RECV_PID") fds1=$(fds "$RECV_PID")
mkfifo "$WORK/busy.ctl"
fan --conns 4 --base-id $DURING_CHURN --sizes 64 --window 2 --until-stdin \
	<"$WORK/busy.ctl" 2>"$WORK/busy-churn.log" &
busy_pid=$!
PIDS+=("$busy_pid")
exec {busy_ctl}>"$WORK/busy.ctl"
wait_for "$WORK/busy-churn.log" "fan-in: 4 connected" 30 || fail "busy connections not established"
t0=$(now)
fan --churn --conns "$CHURN" --base-id $CHURN_BASE --count 1 2>"$WORK/churn.log" ||
	fail "churn failed: $(tail -1 "$WORK/churn.log")"
t1=$(now)
echo stop >&"$busy_ctl"
wait "$busy_pid" || fail "busy connections failed during the churn"
exec {busy_ctl}>&-
# every churned connection has finished on rpma-recv's side too
want_closed=$((4 + 100 + CHURN)) # alone, warm-up, churn (+ the 4 busy ones)
for ((i = 0; i < 300; i++)); do
	[ "$(grep -c 'closed by peer' "$WORK/recv.log")" -ge $((want_closed + 4)) ] && break
	sleep 0.1
done
[ "$(grep -c 'closed by peer' "$WORK/recv.log")" -eq $((want_closed + 4)) ] ||
	fail "rpma-recv closed $(grep -c 'closed by peer' "$WORK/recv.log") connections, want $((want_closed + 4))"
rss2=$(rss_kib "$RECV_PID") fds2=$(fds "$RECV_PID")
awk -v a="$t0" -v b="$t1" -v n="$CHURN" 'BEGIN {
	printf "hostile: %d connect/send/disconnect cycles in %.1f s (%.1f per second)\n", n, b - a, n / (b - a) }'
echo "hostile: busy connections during the churn: $(rate_of "$WORK/busy-churn.log") msg/s," \
	"at least $(min_sent "$WORK/busy-churn.log") messages each"
echo "hostile: before the churn RSS $rss1 KiB, $fds1 descriptors; after: RSS $rss2 KiB, $fds2 descriptors"
[ "$fds2" -eq "$fds1" ] || fail "the churn left $((fds2 - fds1)) descriptors behind"
[ $((rss2 - rss1)) -le 512 ] || fail "RSS grew by $((rss2 - rss1)) KiB over $CHURN cycles"
[ "$(min_sent "$WORK/busy-churn.log")" -gt 0 ] || fail "a busy connection stalled during the churn"

# -- a flood against four busy connections
rss3=$(rss_kib "$RECV_PID")
fan --conns 1 --base-id $FLOODER --sizes 4K --window 64 --seconds $FLOOD_S \
	2>"$WORK/flood.log" &
flood_pid=$!
PIDS+=("$flood_pid")
wait_for "$WORK/flood.log" "fan-in: 1 connected" 30 || fail "the flooder did not connect"
fan --conns 4 --base-id $DURING_FLOOD --sizes 64 --window 2 --seconds $((FLOOD_S - 1)) \
	2>"$WORK/busy-flood.log" || fail "busy connections failed during the flood"
rss_flood=$(rss_kib "$RECV_PID")
wait "$flood_pid" || fail "the flooder failed"
rss4=$(rss_kib "$RECV_PID")
busy_rate=$(rate_of "$WORK/busy-flood.log")
echo "hostile: flood $(rate_of "$WORK/flood.log") msg/s of 4 KiB; busy connections meanwhile" \
	"$busy_rate msg/s (alone $alone_rate), at least $(min_sent "$WORK/busy-flood.log") each"
echo "hostile: RSS before the flood $rss3 KiB, during $rss_flood KiB, after $rss4 KiB"
[ "$(min_sent "$WORK/busy-flood.log")" -gt 0 ] || fail "a busy connection stalled during the flood"
[ $((rss_flood - rss3)) -le 512 ] && [ $((rss4 - rss3)) -le 512 ] ||
	fail "RSS grew during the flood"

# -- the idle connections were never disturbed: they end cleanly now
echo go >&"$idle_ctl"
wait_for "$WORK/idle.log" "fan-in: done" 30 || fail "idle connections broken"
echo bye >&"$idle_ctl"
wait "$idle_pid" || fail "idle connections failed"
for ((i = 0; i < 300; i++)); do
	[ "$(grep -c 'closed by peer: 0 messages' "$WORK/recv.log")" -ge $IDLE ] && break
	sleep 0.1
done
[ "$(grep -c 'closed by peer: 0 messages' "$WORK/recv.log")" -ge $IDLE ] ||
	fail "rpma-recv did not log the $IDLE idle connections closed"

# -- more connections than --max-connections: the surplus is turned away
kill -TERM "$RECV_PID"
wait_exit "$RECV_PID" 30 || fail "rpma-recv did not exit 0"
counts=(--count-of "$FLOODER:$(sent_by "$WORK/flood.log" | cut -d: -f2)")
for l in alone busy-churn busy-flood; do
	for c in $(sent_by "$WORK/$l.log"); do counts+=(--count-of "$c"); done
done
"$CHECK_SEQ" --format len --input "$WORK/out.len" --senders $SENDERS --count 1 "${counts[@]}" ||
	fail "check-seq"

cp "$WORK/recv.log" "$WORK/recv-main.log"
start_recv --format len --output "$WORK/cap.len" --max-connections 20
mkfifo "$WORK/cap.ctl"
fan --conns 20 --count 5 --wait-stdin <"$WORK/cap.ctl" 2>"$WORK/cap.log" &
cap_pid=$!
PIDS+=("$cap_pid")
exec {cap_ctl}>"$WORK/cap.ctl"
wait_for "$WORK/cap.log" "fan-in: 20 connected" 30 || fail "20 connections not established"
fan --conns 1 --base-id 20 2>"$WORK/cap-over.log" && fail "a 21st connection was accepted"
grep -q "rejected" "$WORK/cap-over.log" || fail "the 21st connection was not rejected"
grep -q "rejected connection .*most --max-connections allows" "$WORK/recv.log" ||
	fail "the rejection is not logged"
echo go >&"$cap_ctl"
echo bye >&"$cap_ctl"
wait "$cap_pid" || fail "the 20 connections failed after the 21st was rejected"
kill -TERM "$RECV_PID"
wait_exit "$RECV_PID" 30 || fail "rpma-recv did not exit 0"
"$CHECK_SEQ" --format len --input "$WORK/cap.len" --senders 20 --count 5 || fail "check-seq (cap)"
echo "PASS: churn, idle and flooding senders disturb no one; descriptors and memory flat"
